"""Model names, their config classes and presets: what `tfm train --model M --preset P` builds.

    config = make_config("small", "bahdanau", overrides=["dropout=0.3"])
    model = build_model(config)                 # Transformer or Seq2Seq, by the config's type

Names: "transformer" (`TransformerConfig`) and the RNN baselines "seq2seq" (no
attention), "bahdanau" and "luong" (`Seq2SeqConfig`). `MODELS` is the one list of
them (`tfm train --model` offers it): importing this module starts no TensorFlow; the
builders import the models when they are called.
"""

import dataclasses

from tfm.config.configs import Seq2SeqConfig, TransformerConfig
from tfm.config.rules import apply_overrides

MODELS = ("transformer", "seq2seq", "bahdanau", "luong")
PRESETS = TransformerConfig.PRESETS
_ATTENTION = {"seq2seq": None, "bahdanau": "bahdanau", "luong": "luong"}
_PAPER_PRESET = {"seq2seq": "sutskever", "bahdanau": "bahdanau", "luong": "luong"}


def model_name(config):
    """"transformer", "seq2seq" (no attention), "bahdanau" or "luong", from the config's type.

    Example:
        >>> model_name(Seq2SeqConfig.tiny(attention=None))
        'seq2seq'
    """
    if isinstance(config, TransformerConfig):
        return "transformer"
    if isinstance(config, Seq2SeqConfig):
        return {None: "seq2seq", "bahdanau": "bahdanau", "luong": "luong"}[config.attention]
    raise TypeError(f"expected a TransformerConfig or a Seq2SeqConfig, got {type(config).__name__}")


def config_class(model="transformer"):
    """The config dataclass of a model name.

    Example:
        >>> config_class("luong").__name__
        'Seq2SeqConfig'
    """
    if model not in MODELS:
        raise ValueError(f"model={model!r}: expected one of {list(MODELS)}")
    return TransformerConfig if model == "transformer" else Seq2SeqConfig


def as_config(config):
    """A `TransformerConfig` / `Seq2SeqConfig` as is, or a Transformer preset name's config.

    Example:
        >>> as_config("tiny").num_layers
        2
    """
    if isinstance(config, str):
        return TransformerConfig.preset(config)
    model_name(config)  # type check
    return config


def build_model(config):
    """A built model for a `TransformerConfig`, a `Seq2SeqConfig` or a Transformer preset name (current dtype
    policy): `Transformer.from_preset` or `Seq2Seq.from_preset`, chosen by the config's type.

    Example:
        >>> build_model("tiny").config.d_model
        64
        >>> type(build_model(make_config("tiny", "luong"))).__name__
        'Seq2Seq'
    """
    config = as_config(config)
    if model_name(config) == "transformer":
        from tfm.models.transformer import build_transformer

        return build_transformer(config)
    from tfm.models.seq2seq import build_seq2seq

    return build_seq2seq(config)


def make_config(preset="tiny", model="transformer", overrides=(), vocab_size=None, max_length=None,
                tokens_per_batch=None):
    """The model config of `tfm train --preset P --model M [--set ...] [--vocab-size ...]`.

    The Transformer takes `TransformerConfig.preset(preset)`. The RNN baselines take
    `Seq2SeqConfig`: for base / big the paper's preset (Sutskever, Bahdanau or Luong),
    else a small model (`Seq2SeqConfig.tiny`, widened to 256 units except for tiny)
    with the attention of `model`; their vocabulary, data and averaging
    settings are the Transformer preset's, so every model of a preset sees the same
    data. `overrides` (`--set FIELD=VALUE`) apply to that dataclass, then the explicit
    `vocab_size`, `max_length` and `tokens_per_batch`.

    Example:
        >>> config = make_config("small", "bahdanau", overrides=["dropout=0.3"])
        >>> type(config).__name__, config.units, config.dropout
        ('Seq2SeqConfig', 256, 0.3)
    """
    cls = config_class(model)
    transformer_preset = TransformerConfig.preset(preset)
    if model == "transformer":
        config = transformer_preset
    else:
        shared = {name: getattr(transformer_preset, name) for name in
                  ("vocab_size", "max_length", "tokens_per_batch", "checkpoints_to_average", "beam_size",
                   "length_penalty", "max_extra_length")}
        if preset in ("base", "big"):
            config = cls.preset(_PAPER_PRESET[model], **shared)
        else:  # CPU sizes: tiny as is, the others widened to 256 units
            sizes = {} if preset == "tiny" else dict(embedding_dim=256, units=256)
            config = cls.tiny(attention=_ATTENTION[model], **sizes, **shared)
    config = apply_overrides(config, overrides)
    explicit = {"vocab_size": vocab_size, "max_length": max_length, "tokens_per_batch": tokens_per_batch}
    explicit = {k: v for k, v in explicit.items() if v is not None}
    return dataclasses.replace(config, **explicit) if explicit else config
