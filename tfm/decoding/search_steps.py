"""The pieces every search shares (Vaswani et al., 2017, §6.1): what a search returns, the length penalty,
the beam size's check, and the steps `tfm.decoding.greedy` and `tfm.decoding.beam` both take.

    SearchResult        the same fields from every search, greedy or beam (a `tf.function` output too)
    length_penalty      GNMT's `((5 + |Y|) / 6)^α`, which every search divides its scores by
    validate_beam_size  1 <= k and 2k <= V, or a ValueError naming the value
    start_search        check the arguments, truncate the source, fix the step budget, start the model
    best_tokens         the n most likely next tokens of each hypothesis, PAD / START / banned ones never
    top_k, chunk_size   `tf.math.top_k` in two cheaper passes over a large vocabulary
    start_sequences, write_column, finalize     the output buffers: START first, one column per step

How the searches run is `tfm.decoding.greedy_or_beam`'s docstring.
"""

import math
import numbers
from typing import Any, NamedTuple

import tensorflow as tf

from tfm.config.validation import validate_length_penalty
from tfm.decoding.batch_state import use_static_shapes
from tfm.decoding.model_adapter import as_decodable
from tfm.models.decoding_state import DecodingState
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
        >>> from tfm import Transformer
        >>> from tfm.decoding import search
        >>> model = Transformer.from_preset("tiny", vocab_size=40, num_layers=1, extra_positions=4)
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
    """`beam_size` as an int, or ValueError naming it: a whole number, 1 <= k and 2k <= V (the search keeps
    the top 2k; §6.1 uses k = 4).

    Args:
        beam_size: int (a NumPy integer too; not a bool, not a float).
        vocab_size: int. `V`.

    Example:
        >>> validate_beam_size(4, vocab_size=40)
        4
        >>> validate_beam_size(30, vocab_size=40)
        Traceback (most recent call last):
        ValueError: beam_size=30 needs a vocabulary of at least 60 ids, got 40; use a beam size of at most 20
        >>> validate_beam_size(1.5, vocab_size=40)
        Traceback (most recent call last):
        ValueError: beam_size=1.5 must be a whole number >= 1
    """
    if isinstance(beam_size, bool) or not isinstance(beam_size, numbers.Integral):
        raise ValueError(f"beam_size={beam_size!r} must be a whole number >= 1")
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


class SearchStart(NamedTuple):
    """What `start_search` hands a search: the checked arguments, the truncated source and the model's start state.

    Attributes:
        decodable: the model as the search sees it (`tfm.decoding.model_adapter`).
        k: int, the beam size (1 for greedy).
        alpha: float, the length penalty's exponent.
        static_shapes: bool, whether every buffer keeps its shape for the whole search (XLA).
        source_ids: int32 `(B, S)`, truncated to the model's `max_source_length`.
        limits: int32 `(B,)`, the most tokens sentence `i` may output before END is forced.
        max_steps: int32 scalar, `T_max`: the most steps the search runs (`max(limits) + 1` at most).
        batch: int32 scalar, `B`.
        state: the `DecodingState` after `encode`, one row per sentence.
    """

    decodable: Any
    k: int
    alpha: float
    static_shapes: bool
    source_ids: tf.Tensor
    limits: tf.Tensor
    max_steps: tf.Tensor
    batch: tf.Tensor
    state: Any


def start_search(model, source_ids, alpha, max_extra_length, use_cache, static_shapes, beam_size=None):
    """What greedy and beam search do first (§6.1: outputs up to input length + 50).

    Checks the arguments (ValueError naming the bad one; `beam_size` only when given), truncates the
    source and fixes the step budget, then starts the model (encodes the source once).

    Args:
        model: a `Transformer`, a `Seq2Seq` or a `Decodable` (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded.
        alpha: float >= 0. The length penalty's exponent.
        max_extra_length: int or None. Output limit = source length + this (None: the model's).
        use_cache: bool. Start the model's cache (False: each step recomputes from the prefix).
        static_shapes: bool or None (`tfm.decoding.batch_state.use_static_shapes`).
        beam_size: int or None (greedy).

    Returns:
        `SearchStart`.

    Example:
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1, extra_positions=4)
        >>> start = start_search(model, [[5, 6, 7], [8, 0, 0]], alpha=0.6, max_extra_length=None, use_cache=True,
        ...                      static_shapes=None, beam_size=2)
        >>> start.k, start.limits.numpy().tolist(), int(start.max_steps)   # source length + 4; 3 + 4 + 1
        (2, [7, 5], 8)
        >>> tuple(start.state.memory_mask.shape)                             # one row per sentence
        (2, 3)
    """
    decodable = as_decodable(model)
    k = 1 if beam_size is None else validate_beam_size(beam_size, decodable.vocab_size)
    alpha = validate_length_penalty(alpha)
    static_shapes = use_static_shapes(static_shapes, use_cache)
    source_ids, _, limits, max_steps = _prepare_source(decodable, source_ids, max_extra_length)
    state = decodable.start(source_ids, max_steps if static_shapes else None, use_cache)
    if not isinstance(state, DecodingState):
        raise TypeError(f"{type(decodable).__name__}.start returned a {type(state).__name__}: expected a "
                        "tfm.models.DecodingState(memory, memory_mask, cache) (see tfm.decoding.Decodable)")
    return SearchStart(decodable, k, alpha, static_shapes, source_ids, limits, max_steps, tf.shape(source_ids)[0],
                       state)


def chunk_size(vocab, k):
    """The chunk width of `top_k`'s first pass over a vocabulary of `vocab` entries: a divisor of `vocab` near
    `sqrt(vocab / k)` where there is one, so that no padding copy of the `(N, V)` values is made.

    The two passes read `V / C` chunk maxima and `k * C` candidates, fewest near `C = sqrt(V / k)`; among the
    divisors within a factor 2 of it, the one with the fewest (`V / C + k * C`, the smallest on a tie). A
    vocabulary with none there (a prime) gets `ceil(sqrt(V / k))`, its last chunk padded.

    Args:
        vocab: int, V.
        k: int, how many entries `top_k` returns.

    Returns:
        int, the chunk width C.

    Example:
        >>> chunk_size(8000, 8), chunk_size(10000, 8), chunk_size(7919, 8)   # 7919 is prime: padded
        (32, 40, 32)
    """
    ideal = (vocab / k) ** 0.5
    divisors = [c for c in range(max(math.ceil(ideal / 2), 1), math.floor(ideal * 2) + 1) if vocab % c == 0]
    if not divisors:
        return max(math.ceil(ideal), 1)
    return min(divisors, key=lambda c: (vocab // c + k * c, c))


def top_k(values, k, chunk=None):
    """`tf.math.top_k(values, k)` over the last axis of `(N, V)`, in two cheaper passes when V is large.

    TensorFlow's CPU top-k costs about as much as the vocabulary projection on a 10k
    vocabulary. The k largest entries lie in the k chunks (of `chunk_size(V, k)` entries) with
    the largest maxima, so: each chunk's maximum, the best k chunks, the best k of their
    entries. Ties resolve to the lower index, as in `tf.math.top_k`.

    Args:
        values: float `(N, V)`.
        k: int.
        chunk: None or int, the chunk width (None: `chunk_size(V, k)`; `benchmarks/step_kernels.py` times others).

    Returns:
        `(values (N, k), indices int32 (N, k))`, largest first.

    Example:
        >>> scores = tf.constant(np.arange(10000, dtype="float32")[np.newaxis] % 997)   # (1, V), ties
        >>> top, ids = top_k(scores, 3)
        >>> top.numpy().tolist(), ids.numpy().tolist()   # the lower index wins a tie
        ([[996.0, 996.0, 996.0]], [[996, 1993, 2990]])
    """
    vocab = values.shape[-1]
    if vocab is None or vocab < 16 * k * k:  # small vocabularies: one pass is as cheap
        return tf.math.top_k(values, k=k)
    chunk = chunk_size(vocab, k) if chunk is None else int(chunk)
    groups = -(-vocab // chunk) if chunk >= 1 else 0
    if not 1 <= chunk <= vocab or groups < k:
        raise ValueError(f"chunk={chunk} for top {k} of {vocab} entries: expected 1 <= chunk <= {vocab} and at least "
                         f"k = {k} chunks ({groups} here)")
    if groups * chunk != vocab:  # pad the last chunk with -inf
        values = tf.pad(values, [[0, 0], [0, groups * chunk - vocab]], constant_values=NEG_INF)
    chunks = tf.reshape(values, [-1, groups, chunk])  # (N, V) -> (N, G, C)
    _, best = tf.math.top_k(tf.reduce_max(chunks, axis=-1), k=k)  # (N, k) chunk indices
    best = tf.sort(best, axis=-1)  # in index order, so ties keep preferring lower ids
    candidates = tf.reshape(tf.gather(chunks, best, axis=1, batch_dims=1), [-1, k * chunk])  # (N, k*C)
    top, position = tf.math.top_k(candidates, k=k)  # (N, k)
    ids = tf.gather(best, position // chunk, axis=1, batch_dims=1) * chunk + position % chunk
    return top, ids


def best_tokens(logits, index, limits, n, allowed=None):
    """The `n` most likely next tokens of each row: float32 log-probabilities and ids, `(N, n)` each.

    PAD and START are never chosen; past its limit a row offers END only (log-probability 0, §6.1's
    output limit). `allowed` (a constraint's) bans every other token too, and the softmax
    renormalises over the tokens left; a row with none left may end. The log-probabilities
    are computed for the chosen tokens alone.

    Args:
        logits: float `(N, V)`, the step's next-token logits.
        index: int scalar, the step (= tokens output so far).
        limits: int `(N,)`, each row's output limit.
        n: int, how many tokens per row (1 for greedy, 2k for beam search).
        allowed: None or bool `(N, V)`.

    Example:
        >>> logits = tf.math.log(tf.constant([[0.1, 0.1, 0.3, 0.1, 0.4], [0.2, 0.2, 0.2, 0.2, 0.2]]))
        >>> log_probs, tokens = best_tokens(logits, 0, tf.constant([5, 0]), n=2)   # row 1: limit reached
        >>> tokens[0].numpy().tolist(), [round(float(p), 3) for p in np.exp(log_probs[0])]   # no START (2)
        ([4, 1], [0.667, 0.167])
        >>> int(tokens[1, 0]), float(log_probs[1, 0])        # at its limit: END (3), log-probability 0
        (3, 0.0)
    """
    logits = tf.cast(logits, tf.float32)
    vocab = logits.shape[-1] or tf.shape(logits)[-1]
    ids = tf.range(vocab)[tf.newaxis, :]  # (1, V)
    banned = tf.logical_or(tf.equal(ids, PAD_ID), tf.equal(ids, START_ID))
    if allowed is not None:
        nothing = tf.logical_not(tf.reduce_any(allowed, axis=1, keepdims=True))  # (N, 1)
        allowed = tf.logical_or(allowed, tf.logical_and(nothing, tf.equal(ids, END_ID)))
        banned = tf.logical_or(banned, tf.logical_not(allowed))
    if allowed is None:  # one (V,) bias: grappler fuses it into the output projection's product
        logits = tf.nn.bias_add(logits, tf.where(banned[0], NEG_INF, 0.0))  # (N, V)
    else:
        logits = logits + tf.where(banned, NEG_INF, 0.0)  # (N, V)
    if n == 1:
        tokens = tf.argmax(logits, axis=-1, output_type=tf.int32)[:, tf.newaxis]  # (N, 1)
    else:
        _, tokens = top_k(logits, n)  # (N, n), ranked by logit
    # One fused softmax over the vocabulary (about half the time of a log-softmax on CPU), then the
    # log of the chosen tokens' probabilities only.
    log_probs = tf.math.log(tf.gather(tf.nn.softmax(logits, axis=-1), tokens, axis=1, batch_dims=1))
    forced = tf.greater_equal(index, limits)[:, tf.newaxis]  # (N, 1): limit reached, END only
    first = tf.equal(tf.range(n), 0)[tf.newaxis, :]  # (1, n)
    log_probs = tf.where(forced, tf.where(first, 0.0, NEG_INF), log_probs)
    tokens = tf.where(tf.logical_and(forced, first), END_ID, tokens)
    return log_probs, tokens


def write_column(buffer, column, values):
    """`buffer[..., column] = values` for a buffer that holds zeros there (a step's tokens into the outputs).

    Args:
        buffer: int `(..., L)`, zeros at `column`.
        column: int scalar.
        values: int `(...)`.

    Example:
        >>> write_column(tf.zeros([2, 4], tf.int32), 1, tf.constant([7, 8])).numpy().tolist()
        [[0, 7, 0, 0], [0, 8, 0, 0]]
    """
    width = tf.shape(buffer)[-1]
    return buffer + tf.one_hot(column, width, dtype=buffer.dtype) * values[..., tf.newaxis]


def finalize(sequences):
    """The searches' buffers as outputs: START dropped, END and what follows as padding.

    Args:
        sequences: int `(B, L)`: START, the tokens, [END], zeros.

    Returns:
        `(tokens (B, L - 1) 0-padded, lengths (B,))`, END not counted.

    Example:
        >>> tokens, lengths = finalize(tf.constant([[2, 7, 8, 3, 0], [2, 3, 0, 0, 0]]))   # START = 2, END = 3
        >>> tokens.numpy().tolist(), lengths.numpy().tolist()
        ([[7, 8, 0, 0], [0, 0, 0, 0]], [2, 0])
    """
    tokens = sequences[:, 1:]
    tokens = tf.where(tf.equal(tokens, END_ID), PAD_ID, tokens)
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(tokens, PAD_ID), tf.int32), axis=1)
    return tokens, lengths


def start_sequences(batch_shape, max_steps):
    """The output buffer before the first step: START, then zeros.

    Args:
        batch_shape: list of ints or scalar tensors, e.g. `[B]` (greedy) or `[B, k]` (beams).
        max_steps: int scalar, `T_max`.

    Returns:
        int32 `batch_shape + (max_steps + 1,)`.

    Example:
        >>> start_sequences([2], 3).numpy().tolist()   # START = 2
        [[2, 0, 0, 0], [2, 0, 0, 0]]
    """
    zeros = tf.zeros(list(batch_shape) + [max_steps + 1], tf.int32)
    return write_column(zeros, 0, tf.fill(batch_shape, START_ID))
