"""What every checker shares: calling the reader's function safely, comparing arrays, one sentence.

A checker is `run_checker(name, fn, body)`: `body` calls the reader's `fn` through `call_checked`,
compares what comes back with `compare` (or raises `Mismatch` itself), and returns the sentence of
success; `run_checker` prints the one sentence either way and returns True or False.

Example:
    >>> def check_double(fn):
    ...     def body():
    ...         compare(call_checked(fn, "x = [1, 2]", np.array([1, 2])), [2, 4], "x = [1, 2]")
    ...         return f"correct: {function_name(fn)} doubles"
    ...     return run_checker("check_double", fn, body)
    >>> check_double(lambda x: 2 * x)
    correct: <lambda> doubles.
    True
    >>> check_double(lambda x: x + 1)
    On x = [1, 2], the result at index [1] should be 4, got 3.
    False
"""

import numpy as np
from keras import ops


class Mismatch(Exception):
    """Raised inside a checker's body with the sentence to print: what is wrong, on which input.

    Args:
        message: str. The sentence (`run_checker` capitalises it and adds the full stop).

    Example:
        >>> run_checker("check_nothing", print, lambda: (_ for _ in ()).throw(Mismatch("on input 3, wrong sign")))
        On input 3, wrong sign.
        False
    """


def seeded_rng():
    """A NumPy generator with a fixed seed: the same inputs, so the same sentence, every time a checker runs.

    Takes no arguments.

    Example:
        >>> seeded_rng().integers(0, 100, size=3).tolist() == seeded_rng().integers(0, 100, size=3).tolist()
        True
    """
    return np.random.default_rng(2017)


def function_name(fn):
    """The name a sentence calls the reader's function by: its `__name__`, else its type's name.

    Args:
        fn: any callable.

    Example:
        >>> import functools
        >>> function_name(np.tril), function_name(lambda x: x), function_name(functools.partial(np.tril, k=1))
        ('tril', '<lambda>', 'partial')
    """
    return getattr(fn, "__name__", None) or type(fn).__name__


def call_checked(fn, label, *args, **kwargs):
    """`fn(*args, **kwargs)`, turning any exception into a `Mismatch` that names the input.

    A stub that raises `NotImplementedError` becomes "not done yet: ...".

    Args:
        fn: the reader's function.
        label: str. The input, as the sentence names it ("batch 1, one query").
        *args, **kwargs: passed to `fn`.

    Returns:
        whatever `fn` returns.

    Example:
        >>> call_checked(len, "a list of 3", [1, 2, 3])
        3
        >>> call_checked(lambda x: 1 / 0, "x = 0", 0)
        Traceback (most recent call last):
        ...
        tfm.exercises.checking.Mismatch: <lambda> raised ZeroDivisionError on x = 0 (division by zero)
    """
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise Mismatch(f"not done yet: {function_name(fn)} still raises NotImplementedError; write its body, "
                       f"then run this check again") from None
    except Exception as error:  # noqa: BLE001 - the reader's code may raise anything
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        message = message if len(message) <= 160 else message[:157] + "..."
        raise Mismatch(f"{function_name(fn)} raised {type(error).__name__} on {label}"
                       + (f" ({message})" if message else "")) from None


def run_checker(name, fn, body):
    """Runs `body()` (which raises `Mismatch` or returns the success sentence), prints it, returns the verdict.

    Never raises: an error on tfm's side (an optional package missing) is printed as one sentence too.

    Args:
        name: str. The checker's name, for the sentences about it.
        fn: the reader's function (refused when not callable).
        body: callable `() -> str` doing the checks.

    Returns:
        bool: True when `body` returned, False when it raised.

    Example:
        >>> run_checker("check_answer", abs, lambda: "correct: abs is the answer")
        correct: abs is the answer.
        True
        >>> run_checker("check_answer", 42, lambda: "never called")
        check_answer needs a function, got int.
        False
    """
    if not callable(fn):
        print(f"{name} needs a function, got {type(fn).__name__}.")
        return False
    try:
        with np.errstate(all="ignore"):  # overflow in a reader's float16 shows up as a mismatch, not a warning
            sentence = body()
    except Mismatch as mismatch:
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


def as_array(x, label, what):
    """The reader's output as a NumPy array (bfloat16 and float16 read as float32).

    Args:
        x: a NumPy array, a tensor (TensorFlow, Keras, JAX, PyTorch), a list or a number.
        label: str. The input it was computed on, for the sentence.
        what: str. What it is ("the mask", "the score"), for the sentence.

    Raises:
        Mismatch: `x` does not read as an array of numbers.

    Example:
        >>> as_array(ops.ones((2,), dtype="float16"), "x", "the result").dtype.name
        'float32'
        >>> as_array({"not": "numbers"}, "x = 2", "the result")
        Traceback (most recent call last):
        ...
        tfm.exercises.checking.Mismatch: on x = 2, the result could not be read as an array of numbers (got dict)
    """
    try:
        if hasattr(x, "numpy") or type(x).__module__.split(".")[0] in ("tensorflow", "keras", "jax", "torch"):
            x = ops.convert_to_numpy(x)
        array = np.asarray(x)
    except Exception:  # noqa: BLE001
        raise Mismatch(f"on {label}, {what} could not be read as an array (got {type(x).__name__})") from None
    if array.dtype == object:
        raise Mismatch(f"on {label}, {what} could not be read as an array of numbers (got {type(x).__name__})")
    if array.dtype.kind == "V" or str(array.dtype) in ("bfloat16", "float16"):
        array = array.astype("float32")
    return array


def format_value(value):
    """A number as a sentence writes it: whole numbers without a decimal point, others to 6 digits.

    Args:
        value: a bool or a number.

    Example:
        >>> format_value(3.0), format_value(0.1234567), format_value(np.True_), format_value(-np.inf)
        ('3', '0.123457', 'True', '-inf')
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _index(position):
    return "[" + ", ".join(str(int(i)) for i in position) + "]"


def compare(got, expected, label, what="the result", rtol=1e-5, atol=1e-6, exact=False):
    """Raises `Mismatch` naming the shape or the first index where `got` differs from `expected`.

    Args:
        got: the reader's output (anything `as_array` reads).
        expected: array-like. tfm's reference.
        label: str. The input, for the sentence.
        what: str. What is compared, for the sentence.
        rtol, atol: floats. `np.isclose` tolerances (`-inf` matches `-inf`).
        exact: bool. Compare with `==` (masks, token ids) instead.

    Example:
        >>> compare([1.0, 2.0], np.array([1.0, 2.0]), "x")   # equal: nothing to say
        >>> compare([[1, 0]], np.array([[1, 1]]), "length 2", "the mask", exact=True)
        Traceback (most recent call last):
        ...
        tfm.exercises.checking.Mismatch: on length 2, the mask at index [0, 1] should be 1, got 0
    """
    got = as_array(got, label, what)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise Mismatch(f"on {label}, {what} has the wrong shape: expected {tuple(expected.shape)}, "
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
        raise Mismatch(f"on {label}, {what}{where} should be {format_value(expected[position])}, "
                       f"got {format_value(got[position])}{hint}")


def shape_text(*dims):
    """A shape as a sentence writes it, Python's tuple notation: `(2, 3)`, `(5,)`.

    Args:
        *dims: the sizes.

    Example:
        >>> shape_text(2, 3, 4), shape_text(5)
        ('(2, 3, 4)', '(5,)')
    """
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
