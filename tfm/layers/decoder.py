"""The decoder stack (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.decoder_layer import DecoderLayer
from tfm.layers.transformer_block import TransformerStack


@keras.saving.register_keras_serializable(package="tfm")
class Decoder(TransformerStack):
    """`N` identical `DecoderLayer`s (and a final LayerNorm when pre-LN).

    Args:
        num_layers: int. `N`.
        num_heads, d_ff, key_dim, value_dim, dropout, attention_dropout,
        norm_first, layer_norm_epsilon: as in `DecoderLayer`.

    Call args:
        x: float `(B, T, D)`, the embedded, position-encoded shifted target.
        memory: float `(B, S, D)`, the encoder output (None with `cross_caches`).
        memory_mask: bool `(B, S)`, True = real source token.
        return_attention_scores: bool.
        self_caches: list of `(B, 2, N, T_max, H)`, one per layer, or None.
        cross_caches: list of `(B, 2, N, S, H)`, one per layer, or None.
        cache_update_index: int scalar, position of `x[:, 0]` when decoding.

    Returns:
        float `(B, T, D)` alone, or, when `return_attention_scores` or
        `self_caches` is given, `(output, aux)` where `aux` holds lists (one entry
        per layer) under `"self_attention"`, `"cross_attention"` (when asked) and
        `"self_caches"` (when given).
    """

    block_class = DecoderLayer
    # A layer's aux key -> the stack's key for the per-layer list.
    AUX_LISTS = {"self_attention": "self_attention", "cross_attention": "cross_attention",
                 "self_cache": "self_caches"}

    def build(self, x_shape, memory_shape=None, *args, **kwargs):
        for layer in self.layers:
            layer.build(x_shape, memory_shape)
        self._build_final_norm(x_shape)

    def compute_cross_caches(self, memory):
        """Per-layer keys/values of the memory, computed once per sentence."""
        return [layer.compute_cross_cache(memory) for layer in self.layers]

    def call(self, x, memory=None, memory_mask=None, training=None, return_attention_scores=False,
             self_caches=None, cross_caches=None, cache_update_index=None):
        with_aux = return_attention_scores or self_caches is not None
        aux = {}
        for i, layer in enumerate(self.layers):
            out = layer(
                x, memory, memory_mask=memory_mask, training=training,
                return_attention_scores=return_attention_scores,
                self_cache=None if self_caches is None else self_caches[i],
                cross_cache=None if cross_caches is None else cross_caches[i],
                cache_update_index=cache_update_index)
            if not with_aux:
                x = out
                continue
            x, layer_aux = out
            for key, value in layer_aux.items():
                aux.setdefault(self.AUX_LISTS[key], []).append(value)
        x = self._final(x)
        return (x, aux) if with_aux else x
