"""The checkers of the attention exercises: the score functions of Bahdanau and Luong (notebook 03) and
scaled dot-product attention, eq. 1 (notebook 04).

The other checkers of notebooks 02-06 live beside it: the padding and causal masks in `tfm.exercises.masks`, the
heads' split and merge in `tfm.exercises.heads`, the positional encoding in `tfm.exercises.positional`."""

import numpy as np
from keras import ops

from tfm.exercises.checking import (
    Mismatch,
    call_checked,
    compare,
    function_name,
    run_checker,
    seeded_rng,
    shape_text,
)
from tfm.exercises.messages import Messages, validate_language


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
        "float16": "로짓이 큰 float16 입력, 쿼리 {q}, 패딩 마스크 {m}",
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
