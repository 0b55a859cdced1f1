"""What every checker shares: calling the reader's function safely, comparing arrays, one sentence."""

import numpy as np
from keras import ops


class _Mismatch(Exception):
    """Raised inside a checker with the sentence to print."""


def _rng():
    # A fixed seed: the same inputs, so the same sentence, every time a checker runs.
    return np.random.default_rng(2017)


def _name(fn):
    return getattr(fn, "__name__", None) or type(fn).__name__


def _call(fn, label, *args, **kwargs):
    """`fn(*args, **kwargs)`, turning any exception into a `_Mismatch` that names the input."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise _Mismatch(f"not done yet: {_name(fn)} still raises NotImplementedError; write its body, "
                        f"then run this check again") from None
    except Exception as error:  # noqa: BLE001 - the reader's code may raise anything
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        message = message if len(message) <= 160 else message[:157] + "..."
        raise _Mismatch(f"{_name(fn)} raised {type(error).__name__} on {label}"
                        + (f" ({message})" if message else "")) from None


def _run(name, fn, body):
    """Run `body()` (which raises `_Mismatch` or returns the success sentence); print; return the verdict."""
    if not callable(fn):
        print(f"{name} needs a function, got {type(fn).__name__}.")
        return False
    try:
        with np.errstate(all="ignore"):  # overflow in a reader's float16 shows up as a mismatch, not a warning
            sentence = body()
    except _Mismatch as mismatch:
        print(_sentence(str(mismatch)))
        return False
    except Exception as error:  # noqa: BLE001 - tfm's side failed (e.g. an optional package is missing)
        print(_sentence(f"{name} could not compute tfm's reference ({type(error).__name__}: {error}); "
                        f"your function was not judged"))
        return False
    print(_sentence(sentence))
    return True


def _sentence(text):
    text = text.strip()
    if text.startswith("on "):
        text = "On " + text[3:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _to_numpy(x, label, what):
    """The reader's output as a NumPy array (bfloat16 and float16 read as float32)."""
    try:
        if hasattr(x, "numpy") or type(x).__module__.split(".")[0] in ("tensorflow", "keras", "jax", "torch"):
            x = ops.convert_to_numpy(x)
        array = np.asarray(x)
    except Exception:  # noqa: BLE001
        raise _Mismatch(f"on {label}, {what} could not be read as an array (got {type(x).__name__})") from None
    if array.dtype == object:
        raise _Mismatch(f"on {label}, {what} could not be read as an array of numbers (got {type(x).__name__})")
    if array.dtype.kind == "V" or str(array.dtype) in ("bfloat16", "float16"):
        array = array.astype("float32")
    return array


def _fmt(value):
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _index(position):
    return "[" + ", ".join(str(int(i)) for i in position) + "]"


def _compare(got, expected, label, what="the result", rtol=1e-5, atol=1e-6, exact=False):
    """Raise `_Mismatch` naming the shape or the first index where `got` differs from `expected`."""
    got = _to_numpy(got, label, what)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise _Mismatch(f"on {label}, {what} has the wrong shape: expected {tuple(expected.shape)}, "
                        f"got {tuple(got.shape)}")
    if exact:
        bad = got != expected
    else:
        got64, expected64 = got.astype("float64"), expected.astype("float64")
        bad = ~np.isclose(got64, expected64, rtol=rtol, atol=atol, equal_nan=False)
        # -inf == -inf is a match (np.isclose says so too, but spell it out for +-inf).
        bad &= ~(np.isinf(expected64) & (got64 == expected64))
    if np.any(bad):
        position = tuple(np.argwhere(bad)[0])
        where = f" at index {_index(position)}" if position else ""
        hint = " (not a number: an overflow, or 0 * inf?)" if not exact and np.isnan(got[position]) else ""
        raise _Mismatch(f"on {label}, {what}{where} should be {_fmt(expected[position])}, "
                        f"got {_fmt(got[position])}{hint}")


def _shape(*dims):
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
