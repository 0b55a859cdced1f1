import numpy as np
import pytest
from layer_testing import run_layer_test

from tfm.layers import Decoder, DecoderLayer


def _x(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_checks(tmp_path, norm_first):
    data = {"x": _x(2, 3, 8), "memory": _x(2, 5, 8, seed=1),
            "memory_mask": np.array([[True] * 5, [True, True, True, False, False]])}
    # A block: two attentions (4 projections with bias each: 16), the FFN (4), 3 LayerNorms (6) = 26.
    run_layer_test(DecoderLayer, dict(num_heads=2, d_ff=16, norm_first=norm_first), data,
                   expected_output_shape=(2, 3, 8), expected_num_trainable_weights=26, tmp_path=tmp_path)
    # Two blocks, and pre-LN's final LayerNorm.
    run_layer_test(Decoder, dict(num_layers=2, num_heads=2, d_ff=16, norm_first=norm_first), data,
                   expected_output_shape=(2, 3, 8), expected_num_trainable_weights=52 + 2 * norm_first,
                   tmp_path=tmp_path, run_fit=False)


def test_causal_prefix_and_memory_padding():
    layer = DecoderLayer(num_heads=2, d_ff=16)
    x, m = _x(1, 5, 8), _x(1, 4, 8, seed=1)
    y = x.copy()
    y[:, 3:] = _x(1, 2, 8, seed=7)
    a, b = layer(x, m).numpy(), layer(y, m).numpy()
    np.testing.assert_allclose(a[:, :3], b[:, :3], atol=1e-5)
    m_padded = np.concatenate([m, _x(1, 3, 8, seed=9)], axis=1)
    mask = np.array([[True] * 4 + [False] * 3])
    np.testing.assert_allclose(layer(x, m_padded, memory_mask=mask).numpy(), a, atol=1e-5)
    # The same block with its weights: causal self-attention, padded memory keys at exactly zero.
    out, self_w, cross_w = layer.call_with_scores(x, m_padded, memory_mask=mask)
    np.testing.assert_allclose(out, a, atol=1e-5)
    assert self_w.shape == (1, 2, 5, 5) and cross_w.shape == (1, 2, 5, 7)
    np.testing.assert_array_equal(np.asarray(self_w) * np.triu(np.ones((5, 5)), k=1), 0.0)
    assert np.all(np.asarray(cross_w)[..., 4:] == 0.0)
    np.testing.assert_allclose(np.asarray(self_w).sum(-1), 1.0, atol=1e-5)


def test_stack_cached_steps_equal_full_pass_and_weights():
    dec = Decoder(num_layers=2, num_heads=2, d_ff=16, norm_first=True)
    x, m = _x(2, 4, 8), _x(2, 3, 8, seed=1)
    mask = np.array([[True] * 3, [True, True, False]])
    full, self_w, cross_w = dec.call_with_scores(x, m, memory_mask=mask)  # builds the stack (a plain method)
    np.testing.assert_allclose(dec(x, m, memory_mask=mask), full, atol=1e-6)
    assert len(self_w) == len(cross_w) == 2 and self_w[0].shape == (2, 2, 4, 4) and cross_w[0].shape == (2, 2, 4, 3)
    assert np.all(np.asarray(cross_w[1])[1, :, :, 2] == 0)
    self_caches = [layer.self_attention.empty_cache(2, 6) for layer in dec.layers]
    cross = dec.compute_cross_caches(m)
    outs = []
    for i in range(4):
        out, self_caches = dec.call_with_cache(x[:, i : i + 1], self_caches, i, cross, memory_mask=mask)
        outs.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(outs, 1), full, atol=1e-5)
