"""The input rule of `tfm.decoding.input_rule_ops` in plain Python: for what runs without TensorFlow
(`tfm.serving.ctranslate2.CTranslate2Translator`) and for the messages of `tfm translate`.

The rule, and why, is documented once, in `tfm.decoding.input_rule_ops`, which builds its TensorFlow
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
