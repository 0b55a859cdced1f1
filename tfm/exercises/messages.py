"""The checkers' languages and their sentences: which language a checker writes in (`validate_language`,
`$TFM_LANG`) and the `Messages` tables that hold each sentence in every language of `LANGUAGES`, the same keys
and fields in each, so a sentence can never exist in one language only. No TensorFlow, no NumPy.

Example:
    >>> DOUBLE = Messages(en={"correct": "correct: {fn} doubles"},
    ...                   ko={"correct": "정답입니다: {fn} 함수가 두 배를 돌려줍니다"})
    >>> DOUBLE.sentences(validate_language("ko"))("correct", fn="double")
    '정답입니다: double 함수가 두 배를 돌려줍니다'
"""

import os
import string

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
            >>> from tfm.exercises.checking import SENTENCES   # the shared helpers' table
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
            >>> from tfm.exercises.checking import SENTENCES
            >>> SENTENCES.sentences("en")("needs_function", name="check_causal_mask", type="int")
            'check_causal_mask needs a function, got int'
        """
        def say(key, **fields):
            return self.format(lang, key, **fields)

        return say
