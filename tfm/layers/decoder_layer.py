"""One decoder block (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.masks import merge_masks
from tfm.layers.transformer_block import TransformerBlock, ensure_built


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
        activation_dropout: float. Dropout on the feed-forward network's inner activations (not in the
            paper; tensor2tensor's `relu_dropout`). Defaults to `0.0`.
        norm_first: bool. Pre-LN instead of post-LN. Defaults to `False`.
        layer_norm_epsilon: float. Defaults to `1e-6`.

    Call args:
        x: float `(B, T, D)`, the shifted target so far.
        memory: float `(B, S, D)`, the encoder output.
        memory_mask: bool `(B, S)`, True = real source token.

    Returns:
        `call`: float `(B, T, D)`, always. Two methods return more, each one fixed tuple:

        - `call_with_scores(x, memory, memory_mask)` -> `(output, self_weights (B, N, T, T),
          cross_weights (B, N, T, S))`.
        - `call_with_cache(x, self_cache, cache_update_index, cross_cache, memory_mask)` ->
          `(output, self_cache)`, for incremental decoding: `self_cache` float
          `(B, 2, N, T_max, H)` or a growing `(keys, values)` pair (`MultiHeadAttention`),
          `cache_update_index` the position of `x[:, 0]`, `cross_cache` the memory's keys and
          values projected once per sentence (`compute_cross_cache`), which replace `memory`.
          The cross cache may hold `B` memories for `B * G` rows of `x` (G beams per sentence,
          rows `b * G + j`); `memory_mask` is then the memories' `(B, S)`.

    Example:
        >>> layer = DecoderLayer(num_heads=2, d_ff=32)
        >>> y = keras.random.normal((2, 5, 16))                  # (B, T, D)
        >>> memory = keras.random.normal((2, 7, 16))             # (B, S, D)
        >>> tuple(layer(y, memory).shape)
        (2, 5, 16)
        >>> output, self_weights, cross_weights = layer.call_with_scores(y, memory)
        >>> tuple(self_weights.shape), tuple(cross_weights.shape)  # (B, N, T, T), (B, N, T, S)
        ((2, 2, 5, 5), (2, 2, 5, 7))
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
        """The memory's keys and values for this layer's encoder-decoder attention (§3.2.3), projected once.

        Args:
            memory: float `(B, S, D)`, the encoder output.

        Returns:
            `(keys (B, N, S, d_k), values (B, N, S, d_v))`: a read-only cache for `call_with_cache`.

        Example:
            >>> layer = DecoderLayer(num_heads=2, d_ff=32)
            >>> layer.build((None, None, 16), (None, None, 16))
            >>> keys, values = layer.compute_cross_cache(keras.random.normal((3, 7, 16)))
            >>> tuple(keys.shape), tuple(values.shape)            # (B, N, S, d_k), (B, N, S, d_v)
            ((3, 2, 7, 8), (3, 2, 7, 8))
        """
        return self.cross_attention.split_cache(self.cross_attention.compute_cache(memory))

    def call(self, x, memory, memory_mask=None, training=None):
        # Each sub-layer as in §3.1 (post-LN, the paper), with §5.4's dropout on its output:
        #   post-LN  x = LayerNorm(x + Dropout(Sublayer(x)))
        #   pre-LN   x = x + Dropout(Sublayer(LayerNorm(x)))   (`norm_first=True`)
        cross_mask = merge_masks(key_mask=memory_mask)  # (B, S) -> (B, 1, S)

        # Sub-layer 1: masked multi-head self-attention; position t reads positions <= t (§3.2.3).
        h = self.self_attention_norm(x) if self.norm_first else x
        h = self.self_attention(h, use_causal_mask=True, training=training)
        x = x + self.dropouts[0](h, training=training)  # the residual connection
        if not self.norm_first:
            x = self.self_attention_norm(x)

        # Sub-layer 2: encoder-decoder attention; queries from the decoder, keys/values from memory.
        h = self.cross_attention_norm(x) if self.norm_first else x
        h = self.cross_attention(h, memory, attention_mask=cross_mask, training=training)
        x = x + self.dropouts[1](h, training=training)
        if not self.norm_first:
            x = self.cross_attention_norm(x)

        # Sub-layer 3: the position-wise feed-forward network (§3.3).
        h = self.ffn_norm(x) if self.norm_first else x
        h = self.ffn(h, training=training)
        x = x + self.dropouts[2](h, training=training)
        if not self.norm_first:
            x = self.ffn_norm(x)
        return x

    def call_with_scores(self, x, memory, memory_mask=None, training=None):
        """`call`, and the weights: `(output (B, T, D), self (B, N, T, T), cross (B, N, T, S))`.

        The same sub-layers as `call`; each attention also returns its weights.
        """
        ensure_built(self, x, memory)
        cross_mask = merge_masks(key_mask=memory_mask)  # (B, S) -> (B, 1, S)
        h = self.self_attention_norm(x) if self.norm_first else x
        h, self_weights = self.self_attention.call_with_scores(h, use_causal_mask=True,
                                                               training=training)
        x = x + self.dropouts[0](h, training=training)
        if not self.norm_first:
            x = self.self_attention_norm(x)
        h = self.cross_attention_norm(x) if self.norm_first else x
        h, cross_weights = self.cross_attention.call_with_scores(h, memory, attention_mask=cross_mask,
                                                                 training=training)
        x = x + self.dropouts[1](h, training=training)
        if not self.norm_first:
            x = self.cross_attention_norm(x)
        h = self.ffn_norm(x) if self.norm_first else x
        h = self.ffn(h, training=training)
        x = x + self.dropouts[2](h, training=training)
        if not self.norm_first:
            x = self.ffn_norm(x)
        return x, self_weights, cross_weights

    def call_with_cache(self, x, self_cache, cache_update_index, cross_cache, memory_mask=None,
                        training=None):
        """One or more new positions with cached keys/values: `(output (B, T, D), self_cache)`.

        Example:
            >>> layer = DecoderLayer(num_heads=2, d_ff=32)
            >>> y, memory = keras.random.normal((1, 3, 16)), keras.random.normal((1, 7, 16))
            >>> full = layer(y, memory)                             # builds the layer
            >>> cross = layer.compute_cross_cache(memory)          # the memory's keys and values
            >>> cache, steps = layer.self_attention.empty_cache_pair(1), []
            >>> for t in range(3):
            ...     out, cache = layer.call_with_cache(y[:, t : t + 1], cache, t, cross)
            ...     steps.append(out)
            >>> bool(ops.all(ops.abs(ops.concatenate(steps, axis=1) - full) < 1e-5))
            True
        """
        ensure_built(self, x)
        cross_mask = merge_masks(key_mask=memory_mask)  # (B, S) -> (B, 1, S)

        # Sub-layer 1: masked self-attention over the cache. Only the new positions are computed:
        # their keys and values join `self_cache`, their queries read every position cached so far.
        h = self.self_attention_norm(x) if self.norm_first else x
        h, self_cache = self.self_attention.call_with_cache(
            h, self_cache, cache_update_index, use_causal_mask=True, training=training)
        x = x + self.dropouts[0](h, training=training)
        if not self.norm_first:
            x = self.self_attention_norm(x)

        # Sub-layer 2: encoder-decoder attention; `cross_cache` holds the memory's keys and values.
        h = self.cross_attention_norm(x) if self.norm_first else x
        h, _ = self.cross_attention.call_with_cache(
            h, cross_cache, attention_mask=cross_mask, training=training)
        x = x + self.dropouts[1](h, training=training)
        if not self.norm_first:
            x = self.cross_attention_norm(x)

        # Sub-layer 3: the position-wise feed-forward network, position by position as ever.
        h = self.ffn_norm(x) if self.norm_first else x
        h = self.ffn(h, training=training)
        x = x + self.dropouts[2](h, training=training)
        if not self.norm_first:
            x = self.ffn_norm(x)
        return x, self_cache
