"""The checkers of the mask exercises: the padding mask and the zero weight it gives padded source positions
(notebook 02), and the decoder's causal (look-ahead) mask (notebook 06)."""

import numpy as np
from keras import ops

from tfm.exercises.checking import (
    Mismatch,
    as_array,
    call_checked,
    compare,
    format_value,
    function_name,
    run_checker,
    seeded_rng,
    shape_text,
)
from tfm.exercises.messages import Messages, validate_language

# ---------------------------------------------------------------------------
# 14. The padding mask (notebook 02)
# ---------------------------------------------------------------------------
_PADDING_MASK = Messages(
    en={
        "step": "one decoder step, source_ids {ids} (sentence 0 has 3 real tokens), scores {s}",
        "all_steps": "every decoder step at once, source_ids {ids}, scores {s}",
        "single": "batch 1 without padding, source_ids {ids}, scores {s}",
        "float16": "float16 scores of standard deviation 15, source_ids {ids}, scores {s}",
        "not_pair": "on {label}, expected a pair (mask, weights), got {type}{length}",
        "length": " of length {n}",
        "not_boolean": "on {label}, the mask holds values other than True/False (e.g. {value}); return booleans, "
                       "True = real token",
        "mask": "the mask",
        "weights": "the weights",
        "correct": "correct: {fn} matches tfm.layers.masks.padding_mask and tfm.layers.masked_softmax on {n} "
                   "inputs",
    },
    ko={
        "step": "디코더 시점 하나, source_ids {ids} (문장 0의 실제 토큰은 3개), scores {s}",
        "all_steps": "모든 디코더 시점을 한꺼번에, source_ids {ids}, scores {s}",
        "single": "패딩 없는 배치 1, source_ids {ids}, scores {s}",
        "float16": "표준편차 15인 float16 scores, source_ids {ids}, scores {s}",
        "not_pair": "{label}에서 (mask, weights) 한 쌍을 돌려주어야 하는데 받은 값은 {type}{length}입니다",
        "length": " (길이 {n})",
        "not_boolean": "{label}에서 마스크에 True/False가 아닌 값이 들어 있습니다 (예: {value}). boolean 값을 "
                       "돌려주세요 (True = 실제 토큰)",
        "mask": "마스크",
        "weights": "어텐션 가중치",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.layers.masks.padding_mask와 "
                   "tfm.layers.masked_softmax 결과와 일치합니다",
    },
)


def _as_mask(got, label, say):
    """The reader's mask as booleans (0/1 integers read as booleans); other values are refused."""
    got = as_array(got, label, say("mask"))
    if got.dtype != bool:
        if got.size and not np.all(np.isin(got, (0, 1))):
            raise Mismatch(say("not_boolean", label=label, value=format_value(got[~np.isin(got, (0, 1))][0])))
        got = got.astype(bool)
    return got


def check_padding_mask(fn, *, lang=None):
    """The padding mask and what it does to the alignment weights: padded source positions get exactly zero
    weight (Bahdanau et al., 2015, §3.1's `alpha_ij`, over the real tokens of a padded batch; §3.2.3 of
    Vaswani et al., 2017 masks the same way).

    Contract: `fn(source_ids, scores) -> (mask, weights)`
        source_ids: int `(B, S)`, right-padded with `PAD_ID` (0); every row has at least one real token.
        scores: float `(B, S)` (one decoder step: `e_ij` for every `j`) or `(B, T, S)` (every step at once).
        Returns `mask` bool `(B, S)`, True = real token (0/1 integers are read as booleans), and `weights`
        float, the shape of `scores`: the softmax of the scores over the real tokens of each sentence,
        exactly 0 at padded positions, each row summing to 1.

    Checked against `tfm.layers.masks.padding_mask(source_ids)` and `tfm.layers.masked_softmax` (with the mask
    broadcast over the steps by `tfm.layers.masks.merge_masks`) on one decoder step, every step at once, batch 1
    without padding, and float16 scores large enough that a naive float16 fill overflows.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def padding_mask(source_ids, scores):
        ...     mask = source_ids != 0                                      # (B, S), True = real token
        ...     keys = mask.reshape(mask.shape[:1] + (1,) * (scores.ndim - 2) + mask.shape[1:])   # (B, 1.., S)
        ...     scores = np.where(keys, scores.astype("float32"), -np.inf)  # padding never wins the softmax
        ...     weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        ...     return mask, weights / weights.sum(axis=-1, keepdims=True)
        >>> check_padding_mask(padding_mask)
        correct: padding_mask matches tfm.layers.masks.padding_mask and tfm.layers.masked_softmax on 4 inputs.
        True
    """
    from tfm.layers.masks import merge_masks, padding_mask
    from tfm.layers.scaled_dot_product_attention import masked_softmax

    lang = validate_language(lang)
    say = _PADDING_MASK.sentences(lang)
    rng = seeded_rng()
    padded = np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]], "int32")  # (B, S), sentence 0 has 3 real tokens

    def case(key, ids, score_shape, dtype="float32", scale=1.0):
        scores = (scale * rng.normal(size=score_shape)).astype(dtype)
        mask = ops.convert_to_numpy(padding_mask(ids))  # (B, S)
        keys = mask if scores.ndim == 2 else merge_masks(key_mask=mask)  # (B, S) or (B, 1, S)
        weights = ops.convert_to_numpy(masked_softmax(scores.astype("float32"), keys))
        return say(key, ids=shape_text(*ids.shape), s=shape_text(*score_shape)), (ids, scores), (mask, weights)

    def body():
        cases = [
            (case("step", padded, (2, 5)), 1e-5),
            (case("all_steps", padded, (2, 3, 5)), 1e-5),
            (case("single", np.array([[4, 9, 7, 5]], "int32"), (1, 4)), 1e-5),
            (case("float16", padded, (2, 3, 5), "float16", scale=15.0), 2e-2),
        ]
        for (label, (ids, scores), (mask, weights)), tol in cases:
            result = call_checked(fn, label, ids.copy(), scores.copy())
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                length = say("length", n=len(result)) if isinstance(result, (tuple, list)) else ""
                raise Mismatch(say("not_pair", label=label, type=type(result).__name__, length=length))
            got_mask = _as_mask(result[0], label, say)
            compare(got_mask, mask, label, say("mask"), exact=True)
            compare(result[1], weights, label, say("weights"), rtol=tol, atol=tol)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_padding_mask", fn, body, lang)


# ---------------------------------------------------------------------------
# 5. Causal mask (notebook 06)
# ---------------------------------------------------------------------------
_CAUSAL_MASK = Messages(
    en={
        "length": "length={length}",
        "mask": "the mask",
        "not_boolean": "on {label}, the mask holds values other than True/False (e.g. {value}); return booleans, "
                       "True = may attend",
        "correct": "correct: {fn} matches tfm.layers.masks.causal_mask for lengths 1, 2 and 5",
    },
    ko={
        "length": "length={length}",
        "mask": "마스크",
        "not_boolean": "{label}에서 마스크에 True/False가 아닌 값이 들어 있습니다 (예: {value}). boolean 값을 "
                       "돌려주세요 (True = 어텐션할 수 있음)",
        "correct": "정답입니다: {fn} 함수가 길이 1, 2, 5 모두에서 tfm.layers.masks.causal_mask 결과와 일치합니다",
    },
)


def check_causal_mask(fn, *, lang=None):
    """The decoder's look-ahead mask (§3.2.3: position t may not attend to later positions).

    Contract: `fn(length) -> mask`, bool `(length, length)`, True = may attend: query `i` may attend
    key `j` when `j <= i` (0/1 integers are read as booleans).

    Checked against `tfm.layers.masks.causal_mask(length)` for lengths 1, 2 and 5.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> check_causal_mask(lambda length: np.tril(np.ones((length, length), bool)))
        correct: ...
        True
        >>> check_causal_mask(lambda length: np.triu(np.ones((length, length), bool)))   # the future, not the past
        On length=2, the mask at index [0, 1] should be False, got True.
        False
    """
    from tfm.layers.masks import causal_mask

    lang = validate_language(lang)
    say = _CAUSAL_MASK.sentences(lang)

    def body():
        for length in (1, 2, 5):
            label = say("length", length=length)
            got = as_array(call_checked(fn, label, length), label, say("mask"))
            if got.dtype != bool:
                if got.size and not np.all(np.isin(got, (0, 1))):
                    raise Mismatch(say("not_boolean", label=label,
                                       value=format_value(got[~np.isin(got, (0, 1))][0])))
                got = got.astype(bool) if got.shape == (length, length) else got
            compare(got, ops.convert_to_numpy(causal_mask(length)), label, say("mask"), exact=True)
        return say("correct", fn=function_name(fn))

    return run_checker("check_causal_mask", fn, body, lang)
