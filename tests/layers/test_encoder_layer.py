import numpy as np
import pytest
from layer_testing import run_layer_test

from tfm.layers import Encoder, EncoderLayer


def _x(*shape):
    return np.random.default_rng(0).normal(size=shape).astype("float32")


@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_checks(tmp_path, norm_first):
    mask = np.array([[True] * 4, [True, True, False, False]])
    # A block: self-attention (4 projections with bias: 8), the FFN (4), 2 LayerNorms (4) = 16.
    run_layer_test(EncoderLayer, dict(num_heads=2, d_ff=16, norm_first=norm_first),
                   {"x": _x(2, 4, 8), "padding_mask": mask}, expected_output_shape=(2, 4, 8),
                   expected_num_trainable_weights=16, tmp_path=tmp_path)
    # Two blocks, and pre-LN's final LayerNorm.
    run_layer_test(Encoder, dict(num_layers=2, num_heads=2, d_ff=16, norm_first=norm_first),
                   {"x": _x(2, 4, 8), "padding_mask": mask}, expected_output_shape=(2, 4, 8),
                   expected_num_trainable_weights=32 + 2 * norm_first, tmp_path=tmp_path, run_fit=False)


def test_padding_does_not_leak_and_post_ln_normalises():
    layer = EncoderLayer(num_heads=2, d_ff=16)
    x = _x(1, 3, 8)
    padded = np.concatenate([x, _x(1, 2, 8) * 100], axis=1)
    mask = np.array([[True, True, True, False, False]])
    a = layer(x).numpy()
    b = layer(padded, padding_mask=mask).numpy()
    np.testing.assert_allclose(a, b[:, :3], atol=1e-5)
    out, weights = layer.call_with_scores(padded, padding_mask=mask)  # the same output, and its weights
    np.testing.assert_allclose(out, b, atol=1e-6)
    assert weights.shape == (1, 2, 5, 5) and np.all(np.asarray(weights)[..., 3:] == 0.0)
    # Post-LN: every output position has mean 0 and variance 1 (gamma=1, beta=0 at init).
    np.testing.assert_allclose(a.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(a.var(-1), 1, atol=1e-3)


def test_indivisible_width_is_named():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by num_heads=3"):
        EncoderLayer(num_heads=3, d_ff=8)(_x(1, 2, 10))


def test_stack_weights_one_per_layer():
    encoder = Encoder(num_layers=3, num_heads=2, d_ff=16)
    x, mask = _x(2, 4, 8), np.array([[True] * 4, [True, True, True, False]])
    out, weights = encoder.call_with_scores(x, padding_mask=mask)  # builds the stack (a plain method)
    np.testing.assert_allclose(encoder(x, padding_mask=mask), out, atol=1e-6)
    assert len(weights) == 3 and all(w.shape == (2, 2, 4, 4) for w in weights)
    assert all(np.all(np.asarray(w)[1, :, :, 3] == 0.0) for w in weights)


def test_activation_dropout_drops_the_ffn_inner_units_in_training_only(tmp_path):
    """`activation_dropout` reaches the FFN of every block (config round trip); at inference the block
    equals one without it; in training it changes the output though residual dropout is 0."""
    x = _x(2, 4, 8)
    run_layer_test(Encoder, dict(num_layers=2, num_heads=2, d_ff=16, dropout=0.0, activation_dropout=0.5),
                   {"x": x}, expected_output_shape=(2, 4, 8), expected_num_trainable_weights=32,
                   tmp_path=tmp_path, run_fit=False)
    encoder = Encoder(num_layers=2, num_heads=2, d_ff=16, dropout=0.0, activation_dropout=0.5)
    plain = Encoder(num_layers=2, num_heads=2, d_ff=16, dropout=0.0)
    encoder(x), plain(x)
    plain.set_weights(encoder.get_weights())
    assert [layer.ffn.dropout for layer in encoder.layers] == [0.5, 0.5]
    assert Encoder.from_config(encoder.get_config()).layers[1].ffn.dropout == 0.5
    np.testing.assert_allclose(encoder(x, training=False), plain(x, training=False), atol=1e-6)
    assert np.max(np.abs(np.asarray(encoder(x, training=True)) - np.asarray(plain(x, training=True)))) > 1e-3
