"""The checkers of the batching exercises: teacher forcing's target shift (notebook 01) and the batch sizes of
token-budget buckets split over replicas (notebook 09), both what `tfm.data.batching` does."""

import numpy as np

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
# 12. The target shift (notebook 01)
# ---------------------------------------------------------------------------
def _target_shift_reference(target_ids):
    """tfm.data's teacher forcing (`tfm.data.batching.teacher_forcing`) on each row's real tokens, 0-padded to n + 1."""
    from keras import ops

    from tfm.data.batching import teacher_forcing
    from tfm.special_tokens import PAD_ID

    batch, n = target_ids.shape
    target_in = np.full((batch, n + 1), PAD_ID, "int32")
    target_out = np.full((batch, n + 1), PAD_ID, "int32")
    for i, row in enumerate(target_ids):
        tokens = row[: int(np.count_nonzero(row != PAD_ID))]  # rows are right-padded
        (_, shifted_in), shifted_out = teacher_forcing(np.zeros((0,), "int32"), tokens.astype("int32"))
        target_in[i, : len(tokens) + 1] = ops.convert_to_numpy(shifted_in)
        target_out[i, : len(tokens) + 1] = ops.convert_to_numpy(shifted_out)
    return target_in, target_out


_TARGET_SHIFT = Messages(
    en={
        "mixed": "rows of 3 and 5 tokens, target_ids {shape}",
        "single": "batch 1 with one token, target_ids {shape}",
        "all_padded": "every row padded (2 and 1 tokens), target_ids {shape}",
        "random": "random rows of {lengths} tokens, target_ids {shape}",
        "not_pair": "on {label}, expected a pair (target_in, target_out), got {type}{length}",
        "length": " of length {n}",
        "correct": "correct: {fn} matches tfm.data's teacher forcing (START + y, y + END, then padding) on {n} "
                   "batches",
    },
    ko={
        "mixed": "토큰 3개와 5개인 행, target_ids {shape}",
        "single": "배치 1, 토큰 하나, target_ids {shape}",
        "all_padded": "모든 행에 패딩 (토큰 2개와 1개), target_ids {shape}",
        "random": "토큰 {lengths}개인 무작위 행, target_ids {shape}",
        "not_pair": "{label}에서 (target_in, target_out) 한 쌍을 돌려주어야 하는데 받은 값은 {type}{length}입니다",
        "length": " (길이 {n})",
        "correct": "정답입니다: {fn} 함수가 배치 {n}개 모두에서 tfm.data의 교사 강요 입력과 레이블(START + y, y + END, "
                   "그 뒤 패딩) 결과와 일치합니다",
    },
)


def check_target_shift(fn, *, lang=None):
    """Teacher forcing's shifted target (Sutskever et al., 2014; Vaswani et al., 2017, §3.1: "the output
    embeddings are offset by one position"): decoder input `START y`, labels `y END`, on padded rows.

    Contract: `fn(target_ids) -> (target_in, target_out)`
        target_ids: int `(B, n)`, each row a target's subword ids `y_1 ... y_k` (ids >= 4, no START / END)
            followed by `PAD_ID` (0) up to `n`; `1 <= k <= n`.
        Returns two int `(B, n + 1)` arrays: `target_in` = `START_ID` (2), `y_1 ... y_k`, then 0s;
        `target_out` = `y_1 ... y_k`, `END_ID` (3), then 0s. END goes right after the last real token,
        not after the padding, and never into `target_in`.

    Checked against tfm.data's own shift (`tfm.data.batching.teacher_forcing`, which every batching function
    applies to each pair before padding) on rows of different lengths, batch 1 with one token, a batch where
    every row is padded, and random rows.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every batch matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def target_shift(target_ids):
        ...     lengths = (target_ids != 0).sum(axis=1)                               # (B,) real tokens per row
        ...     rows = np.arange(len(target_ids))
        ...     target_in = np.pad(target_ids, ((0, 0), (1, 0)), constant_values=2)   # START y, (B, n + 1)
        ...     target_out = np.pad(target_ids, ((0, 0), (0, 1)))                     # y 0, (B, n + 1)
        ...     target_out[rows, lengths] = 3                                         # END after the last token
        ...     return target_in, target_out
        >>> check_target_shift(target_shift)
        correct: target_shift matches tfm.data's teacher forcing (START + y, y + END, then padding) on 4 batches.
        True
    """
    lang = validate_language(lang)
    say = _TARGET_SHIFT.sentences(lang)
    rng = seeded_rng()
    lengths = [7, 1, 4, 6]
    random_ids = rng.integers(4, 100, size=(4, 7))
    random_ids = np.where(np.arange(7)[None, :] < np.array(lengths)[:, None], random_ids, 0)
    batches = [
        ("mixed", np.array([[5, 6, 7, 0, 0], [8, 9, 10, 11, 12]])),
        ("single", np.array([[7]])),
        ("all_padded", np.array([[4, 5, 0], [6, 0, 0]])),
        ("random", random_ids),
    ]

    def body():
        for key, target_ids in batches:
            target_ids = target_ids.astype("int32")
            label = say(key, shape=shape_text(*target_ids.shape), lengths=", ".join(map(str, lengths)))
            expected_in, expected_out = _target_shift_reference(target_ids)
            result = call_checked(fn, label, target_ids.copy())
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                length = say("length", n=len(result)) if isinstance(result, (tuple, list)) else ""
                raise Mismatch(say("not_pair", label=label, type=type(result).__name__, length=length))
            compare(result[0], expected_in, label, "target_in", exact=True)
            compare(result[1], expected_out, label, "target_out", exact=True)
        return say("correct", fn=function_name(fn), n=len(batches))

    return run_checker("check_target_shift", fn, body, lang)


# ---------------------------------------------------------------------------
# 13. Token-budget batch sizes over replicas (notebook 09)
# ---------------------------------------------------------------------------
_BUCKET_BATCH_SIZES = Messages(
    en={
        "paper": "bounds bucket_boundaries(256), tokens_per_batch={budget}, replicas={replicas}",
        "bounds": "bounds {bounds}, tokens_per_batch={budget}, replicas={replicas}",
        "sizes": "the batch sizes",
        "count": "on {label}, expected one batch size per bound ({expected}), got {got}",
        "wrong": "on {label}, the batch size of bucket {i} (L={bound}) should be {expected}, got {got}",
        "correct": "correct: {fn} matches tfm.data.bucket_batch_sizes on {n} budgets",
    },
    ko={
        "paper": "bounds bucket_boundaries(256), tokens_per_batch={budget}, replicas={replicas}",
        "bounds": "bounds {bounds}, tokens_per_batch={budget}, replicas={replicas}",
        "sizes": "배치 크기",
        "count": "{label}에서 경계마다 배치 크기 하나씩({expected}개)을 돌려주어야 하는데 {got}개입니다",
        "wrong": "{label}에서 버킷 {i} (L={bound})의 배치 크기는 {expected}이어야 하는데 {got}입니다",
        "correct": "정답입니다: {fn} 함수가 토큰 예산 {n}가지 모두에서 tfm.data.bucket_batch_sizes 결과와 일치합니다",
    },
)


def check_bucket_batch_sizes(fn, *, lang=None):
    """The batch size of each length bucket under §5.1's token budget ("approximately 25000 source tokens and
    25000 target tokens" per batch), when the batch is split over replicas (§5.2: 8 GPUs).

    Contract: `fn(bounds, tokens_per_batch, replicas=1) -> batch sizes`
        bounds: list of int, the buckets' length bounds `L` (a batch of bucket `i` is padded to at most
            `bounds[i]` tokens per side).
        tokens_per_batch: int, the budget of the *global* batch, all replicas together.
        replicas: int, the devices the global batch is split over.
        Returns one int per bound: `tokens_per_batch // L` pairs (so `B * L <= tokens_per_batch`), rounded
        down to a multiple of `replicas` so that every replica gets an equal share, but never fewer than
        `replicas` (one pair each, even where one pair of length `L` is over the budget).

    Checked against `tfm.data.bucket_batch_sizes` (what `tfm.data.bucket_by_token_budget` batches with
    `batch_multiple=replicas`) on the paper's budget with 1 and 8 replicas, 3 replicas with a small
    budget, and a budget that a long bucket's single pair per replica exceeds.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every budget matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def bucket_batch_sizes(bounds, tokens_per_batch, replicas=1):
        ...     return [tokens_per_batch // bound for bound in bounds]           # forgets the replicas
        >>> check_bucket_batch_sizes(bucket_batch_sizes)
        On bounds bucket_boundaries(256), tokens_per_batch=25000, replicas=8, the batch size of bucket 1 (L=2) ...
        False
    """
    from tfm.data.batching import bucket_batch_sizes, bucket_boundaries

    lang = validate_language(lang)
    say = _BUCKET_BATCH_SIZES.sentences(lang)
    paper = bucket_boundaries(256)
    budgets = [
        (paper, 25_000, 1, "paper"),
        (paper, 25_000, 8, "paper"),
        ([1, 2, 4, 8, 16, 32, 64, 100], 300, 3, "bounds"),
        ([8, 16, 32, 48, 64], 64, 4, "bounds"),
    ]

    def body():
        for bounds, budget, replicas, key in budgets:
            label = say(key, bounds=list(bounds), budget=budget, replicas=replicas)
            got = as_array(call_checked(fn, label, list(bounds), budget, replicas), label, say("sizes")).reshape(-1)
            expected = bucket_batch_sizes(bounds, budget, replicas)
            if got.size != len(expected):
                raise Mismatch(say("count", label=label, expected=len(expected), got=got.size))
            for i, (bound, want, have) in enumerate(zip(bounds, expected, got)):
                if have != want:
                    raise Mismatch(say("wrong", label=label, i=i, bound=bound, expected=want, got=format_value(have)))
        return say("correct", fn=function_name(fn), n=len(budgets))

    return run_checker("check_bucket_batch_sizes", fn, body, lang)
