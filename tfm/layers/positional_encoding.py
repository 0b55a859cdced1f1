"""Sinusoidal positional encoding (Vaswani et al., 2017, §3.5)."""

import keras
import numpy as np
from keras import ops


def positional_encoding(length, depth):
    """`PE[p, 2i] = sin(p / 10000^(2i/depth))`, `PE[p, 2i+1] = cos(p / 10000^(2i/depth))`.

    Sines and cosines interleaved, as §3.5 writes them. For any fixed offset k,
    `PE[p + k]` is a linear (rotation) function of `PE[p]`, which the paper
    hoped would let the model attend by relative position.

    Args:
        length: int. Number of positions `L`.
        depth: int. Model width `D`.

    Returns:
        float32 tensor `(L, D)`.

    Example:
        >>> pe = positional_encoding(50, 4)                      # (L, D)
        >>> tuple(pe.shape)
        (50, 4)
        >>> [round(float(v), 3) for v in pe[1]]                  # sin 1, cos 1, sin 0.01, cos 0.01
        [0.841, 0.54, 0.01, 1.0]
    """
    return ops.convert_to_tensor(positional_encoding_numpy(length, depth))


def positional_encoding_numpy(length, depth):
    """NumPy twin of `positional_encoding`: float32 `(length, depth)`.

    Args:
        length: int. Positions `L` (rows).
        depth: int. Model dimension `D` (columns).

    Example:
        >>> pe = positional_encoding_numpy(50, 4)
        >>> pe.shape, pe.dtype.name, pe[0].tolist()          # position 0: sin 0 = 0, cos 0 = 1
        ((50, 4), 'float32', [0.0, 1.0, 0.0, 1.0])
    """
    length, depth = int(length), int(depth)
    if length < 0 or depth <= 0:
        raise ValueError(f"need length >= 0 and depth > 0, got length={length}, depth={depth}")
    positions = np.arange(length, dtype="float64")[:, None]  # (L, 1)
    two_i = (np.arange(depth) // 2 * 2).astype("float64")[None, :]  # (1, D): 0, 0, 2, 2, 4, 4, ...
    angles = positions / np.power(10000.0, two_i / depth)  # (L, D)
    pe = np.where(np.arange(depth) % 2 == 0, np.sin(angles), np.cos(angles))
    return pe.astype("float32")


@keras.saving.register_keras_serializable(package="tfm")
class PositionalEncoding(keras.layers.Layer):
    """Adds the fixed sinusoids of `positional_encoding` to its input (§3.5).

    Args:
        max_length: int. Longest sequence accepted.

    Call args:
        x: float `(B, T, D)`, the scaled embeddings.
        start_index: int scalar. Position of `x[:, 0]` (incremental decoding). Defaults to `0`.

    Returns:
        float `(B, T, D)`.

    Example:
        >>> layer = PositionalEncoding(max_length=50)
        >>> out = layer(ops.zeros((2, 3, 4)))                    # (B, T, D); zeros + PE is the table
        >>> tuple(out.shape)
        (2, 3, 4)
        >>> [round(float(v), 3) for v in out[0, 1]]              # PE[1]
        [0.841, 0.54, 0.01, 1.0]
    """

    def __init__(self, max_length=2048, **kwargs):
        super().__init__(**kwargs)
        self.max_length = int(max_length)

    def build(self, x_shape):
        depth = x_shape[-1]
        if depth is None:
            raise ValueError("PositionalEncoding needs a known last dimension")
        # A constant, not a weight: nothing to train and nothing to save.
        self.table = positional_encoding_numpy(self.max_length, depth)
        self.built = True

    def call(self, x, start_index=0):
        length = ops.shape(x)[1]
        table = ops.convert_to_tensor(self.table, dtype=self.compute_dtype)
        pe = ops.slice(table, (start_index, 0), (length, ops.shape(table)[1]))  # (T, D)
        return ops.cast(x, self.compute_dtype) + pe[None]

    def get_config(self):
        return {**super().get_config(), "max_length": self.max_length}


@keras.saving.register_keras_serializable(package="tfm")
class PositionalEmbedding(keras.layers.Layer):
    """Learned absolute position embeddings (Table 3 row E: "nearly identical results").

    Args:
        max_length: int. Longest sequence accepted (size of the table).
        stddev: float. Standard deviation of the initial table. Defaults to `1.0`:
            tfm's token embeddings are scaled to unit variance (§3.4), and a table
            started much smaller (BERT's 0.02) is drowned out by them and barely learns.

    Call args:
        x: float `(B, T, D)`.
        start_index: int scalar. Position of `x[:, 0]`. Defaults to `0`.

    Returns:
        float `(B, T, D)`.

    Example:
        >>> layer = PositionalEmbedding(max_length=50)
        >>> tuple(layer(keras.random.normal((2, 3, 8))).shape)   # (B, T, D) -> (B, T, D)
        (2, 3, 8)
        >>> tuple(layer.position_embeddings.shape)               # (max_length, D), learned
        (50, 8)
    """

    def __init__(self, max_length=512, stddev=1.0, **kwargs):
        super().__init__(**kwargs)
        self.max_length = int(max_length)
        self.stddev = float(stddev)

    def build(self, x_shape):
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_length, x_shape[-1]),
            initializer=keras.initializers.RandomNormal(stddev=self.stddev),
        )
        self.built = True

    def call(self, x, start_index=0):
        length = ops.shape(x)[1]
        table = ops.cast(self.position_embeddings, self.compute_dtype)
        pe = ops.slice(table, (start_index, 0), (length, ops.shape(table)[1]))  # (T, D)
        return ops.cast(x, self.compute_dtype) + pe[None]

    def get_config(self):
        return {**super().get_config(), "max_length": self.max_length, "stddev": self.stddev}
