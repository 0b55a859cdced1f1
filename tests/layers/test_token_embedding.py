import math

import keras
import numpy as np
from layer_testing import run_layer_test

from tfm.layers import TokenEmbedding


def test_layer_checks_and_scaling(tmp_path):
    ids = np.array([[4, 5, 0], [6, 0, 0]], "int32")
    run_layer_test(TokenEmbedding, dict(vocab_size=10, d_model=8), {"inputs": ids},
                   expected_output_shape=(2, 3, 8), expected_num_trainable_weights=1, tmp_path=tmp_path)
    layer = TokenEmbedding(10, 8)
    e = layer(ids).numpy()
    table = layer.embeddings.numpy()
    np.testing.assert_allclose(e[0, 1], table[5] * math.sqrt(8), rtol=1e-6)


def test_reverse_is_the_transposed_table_in_float32():
    keras.config.set_dtype_policy("mixed_bfloat16")
    layer = TokenEmbedding(10, 8)
    h = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    layer(np.zeros((1, 1), "int32"))
    logits = layer(h, reverse=True)
    assert logits.dtype == "float32" and logits.shape == (2, 3, 10)
    np.testing.assert_allclose(logits, h @ layer.embeddings.numpy().T, atol=0.1)
