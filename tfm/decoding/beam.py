"""Beam search with the GNMT length penalty (Vaswani et al., 2017, §6.1: beam 4, α = 0.6).

tensor2tensor's scheme: `k` alive and `k` finished hypotheses per sentence, the top `2k` continuations
ranked at every step, a sentence stopped once no alive hypothesis can beat its worst finished one. Greedy
search is `tfm.decoding.greedy`; how both run (the cache, dynamic shapes, the length limit) is
`tfm.decoding.greedy_or_beam`'s docstring.
"""

import numpy as np
import tensorflow as tf

from tfm.decoding.batch_state import retire, store, take, while_loop
from tfm.decoding.search_steps import (
    NEG_INF,
    SearchResult,
    best_tokens,
    finalize,
    length_penalty,
    start_search,
    start_sequences,
    write_column,
)
from tfm.special_tokens import END_ID


def _gather_beams(tensor, indices):
    """`tensor (B, K, ...)`, `indices (B, J)` -> `(B, J, ...)`."""
    return tf.gather(tensor, indices, axis=1, batch_dims=1)


def _sentence_done(index, alive_log_probs, finished_scores, limits, alpha, fill=False, early_finish=False):
    """(b,) True where no alive hypothesis can still beat the worst finished one (with `fill`,
    and all `k` finished slots are taken: the k best, not only the best, are decided; with
    `early_finish`, the best finished one: only the best is decided)."""
    # Alive log-probs (<= 0) only fall as tokens are added, so dividing the best one by the
    # largest penalty still reachable (at the limit for alpha >= 0, now for alpha < 0) bounds
    # any score an alive hypothesis can finish with.
    reachable_lp = tf.maximum(length_penalty(limits + 1, alpha), length_penalty(index + 1, alpha))  # (b,)
    best_alive = alive_log_probs[:, 0] / reachable_lp  # (b,)
    is_finished = finished_scores > NEG_INF
    if early_finish and not fill:  # finished_scores are best first: slot 0 is the best (-inf: none yet)
        return tf.logical_or(finished_scores[:, 0] >= best_alive, tf.equal(best_alive, NEG_INF))
    worst_finished = tf.reduce_min(tf.where(is_finished, finished_scores, np.inf), axis=1)  # (b,)
    any_finished = (tf.reduce_all if fill else tf.reduce_any)(is_finished, axis=1)
    return tf.logical_or(tf.logical_and(any_finished, worst_finished >= best_alive),
                         tf.equal(best_alive, NEG_INF))


def _keep_decided(decided, old, new):
    """`new`, except the rows of sentences already `decided (b,)`, which keep `old`."""
    return tf.nest.map_structure(
        lambda o, n: tf.where(tf.reshape(decided, [-1] + [1] * (n.shape.rank - 1)), o, n), old, new)


def beam_search(model, source_ids, beam_size=4, alpha=0.6, max_extra_length=None, use_cache=True,
                return_all=False, static_shapes=None, constraint=None, early_finish=False):
    """Beam search with the GNMT length penalty (§6.1: beam 4, α = 0.6).

    Args:
        model: a `Transformer`, a `Seq2Seq`, or a decodable (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded source subwords (no START / END).
        beam_size: int. `k`.
        alpha: float >= 0. Length penalty exponent; `0` ranks by `log P(Y | X)`.
        max_extra_length: int. Output limit = source length + this (default: the
            model's `extra_positions`, 50).
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
        early_finish: bool. Stop a sentence as soon as its *best* finished hypothesis cannot be
            beaten by any alive one (CTranslate2's early exit, with the exact bound above), not its
            worst: the same `sequences` and `scores` in fewer steps; `steps` and, without
            `return_all`, the other slots of `all_sequences` / `all_scores` may differ (they hold
            what had finished by then). Ignored with `return_all`. Defaults to `False`.

    Returns:
        `SearchResult`: `scores` = `log P(Y | X) / lp(Y)`; `all_sequences` `(B, k, T_max)` and
        `all_scores` `(B, k)`, best first (`-inf` where fewer than `k` hypotheses finished).

    Example:
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=40, num_layers=1, extra_positions=4)
        >>> source_ids = tf.constant([[5, 6, 7], [8, 9, 0]])   # (B, S) = (2, 3), 0-padded; T_max = 3 + 4 + 1 = 8
        >>> result = beam_search(model, source_ids, beam_size=4, alpha=0.6, return_all=True)
        >>> tuple(result.all_sequences.shape), tuple(result.all_scores.shape)   # (B, k, T_max), (B, k)
        ((2, 4, 8), (2, 4))
        >>> bool(tf.reduce_all(result.all_scores[:, :-1] >= result.all_scores[:, 1:]))   # best first
        True
    """
    decodable, k, alpha, static_shapes, source_ids, limits, max_steps, batch, decoding = start_search(
        model, source_ids, alpha, max_extra_length, use_cache, static_shapes, beam_size=beam_size)
    # Every beam of sentence b sits at row b * K + j: the cache and the limits get a row per beam, the
    # memory keeps one per sentence (the K beams of a sentence read one copy of it).
    tile = lambda x: tf.repeat(x, k, axis=0)  # noqa: E731  (one line, for the rows below)
    rows = {"cache": tf.nest.map_structure(tile, decoding.cache), "limit": tile(limits)}  # (N = B * K, ...)
    if constraint is not None:
        rows["constraint"] = tile(constraint.sentence_info(source_ids))

    alive_seq = start_sequences([batch, k], max_steps)  # (B, K, T_max + 1)
    results = {
        "steps": tf.zeros([batch], tf.int32), "alive_seq": alive_seq,
        # Only beam 0 is live at the start, so the first step expands one hypothesis, not k copies.
        "alive_log_probs": tf.tile(tf.constant([[0.0] + [NEG_INF] * (k - 1)]), [batch, 1]),  # (B, K)
        "finished_seq": tf.zeros_like(alive_seq), "finished_scores": tf.fill([batch, k], NEG_INF),
    }
    # The DecodingState's memory and memory_mask, one row per sentence; its cache is in `rows`; what it
    # `prepared` (no rows) goes to every step as it is, outside the loop's state.
    prepared = decoding.prepared
    sentence = {"position": tf.range(batch), "limit": limits, "decoding": decoding._replace(cache=(), prepared=()),
                **results}
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
        decoding = s["decoding"]._replace(cache=r["cache"], prepared=prepared)  # b memories, N = b * K hypotheses
        logits, decoding = decodable.step(flat_seq, index, decoding, use_cache)  # (N, V)
        # The 2k best continuations: even if k of them end, k remain to stay alive. They are
        # among the 2k best tokens of each beam, so only those k * 2k candidates are ranked.
        allowed = None if constraint is None else constraint.allowed(flat_seq, index, r["constraint"])
        token_log_probs, tokens = best_tokens(logits, index, r["limit"], 2 * k, allowed)  # (N, 2K) each
        candidates = s["alive_log_probs"][:, :, tf.newaxis] + tf.reshape(token_log_probs, [active, k, 2 * k])
        candidates = tf.reshape(candidates, [active, k * 2 * k])  # (b, K, 2K) -> (b, K*2K)
        top_log_probs, top_ids = tf.math.top_k(candidates, k=2 * k)  # (b, 2K)
        top_beams = top_ids // (2 * k)  # (b, 2K)
        top_tokens = tf.gather(tf.reshape(tokens, [active, k * 2 * k]), top_ids, batch_dims=1)  # (b, 2K)
        top_seq = write_column(_gather_beams(s["alive_seq"], top_beams), index + 1, top_tokens)  # (b, 2K, L)
        ends = tf.equal(top_tokens, END_ID)

        # Alive: the best k that did not end.
        s["alive_log_probs"], alive_pos = tf.math.top_k(tf.where(ends, NEG_INF, top_log_probs), k=k)  # (b, K)
        s["alive_seq"] = _gather_beams(top_seq, alive_pos)  # (b, K, L)
        source_beams = _gather_beams(top_beams, alive_pos)  # (b, K): which old beam each came from
        beam_rows = tf.reshape(source_beams + tf.range(active)[:, tf.newaxis] * k, [-1])  # (N,)

        # Finished: the best k among the old finished and those that ended now.
        new_scores = tf.where(ends, top_log_probs / length_penalty(index + 1, alpha), NEG_INF)  # (b, 2K)
        scores = tf.concat([s["finished_scores"], new_scores], axis=1)  # (b, 3K)
        s["finished_scores"], finished_pos = tf.math.top_k(scores, k=k)  # ties keep the older hypothesis
        s["finished_seq"] = _gather_beams(tf.concat([s["finished_seq"], top_seq], axis=1), finished_pos)
        s["steps"] = tf.fill([active], index + 1)
        done = _sentence_done(index + 1, s["alive_log_probs"], s["finished_scores"], s["limit"], alpha, return_all,
                              early_finish)
        if static_shapes:
            # A decided sentence keeps the results it was decided with, as one that leaves the batch does.
            old = state["sentence"]
            s.update(_keep_decided(old["decided"], {name: old[name] for name in results},
                                   {name: s[name] for name in results}))
            s["decided"] = tf.logical_or(old["decided"], done)
        if static_shapes:
            state = {"sentence": s, "rows": {**r, "cache": take(decoding.cache, beam_rows)}}  # caches follow beams
        else:  # each beam's cache follows it, and the decided sentences' rows leave, in one gather
            state = {"sentence": s, "rows": {**r, "cache": decoding.cache}}
            state, outputs = retire(done, state, outputs, s, per_sentence=k, reorder=beam_rows)
        return index + 1, state, outputs

    steps, state, outputs = while_loop(cond, body, (tf.constant(0), state, outputs), static_shapes)
    everyone = tf.ones_like(state["sentence"]["position"], tf.bool)
    out = store(outputs, state["sentence"]["position"], state["sentence"], everyone)

    # Every sentence finishes (END is forced at its limit); fall back to alive all the same.
    finished_scores = out["finished_scores"]
    has_finished = finished_scores[:, 0] > NEG_INF  # (B,)
    alive_scores = out["alive_log_probs"][:, 0] / length_penalty(out["steps"], alpha)
    best_seq = tf.where(has_finished[:, tf.newaxis], out["finished_seq"][:, 0], out["alive_seq"][:, 0])
    tokens, lengths = finalize(best_seq)
    all_tokens, _ = finalize(tf.reshape(out["finished_seq"], [batch * k, -1]))  # (B, K, L) -> (B*K, L - 1)
    return SearchResult(sequences=tokens, lengths=lengths, scores=tf.where(has_finished, finished_scores[:, 0],
                                                                           alive_scores),
                        steps=steps, all_sequences=tf.reshape(all_tokens, [batch, k, -1]), all_scores=finished_scores)
