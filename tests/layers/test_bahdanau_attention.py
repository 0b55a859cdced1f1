import math

import numpy as np
from keras import ops
from layer_testing import run_layer_test

from tfm.layers.bahdanau_attention import BahdanauAttention


def test_hand_worked_2x2_example():
    # W_1 = W_2 = I, v = [1, 1]; query s = [1, 0]; keys/values h_1 = [0, 1], h_2 = [1, 1].
    # e_1 = v . tanh(s + h_1) = 2 tanh(1)           = 1.5231883
    # e_2 = v . tanh(s + h_2) = tanh(2) + tanh(1)   = 1.7256217
    # a_2 = 1 / (1 + exp(e_1 - e_2)) = 0.5504362,  a_1 = 0.4495638
    # c = a_1 h_1 + a_2 h_2 = [a_2, 1]
    layer = BahdanauAttention(units=2)
    query = np.array([[1.0, 0.0]], "float32")  # (B=1, Dq=2): one decoder step
    value = np.array([[[0.0, 1.0], [1.0, 1.0]]], "float32")  # (B=1, S=2, Dv=2)
    layer(query, value)
    score = layer.score_layer
    score.query_dense.kernel.assign(np.eye(2))
    score.key_dense.kernel.assign(np.eye(2))
    score.score_dense.kernel.assign(np.ones((2, 1)))
    e = ops.convert_to_numpy(score(query[:, None], value))[0, 0]
    np.testing.assert_allclose(e, [2 * math.tanh(1), math.tanh(2) + math.tanh(1)], atol=1e-6)
    np.testing.assert_allclose(e, [1.5231883, 1.7256217], atol=1e-6)
    context, weights = layer.call_with_scores(query, value)
    np.testing.assert_allclose(ops.convert_to_numpy(weights), [[0.4495638, 0.5504362]], atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(context), [[0.5504362, 1.0]], atol=1e-6)
    np.testing.assert_allclose(ops.convert_to_numpy(layer(query, value)), [[0.5504362, 1.0]], atol=1e-6)


def test_padded_position_gets_zero_weight():
    rng = np.random.default_rng(0)
    query = rng.normal(size=(2, 3)).astype("float32")
    value = rng.normal(size=(2, 4, 5)).astype("float32")
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    _, weights = BahdanauAttention(6).call_with_scores(query, value, memory_mask=mask)
    weights = ops.convert_to_numpy(weights)
    assert np.all(weights[0, 2:] == 0.0) and np.all(weights[1] > 0.0)


def test_config_is_just_units():
    config = BahdanauAttention(7).get_config()
    assert config["units"] == 7 and "score" not in config


def test_layer(tmp_path):
    rng = np.random.default_rng(0)
    data = {
        "query": rng.normal(size=(2, 3)).astype("float32"),  # one decoder step (B, Dq)
        "value": rng.normal(size=(2, 4, 5)).astype("float32"),
        "memory_mask": np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool),
    }
    run_layer_test(BahdanauAttention, {"units": 4}, data, expected_output_shape=(2, 5),
                   expected_num_trainable_weights=3, tmp_path=tmp_path)  # W_1, W_2, v
