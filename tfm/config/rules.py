"""The rules every config shares: presets by name, dict/JSON round trips, value checks, `--set` parsing.

- `ConfigIO`: `preset(name)`, `to_dict` / `from_dict`, `to_json` / `from_json` for the config dataclasses
  of `tfm.config`.
- `validate_positive_ints`, `validate_recipe`, `validate_rdrop_alpha`, `validate_length_penalty`: one error message per
  bad value, shared by the configs and the functions that take the same values (decoding, export).
- `parse_overrides` / `apply_overrides`: `--set FIELD=VALUE` onto any config dataclass, typed by its fields.

No TensorFlow here (the CLI reads configs without starting it). `tfm.config` re-exports all of these.
"""

import dataclasses
import difflib
import json
import typing

PREPROCESSORS = ("moses_lc",)  # DataConfig.preprocess names (tfm.data.preprocess; kept here: no TensorFlow)

class ConfigIO:
    """Presets by name and dict/JSON round trips, shared by the config dataclasses.

    A subclass lists its preset classmethods in `PRESETS`.

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


def validate_positive_ints(config, names):
    """Raises ValueError naming the first of `names` whose value in `config` is not a positive int.

    Args:
        config: any object with the attributes `names`.
        names: iterable of str.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> import types
        >>> validate_positive_ints(TransformerConfig.tiny(), ("num_layers", "d_model"))   # nothing to say
        >>> validate_positive_ints(types.SimpleNamespace(units=0), ("units",))
        Traceback (most recent call last):
        ...
        ValueError: units=0 must be a positive int
    """
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name}={value!r} must be a positive int")


def validate_recipe(config):
    """Validates the data, training and decoding fields both model configs carry.

    `max_length`, `tokens_per_batch`, `label_smoothing`, `beam_size`,
    `length_penalty` (α), `max_extra_length` and `checkpoints_to_average`.

    Args:
        config: a `TransformerConfig` or `Seq2SeqConfig` (anything with those fields).

    Raises:
        ValueError: naming the field and its bad value.

    Example:
        >>> import types
        >>> recipe = dict(max_length=64, tokens_per_batch=2048, beam_size=4, checkpoints_to_average=5,
        ...               max_extra_length=50, label_smoothing=0.1, length_penalty=0.6)
        >>> validate_recipe(types.SimpleNamespace(**recipe))
        >>> validate_recipe(types.SimpleNamespace(**{**recipe, "label_smoothing": 1.0}))
        Traceback (most recent call last):
        ...
        ValueError: label_smoothing=1.0 must be in [0, 1)
    """
    validate_positive_ints(config, ("max_length", "tokens_per_batch", "beam_size", "checkpoints_to_average"))
    if not isinstance(config.max_extra_length, int) or config.max_extra_length < 0:
        raise ValueError(f"max_extra_length={config.max_extra_length!r} must be an int >= 0")
    if not 0.0 <= config.label_smoothing < 1.0:
        raise ValueError(f"label_smoothing={config.label_smoothing} must be in [0, 1)")
    validate_length_penalty(config.length_penalty)


def validate_rdrop_alpha(alpha):
    """`alpha` as a float, or ValueError: R-Drop's KL weight is a number >= 0 (0 = off).

    Args:
        alpha: int or float.

    Example:
        >>> validate_rdrop_alpha(5)
        5.0
    """
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not float(alpha) >= 0.0:
        raise ValueError(f"rdrop_alpha={alpha!r} must be a number >= 0 (0 = no R-Drop; Liang et al. use 5 "
                         "on small translation sets)")
    return float(alpha)


def validate_length_penalty(alpha):
    """`alpha` as a float, or ValueError: GNMT's penalty wants α >= 0 (0 = none, §6.1 uses 0.6).

    Args:
        alpha: a number, or a string that reads as one.

    Example:
        >>> validate_length_penalty("0.6")
        0.6
    """
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha={alpha!r}: the length penalty must be a number >= 0 (§6.1 uses 0.6)") from None
    if not value >= 0.0:  # also refuses nan
        raise ValueError(f"alpha={alpha!r}: the length penalty must be >= 0 (0 = no penalty; §6.1 uses 0.6); "
                         "a negative alpha favours ever longer outputs")
    return value


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


def apply_overrides(config, assignments):
    """`dataclasses.replace(config, **parse_overrides(type(config), assignments))`; the config validates.

    Args:
        config: a config dataclass instance.
        assignments: iterable of "FIELD=VALUE" strings, or None.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> apply_overrides(TransformerConfig.base(), ["num_heads=16", "d_model=1024"]).head_key_dim
        64
    """
    return dataclasses.replace(config, **parse_overrides(type(config), assignments))


# The RNN baselines' argument rules: here, not in the layers, so a Seq2SeqConfig is checked without TensorFlow.
CELLS = ("lstm", "gru")


def validate_rnn_args(cell, num_layers, dropout):
    """Validate the arguments shared by `RNNEncoder` and `RNNDecoder`.

    Args:
        cell: str. "lstm" or "gru".
        num_layers: int >= 1.
        dropout: float in [0, 1).

    Example:
        >>> validate_rnn_args("gru", 2, 0.1)
        >>> validate_rnn_args("rnn", 1, 0.0)
        Traceback (most recent call last):
        ...
        ValueError: cell='rnn': expected one of ['lstm', 'gru']
    """
    if cell not in CELLS:
        raise ValueError(f"cell={cell!r}: expected one of {list(CELLS)}")
    if not isinstance(num_layers, int) or isinstance(num_layers, bool) or num_layers < 1:
        raise ValueError(f"num_layers={num_layers!r} must be an int >= 1")
    if not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout={dropout} must be in [0, 1)")


SCORES = ("cosine", "additive", "dot", "general", "scaled_dot")
# Scores that compare queries and keys directly, so both need the same width.
SAME_WIDTH_SCORES = ("cosine", "dot", "scaled_dot")


def validate_score(score, units=None):
    """Validate a `score` name and its `units`; raise `ValueError` naming the bad value.

    Args:
        score: str. One of `SCORES`.
        units: int or None. The additive score's width (needed by it, refused by the others).

    Example:
        >>> validate_score("additive", units=16)
        >>> validate_score("dot", units=16)
        Traceback (most recent call last):
        ...
        ValueError: units=16 is only used by score='additive', not score='dot'
    """
    if score not in SCORES:
        raise ValueError(f"score={score!r}: expected one of {list(SCORES)}")
    if score == "additive":
        if not isinstance(units, int) or isinstance(units, bool) or units <= 0:
            raise ValueError(f"score='additive' needs units (a positive int), got units={units!r}")
    elif units is not None:
        raise ValueError(f"units={units!r} is only used by score='additive', not score={score!r}")


ATTENTIONS = (None, "bahdanau", "luong")
DEFAULT_SCORES = {"bahdanau": "additive", "luong": "general"}


def resolve_attention_args(attention, score=None, units=None, attention_units=None, input_feeding=False):
    """Validate the attention arguments and fill in the paper defaults.

    Args:
        attention: None, "bahdanau" or "luong".
        score: str or None. The score function; None = the attention's default.
        units: int. The recurrent width, the additive score's default width.
        attention_units: int or None. The additive score's width.
        input_feeding: bool. Luong's input feeding (only with "luong").

    Returns:
        `(score, attention_units)`: `score` defaults to `"additive"` for Bahdanau
        and `"general"` for Luong; `attention_units` to `units` for the additive
        score and None otherwise. Both None without attention.

    Example:
        >>> resolve_attention_args("bahdanau", units=64), resolve_attention_args("luong", units=64)
        (('additive', 64), ('general', None))
    """
    if attention not in ATTENTIONS:
        raise ValueError(f"attention={attention!r}: expected one of {list(ATTENTIONS)}")
    if input_feeding and attention != "luong":
        raise ValueError(f"input_feeding=True needs attention='luong', got attention={attention!r}")
    if attention is None:
        if score is not None or attention_units is not None:
            raise ValueError(
                f"score={score!r} / attention_units={attention_units!r} given but attention=None; "
                "choose attention='bahdanau' or 'luong'"
            )
        return None, None
    score = DEFAULT_SCORES[attention] if score is None else score
    if score == "additive" and attention_units is None:
        attention_units = units
    validate_score(score, attention_units)
    return score, attention_units
