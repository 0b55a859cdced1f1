"""The checker of the positional-encoding exercise (notebook 05): the sinusoids of §3.5, sines and cosines
interleaved."""

from tfm.exercises.checking import (
    call_checked,
    compare,
    function_name,
    run_checker,
)
from tfm.exercises.messages import Messages, validate_language

# ---------------------------------------------------------------------------
# 4. Positional encoding (notebook 05)
# ---------------------------------------------------------------------------
_POSITIONAL_ENCODING = Messages(
    en={
        "size": "length={length}, depth={depth}",
        "encoding": "the encoding",
        "correct": "correct: {fn} matches tfm.positional_encoding for {n} sizes",
    },
    ko={
        "size": "length={length}, depth={depth}",
        "encoding": "Positional Encoding",
        "correct": "정답입니다: {fn} 함수가 크기 {n}가지 모두에서 tfm.positional_encoding 결과와 일치합니다",
    },
)


def check_positional_encoding(fn, *, lang=None):
    """The sinusoidal positional encoding of §3.5, sines and cosines interleaved.

    Contract: `fn(length, depth) -> pe`, two Python ints (`depth` even), returning float `(length, depth)` with
    `pe[p, 2i] = sin(p / 10000^(2i / depth))` and `pe[p, 2i + 1] = cos(p / 10000^(2i / depth))`.

    Checked against `tfm.positional_encoding(length, depth)` for one position, the smallest depth, and
    long and wide tables.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> from tfm.layers.positional_encoding import positional_encoding_numpy
        >>> check_positional_encoding(positional_encoding_numpy)
        correct: ...
        True
    """
    from tfm.layers.positional_encoding import positional_encoding_numpy

    lang = validate_language(lang)
    say = _POSITIONAL_ENCODING.sentences(lang)

    def body():
        sizes = [(1, 4), (3, 2), (50, 16), (20, 128)]
        for length, depth in sizes:
            label = say("size", length=length, depth=depth)
            compare(call_checked(fn, label, length, depth), positional_encoding_numpy(length, depth), label,
                    say("encoding"), rtol=1e-4, atol=1e-4)
        return say("correct", fn=function_name(fn), n=len(sizes))

    return run_checker("check_positional_encoding", fn, body, lang)
