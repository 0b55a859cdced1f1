"""The WMT 2014 code path of `tfm.training.train` under `tf.distribute`, on TFDS' mock data.

`wmt14_translate/de-en` is several GB and never downloaded here; `tfds.testing.mock_data`
makes TFDS hand out random examples of the builder's real features (strings of letters
a-j and spaces) through the same `tfds.load` call. Everything else is the real path:
`load_dataset` -> `load_tfds_translate` -> the tokenizer learned from the training split ->
token-budget buckets split across replicas -> `fit` under `MirroredStrategy` on two
logical CPUs -> the run folder (config, tokenizer, checkpoints, history).

The two logical CPUs must be configured before TensorFlow starts, so the run happens in
a child process: this file run as a script.

    .venv/bin/python -m pytest -q tests/training/test_wmt_distribute.py
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAME = "wmt14_translate/de-en"
MOCK_EXAMPLES = 48  # per split
SMALL = dict(num_layers=1, d_model=32, num_heads=2, d_ff=64, dropout=0.0, subwords=120, warmup_steps=20,
             tokens_per_batch=256, max_length=48, max_pair_length=48)
EPOCHS, STEPS = 2, 3
CHILD_TIMEOUT = 240


def child(spec):
    """Trains under MirroredStrategy on mock WMT 2014 data and writes what the test checks to `spec["result"]`."""
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

    import tensorflow_datasets as tfds

    import tfm.training
    from tfm.config import Recipe
    from tfm.runs import read_run_config
    from tfm.training.pipeline import load_pairs

    seen = {}
    make_datasets = tfm.training.trainer.make_datasets

    def recording_make_datasets(data, tokenizer, training, replicas):
        seen["data"], seen["replicas"] = data, replicas
        seen["batches"] = make_datasets(data, tokenizer, training, replicas)
        return seen["batches"]

    tfm.training.trainer.make_datasets = recording_make_datasets  # the datasets fit receives, kept to be read back
    with tfds.testing.mock_data(num_examples=MOCK_EXAMPLES):
        recipe = Recipe.preset("tiny", **SMALL, dataset=NAME, source_lang="en", data_dir=spec["data_dir"],
                               steps_per_epoch=STEPS, keep_checkpoints=EPOCHS)
        result = tfm.training.train(recipe, output=spec["output"], epochs=EPOCHS, strategy="mirrored", verbose=0)
        pairs = [(s.decode(), t.decode()) for s, t in load_pairs(seen["data"], "train").as_numpy_iterator()]
        train_batches, val_batches = seen["batches"]
        batches = [((source.numpy(), target_in.numpy()), target_out.numpy())
                   for (source, target_in), target_out in train_batches.take(STEPS)]
    tokenizer = result.tokenizer
    vocabulary = tokenizer.vocabulary()

    def text(ids):  # a padded id matrix -> its sentences ([PAD], [START], [END] dropped)
        return [s.decode() for s in tokenizer.detokenize(ids).numpy()]

    out = {
        "replicas": result.model.distribute_strategy.num_replicas_in_sync,
        "strategy": type(result.model.distribute_strategy).__name__,
        "history": result.history,
        "epochs": result.epochs,
        "run_config": read_run_config(result.run_dir),
        "vocab_size": tokenizer.vocab_size,
        "vocabulary": vocabulary,
        "train_pairs": pairs,
        "batch_sizes": [int(source.shape[0]) for (source, _), _ in batches],
        "batch_tokens": [int(np.count_nonzero(source)) for (source, _), _ in batches],
        "batch_sources": [s for (source, _), _ in batches for s in text(source)],
        "batch_targets": [s for _, target_out in batches for s in text(target_out)],
        "has_validation": val_batches is not None,
        "replicas_asked": seen["replicas"],
    }
    with open(spec["result"], "w") as f:
        json.dump(out, f)


@pytest.fixture(scope="module")
def mock_wmt_run(tmp_path_factory):
    """The child's report and the run folder of one mirrored run on mock WMT 2014 data."""
    tmp = tmp_path_factory.mktemp("wmt_mock")
    spec = {"output": str(tmp / "run"), "data_dir": str(tmp / "tfds"), "result": str(tmp / "result.json")}
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow", TF_NUM_INTEROP_THREADS="1",
               PYTHONPATH=os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")])))
    process = subprocess.run([sys.executable, os.path.abspath(__file__), json.dumps(spec)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert process.returncode == 0, (process.stdout + process.stderr)[-4000:]
    with open(spec["result"]) as f:
        return json.load(f), spec["output"]


def normalized(sentence):
    return " ".join(sentence.split())  # SentencePiece folds runs of spaces, the mock text has some


def test_run_folder_of_a_mirrored_wmt14_run(mock_wmt_run):
    from tfm.runs import epoch_checkpoints, read_history

    report, run_dir = mock_wmt_run
    assert report["strategy"] == "MirroredStrategy" and report["replicas"] == report["replicas_asked"] == 2
    data = report["run_config"]["data"]
    assert data["dataset"] == NAME and data["source_lang"] == "en"  # the target is the other side, de
    assert report["run_config"]["training"]["tokens_per_batch"] == SMALL["tokens_per_batch"]
    assert [epoch for epoch, _ in epoch_checkpoints(run_dir)] == list(range(1, EPOCHS + 1))
    assert all(os.path.getsize(path) > 0 for _, path in epoch_checkpoints(run_dir))
    assert os.path.isfile(os.path.join(run_dir, "tokenizer", "sentencepiece.model"))
    history = read_history(run_dir)
    assert history["epoch"] == list(range(EPOCHS))
    assert history["iterations"] == [STEPS * (e + 1) for e in range(EPOCHS)]
    assert report["has_validation"] and all(np.isfinite(history["val_loss"]))
    assert history["loss"] == pytest.approx(report["history"]["loss"])
    assert all(np.isfinite(history["loss"])) and report["epochs"] == EPOCHS


def test_tokenizer_is_learned_from_the_mock_text(mock_wmt_run):
    report, _ = mock_wmt_run
    assert report["run_config"]["model"]["vocab_size"] == report["vocab_size"] <= SMALL["subwords"]
    letters = set("".join(s + t for s, t in report["train_pairs"])) - {" "}
    assert letters <= set("abcdefghij"), letters  # what TFDS' mock strings are made of
    # Every learned subword (past the special and single-byte pieces) is a run of the mock text's letters.
    learned = [piece.replace("\u2581", "") for piece in report["vocabulary"]
               if piece.replace("\u2581", "") and not (piece.startswith("[") and piece.endswith("]"))]
    assert len(learned) > 20
    multi = [piece for piece in learned if len(piece) > 1]
    assert multi and all(set(piece) <= letters for piece in multi), multi[:10]
    corpus = " ".join(normalized(s) for pair in report["train_pairs"] for s in pair)
    assert all(piece in corpus for piece in multi), [p for p in multi if p not in corpus][:10]


def test_batches_come_from_the_mock_train_split(mock_wmt_run):
    report, _ = mock_wmt_run
    sources = {normalized(s) for s, _ in report["train_pairs"]}
    targets = {normalized(t) for _, t in report["train_pairs"]}
    assert report["batch_sources"] and set(map(normalized, report["batch_sources"])) <= sources
    assert set(map(normalized, report["batch_targets"])) <= targets
    # Each batch splits evenly over the 2 replicas and stays within the token budget.
    assert all(size % 2 == 0 for size in report["batch_sizes"])
    assert all(tokens <= SMALL["tokens_per_batch"] for tokens in report["batch_tokens"])


def test_split_evenly_cuts_part_filled_batches_to_a_multiple_of_the_replicas():
    import tensorflow as tf

    from tfm.training.pipeline import split_evenly

    sizes = [4, 3, 1, 2, 5]  # full batches of 4, then the part-filled ends of buckets
    batches = tf.data.Dataset.from_generator(
        lambda: (((np.full((b, 3), b), np.full((b, 2), b)), np.full((b, 2), b)) for b in sizes),
        output_signature=((tf.TensorSpec((None, 3), tf.int32), tf.TensorSpec((None, 2), tf.int32)),
                          tf.TensorSpec((None, 2), tf.int32)))
    cut = [(source.shape[0], target_in.shape[0], target_out.shape[0], int(source[0, 0]))
           for (source, target_in), target_out in split_evenly(batches, 2)]
    assert cut == [(4, 4, 4, 4), (2, 2, 2, 3), (2, 2, 2, 2), (4, 4, 4, 5)]  # the batch of 1 is dropped
    assert split_evenly(batches, 1) is batches


if __name__ == "__main__":
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    child(json.loads(sys.argv[1]))
