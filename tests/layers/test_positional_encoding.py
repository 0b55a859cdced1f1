import numpy as np
from layer_testing import run_layer_test

import tfm
from tfm.layers import PositionalEmbedding, PositionalEncoding


def test_sinusoid_at_position_3_by_hand():
    pe = np.asarray(tfm.positional_encoding(8, 6))
    assert pe.shape == (8, 6) and pe.dtype == np.float32
    # §3.5 with d_model = 6: angles 3 / 10000^(2i/6) = 3, 3 / 21.544 = 0.139248, 3 / 464.16 = 0.0064633;
    # sin and cos of each, interleaved.
    np.testing.assert_allclose(pe[3], [0.1411200, -0.9899925, 0.1387981, 0.9903207, 0.0064633, 0.9999791],
                               atol=2e-7)
    np.testing.assert_allclose(pe[0], [0, 1, 0, 1, 0, 1])


def test_offset_is_a_linear_map():
    # PE(p + k) = M_k PE(p) with M_k made of 2x2 rotations, the same for every p (§3.5).
    d, k = 16, 5
    pe = np.asarray(tfm.positional_encoding(60, d), "float64")
    m, *_ = np.linalg.lstsq(pe[:40], pe[k : 40 + k], rcond=None)
    np.testing.assert_allclose(pe[40:55] @ m, pe[40 + k : 55 + k], atol=1e-4)


def test_layers(tmp_path):
    x = np.zeros((2, 5, 8), "float32")
    out = run_layer_test(PositionalEncoding, dict(max_length=16), {"x": x}, expected_output_shape=(2, 5, 8),
                         expected_num_trainable_weights=0, tmp_path=tmp_path, run_fit=False)  # fixed sinusoids
    np.testing.assert_allclose(out[0], tfm.positional_encoding(5, 8), atol=1e-6)
    shifted = PositionalEncoding(16)(x, start_index=3)
    np.testing.assert_allclose(shifted[0], np.asarray(tfm.positional_encoding(8, 8))[3:], atol=1e-6)
    run_layer_test(PositionalEmbedding, dict(max_length=16), {"x": x + 1}, expected_output_shape=(2, 5, 8),
                   expected_num_trainable_weights=1, tmp_path=tmp_path)  # the learned (max_length, D) table
