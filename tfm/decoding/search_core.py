"""The pieces every search shares (Vaswani et al., 2017, §6.1): what a search returns, the length
penalty, the beam size's check, and the step helpers of `tfm.decoding.greedy` and `tfm.decoding.beam`.

    SearchResult        the same fields from every search, greedy or beam (a `tf.function` output too)
    length_penalty      GNMT's `((5 + |Y|) / 6)^α`, which every search divides its scores by
    validate_beam_size     1 <= k and 2k <= V, or a ValueError naming the value

How the searches run is `tfm.decoding.search`'s docstring; the helpers below are private to them.
"""

from typing import Any, NamedTuple

import tensorflow as tf

from tfm.config.rules import validate_length_penalty
from tfm.decoding import batch_state
from tfm.decoding.decodable import as_decodable
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
        >>> from tfm.decoding import search
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


def validate_beam_size(beam_size, vocab_size):
    """`beam_size` as an int, or ValueError naming it: 1 <= k and 2k <= V (the search keeps the top 2k).

    Example:
        >>> validate_beam_size(4, vocab_size=40)
        4
        >>> validate_beam_size(30, vocab_size=40)
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


class _Start(NamedTuple):
    """What `_start_search` hands a search: the checked arguments, the truncated source and the model's start state."""

    decodable: Any
    k: int
    alpha: float
    static_shapes: bool
    source_ids: tf.Tensor
    limits: tf.Tensor
    max_steps: tf.Tensor
    batch: tf.Tensor
    static: Any
    dynamic: Any


def _start_search(model, source_ids, alpha, max_extra_length, use_cache, static_shapes, beam_size=None):
    """What greedy and beam search do first: check the arguments (ValueError naming the bad one; `beam_size`
    only when given), truncate the source and fix the step budget (`_prepare_source`), then start the model
    (encode the source once; `decodable.start`)."""
    decodable = as_decodable(model)
    k = 1 if beam_size is None else validate_beam_size(beam_size, decodable.vocab_size)
    alpha = validate_length_penalty(alpha)
    static_shapes = batch_state.use_static_shapes(static_shapes, use_cache)
    source_ids, _, limits, max_steps = _prepare_source(decodable, source_ids, max_extra_length)
    static, dynamic = decodable.start(source_ids, max_steps if static_shapes else None, use_cache)
    return _Start(decodable, k, alpha, static_shapes, source_ids, limits, max_steps, tf.shape(source_ids)[0],
                  static, dynamic)


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

