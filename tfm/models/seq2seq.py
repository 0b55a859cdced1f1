"""The RNN encoder-decoder baselines the Transformer replaced.

`Seq2SeqConfig.sutskever()` (Sutskever et al., 2014: no attention, the source
squeezed into the final encoder state), `.bahdanau()` (Bahdanau et al., 2015:
bidirectional encoder, additive attention) and `.luong()` (Luong et al., 2015:
stacked LSTMs, global "general" attention, input feeding).

`Seq2Seq` has the Transformer's contract: `(source_ids, target_ids)` int tensors
(0 = padding) in, float32 logits `(B, T, V)` out, so one pipeline, one loss and
one decoder (`encode` + `decode_step`) serve both.
"""

import dataclasses

import keras

from tfm.config import ConfigIO, check_positive_ints, check_recipe
from tfm.layers.rnn_decoder import RNNDecoder, resolve_attention_args
from tfm.layers.rnn_encoder import RNNEncoder, check_rnn_args, states_per_layer
from tfm.masks import padding_mask


@dataclasses.dataclass(frozen=True, eq=False)
class Seq2SeqConfig(ConfigIO):
    """Every size of a `Seq2Seq` model; validated on creation.

    Presets: `sutskever()`, `bahdanau()`, `luong()` (the papers' settings) and `tiny()`;
    `dataclasses.replace` gives variants. `score` and `attention_units` keep what was
    given (None = the attention's default), so a variant re-derives them: `--set units=16`
    widens the additive score too, `--set attention=luong` gets Luong's "general" score.
    `resolved_score` / `resolved_attention_units` are what gets built, and what `to_dict`
    writes (so a saved config says what was built).
    """

    PRESETS = ("sutskever", "bahdanau", "luong", "tiny")

    vocab_size: int = 8000  # V: shared source/target vocabulary, the 4 reserved ids included
    embedding_dim: int = 256  # E: source and target embedding width
    units: int = 256  # U: hidden width of every recurrent layer (per direction in the encoder)
    cell: str = "lstm"  # "lstm" or "gru"
    bidirectional: bool = False  # bidirectional encoder; its final states are bridged to U by a tanh layer
    num_layers: int = 1  # recurrent layers in the encoder and in the decoder
    dropout: float = 0.0  # on embeddings, between layers and before the output projection
    attention: str | None = "bahdanau"  # None (Sutskever/Cho), "bahdanau" or "luong"
    score: str | None = None  # attention score; None = "additive" (Bahdanau) or "general" (Luong)
    attention_units: int | None = None  # additive score MLP width; None = units
    input_feeding: bool = False  # Luong's input feeding (only with attention="luong")
    # Data, training and decoding (the same fields as TransformerConfig's, so every model has one home).
    max_length: int = 128  # pairs longer than this many subwords are dropped when training
    tokens_per_batch: int = 4096  # source (and target) tokens per batch
    learning_rate: float = 1e-3  # Adam with a constant rate, as the RNN papers trained
    clipnorm: float | None = 1.0  # gradient clipping by global norm (RNNs need it)
    label_smoothing: float = 0.1  # the Transformer's eps_ls, so the baselines compare like for like
    beam_size: int = 4  # §6.1's decoding, applied to the baselines too
    length_penalty: float = 0.6
    max_extra_length: int = 50
    checkpoints_to_average: int = 5

    def __post_init__(self):
        check_recipe(self)
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate={self.learning_rate!r} must be positive")
        if self.clipnorm is not None and not self.clipnorm > 0:
            raise ValueError(f"clipnorm={self.clipnorm!r} must be positive or None")
        check_positive_ints(self, ("vocab_size", "embedding_dim", "units"))
        if self.vocab_size < 5:
            raise ValueError(f"vocab_size={self.vocab_size} leaves no room beyond the 4 reserved ids")
        check_rnn_args(self.cell, self.num_layers, self.dropout)
        score, attention_units = resolve_attention_args(
            self.attention, self.score, self.units, self.attention_units, self.input_feeding
        )
        if self.bidirectional and score in ("dot", "scaled_dot", "cosine"):
            raise ValueError(
                f"score={score!r} needs query width == key width, but a bidirectional encoder gives "
                f"keys of width 2 * units = {2 * self.units} and the decoder queries of width units = "
                f"{self.units}; use score='general' or 'additive', or bidirectional=False"
            )

    @property
    def resolved_score(self):
        """The attention score built: `score`, or the attention's default ("additive" / "general"); None without."""
        return resolve_attention_args(self.attention, self.score, self.units, self.attention_units,
                                      self.input_feeding)[0]

    @property
    def resolved_attention_units(self):
        """The additive score's width built: `attention_units`, or `units`; None for other scores."""
        return resolve_attention_args(self.attention, self.score, self.units, self.attention_units,
                                      self.input_feeding)[1]

    def to_dict(self):
        """Fields as a dict, with `score` and `attention_units` resolved to what is built."""
        return {**super().to_dict(), "score": self.resolved_score, "attention_units": self.resolved_attention_units}

    def __eq__(self, other):  # equal when they build the same model (`score=None` == its default)
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(tuple(sorted(self.to_dict().items())))

    # Presets: the papers' settings -----------------------------------------
    @classmethod
    def sutskever(cls, **overrides):
        """Sutskever et al. (2014), §3.4: 4-layer LSTMs, 1000 cells, 1000-dim embeddings, no attention.
        (They also reversed the source; that is a data transform, not a model setting.)"""
        return cls(**{**dict(embedding_dim=1000, units=1000, num_layers=4, attention=None), **overrides})

    @classmethod
    def bahdanau(cls, **overrides):
        """Bahdanau et al. (2015), RNNsearch §A.2: bidirectional GRU encoder, 1000 hidden units,
        620-dim embeddings, additive alignment model with n' = 1000."""
        values = dict(embedding_dim=620, units=1000, cell="gru", bidirectional=True, attention="bahdanau",
                      score="additive", attention_units=1000)
        return cls(**{**values, **overrides})

    @classmethod
    def luong(cls, **overrides):
        """Luong et al. (2015), §4.1: 4-layer LSTMs, 1000 cells, 1000-dim embeddings, dropout 0.2,
        global attention with the "general" score, input feeding."""
        values = dict(embedding_dim=1000, units=1000, num_layers=4, dropout=0.2, attention="luong",
                      score="general", input_feeding=True)
        return cls(**{**values, **overrides})

    @classmethod
    def tiny(cls, **overrides):
        """A small Bahdanau model for tests, notebooks in fast mode and synthetic tasks.

        Its data settings are the tiny Transformer's (1000 subwords, 64-token pairs,
        2048-token batches), so `tfm train --model bahdanau --preset tiny` and
        `train(Seq2SeqConfig.tiny())` are the same run."""
        values = dict(vocab_size=1000, embedding_dim=32, units=64, attention="bahdanau", max_length=64,
                      tokens_per_batch=2048)
        return cls(**{**values, **overrides})


@keras.saving.register_keras_serializable(package="tfm")
class Seq2Seq(keras.Model):
    """RNN encoder-decoder, with or without attention, on token ids.

    Args:
        config: `Seq2SeqConfig` (or its dict).

    Call args:
        inputs: `(source_ids, target_ids)` (or a dict with those keys), int
            `(B, S)` and `(B, T)`, 0 = padding. `target_ids` is the shifted
            target (START + y[:-1]).
        training: bool.
        return_attention_scores: bool. Also return the weights `(B, T, S)`
            (None without attention).

    Returns:
        float32 logits `(B, T, V)` [and attention weights].

    Decoding: `state = model.encode(source_ids)`, then
    `logits, state = model.decode_step(token_ids, state)` per output token.
    `state` is a flat list of batch-first tensors, the same structure at every
    step, so beam search can `ops.repeat`/`ops.take` every entry along axis 0:

        [encoder_outputs (B, S, Dv) float, source_mask (B, S) bool, *decoder_state]

    with `Dv = units` (`2 * units` bidirectional) and `decoder_state` =
    per decoder layer, bottom to top, `h, c` (LSTM) or `h` (GRU), each `(B, U)`,
    then `h~_{t-1}` `(B, U)` with Luong input feeding.
    """

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

    def call(self, inputs, training=None, return_attention_scores=False):
        if isinstance(inputs, dict):
            source_ids, target_ids = inputs["source_ids"], inputs["target_ids"]
        else:
            source_ids, target_ids = inputs
        source_mask = padding_mask(source_ids)  # (B, S)
        encoder_outputs, encoder_state = self.encoder(source_ids, source_mask=source_mask, training=training)
        out = self.decoder(
            target_ids,
            encoder_outputs=encoder_outputs if self.config.attention else None,
            initial_state=self._initial_decoder_state(encoder_state),
            source_mask=source_mask,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        return out

    # Decoding ---------------------------------------------------------------
    def encode(self, source_ids, training=False):
        """`(B, S)` ids -> the decoding state `[encoder_outputs, source_mask, *decoder_state]`."""
        source_mask = padding_mask(source_ids)  # (B, S)
        encoder_outputs, encoder_state = self.encoder(source_ids, source_mask=source_mask, training=training)
        decoder_state = self.decoder.start_state(self._initial_decoder_state(encoder_state))
        return [encoder_outputs, source_mask, *decoder_state]

    def decode_step(self, token_ids, state, return_attention_scores=False):
        """One target token for every sentence: `(B,)` (or `(B, 1)`) ids -> float32 logits `(B, V)`.

        Returns:
            `(logits, new_state)` [+ weights `(B, S)`, None without attention];
            `new_state` has `state`'s structure (the first two entries are passed through).
        """
        encoder_outputs, source_mask, *decoder_state = state
        logits, decoder_state, weights = self.decoder.step(
            token_ids, decoder_state, encoder_outputs if self.config.attention else None, source_mask
        )
        new_state = [encoder_outputs, source_mask, *decoder_state]
        if return_attention_scores:
            return logits, new_state, weights
        return logits, new_state

    def get_config(self):
        return {**keras.layers.Layer.get_config(self), "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(Seq2SeqConfig.from_dict(config.pop("config")), **config)


def build_seq2seq(config):
    """A built `Seq2Seq` for `config` (a `Seq2SeqConfig` or a preset name).

    Returns:
        `keras.Model` taking `(source_ids, target_ids)` int tensors (0 = padding)
        and returning float32 logits `(B, T, vocab_size)`.
    """
    if isinstance(config, str):
        config = Seq2SeqConfig.preset(config)
    model = Seq2Seq(config, name="seq2seq")
    model.build()
    return model
