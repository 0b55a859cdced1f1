"""What every checker shares: calling the reader's function safely (in time), comparing arrays, and saying one
sentence in the reader's language (the languages and `Messages` tables are `tfm.exercises.messages`).

A checker is `run_checker(name, fn, body, lang)`: `body` calls the reader's `fn` through `call_checked`,
compares what comes back with `compare` (or raises `Mismatch` itself), and returns the sentence of
success; `run_checker` prints the one sentence either way and returns True or False.

Every sentence exists in each language of `LANGUAGES` ("en", "ko"). A checker keeps its own sentences in one
`Messages` table (templates keyed by language, the same keys and fields in each) and writes its labels ("on
length=2") with it; the sentences the helpers here write (a wrong shape, a wrong value, an exception) are in
`SENTENCES`, written in the language `run_checker` was given: it sets it for the body, as it sets
`np.errstate`. The checks themselves never depend on the language. `validate_language(None)` reads
`$TFM_LANG`, so a Korean notebook, whose code cells are the English ones, gets Korean sentences.

A value the reader's function returns that is not what the contract says (text where a mask is due, a pair
whose length cannot be read) is named as the reader's, on the input it came back from; only an error inside
tfm's reference is tfm's. Each call of the reader's function has `time_limit()` seconds (60, or
`$TFM_CHECK_SECONDS`): one that never returns is reported and the check stops waiting for it.

Example:
    >>> DOUBLE = Messages(en={"label": "x = [1, 2]", "correct": "correct: {fn} doubles"},
    ...                   ko={"label": "x = [1, 2]", "correct": "정답입니다: {fn} 함수가 두 배를 돌려줍니다"})
    >>> def check_double(fn, *, lang=None):
    ...     lang = validate_language(lang)
    ...     say = DOUBLE.sentences(lang)
    ...     def body():
    ...         compare(call_checked(fn, say("label"), np.array([1, 2])), [2, 4], say("label"))
    ...         return say("correct", fn=function_name(fn))
    ...     return run_checker("check_double", fn, body, lang)
    >>> check_double(lambda x: 2 * x)
    correct: <lambda> doubles.
    True
    >>> check_double(lambda x: x + 1)
    On x = [1, 2], the result at index [1] should be 4, got 3.
    False
    >>> check_double(lambda x: x + 1, lang="ko")
    x = [1, 2]에서 결과의 인덱스 [1] 값은 4이어야 하는데 3입니다.
    False
"""

import contextvars
import os
import threading

import numpy as np
from keras import ops

from tfm.exercises.messages import Messages, validate_language

TIME_LIMIT_VARIABLE = "TFM_CHECK_SECONDS"
DEFAULT_TIME_LIMIT = 60.0  # seconds a checker waits for one call of the reader's function


def time_limit():
    """The seconds a checker waits for each call of the reader's function: `$TFM_CHECK_SECONDS`, else 60.

    A function that has not returned by then is reported ("the check stopped waiting") and the check ends
    with False. Python cannot stop a function from outside, so the reader's call runs on a thread of its
    own and may go on in the background; a larger `$TFM_CHECK_SECONDS` gives a slow machine more time.
    Takes no arguments.

    Returns:
        float: the limit in seconds, > 0.

    Raises:
        ValueError: `$TFM_CHECK_SECONDS` is set but not a positive number; the message names the value.

    Example:
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"TFM_CHECK_SECONDS": "2.5"}):
        ...     time_limit()
        2.5
        >>> with mock.patch.dict(os.environ, {"TFM_CHECK_SECONDS": "0"}):
        ...     time_limit()
        Traceback (most recent call last):
        ...
        ValueError: $TFM_CHECK_SECONDS='0' is not a positive number of seconds (unset: 60)
    """
    text = os.environ.get(TIME_LIMIT_VARIABLE) or ""
    if not text.strip():
        return DEFAULT_TIME_LIMIT
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"${TIME_LIMIT_VARIABLE}={text!r} is not a positive number of seconds "
                         f"(unset: {format_value(DEFAULT_TIME_LIMIT)})")
    return seconds


# What the helpers of this module write. The Korean avoids particles after a filled-in field (에서, 의 and
# 입니다 read right after any word), so no field needs a 이/가-style choice.
SENTENCES = Messages(
    en={
        "needs_function": "{name} needs a function, got {type}",
        "no_reference": "{name} could not compute tfm's reference ({error}); your function was not judged",
        "bad_return": "on {label}, what {fn} returned could not be checked ({error}): compare its type, shape and "
                      "dtype with the contract in help({name})",
        "too_slow": "on {label}, {fn} had not returned after {seconds} s, so the check stopped waiting; Python cannot "
                    "stop a function from outside, so it may still be running (restart the kernel if it never ends; "
                    "${variable} sets the limit)",
        "not_done": "not done yet: {fn} still raises NotImplementedError; write its body, then run this check again",
        "raised": "{fn} raised {error} on {label}{detail}",
        "unreadable": "on {label}, {what} could not be read as an array (got {type})",
        "not_numbers": "on {label}, {what} could not be read as an array of numbers (got {type})",
        "wrong_shape": "on {label}, {what} has the wrong shape: expected {expected}, got {got}",
        "wrong_value": "on {label}, {what}{where} should be {expected}, got {got}{hint}",
        "at_index": " at index {index}",
        "nan_hint": " (not a number: an overflow, or 0 * inf?)",
        "result": "the result",
    },
    ko={
        "needs_function": "{name}에는 함수를 넘겨야 하는데 {type} 값을 받았습니다",
        "no_reference": "{name} 검사에서 tfm의 기준값을 계산하지 못했습니다 ({error}). "
                        "작성한 함수는 채점하지 않았습니다",
        "bad_return": "{label}에서 {fn} 함수가 돌려준 값을 검사할 수 없습니다 ({error}). "
                      "돌려주는 값의 타입, shape, dtype을 help({name})에 적힌 형식과 비교해 보세요",
        "too_slow": "{label}에서 {fn} 함수가 {seconds}초가 지나도록 값을 돌려주지 않아 검사를 멈췄습니다. Python은 "
                    "실행 중인 함수를 밖에서 멈출 수 없으므로 함수는 아직 실행 중일 수 있습니다 (끝나지 않으면 "
                    "커널을 다시 시작하세요. 제한 시간은 ${variable} 환경 변수로 바꿀 수 있습니다)",
        "not_done": "아직 작성하지 않았습니다: {fn} 함수가 여전히 NotImplementedError를 발생시킵니다. 함수 본문을 "
                    "작성한 뒤 이 검사를 다시 실행하세요",
        "raised": "{label}에서 {fn} 함수가 {error} 예외를 일으켰습니다{detail}",
        "unreadable": "{label}에서 돌려받은 {what} 값을 배열로 읽을 수 없습니다 (타입: {type})",
        "not_numbers": "{label}에서 돌려받은 {what} 값을 숫자 배열로 읽을 수 없습니다 (타입: {type})",
        "wrong_shape": "{label}에서 {what}의 shape이 틀렸습니다: {expected}이어야 하는데 {got}입니다",
        "wrong_value": "{label}에서 {what}{where} 값은 {expected}이어야 하는데 {got}입니다{hint}",
        "at_index": "의 인덱스 {index}",
        "nan_hint": " (NaN, 숫자가 아닌 값: 오버플로이거나 0 * inf일 수 있습니다)",
        "result": "결과",
    },
)

# The language of the checker running now: set by run_checker for its body, read by the helpers below.
_LANGUAGE = contextvars.ContextVar("tfm_exercises_language", default="en")
# The running check's time limit per call of the reader's function (set by run_checker), and what the reader's
# function gave back so far: the label of the last call that returned and the values it returned (with the arrays
# `as_array` read from them), so that an error while reading them is put down to the reader's value.
_TIME_LIMIT = contextvars.ContextVar("tfm_exercises_time_limit", default=DEFAULT_TIME_LIMIT)
_RETURNED = contextvars.ContextVar("tfm_exercises_returned", default=None)


def _say(key, **fields):
    return SENTENCES.format(_LANGUAGE.get(), key, **fields)


class Mismatch(Exception):
    """Raised inside a checker's body with the sentence to print: what is wrong, on which input.

    Args:
        message: str. The sentence, in the checker's language (`run_checker` capitalises it and adds the full stop).

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

    A stub that raises `NotImplementedError` becomes "not done yet: ...". The call runs on a thread of its
    own and is given `time_limit()` seconds: a function that has not returned by then becomes a `Mismatch`
    saying the check stopped waiting (Python cannot stop it; it may still be running).

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
        value = _call_in_time(fn, label, args, kwargs)
    except NotImplementedError:
        raise Mismatch(_say("not_done", fn=function_name(fn))) from None
    except Mismatch:
        raise
    except Exception as error:  # the reader's code may raise anything
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        message = message if len(message) <= 160 else message[:157] + "..."
        raise Mismatch(_say("raised", fn=function_name(fn), error=type(error).__name__, label=label,
                            detail=f" ({message})" if message else "")) from None
    _remember(value, label)
    return value


def _call_in_time(fn, label, args, kwargs):
    """`fn(*args, **kwargs)` on a daemon thread given `_TIME_LIMIT` seconds (the context, so the language and
    NumPy's error state, goes with it); its exception is raised here."""
    outcome = {}
    context = contextvars.copy_context()

    def call():
        try:
            outcome["value"] = context.run(fn, *args, **kwargs)
        except BaseException as error:  # handed to the checker's thread
            outcome["error"] = error

    seconds = _TIME_LIMIT.get()
    worker = threading.Thread(target=call, name=f"tfm check: {function_name(fn)}", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise Mismatch(_say("too_slow", label=label, fn=function_name(fn), seconds=format_value(seconds),
                            variable=TIME_LIMIT_VARIABLE))
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _remember(value, label):
    """Notes that the reader's function returned `value` on `label` (see `_reader_value_at_fault`)."""
    returned = _RETURNED.get()
    if returned is None:
        return
    returned["label"] = label
    values = [value]  # and its items, read with the built-in types' own methods (never the reader's overrides)
    if isinstance(value, tuple):
        values += list(tuple.__iter__(value))
    elif isinstance(value, list):
        values += list(list.__iter__(value))
    elif isinstance(value, dict):
        values += list(dict.values(value))
    # Numbers and strings are left out: Python shares such objects, so their identity says nothing.
    returned["values"].extend(v for v in values if not isinstance(v, (int, float, str, bytes, type(None))))


def _reader_value_at_fault(error):
    """The label of the input on which the reader's returned value made the check fail with `error`, or None
    when the error is on tfm's side.

    The reader's value is at fault when its function has returned in this check and the error was raised by
    the checker's own code (a module of `tfm.exercises`) while that code held one of the reader's values, calling
    nothing but NumPy, Keras, TensorFlow or the value's own methods: `float(x)`, `len(x)`, `x[0]` on a value
    that is not what the contract says. An error inside tfm's reference (another package of tfm, an optional
    package missing) is tfm's.
    """
    returned = _RETURNED.get()
    if returned is None or returned["label"] is None or isinstance(error, ImportError):
        return None
    frames = []
    traceback = error.__traceback__
    while traceback is not None:
        frames.append(traceback.tb_frame)
        traceback = traceback.tb_next
    here = os.path.dirname(os.path.abspath(__file__))
    ours = [i for i, frame in enumerate(frames) if os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here]
    if not ours:
        return None
    held = {id(value) for value in returned["values"]}
    for frame in frames[ours[-1] + 1:]:
        library = frame.f_globals.get("__name__", "").split(".")[0] in _LIBRARIES
        owner = frame.f_locals.get("self")
        if not library and (owner is None or id(owner) not in held):
            return None  # tfm's reference (or code the reader's value did not bring) raised
    if not any(value is not None and id(value) in held for value in frames[ours[-1]].f_locals.values()):
        return None
    return returned["label"]


# Packages whose code the checkers call on the reader's values (an error inside them is about those values).
_LIBRARIES = ("numpy", "keras", "tensorflow", "ml_dtypes", "jax", "torch")


def run_checker(name, fn, body, lang=None):
    """Runs `body()` (which raises `Mismatch` or returns the success sentence), prints it, returns the verdict.

    Never raises on the reader's account: a value the reader's function returned that the checker cannot
    read (an error while reading it, e.g. `len()` of a number) is named as the reader's, on the input where it
    was returned; an error on tfm's side (an optional package missing) is printed as one sentence too. Each
    call of the reader's function is given `time_limit()` seconds (`$TFM_CHECK_SECONDS`). The helpers `body`
    calls (`call_checked`, `compare`, `as_array`) write in `lang`.

    Args:
        name: str. The checker's name, for the sentences about it.
        fn: the reader's function (refused when not callable).
        body: callable `() -> str` doing the checks.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentences.

    Returns:
        bool: True when `body` returned, False when it raised.

    Example:
        >>> run_checker("check_answer", abs, lambda: "correct: abs is the answer")
        correct: abs is the answer.
        True
        >>> run_checker("check_answer", 42, lambda: "never called")
        check_answer needs a function, got int.
        False
        >>> run_checker("check_answer", 42, lambda: "never called", lang="ko")
        check_answer에는 함수를 넘겨야 하는데 int 값을 받았습니다.
        False
    """
    lang = validate_language(lang)
    seconds = time_limit()
    say = SENTENCES.sentences(lang)
    if not callable(fn):
        print(_sentence(say("needs_function", name=name, type=type(fn).__name__)))
        return False
    language, limit = _LANGUAGE.set(lang), _TIME_LIMIT.set(seconds)
    returned = _RETURNED.set({"label": None, "values": []})
    try:
        with np.errstate(all="ignore"):  # overflow in a reader's float16 shows up as a mismatch, not a warning
            sentence = body()
    except Mismatch as mismatch:
        print(_sentence(str(mismatch)))
        return False
    except Exception as error:  # the reader's value could not be read, or tfm's side failed
        label = _reader_value_at_fault(error)
        text = f"{type(error).__name__}: {error}".strip().splitlines()[0]
        text = text if len(text) <= 160 else text[:157] + "..."
        if label is not None:
            print(_sentence(say("bad_return", label=label, fn=function_name(fn), error=text, name=name)))
        else:  # e.g. an optional package is missing
            print(_sentence(say("no_reference", name=name, error=text)))
        return False
    finally:
        _LANGUAGE.reset(language)
        _TIME_LIMIT.reset(limit)
        _RETURNED.reset(returned)
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
        Mismatch: `x` does not read as an array of numbers (bool, int or float: not text, dates or complex).

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
    except Exception:
        raise Mismatch(_say("unreadable", label=label, what=what, type=type(x).__name__)) from None
    if array.dtype.kind == "V" or array.dtype == np.float16:  # bfloat16 and ml_dtypes' other floats
        try:
            array = array.astype("float32")
        except (TypeError, ValueError):  # a structured array
            raise Mismatch(_say("not_numbers", label=label, what=what, type=type(x).__name__)) from None
    if array.dtype.kind not in "biuf":  # text ("mask"), objects (None, a dict), dates, complex numbers
        raise Mismatch(_say("not_numbers", label=label, what=what, type=type(x).__name__))
    returned = _RETURNED.get()
    if returned is not None:
        returned["values"].append(array)  # read from the reader's value: an error reading it is theirs too
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


def compare(got, expected, label, what=None, rtol=1e-5, atol=1e-6, exact=False):
    """Raises `Mismatch` naming the shape or the first index where `got` differs from `expected`.

    Args:
        got: the reader's output (anything `as_array` reads).
        expected: array-like. tfm's reference.
        label: str. The input, for the sentence.
        what: str. What is compared, for the sentence (None: "the result", in the checker's language).
        rtol, atol: floats. `np.isclose` tolerances (`-inf` matches `-inf`).
        exact: bool. Compare with `==` (masks, token ids) instead.

    Example:
        >>> compare([1.0, 2.0], np.array([1.0, 2.0]), "x")   # equal: nothing to say
        >>> compare([[1, 0]], np.array([[1, 1]]), "length 2", "the mask", exact=True)
        Traceback (most recent call last):
        ...
        tfm.exercises.checking.Mismatch: on length 2, the mask at index [0, 1] should be 1, got 0
    """
    what = _say("result") if what is None else what
    got = as_array(got, label, what)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise Mismatch(_say("wrong_shape", label=label, what=what, expected=tuple(expected.shape),
                            got=tuple(got.shape)))
    if exact:
        bad = got != expected
    else:
        got64, expected64 = got.astype("float64"), expected.astype("float64")
        bad = ~np.isclose(got64, expected64, rtol=rtol, atol=atol, equal_nan=False)
        # -inf == -inf is a match (np.isclose says so too, but spell it out for +-inf).
        bad &= ~(np.isinf(expected64) & (got64 == expected64))
    if np.any(bad):
        position = tuple(np.argwhere(bad)[0])
        where = _say("at_index", index=_index(position)) if position else ""
        hint = _say("nan_hint") if not exact and np.isnan(got[position]) else ""
        raise Mismatch(_say("wrong_value", label=label, what=what, where=where,
                            expected=format_value(expected[position]), got=format_value(got[position]), hint=hint))


def shape_text(*dims):
    """A shape as a sentence writes it, Python's tuple notation: `(2, 3)`, `(5,)`.

    Args:
        *dims: the sizes.

    Example:
        >>> shape_text(2, 3, 4), shape_text(5)
        ('(2, 3, 4)', '(5,)')
    """
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
