"""A small run folder made in about a second, without training: what the examples of `load_run`,
`average_checkpoints`, `read_history` and friends read.

    run = write_example_run("/tmp/example_run")      # config.json, tokenizer/, 2 epoch checkpoints, history.csv
    model, tokenizer, info = tfm.runs.load_run(run)  # an untrained 1-layer Transformer

The folder has the layout `tfm.training.train` writes (`tfm.runs.folder`), so everything that reads a run
accepts it; its weights are random (a fresh model per epoch) and its history.csv numbers are made up.
"""

import os

from tfm.config.configs import DataConfig, TrainingConfig, TransformerConfig
from tfm.data.subword_tokenizer import train_tokenizer
from tfm.data.synthetic import number_words_pairs
from tfm.models.registry import model_name
from tfm.runs.atomic import save_weights, write_json_atomic
from tfm.runs.folder import CHECKPOINT_DIR, CONFIG_FILE, TOKENIZER_DIR, build_float32_model, make_folder, run_record
from tfm.runs.history import HISTORY_FILE, write_rows


def write_example_run(folder, epochs=2, seed=0):
    """Writes a run folder of a 1-layer, 16-wide Transformer on the numbers task into `folder`.

    A 60-subword tokenizer learned from 200 number pairs (en -> de), `epochs` epoch checkpoints of
    freshly initialised weights (`checkpoints/epoch_001.weights.h5` ...), a history.csv with a falling
    loss, and the config.json `train` would write for those settings.

    Args:
        folder: str or path-like. The run folder to write (created; it should be new or empty).
        epochs: int >= 1. Epochs "finished": checkpoints and history rows.
        seed: int. The tokenizer's sampling seed and the `TrainingConfig` seed recorded.

    Returns:
        str: `folder`, as given.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"), epochs=2)
        >>> sorted(os.listdir(run))
        ['checkpoints', 'config.json', 'history.csv', 'tokenizer']
        >>> sorted(os.listdir(os.path.join(run, "checkpoints")))
        ['epoch_001.weights.h5', 'epoch_002.weights.h5']
    """
    if int(epochs) < 1:
        raise ValueError(f"epochs={epochs}: an example run has at least one finished epoch")
    sources, targets = number_words_pairs("validation", max_number=999, num_validation=200, num_test=10)
    tokenizer = train_tokenizer(sources + targets, vocab_size=60, seed=seed)
    config = TransformerConfig.tiny(num_layers=1, d_model=16, num_heads=2, d_ff=32, vocab_size=tokenizer.vocab_size,
                                    checkpoints_to_average=int(epochs))
    data = DataConfig(dataset="numbers", max_length=config.max_length, tokens_per_batch=config.tokens_per_batch,
                      vocab_size=tokenizer.vocab_size)
    training = TrainingConfig(seed=int(seed), keep_checkpoints=int(epochs))
    make_folder(os.path.join(folder, CHECKPOINT_DIR))
    tokenizer.save(os.path.join(folder, TOKENIZER_DIR))
    write_json_atomic(os.path.join(folder, CONFIG_FILE), run_record(model_name(config), config, data, training))
    rows = []
    for epoch in range(1, int(epochs) + 1):
        save_weights(build_float32_model(config), os.path.join(folder, CHECKPOINT_DIR, f"epoch_{epoch:03d}.weights.h5"))
        loss = 4.0 / epoch
        rows.append({"epoch": epoch - 1, "loss": loss, "accuracy": 1 - loss / 5, "val_loss": loss + 0.2,
                     "val_accuracy": 1 - (loss + 0.2) / 5, "learning_rate": 1e-3})
    write_rows(os.path.join(folder, HISTORY_FILE), rows)
    return folder
