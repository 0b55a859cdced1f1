"""The checker of the serving exercise (notebook 12): the REST response TensorFlow Serving sends for the exported
signature's outputs."""

import json

import numpy as np

from tfm.exercises.checking import (
    Mismatch,
    call_checked,
    function_name,
    run_checker,
)
from tfm.exercises.messages import Messages, validate_language

# The outputs of `serving_default` (`tfm.serving.saved_model.SIGNATURE_OUTPUTS`) as `.numpy()` gives them.
_OUTPUTS = [
    ("numbers", ["dreihundert einundzwanzig", "siebentausend achthundert vierundneunzig", ""],
     [-0.184, -0.185, 0.0], [False, False, False]),
    ("umlauts", ["Zwei Hunde laufen über die Straße.", "Ein Mädchen liest."], [-0.412, -1.25], [False, True]),
    ("single", ["ein Hund"], [-0.5], [False]),
]


def _outputs(translations, scores, truncated):
    return {"translations": np.array([t.encode("utf-8") for t in translations], dtype=object),
            "scores": np.array(scores, "float32"), "truncated": np.array(truncated, bool)}


def _row_format(outputs):
    """TF Serving's row-format response: one object per input, one key per output, JSON types."""
    rows = zip(outputs["translations"], outputs["scores"], outputs["truncated"])
    return {"predictions": [{"translations": t.decode("utf-8"), "scores": float(s), "truncated": bool(x)}
                            for t, s, x in rows]}


def _json(value):
    return json.dumps(value, ensure_ascii=False)


_REST_RESPONSE = Messages(
    en={
        "numbers": "3 outputs of the numbers model (the last one for an empty input)",
        "umlauts": "2 outputs with non-ASCII letters (the second one truncated)",
        "single": "batch 1",
        "not_dict": "on {label}, expected the response body as a dict, got {type}",
        "not_json": "on {label}, the response body cannot be written as JSON ({error}); decode the strings and "
                    "turn NumPy numbers into Python ones",
        "keys": "on {label}, the body has the keys {got}; TF Serving's row format has {expected}",
        "rows": "on {label}, \"predictions\" should be a list of {expected} objects, one per input, got {got}",
        "row_keys": "on {label}, prediction {i} has the keys {got}, "
                    "expected one per output of the signature {expected}",
        "value": "on {label}, \"{output}\" of prediction {i} should be {expected}, got {got}",
        "correct": "correct: {fn} writes TF Serving's row-format response for the {n} batches of outputs",
    },
    ko={
        "numbers": "numbers 모델의 출력 3개 (마지막은 빈 입력)",
        "umlauts": "ASCII가 아닌 글자가 있는 출력 2개 (두 번째는 잘림)",
        "single": "배치 1",
        "not_dict": "{label}에서 응답 본문을 dict로 돌려주어야 하는데 받은 값의 타입은 {type}입니다",
        "not_json": "{label}에서 응답 본문을 JSON으로 쓸 수 없습니다 ({error}). 문자열을 디코딩하고 NumPy 숫자를 "
                    "Python 숫자로 바꾸세요",
        "keys": "{label}에서 본문의 키는 {got}입니다. TF Serving의 row 형식에는 {expected} 키가 있어야 합니다",
        "rows": "{label}에서 \"predictions\"는 입력마다 하나씩, 객체 {expected}개의 리스트여야 하는데 받은 값은 "
                "{got}입니다",
        "row_keys": "{label}에서 prediction {i}의 키는 {got}입니다. 시그니처의 출력마다 키가 하나씩 있어야 합니다: "
                    "{expected}",
        "value": "{label}에서 prediction {i}의 \"{output}\" 값은 {expected}이어야 하는데 {got}입니다",
        "correct": "정답입니다: {fn} 함수가 출력 배치 {n}개 모두에서 TF Serving의 row 형식 응답을 씁니다",
    },
)


def check_rest_response(fn, *, lang=None):
    """The JSON body TensorFlow Serving's REST API answers a `:predict` request with, in the row format
    (`{"instances": [...]}` in, `{"predictions": [...]}` out), for the exported translator's outputs (notebook 12,
    section 7; the signature: `tfm.serving.saved_model.SIGNATURE_OUTPUTS["serving_default"]`).

    Contract: `fn(outputs) -> body`
        outputs: dict of NumPy arrays, what `serving_default(text=...)` returns after `.numpy()`:
            "translations" `(B,)` UTF-8 `bytes`, "scores" float32 `(B,)`, "truncated" bool `(B,)`.
        Returns a dict that `json.dumps` writes: `{"predictions": [row_0, ..., row_{B-1}]}`, one row per input,
        each row a dict with one key per output: the translation as a `str`, the score as a `float`, truncated
        as a `bool`.

    Checked against TF Serving's row format built from the same outputs: the body goes through
    `json.dumps` and `json.loads` (as it would over HTTP), then its keys, rows and values are compared
    (scores to 1e-5), on three ordinary outputs with an empty one, outputs with non-ASCII letters of which one
    is truncated, and batch 1.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every batch matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def rest_response(outputs):                                  # forgets `truncated`
        ...     rows = zip(outputs["translations"], outputs["scores"])
        ...     return {"predictions": [{"translations": t.decode(), "scores": float(s)} for t, s in rows]}
        >>> check_rest_response(rest_response)
        On 3 outputs of the numbers model (the last one for an empty input), prediction 0 has the keys ...
        False
    """
    lang = validate_language(lang)
    say = _REST_RESPONSE.sentences(lang)

    def body():
        for key, translations, scores, truncated in _OUTPUTS:
            label = say(key)
            outputs = _outputs(translations, scores, truncated)
            expected = _row_format(outputs)
            got = call_checked(fn, label, {name: value.copy() for name, value in outputs.items()})
            if not isinstance(got, dict):
                raise Mismatch(say("not_dict", label=label, type=type(got).__name__))
            try:
                got = json.loads(json.dumps(got))  # what the client receives
            except (TypeError, ValueError) as error:
                raise Mismatch(say("not_json", label=label, error=f"{type(error).__name__}: {error}")) from None
            if sorted(got) != sorted(expected):
                raise Mismatch(say("keys", label=label, got=sorted(got), expected=sorted(expected)))
            rows, want_rows = got["predictions"], expected["predictions"]
            if not isinstance(rows, list) or len(rows) != len(want_rows):
                raise Mismatch(say("rows", label=label, expected=len(want_rows),
                                   got=f"{len(rows)}" if isinstance(rows, list) else type(rows).__name__))
            for i, (row, want) in enumerate(zip(rows, want_rows)):
                keys = sorted(row) if isinstance(row, dict) else type(row).__name__
                if keys != sorted(want):
                    raise Mismatch(say("row_keys", label=label, i=i, got=keys, expected=sorted(want)))
                for name, value in want.items():
                    have = row[name]
                    if name == "scores":
                        same = (isinstance(have, (int, float)) and not isinstance(have, bool)
                                and abs(have - value) <= 1e-5)
                    else:
                        same = type(have) is type(value) and have == value
                    if not same:
                        raise Mismatch(say("value", label=label, output=name, i=i, expected=_json(value),
                                           got=_json(have)))
        return say("correct", fn=function_name(fn), n=len(_OUTPUTS))

    return run_checker("check_rest_response", fn, body, lang)
