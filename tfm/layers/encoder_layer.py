"""One encoder block (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.masks import merge_masks
from tfm.layers.transformer_block import TransformerBlock, ensure_built


@keras.saving.register_keras_serializable(package="tfm")
class EncoderLayer(TransformerBlock):
    """Self-attention then feed-forward, each wrapped in residual + LayerNorm (§3.1).

    Args:
        num_heads: int. Attention heads (`h`).
        d_ff: int. Inner feed-forward width.
        key_dim: int. `d_k` per head. Defaults to `D / num_heads`.
        value_dim: int. `d_v` per head. Defaults to `key_dim`.
        dropout: float. `P_drop` on sub-layer outputs. Defaults to `0.1`.
        attention_dropout: float. Dropout on attention weights. Defaults to `0.0`.
        activation_dropout: float. Dropout on the feed-forward network's inner activations (not in the
            paper; tensor2tensor's `relu_dropout`). Defaults to `0.0`.
        norm_first: bool. Pre-LN instead of the paper's post-LN. Defaults to `False`.
        layer_norm_epsilon: float. Defaults to `1e-6`.

    Call args:
        x: float `(B, S, D)`.
        padding_mask: bool `(B, S)`, True = real token.

    Returns:
        float `(B, S, D)`. `call_with_scores(x, padding_mask)` returns `(output, weights)`,
        the self-attention weights `(B, N, S, S)` beside it.

    Example:
        >>> from tfm.layers.masks import padding_mask
        >>> layer = EncoderLayer(num_heads=2, d_ff=32)
        >>> x = keras.random.normal((2, 6, 16))                  # (B, S, D)
        >>> mask = padding_mask([[5, 6, 7, 0, 0, 0], [5, 6, 7, 8, 9, 4]])  # (B, S), True = real
        >>> output, weights = layer.call_with_scores(x, padding_mask=mask)
        >>> tuple(output.shape), tuple(weights.shape)            # (B, S, D), (B, N, S, S)
        ((2, 6, 16), (2, 2, 6, 6))
        >>> float(keras.ops.max(weights[0, :, :, 3:]))           # padded keys: exactly zero weight
        0.0
    """

    def __init__(self, num_heads, d_ff, **kwargs):
        super().__init__(num_heads, d_ff, **kwargs)
        self.attention_norm = self._norm("self_attention_norm")
        self.attention_dropout_layer = self._dropout()
        self.ffn_dropout_layer = self._dropout()
        self.self_attention = None

    def build(self, x_shape, padding_mask_shape=None):
        self.self_attention = self._attention("self_attention", x_shape[-1])
        self.self_attention.build(x_shape)
        self.ffn.build(x_shape)
        self.attention_norm.build(x_shape)
        self.ffn_norm.build(x_shape)
        self.built = True

    def call(self, x, padding_mask=None, training=None):
        # Each sub-layer as in §3.1 (post-LN, the paper), with §5.4's dropout on its output:
        #   post-LN  x = LayerNorm(x + Dropout(Sublayer(x)))
        #   pre-LN   x = x + Dropout(Sublayer(LayerNorm(x)))   (`norm_first=True`)
        mask = merge_masks(key_mask=padding_mask)  # (B, S) -> (B, 1, S)

        # Sub-layer 1: multi-head self-attention; every position reads every real position.
        h = self.attention_norm(x) if self.norm_first else x
        h = self.self_attention(h, attention_mask=mask, training=training)
        x = x + self.attention_dropout_layer(h, training=training)  # the residual connection
        if not self.norm_first:
            x = self.attention_norm(x)

        # Sub-layer 2: the position-wise feed-forward network (§3.3).
        h = self.ffn_norm(x) if self.norm_first else x
        h = self.ffn(h, training=training)
        x = x + self.ffn_dropout_layer(h, training=training)
        if not self.norm_first:
            x = self.ffn_norm(x)
        return x

    def call_with_scores(self, x, padding_mask=None, training=None):
        """`call`, and the self-attention weights: `(output (B, S, D), weights (B, N, S, S))`.

        The same sub-layers as `call`; the self-attention also returns its weights.
        """
        ensure_built(self, x)
        mask = merge_masks(key_mask=padding_mask)  # (B, S) -> (B, 1, S)
        h = self.attention_norm(x) if self.norm_first else x
        h, weights = self.self_attention.call_with_scores(h, attention_mask=mask, training=training)
        x = x + self.attention_dropout_layer(h, training=training)
        if not self.norm_first:
            x = self.attention_norm(x)
        h = self.ffn_norm(x) if self.norm_first else x
        h = self.ffn(h, training=training)
        x = x + self.ffn_dropout_layer(h, training=training)
        if not self.norm_first:
            x = self.ffn_norm(x)
        return x, weights
