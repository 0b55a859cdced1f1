"""One decoder block (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.residual import residual_block
from tfm.layers.transformer_block import TransformerBlock
from tfm.masks import merge_masks


@keras.saving.register_keras_serializable(package="tfm")
class DecoderLayer(TransformerBlock):
    """Causal self-attention, attention over the encoder output, feed-forward (§3.1).

    Each sub-layer is wrapped in residual + LayerNorm (post-LN as in the paper,
    or pre-LN with `norm_first`). The self-attention is masked so position i
    sees positions <= i only (§3.2.3).

    Args:
        num_heads: int. Attention heads (`h`).
        d_ff: int. Inner feed-forward width.
        key_dim: int. `d_k` per head. Defaults to `D / num_heads`.
        value_dim: int. `d_v` per head. Defaults to `key_dim`.
        dropout: float. `P_drop` on sub-layer outputs. Defaults to `0.1`.
        attention_dropout: float. Dropout on attention weights. Defaults to `0.0`.
        norm_first: bool. Pre-LN instead of post-LN. Defaults to `False`.
        layer_norm_epsilon: float. Defaults to `1e-6`.

    Call args:
        x: float `(B, T, D)`, the shifted target so far.
        memory: float `(B, S, D)`, the encoder output. May be None when
            `cross_cache` is given.
        memory_mask: bool `(B, S)`, True = real source token.
        return_attention_scores: bool.
        self_cache: float `(B, 2, N, T_max, H)` or None (incremental decoding).
        cross_cache: float `(B, 2, N, S, H)` or None: the memory's keys and
            values, projected once per sentence (`compute_cross_cache`).
        cache_update_index: int scalar: position of `x[:, 0]` when decoding
            with `self_cache`.

    Returns:
        float `(B, T, D)` alone when neither `return_attention_scores` nor
        `self_cache` is given; otherwise `(output, aux)`, `aux` a dict holding
        `"self_attention"` and `"cross_attention"` weights `(B, N, T, T|S)` when
        `return_attention_scores`, and `"self_cache"` when a cache was given.
        The form depends on those arguments only, never on the data.
    """

    def __init__(self, num_heads, d_ff, **kwargs):
        super().__init__(num_heads, d_ff, **kwargs)
        self.self_attention_norm = self._norm("self_attention_norm")
        self.cross_attention_norm = self._norm("cross_attention_norm")
        self.dropouts = [self._dropout() for _ in range(3)]
        self.self_attention = None
        self.cross_attention = None

    def build(self, x_shape, memory_shape=None, *args, **kwargs):
        memory_shape = memory_shape or x_shape
        self.self_attention = self._attention("self_attention", x_shape[-1])
        self.cross_attention = self._attention("cross_attention", x_shape[-1])
        self.self_attention.build(x_shape)
        self.cross_attention.build(x_shape, memory_shape)
        for norm in (self.self_attention_norm, self.cross_attention_norm, self.ffn_norm):
            norm.build(x_shape)
        self.ffn.build(x_shape)
        self.built = True

    def compute_cross_cache(self, memory):
        """The memory's keys and values for this layer: `(B, S, D) -> (B, 2, N, S, H)`."""
        return self.cross_attention.compute_cache(memory)

    def call(self, x, memory=None, memory_mask=None, training=None, return_attention_scores=False,
             self_cache=None, cross_cache=None, cache_update_index=None):
        aux = {}

        # Causal self-attention block (with the cache, only the new positions are computed).
        def self_attend(h):
            return self.self_attention(
                h, attention_mask=None, use_causal_mask=True, training=training,
                return_attention_scores=return_attention_scores,
                cache=self_cache, cache_update_index=cache_update_index)

        x, extras = residual_block(x, self_attend, self.self_attention_norm, self.dropouts[0],
                                   self.norm_first, training)
        if return_attention_scores:
            aux["self_attention"], extras = extras[0], extras[1:]
        if self_cache is not None:
            aux["self_cache"] = extras[0]

        # Cross-attention block: queries from the decoder, keys/values from the encoder.
        cross_mask = merge_masks(key_mask=memory_mask)  # (B, S) -> (B, 1, S)

        def cross_attend(h):
            return self.cross_attention(
                h, memory, attention_mask=cross_mask, training=training,
                return_attention_scores=return_attention_scores, cache=cross_cache)

        x, extras = residual_block(x, cross_attend, self.cross_attention_norm, self.dropouts[1],
                                   self.norm_first, training)
        if return_attention_scores:
            aux["cross_attention"] = extras[0]

        # Feed-forward block.
        x, _ = residual_block(x, lambda h: self.ffn(h, training=training), self.ffn_norm,
                              self.dropouts[2], self.norm_first, training)
        return (x, aux) if (return_attention_scores or self_cache is not None) else x
