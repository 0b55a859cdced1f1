import numpy as np
import pytest
from layer_testing import run_layer_test

from tfm.layers import MultiHeadAttention


def _x(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype("float32")


def test_layer_checks_self_and_cross(tmp_path):
    # W^Q, W^K, W^V, W^O and their biases, whatever the widths.
    run_layer_test(MultiHeadAttention, dict(num_heads=2, key_dim=4), {"query": _x(2, 3, 8)},
                   expected_output_shape=(2, 3, 8), expected_num_trainable_weights=8, tmp_path=tmp_path)
    run_layer_test(MultiHeadAttention, dict(num_heads=2, key_dim=4, value_dim=3, output_dim=5),
                   {"query": _x(2, 3, 8), "value": _x(2, 6, 7)}, expected_output_shape=(2, 3, 5),
                   expected_num_trainable_weights=8, tmp_path=tmp_path)


def test_matches_numpy_reference():
    layer = MultiHeadAttention(num_heads=2, key_dim=3)
    q, v = _x(2, 4, 6), _x(2, 5, 6, seed=1)
    mask = np.ones((2, 4, 5), bool)
    mask[1, :, 3:] = False
    out, w = layer.call_with_scores(q, v, attention_mask=mask)  # builds the layer (a plain method)
    np.testing.assert_allclose(layer(q, v, attention_mask=mask), out, atol=1e-6)  # `call`: the output alone
    wq, bq = [p.numpy() for p in layer.query_dense.weights]
    wk, bk = [p.numpy() for p in layer.key_dense.weights]
    wv, bv = [p.numpy() for p in layer.value_dense.weights]
    wo, bo = [p.numpy() for p in layer.output_dense.weights]

    def heads(x):  # (B, T, 6) -> (B, 2, T, 3)
        return x.reshape(x.shape[0], x.shape[1], 2, 3).transpose(0, 2, 1, 3)

    Q, K, V = heads(q @ wq + bq), heads(v @ wk + bk), heads(v @ wv + bv)
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(3)
    s = np.where(mask[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    ctx = (p @ V).transpose(0, 2, 1, 3).reshape(2, 4, 6)
    np.testing.assert_allclose(w, p, atol=1e-6)
    np.testing.assert_allclose(out, ctx @ wo + bo, atol=1e-5)
    assert np.all(np.asarray(w)[1, :, :, 3:] == 0.0)  # padded keys: exactly zero weight


def test_causal_prefix_does_not_see_the_future():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    x = _x(1, 6, 8)
    y = x.copy()
    y[:, 4:] = _x(1, 2, 8, seed=5)  # change the last two positions
    a = layer(x, use_causal_mask=True).numpy()
    b = layer(y, use_causal_mask=True).numpy()
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-6)
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_incremental_cache_equals_full_causal():
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    x = _x(2, 5, 8)
    full = layer(x, use_causal_mask=True).numpy()
    cache = layer.empty_cache(2, 7)
    steps = []
    for i in range(5):
        out, cache = layer.call_with_cache(x[:, i : i + 1], cache, i, use_causal_mask=True)
        steps.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-5)
    # The (keys, values) pair that grows a position per step gives the same.
    pair, steps = layer.empty_cache_pair(2), []
    for i in range(5):
        out, pair = layer.call_with_cache(x[:, i : i + 1], pair, i, use_causal_mask=True)
        steps.append(out.numpy())
        assert tuple(pair[0].shape) == (2, 2, i + 1, 4)
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-5)


@pytest.mark.parametrize("value_dim", [4, 3, 6])  # d_v = d_k, and Table 3 row B's d_k != d_v
def test_cross_cache_equals_direct(value_dim):
    layer = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=value_dim)
    q, m = _x(2, 3, 8), _x(2, 6, 8, seed=2)
    direct = layer(q, m).numpy()
    cached, _ = layer.call_with_cache(q, layer.compute_cache(m))
    np.testing.assert_allclose(cached, direct, atol=1e-6)
    x = _x(2, 5, 8, seed=3)
    full = layer(x, use_causal_mask=True).numpy()
    cache, steps = layer.empty_cache(2, 6), []
    for i in range(5):
        out, cache = layer.call_with_cache(x[:, i : i + 1], cache, i, use_causal_mask=True)
        steps.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(steps, 1), full, atol=1e-5)


def test_shared_memory_pair_equals_one_copy_per_beam():
    """A read-only (keys, values) pair of B memories serves B * G queries (G beams per sentence, rows
    b * G + j): the same outputs as each beam reading its own copy of its memory, padding included."""
    layer = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3)
    beams, q, m = 3, _x(2 * 3, 1, 8), _x(2, 5, 8, seed=2)
    mask = np.array([[True] * 5, [True, True, False, False, False]])  # (B, S)
    copies = np.repeat(m, beams, axis=0)  # (B * G, S, D)
    direct = layer(q, copies, attention_mask=np.repeat(mask, beams, 0)[:, None])
    pair = layer.split_cache(layer.compute_cache(m))
    out, returned = layer.call_with_cache(q, pair, attention_mask=mask[:, None])
    np.testing.assert_allclose(out, direct, atol=1e-5)
    assert returned[0] is pair[0] and returned[1] is pair[1]  # read as is
    unmasked = layer(q, copies)
    assert not np.allclose(out[3:], unmasked[3:], atol=1e-3)  # the mask mattered for sentence 1's beams


@pytest.mark.parametrize("layout", ["stacked", "pair"])
def test_read_only_cache_honours_the_causal_mask_and_the_masks_of_each_query(layout):
    """A read-only cache gives what attending to the memory directly gives, with `use_causal_mask` (query i
    sees keys <= i) and a per-query `(B, T, S)` mask too; the pair does so for G beams per memory."""
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    q, m = _x(2, 4, 8), _x(2, 6, 8, seed=2)
    mask = np.ones((2, 4, 6), bool)
    mask[1, :, 4:] = False
    mask[0, 2, 1] = False
    direct = layer(q, m, attention_mask=mask, use_causal_mask=True)
    cache = layer.compute_cache(m)
    if layout == "stacked":
        out, _ = layer.call_with_cache(q, cache, attention_mask=mask, use_causal_mask=True)
        np.testing.assert_allclose(out, direct, atol=1e-5)
        return
    beams = 3
    q_beams = np.repeat(q, beams, axis=0)  # (B * G, T, D): each beam asks what its sentence asks
    out, _ = layer.call_with_cache(q_beams, layer.split_cache(cache), attention_mask=mask, use_causal_mask=True)
    np.testing.assert_allclose(out, np.repeat(direct, beams, axis=0), atol=1e-5)
    assert not np.allclose(out, np.repeat(layer(q, m), beams, axis=0), atol=1e-3)  # the masks mattered


@pytest.mark.parametrize("layout", ["stacked", "pair"])
def test_read_only_cache_applies_dropout_when_training(layout):
    layer = MultiHeadAttention(num_heads=2, key_dim=4, dropout=0.5)
    q, m = _x(2, 3, 8), _x(2, 6, 8, seed=2)
    inference = layer(q, m)
    cache = layer.compute_cache(m) if layout == "stacked" else layer.split_cache(layer.compute_cache(m))
    out, _ = layer.call_with_cache(q, cache, training=False)
    np.testing.assert_allclose(out, inference, atol=1e-5)
    dropped, _ = layer.call_with_cache(q, cache, training=True)
    assert not np.allclose(dropped, inference, atol=1e-3)


@pytest.mark.parametrize("name", ["value", "key"])
def test_read_only_cache_refuses_value_and_key(name):
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    q, m = _x(2, 3, 8), _x(2, 6, 8, seed=2)
    layer(q, m)
    for cache in (layer.compute_cache(m), layer.split_cache(layer.compute_cache(m))):
        with pytest.raises(ValueError, match=f"^{name} was given with a read-only cache"):
            layer.call_with_cache(q, cache, **{name: m})


def test_bad_sizes_named():
    with pytest.raises(ValueError, match="num_heads=0"):
        MultiHeadAttention(num_heads=0, key_dim=4)


def test_pair_cache_step_runs_no_mask_ops_and_equals_full_causal():
    """Issue 59: one new position against a growing (keys, values) pair needs no causal mask (every cached key
    is visible); the step's graph has no select or comparison, and the outputs equal the full causal call."""
    import tensorflow as tf

    mha = MultiHeadAttention(num_heads=2, key_dim=4)
    x = np.random.default_rng(0).normal(size=(3, 5, 8)).astype("float32")
    full = np.asarray(mha(x, use_causal_mask=True))
    cache, steps = mha.empty_cache_pair(3), []
    for t in range(5):
        out, cache = mha.call_with_cache(x[:, t : t + 1], cache, t, use_causal_mask=True)
        steps.append(np.asarray(out))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, atol=1e-6)

    step = tf.function(lambda q, k, v, i: mha.call_with_cache(q, (k, v), i, use_causal_mask=True))
    step = step.get_concrete_function(
        tf.TensorSpec([None, 1, 8]), tf.TensorSpec([None, 2, None, 4]), tf.TensorSpec([None, 2, None, 4]),
        tf.TensorSpec([], tf.int32))
    ops_in_step = {node.op for node in step.graph.as_graph_def().node}
    assert not ops_in_step & {"SelectV2", "Select", "GreaterEqual", "LogicalAnd"}, sorted(ops_in_step)
