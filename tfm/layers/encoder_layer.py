"""One encoder block (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.feed_forward import FeedForward
from tfm.layers.multi_head_attention import MultiHeadAttention
from tfm.layers.residual import residual_block
from tfm.masks import merge_masks


@keras.saving.register_keras_serializable(package="tfm")
class EncoderLayer(keras.layers.Layer):
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

    def __init__(self, num_heads, d_ff, key_dim=None, value_dim=None, dropout=0.1,
                 attention_dropout=0.0, norm_first=False, layer_norm_epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.d_ff = int(d_ff)
        self.key_dim = key_dim
        self.value_dim = value_dim
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.norm_first = bool(norm_first)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.ffn = FeedForward(d_ff, name="feed_forward", dtype=self.dtype_policy)
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, name="self_attention_norm", dtype=self.dtype_policy)
        self.ffn_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, name="feed_forward_norm", dtype=self.dtype_policy)
        self.attention_dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.ffn_dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.self_attention = None

    def build(self, x_shape, padding_mask_shape=None):
        d_model = x_shape[-1]
        if self.key_dim is None and d_model % self.num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={self.num_heads}")
        key_dim = self.key_dim or d_model // self.num_heads
        self.self_attention = MultiHeadAttention(
            self.num_heads, key_dim, self.value_dim or key_dim, dropout=self.attention_dropout,
            name="self_attention", dtype=self.dtype_policy)
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

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads, "d_ff": self.d_ff, "key_dim": self.key_dim,
            "value_dim": self.value_dim, "dropout": self.dropout,
            "attention_dropout": self.attention_dropout, "norm_first": self.norm_first,
            "layer_norm_epsilon": self.layer_norm_epsilon,
        }
