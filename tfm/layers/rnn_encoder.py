"""Recurrent encoder (Sutskever et al., 2014; Cho et al., 2014; Bahdanau et al., 2015, §3.2)."""

import keras
from keras import ops

from tfm.config.rnn_args import validate_rnn_args
from tfm.layers.masks import padding_mask as padding_mask_of


def states_per_layer(cell):
    """How many state tensors one layer of `cell` carries: 2 for LSTM (`h`, `c`), 1 for GRU.

    Args:
        cell: str. `"lstm"` or `"gru"`.

    Example:
        >>> states_per_layer("lstm"), states_per_layer("gru")
        (2, 1)
    """
    return 2 if cell == "lstm" else 1


@keras.saving.register_keras_serializable(package="tfm")
class RNNEncoder(keras.layers.Layer):
    """Embedding + a stack of (bi)directional LSTM/GRU layers over the source.

    Padded source positions (id 0, or False in `padding_mask`) are skipped by the
    recurrence: the final state is the state after the last real token, in both
    directions, so extra padding changes nothing.

    Args:
        vocab_size: int. `V`.
        embedding_dim: int. Source embedding width `E`.
        units: int. Hidden width `U` of each recurrent layer (per direction).
        cell: str. `"lstm"` or `"gru"`. Defaults to `"lstm"`.
        bidirectional: bool. Read the source both ways and concatenate the
            directions (Bahdanau et al.'s annotations `h_j = [h_fwd; h_bwd]`).
            Defaults to `False`.
        num_layers: int. Stacked recurrent layers. Defaults to `1`.
        dropout: float. Dropout on every layer's input and on the outputs.
            Defaults to `0.0`.

    Call args:
        source_ids: int `(B, S)`, 0 = padding.
        padding_mask: bool `(B, S)`, True = real token, or None (then `source_ids != 0`).
        training: bool.

    Returns:
        `(outputs, state)`: outputs float `(B, S, U)` (`(B, S, 2U)` bidirectional);
        state a flat list of the final states, per layer bottom to top: `[h, c]`
        (LSTM) or `[h]` (GRU), each `(B, U)`, or `(B, 2U)` = `[fwd; bwd]` when
        bidirectional.

    Example:
        >>> encoder = RNNEncoder(vocab_size=20, embedding_dim=8, units=16, bidirectional=True)
        >>> outputs, state = encoder(ops.array([[4, 5, 6, 0], [7, 8, 9, 10]]))  # (B, S), 0 = padding
        >>> tuple(outputs.shape), [tuple(s.shape) for s in state]  # (B, S, 2U); [h, c], each (B, 2U)
        ((2, 4, 32), [(2, 32), (2, 32)])
    """

    def __init__(
        self, vocab_size, embedding_dim, units, cell="lstm", bidirectional=False, num_layers=1, dropout=0.0, **kwargs
    ):
        super().__init__(**kwargs)
        validate_rnn_args(cell, num_layers, dropout)
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.units = units
        self.cell = cell
        self.bidirectional = bool(bidirectional)
        self.num_layers = num_layers
        self.dropout = float(dropout)
        dtype = self.dtype_policy
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="embedding", dtype=dtype)
        rnn_cls = keras.layers.LSTM if cell == "lstm" else keras.layers.GRU
        self.rnn_layers = []
        for i in range(num_layers):
            rnn = rnn_cls(units, return_sequences=True, return_state=True, name=f"{cell}_{i}", dtype=dtype)
            if self.bidirectional:
                rnn = keras.layers.Bidirectional(rnn, merge_mode="concat", name=f"bidirectional_{i}", dtype=dtype)
            self.rnn_layers.append(rnn)
        self.dropout_layer = keras.layers.Dropout(self.dropout, name="dropout", dtype=dtype)

    @property
    def output_dim(self):
        """Width of `outputs` (and of each final state): `U`, or `2U` bidirectional."""
        return self.units * (2 if self.bidirectional else 1)

    def build(self, source_ids_shape, padding_mask_shape=None):
        batch, length = tuple(source_ids_shape)[:2]
        self.embedding.build((batch, length))
        width = self.embedding_dim
        for rnn in self.rnn_layers:
            rnn.build((batch, length, width))
            width = self.output_dim

    def call(self, source_ids, padding_mask=None, training=None):
        if padding_mask is None:
            padding_mask = padding_mask_of(source_ids)  # (B, S)
        padding_mask = ops.cast(padding_mask, "bool")
        x = self.embedding(source_ids)  # (B, S) -> (B, S, E)
        state = []
        for rnn in self.rnn_layers:
            x = self.dropout_layer(x, training=training)
            x, *final = rnn(x, mask=padding_mask, training=training)  # (B, S, .) -> (B, S, U or 2U)
            if self.bidirectional:
                half = len(final) // 2
                final = [ops.concatenate([f, b], axis=-1) for f, b in zip(final[:half], final[half:])]
            state.extend(final)
        x = self.dropout_layer(x, training=training)
        return x, state

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "cell": self.cell,
            "bidirectional": self.bidirectional,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
        }
