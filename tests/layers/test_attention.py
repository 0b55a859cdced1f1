import numpy as np
import pytest
from keras import ops
from layer_testing import run_layer_test

from tfm.layers.attention import Attention

B, T, S, D = 2, 3, 5, 4


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    query = rng.normal(size=(B, T, D)).astype("float32")
    value = rng.normal(size=(B, S, D)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    return query, value, mask


@pytest.mark.parametrize("score", ["cosine", "additive", "dot", "general", "scaled_dot"])
def test_padded_keys_get_exactly_zero_weight(data, score):
    query, value, mask = data
    value = value.copy()
    value[0, 3:] = 1e4  # huge padded values must not leak into the context
    layer = Attention(score=score, units=3 if score == "additive" else None)
    context, weights = layer.call_with_scores(query, value, memory_mask=mask)
    weights, context = ops.convert_to_numpy(weights), ops.convert_to_numpy(context)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(query, value, memory_mask=mask)), context, atol=1e-6)
    assert weights.shape == (B, T, S) and context.shape == (B, T, D)
    assert np.all(weights[0, :, 3:] == 0.0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(context, np.einsum("bts,bsd->btd", weights, value), rtol=1e-5, atol=1e-4)
    assert np.abs(context[0]).max() < 10  # no padded value reached the context


def test_numpy_reference_dot(data):
    query, value, mask = data
    context, weights = Attention("dot").call_with_scores(query, value, memory_mask=mask)
    scores = np.einsum("btd,bsd->bts", query, value)
    scores = np.where(mask[:, None, :], scores, -np.inf)
    expected = np.exp(scores - scores.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), expected, atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(context), expected @ value, atol=1e-5)


def test_single_step_query_equals_length_one_sequence(data):
    query, value, mask = data
    layer = Attention("general")
    c2, w2 = layer.call_with_scores(query[:, 0], value, memory_mask=mask)
    c3, w3 = layer.call_with_scores(query[:, :1], value, memory_mask=mask)
    assert tuple(c2.shape) == (B, D) and tuple(w2.shape) == (B, S)
    np.testing.assert_allclose(ops.convert_to_numpy(c2), ops.convert_to_numpy(c3)[:, 0], atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(w2), ops.convert_to_numpy(w3)[:, 0], atol=1e-6)


def test_separate_keys(data):
    query, value, mask = data
    key = np.flip(value, axis=-1).copy()
    _, w = Attention("dot").call_with_scores(query, value, key=key, memory_mask=mask)
    _, w_same = Attention("dot").call_with_scores(query, key, memory_mask=mask)
    np.testing.assert_allclose(ops.convert_to_numpy(w), ops.convert_to_numpy(w_same), atol=1e-6)


def test_layer(data, tmp_path):
    query, value, mask = data
    run_layer_test(
        Attention, {"score": "cosine", "trainable_sharpness": True},
        {"query": query, "value": value, "memory_mask": mask},
        expected_output_shape=(B, T, D), expected_num_trainable_weights=1,  # the cosine score's sharpness beta
        tmp_path=tmp_path,
    )
