import keras
import numpy as np
import pytest

import tfm


def np_smoothed(y, logits, eps, pad=0):
    v = logits.shape[-1]
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    target = np.full(logits.shape, eps / (v - 1))
    np.put_along_axis(target, y[..., None], 1 - eps, axis=-1)
    per_token = -(target * logp).sum(-1)
    w = (y != pad).astype("float64")
    return (per_token * w).sum() / w.sum()


def test_matches_numpy_and_ignores_padding():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 4, 7)).astype("float32")
    y = np.array([[3, 4, 5, 0], [6, 0, 0, 0]])
    loss = tfm.LabelSmoothedCrossEntropy(0.1)
    np.testing.assert_allclose(float(loss(y, logits)), np_smoothed(y, logits, 0.1), rtol=1e-5)
    # Changing logits at padded positions changes nothing.
    other = logits.copy()
    other[1, 1:] = 100.0
    np.testing.assert_allclose(float(loss(y, other)), float(loss(y, logits)), rtol=1e-6)
    # A variable works too: notebook 07 reads the smoothed target back from its gradient, which is
    # (softmax(logits) - target) / (real tokens) at real positions and 0 at padding.
    import tensorflow as tf

    variable = tf.Variable(logits)
    with tf.GradientTape() as tape:
        value = loss(y, variable)
    assert np.isclose(float(value), float(loss(y, logits)))
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    target = np.full(logits.shape, 0.1 / 6)
    np.put_along_axis(target, y[..., None], 0.9, axis=-1)
    real = (y != 0)[..., None]
    np.testing.assert_allclose(tape.gradient(value, variable), (probs - target) * real / real.sum(), atol=1e-6)


def test_eps_zero_is_cross_entropy_and_hand_value():
    logits = np.log(np.array([[[0.5, 0.25, 0.25]]], "float32"))
    y = np.array([[0]])  # id 0 is a real token here: pad_id=-1
    assert np.isclose(float(tfm.LabelSmoothedCrossEntropy(0.0, pad_id=-1)(y, logits)), np.log(2), rtol=1e-6)
    # eps = 0.1: 0.9 * log 2 + 0.05 * log 4 + 0.05 * log 4.
    expected = 0.9 * np.log(2) + 0.1 * np.log(4)
    assert np.isclose(float(tfm.LabelSmoothedCrossEntropy(0.1, pad_id=-1)(y, logits)), expected, rtol=1e-5)


def test_config_and_errors():
    loss = tfm.LabelSmoothedCrossEntropy(0.2, exclude_pad_from_smoothing=True)
    again = keras.losses.deserialize(keras.losses.serialize(loss))
    assert again.label_smoothing == 0.2 and again.exclude_pad_from_smoothing
    with pytest.raises(ValueError, match="label_smoothing=1.5"):
        tfm.LabelSmoothedCrossEntropy(1.5)


def test_masked_accuracy():
    m = tfm.MaskedAccuracy()
    y = np.array([[1, 2, 0], [3, 0, 0]])
    logits = np.eye(5)[np.array([[1, 4, 2], [3, 1, 1]])].astype("float32")
    m.update_state(y, logits)
    assert np.isclose(float(m.result()), 2 / 3)
    assert keras.metrics.deserialize(keras.metrics.serialize(m)).pad_id == 0


def test_exclude_pad_from_smoothing_matches_numpy():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(2, 3, 6)).astype("float32") * 3
    y = np.array([[2, 5, 0], [1, 4, 3]])
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    target = np.full(logits.shape, 0.1 / 4)  # spread over V - 2 ids: not the reference, not pad
    target[..., 0] = 0.0
    np.put_along_axis(target, y[..., None], 0.9, axis=-1)
    per_token = -(target * logp).sum(-1)
    w = (y != 0).astype("float64")
    expected = (per_token * w).sum() / w.sum()
    got = tfm.LabelSmoothedCrossEntropy(0.1, exclude_pad_from_smoothing=True)(y, logits)
    np.testing.assert_allclose(float(got), expected, rtol=1e-5)


def np_rdrop_extra(y, logits, alpha, pad=0):
    """R-Drop's term by hand: alpha * sum over pairs and real positions of 1/2 (KL(p1||p2) + KL(p2||p1)),
    divided by the real tokens of both rows (rows 2i and 2i+1 are one sentence's two passes)."""
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    p = np.exp(logp)
    total, count = 0.0, 0.0
    for i in range(0, len(y), 2):
        kl_12 = (p[i] * (logp[i] - logp[i + 1])).sum(-1)
        kl_21 = (p[i + 1] * (logp[i + 1] - logp[i])).sum(-1)
        mask = (y[i] != pad).astype("float64")
        total += (0.5 * (kl_12 + kl_21) * mask).sum()
        count += 2 * mask.sum()
    return alpha * total / count


def test_rdrop_term_matches_numpy():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(4, 3, 6)).astype("float32")
    y = np.array([[2, 3, 0], [2, 3, 0], [4, 1, 5], [4, 1, 5]])  # two sentences, each twice
    plain = float(tfm.LabelSmoothedCrossEntropy(0.1)(y, logits))
    rdrop = float(tfm.LabelSmoothedCrossEntropy(0.1, rdrop_alpha=5.0)(y, logits))
    np.testing.assert_allclose(plain, np_smoothed(y, logits, 0.1), rtol=1e-5)
    np.testing.assert_allclose(rdrop - plain, np_rdrop_extra(y, logits, 5.0), rtol=1e-4)
    assert rdrop - plain > 0.01  # the pairs' predictions differ: the term is not empty
    # Two passes that agree cost nothing beyond the cross entropy.
    same = np.repeat(logits[::2], 2, axis=0)
    np.testing.assert_allclose(float(tfm.LabelSmoothedCrossEntropy(0.1, rdrop_alpha=5.0)(y, same)),
                               np_smoothed(y, same, 0.1), rtol=1e-5)
    # bfloat16 logits (mixed_bfloat16): computed in float32, close to the float32 value.
    import tensorflow as tf

    low = float(tfm.LabelSmoothedCrossEntropy(0.1, rdrop_alpha=5.0)(y, tf.cast(logits, tf.bfloat16)))
    np.testing.assert_allclose(low, rdrop, rtol=2e-2)


def test_rdrop_refuses_odd_batches_and_bad_alpha_and_round_trips():
    with pytest.raises(ValueError, match="odd batch of 3 rows"):
        tfm.LabelSmoothedCrossEntropy(rdrop_alpha=1.0)(np.ones((3, 2), "int32"), np.zeros((3, 2, 5), "float32"))
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="rdrop_alpha"):
            tfm.LabelSmoothedCrossEntropy(rdrop_alpha=bad)
    with pytest.raises(ValueError, match="rdrop_alpha"):
        tfm.TrainingConfig(rdrop_alpha=-0.5)
    loss = tfm.LabelSmoothedCrossEntropy(0.2, rdrop_alpha=3.0)
    again = keras.losses.deserialize(keras.losses.serialize(loss))
    assert (again.label_smoothing, again.rdrop_alpha) == (0.2, 3.0)


def test_pair_rows_puts_each_pair_twice_side_by_side():
    from tfm.training.pipeline import pair_rows

    source = np.array([[5, 6, 0], [7, 0, 0]])
    target_in, target_out = source + 10, source + 20
    (s, t_in), t_out = pair_rows((source, target_in), target_out)
    np.testing.assert_array_equal(s.numpy(), [[5, 6, 0], [5, 6, 0], [7, 0, 0], [7, 0, 0]])
    np.testing.assert_array_equal(t_in.numpy()[1::2], target_in)
    np.testing.assert_array_equal(t_out.numpy()[::2], target_out)
