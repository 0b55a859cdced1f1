"""The checkers of the attention exercises: the padding mask (notebook 02), score functions (03), scaled
dot-product attention and the heads' split and merge (04), the positional encoding (05) and the causal mask (06)."""

import numpy as np
from keras import ops

from tfm.exercises.checking import (
    Messages,
    Mismatch,
    as_array,
    call_checked,
    compare,
    format_value,
    function_name,
    run_checker,
    seeded_rng,
    shape_text,
    validate_language,
)


# ---------------------------------------------------------------------------
# 1-2. Score functions (notebook 03)
# ---------------------------------------------------------------------------
def _score_layer(score, query, key, kernels, units=None):
    from tfm.layers.attention_score import AttentionScore

    layer = AttentionScore(score, units=units, dtype="float32")
    q32, k32 = query.astype("float32"), key.astype("float32")
    layer(q32, k32)  # build
    for dense, kernel in kernels(layer):
        dense.kernel.assign(kernel.astype("float32"))
    return ops.convert_to_numpy(layer(q32, k32))


_ADDITIVE_SCORE = Messages(
    en={
        "random": "random query {q}, key {k}, U={u}",
        "single": "batch 1, one query and one key, query {q}, key {k}, U={u}",
        "float16": "float16 query {q}, key {k}, U={u}",
        "score": "the score",
        "correct": "correct: {fn} matches tfm's additive AttentionScore on {n} inputs",
    },
    ko={
        "random": "무작위 쿼리 {q}, 키 {k}, U={u}",
        "single": "배치 1, 쿼리 하나와 키 하나, 쿼리 {q}, 키 {k}, U={u}",
        "float16": "float16 쿼리 {q}, 키 {k}, U={u}",
        "score": "스코어",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm의 additive AttentionScore 결과와 일치합니다",
    },
)


def check_additive_score(fn, *, lang=None):
    """Bahdanau's additive (concat) score `e_ts = v^T tanh(W1 q_t + W2 k_s)` (Bahdanau et al., 2015, §A.1.2).

    Contract: `fn(query, key, w1, w2, v) -> scores`
        query: float `(B, T, Dq)`, the decoder states `q_t` (`s_{t-1}` in Bahdanau's notation).
        key: float `(B, S, Dk)`, the encoder outputs `k_s` (`h_s`).
        w1: float `(Dq, U)`; w2: float `(Dk, U)`; v: float `(U,)`. Row vectors: `q_t @ w1`.
        Returns float `(B, T, S)`: one score per query/key pair, before the softmax.

    Checked against `tfm.layers.AttentionScore("additive", units=U)` with the same weights, on random
    inputs with `Dq != Dk`, batch 1 with one query and one key, and float16 inputs.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def additive_score(query, key, w1, w2, v):        # float32 whatever comes in: float16 would round
        ...     q, k = query.astype("float32") @ w1.astype("float32"), key.astype("float32") @ w2.astype("float32")
        ...     return np.tanh(q[:, :, None, :] + k[:, None, :, :]) @ v.astype("float32")   # (B, T, S, U) @ (U,)
        >>> check_additive_score(additive_score)
        correct: additive_score matches tfm's additive AttentionScore on 3 inputs.
        True
    """
    lang = validate_language(lang)
    say = _ADDITIVE_SCORE.sentences(lang)
    rng = seeded_rng()

    def case(b, t, s, dq, dk, u, dtype="float32", scale=1.0):
        q = (scale * rng.normal(size=(b, t, dq))).astype(dtype)
        k = (scale * rng.normal(size=(b, s, dk))).astype(dtype)
        w1, w2 = rng.normal(size=(dq, u)).astype(dtype), rng.normal(size=(dk, u)).astype(dtype)
        v = rng.normal(size=(u,)).astype(dtype)
        expected = _score_layer("additive", q, k, lambda layer: [(layer.query_dense, w1), (layer.key_dense, w2),
                                                                 (layer.score_dense, v[:, None])], units=u)
        return (q, k, w1, w2, v), expected

    def body():
        cases = [
            (say("random", q=shape_text(2, 3, 5), k=shape_text(2, 4, 6), u=7), case(2, 3, 4, 5, 6, 7), 1e-4),
            (say("single", q=shape_text(1, 1, 3), k=shape_text(1, 1, 2), u=4), case(1, 1, 1, 3, 2, 4), 1e-4),
            (say("float16", q=shape_text(2, 2, 4), k=shape_text(2, 5, 4), u=3),
             case(2, 2, 5, 4, 4, 3, "float16"), 2e-2),
        ]
        for label, (args, expected), tol in cases:
            compare(call_checked(fn, label, *args), expected, label, say("score"), rtol=tol, atol=tol)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_additive_score", fn, body, lang)


_GENERAL_SCORE = Messages(
    en={
        "random": "random query {q}, key {k}, w {w}",
        "square": "square w {w}, query {q}, key {k}",
        "one_key": "batch 1 with one key, query {q}, key {k}",
        "float16": "float16 query {q}, key {k}",
        "score": "the score",
        "correct": "correct: {fn} matches tfm's general AttentionScore on {n} inputs",
    },
    ko={
        "random": "무작위 쿼리 {q}, 키 {k}, w {w}",
        "square": "정사각 행렬 w {w}, 쿼리 {q}, 키 {k}",
        "one_key": "배치 1, 키 하나, 쿼리 {q}, 키 {k}",
        "float16": "float16 쿼리 {q}, 키 {k}",
        "score": "스코어",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm의 general AttentionScore 결과와 일치합니다",
    },
)


def check_general_score(fn, *, lang=None):
    """Luong's general (bilinear) score `e_ts = q_t^T W k_s` (Luong et al., 2015, §3.1, eq. 8).

    Contract: `fn(query, key, w) -> scores`
        query: float `(B, T, Dq)`; key: float `(B, S, Dk)`; w: float `(Dq, Dk)`.
        Returns float `(B, T, S)` with `scores[b, t, s] = query[b, t] @ w @ key[b, s]`.

    Checked against `tfm.layers.AttentionScore("general")` (whose key kernel is `w^T`) on random
    inputs with `Dq != Dk`, a square `w` (so a transposed `w` shows), batch 1 with one key, and float16.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> check_general_score(lambda query, key, w: query @ w @ np.swapaxes(key, -1, -2))   # (B, T, S)
        correct: <lambda> matches tfm's general AttentionScore on 4 inputs.
        True
    """
    lang = validate_language(lang)
    say = _GENERAL_SCORE.sentences(lang)
    rng = seeded_rng()

    def case(b, t, s, dq, dk, dtype="float32"):
        q = rng.normal(size=(b, t, dq)).astype(dtype)
        k = rng.normal(size=(b, s, dk)).astype(dtype)
        w = rng.normal(size=(dq, dk)).astype(dtype)
        expected = _score_layer("general", q, k, lambda layer: [(layer.key_dense, w.T)])
        return (q, k, w), expected

    def body():
        cases = [
            (say("random", q=shape_text(2, 3, 5), k=shape_text(2, 4, 6), w=shape_text(5, 6)),
             case(2, 3, 4, 5, 6), 1e-4),
            (say("square", w=shape_text(4, 4), q=shape_text(2, 3, 4), k=shape_text(2, 5, 4)),
             case(2, 3, 5, 4, 4), 1e-4),
            (say("one_key", q=shape_text(1, 2, 3), k=shape_text(1, 1, 2)), case(1, 2, 1, 3, 2), 1e-4),
            (say("float16", q=shape_text(2, 2, 4), k=shape_text(2, 3, 4)), case(2, 2, 3, 4, 4, "float16"), 3e-2),
        ]
        for label, (args, expected), tol in cases:
            compare(call_checked(fn, label, *args), expected, label, say("score"), rtol=tol, atol=tol)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_general_score", fn, body, lang)


# ---------------------------------------------------------------------------
# 3. Scaled dot-product attention (notebook 04)
# ---------------------------------------------------------------------------
_SCALED_DOT_PRODUCT_ATTENTION = Messages(
    en={
        "no_mask": "query {q}, key {k}, value {v}, no mask",
        "padding": "query {q}, key {k}, value {v}, padding mask {m} (sentence 1 has 2 real keys)",
        "causal": "causal mask {m}, query {q}, value {v}",
        "heads": "batch 1 with 2 heads, query {q}, key {k}, mask {m}",
        "float16": "float16 inputs with large logits, query {q}, padding mask {m}",
        "bfloat16": "bfloat16 inputs, query {q}, padding mask {m}",
        "not_pair": "on {label}, expected a pair (output, weights), got {type}{length}",
        "length": " of length {n}",
        "weights": "the weights",
        "output": "the output",
        "correct": "correct: {fn} matches tfm.scaled_dot_product_attention on {n} inputs",
    },
    ko={
        "no_mask": "쿼리 {q}, 키 {k}, 값 {v}, 마스크 없음",
        "padding": "쿼리 {q}, 키 {k}, 값 {v}, 패딩 마스크 {m} (문장 1의 실제 키는 2개)",
        "causal": "인과 마스크 {m}, 쿼리 {q}, 값 {v}",
        "heads": "배치 1, 헤드 2개, 쿼리 {q}, 키 {k}, 마스크 {m}",
        "float16": "logit이 큰 float16 입력, 쿼리 {q}, 패딩 마스크 {m}",
        "bfloat16": "bfloat16 입력, 쿼리 {q}, 패딩 마스크 {m}",
        "not_pair": "{label}에서 (output, weights) 한 쌍을 돌려주어야 하는데 받은 값은 {type}{length}입니다",
        "length": " (길이 {n})",
        "weights": "어텐션 가중치",
        "output": "출력",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.scaled_dot_product_attention 결과와 일치합니다",
    },
)


def check_scaled_dot_product_attention(fn, *, lang=None):
    """Eq. 1, `softmax(Q K^T / sqrt(d_k)) V`, with a boolean mask (Vaswani et al., 2017, §3.2.1).

    Contract: `fn(query, key, value, mask=None) -> (output, weights)`
        query: float `(..., T, d_k)`; key: float `(..., S, d_k)`; value: float `(..., S, d_v)`.
        mask: None or bool broadcastable to `(..., T, S)`, True = may attend. Masked keys must get
            exactly zero weight; every query here has at least one key it may attend.
        Returns `output` float `(..., T, d_v)` and `weights` float `(..., T, S)` (rows sum to 1).

    Checked against `tfm.scaled_dot_product_attention` on: no mask; a padding mask `(B, 1, S)`; a causal
    mask `(T, S)`; batch 1 with heads `(1, N, T, d_k)`; float16 inputs whose logits overflow a naive
    float16 masking; and bfloat16 inputs.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def scaled_dot_product_attention(query, key, value, mask=None):
        ...     raise NotImplementedError   # the notebook's stub
        >>> check_scaled_dot_product_attention(scaled_dot_product_attention)
        not done yet: scaled_dot_product_attention still raises NotImplementedError; write its body, then run ...
        False
    """
    import ml_dtypes

    from tfm.layers.scaled_dot_product_attention import scaled_dot_product_attention

    lang = validate_language(lang)
    say = _SCALED_DOT_PRODUCT_ATTENTION.sentences(lang)
    rng = seeded_rng()

    def case(lead, t, s, dk, dv, mask=None, dtype="float32", scale=1.0):
        q = (scale * rng.normal(size=(*lead, t, dk))).astype(dtype)
        k = (scale * rng.normal(size=(*lead, s, dk))).astype(dtype)
        v = rng.normal(size=(*lead, s, dv)).astype(dtype)
        f32 = [x.astype("float32") for x in (q, k, v)]
        output, weights = scaled_dot_product_attention(*f32, mask=mask)
        return (q, k, v, mask), (ops.convert_to_numpy(output), ops.convert_to_numpy(weights))

    lengths = np.array([4, 2])  # the second sentence has 2 real keys of 4
    padding = (np.arange(4)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, S)
    causal = np.tril(np.ones((4, 4), bool))  # (T, S)

    def body():
        qkv = {"q": shape_text(2, 3, 8), "k": shape_text(2, 4, 8), "v": shape_text(2, 4, 5)}
        cases = [
            (say("no_mask", **qkv), case((2,), 3, 4, 8, 5), 1e-4),
            (say("padding", **qkv, m=shape_text(2, 1, 4)), case((2,), 3, 4, 8, 5, padding), 1e-4),
            (say("causal", m=shape_text(4, 4), q=shape_text(2, 4, 6), v=shape_text(2, 4, 3)),
             case((2,), 4, 4, 6, 3, causal), 1e-4),
            (say("heads", q=shape_text(1, 2, 3, 4), k=shape_text(1, 2, 5, 4), m=shape_text(1, 1, 1, 5)),
             case((1, 2), 3, 5, 4, 4, np.array([True, True, True, False, False])[None, None, None, :]), 1e-4),
            (say("float16", q=shape_text(2, 3, 16), m=shape_text(2, 1, 4)),
             case((2,), 3, 4, 16, 4, padding, "float16", scale=3.0), 2e-2),
            (say("bfloat16", q=shape_text(2, 3, 8), m=shape_text(2, 1, 4)),
             case((2,), 3, 4, 8, 4, padding, ml_dtypes.bfloat16), 4e-2),
        ]
        for label, ((q, k, v, mask), (output, weights)), tol in cases:
            kwargs = {} if mask is None else {"mask": mask}
            result = call_checked(fn, label, q, k, v, **kwargs)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                length = say("length", n=len(result)) if isinstance(result, (tuple, list)) else ""
                raise Mismatch(say("not_pair", label=label, type=type(result).__name__, length=length))
            compare(result[1], weights, label, say("weights"), rtol=tol, atol=tol)
            compare(result[0], output, label, say("output"), rtol=tol, atol=tol)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_scaled_dot_product_attention", fn, body, lang)


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
        "not_boolean": "{label}에서 마스크에 True/False가 아닌 값이 들어 있습니다 (예: {value}); 불리언을 "
                       "돌려주십시오 (True = 어텐션할 수 있음)",
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
        "not_boolean": "{label}에서 마스크에 True/False가 아닌 값이 들어 있습니다 (예: {value}); 불리언을 "
                       "돌려주십시오 (True = 실제 토큰)",
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
# 15-16. Heads split and merged (notebook 04)
# ---------------------------------------------------------------------------
def _heads_cases(rng):
    """`(key, x, num_heads)`: x `(B, T, N*H)`; the first holds its own flat positions, so a value names its place."""
    return [
        ("arange", np.arange(48, dtype="float32").reshape(2, 3, 8), 2),
        ("random", rng.normal(size=(2, 5, 12)).astype("float32"), 3),
        ("single", rng.normal(size=(1, 1, 6)).astype("float32"), 2),
        ("one_head", rng.normal(size=(2, 4, 5)).astype("float32"), 1),
    ]


def _split_heads_reference(x, num_heads):
    """`tfm.MultiHeadAttention._split_heads`: `(B, T, N*H) -> (B, N, T, H)`, as the layer splits its projections."""
    from tfm.layers.multi_head_attention import MultiHeadAttention

    head_dim = x.shape[-1] // num_heads
    layer = MultiHeadAttention(num_heads=num_heads, key_dim=head_dim, dtype="float32")
    return ops.convert_to_numpy(layer._split_heads(x, head_dim))


_SPLIT_HEADS = Messages(
    en={
        "arange": "x = np.arange(48).reshape{x}, num_heads={n}",
        "random": "random x {x}, num_heads={n}",
        "single": "batch 1 with one position, x {x}, num_heads={n}",
        "one_head": "one head, x {x}, num_heads={n}",
        "heads": "the output",
        "correct": "correct: {fn} splits as tfm.MultiHeadAttention does, (B, T, N*H) -> (B, N, T, H), on {n} inputs",
    },
    ko={
        "arange": "x = np.arange(48).reshape{x}, num_heads={n}",
        "random": "무작위 x {x}, num_heads={n}",
        "single": "배치 1, 위치 하나, x {x}, num_heads={n}",
        "one_head": "헤드 하나, x {x}, num_heads={n}",
        "heads": "출력",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.MultiHeadAttention과 같이 나눕니다, "
                   "(B, T, N*H) -> (B, N, T, H)",
    },
)


def check_split_heads(fn, *, lang=None):
    """Multi-head attention's split (§3.2.2): the `h` projections to `d_k` are one `(D, h * d_k)` matrix, and its
    output is cut into `h` heads, one attention each.

    Contract: `fn(x, num_heads) -> heads`
        x: float `(B, T, N * H)`, one projection of every position (`Q W^Q` for all heads at once).
        num_heads: int `N`, dividing the last axis.
        Returns float `(B, N, T, H)`: `heads[b, i, t]` is features `i * H ... (i + 1) * H - 1` of `x[b, t]`,
        so that each head attends over all `T` positions with its own `H` features.

    Checked against `tfm.MultiHeadAttention._split_heads` (the layer's own split) on `np.arange(48)` shaped
    `(2, 3, 8)` with 2 heads (every value names its place), random inputs with 3 heads, batch 1 with one
    position, and one head.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def split_heads(x, num_heads):                  # reshape alone: positions and features get mixed
        ...     b, t, d = x.shape
        ...     return x.reshape(b, num_heads, t, d // num_heads)
        >>> check_split_heads(split_heads)
        On x = np.arange(48).reshape(2, 3, 8), num_heads=2, the output at index [0, 0, 1, 0] should be 8, got 4.
        False
    """
    lang = validate_language(lang)
    say = _SPLIT_HEADS.sentences(lang)
    cases = _heads_cases(seeded_rng())

    def body():
        for key, x, num_heads in cases:
            label = say(key, x=shape_text(*x.shape), n=num_heads)
            expected = _split_heads_reference(x, num_heads)
            compare(call_checked(fn, label, x.copy(), num_heads), expected, label, say("heads"))
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_split_heads", fn, body, lang)


_MERGE_HEADS = Messages(
    en={
        "arange": "heads {h} split by tfm.MultiHeadAttention from x = np.arange(48).reshape{x}",
        "random": "random heads {h} split by tfm.MultiHeadAttention from x {x}",
        "single": "batch 1 with one position, heads {h} split from x {x}",
        "one_head": "one head, heads {h} split from x {x}",
        "merged": "the merged output",
        "correct": "correct: {fn} undoes tfm.MultiHeadAttention's split, (B, N, T, H) -> (B, T, N*H), on {n} inputs",
    },
    ko={
        "arange": "tfm.MultiHeadAttention이 x = np.arange(48).reshape{x}에서 나눈 헤드 {h}",
        "random": "tfm.MultiHeadAttention이 무작위 x {x}에서 나눈 헤드 {h}",
        "single": "배치 1, 위치 하나, x {x}에서 나눈 헤드 {h}",
        "one_head": "헤드 하나, x {x}에서 나눈 헤드 {h}",
        "merged": "합친 출력",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.MultiHeadAttention의 나누기를 되돌립니다, "
                   "(B, N, T, H) -> (B, T, N*H)",
    },
)


def check_merge_heads(fn, *, lang=None):
    """Multi-head attention's `Concat(head_1, ..., head_h)` (§3.2.2): the heads' outputs put back side by side
    for every position, before `W^O`.

    Contract: `fn(heads) -> merged`
        heads: float `(B, N, T, H)`, what each head computed for each position.
        Returns float `(B, T, N * H)`: `merged[b, t]` is `heads[b, 0, t]`, then `heads[b, 1, t]`, ... (the
        inverse of `check_split_heads`'s split).

    Checked against `tfm.MultiHeadAttention`: the heads are the layer's own split (`_split_heads`) of an input
    `x`, and merging them must give `x` back, as the end of the layer's `call` does (transpose, then reshape),
    on `np.arange(48)` shaped `(2, 3, 8)` with 2 heads, random inputs with 3 heads, batch 1 with one position,
    and one head.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def merge_heads(heads):
        ...     b, n, t, h = heads.shape
        ...     return heads.transpose(0, 2, 1, 3).reshape(b, t, n * h)   # (B, N, T, H) -> (B, T, N, H) -> (B, T, N*H)
        >>> check_merge_heads(merge_heads)
        correct: merge_heads undoes tfm.MultiHeadAttention's split, (B, N, T, H) -> (B, T, N*H), on 4 inputs.
        True
    """
    lang = validate_language(lang)
    say = _MERGE_HEADS.sentences(lang)
    cases = _heads_cases(seeded_rng())

    def body():
        for key, x, num_heads in cases:
            heads = _split_heads_reference(x, num_heads)
            label = say(key, h=shape_text(*heads.shape), x=shape_text(*x.shape))
            compare(call_checked(fn, label, heads.copy()), x, label, say("merged"))
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_merge_heads", fn, body, lang)
