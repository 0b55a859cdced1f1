"""A run's data side: its corpus split as `DataConfig` names it, the shared tokenizer, the batches.

    pairs = load_pairs(data, "train")                       # preprocessed as `data.preprocess` says
    tokenizer = learn_tokenizer(pairs, data.subwords, seed=0, whole_tokens=whole_tokens(data.dataset, pairs))
    train_batches, val_batches = make_datasets(data, tokenizer, training, replicas=1)

Used by `tfm.training.train`, outside the strategy (§5.1: batches by token budget).
"""

import importlib
import json
import logging
import os
import re

import numpy as np
import tensorflow as tf

from tfm.data.batching import bucket_by_token_budget
from tfm.data.datasets import PARSING_TASKS, load_dataset
from tfm.data.preprocess import preprocess
from tfm.data.subword_tokenizer import train_tokenizer

logger = logging.getLogger("tfm.training.pipeline")


def load_pairs(data, split):
    """The `(source, target)` string pairs of a `DataConfig`'s split, preprocessed as it says; for the
    training split, only its first `data.train_sentences` pairs when that is set.

    Args:
        data: `DataConfig`.
        split: "train", "validation" or "test".

    Returns:
        A `tf.data.Dataset` of scalar `(source, target)` tf.string pairs.

    Example:
        >>> from tfm.config import DataConfig, TrainingConfig
        >>> data = DataConfig(dataset="numbers", max_pair_length=16, subwords=60, train_sentences=200)
        >>> int(load_pairs(data, "train").cardinality())   # train_sentences=200
        200
    """
    kwargs = {}
    if data.dataset in PARSING_TASKS:
        importlib.import_module("tfm.parsing.treebank")  # registers the treebank with load_dataset (NLTK only here)
    if data.dataset == "files":
        kwargs = dict(source_path=data.source_file, target_path=data.target_file)
    pairs = load_dataset(data.dataset, split, source_lang=data.source_lang, target_lang=data.target_lang,
                         data_dir=data.data_dir, **kwargs)
    if data.train_sentences is not None and split == "train":
        pairs = pairs.take(data.train_sentences)
    if data.preprocess is None:
        return pairs
    sources, targets = _preprocessed(pairs, data, split)
    return tf.data.Dataset.from_tensor_slices((sources, targets))


_PREPROCESSED = {}


def _preprocessed(pairs, data, split):
    """Both sides of a split as `data.preprocess` prepares them (`tfm.data.preprocess`), computed once
    per process: the tokenizer and the batches read the same text."""
    key = (data, split)
    if key not in _PREPROCESSED:
        sources, targets = [], []
        for source, target in pairs.as_numpy_iterator():
            sources.append(source.decode("utf-8"))
            targets.append(target.decode("utf-8"))
        _PREPROCESSED[key] = (preprocess(sources, data.source_lang, data.preprocess),
                              preprocess(targets, data.target_lang, data.preprocess))
        logger.info("%s %s: %d pairs lowercased and Moses-tokenized (%s)", data.dataset, split, len(sources),
                    data.preprocess)
    return _PREPROCESSED[key]


def learn_tokenizer(pairs, vocab_size, seed, whole_tokens=()):
    """`train_tokenizer`, capped (with a warning) at the vocabulary size the text allows.
    `whole_tokens`: tokens kept as one subword each (`whole_tokens`).

    Args:
        pairs: dataset of `(source, target)` pairs (or texts) to learn from.
        vocab_size: int. Subwords wanted.
        seed: int. SentencePiece's sampling seed.
        whole_tokens: iterable of str kept as one subword each.

    Returns:
        `SubwordTokenizer`.

    Example:
        >>> learn_tokenizer(["a b", "b a"], vocab_size=1000, seed=0).vocab_size   # what two words allow
        9
    """
    try:
        return train_tokenizer(pairs, vocab_size, seed=seed, whole_tokens=whole_tokens)
    except ValueError as error:
        found = re.search(r"value <= (\d+)", str(error))
        if not found:
            raise
        cap = int(found.group(1))
        logger.warning("the training text allows at most %d subwords: using vocab_size=%d instead of %d",
                       cap, cap, vocab_size)
        return train_tokenizer(pairs, cap, seed=seed, whole_tokens=whole_tokens)


def make_datasets(data, tokenizer, training, replicas):
    """`(train_batches, val_batches or None)`: token-budget buckets, built outside the strategy.

    Every batch splits evenly across replicas (Keras builds the model from the first
    batch with a cross-replica reduce that needs equal shapes on every replica, and a
    replica given no pair would average its loss over no tokens): full batches are sized
    so, and a bucket's last, part-filled batch of an epoch is cut to a multiple of
    `replicas` (`split_evenly`).

    Args:
        data: `DataConfig` (corpus, `max_pair_length`).
        tokenizer: the run's `SubwordTokenizer`.
        training: `TrainingConfig` (`tokens_per_batch`, `seed`, `xla`, `rdrop_alpha`, `steps_per_epoch`,
            `validation`: also batch the validation split, never for dataset "files").
        replicas: int. The strategy's replicas in sync.

    Example:
        >>> from tfm.config import DataConfig, TrainingConfig
        >>> data = DataConfig(dataset="numbers", max_pair_length=16, subwords=60, train_sentences=200)
        >>> tokenizer = learn_tokenizer(load_pairs(data, "train"), data.subwords, seed=0)
        >>> train_batches, val_batches = make_datasets(data, tokenizer, TrainingConfig(tokens_per_batch=64), replicas=2)
        >>> (source_ids, target_in), target_out = next(iter(train_batches))
        >>> source_ids.shape[0] % 2, source_ids.shape[0] * source_ids.shape[1] <= 64, val_batches is not None
        (0, True, True)
    """
    batching = dict(tokens_per_batch=training.tokens_per_batch, max_length=data.max_pair_length, cache=True,
                    pad_to_bucket=training.xla, batch_multiple=replicas)
    train_batches = split_evenly(bucket_by_token_budget(load_pairs(data, "train"), tokenizer, shuffle=True,
                                                        seed=training.seed, **batching), replicas)
    if training.rdrop_alpha:
        train_batches = train_batches.map(pair_rows)  # after split_evenly: each replica gets whole pairs
    if training.steps_per_epoch:
        train_batches = train_batches.repeat()  # epochs of steps_per_epoch batches continue through the data
    if not training.validation or data.dataset == "files":
        return train_batches, None
    val_batches = split_evenly(bucket_by_token_budget(load_pairs(data, "validation"), tokenizer, **batching),
                               replicas)
    # A known length spares Keras' "ran out of data" warning and gives the progress bar its total.
    count = int(val_batches.reduce(np.int64(0), lambda n, _: n + 1))
    val_batches = val_batches.apply(tf.data.experimental.assert_cardinality(count)) if count else None
    return train_batches, val_batches


def pair_rows(inputs, target_out):
    """Every pair of a batch twice, in adjacent rows (`0, 0, 1, 1, ...`): R-Drop's two passes.

    One forward pass over the doubled batch gives each copy its own dropout masks
    (Liang et al., 2021); `LabelSmoothedCrossEntropy(rdrop_alpha=...)` reads rows
    `2i` and `2i + 1` as one sentence's two passes. A batch of `b` pairs becomes `2b`
    rows (twice the compute per step); with `b` a multiple of the replicas, each
    replica's contiguous slice holds whole pairs.

    Args:
        inputs: `(source_ids (b, S), target_in (b, T))`.
        target_out: `(b, T)`.

    Returns:
        The batch with `2b` rows, in the same structure.

    Example:
        >>> inputs = (tf.constant([[5], [6]]), tf.constant([[2], [2]]))   # (source_ids, target_in): 2 pairs
        >>> (source_ids, _), target_out = pair_rows(inputs, tf.constant([[7], [8]]))
        >>> source_ids.numpy().ravel().tolist(), target_out.numpy().ravel().tolist()
        ([5, 5, 6, 6], [7, 7, 8, 8])
    """
    (source_ids, target_in) = inputs
    twice = lambda x: tf.repeat(x, 2, axis=0)  # noqa: E731  (one line, three uses below: (b, L) -> (2b, L))
    return (twice(source_ids), twice(target_in)), twice(target_out)


def count_batches(data, tokenizer, training, replicas):
    """The number of training batches one epoch of `make_datasets` yields, or None when it has no fixed
    number (`steps_per_epoch` set, or a multi-worker cluster where each worker reads its own share).

    Token-budget batches have no length that `tf.data` can infer (a bucket's batch count depends on how many
    pairs fall in it), so one pass counts them; the count is the same every epoch, since each bucket gives
    `ceil(pairs / batch size)` batches whatever the shuffle. The pass runs over an unshuffled twin of the
    training batches: iterating the shuffled ones would draw an order from their seed, and every epoch after
    would see another order than a run without the count (a seeded run must train on the same batches
    whether or not a progress bar is shown). `train` gives the count to `EpochProgressBar`, so the first
    epoch's progress bar shows its total (`12/40`, not `12/Unknown`).

    Args:
        data, tokenizer, training, replicas: as for `make_datasets`.

    Returns:
        int or None.

    Example:
        >>> from tfm.config import DataConfig, TrainingConfig
        >>> data = DataConfig(dataset="numbers", max_pair_length=16, subwords=60, train_sentences=200)
        >>> tokenizer = learn_tokenizer(load_pairs(data, "train"), data.subwords, seed=0)
        >>> training = TrainingConfig(tokens_per_batch=64, validation=False)
        >>> train_batches, _ = make_datasets(data, tokenizer, training, replicas=1)
        >>> count_batches(data, tokenizer, training, replicas=1) == len(list(train_batches))
        True
    """
    if training.steps_per_epoch or _cluster_tasks() > 1:
        return None
    batching = dict(tokens_per_batch=training.tokens_per_batch, max_length=data.max_pair_length,
                    pad_to_bucket=training.xla, batch_multiple=replicas)
    twin = split_evenly(bucket_by_token_budget(load_pairs(data, "train"), tokenizer, **batching), replicas)
    return int(twin.reduce(np.int64(0), lambda n, _: n + 1))


def _cluster_tasks():
    """Tasks in `$TF_CONFIG`'s cluster (1 when it is unset or unreadable: `make_strategy` names that error)."""
    try:
        cluster = json.loads(os.environ.get("TF_CONFIG") or "{}").get("cluster") or {}
        return max(1, sum(len(tasks) for tasks in cluster.values() if isinstance(tasks, list)))
    except (ValueError, AttributeError):
        return 1


def split_evenly(batches, replicas):
    """`batches` with each batch cut to a multiple of `replicas` pairs (batches left empty are dropped).

    Only the last, part-filled batch of a bucket can be cut: at most `replicas - 1` pairs
    per bucket per epoch go unused (other ones each epoch, the data being shuffled). A
    small corpus can start an epoch with such a batch, e.g. one pair for two replicas.

    Args:
        batches: dataset of `((source_ids, target_in), target_out)` batches.
        replicas: int. The strategy's replicas in sync.

    Example:
        >>> batch = ((tf.ones((3, 4), tf.int32), tf.ones((3, 5), tf.int32)), tf.ones((3, 5), tf.int32))
        >>> (source_ids, _), _ = next(iter(split_evenly(tf.data.Dataset.from_tensors(batch), replicas=2)))
        >>> source_ids.shape[0]   # 3 pairs cut to 2: one per replica
        2
    """
    replicas = int(replicas)
    if replicas == 1:
        return batches

    def cut(inputs, target_out):
        source_ids, target_in = inputs
        keep = tf.shape(source_ids)[0] // replicas * replicas
        return (source_ids[:keep], target_in[:keep]), target_out[:keep]

    return batches.map(cut).filter(lambda inputs, target_out: tf.shape(target_out)[0] > 0)


def whole_tokens(name, pairs):
    """The target tokens dataset `name` wants kept as one subword each: a parsing run's labels, brackets and
    leaf tokens (`tfm.parsing.treebank.tree_whole_tokens`), none for translation.

    Args:
        name: str. A dataset name.
        pairs: the training split's `(source, target)` pairs (a `tf.data.Dataset`).

    Example:
        >>> whole_tokens("numbers", pairs=None)   # translation: none
        ()
    """
    if name not in PARSING_TASKS:
        return ()
    from tfm.parsing import treebank  # NLTK only when a treebank is read

    return treebank.tree_whole_tokens(pairs)
