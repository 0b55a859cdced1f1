"""Greedy and beam search with a key/value cache (Vaswani et al., 2017, §6.1).

    beam_search(model, source_ids, beam_size=4)        # ids in, ids out (a tf.function body)
    greedy_search(model, source_ids)
    search(model, source_ids, beam_size=1)              # greedy when beam_size == 1

§6.1: "we used beam search with a beam size of 4 and length penalty α = 0.6 ...
We set the maximum output length during inference to input length + 50, but
terminate early when possible." The length penalty is GNMT's (Wu et al., 2016),
`lp(Y) = ((5 + |Y|) / 6)^α`, and a finished hypothesis scores `log P(Y | X) / lp(Y)`;
`|Y|` counts the output tokens including END (as tensor2tensor, which the paper used).

How it runs:

- Incremental decoding. The Transformer encodes the source once, projects the
  encoder output to every decoder layer's cross-attention keys/values once per
  sentence (`Transformer.init_cache`), and at step `t` feeds only token `t`:
  its self-attention keys/values are written into a fixed `(B, 2, N, T_max, H)`
  cache (`Transformer.decode_step`). The RNN seq2seq models carry their
  recurrent state instead (`Seq2Seq.decode_step`).
- Static shapes. Every buffer is allocated for `T_max` steps up front and the
  loop is a `tf.while_loop` that stops when every sentence is done, so the search
  runs in a `tf.function`, with `jit_compile=True` too (XLA compiles one program
  per source shape: `Translator` pads source lengths to a multiple of 8).
- Lengths. A sentence of `n` source tokens may produce at most `n + 50` tokens
  (`max_extra_length`, the model config's), then END is forced. Sources longer
  than the model accepts (`TransformerConfig.max_length` tokens) are truncated,
  and `T_max` never exceeds the model's position table.
- Batches of sentences of different lengths: each sentence has its own limit
  and its own early stop; finished sentences are carried along (the batch stays
  static) until the whole batch is done.
- Never generated: PAD and START (their logits are masked before the softmax).
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

import numpy as np
import tensorflow as tf

from tfm.config import check_length_penalty
from tfm.decoding.adapters import as_decodable
from tfm.special_tokens import END_ID, PAD_ID, START_ID

NEG_INF = float("-inf")


def check_beam_size(beam_size, vocab_size):
    """`beam_size` as an int, or ValueError naming it: 1 <= k and 2k <= V (the search keeps the top 2k)."""
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


def _log_probs(logits, index, limits):
    """Float32 log-probabilities `(N, V)` with PAD/START banned and END forced past the limit."""
    logits = tf.cast(logits, tf.float32)
    vocab = tf.shape(logits)[1]
    ids = tf.range(vocab)[tf.newaxis, :]  # (1, V)
    banned = tf.logical_or(tf.equal(ids, PAD_ID), tf.equal(ids, START_ID))
    logits = tf.where(banned, NEG_INF, logits)
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    forced = tf.greater_equal(index, limits)[:, tf.newaxis]  # (N, 1): limit reached, END only
    end_only = tf.where(tf.equal(ids, END_ID), 0.0, NEG_INF)  # (1, V)
    return tf.where(forced, end_only, log_probs)


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
def greedy_search(model, source_ids, max_extra_length=None, use_cache=True, return_logits=False):
    """The most likely next token at every step, until END (or the length limit).

    Args:
        model: a `Transformer`, a `Seq2Seq`, or a decodable (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded source subwords (no START / END).
        max_extra_length: int. Output limit = source length + this. Defaults to
            the model config's `max_extra_length` (50, §6.1).
        use_cache: bool. `False` recomputes the decoder over the prefix at every
            step (graph mode only; not under XLA).
        return_logits: bool. Also return the raw logits of every step `(B, T_max, V)`.

    Returns:
        dict of tensors: `sequences` int32 `(B, T_max)` (no START / END, 0-padded),
        `lengths` int32 `(B,)`, `scores` float32 `(B,)` = `log P(Y | X)` with END,
        `steps` int32 scalar (loop iterations run), [`logits`].
    """
    decodable = as_decodable(model)
    source_ids, _, limits, max_steps = _prepare_source(decodable, source_ids, max_extra_length)
    batch = tf.shape(source_ids)[0]
    static, dynamic = decodable.start(source_ids, max_steps, use_cache)

    sequences = _start_sequences([batch], max_steps)  # (B, T_max + 1)
    finished = tf.zeros([batch], tf.bool)
    scores = tf.zeros([batch], tf.float32)
    logits_buffer = (tf.zeros([batch, max_steps, decodable.vocab_size], tf.float32)
                     if return_logits else tf.zeros([0]))

    def cond(index, sequences, finished, scores, dynamic, logits_buffer):
        return tf.logical_and(index < max_steps, tf.logical_not(tf.reduce_all(finished)))

    def body(index, sequences, finished, scores, dynamic, logits_buffer):
        logits, dynamic = decodable.step(sequences, index, static, dynamic, use_cache)  # (B, V)
        log_probs = _log_probs(logits, index, limits)  # (B, V)
        tokens = tf.argmax(log_probs, axis=-1, output_type=tf.int32)  # (B,)
        token_log_probs = tf.gather(log_probs, tokens, axis=1, batch_dims=1)  # (B,)
        scores += tf.where(finished, 0.0, token_log_probs)
        tokens = tf.where(finished, PAD_ID, tokens)
        sequences = _write_column(sequences, index + 1, tokens)
        if return_logits:  # (B, T_max, V) += one_hot(t) (1, T_max, 1) * (B, 1, V)
            one_hot = tf.one_hot(index, max_steps)[tf.newaxis, :, tf.newaxis]
            logits_buffer += one_hot * tf.cast(logits, tf.float32)[:, tf.newaxis, :]
        finished = tf.logical_or(finished, tf.equal(tokens, END_ID))
        return index + 1, sequences, finished, scores, dynamic, logits_buffer

    steps, sequences, finished, scores, _, logits_buffer = tf.while_loop(
        cond, body, (tf.constant(0), sequences, finished, scores, dynamic, logits_buffer))
    tokens, lengths = _finalize(sequences)
    result = {"sequences": tokens, "lengths": lengths, "scores": scores, "steps": steps}
    if return_logits:
        result["logits"] = logits_buffer
    return result


# ---------------------------------------------------------------------------
# Beam search
# ---------------------------------------------------------------------------
def _gather_beams(tensor, indices):
    """`tensor (B, K, ...)`, `indices (B, J)` -> `(B, J, ...)`."""
    return tf.gather(tensor, indices, axis=1, batch_dims=1)


def beam_search(model, source_ids, beam_size=4, alpha=0.6, max_extra_length=None, use_cache=True,
                return_all=False, return_logits=False):
    """Beam search with the GNMT length penalty (§6.1: beam 4, α = 0.6).

    Args:
        model: a `Transformer`, a `Seq2Seq`, or a decodable (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded source subwords (no START / END).
        beam_size: int. `k`.
        alpha: float. Length penalty exponent; `0` ranks by `log P(Y | X)`.
        max_extra_length: int. Output limit = source length + this (default: the
            model config's, 50).
        use_cache: bool. As in `greedy_search`.
        return_all: bool. Also return all `k` finished hypotheses, best first.
        return_logits: bool. Also return the raw step logits of the best hypothesis `(B, T_max, V)`.

    Returns:
        dict of tensors: `sequences` int32 `(B, T_max)` (no START / END, 0-padded),
        `lengths` `(B,)`, `scores` float32 `(B,)` = `log P(Y | X) / lp(Y)`, `steps`;
        with `return_all`, `all_sequences` `(B, k, T_max)` and `all_scores` `(B, k)`
        (`-inf` where fewer than `k` hypotheses finished); [`logits`].
    """
    decodable = as_decodable(model)
    k = check_beam_size(beam_size, decodable.vocab_size)
    alpha = check_length_penalty(alpha)
    vocab = decodable.vocab_size
    source_ids, _, limits, max_steps = _prepare_source(decodable, source_ids, max_extra_length)
    batch = tf.shape(source_ids)[0]
    flat = batch * k  # N = B * K rows in the model's batch

    static, dynamic = decodable.start(source_ids, max_steps, use_cache)
    # Every beam of sentence b sits at row b * K + j.
    tile = lambda x: tf.repeat(x, k, axis=0)  # noqa: E731
    static = tf.nest.map_structure(tile, static)
    dynamic = tf.nest.map_structure(tile, dynamic)
    flat_limits = tile(limits)  # (N,)

    alive_seq = _start_sequences([batch, k], max_steps)  # (B, K, T_max + 1)
    # Only beam 0 is live at the start, so the first step expands one hypothesis, not k copies.
    alive_log_probs = tf.tile(tf.constant([[0.0] + [NEG_INF] * (k - 1)]), [batch, 1])  # (B, K)
    finished_seq = tf.zeros_like(alive_seq)
    finished_scores = tf.fill([batch, k], NEG_INF)
    empty = tf.zeros([0])
    logits_shape = [batch, k, max_steps, vocab]
    alive_logits = tf.zeros(logits_shape) if return_logits else empty
    finished_logits = tf.zeros(logits_shape) if return_logits else empty

    def sentence_done(index, alive_log_probs, finished_scores):
        """(B,) True where no alive hypothesis can still beat the worst finished one."""
        # Alive log-probs (<= 0) only fall as tokens are added, so dividing the best one by the
        # largest penalty still reachable (at the limit for alpha >= 0, now for alpha < 0) bounds
        # any score an alive hypothesis can finish with.
        reachable_lp = tf.maximum(length_penalty(limits + 1, alpha), length_penalty(index + 1, alpha))  # (B,)
        best_alive = alive_log_probs[:, 0] / reachable_lp  # (B,)
        is_finished = finished_scores > NEG_INF
        worst_finished = tf.reduce_min(tf.where(is_finished, finished_scores, np.inf), axis=1)  # (B,)
        any_finished = tf.reduce_any(is_finished, axis=1)
        return tf.logical_or(tf.logical_and(any_finished, worst_finished >= best_alive),
                             tf.equal(best_alive, NEG_INF))

    def cond(index, alive_seq, alive_log_probs, finished_seq, finished_scores, dynamic, alive_logits,
             finished_logits):
        done = sentence_done(index, alive_log_probs, finished_scores)
        return tf.logical_and(index < max_steps, tf.logical_not(tf.reduce_all(done)))

    def body(index, alive_seq, alive_log_probs, finished_seq, finished_scores, dynamic, alive_logits,
             finished_logits):
        flat_seq = tf.reshape(alive_seq, [flat, -1])  # (B, K, L) -> (N, L)
        logits, dynamic = decodable.step(flat_seq, index, static, dynamic, use_cache)  # (N, V)
        log_probs = _log_probs(logits, index, flat_limits)  # (N, V)
        log_probs = tf.reshape(log_probs, [batch, k, vocab])  # (N, V) -> (B, K, V)
        candidates = alive_log_probs[:, :, tf.newaxis] + log_probs  # (B, K, V)
        candidates = tf.reshape(candidates, [batch, k * vocab])  # (B, K, V) -> (B, K*V)
        # The 2k best continuations: even if k of them end, k remain to stay alive.
        top_log_probs, top_ids = tf.math.top_k(candidates, k=2 * k)  # (B, 2K)
        top_beams = top_ids // vocab  # (B, 2K)
        top_tokens = top_ids % vocab  # (B, 2K)
        top_seq = _write_column(_gather_beams(alive_seq, top_beams), index + 1, top_tokens)  # (B, 2K, L)
        ends = tf.equal(top_tokens, END_ID)
        if return_logits:  # (B, 2K, T_max, V): this step's logits written at column `index`
            step_logits = tf.reshape(tf.cast(logits, tf.float32), [batch, k, 1, vocab])
            one_hot = tf.one_hot(index, max_steps)[tf.newaxis, tf.newaxis, :, tf.newaxis]
            top_logits = _gather_beams(alive_logits + one_hot * step_logits, top_beams)

        # Alive: the best k that did not end.
        alive_log_probs, alive_pos = tf.math.top_k(tf.where(ends, NEG_INF, top_log_probs), k=k)  # (B, K)
        alive_seq = _gather_beams(top_seq, alive_pos)  # (B, K, L)
        source_beams = _gather_beams(top_beams, alive_pos)  # (B, K): which old beam each came from
        rows = tf.reshape(source_beams + tf.range(batch)[:, tf.newaxis] * k, [flat])  # (N,)
        dynamic = tf.nest.map_structure(lambda x: tf.gather(x, rows, axis=0), dynamic)

        # Finished: the best k among the old finished and those that ended now.
        new_scores = tf.where(ends, top_log_probs / length_penalty(index + 1, alpha), NEG_INF)  # (B, 2K)
        scores = tf.concat([finished_scores, new_scores], axis=1)  # (B, 3K)
        finished_scores, finished_pos = tf.math.top_k(scores, k=k)  # ties keep the older hypothesis
        finished_seq = _gather_beams(tf.concat([finished_seq, top_seq], axis=1), finished_pos)
        if return_logits:
            alive_logits = _gather_beams(top_logits, alive_pos)
            finished_logits = _gather_beams(tf.concat([finished_logits, top_logits], axis=1), finished_pos)
        return (index + 1, alive_seq, alive_log_probs, finished_seq, finished_scores, dynamic, alive_logits,
                finished_logits)

    loop_vars = (tf.constant(0), alive_seq, alive_log_probs, finished_seq, finished_scores, dynamic,
                 alive_logits, finished_logits)
    (steps, alive_seq, alive_log_probs, finished_seq, finished_scores, _, alive_logits,
     finished_logits) = tf.while_loop(cond, body, loop_vars)

    # Every sentence finishes (END is forced at its limit); fall back to alive all the same.
    has_finished = finished_scores[:, 0] > NEG_INF  # (B,)
    alive_scores = alive_log_probs / length_penalty(steps, alpha)
    best_seq = tf.where(has_finished[:, tf.newaxis], finished_seq[:, 0], alive_seq[:, 0])
    tokens, lengths = _finalize(best_seq)
    result = {"sequences": tokens, "lengths": lengths, "steps": steps,
              "scores": tf.where(has_finished, finished_scores[:, 0], alive_scores[:, 0])}
    if return_all:
        all_tokens, _ = _finalize(tf.reshape(finished_seq, [flat, -1]))
        result["all_sequences"] = tf.reshape(all_tokens, [batch, k, -1])
        result["all_scores"] = finished_scores
    if return_logits:
        result["logits"] = tf.where(has_finished[:, tf.newaxis, tf.newaxis], finished_logits[:, 0],
                                    alive_logits[:, 0])
    return result


def search(model, source_ids, beam_size=4, alpha=0.6, max_extra_length=None, use_cache=True):
    """`greedy_search` when `beam_size == 1`, else `beam_search`: dict with `sequences`, `lengths`, `scores`."""
    if int(beam_size) == 1:
        return greedy_search(model, source_ids, max_extra_length=max_extra_length, use_cache=use_cache)
    return beam_search(model, source_ids, beam_size=beam_size, alpha=alpha, max_extra_length=max_extra_length,
                       use_cache=use_cache)
