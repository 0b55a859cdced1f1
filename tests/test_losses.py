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
    # A variable works too (notebook 07 reads the smoothed target back from its gradient).
    import tensorflow as tf

    variable = tf.Variable(logits)
    with tf.GradientTape() as tape:
        value = loss(y, variable)
    assert np.isclose(float(value), float(loss(y, logits))) and tape.gradient(value, variable) is not None


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
