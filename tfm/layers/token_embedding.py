"""Token embeddings that can also serve as the pre-softmax projection (Vaswani et al., 2017, §3.4).

`Transformer` uses one `TokenEmbedding` for the source, the target and the output projection when
`TransformerConfig.share_embeddings` is set (the paper's tying), and two, with a separate output
`Dense`, when it is not.
"""

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="tfm")
class TokenEmbedding(keras.layers.Layer):
    """A `(V, D)` table of token vectors: ids -> embeddings, and, transposed, hidden states -> logits.

    §3.4: "we share the same weight matrix between the two embedding layers and
    the pre-softmax linear transformation ... In the embedding layers, we
    multiply those weights by sqrt(d_model)." `reverse=True` is that pre-softmax
    use of the same table; whether a model ties its tables is the model's choice
    (one layer for both embeddings and the projection, or one per use).
    Initialised N(0, D^-0.5) so the scaled embeddings start at unit variance,
    comparable to the sinusoids.

    Args:
        vocab_size: int. `V`.
        d_model: int. `D`.
        scale: bool. Multiply embeddings by `sqrt(D)`. Defaults to `True`.

    Call args:
        inputs: int `(B, T)` ids, or float `(B, T, D)` when `reverse=True`.
        reverse: bool. Project hidden states to logits `(B, T, V)` (float32).

    Returns:
        float `(B, T, D)` embeddings, or float32 `(B, T, V)` logits.

    Example:
        >>> embedding = TokenEmbedding(vocab_size=10, d_model=8)
        >>> x = embedding(ops.array([[4, 5, 0]]))                # (B, T) ids -> (B, T, D), times sqrt(D)
        >>> tuple(x.shape)
        (1, 3, 8)
        >>> logits = embedding(x, reverse=True)                  # (B, T, D) -> (B, T, V): x E^T
        >>> tuple(logits.shape), keras.backend.standardize_dtype(logits.dtype)
        ((1, 3, 10), 'float32')
    """

    def __init__(self, vocab_size, d_model, scale=True, **kwargs):
        super().__init__(**kwargs)
        if int(vocab_size) <= 0 or int(d_model) <= 0:
            raise ValueError(f"vocab_size={vocab_size} and d_model={d_model} must be positive")
        self.vocab_size = int(vocab_size)
        self.d_model = int(d_model)
        self.scale = bool(scale)

    def build(self, inputs_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.vocab_size, self.d_model),
            initializer=keras.initializers.RandomNormal(stddev=self.d_model**-0.5),
        )
        self.built = True

    def reverse_table(self):
        """The table as the pre-softmax projection reads it (§3.4): `E^T`, `(D, V)`, a row-major copy.

        A beam step's product with `E^T` read in place took 1.4x to 1.8x the time of the same product with this
        row-major copy on TensorFlow's own CPU kernels, with the same floats (`benchmarks/step_kernels.py`,
        `docs/results.md`, issue 59); a search transposes the table once (`Transformer.encode`'s `prepared`) and
        every step passes it to `reverse`.

        Example:
            >>> embedding = TokenEmbedding(vocab_size=10, d_model=8)
            >>> embedding.build()
            >>> tuple(embedding.reverse_table().shape)
            (8, 10)
        """
        return ops.transpose(ops.cast(self.embeddings, self.compute_dtype))

    def reverse(self, inputs, table):
        """Hidden states -> float32 logits: `inputs @ table`, with `table` = `E^T` (what `call(inputs, reverse=True)`
        returns, given the table transposed beforehand: `reverse_table()`, once per search).

        Args:
            inputs: float `(..., D)`.
            table: float `(D, V)`, the table transposed.

        Returns:
            float32 `(..., V)`: the softmax and the loss stay float32 under mixed precision.

        Example:
            >>> embedding = TokenEmbedding(vocab_size=10, d_model=8)
            >>> x = keras.random.normal((3, 8))
            >>> a = embedding(x, reverse=True)                       # builds the table; E^T at each call
            >>> b = embedding.reverse(x, embedding.reverse_table())  # E^T once, passed in
            >>> tuple(a.shape), bool(ops.all(a == b))
            ((3, 10), True)
        """
        return ops.cast(ops.matmul(inputs, table), "float32")  # (..., D) @ (D, V) -> (..., V)

    def call(self, inputs, reverse=False):
        table = ops.cast(self.embeddings, self.compute_dtype)
        if reverse:
            return self.reverse(inputs, ops.transpose(table))  # (B, T, D) @ E^T (D, V) -> (B, T, V), float32
        x = ops.take(table, ops.cast(inputs, "int32"), axis=0)  # (B, T) -> (B, T, D)
        if self.scale:
            x = x * ops.cast(math.sqrt(self.d_model), self.compute_dtype)
        return x

    def compute_output_spec(self, inputs, reverse=False):
        if reverse:
            return keras.KerasTensor(inputs.shape[:-1] + (self.vocab_size,), dtype="float32")
        return keras.KerasTensor(inputs.shape + (self.d_model,), dtype=self.compute_dtype)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "d_model": self.d_model,
                "scale": self.scale}
