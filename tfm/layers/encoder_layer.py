"""One encoder block (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.residual import residual_block
from tfm.layers.transformer_block import TransformerBlock
from tfm.masks import merge_masks


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
        norm_first: bool. Pre-LN instead of the paper's post-LN. Defaults to `False`.
        layer_norm_epsilon: float. Defaults to `1e-6`.

    Call args:
        x: float `(B, S, D)`.
        padding_mask: bool `(B, S)`, True = real token.
        return_attention_scores: bool. Also return weights `(B, N, S, S)`.

    Returns:
        float `(B, S, D)` (and the weights).
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

    def call(self, x, padding_mask=None, training=None, return_attention_scores=False):
        mask = merge_masks(key_mask=padding_mask)  # (B, S) -> (B, 1, S)

        # Self-attention block.
        def attend(h):
            return self.self_attention(h, attention_mask=mask, training=training,
                                       return_attention_scores=return_attention_scores)

        x, extras = residual_block(x, attend, self.attention_norm, self.attention_dropout_layer,
                                   self.norm_first, training)
        # Feed-forward block.
        x, _ = residual_block(x, lambda h: self.ffn(h, training=training), self.ffn_norm,
                              self.ffn_dropout_layer, self.norm_first, training)
        return (x, extras[0]) if return_attention_scores else x
