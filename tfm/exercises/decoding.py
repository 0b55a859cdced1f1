"""The checkers of the decoding exercises (notebook 08): GNMT's length penalty, one beam-search step
(§6.1) and BLEU's clipped n-gram precision, with the references tests check them against."""

import collections

import numpy as np

from tfm.exercises.checking import (
    Mismatch,
    as_array,
    call_checked,
    compare,
    function_name,
    run_checker,
    seeded_rng,
)
from tfm.exercises.messages import Messages, validate_language

# ---------------------------------------------------------------------------
# 8-10. Decoding and BLEU (notebook 08)
# ---------------------------------------------------------------------------
_LENGTH_PENALTY = Messages(
    en={
        "point": "length={length}, alpha={alpha}",
        "not_one": "on {label}, expected one number, got shape {shape}",
        "penalty": "the penalty",
        "correct": "correct: {fn} matches tfm's length_penalty on {n} inputs",
    },
    ko={
        "point": "length={length}, alpha={alpha}",
        "not_one": "{label}에서 숫자 하나를 돌려주어야 하는데 받은 값의 shape은 {shape}입니다",
        "penalty": "길이 패널티",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm의 length_penalty 결과와 일치합니다",
    },
)


def check_length_penalty(fn, *, lang=None):
    """GNMT's length penalty `lp(Y) = ((5 + |Y|) / 6)^alpha` (Wu et al., 2016, eq. 14; §6.1: alpha = 0.6).

    Contract: `fn(length, alpha) -> float`, `length` a Python int `|Y| >= 1`, `alpha` a float >= 0.
    Beam search ranks finished hypotheses by `log P(Y | X) / lp(Y)`.

    Checked against `tfm.decoding.search_steps.length_penalty` for lengths 1 to 50 and alpha 0, 0.6 and 1.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> check_length_penalty(lambda length, alpha: ((5 + length) / 6) ** alpha)
        correct: ...
        True
    """
    from tfm.decoding.search_steps import length_penalty

    lang = validate_language(lang)
    say = _LENGTH_PENALTY.sentences(lang)

    def body():
        cases = [(1, 0.6), (7, 0.6), (50, 0.6), (10, 0.0), (3, 1.0), (2, 0.2)]
        for length, alpha in cases:
            label = say("point", length=length, alpha=alpha)
            got = as_array(call_checked(fn, label, length, alpha), label, say("penalty"))
            if got.size != 1:
                raise Mismatch(say("not_one", label=label, shape=tuple(got.shape)))
            expected = float(length_penalty(length, alpha).numpy())
            compare(got.reshape(()), np.float64(expected), label, say("penalty"), rtol=1e-5, atol=1e-6)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_length_penalty", fn, body, lang)


def beam_step_reference(log_probs, token_log_probs):
    """NumPy twin of the ranking rule in `tfm.decoding.beam.beam_search` (see `check_beam_step`).

    Args:
        log_probs: float `(B, K)`, the live hypotheses' log-probabilities.
        token_log_probs: float `(B, K, V)`, each hypothesis' next-token log-probabilities.

    Returns:
        `(scores, beams, tokens)`, three `(B, K)` arrays, best first.

    Example:
        >>> log_probs = np.log([[0.6, 0.4]])                                  # B=1, K=2
        >>> with np.errstate(divide="ignore"):                               # log(0) = -inf: a token never chosen
        ...     token_log_probs = np.log([[[0.5, 0.5, 0.0], [0.1, 0.1, 0.8]]])  # V=3
        >>> scores, beams, tokens = beam_step_reference(log_probs, token_log_probs)
        >>> np.exp(scores).round(2).tolist(), beams.tolist(), tokens.tolist()   # 0.4 * 0.8 beats 0.6 * 0.5
        ([[0.32, 0.3]], [[1, 0]], [[2, 0]])
    """
    log_probs, token_log_probs = np.asarray(log_probs, "float64"), np.asarray(token_log_probs, "float64")
    batch, k, vocab = token_log_probs.shape
    candidates = (log_probs[:, :, None] + token_log_probs).reshape(batch, k * vocab)  # (B, K, V) -> (B, K*V)
    # Ties go to the lower flat index, as tf.math.top_k breaks them.
    order = np.argsort(-candidates, axis=-1, kind="stable")[:, :k]  # (B, K)
    return np.take_along_axis(candidates, order, axis=-1), order // vocab, order % vocab


_BEAM_STEP = Messages(
    en={
        "first": "the first step (only beam 0 live), batch 1, K=3, V=6",
        "random": "random beams, B=2, K=3, V=7",
        "greedy": "K=1 (greedy), B=2, V=5",
        "k_equals_v": "K=V=4, batch 1",
        "not_triple": "on {label}, expected three arrays (scores, beams, tokens), got {type}{length}",
        "length": " of length {n}",
        "scores": "scores",
        "beams": "beams",
        "tokens": "tokens",
        "correct": "correct: {fn} ranks the K * V extensions as tfm's beam search does on {n} inputs",
    },
    ko={
        "first": "첫 스텝 (빔 0만 살아 있음), 배치 1, K=3, V=6",
        "random": "무작위 빔, B=2, K=3, V=7",
        "greedy": "K=1 (그리디 디코딩), B=2, V=5",
        "k_equals_v": "K=V=4, 배치 1",
        "not_triple": "{label}에서 배열 세 개 (scores, beams, tokens)를 돌려주어야 하는데 "
                      "받은 값은 {type}{length}입니다",
        "length": " (길이 {n})",
        "scores": "점수(scores)",
        "beams": "빔 번호(beams)",
        "tokens": "토큰(tokens)",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 K * V개의 확장을 tfm의 빔 서치와 같은 순서로 고릅니다",
    },
)


def check_beam_step(fn, *, lang=None):
    """One step of beam search (§6.1, beam size 4): extend every hypothesis, keep the K best.

    Contract: `fn(log_probs, token_log_probs) -> (scores, beams, tokens)`
        log_probs: float `(B, K)`, `log P(y_1..t | x)` of the K live hypotheses of each sentence
            (`-inf` for an empty slot: at the first step only beam 0 is live).
        token_log_probs: float `(B, K, V)`, `log P(y_t+1 = v | y_1..t, x)` for each hypothesis.
        Returns three `(B, K)` arrays, best first for each sentence: the K best of all `K * V`
        extensions ranked together (not per beam), `scores = log_probs[b, beam] + token_log_probs[b, beam, token]`,
        `beams` int, the hypothesis each extends, and `tokens` int, the id it appends.
    No length penalty here: tfm ranks live hypotheses by `log P` alone and divides by `lp(Y)` only
    when a hypothesis ends (`check_length_penalty`).

    Checked against a NumPy reference of `tfm.decoding.beam_search`'s rule (flat top-K over `K * V`,
    `beam = index // V`, `token = index % V`) on: the first step of a batch of 1; random beams; K = 1
    (greedy); and K = V.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> check_beam_step(beam_step_reference)
        correct: beam_step_reference ranks the K * V extensions as tfm's beam search does on ... inputs.
        True
    """
    lang = validate_language(lang)
    say = _BEAM_STEP.sentences(lang)
    rng = seeded_rng()

    def log_softmax(x):
        x = x - x.max(axis=-1, keepdims=True)
        return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))

    def case(b, k, v, first=False):
        token_log_probs = log_softmax(2.0 * rng.normal(size=(b, k, v))).astype("float32")
        if first:
            log_probs = np.tile(np.array([0.0] + [-np.inf] * (k - 1), "float32"), (b, 1))
        else:
            log_probs = -np.sort(rng.uniform(0.5, 6.0, size=(b, k)), axis=-1).astype("float32")
        return log_probs, token_log_probs

    def body():
        cases = [
            (say("first"), case(1, 3, 6, first=True)),
            (say("random"), case(2, 3, 7)),
            (say("greedy"), case(2, 1, 5)),
            (say("k_equals_v"), case(1, 4, 4)),
        ]
        for label, (log_probs, token_log_probs) in cases:
            result = call_checked(fn, label, log_probs.copy(), token_log_probs.copy())
            if not isinstance(result, (tuple, list)) or len(result) != 3:
                length = say("length", n=len(result)) if isinstance(result, (tuple, list)) else ""
                raise Mismatch(say("not_triple", label=label, type=type(result).__name__, length=length))
            scores, beams, tokens = beam_step_reference(log_probs, token_log_probs)
            compare(result[0], scores, label, say("scores"), rtol=1e-5, atol=1e-5)
            compare(result[1], beams, label, say("beams"), exact=True)
            compare(result[2], tokens, label, say("tokens"), exact=True)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_beam_step", fn, body, lang)


def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def clipped_precision_reference(hypothesis, references, n):
    """`(numerator, denominator)` of BLEU's modified n-gram precision (Papineni et al., 2002, §2.1).

    Each hypothesis n-gram counts at most as often as it occurs in the one reference where it
    occurs most (its count is clipped by the max over references, not their sum).

    Args:
        hypothesis: list of str tokens.
        references: list of lists of str tokens.
        n: int. The n-gram order.

    Example:
        >>> hypothesis = "the the the the the the the".split()   # Papineni et al.'s first example
        >>> references = ["the cat is on the mat".split(), "there is a cat on the mat".split()]
        >>> clipped_precision_reference(hypothesis, references, 1)
        (2, 7)
    """
    counts = _ngrams(list(hypothesis), n)
    most = collections.Counter()
    for reference in references:
        for gram, count in _ngrams(list(reference), n).items():
            most[gram] = max(most[gram], count)
    return sum(min(count, most[gram]) for gram, count in counts.items()), sum(counts.values())


_BLEU_CASES = [
    # Papineni et al., 2002, §2.1, example 2: "the" clipped to 2 of 7.
    ("the the the the the the the", ["the cat is on the mat", "there is a cat on the mat"]),
    # Papineni et al., §2.1, example 1 (candidate 1 and its three references).
    ("It is a guide to action which ensures that the military always obeys the commands of the party",
     ["It is a guide to action that ensures that the military will forever heed Party commands",
      "It is the guiding principle which guarantees the military forces always being under the command of the Party",
      "It is the practical guide for the army always to heed the directions of the party"]),
    # Clipped by the max over references (2 of "a"), not their sum (3).
    ("a a a b a b", ["a a b c", "a c b b"]),
    # Shorter than n for n >= 3: no n-grams at all, (0, 0).
    ("a cat", ["a cat sat"]),
    # One word, one reference that lacks it.
    ("dog", ["cat"]),
]


_CLIPPED_PRECISION = Messages(
    en={
        "case": "n={n}, hypothesis {hypothesis}",
        "not_pair": "on {label}, expected a pair (numerator, denominator), got {type}",
        "numerator": "the numerator",
        "denominator": "the denominator",
        "wrong": "on {label} with {references} reference(s), {what} is wrong: expected {expected}, got {got}",
        "correct": "correct: {fn} gives BLEU's clipped counts for n = 1..4 on {count} hypotheses",
    },
    ko={
        "case": "n={n}, 가설 {hypothesis}",
        "not_pair": "{label}에서 (numerator, denominator) 한 쌍을 돌려주어야 하는데 받은 값은 {type}입니다",
        "numerator": "분자(numerator)",
        "denominator": "분모(denominator)",
        "wrong": "{label}, 참조 번역 {references}개에서 {what} 값이 틀렸습니다: {expected}이어야 하는데 {got}입니다",
        "correct": "정답입니다: {fn} 함수가 가설 {count}개와 n = 1..4 모두에서 BLEU의 클리핑된 n-gram 개수를 맞게 "
                   "계산합니다",
    },
)


def check_clipped_precision(fn, *, lang=None):
    """BLEU's clipped (modified) n-gram precision p_n for one hypothesis (Papineni et al., 2002, §2.1).

    Contract: `fn(hypothesis, references, n) -> (numerator, denominator)`
        hypothesis: list of str tokens; references: list of lists of str tokens; n: int 1..4.
        numerator: how many of the hypothesis' n-grams match, each n-gram's count clipped to the
            most times it occurs in any single reference; denominator: how many n-grams the
            hypothesis has (`max(0, len(hypothesis) - n + 1)`). Both ints.
    BLEU (`tfm.decoding.bleu`, through sacreBLEU) sums these over the corpus for n = 1..4.

    Checked against a Counter reference (which tests/test_exercises.py checks against sacreBLEU's
    counts) for n = 1..4 on Papineni's two examples, a clip by the max over references, a hypothesis
    shorter than n, and a one-word miss.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> check_clipped_precision(clipped_precision_reference)
        correct: ...
        True
    """
    lang = validate_language(lang)
    say = _CLIPPED_PRECISION.sentences(lang)

    def body():
        for hypothesis, references in _BLEU_CASES:
            hyp, refs = hypothesis.split(), [r.split() for r in references]
            for n in (1, 2, 3, 4):
                short = hypothesis if len(hypothesis) <= 40 else hypothesis[:37] + "..."
                label = say("case", n=n, hypothesis=repr(short))
                result = call_checked(fn, label, list(hyp), [list(r) for r in refs], n)
                if not isinstance(result, (tuple, list)) or len(result) != 2:
                    raise Mismatch(say("not_pair", label=label, type=type(result).__name__))
                expected = clipped_precision_reference(hyp, refs, n)
                for what, got, want in zip((say("numerator"), say("denominator")), result, expected):
                    got = as_array(got, label, what)
                    if got.size != 1 or float(got.reshape(())) != want:
                        raise Mismatch(say("wrong", label=label, references=len(refs), what=what, expected=want,
                                           got=got.tolist()))
        return say("correct", fn=function_name(fn), count=len(_BLEU_CASES))

    return run_checker("check_clipped_precision", fn, body, lang)
