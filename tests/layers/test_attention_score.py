import math

import numpy as np
import pytest
from keras import ops
from layer_testing import run_layer_test

from tfm.layers.attention_score import AttentionScore

B, T, S, D = 2, 3, 4, 5


def _np(x):
    return np.asarray(ops.convert_to_numpy(x), dtype="float64")


@pytest.fixture
def qk():
    rng = np.random.default_rng(0)
    return rng.normal(size=(B, T, D)).astype("float32"), rng.normal(size=(B, S, D)).astype("float32")


def test_dot(qk):
    q, k = qk
    scores = _np(AttentionScore("dot")(q, k))
    np.testing.assert_allclose(scores, np.einsum("btd,bsd->bts", q, k), atol=1e-5)


def test_scaled_dot(qk):
    q, k = qk
    scores = _np(AttentionScore("scaled_dot")(q, k))
    np.testing.assert_allclose(scores, np.einsum("btd,bsd->bts", q, k) / math.sqrt(D), atol=1e-5)


def test_general(qk):
    q, k = qk
    k = k[..., :4]  # "general" allows Dk != Dq: W is (Dk, Dq)
    layer = AttentionScore("general")
    scores = _np(layer(q, k))
    w = _np(layer.key_dense.kernel)  # (Dk, Dq)
    assert w.shape == (4, D)
    np.testing.assert_allclose(scores, np.einsum("btd,bsd->bts", q, k @ w), atol=1e-5)


def test_additive(qk):
    q, k = qk
    layer = AttentionScore("additive", units=6)
    scores = _np(layer(q, k))
    w1, w2, v = (_np(d.kernel) for d in (layer.query_dense, layer.key_dense, layer.score_dense))
    hidden = np.tanh((q @ w1)[:, :, None, :] + (k @ w2)[:, None, :, :])  # (B, T, S, units)
    np.testing.assert_allclose(scores, (hidden @ v)[..., 0], atol=1e-5)


@pytest.mark.parametrize("trainable", [False, True])
def test_cosine(qk, trainable):
    q, k = qk
    layer = AttentionScore("cosine", sharpness=3.0, trainable_sharpness=trainable)
    scores = _np(layer(q, k))
    qn = q / np.linalg.norm(q, axis=-1, keepdims=True)
    kn = k / np.linalg.norm(k, axis=-1, keepdims=True)
    np.testing.assert_allclose(scores, 3.0 * np.einsum("btd,bsd->bts", qn, kn), atol=1e-5)
    assert len(layer.trainable_weights) == int(trainable)


def test_cosine_of_zero_key_is_finite(qk):
    q, k = qk
    k = k.copy()
    k[:, -1] = 0.0  # e.g. a padded encoder output
    scores = _np(AttentionScore("cosine")(q, k))
    assert np.all(np.isfinite(scores)) and np.all(scores[:, :, -1] == 0.0)


def test_two_step_equals_call(qk):
    q, k = qk
    layer = AttentionScore("additive", units=3)
    direct = _np(layer(q, k))
    np.testing.assert_allclose(_np(layer.score_projected(q, layer.project_keys(k))), direct, atol=1e-6)


def test_errors_name_bad_values(qk):
    q, k = qk
    with pytest.raises(ValueError, match="score='bilinear'"):
        AttentionScore("bilinear")
    with pytest.raises(ValueError, match="units=None"):
        AttentionScore("additive")
    with pytest.raises(ValueError, match="units=8"):
        AttentionScore("dot", units=8)
    for score in ("dot", "cosine", "scaled_dot"):
        with pytest.raises(ValueError, match=r"Dq=5 != key width Dk=4"):
            AttentionScore(score)(q, k[..., :4])


# Weights: additive W_1, W_2 and v (no biases); general W.
@pytest.mark.parametrize("kwargs, num_weights", [(dict(score="additive", units=4), 3), (dict(score="general"), 1)])
def test_layer(qk, kwargs, num_weights, tmp_path):
    q, k = qk
    run_layer_test(
        AttentionScore, kwargs, {"query": q, "key": k[..., :4]},
        expected_output_shape=(B, T, S), expected_num_trainable_weights=num_weights, tmp_path=tmp_path,
    )
