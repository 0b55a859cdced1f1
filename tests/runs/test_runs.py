"""The run-folder contract: damaged files and interrupted runs give a clear message and a correct count,
files are written whole or not at all, one writer at a time.

The damaged-file fixtures: a corrupted gzip corpus, a truncated weights file, a truncated
SentencePiece model, a damaged training backup; each reproduces a failure that once ended in
a traceback or a wrong count. Faults met while a run is written (full disk, file-size limit,
read-only folder, a second writer, SIGTERM) are in test_run_faults.py.
"""

import errno
import gzip
import os

import keras
import pytest
from training_helper import RUN, copy_run, fail_fsync, small_recipe, train_argv

from tfm import runs
from tfm.cli import commands as cli
from tfm.cli.exits import EXIT_INTERRUPTED
from tfm.models import Transformer
from tfm.training import train


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
    result = train(small_recipe(keep_checkpoints=5), output=run_dir, epochs=3, **RUN)
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
    result = train(small_recipe(keep_checkpoints=5), output=run_dir, epochs=3, **RUN)
    assert os.path.isdir(backup + ".damaged")  # kept, not deleted
    assert "moved it to" in caplog.text
    assert result.initial_epoch == 2 and result.epochs == 3  # continued from epoch_002's weights


def test_train_command_counts_epochs_from_disk(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    truncate(os.path.join(run_dir, runs.BACKUP_DIR, "latest.weights.h5"))
    argv = train_argv(run_dir, 3)
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert ": 3 epochs finished" in out and "tfm average --run" in out


def test_truncated_checkpoint_is_named(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    path = os.path.join(run_dir, runs.CHECKPOINT_DIR, "epoch_002.weights.h5")
    truncate(path)
    with pytest.raises(ValueError, match="cannot read the weights in .*epoch_002.weights.h5.*damaged"):
        Transformer.from_preset(run_dir)
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
    assert "max_pair_length=1" in capsys.readouterr().err  # the pair filter's name since the config split
    assert not os.path.exists(out)
    assert cli.main(["train", "--output", out, "--tokens-per-batch", "10", "--epochs", "1"]) == 1
    assert "tokens_per_batch=10 is smaller than max_pair_length=64" in capsys.readouterr().err
    assert not os.path.exists(out)


def test_ctrl_c_during_training_says_the_run_is_intact(finished_run, tmp_path, monkeypatch, capsys):
    """KeyboardInterrupt in epoch 3: a message (no traceback) that 2 epochs are kept; the same command resumes."""
    import tfm.training

    class Interrupt(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise KeyboardInterrupt

    real_train = tfm.training.train
    monkeypatch.setattr(tfm.training.trainer, "train", lambda *a, **k: real_train(*a, callbacks=[Interrupt()], **k))
    run_dir = copy_run(finished_run, tmp_path)
    argv = train_argv(run_dir, 3)
    assert cli.main(argv) == EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert "interrupted" in err and "keeps 2 finished epochs" in err and "resume" in err
    assert [epoch for epoch, _ in runs.epoch_checkpoints(run_dir)] == [1, 2]
    monkeypatch.setattr(tfm.training.trainer, "train", real_train)
    assert cli.main(argv) == 0
    assert ": 3 epochs finished" in capsys.readouterr().out


def test_run_folder_of_another_format_says_what_to_do(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    info = runs.read_run_config(run_dir)
    runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE), {**info, "format": 99, "tfm_version": "9.0"})
    with pytest.raises(ValueError, match="format 99 .*tfm 9.0.*train into a new --output folder"):
        Transformer.from_preset(run_dir)


def test_run_folder_of_the_previous_layout_still_loads_and_resumes(tmp_path):
    """A Seq2Seq run of config.json format 1 written before Seq2SeqConfig carried max_length / tokens_per_batch and
    its optimizer and decoding (they were in `data`, or defaults): converted (`tfm.config.upgrade_record`) to the
    recipe it trained with, loaded, and resumed by the same recipe."""
    from tfm.config import Recipe
    from tfm.models import Seq2Seq

    recipe = Recipe.preset("tiny", model="bahdanau", embedding_dim=8, units=8, subwords=80, max_pair_length=24,
                           tokens_per_batch=256, steps_per_epoch=2, validation=False)
    run_dir = str(tmp_path / "old")
    trained = train(recipe, output=run_dir, epochs=1, **RUN)
    info = runs.read_run_config(run_dir)
    model, data, training = info["model"], info["data"], info["training"]
    old = {"tfm_version": "0.1.0", "format": 1, "model": "bahdanau", "model_config": model,
           "data": {"dataset": data["dataset"], "max_length": data["max_pair_length"],
                    "vocab_size": model["vocab_size"], "tokens_per_batch": training["tokens_per_batch"]},
           "training": {"seed": training["seed"], "keep_checkpoints": training["keep_checkpoints"],
                        "steps_per_epoch": training["steps_per_epoch"], "strategy": "_DefaultDistributionStrategy"}}
    runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE), old)
    loaded = Recipe.from_record(runs.read_run_config(run_dir))
    assert loaded.data.max_pair_length == 24 and loaded.training.tokens_per_batch == 256
    assert loaded.training.learning_rate == 1e-3 and loaded.training.clipnorm == 1.0  # the old defaults
    assert loaded.model == trained.recipe.model
    weights = Seq2Seq.from_preset(run_dir).get_weights()
    assert all((a == b).all() for a, b in zip(weights, trained.model.get_weights()))
    again = recipe.replace(subwords=model["vocab_size"], validation=True)  # format 1 kept the learned size only
    assert train(again, output=run_dir, epochs=2, **RUN).epochs == 2  # same configuration: resumed


# Writing files ------------------------------------------------------------------
@pytest.mark.parametrize("code, cause", [
    (errno.ENOSPC, "the disk is full (ENOSPC)"),
    (errno.EFBIG, "the file would exceed the file-size limit set by ulimit -f (EFBIG)"),
    (errno.EROFS, "the file system is read-only (EROFS)"),
])
def test_a_failed_write_names_the_file_and_the_cause_and_keeps_the_old_file(tmp_path, monkeypatch, code, cause):
    path = tmp_path / "history.csv"
    path.write_text("epoch,loss\n0,3.0\n")
    fail_fsync(monkeypatch, code, "history.csv")
    with pytest.raises(runs.WriteError) as error:
        runs.write_rows(str(path), [{"epoch": 0, "loss": 3.0}, {"epoch": 1, "loss": 2.0}])
    assert str(error.value) == f"cannot write {path}: {cause}"
    assert path.read_text() == "epoch,loss\n0,3.0\n" and os.listdir(tmp_path) == ["history.csv"]  # no .tmp left


def test_history_is_written_with_newlines_only(tmp_path):
    runs.write_rows(str(tmp_path / "history.csv"), [{"epoch": 0, "loss": 3.0}, {"epoch": 1, "loss": 2.0}])
    assert (tmp_path / "history.csv").read_bytes() == b"epoch,loss\n0,3.0\n1,2.0\n"
    (tmp_path / "old.csv").write_bytes(b"epoch,loss\r\n0,3.0\r\n")  # written by earlier versions: still read
    assert runs.read_rows(str(tmp_path / "old.csv")) == [{"epoch": "0", "loss": "3.0"}]


def test_format_history_shows_the_first_every_kth_and_the_last_epoch_counted_from_one():
    history = {"epoch": [0, 1, 2, 3, 4, 5, 6], "loss": [4.0, 3.0, 2.5, 2.25, 2.125, 2.0625, 2.03125],
               "val_loss": [3.5, 3.0, 2.0, 2.0, 1.5, 1.25, 1.125], "iterations": [10.0 * i for i in range(1, 8)]}
    table = runs.format_history(history, columns=("epoch", "loss", "accuracy", "val_loss"), every=3).splitlines()
    assert table[0].split() == ["epoch", "loss", "val_loss"]  # a column the log lacks is left out
    assert [line.split() for line in table[1:]] == [["1", "4", "3.5"], ["3", "2.5", "2"], ["6", "2.062", "1.25"],
                                                    ["7", "2.031", "1.125"]]
    assert len({len(line) for line in table}) == 1  # aligned
    assert len(runs.format_history(history).splitlines()) == 1 + 7
    with pytest.raises(ValueError, match="every=0"):
        runs.format_history(history, every=0)


def test_weights_are_written_whole_and_read_back(finished_run, tmp_path):
    model = Transformer.from_preset(finished_run)
    record = runs.save_weights(model, str(tmp_path / "copy.weights.h5"))
    assert record == runs.file_digest(str(tmp_path / "copy.weights.h5"))
    assert record["bytes"] == os.path.getsize(tmp_path / "copy.weights.h5")
    again = Transformer.from_preset(model.config)
    again.load_weights(str(tmp_path / "copy.weights.h5"))  # Keras reads what save_weights wrote through it
    for got, want in zip(again.get_weights(), model.get_weights()):
        assert (got == want).all()


def test_the_example_run_has_the_layout_train_writes(fresh_run):
    """Was the example of `tfm.runs.example.write_example_run`, now tests/runs/conftest.py's (tfm.runs builds no
    model)."""
    assert sorted(os.listdir(fresh_run)) == ["checkpoints", "config.json", "history.csv", "tokenizer"]
    assert sorted(os.listdir(os.path.join(fresh_run, "checkpoints"))) == [f"epoch_00{i}.weights.h5" for i in (1, 2, 3)]


def test_stale_temporaries_are_removed_but_not_a_live_process_ones(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "backup").mkdir()
    dead = 2**22 + 12345  # above the default pid_max: no such process
    stale = [run_dir / "checkpoints" / f".tmp{dead}.epoch_003.weights.h5", run_dir / "backup" / f".tmp{dead}.x",
             run_dir / f"config.json.tmp{dead}", run_dir / f".tmp{dead}_tokenizer"]
    for path in stale[:3]:
        path.write_bytes(b"half")
    stale[3].mkdir()
    live = run_dir / "checkpoints" / f".tmp{os.getppid()}.averaged.weights.h5"  # e.g. a tfm average at work
    live.write_bytes(b"half")
    assert sorted(runs.remove_temporaries(str(run_dir))) == sorted(map(str, stale))
    assert not any(path.exists() for path in stale) and live.exists()


# One writer at a time, and folders that are not what they seem ---------------------
def test_a_locked_run_folder_names_its_holder(tmp_path):
    with runs.lock_run(str(tmp_path)):
        with pytest.raises(runs.RunInUseError, match=rf"in use by PID {os.getpid()} \(started .* on .*\); wait"):
            with runs.lock_run(str(tmp_path)):
                pass
    with runs.lock_run(str(tmp_path)):  # released on leaving
        pass


def test_output_paths_that_are_not_folders_are_named(tmp_path):
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    with pytest.raises(NotADirectoryError, match="is a symbolic link loop"):
        runs.validate_fresh_folder(str(loop))
    dangling = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", dangling)
    with pytest.raises(NotADirectoryError, match="is a symbolic link to .*nowhere'?, which does not exist"):
        runs.validate_fresh_folder(str(dangling))
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is a file, not a folder"):
        runs.read_run_config(str(tmp_path / "file"))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        runs.read_run_config(str(tmp_path / "absent"))
