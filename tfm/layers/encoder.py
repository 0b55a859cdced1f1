"""The encoder stack (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.encoder_layer import EncoderLayer
from tfm.layers.transformer_block import TransformerStack


@keras.saving.register_keras_serializable(package="tfm")
class Encoder(TransformerStack):
    """`N` identical `EncoderLayer`s (and a final LayerNorm when pre-LN).

    Takes the embedded, position-encoded source; the model owns the embeddings
    so that they can be shared with the decoder and the output projection.

    Args:
        num_layers: int. `N`.
        num_heads, d_ff, key_dim, value_dim, dropout, attention_dropout,
        norm_first, layer_norm_epsilon: as in `EncoderLayer`.

    Call args:
        x: float `(B, S, D)`.
        padding_mask: bool `(B, S)`, True = real token.
        return_attention_scores: bool. Also return a list of `(B, N, S, S)`, one per layer.

    Returns:
        float `(B, S, D)` (and the list of weights).
    """

    block_class = EncoderLayer

    def build(self, x_shape, padding_mask_shape=None):
        for layer in self.layers:
            layer.build(x_shape)
        self._build_final_norm(x_shape)

    def call(self, x, padding_mask=None, training=None, return_attention_scores=False):
        weights = []
        for layer in self.layers:
            out = layer(x, padding_mask=padding_mask, training=training,
                        return_attention_scores=return_attention_scores)
            if return_attention_scores:
                x, w = out
                weights.append(w)
            else:
                x = out
        x = self._final(x)
        return (x, weights) if return_attention_scores else x
