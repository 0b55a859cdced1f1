"""The rules every config shares: presets by name, dict/JSON round trips, value checks, `--set` parsing.

- `ConfigIO`: `preset(name)`, `to_dict` / `from_dict`, `to_json` / `from_json` for the config dataclasses
  of `tfm.config`.
- `validate_number`, `validate_fraction`, `validate_positive_number`, `validate_positive_int`,
  `validate_positive_ints`, `validate_seed`, `validate_field_types`, `validate_recipe`, `validate_rdrop_alpha`,
  `validate_length_penalty`: one error message per bad value, shared by the configs (so the Python API, `--set`
  and a run's config.json), the CLI's argument types and the functions that take the same values (decoding,
  export). A number is finite and in float32's range (it becomes a float32 tensor), an int in int32's.
- `parse_overrides` / `apply_overrides`: `--set FIELD=VALUE` onto any config dataclass, typed by its fields.

No TensorFlow here (the CLI reads configs without starting it). `tfm.config` re-exports all of these.
"""

import dataclasses
import difflib
import json
import math
import numbers
import typing

PREPROCESSORS = ("moses_lc",)  # DataConfig.preprocess names (tfm.data.preprocess; kept here: no TensorFlow)
FLOAT32_MAX = 3.4028234663852886e38  # the largest float32: every float setting becomes a float32 tensor
FLOAT32_TINY = 1.1754943508222875e-38  # the smallest normal float32; a smaller magnitude is no longer exact
INT32_MAX = 2**31 - 1  # ids, lengths, batch and step counts are int32 tensors
MAX_SEED = 2**32 - 1  # keras.utils.set_random_seed seeds NumPy, whose seeds are 32-bit
# GNMT's penalty ((5 + |Y|) / 6)^alpha is computed in float32: alpha 10 stays finite up to 40,000 output subwords,
# where alpha 60 overflows at 100. Published values are 0.2-1.0.
MAX_LENGTH_PENALTY = 10.0

class ConfigIO:
    """Presets by name and dict/JSON round trips, shared by the config dataclasses.

    A subclass lists its preset classmethods in `PRESETS`, and a model config the fields that do not change what
    its trained weights mean in `RECIPE_FIELDS` (`architecture` is the rest).

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
    RECIPE_FIELDS = ()

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

    def architecture(self):
        """The fields that decide what trained weights compute: `to_dict()` less `RECIPE_FIELDS`.

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
        return {k: v for k, v in self.to_dict().items() if k not in self.RECIPE_FIELDS}

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


def _bounds(low, high, open_low, open_high):
    if low is not None and high is not None:
        return f"in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    if low is not None:
        return f"{'>' if open_low else '>='} {low:g}"
    return f"{'<' if open_high else '<='} {high:g}"


def validate_number(name, value, low=None, high=None, *, open_low=False, open_high=False, hint=""):
    """`value` as a float, or ValueError naming `name=value`: a finite number in float32's range, within the bounds.

    Every float setting ends up in a float32 tensor, so a value float32 cannot hold (`1e308`, or a magnitude
    below its smallest normal number such as `1e-40`) is refused as `inf` and `nan` are.

    Args:
        name: str. How the message names the value (a field, or a flag).
        value: int or float (a bool or a string is refused).
        low, high: float or None. The bounds; None = none on that side.
        open_low, open_high: bool. Exclude the bound itself (`> low`, `< high`).
        hint: str. Appended to the message, e.g. what the paper uses.

    Example:
        >>> validate_number("dropout", 0.1, 0, 1, open_high=True)
        0.1
        >>> validate_number("learning_rate_scale", -1, 0, open_low=True)
        Traceback (most recent call last):
        ...
        ValueError: learning_rate_scale=-1 must be > 0
        >>> validate_number("alpha", 1e308)
        Traceback (most recent call last):
        ...
        ValueError: alpha=1e+308 is beyond float32's range (its largest number is 3.4e+38)
    """
    suffix = f" {hint}" if hint else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}={value!r} must be a number{suffix}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name}={value!r} must be a finite number{suffix}")
    if abs(number) > FLOAT32_MAX:
        raise ValueError(f"{name}={value!r} is beyond float32's range (its largest number is {FLOAT32_MAX:.2g})"
                         f"{suffix}")
    if number != 0 and abs(number) < FLOAT32_TINY:
        raise ValueError(f"{name}={value!r} is below float32's smallest normal number ({FLOAT32_TINY:.2g}): it "
                         f"would lose its precision or become 0{suffix}")
    if ((low is not None and (number < low or (open_low and number == low)))
            or (high is not None and (number > high or (open_high and number == high)))):
        raise ValueError(f"{name}={value!r} must be {_bounds(low, high, open_low, open_high)}{suffix}")
    return number


def validate_fraction(name, value):
    """`value` as a float in [0, 1) (a dropout rate, label smoothing, Adam's betas), or ValueError naming it.

    Args:
        name: str. The field's name, for the message.
        value: int or float.

    Example:
        >>> validate_fraction("dropout", 1.2)
        Traceback (most recent call last):
        ...
        ValueError: dropout=1.2 must be in [0, 1)
    """
    return validate_number(name, value, 0, 1, open_high=True)


def validate_positive_number(name, value, hint=""):
    """`value` as a float > 0 that float32 holds (a learning rate, an epsilon), or ValueError naming it.

    Args:
        name: str. The field's name, for the message.
        value: int or float.
        hint: str. Appended to the message.

    Example:
        >>> validate_positive_number("adam_epsilon", 1e-9)
        1e-09
        >>> validate_positive_number("adam_epsilon", 1e-50)
        Traceback (most recent call last):
        ...
        ValueError: adam_epsilon=1e-50 is below float32's smallest normal number (1.2e-38): it would lose ...
    """
    return validate_number(name, value, 0, open_low=True, hint=hint)


def validate_positive_int(name, value):
    """`value` if it is an int in [1, 2^31 - 1] (a size, a length, a count), else ValueError naming it.

    Args:
        name: str. The field's (or flag's) name, for the message.
        value: int (a bool or a float is refused).

    Example:
        >>> validate_positive_int("units", 8)
        8
        >>> validate_positive_int("units", 0)
        Traceback (most recent call last):
        ...
        ValueError: units=0 must be a positive int
        >>> validate_positive_int("max_length", 2**40)
        Traceback (most recent call last):
        ...
        ValueError: max_length=1099511627776 is beyond int32's range (its largest number is 2147483647)
    """
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name}={value!r} must be a positive int")
    if value > INT32_MAX:
        raise ValueError(f"{name}={value!r} is beyond int32's range (its largest number is {INT32_MAX})")
    return value


def validate_positive_ints(config, names):
    """Raises ValueError naming the first of `names` whose value in `config` is not a positive int
    (`validate_positive_int`).

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
        validate_positive_int(name, getattr(config, name))


def validate_seed(seed):
    """`seed` if it is an int in [0, 2^32 - 1] (what `keras.utils.set_random_seed` gives NumPy), else ValueError.

    Args:
        seed: int.

    Example:
        >>> validate_seed(-1)
        Traceback (most recent call last):
        ...
        ValueError: seed=-1 must be an int in [0, 4294967295] (NumPy's seeds)
    """
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed={seed!r} must be an int in [0, {MAX_SEED}] (NumPy's seeds)")
    return seed


def validate_field_types(config):
    """Raises ValueError naming the first field of a config dataclass whose value is not of the field's type.

    A bool field takes only True / False (the string "false" of a hand-edited config.json would read as
    true), an int field only an int, a float field an int or a float, a str field a str; an optional field
    also None. The value rules (`validate_number` ...) then check the range.

    Args:
        config: a config dataclass instance.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> validate_field_types(TransformerConfig.tiny())   # nothing to say
        >>> TransformerConfig.tiny(norm_first="false")
        Traceback (most recent call last):
        ...
        ValueError: norm_first='false' must be a bool (true or false)
    """
    kinds = {bool: "a bool (true or false)", int: "an int", float: "a number", str: "a string"}
    for name, kind in typing.get_type_hints(type(config)).items():
        if name not in {f.name for f in dataclasses.fields(config)}:
            continue
        value = getattr(config, name)
        allowed = typing.get_args(kind) or (kind,)
        if value is None and type(None) in allowed:
            continue
        kind = next((k for k in allowed if k is not type(None)), kind)
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind is float:
            ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        elif kind is str:
            ok = isinstance(value, str)
        else:
            continue
        if not ok:
            raise ValueError(f"{name}={value!r} must be {kinds[kind]}{' or None' if type(None) in allowed else ''}")


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
    if (not isinstance(config.max_extra_length, int) or isinstance(config.max_extra_length, bool)
            or not 0 <= config.max_extra_length <= INT32_MAX):
        raise ValueError(f"max_extra_length={config.max_extra_length!r} must be an int >= 0")
    validate_fraction("label_smoothing", config.label_smoothing)
    validate_length_penalty(config.length_penalty)


def validate_rdrop_alpha(alpha):
    """`alpha` as a float, or ValueError: R-Drop's KL weight is a finite number >= 0 (0 = off).

    Args:
        alpha: int or float.

    Example:
        >>> validate_rdrop_alpha(5)
        5.0
    """
    return validate_number("rdrop_alpha", alpha, 0, hint="(0 = no R-Drop; Liang et al. use 5 on small translation "
                                                          "sets)")


def validate_length_penalty(alpha):
    """`alpha` as a float, or ValueError: GNMT's penalty wants a finite α in [0, 10] (0 = none, §6.1 uses 0.6).

    The penalty `((5 + |Y|) / 6)^α` is computed in float32; above `MAX_LENGTH_PENALTY` (10) it overflows for
    long outputs, and every score becomes 0 or -0.

    Args:
        alpha: a number, or a string that reads as one (a flag's text).

    Example:
        >>> validate_length_penalty("0.6")
        0.6
        >>> validate_length_penalty(float("inf"))
        Traceback (most recent call last):
        ...
        ValueError: alpha=inf: the length penalty must be a finite number in [0, 10] (0 = no penalty; §6.1 uses 0.6)
    """
    rule = f"the length penalty must be a finite number in [0, {MAX_LENGTH_PENALTY:g}] (0 = no penalty; §6.1 uses 0.6)"
    try:
        value = validate_number("alpha", alpha if isinstance(alpha, numbers.Real) else float(alpha))
    except (TypeError, ValueError):
        raise ValueError(f"alpha={alpha!r}: {rule}") from None
    if value < 0.0:
        raise ValueError(f"alpha={alpha!r}: {rule}; a negative alpha favours ever longer outputs")
    if value > MAX_LENGTH_PENALTY:
        raise ValueError(f"alpha={alpha!r}: {rule}; a larger one overflows float32 on long outputs")
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
    validate_fraction("dropout", dropout)


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
