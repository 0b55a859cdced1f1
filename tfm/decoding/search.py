"""Greedy and beam search with a key/value cache (Vaswani et al., 2017, §6.1).

    beam_search(model, source_ids, beam_size=4)        # ids in, a SearchResult out (a tf.function body)
    greedy_search(model, source_ids)
    search(model, source_ids, beam_size=1)              # greedy when beam_size == 1

§6.1: "we used beam search with a beam size of 4 and length penalty α = 0.6 ...
We set the maximum output length during inference to input length + 50, but
terminate early when possible." The length penalty is GNMT's (Wu et al., 2016),
`lp(Y) = ((5 + |Y|) / 6)^α`, and a finished hypothesis scores `log P(Y | X) / lp(Y)`;
`|Y|` counts the output tokens including END (as tensor2tensor, which the paper used).
Every search returns that score, greedy (beam 1) included, with the `alpha` it is given:
`SearchResult.scores` means one thing whatever the beam size.

How it runs:

- Incremental decoding. The Transformer encodes the source once, projects the
  encoder output to every decoder layer's cross-attention keys/values once per
  sentence, and at step `t` feeds only token `t`; its self-attention keys/values
  are appended to a cache that grows one position per step (`(keys, values)`
  pairs, `MultiHeadAttention`), and a sentence's k beams read one copy of the
  memory. The RNN seq2seq models carry their recurrent state instead.
- Dynamic shapes (the default): a sentence leaves the batch as soon as its search
  is decided (`tfm.decoding.batch_state`), so later steps compute only the
  sentences still being translated. Under XLA (`jit_compile=True`) and without a
  cache the search keeps static shapes instead (`static_shapes=True`): every
  buffer is allocated for `T_max` steps up front, the cache is a fixed
  `(B, 2, N, T_max, H)` written in place, decided sentences are carried along
  with their results frozen; the results are the same (tested).
- Lengths. A sentence of `n` source tokens may produce at most `n + 50` tokens
  (`max_extra_length`, the model config's), then END is forced. Sources longer
  than the model accepts (`TransformerConfig.max_length` tokens) are truncated,
  and `T_max` never exceeds the model's position table.
- Ranking: only the 2k best tokens of each beam can be among the 2k best
  continuations, so those k * 2k candidates are ranked (`_best_tokens`, with a
  two-pass top-k: TensorFlow's CPU top-k over a 10k vocabulary costs as much as
  the output projection).
- Never generated: PAD and START (their logits are masked before the softmax), nor
  any token a `constraint` forbids at that step (`tfm.decoding.constraints`; parsing's
  `TreeConstraint` keeps every hypothesis a well-formed tree, §6.3).
- Beam search keeps `k` alive and `k` finished hypotheses per sentence
  (tensor2tensor's scheme: the top `2k` continuations, the best `k` that do
  not end stay alive, those that end compete for the finished slots) and stops a
  sentence once no alive hypothesis can beat its worst finished one, even with
  the most favourable length penalty still reachable.

`use_cache=False` recomputes the decoder over the whole prefix at every step
(the TensorFlow tutorial's way); it exists for the cached == uncached test and
the speed benchmark (`benchmarks/decoding_speed.py`), and runs in graph mode only.

The models are seen through `tfm.decoding.adapters` (start / step); text in,
text out is `tfm.decoding.translator`.
"""

from typing import NamedTuple

import numpy as np
import tensorflow as tf

from tfm.config_rules import check_length_penalty
from tfm.decoding import batch_state
from tfm.decoding.adapters import as_decodable
from tfm.special_tokens import END_ID, PAD_ID, START_ID

NEG_INF = float("-inf")


class SearchResult(NamedTuple):
    """What every search returns, greedy or beam, the same fields always (a `tf.function` output too).

    Attributes:
        sequences: int32 `(B, T_max)`, the best output of each sentence: no START / END, 0-padded.
        lengths: int32 `(B,)`, its tokens (END not counted).
        scores: float32 `(B,)`, `log P(Y | X) / lp(Y)` (`lp` with the search's `alpha`, `|Y|` counting END).
        steps: int32 scalar, decoding steps run (loop iterations).
        all_sequences: int32 `(B, k, T_max)`, the `k` finished hypotheses, best first (`k` = beam size;
            greedy: `k = 1`, the best output). Zeros where fewer than `k` finished.
        all_scores: float32 `(B, k)`, their scores; `-inf` where fewer than `k` finished.

    Example:
        >>> from tfm import TransformerConfig, build_transformer
        >>> model = build_transformer(TransformerConfig.tiny(vocab_size=40, num_layers=1, max_extra_length=4))
        >>> source_ids = tf.constant([[5, 6, 7], [8, 9, 0]])   # (B, S) = (2, 3), 0-padded
        >>> result = search(model, source_ids, beam_size=3)   # T_max = S + max_extra_length + 1 (END) = 8
        >>> {name: tuple(value.shape) for name, value in result._asdict().items()}
        {'sequences': (2, 8), 'lengths': (2,), 'scores': (2,), 'steps': (), 'all_sequences': (2, 3, 8),
         'all_scores': (2, 3)}
    """

    sequences: tf.Tensor
    lengths: tf.Tensor
    scores: tf.Tensor
    steps: tf.Tensor
    all_sequences: tf.Tensor
    all_scores: tf.Tensor


def check_beam_size(beam_size, vocab_size):
    """`beam_size` as an int, or ValueError naming it: 1 <= k and 2k <= V (the search keeps the top 2k).

    Example:
        >>> check_beam_size(4, vocab_size=40)
        4
        >>> check_beam_size(30, vocab_size=40)
        Traceback (most recent call last):
        ValueError: beam_size=30 needs a vocabulary of at least 60 ids, got 40; use a beam size of at most 20
    """
    k = int(beam_size)
    if k < 1:
        raise ValueError(f"beam_size={beam_size} must be >= 1")
    if 2 * k > vocab_size:
        raise ValueError(f"beam_size={k} needs a vocabulary of at least {2 * k} ids, got {vocab_size}; "
                         f"use a beam size of at most {vocab_size // 2}")
    return k


def length_penalty(length, alpha=0.6):
    """GNMT's length penalty `((5 + |Y|) / 6)^α` (Wu et al., 2016, eq. 14; §6.1 uses α = 0.6).

    Args:
        length: int or int/float tensor, `|Y|` (END included).
        alpha: float. `0` disables the penalty (`lp = 1`).

    Returns:
        float32 tensor shaped like `length`.

    Example:
        >>> round(float(length_penalty(7, alpha=0.6)), 4)   # ((5 + 7) / 6)^0.6 = 2^0.6
        1.5157
    """
    length = tf.cast(length, tf.float32)
    return tf.pow((5.0 + length) / 6.0, tf.cast(alpha, tf.float32))


# ---------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------
def _prepare_source(decodable, source_ids, max_extra_length):
    """Truncate, then the static step budget `T_max` and each sentence's output limit.

    Returns:
        `(source_ids (B, S'), lengths (B,), limits (B,), max_steps)`: sentence `i`
        may emit at most `limits[i]` tokens before END is forced; the loop runs at
        most `max_steps = max(limits) + 1` steps (the `+ 1` is END).
    """
    source_ids = tf.convert_to_tensor(source_ids)
    source_ids = tf.cast(source_ids, tf.int32)
    if decodable.max_source_length is not None:
        source_ids = source_ids[:, : decodable.max_source_length]
    extra = decodable.default_max_extra_length if max_extra_length is None else int(max_extra_length)
    if extra < 0:
        raise ValueError(f"max_extra_length={extra} must be >= 0")
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(source_ids, PAD_ID), tf.int32), axis=1)  # (B,)
    # A static budget from the padded width: the same for every batch of this shape (XLA-friendly).
    max_steps = tf.shape(source_ids)[1] + extra + 1
    if decodable.max_steps is not None:
        max_steps = tf.minimum(max_steps, decodable.max_steps)
    limits = tf.minimum(lengths + extra, max_steps - 1)  # (B,)
    return source_ids, lengths, limits, max_steps


def _top_k(values, k):
    """`tf.math.top_k(values, k)` over the last axis of `(N, V)`, in two cheaper passes when V is large.

    TensorFlow's CPU top-k costs about as much as the vocabulary projection on a 10k
    vocabulary. The k largest entries lie in the k chunks (of ~sqrt(V) entries) with the
    largest maxima, so: each chunk's maximum, the best k chunks, the best k of their
    entries. Ties resolve to the lower index, as in `tf.math.top_k`.
    """
    vocab = values.shape[-1]
    chunk = max(int((vocab or 0) ** 0.5), 1)
    if vocab is None or k * chunk * 4 > vocab:  # small vocabularies: one pass is as cheap
        return tf.math.top_k(values, k=k)
    groups = -(-vocab // chunk)
    if groups * chunk != vocab:  # pad the last chunk with -inf
        values = tf.pad(values, [[0, 0], [0, groups * chunk - vocab]], constant_values=NEG_INF)
    chunks = tf.reshape(values, [-1, groups, chunk])  # (N, V) -> (N, G, C)
    _, best = tf.math.top_k(tf.reduce_max(chunks, axis=-1), k=k)  # (N, k) chunk indices
    best = tf.sort(best, axis=-1)  # in index order, so ties keep preferring lower ids
    candidates = tf.reshape(tf.gather(chunks, best, axis=1, batch_dims=1), [-1, k * chunk])  # (N, k*C)
    top, position = tf.math.top_k(candidates, k=k)  # (N, k)
    ids = tf.gather(best, position // chunk, axis=1, batch_dims=1) * chunk + position % chunk
    return top, ids


def _best_tokens(logits, index, limits, n, allowed=None):
    """The `n` most likely next tokens of each row: float32 log-probabilities and ids, `(N, n)` each.

    PAD and START are never chosen; past its limit a row offers END only (log-probability 0).
    `allowed` (bool `(N, V)`, a constraint's) bans every other token too, and the softmax
    renormalises over the tokens left; a row with none left may end. The log-probabilities
    are computed for the chosen tokens alone.
    """
    logits = tf.cast(logits, tf.float32)
    vocab = logits.shape[-1] or tf.shape(logits)[-1]
    ids = tf.range(vocab)[tf.newaxis, :]  # (1, V)
    banned = tf.logical_or(tf.equal(ids, PAD_ID), tf.equal(ids, START_ID))
    if allowed is not None:
        nothing = tf.logical_not(tf.reduce_any(allowed, axis=1, keepdims=True))  # (N, 1)
        allowed = tf.logical_or(allowed, tf.logical_and(nothing, tf.equal(ids, END_ID)))
        banned = tf.logical_or(banned, tf.logical_not(allowed))
    logits = logits + tf.where(banned, NEG_INF, 0.0)  # (N, V)
    if n == 1:
        tokens = tf.argmax(logits, axis=-1, output_type=tf.int32)[:, tf.newaxis]  # (N, 1)
    else:
        _, tokens = _top_k(logits, n)  # (N, n), ranked by logit
    # One fused softmax over the vocabulary (about half the time of a log-softmax on CPU), then the
    # log of the chosen tokens' probabilities only.
    log_probs = tf.math.log(tf.gather(tf.nn.softmax(logits, axis=-1), tokens, axis=1, batch_dims=1))
    forced = tf.greater_equal(index, limits)[:, tf.newaxis]  # (N, 1): limit reached, END only
    first = tf.equal(tf.range(n), 0)[tf.newaxis, :]  # (1, n)
    log_probs = tf.where(forced, tf.where(first, 0.0, NEG_INF), log_probs)
    tokens = tf.where(tf.logical_and(forced, first), END_ID, tokens)
    return log_probs, tokens


def _write_column(buffer, column, values):
    """`buffer[..., column] = values` for a buffer that holds zeros there: `(..., L)`, `(...)`."""
    width = tf.shape(buffer)[-1]
    return buffer + tf.one_hot(column, width, dtype=buffer.dtype) * values[..., tf.newaxis]


def _finalize(sequences):
    """`(B, L)` START + tokens [+ END] + zeros -> tokens `(B, L - 1)` 0-padded, lengths `(B,)`."""
    tokens = sequences[:, 1:]
    tokens = tf.where(tf.equal(tokens, END_ID), PAD_ID, tokens)
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(tokens, PAD_ID), tf.int32), axis=1)
    return tokens, lengths


def _start_sequences(batch_shape, max_steps):
    """START then zeros: int32 `batch_shape + (max_steps + 1,)`."""
    zeros = tf.zeros(list(batch_shape) + [max_steps + 1], tf.int32)
    return _write_column(zeros, 0, tf.fill(batch_shape, START_ID))


# ---------------------------------------------------------------------------
# Greedy search
# ---------------------------------------------------------------------------
def greedy_search(model, source_ids, alpha=0.6, max_extra_length=None, use_cache=True, static_shapes=None,
                  constraint=None):
    """The most likely next token at every step, until END (or the length limit).

    Args:
        model: a `Transformer`, a `Seq2Seq`, or a decodable (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded source subwords (no START / END).
        alpha: float >= 0. Length penalty exponent of the returned scores (the choice of
            tokens does not depend on it); `0` gives `log P(Y | X)`. Defaults to `0.6` (§6.1).
        max_extra_length: int. Output limit = source length + this. Defaults to
            the model config's `max_extra_length` (50, §6.1).
        use_cache: bool. `False` recomputes the decoder over the prefix at every
            step (graph mode only; not under XLA).
        static_shapes: bool or None. True: every buffer keeps its shape for the whole
            search (what XLA needs). False: finished sentences leave the batch and the
            caches grow a position per step (faster). None: static under XLA and
            without a cache, dynamic otherwise. The results are the same.
        constraint: None or a constraint (`tfm.decoding.constraints`, e.g. `TreeConstraint`):
            only the tokens it allows are chosen.

    Returns:
        `SearchResult`: `scores` = `log P(Y | X) / lp(Y)`, as beam search's; `all_sequences`
        `(B, 1, T_max)` and `all_scores` `(B, 1)` hold the same output (k = 1).

    Example:
        >>> result = greedy_search(model, source_ids)   # the `SearchResult` example's model and (2, 3) sources
        >>> tuple(result.sequences.shape), tuple(result.all_sequences.shape)   # (B, T_max), (B, 1, T_max)
        ((2, 8), (2, 1, 8))
        >>> bool(tf.reduce_all(result.lengths <= [3 + 4, 2 + 4]))   # source length + max_extra_length
        True
    """
    decodable = as_decodable(model)
    alpha = check_length_penalty(alpha)
    static_shapes = batch_state.use_static_shapes(static_shapes, use_cache)
    source_ids, _, limits, max_steps = _prepare_source(decodable, source_ids, max_extra_length)
    batch = tf.shape(source_ids)[0]
    static, dynamic = decodable.start(source_ids, max_steps if static_shapes else None, use_cache)

    sentence = {
        "position": tf.range(batch), "limit": limits,
        "sequence": _start_sequences([batch], max_steps),  # (B, T_max + 1)
        "finished": tf.zeros([batch], tf.bool), "score": tf.zeros([batch], tf.float32),
    }
    if constraint is not None:
        sentence["constraint"] = constraint.sentence_info(source_ids)  # (B,)
    state = {"sentence": sentence, "rows": {"static": static, "dynamic": dynamic}}
    outputs = {name: tf.zeros_like(sentence[name]) for name in ("sequence", "score")}

    def cond(index, state, outputs):
        finished = state["sentence"]["finished"]
        return tf.logical_and(index < max_steps, tf.logical_not(tf.reduce_all(finished)))

    def body(index, state, outputs):
        s, rows = dict(state["sentence"]), state["rows"]
        logits, dynamic = decodable.step(s["sequence"], index, rows["static"], rows["dynamic"], use_cache)  # (b, V)
        allowed = None if constraint is None else constraint.allowed(s["sequence"], index, s["constraint"])
        token_log_probs, tokens = _best_tokens(logits, index, s["limit"], 1, allowed)  # (b, 1) each
        token_log_probs, tokens = token_log_probs[:, 0], tokens[:, 0]  # (b,)
        s["score"] += tf.where(s["finished"], 0.0, token_log_probs)
        tokens = tf.where(s["finished"], PAD_ID, tokens)
        s["sequence"] = _write_column(s["sequence"], index + 1, tokens)
        s["finished"] = tf.logical_or(s["finished"], tf.equal(tokens, END_ID))
        state = {"sentence": s, "rows": {"static": rows["static"], "dynamic": dynamic}}
        if not static_shapes:
            state, outputs = batch_state.retire(s["finished"], state, outputs, s, per_sentence=1)
        return index + 1, state, outputs

    steps, state, outputs = batch_state.while_loop(cond, body, (tf.constant(0), state, outputs), static_shapes)
    everyone = tf.ones_like(state["sentence"]["finished"])  # the sentences still in the batch at the end
    outputs = batch_state.store(outputs, state["sentence"]["position"], state["sentence"], everyone)
    tokens, lengths = _finalize(outputs["sequence"])
    scores = outputs["score"] / length_penalty(lengths + 1, alpha)  # |Y| = tokens + END
    return SearchResult(sequences=tokens, lengths=lengths, scores=scores, steps=steps,
                        all_sequences=tokens[:, tf.newaxis], all_scores=scores[:, tf.newaxis])


# ---------------------------------------------------------------------------
# Beam search
# ---------------------------------------------------------------------------
def _gather_beams(tensor, indices):
    """`tensor (B, K, ...)`, `indices (B, J)` -> `(B, J, ...)`."""
    return tf.gather(tensor, indices, axis=1, batch_dims=1)


def _sentence_done(index, alive_log_probs, finished_scores, limits, alpha, fill=False):
    """(b,) True where no alive hypothesis can still beat the worst finished one (with `fill`,
    and all `k` finished slots are taken: the k best, not only the best, are decided)."""
    # Alive log-probs (<= 0) only fall as tokens are added, so dividing the best one by the
    # largest penalty still reachable (at the limit for alpha >= 0, now for alpha < 0) bounds
    # any score an alive hypothesis can finish with.
    reachable_lp = tf.maximum(length_penalty(limits + 1, alpha), length_penalty(index + 1, alpha))  # (b,)
    best_alive = alive_log_probs[:, 0] / reachable_lp  # (b,)
    is_finished = finished_scores > NEG_INF
    worst_finished = tf.reduce_min(tf.where(is_finished, finished_scores, np.inf), axis=1)  # (b,)
    any_finished = (tf.reduce_all if fill else tf.reduce_any)(is_finished, axis=1)
    return tf.logical_or(tf.logical_and(any_finished, worst_finished >= best_alive),
                         tf.equal(best_alive, NEG_INF))


def _keep_decided(decided, old, new):
    """`new`, except the rows of sentences already `decided (b,)`, which keep `old`."""
    return tf.nest.map_structure(
        lambda o, n: tf.where(tf.reshape(decided, [-1] + [1] * (n.shape.rank - 1)), o, n), old, new)


def beam_search(model, source_ids, beam_size=4, alpha=0.6, max_extra_length=None, use_cache=True,
                return_all=False, static_shapes=None, constraint=None):
    """Beam search with the GNMT length penalty (§6.1: beam 4, α = 0.6).

    Args:
        model: a `Transformer`, a `Seq2Seq`, or a decodable (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded source subwords (no START / END).
        beam_size: int. `k`.
        alpha: float >= 0. Length penalty exponent; `0` ranks by `log P(Y | X)`.
        max_extra_length: int. Output limit = source length + this (default: the
            model config's, 50).
        use_cache: bool. As in `greedy_search`.
        return_all: bool. Run until all `k` finished hypotheses are decided, not only the
            best, so that `all_sequences` / `all_scores` are the `k` best. Without it the
            search stops a sentence once its best is decided, and its other slots hold what
            had finished by then.
        static_shapes: bool or None. As in `greedy_search`: dynamic shapes let a
            sentence leave the batch once its search is decided. The results are the same
            (a decided sentence keeps its state in both).
        constraint: None or a constraint (`tfm.decoding.constraints`): every hypothesis
            continues only with the tokens it allows (§6.3's trees: `TreeConstraint`).

    Returns:
        `SearchResult`: `scores` = `log P(Y | X) / lp(Y)`; `all_sequences` `(B, k, T_max)` and
        `all_scores` `(B, k)`, best first (`-inf` where fewer than `k` hypotheses finished).

    Example:
        >>> result = beam_search(model, source_ids, beam_size=4, alpha=0.6, return_all=True)   # `SearchResult`'s
        >>> tuple(result.all_sequences.shape), tuple(result.all_scores.shape)   # (B, k, T_max), (B, k)
        ((2, 4, 8), (2, 4))
        >>> bool(tf.reduce_all(result.all_scores[:, :-1] >= result.all_scores[:, 1:]))   # best first
        True
    """
    decodable = as_decodable(model)
    k = check_beam_size(beam_size, decodable.vocab_size)
    alpha = check_length_penalty(alpha)
    static_shapes = batch_state.use_static_shapes(static_shapes, use_cache)
    source_ids, _, limits, max_steps = _prepare_source(decodable, source_ids, max_extra_length)
    batch = tf.shape(source_ids)[0]

    static, dynamic = decodable.start(source_ids, max_steps if static_shapes else None, use_cache)
    static = dict(static)
    shared = static.pop("shared", {})  # one row per sentence, read by all its beams
    # Every beam of sentence b sits at row b * K + j.
    tile = lambda x: tf.repeat(x, k, axis=0)  # noqa: E731
    rows = {"static": tf.nest.map_structure(tile, static), "dynamic": tf.nest.map_structure(tile, dynamic),
            "limit": tile(limits)}  # (N = B * K, ...)
    if constraint is not None:
        rows["constraint"] = tile(constraint.sentence_info(source_ids))

    alive_seq = _start_sequences([batch, k], max_steps)  # (B, K, T_max + 1)
    results = {
        "steps": tf.zeros([batch], tf.int32), "alive_seq": alive_seq,
        # Only beam 0 is live at the start, so the first step expands one hypothesis, not k copies.
        "alive_log_probs": tf.tile(tf.constant([[0.0] + [NEG_INF] * (k - 1)]), [batch, 1]),  # (B, K)
        "finished_seq": tf.zeros_like(alive_seq), "finished_scores": tf.fill([batch, k], NEG_INF),
    }
    sentence = {"position": tf.range(batch), "limit": limits, "shared": shared, **results}
    if static_shapes:  # decided sentences stay in the batch, frozen
        sentence["decided"] = tf.zeros([batch], tf.bool)
    state = {"sentence": sentence, "rows": rows}
    outputs = dict(results)

    def cond(index, state, outputs):
        s = state["sentence"]
        if not static_shapes:  # decided sentences have left the batch
            return tf.logical_and(index < max_steps, tf.size(s["position"]) > 0)
        return tf.logical_and(index < max_steps, tf.logical_not(tf.reduce_all(s["decided"])))

    def body(index, state, outputs):
        s, r = dict(state["sentence"]), state["rows"]
        active = tf.shape(s["position"])[0]  # b: sentences still searching
        flat_seq = tf.reshape(s["alive_seq"], [active * k, -1])  # (b, K, L) -> (N, L)
        static = {**r["static"], "shared": s["shared"]} if shared else r["static"]
        logits, dynamic = decodable.step(flat_seq, index, static, r["dynamic"], use_cache)  # (N, V)
        # The 2k best continuations: even if k of them end, k remain to stay alive. They are
        # among the 2k best tokens of each beam, so only those k * 2k candidates are ranked.
        allowed = None if constraint is None else constraint.allowed(flat_seq, index, r["constraint"])
        token_log_probs, tokens = _best_tokens(logits, index, r["limit"], 2 * k, allowed)  # (N, 2K) each
        candidates = s["alive_log_probs"][:, :, tf.newaxis] + tf.reshape(token_log_probs, [active, k, 2 * k])
        candidates = tf.reshape(candidates, [active, k * 2 * k])  # (b, K, 2K) -> (b, K*2K)
        top_log_probs, top_ids = tf.math.top_k(candidates, k=2 * k)  # (b, 2K)
        top_beams = top_ids // (2 * k)  # (b, 2K)
        top_tokens = tf.gather(tf.reshape(tokens, [active, k * 2 * k]), top_ids, batch_dims=1)  # (b, 2K)
        top_seq = _write_column(_gather_beams(s["alive_seq"], top_beams), index + 1, top_tokens)  # (b, 2K, L)
        ends = tf.equal(top_tokens, END_ID)

        # Alive: the best k that did not end.
        s["alive_log_probs"], alive_pos = tf.math.top_k(tf.where(ends, NEG_INF, top_log_probs), k=k)  # (b, K)
        s["alive_seq"] = _gather_beams(top_seq, alive_pos)  # (b, K, L)
        source_beams = _gather_beams(top_beams, alive_pos)  # (b, K): which old beam each came from
        beam_rows = tf.reshape(source_beams + tf.range(active)[:, tf.newaxis] * k, [-1])  # (N,)
        dynamic = batch_state.take(dynamic, beam_rows)

        # Finished: the best k among the old finished and those that ended now.
        new_scores = tf.where(ends, top_log_probs / length_penalty(index + 1, alpha), NEG_INF)  # (b, 2K)
        scores = tf.concat([s["finished_scores"], new_scores], axis=1)  # (b, 3K)
        s["finished_scores"], finished_pos = tf.math.top_k(scores, k=k)  # ties keep the older hypothesis
        s["finished_seq"] = _gather_beams(tf.concat([s["finished_seq"], top_seq], axis=1), finished_pos)
        s["steps"] = tf.fill([active], index + 1)
        done = _sentence_done(index + 1, s["alive_log_probs"], s["finished_scores"], s["limit"], alpha, return_all)
        if static_shapes:
            # A decided sentence keeps the results it was decided with, as one that leaves the batch does.
            old = state["sentence"]
            s.update(_keep_decided(old["decided"], {name: old[name] for name in results},
                                   {name: s[name] for name in results}))
            s["decided"] = tf.logical_or(old["decided"], done)
        state = {"sentence": s, "rows": {**r, "dynamic": dynamic}}
        if not static_shapes:
            state, outputs = batch_state.retire(done, state, outputs, s, per_sentence=k)
        return index + 1, state, outputs

    steps, state, outputs = batch_state.while_loop(cond, body, (tf.constant(0), state, outputs), static_shapes)
    everyone = tf.ones_like(state["sentence"]["position"], tf.bool)
    out = batch_state.store(outputs, state["sentence"]["position"], state["sentence"], everyone)

    # Every sentence finishes (END is forced at its limit); fall back to alive all the same.
    finished_scores = out["finished_scores"]
    has_finished = finished_scores[:, 0] > NEG_INF  # (B,)
    alive_scores = out["alive_log_probs"][:, 0] / length_penalty(out["steps"], alpha)
    best_seq = tf.where(has_finished[:, tf.newaxis], out["finished_seq"][:, 0], out["alive_seq"][:, 0])
    tokens, lengths = _finalize(best_seq)
    all_tokens, _ = _finalize(tf.reshape(out["finished_seq"], [batch * k, -1]))  # (B, K, L) -> (B*K, L - 1)
    return SearchResult(sequences=tokens, lengths=lengths, scores=tf.where(has_finished, finished_scores[:, 0],
                                                                           alive_scores),
                        steps=steps, all_sequences=tf.reshape(all_tokens, [batch, k, -1]), all_scores=finished_scores)


def search(model, source_ids, beam_size=4, alpha=0.6, max_extra_length=None, use_cache=True, return_all=False,
           static_shapes=None, constraint=None):
    """`greedy_search` when `beam_size == 1`, else `beam_search`: a `SearchResult` either way.

    The arguments are `beam_search`'s. With `beam_size == 1` the one hypothesis is decided
    as soon as it ends, so `return_all` asks for nothing more (`all_sequences` has `k = 1`).

    Example:
        >>> greedy = search(model, source_ids, beam_size=1)   # the `SearchResult` example's model and sources
        >>> bool(tf.reduce_all(greedy.sequences == greedy_search(model, source_ids).sequences))
        True
    """
    common = dict(alpha=alpha, max_extra_length=max_extra_length, use_cache=use_cache, static_shapes=static_shapes,
                  constraint=constraint)
    if check_beam_size(beam_size, as_decodable(model).vocab_size) == 1:
        return greedy_search(model, source_ids, **common)
    return beam_search(model, source_ids, beam_size=beam_size, return_all=return_all, **common)
