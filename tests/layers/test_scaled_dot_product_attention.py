import numpy as np

import tfm


def np_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(-1, keepdims=True)
    return w @ v, w


def test_matches_numpy_with_and_without_mask():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
    q, k, v = (a.astype("float32") for a in (q, k, v))
    out, w = tfm.scaled_dot_product_attention(q, k, v)
    ref_out, ref_w = np_attention(q, k, v)
    np.testing.assert_allclose(w, ref_w, atol=1e-6)
    np.testing.assert_allclose(out, ref_out, atol=1e-5)
    mask = np.array([[True] * 5, [True, True, False, False, False]])[:, None, :]  # (2, 1, 5)
    out, w = tfm.scaled_dot_product_attention(q, k, v, mask=mask)
    ref_out, ref_w = np_attention(q, k, v, mask)
    np.testing.assert_allclose(out, ref_out, atol=1e-5)
    assert np.all(np.asarray(w)[1, :, 2:] == 0.0)  # padded keys: exactly zero weight


def test_hand_worked_example():
    # One query [1, 0]; keys [1, 0] and [0, 1]; d_k = 2 -> scores 1/sqrt(2) and 0.
    q = np.array([[[1.0, 0.0]]], "float32")
    k = np.array([[[1.0, 0.0], [0.0, 1.0]]], "float32")
    v = np.array([[[10.0], [20.0]]], "float32")
    a = np.exp(1 / np.sqrt(2))
    expected_w = np.array([a / (a + 1), 1 / (a + 1)])
    out, w = tfm.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(np.asarray(w)[0, 0], expected_w, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out)[0, 0, 0], 10 * expected_w[0] + 20 * expected_w[1], rtol=1e-6)


def test_fully_masked_row_gives_zeros_not_nan():
    q = np.ones((1, 2, 4), "float32")
    mask = np.array([[[False, False], [True, False]]])
    out, w = tfm.scaled_dot_product_attention(q, q, q, mask=mask)
    assert np.all(np.asarray(w)[0, 0] == 0) and np.all(np.isfinite(out))


def test_extra_leading_axes_and_bfloat16():
    import keras

    x = np.random.default_rng(1).normal(size=(2, 3, 4, 8)).astype("float32")
    out, w = tfm.scaled_dot_product_attention(x, x, x)
    assert out.shape == (2, 3, 4, 8) and w.shape == (2, 3, 4, 4)
    xb = keras.ops.cast(x, "bfloat16")
    out_b, _ = tfm.scaled_dot_product_attention(xb, xb, xb)
    assert out_b.dtype == "bfloat16"
    np.testing.assert_allclose(keras.ops.convert_to_numpy(keras.ops.cast(out_b, "float32")), out, atol=0.1)
