"""`from_preset`: the one way in to a built model, as keras-hub's models have it.

    model = tfm.Transformer.from_preset("tiny", vocab_size=100)     # TransformerConfig.tiny(vocab_size=100)
    model = tfm.Seq2Seq.from_preset("bahdanau")                      # Seq2SeqConfig.bahdanau()
    model = tfm.Transformer.from_preset(config)                      # a config object works too

The presets are the config classes' classmethods (`TransformerConfig.PRESETS`, `Seq2SeqConfig.PRESETS`): a
preset is a set of settings, not stored weights (a trained run is a folder: `tfm.runs.load_run`,
`tfm.Translator.from_run`).
"""

import dataclasses


def resolve_config(config_class, preset, overrides):
    """`preset` (a name of `config_class.PRESETS` or a `config_class` instance) with `overrides` applied.

    Args:
        config_class: `TransformerConfig` or `Seq2SeqConfig`.
        preset: str or a `config_class` instance (or its dict, as `get_config` writes it).
        overrides: dict of field -> value (checked as the dataclass checks any value).

    Returns:
        A `config_class` instance.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> resolve_config(TransformerConfig, "tiny", {"num_layers": 1}).num_layers
        1
    """
    if isinstance(preset, str):
        return config_class.preset(preset, **overrides)
    if isinstance(preset, dict):
        preset = config_class.from_dict(preset)
    if not isinstance(preset, config_class):
        raise TypeError(f"preset={preset!r}: expected a name of {sorted(config_class.PRESETS)} or a "
                        f"{config_class.__name__}, got {type(preset).__name__}")
    return dataclasses.replace(preset, **overrides) if overrides else preset


class PresetMixin:
    """Gives a model class `from_preset(preset, **overrides)` and `presets()`; the class names its config
    class in `config_class` and its default layer name in `default_name`."""

    config_class = None
    default_name = None

    @classmethod
    def presets(cls):
        """The preset names `from_preset` takes."""
        return tuple(cls.config_class.PRESETS)

    @classmethod
    def from_preset(cls, preset, name=None, **overrides):
        """A built model (weights initialised, not trained) from a preset name or a config.

        Args:
            preset: str, one of `presets()`, or a config instance.
            name: the model's name (defaults to the class's `default_name`).
            **overrides: config fields to change, e.g. `vocab_size=8000, num_layers=3`.

        Returns:
            The model, built (`model.built` is True), under the current dtype policy.
        """
        config = resolve_config(cls.config_class, preset, overrides)
        model = cls(config, name=name or cls.default_name)
        model.build()
        return model
