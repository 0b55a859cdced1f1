"""`from_preset`: the one way in to a built model, as keras-hub's models have it.

    model = tfm.Transformer.from_preset("tiny", vocab_size=100)     # TransformerConfig.tiny(vocab_size=100)
    model = tfm.Seq2Seq.from_preset("bahdanau")                      # Seq2SeqConfig.bahdanau()
    model = tfm.Transformer.from_preset(config)                      # a config object works too
    model = tfm.Transformer.from_preset(tfm.Recipe.preset("tiny"))   # a recipe: its model part
    model = tfm.Transformer.from_preset("runs/m30k")                 # a run folder: its trained weights

A preset name is a set of settings, not stored weights (the config classes' classmethods,
`TransformerConfig.PRESETS`, `Seq2SeqConfig.PRESETS`); a trained model is a run folder, whose weights
`tfm.runs.weights_path` chooses (the averaged ones when present, else the latest: the rule every command follows).
"""

import dataclasses
import logging
import os

from tfm.config import Recipe, Seq2SeqConfig, TransformerConfig

logger = logging.getLogger("tfm.models")


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
        if isinstance(preset, (TransformerConfig, Seq2SeqConfig)):  # another family's: say who builds it
            raise TypeError(f"preset: got a {type(preset).__name__}, this class takes a {config_class.__name__}; "
                            "tfm.models.model_class(config) is the class that builds it")
        got = repr(preset) if len(repr(preset)) <= 40 else f"a {type(preset).__name__}"
        raise TypeError(f"preset: expected a name of {sorted(config_class.PRESETS)}, a {config_class.__name__}, "
                        f"its Recipe or a run folder; got {got}")
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
    def from_preset(cls, preset, name=None, checkpoint="auto", **overrides):
        """A built model from a preset name or a config (weights initialised), or a run folder (trained weights).

        Args:
            preset: str, one of `presets()`; a config instance (or its dict), or a `Recipe` (its `.model`); or a
                run folder made by `tfm train` (a path), whose model is built as it was trained and given its
                weights.
            name: the model's name (defaults to the class's `default_name`).
            checkpoint: a run folder's weights (`tfm.runs.weights_path`): "auto" = the averaged ones when
                present, else the latest epoch's (which one is logged); also "latest", "averaged", an epoch
                number or a file.
            **overrides: config fields to change, e.g. `vocab_size=8000, num_layers=3` (not with a run folder).

        Returns:
            The model, built (`model.built` is True), under the current dtype policy.

        Raises:
            ValueError: an unknown preset name, or a bad value (named).
            TypeError: a config, recipe or run folder of another kind of model.
            FileNotFoundError: a path that is not a run folder, or no such checkpoint.
            NotADirectoryError: a file, which is neither a preset name nor a run folder.

        Example:
            >>> from tfm.models import Transformer
            >>> from tfm.config import Recipe
            >>> Transformer.from_preset(Recipe.preset("tiny", num_layers=1)).config.num_layers   # its .model
            1
            >>> path = os.path.join(tempfile.mkdtemp(), "afile.txt")
            >>> with open(path, "w") as f:
            ...     _ = f.write("hi")
            >>> Transformer.from_preset(path)
            Traceback (most recent call last):
            NotADirectoryError: from_preset('...afile.txt'): a file, not a preset name (...) or a run folder ...
        """
        if isinstance(preset, Recipe):
            preset = preset.model
        if isinstance(preset, (str, os.PathLike)) and os.path.isfile(preset) and preset not in cls.presets():
            raise NotADirectoryError(f"from_preset({os.fspath(preset)!r}): a file, not a preset name ("
                                     f"{', '.join(cls.presets())}) or a run folder (the folder tfm train made, which "
                                     "holds config.json)")
        if _is_path(preset) and not (isinstance(preset, str) and preset in cls.config_class.PRESETS):
            if overrides:
                raise ValueError(f"from_preset({os.fspath(preset)!r}, {', '.join(sorted(overrides))}=...): a run "
                                 "folder's model is built as it was trained; change a config, not a run")
            return cls._from_run(os.fspath(preset), name, checkpoint)
        config = resolve_config(cls.config_class, preset, overrides)
        model = cls(config, name=name or cls.default_name)
        model.build()
        return model

    @classmethod
    def _from_run(cls, run_dir, name, checkpoint):
        from tfm import runs
        from tfm.config import Recipe

        run_dir = os.path.abspath(run_dir)
        recipe = Recipe.from_record(runs.read_run_config(run_dir))
        if not isinstance(recipe.model, cls.config_class):
            raise TypeError(f"{run_dir} holds a {recipe.model_name} model ({type(recipe.model).__name__}), not a "
                            f"{cls.__name__}: load it with the class its config.json names")
        path = runs.weights_path(run_dir, checkpoint)
        model = cls.from_preset(recipe.model, name=name)
        runs.load_weights(model, path, config_file=os.path.join(run_dir, runs.CONFIG_FILE),
                          remedy="or choose another checkpoint with --checkpoint (latest, an epoch number or a file)")
        logger.info("%s: weights of %s", run_dir, path)
        return model


def _is_path(preset):
    """A run folder given as a path: a path-like, or a string that names a folder or holds a separator."""
    if isinstance(preset, os.PathLike):
        return True
    return isinstance(preset, str) and (os.sep in preset or "/" in preset or os.path.isdir(preset))
