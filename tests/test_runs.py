"""Damaged files and interrupted runs: a clear message, a correct count, nothing lost without a word.

The damaged-file fixtures: a corrupted gzip corpus, a truncated weights file, a truncated
SentencePiece model, a damaged training backup; each reproduces a failure that once ended in
a traceback or a wrong count.
"""

import gzip
import os
import shutil

import keras
import pytest

from tfm import cli, runs
from tfm.config import TransformerConfig
from tfm.training import train

SMALL = dict(num_layers=1, d_model=16, num_heads=2, d_ff=32, dropout=0.0, vocab_size=80, warmup_steps=20,
             tokens_per_batch=256, max_length=24)
RUN = dict(dataset="numbers", steps_per_epoch=2, validation=False, verbose=0, strategy="default")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished 2-epoch run (keeps 5 checkpoints)."""
    run_dir = str(tmp_path_factory.mktemp("runs") / "run")
    train(TransformerConfig.tiny(**SMALL), output=run_dir, epochs=2, keep_checkpoints=5, **RUN)
    return run_dir


def copy_run(run_dir, tmp_path):
    target = str(tmp_path / "copy")
    shutil.copytree(run_dir, target)
    return target


def truncate(path, keep=0.5):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: int(len(data) * keep)])


def test_damaged_backup_is_said_and_the_count_comes_from_disk(finished_run, tmp_path, caplog):
    """Truncated backup/latest.weights.h5: the older backup (epoch 1) is restored *with a warning*, epoch 2 is
    trained again, and the run reports 3 epochs (what is on disk), not 2 + 2."""
    run_dir = copy_run(finished_run, tmp_path)
    truncate(os.path.join(run_dir, runs.BACKUP_DIR, "latest.weights.h5"))
    result = train(TransformerConfig.tiny(**SMALL), output=run_dir, epochs=3, keep_checkpoints=5, **RUN)
    assert "is damaged" in caplog.text and "epoch 2 will be trained again" in caplog.text
    assert result.initial_epoch == 1 and result.epochs == 3
    assert [epoch for epoch, _ in runs.epoch_checkpoints(run_dir)] == [1, 2, 3]
    assert runs.read_history(run_dir)["epoch"] == [0, 1, 2]


def test_damaged_backup_without_an_older_copy_is_set_aside(finished_run, tmp_path, caplog):
    run_dir = copy_run(finished_run, tmp_path)
    backup = os.path.join(run_dir, runs.BACKUP_DIR)
    for name in os.listdir(backup):
        if name.endswith(".h5") or name.endswith(".bkp"):
            truncate(os.path.join(backup, name), keep=0.1)
    result = train(TransformerConfig.tiny(**SMALL), output=run_dir, epochs=3, keep_checkpoints=5, **RUN)
    assert os.path.isdir(backup + ".damaged")  # kept, not deleted
    assert "moved it to" in caplog.text
    assert result.initial_epoch == 2 and result.epochs == 3  # continued from epoch_002's weights


def test_train_command_counts_epochs_from_disk(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    truncate(os.path.join(run_dir, runs.BACKUP_DIR, "latest.weights.h5"))
    argv = ["train", "--output", run_dir, "--epochs", "3", "--steps-per-epoch", "2", "--keep-checkpoints", "5",
            "--strategy", "default", "--vocab-size", "80", "--max-length", "24", "--tokens-per-batch", "256"]
    argv += [arg for key in ("num_layers", "d_model", "num_heads", "d_ff", "dropout", "warmup_steps")
             for arg in ("--set", f"{key}={SMALL[key]}")]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert ": 3 epochs finished" in out and "tfm average --run" in out


def test_truncated_checkpoint_is_named(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    path = os.path.join(run_dir, runs.CHECKPOINT_DIR, "epoch_002.weights.h5")
    truncate(path)
    with pytest.raises(ValueError, match="cannot read the weights in .*epoch_002.weights.h5.*damaged"):
        runs.load_run(run_dir)
    assert cli.main(["translate", "--run", run_dir, "seven"]) == 1
    err = capsys.readouterr().err
    assert "epoch_002.weights.h5" in err and "Traceback" not in err
    assert cli.main(["average", "--run", run_dir, "--last", "2"]) == 1
    assert "epoch_002.weights.h5" in capsys.readouterr().err
    assert cli.main(["translate", "--run", run_dir, "--checkpoint", "1", "seven"]) == 0  # another one still works


def test_truncated_tokenizer_is_named(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    truncate(os.path.join(run_dir, runs.TOKENIZER_DIR, "sentencepiece.model"))
    assert cli.main(["translate", "--run", run_dir, "seven"]) == 1
    err = capsys.readouterr().err
    assert "cannot read the tokenizer" in err and "sentencepiece.model" in err and "InternalError" not in err


def test_corrupted_gzip_corpus_is_a_message(tmp_path, capsys):
    source, target = tmp_path / "src.gz", tmp_path / "tgt.gz"
    for path in (source, target):
        with gzip.open(path, "wb") as f:
            f.write(b"a line of text\n" * 2000)
    data = bytearray(source.read_bytes())
    data[40:80] = b"\x00" * 40  # corrupt the deflate stream
    source.write_bytes(bytes(data))
    out = str(tmp_path / "run")
    argv = ["train", "--dataset", "files", "--source-file", str(source), "--target-file", str(target),
            "--output", out, "--epochs", "1"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "src.gz" in err and "damaged" in err and "Traceback" not in err
    assert not os.path.exists(os.path.join(out, runs.CONFIG_FILE))


def test_a_folder_given_as_a_corpus_file_says_so(tmp_path, capsys):
    argv = ["train", "--dataset", "files", "--source-file", str(tmp_path), "--target-file", str(tmp_path),
            "--output", str(tmp_path / "run")]
    assert cli.main(argv) == 1
    assert "is a folder" in capsys.readouterr().err


def test_a_refused_start_writes_nothing_so_the_fix_runs(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert cli.main(["train", "--output", out, "--max-length", "1", "--epochs", "1"]) == 1
    assert "max_length=1" in capsys.readouterr().err
    assert not os.path.exists(out)
    assert cli.main(["train", "--output", out, "--tokens-per-batch", "10", "--epochs", "1"]) == 1
    assert "tokens_per_batch=10 is smaller than max_length=64" in capsys.readouterr().err
    assert not os.path.exists(out)


def test_ctrl_c_during_training_says_the_run_is_intact(finished_run, tmp_path, monkeypatch, capsys):
    """KeyboardInterrupt in epoch 3: a message (no traceback) that 2 epochs are kept; the same command resumes."""
    import tfm.training

    class Interrupt(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise KeyboardInterrupt

    real_train = tfm.training.train
    monkeypatch.setattr(tfm.training, "train", lambda *a, **k: real_train(*a, callbacks=[Interrupt()], **k))
    run_dir = copy_run(finished_run, tmp_path)
    argv = ["train", "--output", run_dir, "--epochs", "3", "--steps-per-epoch", "2", "--keep-checkpoints", "5",
            "--strategy", "default", "--vocab-size", "80", "--max-length", "24", "--tokens-per-batch", "256"]
    argv += [arg for key in ("num_layers", "d_model", "num_heads", "d_ff", "dropout", "warmup_steps")
             for arg in ("--set", f"{key}={SMALL[key]}")]
    assert cli.main(argv) == cli.EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert "interrupted" in err and "keeps 2 finished epochs" in err and "resume" in err
    assert [epoch for epoch, _ in runs.epoch_checkpoints(run_dir)] == [1, 2]
    monkeypatch.setattr(tfm.training, "train", real_train)
    assert cli.main(argv) == 0
    assert ": 3 epochs finished" in capsys.readouterr().out


def test_run_folder_of_another_format_says_what_to_do(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    info = runs.read_run_config(run_dir)
    runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE), {**info, "format": 99, "tfm_version": "9.0"})
    with pytest.raises(ValueError, match="format 99 .*tfm 9.0.*train into a new --output folder"):
        runs.load_run(run_dir)


def test_run_folder_of_the_previous_layout_still_loads_and_resumes(tmp_path):
    """A Seq2Seq run written before Seq2SeqConfig carried max_length / tokens_per_batch (they were in `data`)."""
    from tfm.config import Seq2SeqConfig

    config = Seq2SeqConfig.tiny(vocab_size=80, embedding_dim=8, units=8, max_length=24, tokens_per_batch=256)
    run_dir = str(tmp_path / "old")
    train(config, output=run_dir, epochs=1, **RUN)
    info = runs.read_run_config(run_dir)
    old = {k: v for k, v in info["model_config"].items()
           if k not in ("max_length", "tokens_per_batch", "learning_rate", "clipnorm", "label_smoothing",
                        "beam_size", "length_penalty", "max_extra_length", "checkpoints_to_average")}
    runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE), {**info, "model_config": old})
    model, _, loaded = runs.load_run(run_dir)
    assert loaded["config"].max_length == 24 and loaded["config"].tokens_per_batch == 256
    assert train(config, output=run_dir, epochs=2, **RUN).epochs == 2  # same configuration: resumed
