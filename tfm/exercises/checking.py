"""What every checker shares: calling the reader's function safely, comparing arrays, one sentence in the
reader's language.

A checker is `run_checker(name, fn, body, lang)`: `body` calls the reader's `fn` through `call_checked`,
compares what comes back with `compare` (or raises `Mismatch` itself), and returns the sentence of
success; `run_checker` prints the one sentence either way and returns True or False.

Every sentence exists in each language of `LANGUAGES` ("en", "ko"). A checker keeps its own sentences in one
`Messages` table (templates keyed by language, the same keys and fields in each) and writes its labels ("on
length=2") with it; the sentences the helpers here write (a wrong shape, a wrong value, an exception) are in
`SENTENCES`, written in the language `run_checker` was given: it sets it for the body, as it sets
`np.errstate`. The checks themselves never depend on the language. `validate_language(None)` reads
`$TFM_LANG`, so a Korean notebook, whose code cells are the English ones, gets Korean sentences.

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
import string

import numpy as np
from keras import ops

LANGUAGES = ("en", "ko")
LANGUAGE_VARIABLE = "TFM_LANG"


def validate_language(lang=None):
    """The language a checker writes in: `lang`, else `$TFM_LANG`, else English.

    Args:
        lang: "en", "ko" or None. None reads the environment variable `TFM_LANG` (unset or empty: "en").

    Returns:
        str: "en" or "ko".

    Raises:
        ValueError: `lang` (or `$TFM_LANG`) is not one of `LANGUAGES`; the message names the value and the choices.

    Example:
        >>> validate_language("ko")
        'ko'
        >>> validate_language("fr")
        Traceback (most recent call last):
        ...
        ValueError: lang='fr' is not a language of tfm.exercises; choose 'en' or 'ko' (None reads $TFM_LANG)
        >>> from unittest import mock
        >>> with mock.patch.dict(os.environ, {"TFM_LANG": "de"}):
        ...     validate_language()
        Traceback (most recent call last):
        ...
        ValueError: $TFM_LANG='de' is not a language of tfm.exercises; choose 'en' or 'ko' (unset, English)
    """
    source, hint = "lang", f"None reads ${LANGUAGE_VARIABLE}"
    if lang is None:
        source, hint = f"${LANGUAGE_VARIABLE}", "unset, English"
        lang = os.environ.get(LANGUAGE_VARIABLE) or "en"
    if not isinstance(lang, str) or lang not in LANGUAGES:
        raise ValueError(f"{source}={lang!r} is not a language of tfm.exercises; choose "
                         f"{' or '.join(repr(choice) for choice in LANGUAGES)} ({hint})")
    return lang


def _fields(template):
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


class Messages:
    """The sentences of one checker (or of the shared helpers): a table of `str.format` templates per language.

    Every language of `LANGUAGES` has a table with the same keys, and each key's templates take the same
    fields, so a sentence can never exist in one language only.

    Args:
        **tables: one `{key: template}` dict per language, named by it (`en=..., ko=...`).

    Raises:
        ValueError: a language is missing or unknown, or its keys or a template's fields differ from English's.

    Example:
        >>> greeting = Messages(en={"hello": "hello, {name}"}, ko={"hello": "{name} 님, 안녕하세요"})
        >>> greeting.format("ko", "hello", name="tfm")
        'tfm 님, 안녕하세요'
        >>> say = greeting.sentences("en")
        >>> say("hello", name="tfm")
        'hello, tfm'
        >>> Messages(en={"hello": "hello, {name}"}, ko={"hello": "안녕하세요"})
        Traceback (most recent call last):
        ...
        ValueError: the 'ko' template of 'hello' takes the fields [], the English one ['name']
    """

    def __init__(self, **tables):
        if sorted(tables) != sorted(LANGUAGES):
            raise ValueError(f"expected one table per language {list(LANGUAGES)}, got {sorted(tables)}")
        english = tables["en"]
        for lang, table in tables.items():
            if set(table) != set(english):
                missing, extra = sorted(set(english) - set(table)), sorted(set(table) - set(english))
                raise ValueError(f"the {lang!r} table's keys differ from English's: missing {missing}, extra {extra}")
            for key, template in table.items():
                if _fields(template) != _fields(english[key]):
                    raise ValueError(f"the {lang!r} template of {key!r} takes the fields "
                                     f"{sorted(_fields(template))}, the English one {sorted(_fields(english[key]))}")
        self.tables = tables

    def format(self, lang, key, **fields):
        """The sentence `key` in `lang`, its fields filled in.

        Args:
            lang: str. One of `LANGUAGES`.
            key: str. A key of the tables.
            **fields: the template's fields.

        Returns:
            str.

        Example:
            >>> SENTENCES.format("ko", "needs_function", name="check_causal_mask", type="int")
            'check_causal_mask에는 함수를 넘겨야 하는데 int 값을 받았습니다'
        """
        return self.tables[lang][key].format(**fields)

    def sentences(self, lang):
        """`say(key, **fields)`: `format` with the language fixed, as a checker's body writes its labels.

        Args:
            lang: str. One of `LANGUAGES`.

        Returns:
            callable `(key, **fields) -> str`.

        Example:
            >>> SENTENCES.sentences("en")("needs_function", name="check_causal_mask", type="int")
            'check_causal_mask needs a function, got int'
        """
        def say(key, **fields):
            return self.format(lang, key, **fields)

        return say


# What the helpers of this module write. The Korean avoids particles after a filled-in field (에서, 의 and
# 입니다 read right after any word), so no field needs a 이/가-style choice.
SENTENCES = Messages(
    en={
        "needs_function": "{name} needs a function, got {type}",
        "no_reference": "{name} could not compute tfm's reference ({error}); your function was not judged",
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
        "no_reference": "{name} 검사에서 tfm의 기준값을 계산하지 못했습니다 ({error}); 작성한 함수는 채점하지 않았습니다",
        "not_done": "아직 작성하지 않았습니다: {fn} 함수가 여전히 NotImplementedError를 발생시킵니다; 함수 본문을 "
                    "작성한 뒤 이 검사를 다시 실행하십시오",
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
        raise Mismatch(_say("not_done", fn=function_name(fn))) from None
    except Exception as error:  # noqa: BLE001 - the reader's code may raise anything
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        message = message if len(message) <= 160 else message[:157] + "..."
        raise Mismatch(_say("raised", fn=function_name(fn), error=type(error).__name__, label=label,
                            detail=f" ({message})" if message else "")) from None


def run_checker(name, fn, body, lang=None):
    """Runs `body()` (which raises `Mismatch` or returns the success sentence), prints it, returns the verdict.

    Never raises on the reader's account: an error on tfm's side (an optional package missing) is printed
    as one sentence too. The helpers `body` calls (`call_checked`, `compare`, `as_array`) write in `lang`.

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
    say = SENTENCES.sentences(lang)
    if not callable(fn):
        print(_sentence(say("needs_function", name=name, type=type(fn).__name__)))
        return False
    language = _LANGUAGE.set(lang)
    try:
        with np.errstate(all="ignore"):  # overflow in a reader's float16 shows up as a mismatch, not a warning
            sentence = body()
    except Mismatch as mismatch:
        print(_sentence(str(mismatch)))
        return False
    except Exception as error:  # noqa: BLE001 - tfm's side failed (e.g. an optional package is missing)
        print(_sentence(say("no_reference", name=name, error=f"{type(error).__name__}: {error}")))
        return False
    finally:
        _LANGUAGE.reset(language)
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
        raise Mismatch(_say("unreadable", label=label, what=what, type=type(x).__name__)) from None
    if array.dtype == object:
        raise Mismatch(_say("not_numbers", label=label, what=what, type=type(x).__name__))
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
