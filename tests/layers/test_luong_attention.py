import numpy as np
import pytest
from keras import ops
from layer_testing import run_layer_test

from tfm.layers.luong_attention import LuongAttention


def test_default_score_is_general_and_matches_numpy():
    rng = np.random.default_rng(0)
    query = rng.normal(size=(2, 3, 4)).astype("float32")
    value = rng.normal(size=(2, 5, 6)).astype("float32")  # Dv != Dq is fine for "general"
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    layer = LuongAttention()
    assert layer.score == "general"
    context, weights = layer.call_with_scores(query, value, memory_mask=mask)
    w = np.asarray(ops.convert_to_numpy(layer.score_layer.key_dense.kernel))  # (Dv, Dq)
    scores = np.einsum("btd,bsd->bts", query, value @ w)
    scores = np.where(mask[:, None], scores, -np.inf)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected, atol=1e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(context), expected @ value, atol=1e-5)
    assert np.all(ops.convert_to_numpy(weights)[0, :, 3:] == 0.0)


def test_concat_score_needs_units():
    with pytest.raises(ValueError, match="units"):
        LuongAttention(score="additive")
    LuongAttention(score="additive", units=4)


def test_layer(tmp_path):
    rng = np.random.default_rng(0)
    data = {
        "query": rng.normal(size=(2, 3, 4)).astype("float32"),
        "value": rng.normal(size=(2, 5, 4)).astype("float32"),
        "memory_mask": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool),
    }
    run_layer_test(LuongAttention, {"score": "general"}, data, expected_output_shape=(2, 3, 4),
                   expected_num_trainable_weights=1, tmp_path=tmp_path)  # general's W
