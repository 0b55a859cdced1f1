"""The encoder stack (Vaswani et al., 2017, §3.1)."""

import keras

from tfm.layers.encoder_layer import EncoderLayer


@keras.saving.register_keras_serializable(package="tfm")
class Encoder(keras.layers.Layer):
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

    def __init__(self, num_layers, num_heads, d_ff, key_dim=None, value_dim=None, dropout=0.1,
                 attention_dropout=0.0, norm_first=False, layer_norm_epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        if int(num_layers) <= 0:
            raise ValueError(f"num_layers={num_layers} must be positive")
        self.num_layers = int(num_layers)
        self.layer_kwargs = dict(
            num_heads=num_heads, d_ff=d_ff, key_dim=key_dim, value_dim=value_dim, dropout=dropout,
            attention_dropout=attention_dropout, norm_first=norm_first,
            layer_norm_epsilon=layer_norm_epsilon)
        self.layers = [EncoderLayer(**self.layer_kwargs, name=f"layer_{i}", dtype=self.dtype_policy)
                       for i in range(self.num_layers)]
        self.final_norm = (
            keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="final_norm",
                                            dtype=self.dtype_policy)
            if norm_first else None)

    def build(self, x_shape, padding_mask_shape=None):
        for layer in self.layers:
            layer.build(x_shape)
        if self.final_norm is not None:
            self.final_norm.build(x_shape)
        self.built = True

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
        if self.final_norm is not None:
            x = self.final_norm(x)
        return (x, weights) if return_attention_scores else x

    def get_config(self):
        return {**super().get_config(), "num_layers": self.num_layers, **self.layer_kwargs}
