"""The rules every config shares: presets by name, dict/JSON round trips, `--set` parsing.

- `ConfigIO`: `preset(name)`, `to_dict` / `from_dict`, `to_json` / `from_json` for the config dataclasses
  of `tfm.config`, and a model config's `architecture()`.
- `fixed(default)` / `free(default)`: how a model config declares each field, fixed once the model is trained
  (it decides what the weights compute) or free to change on a trained run (dropout, the lengths).
- `parse_overrides`: `--set FIELD=VALUE` typed by a config dataclass's fields (`tfm.config.recipe.apply_overrides`
  applies them to a config or a `Recipe`).

The value checks (`validate_number`, `validate_fraction`, ...) live in `tfm.config.validation`, the RNN
baselines' argument rules (`validate_rnn_args`, `validate_score`, `resolve_attention_args`) in
`tfm.config.rnn_args`.

No TensorFlow here (the CLI reads configs without starting it).
"""

import dataclasses
import difflib
import json
import typing

# A model config field's metadata key: "fixed" (it decides what trained weights compute: a checkpoint is refused by a
# model whose value differs) or "free" (a trained model may change it: regularisation, the lengths it takes).
ON_TRAINED_MODEL = "on_trained_model"


def fixed(default):
    """A model config field fixed once the model is trained: it decides what the weights compute (a size, the
    LayerNorm's place, the vocabulary), so `architecture()` holds it and a checkpoint is refused by a model whose
    value differs.

    Args:
        default: the field's default value (immutable).

    Returns:
        a `dataclasses.field` whose metadata says "fixed".

    Example:
        >>> @dataclasses.dataclass(frozen=True)
        ... class Sizes(ConfigIO):
        ...     width: int = fixed(8)   # decides the weights' shapes
        ...     dropout: float = free(0.1)   # a trained model may train or decode with another
        >>> Sizes(dropout=0.3).architecture(), Sizes.free_fields()
        ({'width': 8}, ('dropout',))
    """
    return dataclasses.field(default=default, metadata={ON_TRAINED_MODEL: "fixed"})


def free(default):
    """A model config field a trained model may change: it does not change what the weights compute (dropout, the
    longest source, the positions beyond it), so `architecture()` leaves it out (`fixed`'s example).

    Args:
        default: the field's default value (immutable).

    Returns:
        a `dataclasses.field` whose metadata says "free".

    Example:
        >>> from tfm.config import TransformerConfig
        >>> "dropout" in TransformerConfig.free_fields(), "d_model" in TransformerConfig.free_fields()
        (True, False)
    """
    return dataclasses.field(default=default, metadata={ON_TRAINED_MODEL: "free"})


class ConfigIO:
    """Presets by name and dict/JSON round trips, shared by the config dataclasses.

    A subclass lists its preset classmethods in `PRESETS`; a model config declares each field with `fixed` or
    `free` (`architecture()` is its fixed fields).

    Example:
        >>> import dataclasses, io
        >>> @dataclasses.dataclass(frozen=True)
        ... class Sizes(ConfigIO):
        ...     PRESETS = ("small",)
        ...     width: int = 8
        ...     @classmethod
        ...     def small(cls, **overrides):
        ...         return cls(**{"width": 4, **overrides})
        >>> Sizes.preset("small"), Sizes.from_dict({"width": 2})
        (Sizes(width=4), Sizes(width=2))
        >>> Sizes.from_json(io.StringIO(Sizes(width=3).to_json()))   # a path, or an open file
        Sizes(width=3)
    """

    PRESETS = ()

    @classmethod
    def preset(cls, name, **overrides):
        """A preset by name, e.g. `TransformerConfig.preset("base")`.

        Args:
            name: str. One of `PRESETS`.
            **overrides: fields that replace the preset's values.

        Example:
            >>> from tfm.config import TransformerConfig
            >>> TransformerConfig.preset("tiny", num_layers=1).num_layers
            1
        """
        if name not in cls.PRESETS:
            raise ValueError(f"preset={name!r}: expected one of {sorted(cls.PRESETS)}")
        return getattr(cls, name)(**overrides)

    def to_dict(self):
        """The fields as a plain dict (what a run's config.json holds).

        Example:
            >>> from tfm.config import TrainingConfig
            >>> TrainingConfig().to_dict()["seed"]
            0
        """
        return dataclasses.asdict(self)

    @classmethod
    def free_fields(cls):
        """The fields declared `free`: a trained model may change them (they do not change what its weights compute).

        Example:
            >>> from tfm.config import Seq2SeqConfig
            >>> Seq2SeqConfig.free_fields()
            ('dropout',)
        """
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get(ON_TRAINED_MODEL) == "free")

    def architecture(self):
        """The fields that decide what trained weights compute: `to_dict()` less the `free` fields.

        Two configs with the same architecture read each other's checkpoints with the same meaning; a
        checkpoint records its model's config (`tfm.runs.weights_record`) and is refused by a model whose
        architecture differs (pre-LN weights in a post-LN model load, with the same shapes, and translate
        nonsense).

        Example:
            >>> from tfm.config import TransformerConfig
            >>> TransformerConfig.tiny(dropout=0.3).architecture() == TransformerConfig.tiny().architecture()
            True
            >>> TransformerConfig.tiny(norm_first=True).architecture()["norm_first"]
            True
        """
        free = self.free_fields()
        return {k: v for k, v in self.to_dict().items() if k not in free}

    @classmethod
    def from_dict(cls, values, ignore_unknown=False):
        """The config from `to_dict()`'s output; fields it lacks take their defaults.

        Args:
            values: dict of field values.
            ignore_unknown: bool. Drop keys that are not fields (older/newer files) instead of raising.

        Example:
            >>> from tfm.config import TrainingConfig
            >>> TrainingConfig.from_dict({"seed": 3, "retired_field": 1}, ignore_unknown=True).seed
            3
        """
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown and not ignore_unknown:
            raise ValueError(f"unknown {cls.__name__} fields {unknown}; known: {sorted(known)}")
        return cls(**{k: v for k, v in values.items() if k in known})

    def to_json(self, path=None):
        """The fields as JSON text, also written to `path` when given.

        Args:
            path: str or None. Also write the text (and a final newline) to this file.

        Returns:
            str: the fields as JSON, keys sorted.

        Example:
            >>> from tfm.config import TrainingConfig
            >>> json.loads(TrainingConfig(seed=2).to_json())["seed"]
            2
        """
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True)
        if path is not None:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    @classmethod
    def from_json(cls, path):
        """The config `to_json` wrote.

        Args:
            path: str, path-like, or an open text file holding `to_json`'s output.

        Example:
            >>> from tfm.config import TrainingConfig
            >>> import io
            >>> TrainingConfig.from_json(io.StringIO('{"seed": 5}')).seed
            5
        """
        if hasattr(path, "read"):
            return cls.from_dict(json.load(path))
        with open(path) as f:
            return cls.from_dict(json.load(f))


# --set FIELD=VALUE ------------------------------------------------------------
def _convert(cls_name, name, kind, text):
    kinds = typing.get_args(kind) or (kind,)
    if type(None) in kinds and text.strip().lower() in ("none", "null"):
        return None
    kind = next(k for k in kinds if k is not type(None))
    if kind is bool:
        low = text.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"--set {name}={text!r}: {cls_name}.{name} is a bool; use true or false")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"--set {name}={text!r}: {cls_name}.{name} is an int, e.g. --set {name}=4") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"--set {name}={text!r}: {cls_name}.{name} is a float, e.g. --set {name}=0.1") from None
    return text


def parse_overrides(cls, assignments):
    """`["dropout=0.2", "key_dim=none"]` -> `{"dropout": 0.2, "key_dim": None}`, typed by the dataclass `cls`.

    Values are converted to the field's type (int, float, bool: true/false, str;
    `none` for optional fields). Later assignments of a field win.

    Args:
        cls: a config dataclass (`TransformerConfig`, `DataConfig`, ...).
        assignments: iterable of "FIELD=VALUE" strings, or None.

    Returns:
        dict: field name -> typed value.

    Raises:
        ValueError: for an item without `=`, an unknown field (naming the closest
            ones and listing all), or a value of the wrong type.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> parse_overrides(TransformerConfig, ["dropout=0.2", "key_dim=none", "norm_first=true"])
        {'dropout': 0.2, 'key_dim': None, 'norm_first': True}
        >>> parse_overrides(TransformerConfig, ["num_layer=3"])
        Traceback (most recent call last):
        ...
        ValueError: --set 'num_layer=3': TransformerConfig has no field 'num_layer' (did you mean num_layers?); ...
    """
    types = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    values = {}
    for item in assignments or ():
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set dropout=0.2")
        name, text = (part.strip() for part in item.split("=", 1))
        if name not in types or name not in names:
            close = difflib.get_close_matches(name, names, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ValueError(f"--set {item!r}: {cls.__name__} has no field {name!r}{hint}; fields: {', '.join(names)}")
        values[name] = _convert(cls.__name__, name, types[name], text)
    return values
