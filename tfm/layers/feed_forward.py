"""Position-wise feed-forward network (Vaswani et al., 2017, §3.3, eq. 2)."""

import keras
from keras import ops


def position_wise(layer, x):
    """`layer(x)` for a layer that acts on each position alone (a `Dense`, §3.3's "position-wise"), as a 2-D product.

    With the position axis and the width static (a decoding step: `T = 1`), `x (B, T, D)` is reshaped to
    `(B*T, D)` by constant shapes, `layer` runs on the rows, and the result goes back to `(B, T, D')`. Keras'
    3-D product (`tensordot`) computes the same matrix product but reads the batch size at run time, with
    five or six small shape ops around each product: in a beam step that is every projection of every
    layer (issue 59's profile). The values are the same either way: the same 2-D product of the same rows.
    With a dynamic `T` (teacher-forced batches of any length) `layer(x)` is called as it is.

    Args:
        layer: a callable on the last axis, e.g. `keras.layers.Dense`.
        x: float `(B, T, D)`, or any other rank (then `layer(x)` as it is).

    Returns:
        float `(B, T, D')`: `layer(x)`.

    Example:
        >>> dense = keras.layers.Dense(3)
        >>> x = keras.random.normal((4, 1, 8))                   # (B, T = 1, D): one decoding step
        >>> y = position_wise(dense, x)
        >>> tuple(y.shape), bool(ops.all(y == dense(x)))
        ((4, 1, 3), True)
    """
    if len(x.shape) != 3 or x.shape[1] is None or x.shape[2] is None:
        return layer(x)
    t, d = x.shape[1], x.shape[2]
    rows = layer(ops.reshape(x, (-1, d)))  # (B*T, D) -> (B*T, D')
    return ops.reshape(rows, (-1, t, rows.shape[-1]))  # -> (B, T, D')


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
        h = position_wise(self.inner, x)  # (B, T, D) -> (B, T, F)
        h = self.dropout_layer(h, training=training)
        return position_wise(self.outer, h)  # (B, T, F) -> (B, T, D)

    def get_config(self):
        return {**super().get_config(), "d_ff": self.d_ff, "dropout": self.dropout,
                "activation": self.activation}
