"""tfm.training.pipeline.count_batches and tfm.training.callbacks.EpochProgressBar: the first epoch's progress bar
shows its total (not `Unknown`), the count is what every epoch yields (whatever the replicas, R-Drop or the
shuffle), and showing it changes nothing a seeded run trains on."""

import json

import keras
import numpy as np
import pytest

from tfm.config import DataConfig, TrainingConfig
from tfm.training.callbacks import EpochProgressBar
from tfm.training.pipeline import count_batches, learn_tokenizer, load_pairs, make_datasets


@pytest.fixture(scope="module")
def numbers():
    data = DataConfig(dataset="numbers", max_pair_length=16, subwords=60, train_sentences=300)
    return data, learn_tokenizer(load_pairs(data, "train"), data.subwords, seed=0)


@pytest.mark.parametrize("replicas, rdrop_alpha", [(1, 0.0), (2, 0.0), (3, 0.5)])
def test_the_count_is_what_each_epoch_yields(numbers, replicas, rdrop_alpha):
    data, tokenizer = numbers
    training = TrainingConfig(tokens_per_batch=64, rdrop_alpha=rdrop_alpha, validation=False)
    train_batches, _ = make_datasets(data, tokenizer, training, replicas=replicas)
    count = count_batches(data, tokenizer, training, replicas=replicas)
    assert count > 1
    assert [len(list(train_batches)) for _ in range(3)] == [count] * 3  # three epochs, three shuffles


def test_steps_per_epoch_and_multi_worker_clusters_have_no_count(numbers, monkeypatch):
    data, tokenizer = numbers
    assert count_batches(data, tokenizer, TrainingConfig(tokens_per_batch=64, steps_per_epoch=3), 1) is None
    training = TrainingConfig(tokens_per_batch=64, validation=False)
    cluster = {"cluster": {"worker": ["host1:12345", "host2:12345"]}, "task": {"type": "worker", "index": 0}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(cluster))  # each worker reads its own share: not the count
    assert count_batches(data, tokenizer, training, 1) is None
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["host1:12345"]}, "task": {}}))
    assert count_batches(data, tokenizer, training, 1) > 1


def _fit(numbers, epochs, callbacks, verbose):
    """The smallest model these batches fit, trained from seed 0; returns its weights."""
    data, tokenizer = numbers
    keras.utils.set_random_seed(0)
    train_batches, _ = make_datasets(data, tokenizer, TrainingConfig(tokens_per_batch=64, validation=False), 1)
    source_ids, target_in = keras.Input((None,), dtype="int32"), keras.Input((None,), dtype="int32")
    logits = keras.layers.Dense(tokenizer.vocab_size)(keras.layers.Embedding(tokenizer.vocab_size, 8)(target_in))
    model = keras.Model((source_ids, target_in), logits)
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(train_batches, epochs=epochs, verbose=verbose, shuffle=False, callbacks=callbacks)
    return model.get_weights()


@pytest.mark.filterwarnings("ignore:Your input ran out of data")  # Keras learns the length so
def test_keras_shows_the_first_epochs_total_and_trains_on_the_same_batches(numbers, capsys):
    data, tokenizer = numbers
    count = count_batches(data, tokenizer, TrainingConfig(tokens_per_batch=64, validation=False), 1)
    shown = _fit(numbers, 3, [EpochProgressBar(count)], verbose=1)
    out = capsys.readouterr().out
    assert f"{count}/{count}" in out.split("Epoch 2/3")[0] and "Unknown" not in out, out
    # The same seed without the bar: the same batches in the same order every epoch, so the same weights.
    # (A dataset given its length instead, `assert_cardinality`, moves every epoch's shuffle after the first.)
    unseen = _fit(numbers, 3, [], verbose=0)
    assert all(np.array_equal(a, b) for a, b in zip(shown, unseen))
