"""The input rule of `tfm.decoding.text_ops` in plain Python: for what runs without TensorFlow
(`tfm.serving.ctranslate2_translator.CTranslate2Translator`) and for the messages of `tfm translate`.

The rule, and why, is documented once, in `tfm.decoding.text_ops`, which builds its TensorFlow
version (the one `Translator` and the exported SavedModel run) from the constants here;
`tests/decoding/test_input_rule.py` checks that both versions answer every case of one table alike.

Example:
    >>> normalize(" two\\r\\n"), normalize("a\\nb"), normalize("\\u00a0\\t")
    ('two', 'a b', '')
    >>> problem(b"two\\x00"), problem(b"\\xff"), problem("two")
    ('holds a NUL byte (U+0000: UTF-16 text? convert it to UTF-8)', 'is not valid UTF-8', None)
"""

import re

# Unicode's White_Space characters (PropList.txt): ASCII tab, line feed, vertical tab, form feed, carriage
# return and space; NEL, no-break space, ogham space mark, U+2000-U+200A (en quad ... hair space), line and
# paragraph separators, narrow no-break space, medium mathematical space, ideographic space. Not the
# zero-width characters (U+200B-U+200D, U+FEFF), which are format characters, not spaces.
SEPARATORS = ("\t\n\v\f\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
              + "\u2028\u2029\u202f\u205f\u3000")

INVALID = "input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings:"
NOT_UTF8 = "is not valid UTF-8"
HAS_NUL = "holds a NUL byte (U+0000: UTF-16 text? convert it to UTF-8)"
ON_INVALID = ("error", "empty")  # what translate(on_invalid=...) does with input the rule refuses

_SEPARATOR_RUNS = re.compile("[" + re.escape(SEPARATORS) + "]+")


def as_bytes(text):
    """str or bytes -> bytes. A str read with `errors="surrogateescape"` (how Python decodes
    undecodable command-line arguments and stdin) turns back into its original, invalid, bytes."""
    if isinstance(text, bytes):
        return text
    if isinstance(text, str):
        return text.encode("utf-8", "surrogateescape")
    raise TypeError(f"expected str or bytes, got {type(text).__name__}")


def problem(text):
    """None when `text` (str or bytes) is input the rule accepts, else what is wrong with it:
    `NOT_UTF8` or `HAS_NUL` (for messages such as "line 3 of standard input is not valid UTF-8")."""
    raw = as_bytes(text)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8
    return HAS_NUL if b"\x00" in raw else None


def normalize(text):
    """str -> the text the tokenizer sees: each run of `SEPARATORS` one space, none at either end."""
    return _SEPARATOR_RUNS.sub(" ", text).strip(" ")


def validate_sentences(sentences):
    """The batch every translator's `translate` takes, checked: a list (or other iterable) of str or bytes.

    `Translator`, `SavedModelTranslator` and `CTranslate2Translator` share one calling convention
    (`translate(sentences, ...)`); each checks its batch here, so that a careless call (None, one str,
    a number among the sentences) is answered alike, by a message naming `sentences` and what it got.

    Args:
        sentences: a list, tuple or other iterable of str (or UTF-8 bytes); one str is refused, so that
            it is not translated character by character.

    Returns:
        list: the sentences, in a new list (an iterator is read once).

    Raises:
        TypeError: `sentences` is None, one str or bytes, not iterable, or holds an item that is neither
            str nor bytes; the message names it and what it is.

    Example:
        >>> validate_sentences(("two", b"three"))
        ['two', b'three']
        >>> validate_sentences(None)
        Traceback (most recent call last):
        TypeError: sentences=None: translate takes a list of sentences (str), got None
        >>> validate_sentences("two")
        Traceback (most recent call last):
        TypeError: sentences='two' is one str: translate takes a list of sentences; wrap a single one in a list
        >>> validate_sentences(["two", 3])
        Traceback (most recent call last):
        TypeError: sentences[1]=3 is an int: translate takes a list of sentences (str)
    """
    if isinstance(sentences, (str, bytes)):
        raise TypeError(f"sentences={_shown(sentences)} is one {type(sentences).__name__}: translate takes a list "
                        "of sentences; wrap a single one in a list")
    if sentences is None:
        raise TypeError("sentences=None: translate takes a list of sentences (str), got None")
    try:
        items = list(sentences)
    except TypeError:  # not iterable: a number, a bool ...
        raise TypeError(f"sentences={_shown(sentences)} is {_a(type(sentences).__name__)}: translate takes a list "
                        "of sentences (str)") from None
    for i, item in enumerate(items):
        if not isinstance(item, (str, bytes)):
            raise TypeError(f"sentences[{i}]={_shown(item)} is {_a(type(item).__name__)}: translate takes a list "
                            "of sentences (str)")
    return items


def screen_sentences(sentences, on_invalid="error"):
    """A batch under the input rule, as every translator's `translate` takes it (`Translator`,
    `SavedModelTranslator` and `CTranslate2Translator` answer alike because they screen their input here).

    Args:
        sentences: a list (or other iterable) of str or bytes (`validate_sentences`).
        on_invalid: "error" (refuse the batch, naming every string that is not valid UTF-8 or holds a NUL
            byte) or "empty" (those strings are to be answered with `""`).

    Returns:
        `(raw, refused)`: `raw` the sentences as bytes (`as_bytes`), `refused` the sorted indices to answer
        with `""` (always empty with `on_invalid="error"`).

    Raises:
        TypeError: what `validate_sentences` refuses.
        ValueError: `on_invalid` is not one of `ON_INVALID`, or (with "error") some input is refused:
            "input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [...]".

    Example:
        >>> screen_sentences(["two", b"three"])
        ([b'two', b'three'], [])
        >>> screen_sentences(["two", b"\\xff", "a\\x00b"], on_invalid="empty")
        ([b'two', b'\\xff', b'a\\x00b'], [1, 2])
        >>> screen_sentences(["two", b"\\xff"])
        Traceback (most recent call last):
        ValueError: input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [1]
    """
    sentences = validate_sentences(sentences)
    if on_invalid not in ON_INVALID:
        raise ValueError(f"on_invalid={on_invalid!r}: expected one of {ON_INVALID}")
    raw = [as_bytes(sentence) for sentence in sentences]
    refused = [i for i, text in enumerate(raw) if problem(text)]
    if refused and on_invalid == "error":
        raise ValueError(f"{INVALID} {refused}")
    return raw, refused


def _shown(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _a(noun):
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun
