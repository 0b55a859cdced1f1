"""tfm.training.pipeline: the number of training batches is known from the first epoch on (Keras' progress bar
shows the total, not `Unknown`), and it is the number of batches every epoch yields, whatever the replicas,
R-Drop or the shuffle."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from tfm.config import DataConfig, TrainingConfig
from tfm.training.pipeline import (
    learn_tokenizer,
    load_pairs,
    make_datasets,
    with_known_length,
)


@pytest.fixture(scope="module")
def numbers():
    data = DataConfig(dataset="numbers", max_pair_length=16, subwords=60, train_sentences=300)
    return data, learn_tokenizer(load_pairs(data, "train"), data.subwords, seed=0)


@pytest.mark.parametrize("replicas, rdrop_alpha", [(1, 0.0), (2, 0.0), (3, 0.5)])
def test_the_number_of_training_batches_is_known_and_is_what_each_epoch_yields(numbers, replicas, rdrop_alpha):
    data, tokenizer = numbers
    training = TrainingConfig(tokens_per_batch=64, rdrop_alpha=rdrop_alpha, validation=False)
    train_batches, _ = make_datasets(data, tokenizer, training, replicas=replicas)
    count = int(train_batches.cardinality())
    assert count > 1
    assert [len(list(train_batches)) for _ in range(3)] == [count] * 3  # three epochs, three shuffles


def test_steps_per_epoch_epochs_continue_through_repeated_data(numbers):
    data, tokenizer = numbers
    training = TrainingConfig(tokens_per_batch=64, steps_per_epoch=3, validation=False)
    train_batches, _ = make_datasets(data, tokenizer, training, replicas=1)
    assert int(train_batches.cardinality()) == tf.data.INFINITE_CARDINALITY  # Keras counts steps_per_epoch


def test_keras_shows_the_first_epochs_total(numbers, capsys):
    data, tokenizer = numbers
    train_batches, _ = make_datasets(data, tokenizer, TrainingConfig(tokens_per_batch=64, validation=False), 1)
    count = int(train_batches.cardinality())
    source_ids, target_in = keras.Input((None,), dtype="int32"), keras.Input((None,), dtype="int32")
    logits = keras.layers.Dense(tokenizer.vocab_size)(keras.layers.Embedding(tokenizer.vocab_size, 8)(target_in))
    model = keras.Model((source_ids, target_in), logits)  # the smallest model these batches fit
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(train_batches, epochs=1, verbose=1, shuffle=False)  # the dataset shuffles itself
    out = capsys.readouterr().out
    assert f"{count}/{count}" in out and "Unknown" not in out, out


def test_a_multi_worker_clusters_batches_are_left_uncounted(monkeypatch):
    """Each worker of a cluster reads its own share of the batches, which is not the whole count."""
    batches = tf.data.Dataset.range(10).filter(lambda x: x % 3 > 0).batch(2)  # 3 batches, length unknown
    assert int(with_known_length(batches).cardinality()) == 3
    cluster = {"cluster": {"worker": ["host1:12345", "host2:12345"]}, "task": {"type": "worker", "index": 0}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(cluster))
    assert int(with_known_length(batches).cardinality()) == tf.data.UNKNOWN_CARDINALITY
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["host1:12345"]}, "task": {}}))
    assert int(with_known_length(batches).cardinality()) == 3
    empty = batches.filter(lambda x: tf.reduce_any(x > 10))
    assert int(with_known_length(empty).cardinality()) == tf.data.UNKNOWN_CARDINALITY  # nothing to count
    assert np.array_equal(np.concatenate(list(with_known_length(batches).as_numpy_iterator())), [1, 2, 4, 5, 7, 8])
