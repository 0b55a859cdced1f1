"""The models' configs, their architecture only: what `model.get_config()` needs to rebuild the layers.

- `TransformerConfig`: the Transformer's sizes (§3). Presets `base()` and `big()` are the paper's (Vaswani et
  al., 2017, Table 3 rows "base" and "big"); `tiny()` and `small()` train on 2 CPU cores. Table 3 variants are
  `dataclasses.replace(TransformerConfig.base(), num_heads=1, key_dim=512, ...)`.
- `Seq2SeqConfig`: the RNN baselines' counterpart (Sutskever, Bahdanau and Luong presets).

How a model is trained (§5) and decodes (§6.1), and on which data, are the other parts of a `Recipe`
(`tfm.config.recipe`; `TrainingConfig`, `DecodingConfig`, `DataConfig` in `tfm.config.run_settings`).
No TensorFlow here: the CLI reads these without starting it.
"""

import dataclasses

from tfm.config.rnn_args import resolve_attention_args, validate_rnn_args
from tfm.config.rules import ConfigIO, fixed, free
from tfm.config.validation import (
    validate_field_types,
    validate_fraction,
    validate_positive_int,
    validate_positive_ints,
    validate_positive_number,
)

# §6.1: "maximum output length during inference to input length + 50". The one value of that rule: a Transformer's
# position table keeps this room beyond `max_length` (`extra_positions`), and a recipe's decoding limit
# (`DecodingConfig.max_extra_length`) is the model's room unless set lower; a model without a position table
# (`Seq2Seq`) decodes to its input length + this.
DEFAULT_MAX_EXTRA_LENGTH = 50


@dataclasses.dataclass(frozen=True)
class TransformerConfig(ConfigIO):
    """The architecture of a `Transformer` (§3); validated on creation, frozen.

    The defaults are the paper's base model (Vaswani et al., 2017): `num_layers` N = 6 identical layers per
    stack, `d_model` = 512, `num_heads` h = 8 with `d_k = d_v = d_model / h`, `d_ff` = 2048, post-LN residual
    blocks, sinusoidal positions (§3.5), one embedding matrix shared with the pre-softmax projection (§3.4),
    dropout 0.1 (§5.4) and a ~37,000-subword vocabulary (§5.1). Table 3's rows are presets (`base()`,
    `big()`) and `dataclasses.replace` variants of them; `tiny()`, `small()`, `m30k()`, `m30k_small()`,
    `parse()` and `parse_small()` are this project's sizes for CPUs, Multi30k and parsing (§6.3). The
    optimiser, batches and decoding of a preset are the other parts of its `Recipe` (`Recipe.preset("base")`).
    `tfm.config.fidelity` sets every field beside the paper's value.

    Args:
        num_layers, d_model, num_heads, d_ff, key_dim, value_dim: the sizes (§3.1-§3.3); `key_dim` /
            `value_dim` None = `d_model / num_heads` (`head_key_dim`, `head_value_dim` are what is built).
        dropout, attention_dropout, activation_dropout, token_dropout: regularisation inside the model
            (§5.4; the ones the paper does not use default to 0).
        vocab_size, share_embeddings, norm_first, positional: the embeddings, the residual blocks'
            LayerNorm placement and the positions (§3.4, §3.5, Table 3 row E).
        max_length, extra_positions: the longest source the model takes, and the positions beyond it that
            an output may use (the position table has `max_length + extra_positions + 1` rows): §6.1's output
            limit, input length + `extra_positions`, which a `Recipe`'s decoding part follows.
        layer_norm_epsilon: the LayerNorms' epsilon.

    Each field's comment in the source says what it is, and its declaration whether a trained model may change it
    (`free`: dropout, the lengths) or not (`fixed`: what the weights compute, `architecture()`); `ValueError` names
    a bad value.

    Example:
        >>> base = TransformerConfig.base()
        >>> base.num_layers, base.d_model, base.num_heads, base.head_key_dim, base.d_ff
        (6, 512, 8, 64, 2048)
        >>> TransformerConfig.big().d_model, TransformerConfig.big().dropout
        (1024, 0.3)
        >>> row_a = dataclasses.replace(base, num_heads=1, key_dim=512, value_dim=512)   # Table 3 row (A)
        >>> TransformerConfig.from_dict(row_a.to_dict()) == row_a
        True
        >>> TransformerConfig.tiny(num_heads=3)
        Traceback (most recent call last):
        ...
        ValueError: d_model=64 is not divisible by num_heads=3; choose sizes that divide or set key_dim and ...
    """

    num_layers: int = fixed(6)  # N: identical layers in the encoder and in the decoder
    d_model: int = fixed(512)  # width of every sub-layer output and of the embeddings
    num_heads: int = fixed(8)  # h: parallel attention heads
    d_ff: int = fixed(2048)  # inner width of the position-wise feed-forward network
    key_dim: int | None = fixed(None)  # d_k per head; None = d_model / num_heads
    value_dim: int | None = fixed(None)  # d_v per head; None = d_model / num_heads
    dropout: float = free(0.1)  # P_drop on sub-layer outputs and embedding sums (§5.4)
    attention_dropout: float = free(0.0)  # dropout on attention weights (not in the paper)
    activation_dropout: float = free(0.0)  # on the FFN's inner activations (tensor2tensor's relu_dropout; not in paper)
    token_dropout: float = free(0.0)  # input tokens replaced by UNK while training (word dropout; not in the paper)
    vocab_size: int = fixed(37000)  # shared source/target subword vocabulary (§5.1, BPE ~37000)
    share_embeddings: bool = fixed(True)  # one matrix for both embeddings and the pre-softmax projection (§3.4)
    norm_first: bool = fixed(False)  # pre-LN instead of the paper's post-LN LayerNorm(x + Sublayer(x))
    positional: str = fixed("sinusoidal")  # "sinusoidal" (§3.5) or "learned" (Table 3 row E)
    max_length: int = free(256)  # longest source the model takes (longer ones are truncated when decoding)
    extra_positions: int = free(DEFAULT_MAX_EXTRA_LENGTH)  # room beyond max_length: outputs up to input length + it
    layer_norm_epsilon: float = fixed(1e-6)  # LayerNorm epsilon (tensor2tensor's value)

    PRESETS = ("tiny", "small", "base", "big", "parse", "parse_small", "m30k", "m30k_small")

    def __post_init__(self):
        validate_field_types(self)
        validate_positive_ints(self, ("num_layers", "d_model", "num_heads", "d_ff", "vocab_size", "max_length"))
        for name in ("key_dim", "value_dim"):
            if getattr(self, name) is not None:
                validate_positive_int(name, getattr(self, name))
        if (self.key_dim is None or self.value_dim is None) and self.d_model % self.num_heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}; "
                "choose sizes that divide or set key_dim and value_dim explicitly"
            )
        for name in ("dropout", "attention_dropout", "activation_dropout", "token_dropout"):
            validate_fraction(name, getattr(self, name))
        if not isinstance(self.extra_positions, int) or self.extra_positions < 0:
            raise ValueError(f"extra_positions={self.extra_positions!r} must be an int >= 0")
        validate_positive_number("layer_norm_epsilon", self.layer_norm_epsilon)
        if self.positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional={self.positional!r}: expected 'sinusoidal' or 'learned'")
        if self.vocab_size < 5:
            raise ValueError(f"vocab_size={self.vocab_size} leaves no room beyond the 4 reserved ids")

    @property
    def head_key_dim(self):
        """d_k actually used."""
        return self.key_dim or self.d_model // self.num_heads

    @property
    def head_value_dim(self):
        """d_v actually used."""
        return self.value_dim or self.d_model // self.num_heads

    # Presets (the model part of `tfm.config.Recipe.preset`) -----------------
    @classmethod
    def base(cls, **overrides):
        """Transformer (base model), §5 and Table 3 row "base": 65M parameters."""
        return cls(**overrides)

    @classmethod
    def big(cls, **overrides):
        """Transformer (big), Table 3 row "big": 213M parameters."""
        return cls(**{**dict(d_model=1024, d_ff=4096, num_heads=16, dropout=0.3), **overrides})

    @classmethod
    def small(cls, **overrides):
        """A 3+3-layer, 256-wide model that trains on Multi30k on a CPU."""
        return cls(**{**dict(num_layers=3, d_model=256, num_heads=4, d_ff=1024, vocab_size=8000, max_length=128),
                      **overrides})

    @classmethod
    def parse(cls, **overrides):
        """§6.3 (Table 4), English constituency parsing, WSJ only: 4 layers, d_model 1024, a 16K vocabulary,
        room for outputs up to input length + 300. The paper tuned attention and residual dropout on
        section 22 without publishing the values; 0.3 / 0.1 here. A GPU-sized model."""
        values = dict(num_layers=4, d_model=1024, num_heads=16, d_ff=4096, dropout=0.3, attention_dropout=0.1,
                      vocab_size=16000, max_length=256, extra_positions=300)
        return cls(**{**values, **overrides})

    @classmethod
    def parse_small(cls, **overrides):
        """`parse` sized for 2 CPU cores and the 3,900-sentence Penn Treebank sample: d_model 256, a 2K
        vocabulary and pre-LN. Why these values: docs/results.md ("Measurements quoted by the code",
        "Parsing")."""
        values = dict(num_layers=4, d_model=256, num_heads=4, d_ff=1024, dropout=0.3, attention_dropout=0.1,
                      vocab_size=2000, max_length=256, extra_positions=300, norm_first=True)
        return cls(**{**values, **overrides})

    @classmethod
    def m30k(cls, **overrides):
        """Multi30k en-de on 2 CPU cores, after Wu et al. (2021)'s text-only Transformer (fairseq):
        4+4 layers, d_model 128, FFN 256, 4 heads, all embeddings shared, dropout 0.3, ~10k joint subwords.
        Differs: pre-LN (stable at the recipe's rate; the anchor is post-LN)."""
        values = dict(num_layers=4, d_model=128, num_heads=4, d_ff=256, dropout=0.3, vocab_size=10000,
                      max_length=128, norm_first=True)
        return cls(**{**values, **overrides})

    @classmethod
    def m30k_small(cls, **overrides):
        """Multi30k en-de in 90 minutes on 2 CPU cores, on the anchor's footing: the small preset (3+3
        layers, d_model 256, FFN 1024, 4 heads, 8k joint subwords), pre-LN, dropout 0.3."""
        return cls.small(**{**dict(norm_first=True, dropout=0.3), **overrides})

    @classmethod
    def tiny(cls, **overrides):
        """A 2+2-layer, 64-wide model for tests, notebooks in fast mode and `make demo`."""
        values = dict(num_layers=2, d_model=64, num_heads=4, d_ff=256, vocab_size=1000, max_length=64, dropout=0.1)
        return cls(**{**values, **overrides})


@dataclasses.dataclass(frozen=True, eq=False)
class Seq2SeqConfig(ConfigIO):
    """Every size of a `Seq2Seq` model; validated on creation.

    Presets: `sutskever()`, `bahdanau()`, `luong()` (the papers' settings) and `tiny()`;
    `dataclasses.replace` gives variants. `score` and `attention_units` keep what was
    given (None = the attention's default), so a variant re-derives them: `--set units=16`
    widens the additive score too, `--set attention=luong` gets Luong's "general" score.
    `resolved_score` / `resolved_attention_units` are what gets built, and what `to_dict`
    writes (so a saved config says what was built).

    Args:
        vocab_size, embedding_dim, units, cell, bidirectional, num_layers, dropout: the recurrent
            encoder and decoder (V, E, U; "lstm" or "gru").
        attention, score, attention_units, input_feeding: None (Sutskever / Cho), "bahdanau" or "luong",
            the score function and its width (None = the attention's default), Luong's input feeding.

    The architecture only, as `TransformerConfig`: how a baseline trains (Adam at a constant rate with
    gradient clipping) is its `Recipe`'s `TrainingConfig` (`tfm.config.Recipe.preset("bahdanau")`). Every field
    but `dropout` is `fixed` (it decides what the trained weights compute).

    Example:
        >>> config = Seq2SeqConfig.bahdanau()
        >>> config.cell, config.bidirectional, config.resolved_score, config.resolved_attention_units
        ('gru', True, 'additive', 1000)
        >>> Seq2SeqConfig.tiny(attention="luong").resolved_score   # Luong's default score
        'general'
        >>> Seq2SeqConfig(score=None) == Seq2SeqConfig(score="additive")   # equal when they build the same model
        True
    """

    PRESETS = ("sutskever", "bahdanau", "luong", "tiny")

    vocab_size: int = fixed(8000)  # V: shared source/target vocabulary, the 4 reserved ids included
    embedding_dim: int = fixed(256)  # E: source and target embedding width
    units: int = fixed(256)  # U: hidden width of every recurrent layer (per direction in the encoder)
    cell: str = fixed("lstm")  # "lstm" or "gru"
    bidirectional: bool = fixed(False)  # bidirectional encoder; its final states are bridged to U by a tanh layer
    num_layers: int = fixed(1)  # recurrent layers in the encoder and in the decoder
    dropout: float = free(0.0)  # on embeddings, between layers and before the output projection
    attention: str | None = fixed("bahdanau")  # None (Sutskever/Cho), "bahdanau" or "luong"
    score: str | None = fixed(None)  # attention score; None = "additive" (Bahdanau) or "general" (Luong)
    attention_units: int | None = fixed(None)  # additive score MLP width; None = units
    input_feeding: bool = fixed(False)  # Luong's input feeding (only with attention="luong")

    def __post_init__(self):
        validate_field_types(self)
        validate_positive_ints(self, ("vocab_size", "embedding_dim", "units"))
        if self.vocab_size < 5:
            raise ValueError(f"vocab_size={self.vocab_size} leaves no room beyond the 4 reserved ids")
        validate_rnn_args(self.cell, self.num_layers, self.dropout)
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
        """A small Bahdanau model for tests, notebooks in fast mode and synthetic tasks (1000 subwords, the
        tiny Transformer's vocabulary: `Recipe.preset("tiny", model="bahdanau")` trains it on the tiny recipe)."""
        values = dict(vocab_size=1000, embedding_dim=32, units=64, attention="bahdanau")
        return cls(**{**values, **overrides})
