"""The RNN encoder-decoder baselines the Transformer replaced.

`Seq2SeqConfig.sutskever()` (Sutskever et al., 2014: no attention, the source
squeezed into the final encoder state), `.bahdanau()` (Bahdanau et al., 2015:
bidirectional encoder, additive attention) and `.luong()` (Luong et al., 2015:
stacked LSTMs, global "general" attention, input feeding).

`Seq2Seq` has the Transformer's contract: `(source_ids, target_ids)` int tensors
(0 = padding) in, float32 logits `(B, T, V)` out, and the same decoding interface
(`encode` -> a `DecodingState`, `decode_step`), so one pipeline, one loss and one
search serve both.
"""

import keras

from tfm.config import Seq2SeqConfig
from tfm.layers.masks import padding_mask
from tfm.layers.rnn_decoder import RNNDecoder
from tfm.layers.rnn_encoder import RNNEncoder, states_per_layer
from tfm.models.decoding_state import DecodingState
from tfm.models.presets import PresetMixin


@keras.saving.register_keras_serializable(package="tfm")
class Seq2Seq(PresetMixin, keras.Model):
    """RNN encoder-decoder, with or without attention, on token ids.

    Args:
        config: `Seq2SeqConfig` (or its dict).

    Call args:
        inputs: `(source_ids, target_ids)` (or a dict with those keys), int
            `(B, S)` and `(B, T)`, 0 = padding. `target_ids` is the shifted
            target (START + y[:-1]).
        training: bool.

    Returns:
        float32 logits `(B, T, V)`. The attention weights of a teacher-forced pass
        come from `attention_weights(source_ids, target_ids)`.

    Decoding, as with the `Transformer`: `state = model.encode(source_ids)`, then
    `logits, state = model.decode_step(token_ids, index, state)` per output token. The
    `DecodingState` holds the encoder outputs `(B, S, Dv)` as `memory` (`Dv = units`,
    `2 * units` bidirectional), the `memory_mask` `(B, S)`, and as `cache` the decoder's
    recurrent state: per decoder layer, bottom to top, `h, c` (LSTM) or `h` (GRU), each
    `(B, U)`, then `h~_{t-1}` `(B, U)` with Luong input feeding.

    Example:
        >>> model = Seq2Seq.from_preset("tiny", vocab_size=30)  # Bahdanau attention, 64 units
        >>> source_ids = keras.ops.array([[5, 6, 7, 0], [8, 9, 10, 11]])  # (B, S), 0 = padding
        >>> target_in = keras.ops.array([[2, 12, 13], [2, 14, 0]])  # (B, T), START + y[:-1]
        >>> tuple(model((source_ids, target_in)).shape)          # logits (B, T, V)
        (2, 3, 30)
        >>> weights = model.attention_weights(source_ids, target_in)["cross_attention"][0]
        >>> tuple(weights.shape)                                 # (B, T, S)
        (2, 3, 4)
    """

    config_class = Seq2SeqConfig
    default_name = "seq2seq"

    def __init__(self, config, **kwargs):
        if isinstance(config, dict):
            config = Seq2SeqConfig.from_dict(config)
        super().__init__(**kwargs)
        self.config = config
        c = config
        dtype = self.dtype_policy
        self.encoder = RNNEncoder(
            c.vocab_size, c.embedding_dim, c.units, cell=c.cell, bidirectional=c.bidirectional,
            num_layers=c.num_layers, dropout=c.dropout, name="encoder", dtype=dtype,
        )
        # A bidirectional encoder's final states are [fwd; bwd] (B, 2U): map each to the decoder's
        # (B, U) with tanh(W [h_fwd; h_bwd]), a generalisation of Bahdanau et al.'s s_0 = tanh(W_s h_bwd_1).
        self.bridges = []
        if c.bidirectional:
            n = c.num_layers * states_per_layer(c.cell)
            self.bridges = [
                keras.layers.Dense(c.units, activation="tanh", name=f"bridge_{i}", dtype=dtype) for i in range(n)
            ]
        self.decoder = RNNDecoder(
            c.vocab_size, c.embedding_dim, c.units, cell=c.cell, attention=c.attention, score=c.resolved_score,
            attention_units=c.resolved_attention_units, input_feeding=c.input_feeding, num_layers=c.num_layers,
            dropout=c.dropout, name="decoder", dtype=dtype,
        )

    def build(self, input_shape=None):
        seq = (None, None)
        self.encoder.build(seq)
        width = self.encoder.output_dim
        for bridge in self.bridges:
            bridge.build((None, width))
        self.decoder.build(seq, (None, None, width))
        self.built = True

    def _initial_decoder_state(self, encoder_state):
        if self.bridges:
            return [bridge(s) for bridge, s in zip(self.bridges, encoder_state)]  # (B, 2U) -> (B, U)
        return encoder_state

    def call(self, inputs, training=None):
        if isinstance(inputs, dict):
            source_ids, target_ids = inputs["source_ids"], inputs["target_ids"]
        else:
            source_ids, target_ids = inputs
        encoder_outputs, memory_mask, initial_state = self._encode(source_ids, training)
        return self.decoder(target_ids, encoder_outputs=encoder_outputs if self.config.attention else None,
                            initial_state=initial_state, memory_mask=memory_mask, training=training)

    @property
    def max_source_length(self):
        """None: a recurrent encoder reads a source of any length (the search truncates nothing).

        Example:
            >>> Seq2Seq.from_preset("tiny", vocab_size=30).max_source_length is None
            True
        """
        return None

    @property
    def max_decode_steps(self):
        """None: a recurrent decoder has no position table, so no step limit of its own.

        Example:
            >>> Seq2Seq.from_preset("tiny", vocab_size=30).max_decode_steps is None
            True
        """
        return None

    def attention_weights(self, source_ids, target_ids):
        """The attention weights, after the softmax, of one teacher-forced pass (inference: no dropout).

        Args:
            source_ids: int `(B, S)`.
            target_ids: int `(B, T)`, the shifted target (START + y[:-1]).

        Returns:
            dict: `cross_attention`, a list with the decoder's one `(B, T, S)` map (Bahdanau et al., 2015,
            §3.1's `alpha_ij`; Luong et al., 2015, §3.1's `a_t`), or an empty list for a model without
            attention (the Transformer's `attention_weights` has the same key, one entry per layer).

        Example:
            >>> model = Seq2Seq.from_preset("tiny", vocab_size=30)
            >>> weights = model.attention_weights(keras.ops.array([[5, 6, 0]]), keras.ops.array([[2, 9]]))
            >>> tuple(weights["cross_attention"][0].shape)       # (B, T, S)
            (1, 2, 3)
            >>> Seq2Seq.from_preset("sutskever", vocab_size=30, units=8, embedding_dim=8).attention_weights(
            ...     keras.ops.array([[5, 6]]), keras.ops.array([[2]]))
            {'cross_attention': []}
        """
        if not self.config.attention:
            return {"cross_attention": []}
        encoder_outputs, memory_mask, initial_state = self._encode(source_ids, False)
        _, weights = self.decoder.call_with_scores(target_ids, encoder_outputs, initial_state=initial_state,
                                                   memory_mask=memory_mask, training=False)
        return {"cross_attention": [weights]}

    def _encode(self, source_ids, training):
        """`(encoder_outputs (B, S, Dv), memory_mask (B, S), the decoder's initial cell states)`."""
        memory_mask = padding_mask(source_ids)  # (B, S)
        encoder_outputs, encoder_state = self.encoder(source_ids, padding_mask=memory_mask, training=training)
        return encoder_outputs, memory_mask, self._initial_decoder_state(encoder_state)

    # Incremental decoding (the interface tfm.decoding drives) -----------------
    def encode(self, source_ids, training=False, max_length=None):
        """Start incremental decoding: run the encoder once and the decoder's initial state.

        Args:
            source_ids: int `(B, S)`, 0 = padding.
            training: bool.
            max_length: ignored (the `Transformer`'s argument: a recurrent state has one size whatever
                the number of steps).

        Returns:
            `DecodingState`: `memory` the encoder outputs `(B, S, Dv)`, `memory_mask` `(B, S)`, `cache` the
            decoder's initial state, a list of `(B, U)` (see the class docstring).

        Example:
            >>> model = Seq2Seq.from_preset("tiny", vocab_size=30)   # an LSTM of 64 units
            >>> state = model.encode(keras.ops.array([[5, 6, 7, 0], [8, 9, 10, 11]]))
            >>> tuple(state.memory.shape), tuple(state.memory_mask.shape), [tuple(s.shape) for s in state.cache]
            ((2, 4, 64), (2, 4), [(2, 64), (2, 64)])
        """
        encoder_outputs, memory_mask, initial_state = self._encode(source_ids, training)
        return DecodingState(memory=encoder_outputs, memory_mask=memory_mask,
                             cache=self.decoder.start_state(initial_state))

    def decode_step(self, token_ids, index, state):
        """One target token for every hypothesis: the recurrent step, attending to the memory.

        Args:
            token_ids: int `(N,)` (or `(N, 1)`), the previous output token of each hypothesis.
            index: int or scalar tensor, its position; unused (the recurrent state carries the position),
                taken so that every model decodes through one signature.
            state: `DecodingState` from `encode` or the previous step; `state.cache` has `N` rows, the memory
                `B` rows with `N = B * G` (G hypotheses per sentence at rows `b * G + j`; G = 1 without beams).

        Returns:
            `(logits (N, V) float32, state)`: the new state holds the decoder's next recurrent state.

        Example:
            >>> model = Seq2Seq.from_preset("tiny", vocab_size=30)
            >>> source_ids, target_in = keras.ops.array([[5, 6, 0]]), keras.ops.array([[2, 9, 4]])
            >>> state, steps = model.encode(source_ids), []
            >>> for t in range(3):
            ...     logits, state = model.decode_step(target_in[:, t], t, state)
            ...     steps.append(logits)
            >>> full = model((source_ids, target_in))                # (B, T, V) teacher forced
            >>> bool(keras.ops.all(keras.ops.abs(keras.ops.stack(steps, axis=1) - full) < 1e-4))
            True
        """
        memory = state.memory if self.config.attention else None
        logits, cache, _ = self.decoder.step(token_ids, state.cache, memory, state.memory_mask)
        return logits, state._replace(cache=cache)

    def get_config(self):
        return {**keras.layers.Layer.get_config(self), "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(Seq2SeqConfig.from_dict(config.pop("config")), **config)

