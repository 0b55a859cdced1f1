"""The encoder stack (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.encoder_layer import EncoderLayer
from tfm.layers.transformer_block import TransformerStack, ensure_built


@keras.saving.register_keras_serializable(package="tfm")
class Encoder(TransformerStack):
    """`N` identical `EncoderLayer`s (and a final LayerNorm when pre-LN).

    Takes the embedded, position-encoded source; the model owns the embeddings
    so that they can be shared with the decoder and the output projection.

    Args:
        num_layers: int. `N`, blocks in the stack.
        num_heads: int. Attention heads (`h`).
        d_ff: int. Inner feed-forward width.
        key_dim: int. `d_k` per head. Defaults to `D / num_heads`.
        value_dim: int. `d_v` per head. Defaults to `key_dim`.
        dropout: float. `P_drop` on sub-layer outputs. Defaults to `0.1`.
        attention_dropout: float. Dropout on attention weights. Defaults to `0.0`.
        norm_first: bool. Pre-LN blocks and a final LayerNorm instead of the paper's post-LN. Defaults to
            `False`.
        layer_norm_epsilon: float. Defaults to `1e-6`.
        activation_dropout: float. Dropout on the feed-forward network's inner activations (not in the
            paper). Defaults to `0.0`.
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`). Every block is an `EncoderLayer`.

    Call args:
        x: float `(B, S, D)`.
        padding_mask: bool `(B, S)`, True = real token.

    Returns:
        float `(B, S, D)`. `call_with_scores(x, padding_mask)` returns `(output, weights)`,
        `weights` a list of `(B, N, S, S)`, one per layer.

    Example:
        >>> from tfm.layers.masks import padding_mask
        >>> encoder = Encoder(num_layers=2, num_heads=2, d_ff=32)
        >>> x = keras.random.normal((2, 6, 16))                  # (B, S, D): the embedded source
        >>> mask = padding_mask([[5, 6, 7, 0, 0, 0], [5, 6, 7, 8, 9, 4]])  # (B, S), True = real
        >>> tuple(encoder(x, padding_mask=mask).shape)
        (2, 6, 16)
    """

    block_class = EncoderLayer

    def build(self, x_shape, padding_mask_shape=None):
        for layer in self.layers:
            layer.build(x_shape)
        self._build_final_norm(x_shape)

    def call(self, x, padding_mask=None, training=None):
        for layer in self.layers:
            x = layer(x, padding_mask=padding_mask, training=training)
        return self._final(x)

    def call_with_scores(self, x, padding_mask=None, training=None):
        """`call`, and each layer's self-attention weights: `(output (B, S, D), [(B, N, S, S)] * num_layers)`."""
        ensure_built(self, x)
        weights = []
        for layer in self.layers:
            x, w = layer.call_with_scores(x, padding_mask=padding_mask, training=training)
            weights.append(w)
        return self._final(x), weights
