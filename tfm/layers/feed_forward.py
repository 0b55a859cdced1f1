"""Position-wise feed-forward network (Vaswani et al., 2017, §3.3, eq. 2)."""

import keras


@keras.saving.register_keras_serializable(package="tfm")
class FeedForward(keras.layers.Layer):
    """`FFN(x) = max(0, x W1 + b1) W2 + b2`, applied to each position alone (eq. 2).

    Args:
        d_ff: int. Inner width `d_ff` (2048 in the base model).
        dropout: float. Dropout on the inner activations (not in the paper;
            tensor2tensor's `relu_dropout`). Defaults to `0.0`.
        activation: str. Defaults to `"relu"`.

    Call args:
        x: float `(B, T, D)`.

    Returns:
        float `(B, T, D)`.

    Example:
        >>> ffn = FeedForward(d_ff=32)
        >>> tuple(ffn(keras.random.normal((2, 5, 8))).shape)     # (B, T, D) -> (B, T, D)
        (2, 5, 8)
    """

    def __init__(self, d_ff, dropout=0.0, activation="relu", **kwargs):
        super().__init__(**kwargs)
        if int(d_ff) <= 0:
            raise ValueError(f"d_ff={d_ff} must be positive")
        self.d_ff = int(d_ff)
        self.dropout = float(dropout)
        self.activation = activation
        self.inner = keras.layers.Dense(d_ff, activation=activation, name="inner", dtype=self.dtype_policy)
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.outer = None

    def build(self, x_shape):
        self.inner.build(x_shape)
        self.outer = keras.layers.Dense(x_shape[-1], name="outer", dtype=self.dtype_policy)
        self.outer.build(tuple(x_shape[:-1]) + (self.d_ff,))
        self.built = True

    def call(self, x, training=None):
        h = self.inner(x)  # (B, T, D) -> (B, T, F)
        h = self.dropout_layer(h, training=training)
        return self.outer(h)  # (B, T, F) -> (B, T, D)

    def get_config(self):
        return {**super().get_config(), "d_ff": self.d_ff, "dropout": self.dropout,
                "activation": self.activation}
