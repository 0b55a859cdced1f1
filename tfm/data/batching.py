"""Sentence pairs -> padded id batches for `model.fit` (Vaswani et al., 2017, §5.1).

"Sentence pairs were batched together by approximate sequence length. Each training
batch contained a set of sentence pairs containing approximately 25000 source
tokens and 25000 target tokens."

Every batch is `((source_ids, target_in), target_out)`, int32, 0-padded:

    source_ids  (B, S)   the source subwords (no START / END)
    target_in   (B, T)   START y_1 ... y_n      (decoder input, teacher forcing)
    target_out  (B, T)   y_1 ... y_n END        (labels)

so a pair whose target has n subwords needs T >= n + 1. Tokenization happens here,
once, in the `tf.data` map; the model only sees ids.

`bucket_by_token_budget` groups pairs of similar lengths and sizes each batch to
about `tokens_per_batch` tokens per side; `pad_to_fixed_length` is the simple
alternative (every batch `(batch_size, max_length)`); `padding_fraction` measures
what either costs in padding.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from tfm.special_tokens import END_ID, START_ID

_TOKENIZE_CHUNK = 512  # strings per tokenizer call inside the map (one op call per chunk, not per sentence)


def autotune_off():
    """Fresh `tf.data.Options` with autotuning off: what tfm's batching functions set (`_prefetched`).

    A new object per call, so that a caller who changes one changes no one else's. Takes no arguments.

    Example:
        >>> autotune_off().autotune.enabled
        False
    """
    options = tf.data.Options()
    options.autotune.enabled = False
    return options


@dataclasses.dataclass(frozen=True)
class LengthReport:
    """What the length filter keeps.

    Attributes:
        num_pairs: pairs seen.
        kept: pairs that fit (`S <= max_length` and `T = n + 1 <= max_length`).
        too_long: pairs dropped because a side is longer than `max_length`.
        empty: pairs dropped because a side has no subword at all.
        max_length: the limit used.
        longest_source, longest_target: longest `S` and `T = n + 1` seen (before filtering).

    Args:
        num_pairs, kept, too_long, empty, max_length, longest_source, longest_target: the attributes.

    Example:
        >>> report = LengthReport(num_pairs=10, kept=7, too_long=2, empty=1, max_length=8, longest_source=12,
        ...                       longest_target=9)
        >>> report.filtered
        3
        >>> str(report).split(";")[0]
        '7 of 10 pairs kept'
    """

    num_pairs: int
    kept: int
    too_long: int
    empty: int
    max_length: int
    longest_source: int
    longest_target: int

    @property
    def filtered(self):
        """int. Pairs dropped for either reason: `too_long + empty`."""
        return self.too_long + self.empty

    def __str__(self):
        return (f"{self.kept} of {self.num_pairs} pairs kept; filtered {self.too_long} longer than "
                f"max_length={self.max_length} and {self.empty} empty (longest source {self.longest_source}, "
                f"longest target {self.longest_target} = subwords + 1 for START / END)")


def tokenize_pairs(pairs, tokenizer):
    """`(source_text, target_text)` pairs -> `(source_ids, target_ids)` int32 vectors `(S,)`, `(n,)`.

    No START / END yet; strings are tokenized in chunks for speed, order is kept.

    Args:
        pairs: dataset of scalar `(source, target)` tf.string pairs.
        tokenizer: a `SubwordTokenizer` (anything with `tokenize(strings)` -> ragged).

    Returns:
        A dataset of `(source_ids (S,), target_ids (n,))` int32 pairs.

    Example:
        >>> from tfm.data import sequence_task_dataset, train_tokenizer
        >>> pairs = sequence_task_dataset("validation", num_examples=50)
        >>> tokenizer = train_tokenizer(pairs, vocab_size=30)
        >>> source_ids, target_ids = next(iter(tokenize_pairs(pairs, tokenizer)))
        >>> source_ids.dtype.name, source_ids.shape == target_ids.shape   # reversal keeps the length
        ('int32', True)
    """
    def tokenize(source, target):  # (C,), (C,) -> ragged (C, None), (C, None)
        return tokenizer.tokenize(source), tokenizer.tokenize(target)

    return (pairs.batch(_TOKENIZE_CHUNK)
            .map(tokenize, num_parallel_calls=tf.data.AUTOTUNE)
            .unbatch())


def _keep(max_length):
    def keep(source, target):
        source_len, target_len = tf.shape(source)[0], tf.shape(target)[0]
        return (source_len > 0) & (target_len > 0) & (source_len <= max_length) & (target_len + 1 <= max_length)

    return keep


def teacher_forcing(source, target):
    """One pair as the model trains on it (§3: the decoder reads the target shifted right):
    `target_in = START + y`, `target_out = y + END`.

    Args:
        source: int `(S,)`, the source ids.
        target: int `(n,)`, the target ids (no START / END).

    Returns:
        `((source, target_in), target_out)`: `(S,)`, `(n + 1,)` and `(n + 1,)`.

    Example:
        >>> (source, target_in), target_out = teacher_forcing(tf.constant([5, 6]), tf.constant([7, 8]))
        >>> target_in.numpy().tolist(), target_out.numpy().tolist()   # START = 2, END = 3
        ([2, 7, 8], [7, 8, 3])
    """
    target_in = tf.concat([[START_ID], target], axis=0)
    target_out = tf.concat([target, [END_ID]], axis=0)
    return (source, target_in), target_out


def _check(max_length, **positive):
    if int(max_length) < 2:
        raise ValueError(f"max_length={max_length}: need at least 2 (one subword + START/END)")
    for name, value in positive.items():
        if int(value) < 1:
            raise ValueError(f"{name}={value}: expected a positive integer")


def _prepare(pairs, tokenizer, max_length, shuffle, shuffle_buffer, seed, cache):
    """Tokenize, drop pairs that do not fit, add START/END, then cache and shuffle."""
    dataset = tokenize_pairs(pairs, tokenizer).filter(_keep(max_length))
    dataset = dataset.map(teacher_forcing, num_parallel_calls=tf.data.AUTOTUNE)
    if cache:
        # Cache ids, not text: later epochs skip tokenization. A str caches to that file.
        dataset = dataset.cache() if cache is True else dataset.cache(cache)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed, reshuffle_each_iteration=True)
    return dataset


def length_report(pairs, tokenizer, max_length):
    """Counts the pairs the batching functions keep and filter, in one pass.

    Args:
        pairs: dataset of scalar `(source, target)` tf.string pairs.
        tokenizer: a `SubwordTokenizer` (anything with `tokenize(strings)` -> ragged).
        max_length: int. The limit given to the batching function.

    Returns:
        `LengthReport`.

    Example:
        >>> from tfm.data import sequence_task_dataset, train_tokenizer
        >>> pairs = sequence_task_dataset("validation", num_examples=50, min_length=3, max_length=10)
        >>> tokenizer = train_tokenizer(pairs, vocab_size=30)
        >>> report = length_report(pairs, tokenizer, max_length=6)   # T counts END: at most 5 subwords fit
        >>> report.num_pairs == report.kept + report.filtered and report.too_long > 0
        True
    """
    def lengths(source, target):  # (C,) strings -> (C,) source lengths, (C,) target lengths incl. START/END
        return tokenizer.tokenize(source).row_lengths(), tokenizer.tokenize(target).row_lengths() + 1

    source_lengths, target_lengths = [], []
    for s, t in pairs.batch(4 * _TOKENIZE_CHUNK).map(lengths, num_parallel_calls=tf.data.AUTOTUNE):
        source_lengths.append(s.numpy())
        target_lengths.append(t.numpy())
    s = np.concatenate(source_lengths) if source_lengths else np.zeros(0, np.int64)
    t = np.concatenate(target_lengths) if target_lengths else np.zeros(0, np.int64)
    empty = (s == 0) | (t == 1)
    too_long = ~empty & ((s > max_length) | (t > max_length))
    return LengthReport(num_pairs=len(s), kept=int(np.sum(~empty & ~too_long)), too_long=int(np.sum(too_long)),
                        empty=int(np.sum(empty)), max_length=int(max_length),
                        longest_source=int(s.max(initial=0)), longest_target=int(t.max(initial=0)))


def bucket_boundaries(max_length, step=1.1):
    """Upper length limits of the buckets: 1, 2, ..., then growing by `step`, up to `max_length`.

    One bucket per length while `length * step` adds less than a token, then
    geometric (tensor2tensor's scheme), so a bucket's lengths differ by at most a
    factor `step` and padding stays under about `1 - 1/step` per side.

    Args:
        max_length: int. The last bound: the longest pair batched.
        step: float > 1. Growth factor once lengths grow by more than one token a bucket.

    Returns:
        list of int, increasing, the last one `max_length`.

    Example:
        >>> bucket_boundaries(32)
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 22, 24, 26, 28, 30, 32]
        >>> bucket_boundaries(100, step=2)
        [1, 2, 4, 8, 16, 32, 64, 100]
    """
    if step <= 1:
        raise ValueError(f"step={step}: buckets must grow, expected > 1")
    bounds, x = [], 1
    while x < max_length:
        bounds.append(x)
        x = max(x + 1, int(x * step))
    return bounds + [int(max_length)]


def bucket_batch_sizes(bounds, tokens_per_batch, batch_multiple=1):
    """The batch size of each length bucket under a token budget: what `bucket_by_token_budget` batches.

    Bucket `i` (pairs up to `L = bounds[i]` tokens per side) holds `tokens_per_batch // L` pairs, so
    `B * L <= tokens_per_batch`, rounded down to a multiple of `batch_multiple` (the replica count, so the
    global batch splits evenly) but never below one multiple.

    Args:
        bounds: list of int. The buckets' length bounds (`bucket_boundaries`).
        tokens_per_batch: int. The budget of the *global* batch, per side.
        batch_multiple: int. Round down to a multiple of this. Defaults to `1`.

    Returns:
        list of int, one batch size per bound.

    Example:
        >>> bucket_batch_sizes([16, 256], tokens_per_batch=25_000)                    # the paper's budget
        [1562, 97]
        >>> bucket_batch_sizes([16, 256, 4096], tokens_per_batch=25_000, batch_multiple=8)   # 8 replicas
        [1560, 96, 8]
    """
    m = int(batch_multiple)
    return [max(m, int(tokens_per_batch) // int(b) // m * m) for b in bounds]


def bucket_by_token_budget(pairs, tokenizer, tokens_per_batch=25_000, max_length=256, shuffle=False,
                           shuffle_buffer=20_000, seed=None, drop_remainder=False, pad_to_bucket=False,
                           bucket_step=1.1, cache=False, batch_multiple=1):
    """Batches of similar-length pairs holding about `tokens_per_batch` tokens per side (§5.1).

    A pair goes to the bucket of its length `L = max(S, T)` (`bucket_boundaries`, as
    in tensor2tensor, which the paper used); bucket `i` with bound `b_i` makes
    batches of `tokens_per_batch // b_i` pairs, so `B * S <= tokens_per_batch` and
    `B * T <= tokens_per_batch` for every batch. Batches are padded to their longest
    pair (or to the bucket bound with `pad_to_bucket`). Bucketing on both lengths
    separately pads less but leaves hundreds of part-filled batches per epoch.

    Args:
        pairs: dataset of scalar `(source, target)` tf.string pairs.
        tokenizer: a `SubwordTokenizer`.
        tokens_per_batch: int. Token budget per side. The paper's 25,000 by default.
        max_length: int. Pairs with `S > max_length` or `T > max_length` (T counts
            START / END) are dropped; so are pairs with an empty side. `length_report`
            counts them.
        shuffle: bool. Shuffle pairs (each epoch anew) before bucketing.
        shuffle_buffer: int. Pairs in the shuffle buffer.
        seed: int or None. Shuffle seed.
        drop_remainder: bool. Drop each bucket's last, smaller batch: every batch of
            a bucket then has the same batch size (the report does not count those pairs).
        pad_to_bucket: bool. Pad to the bucket bound instead of the batch's longest
            pair: with `drop_remainder`, one static shape per bucket (fewer XLA
            recompilations), at the cost of more padding.
        bucket_step: float. Growth factor of the bucket bounds.
        cache: bool or str. Cache the ids in memory (`True`) or in that file, so later
            epochs skip tokenization.
        batch_multiple: int. Round every bucket's batch size down to a multiple of
            this (at least one multiple): the replica count under `tf.distribute`,
            so full batches split evenly across replicas.

    Returns:
        A `tf.data.Dataset` of `((source_ids (B, S), target_in (B, T)), target_out (B, T))`
        int32.

    Example:
        >>> from tfm.data import number_words_dataset, train_tokenizer
        >>> pairs = number_words_dataset("validation", max_number=999, num_validation=100, num_test=10)
        >>> tokenizer = train_tokenizer(pairs, vocab_size=60)
        >>> batches = bucket_by_token_budget(pairs, tokenizer, tokens_per_batch=64, max_length=16)
        >>> (source_ids, target_in), target_out = next(iter(batches))
        >>> b, s = source_ids.shape
        >>> b * s <= 64 and target_in.shape == target_out.shape and target_in.shape[0] == b
        True
        >>> bool((target_in[:, 0] == START_ID).numpy().all())   # teacher forcing: START y_1 ... y_n
        True
    """
    _check(max_length, tokens_per_batch=tokens_per_batch, shuffle_buffer=shuffle_buffer)
    if int(batch_multiple) < 1:
        raise ValueError(f"batch_multiple={batch_multiple} must be a positive int")
    m = int(batch_multiple)
    if int(tokens_per_batch) < int(max_length):
        raise ValueError(f"tokens_per_batch={tokens_per_batch} is smaller than max_length={max_length}: "
                         f"the longest pairs would not fit in a batch")
    bounds = bucket_boundaries(int(max_length), bucket_step)
    boundaries = tf.constant(bounds, tf.int32)
    batch_sizes = tf.constant(bucket_batch_sizes(bounds, tokens_per_batch, m), tf.int64)  # (num_buckets,)
    bounds_64 = tf.constant(bounds, tf.int64)

    def bucket_id(inputs, target_out):
        source, target_in = inputs
        length = tf.maximum(tf.shape(source)[0], tf.shape(target_in)[0])
        return tf.cast(tf.searchsorted(boundaries, [length], side="left")[0], tf.int64)  # first bound >= L

    def batch_bucket(key, window):
        length = bounds_64[key] if pad_to_bucket else -1  # -1: the batch's longest
        shapes = (([length], [length]), [length])
        return window.padded_batch(batch_sizes[key], padded_shapes=shapes, drop_remainder=drop_remainder)

    dataset = _prepare(pairs, tokenizer, max_length, shuffle, shuffle_buffer, seed, cache)
    dataset = dataset.group_by_window(key_func=bucket_id, reduce_func=batch_bucket,
                                      window_size_func=lambda key: batch_sizes[key])
    return _prefetched(dataset)


def pad_to_fixed_length(pairs, tokenizer, batch_size=64, max_length=256, shuffle=False, shuffle_buffer=20_000,
                        seed=None, drop_remainder=False, cache=False):
    """Fixed-size batches, every sequence padded to `max_length` (the simple baseline).

    Args:
        pairs: dataset of scalar `(source, target)` tf.string pairs.
        tokenizer: a `SubwordTokenizer`.
        batch_size: int. Pairs per batch `B`.
        max_length: int. `S = T = max_length` for every batch; longer pairs and pairs
            with an empty side are dropped (`length_report` counts them).
        shuffle, shuffle_buffer, seed, drop_remainder, cache: as in `bucket_by_token_budget`.

    Returns:
        A dataset of `((source_ids (B, L), target_in (B, L)), target_out (B, L))` int32,
        `L = max_length`.

    Example:
        >>> from tfm.data import number_words_dataset, train_tokenizer
        >>> pairs = number_words_dataset("validation", max_number=999, num_validation=100, num_test=10)
        >>> tokenizer = train_tokenizer(pairs, vocab_size=60)
        >>> batches = pad_to_fixed_length(pairs, tokenizer, batch_size=8, max_length=16, drop_remainder=True)
        >>> [tuple(x.shape) for x in tf.nest.flatten(next(iter(batches)))]
        [(8, 16), (8, 16), (8, 16)]
    """
    _check(max_length, batch_size=batch_size, shuffle_buffer=shuffle_buffer)
    length = int(max_length)
    dataset = _prepare(pairs, tokenizer, max_length, shuffle, shuffle_buffer, seed, cache)
    dataset = dataset.padded_batch(batch_size, padded_shapes=(([length], [length]), [length]),
                                   drop_remainder=drop_remainder)
    return _prefetched(dataset)


def _prefetched(dataset):
    """The batches prefetched, with tf.data's autotuning model thread off (see `autotune_off`).

    `model.fit` makes a new iterator each epoch and deletes the last one. With
    autotuning on, each iterator runs a model thread that sleeps between optimisation
    rounds (10 ms, doubling to 60 s), and in TensorFlow 2.21 deleting the iterator can
    wait out that sleep, so an epoch can start up to a minute late (on Multi30k, an
    83 s epoch can take 146 s). Turning the model thread off loses little:
    `prefetch(AUTOTUNE)` still grows its buffer while the consumer waits, parallel maps
    keep TensorFlow's starting parallelism (16 calls, within the machine's thread pool),
    and with `cache=True`, as `train` batches, later epochs read cached ids.
    """
    return dataset.prefetch(tf.data.AUTOTUNE).with_options(autotune_off())


def padding_fraction(batches, max_batches=None):
    """Share of padding (id 0) among all positions of a batched dataset.

    Args:
        batches: dataset of int tensors or nested tuples of them, such as the
            output of `bucket_by_token_budget` (source, target_in and target_out all count).
        max_batches: int or None. Only look at the first batches.

    Returns:
        float in [0, 1]: zeros / positions.

    Example:
        >>> batch = ((tf.constant([[5, 6, 0, 0]]), tf.constant([[2, 7, 0, 0]])), tf.constant([[7, 3, 0, 0]]))
        >>> padding_fraction(tf.data.Dataset.from_tensors(batch))
        0.5
    """
    zeros = total = 0
    for i, batch in enumerate(batches):
        if max_batches is not None and i >= max_batches:
            break
        for tensor in tf.nest.flatten(batch):
            array = np.asarray(tensor)
            zeros += int(np.sum(array == 0))
            total += array.size
    if total == 0:
        raise ValueError("padding_fraction got an empty dataset")
    return zeros / total

