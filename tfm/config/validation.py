"""The value rules: one error message per bad value, wherever the value comes from.

- `validate_number`, `validate_fraction`, `validate_positive_number`, `validate_positive_int`,
  `validate_positive_ints`, `validate_seed`, `validate_rdrop_alpha`, `validate_length_penalty`: one value each,
  shared by the configs (so the Python API, `--set` and a run's config.json), the CLI's argument types and the
  functions that take the same values (decoding, export). A number is finite and in float32's range (it becomes
  a float32 tensor), an int in int32's.
- `validate_field_types`: every field of a config is of its type.
- The limits they check against (`FLOAT32_MAX`, `INT32_MAX`, `MAX_SEED`, `MAX_LENGTH_PENALTY`, ...) and the names
  `DataConfig.preprocess` takes (`PREPROCESSORS`).

No TensorFlow here (the CLI checks its flags without starting it). `tfm.config` exports these.
"""

import dataclasses
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
    """`config`, or ValueError naming the first of `names` whose value in it is not a positive int
    (`validate_positive_int`).

    Args:
        config: any object with the attributes `names`.
        names: iterable of str.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> import types
        >>> validate_positive_ints(TransformerConfig.tiny(), ("num_layers", "d_model")).d_model   # the config
        64
        >>> validate_positive_ints(types.SimpleNamespace(units=0), ("units",))
        Traceback (most recent call last):
        ...
        ValueError: units=0 must be a positive int
    """
    for name in names:
        validate_positive_int(name, getattr(config, name))
    return config


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
    """`config`, or ValueError naming the first field of the config dataclass whose value is not of its type.

    A bool field takes only True / False (the string "false" of a hand-edited config.json would read as
    true), an int field only an int, a float field an int or a float, a str field a str; an optional field
    also None. The value rules (`validate_number` ...) then check the range.

    Args:
        config: a config dataclass instance.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> validate_field_types(TransformerConfig.tiny()).d_model   # the config
        64
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
    return config


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
