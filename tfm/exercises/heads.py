"""The checkers of the heads exercises (notebook 04): multi-head attention's split of a projection into heads,
`(B, T, N*H) -> (B, N, T, H)`, and the merge that undoes it before `W^O` (§3.2.2)."""

import numpy as np
from keras import ops

from tfm.exercises.checking import (
    call_checked,
    compare,
    function_name,
    run_checker,
    seeded_rng,
    shape_text,
)
from tfm.exercises.messages import Messages, validate_language


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
    """`tfm.MultiHeadAttention.split_heads`: `(B, T, N*H) -> (B, N, T, H)`, as the layer splits its projections."""
    from tfm.layers.multi_head_attention import MultiHeadAttention

    head_dim = x.shape[-1] // num_heads
    layer = MultiHeadAttention(num_heads=num_heads, key_dim=head_dim, dtype="float32")
    return ops.convert_to_numpy(layer.split_heads(x, head_dim))


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
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.MultiHeadAttention과 같이 "
                   "(B, T, N*H)를 (B, N, T, H)로 나눕니다",
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

    Checked against `tfm.MultiHeadAttention.split_heads` (the layer's own split) on `np.arange(48)` shaped
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
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.MultiHeadAttention의 나누기를 되돌려 "
                   "(B, N, T, H)를 (B, T, N*H)로 합칩니다",
    },
)


def check_merge_heads(fn, *, lang=None):
    """Multi-head attention's `Concat(head_1, ..., head_h)` (§3.2.2): the heads' outputs put back side by side
    for every position, before `W^O`.

    Contract: `fn(heads) -> merged`
        heads: float `(B, N, T, H)`, what each head computed for each position.
        Returns float `(B, T, N * H)`: `merged[b, t]` is `heads[b, 0, t]`, then `heads[b, 1, t]`, ... (the
        inverse of `check_split_heads`'s split).

    Checked against `tfm.MultiHeadAttention`: the heads are the layer's own split (`split_heads`) of an input
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
