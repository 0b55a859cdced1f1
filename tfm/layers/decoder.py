"""The decoder stack (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.decoder_layer import DecoderLayer
from tfm.layers.transformer_block import TransformerStack, ensure_built


@keras.saving.register_keras_serializable(package="tfm")
class Decoder(TransformerStack):
    """`N` identical `DecoderLayer`s (and a final LayerNorm when pre-LN).

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
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`). Every block is a `DecoderLayer`.

    Call args:
        x: float `(B, T, D)`, the embedded, position-encoded shifted target.
        memory: float `(B, S, D)`, the encoder output.
        memory_mask: bool `(B, S)`, True = real source token.

    Returns:
        `call`: float `(B, T, D)`, always. As in `DecoderLayer`, with one entry per layer:

        - `call_with_scores(x, memory, memory_mask)` -> `(output, self_weights, cross_weights)`,
          lists of `(B, N, T, T)` and `(B, N, T, S)`.
        - `call_with_cache(x, self_caches, cache_update_index, cross_caches, memory_mask)` ->
          `(output, self_caches)`, lists of caches (`compute_cross_caches` for the memory, see
          `DecoderLayer`; `Transformer.encode` makes both).

    Example:
        >>> decoder = Decoder(num_layers=2, num_heads=2, d_ff=32)
        >>> y = keras.random.normal((2, 5, 16))                  # (B, T, D): the embedded target
        >>> memory = keras.random.normal((2, 7, 16))             # (B, S, D): the encoder's output
        >>> tuple(decoder(y, memory).shape)
        (2, 5, 16)
        >>> output, self_weights, cross_weights = decoder.call_with_scores(y, memory)
        >>> len(cross_weights), tuple(cross_weights[0].shape)    # one (B, N, T, S) per layer
        (2, (2, 2, 5, 7))
    """

    block_class = DecoderLayer

    def build(self, x_shape, memory_shape=None, *args, **kwargs):
        for layer in self.layers:
            layer.build(x_shape, memory_shape)
        self._build_final_norm(x_shape)

    def compute_cross_caches(self, memory):
        """Each layer's `(keys (B, N, S, d_k), values (B, N, S, d_v))` of the memory, computed once per sentence.

        Example:
            >>> decoder = Decoder(num_layers=2, num_heads=2, d_ff=32)
            >>> decoder.build((None, None, 16), (None, None, 16))
            >>> caches = decoder.compute_cross_caches(keras.random.normal((3, 7, 16)))
            >>> len(caches), tuple(caches[0][0].shape)
            (2, (3, 2, 7, 8))
        """
        return [layer.compute_cross_cache(memory) for layer in self.layers]

    def call(self, x, memory, memory_mask=None, training=None):
        for layer in self.layers:
            x = layer(x, memory, memory_mask=memory_mask, training=training)
        return self._final(x)

    def call_with_scores(self, x, memory, memory_mask=None, training=None):
        """`call`, and each layer's weights: `(output, [self (B, N, T, T)], [cross (B, N, T, S)])`."""
        ensure_built(self, x, memory)
        self_weights, cross_weights = [], []
        for layer in self.layers:
            x, self_w, cross_w = layer.call_with_scores(x, memory, memory_mask=memory_mask, training=training)
            self_weights.append(self_w)
            cross_weights.append(cross_w)
        return self._final(x), self_weights, cross_weights

    def call_with_cache(self, x, self_caches, cache_update_index, cross_caches, memory_mask=None, training=None):
        """New positions with cached keys/values, one cache per layer: `(output (B, T, D), self_caches)`.

        Example:
            >>> decoder = Decoder(num_layers=2, num_heads=2, d_ff=32)
            >>> y, memory = keras.random.normal((1, 3, 16)), keras.random.normal((1, 7, 16))
            >>> full = decoder(y, memory)                           # builds the stack
            >>> cross = decoder.compute_cross_caches(memory)
            >>> caches = [layer.self_attention.empty_cache(1, 3) for layer in decoder.layers]
            >>> out, caches = decoder.call_with_cache(y[:, :1], caches, 0, cross)   # position 0 only
            >>> bool(ops.all(ops.abs(out - full[:, :1]) < 1e-5))
            True
        """
        ensure_built(self, x)
        new_caches = []
        for layer, self_cache, cross_cache in zip(self.layers, self_caches, cross_caches):
            x, self_cache = layer.call_with_cache(x, self_cache, cache_update_index, cross_cache,
                                                  memory_mask=memory_mask, training=training)
            new_caches.append(self_cache)
        return self._final(x), new_caches
