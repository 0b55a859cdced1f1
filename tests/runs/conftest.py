"""The run-folder tests' small run: a folder of the layout `tfm.training.train` writes, made in about a second
without training (untrained weights, a made-up history.csv). Damage only a copy (`copy_run`)."""

import os

import keras
import pytest

from tfm import runs
from tfm.config import DataConfig, DecodingConfig, Recipe, TrainingConfig, TransformerConfig
from tfm.data.subword_tokenizer import train_tokenizer
from tfm.data.synthetic import number_words_pairs
from tfm.models import Transformer


def write_example_run(folder, epochs=2, seed=0):
    """A 1-layer, 16-wide Transformer's run on the numbers task in `folder`: a 60-subword tokenizer (200 number
    pairs, en -> de), `epochs` epoch checkpoints of fresh float32 weights, a history.csv with a falling loss, and the
    config.json `train` writes for those settings. Returns `folder`."""
    sources, targets = number_words_pairs("validation", max_number=999, num_validation=200, num_test=10)
    tokenizer = train_tokenizer(sources + targets, vocab_size=60, seed=seed)
    config = TransformerConfig.tiny(num_layers=1, d_model=16, num_heads=2, d_ff=32, vocab_size=tokenizer.vocab_size)
    recipe = Recipe(config, DataConfig(dataset="numbers", subwords=tokenizer.vocab_size,
                                       max_pair_length=config.max_length),
                    TrainingConfig(seed=seed, keep_checkpoints=epochs), DecodingConfig(checkpoints_to_average=epochs))
    runs.make_folder(os.path.join(folder, runs.CHECKPOINT_DIR))
    tokenizer.save(os.path.join(folder, runs.TOKENIZER_DIR))
    runs.write_json_atomic(os.path.join(folder, runs.CONFIG_FILE), runs.run_record(recipe))
    rows = []
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        for epoch in range(1, epochs + 1):
            path = os.path.join(folder, runs.CHECKPOINT_DIR, f"epoch_{epoch:03d}.weights.h5")
            runs.save_weights(Transformer.from_preset(config), path)
            loss = 4.0 / epoch
            rows.append({"epoch": epoch - 1, "loss": loss, "accuracy": 1 - loss / 5, "val_loss": loss + 0.2,
                         "val_accuracy": 1 - (loss + 0.2) / 5, "learning_rate": 1e-3})
    finally:
        keras.config.set_dtype_policy(previous)
    runs.write_rows(os.path.join(folder, runs.HISTORY_FILE), rows)
    return folder


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    """A 3-epoch run folder made without training (once per test module); tests that refuse must leave it as it is."""
    return write_example_run(str(tmp_path_factory.mktemp("example") / "run"), epochs=3)


@pytest.fixture
def fresh_run(tmp_path):
    """A 3-epoch run folder a test may write into."""
    return write_example_run(str(tmp_path / "run"), epochs=3)

