"""Damaged inputs and wrong settings, as a careless user meets them (issue 39, the inputs' part).

Each case ends in one line that names the file or the setting and what to do with the command that met it
(exit status 1, or argparse's 2 for a flag; no traceback), and no file of the run changes unless the
command's purpose is to change it. Most cases damage a copy of a small run made without training
(`write_example_run` of tests/runs/conftest.py, about a second); the resumes train `finished_run`'s copies.
"""

import errno
import json
import logging
import os
import re
import shutil
import subprocess
import sys

import keras
import numpy as np
import pytest
from training_helper import ROOT, child_env, copy_run, train_argv

from tfm import runs
from tfm.cli import commands as cli
from tfm.config import DataConfig, DecodingConfig, Recipe, TrainingConfig
from tfm.models import Transformer
from tfm.runs import files, resume
from tfm.training.callbacks import RunBackup

TRANSLATE = ["translate", "--beam-size", "1", "seven"]


@pytest.fixture
def run(example_run, tmp_path):
    """A copy of conftest.py's 3-epoch run (recorded configs), made without training: damage only the copy."""
    return copy_run(example_run, tmp_path)


def listing(folder):
    """Every file under `folder` with its size and modification time: what a command must leave as it was."""
    return sorted((os.path.relpath(os.path.join(d, f), folder), os.path.getsize(os.path.join(d, f)),
                   os.path.getmtime(os.path.join(d, f))) for d, _, files in os.walk(folder) for f in files)


def refused(argv, capsys, status=1):
    """Runs `tfm ARGV`, which must fail with `status` and one line on stderr; returns that line."""
    assert cli.main(argv) == status, argv
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"tfm {argv[0]}: error: "), err
    return err


def truncate(path, keep=0.5):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: int(len(data) * keep)])


def run_config(run_dir):
    """The model config of a run folder."""
    return Recipe.from_record(runs.read_run_config(run_dir)).model


def edit_config(run_dir, change):
    """Rewrites RUN/config.json with `change(info)` applied to its parsed content."""
    path = os.path.join(run_dir, runs.CONFIG_FILE)
    with open(path) as f:
        info = json.load(f)
    change(info)
    with open(path, "w") as f:
        json.dump(info, f)


# 4: damaged weights files ------------------------------------------------------------------------
@pytest.mark.parametrize("damage, said, todo", [
    ("truncated", "the file is damaged", "restore it from a copy of the run"),
    ("garbage", "it is not a .keras archive (a zip file); the file is damaged", "restore it from a copy of the run"),
    ("an .h5 renamed", "it is an HDF5 weights file named .keras", "rename it to end in .weights.h5"),
])
def test_a_damaged_keras_checkpoint_is_one_line(run, capsys, damage, said, todo):
    """Once a zipfile.BadZipFile traceback (runs.load_weights)."""
    path = os.path.join(run, "given.keras")
    epoch_file = runs.latest_checkpoint(run)
    if damage == "an .h5 renamed":
        shutil.copy(epoch_file, path)
    else:
        model = Transformer.from_preset(run_config(run))
        model.save(path)  # a whole .keras archive first
        if damage == "truncated":
            truncate(path)
        else:
            with open(path, "wb") as f:
                f.write(os.urandom(4096))
    before = listing(run)
    err = refused([TRANSLATE[0], "--run", run, "--checkpoint", path, *TRANSLATE[1:]], capsys)
    assert f"cannot read the weights in {path}: " in err and said in err and todo in err
    assert "--checkpoint" in err  # what else translate can do
    assert listing(run) == before


@pytest.mark.parametrize("damage", ["truncated", "garbage", "a .keras archive renamed"])
def test_a_damaged_h5_checkpoint_is_one_line(run, capsys, damage):
    path = runs.latest_checkpoint(run)
    if damage == "truncated":
        truncate(path)
        said = "the file is damaged (cut short, overwritten or not a weights file): restore it from a copy of the run"
    elif damage == "garbage":
        with open(path, "wb") as f:
            f.write(b"\x1f\x8b\x08" + os.urandom(2000))
        said = "it is not an HDF5 file; the file is damaged"
    else:
        Transformer.from_preset(run_config(run)).save(
            os.path.join(run, "whole.keras"))
        os.replace(os.path.join(run, "whole.keras"), path)
        said = "it is a .keras archive named .weights.h5; rename it to end in .keras"
    before = listing(run)
    err = refused(["evaluate", "--run", run, "--limit", "2", "--beam-size", "1"], capsys)
    assert f"cannot read the weights in {path}: " in err and said in err
    assert err.endswith("or choose another checkpoint with --checkpoint (latest, an epoch number or a file)")
    assert listing(run) == before  # nothing evaluated, nothing written


def test_a_damaged_keras_checkpoint_leaves_no_traceback_in_a_real_process(run):
    path = os.path.join(run, "given.keras")
    with open(path, "wb") as f:
        f.write(b"PK\x03\x04" + b"\0" * 100)  # a zip's first bytes, nothing after
    done = subprocess.run([sys.executable, "-m", "tfm.cli", "translate", "--run", run, "--checkpoint", path,
                           "seven"], cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1].startswith(f"tfm translate: error: cannot read the weights in {path}")


# 4, 9: config.json of any JSON type; a config that does not fit the weights -----------------------------
@pytest.mark.parametrize("content, kind", [("[1, 2]", "array"), ('"transformer"', "string"), ("3", "number"),
                                           ("null", "null"), ("true", "boolean")])
def test_a_config_json_of_another_json_type_is_called_damaged_not_a_version_mismatch(run, capsys, content, kind):
    path = os.path.join(run, runs.CONFIG_FILE)
    with open(path, "w") as f:
        f.write(content)
    before = listing(run)
    err = refused(["translate", "--run", run, "seven"], capsys)
    assert f"{path} holds a JSON {kind} ({content}), not the object of settings tfm train writes" in err
    assert err.endswith("restore config.json from a copy of the run folder") and "format" not in err
    assert listing(run) == before


def test_a_config_json_overwritten_by_another_json_object_is_named(run, capsys):
    """What a sidecar written over config.json leaves: once "format None (made by tfm ?)"."""
    with open(os.path.join(run, runs.CONFIG_FILE), "w") as f:
        json.dump({"epochs": [2, 3], "checkpoints": ["epoch_002.weights.h5", "epoch_003.weights.h5"]}, f)
    err = refused(["evaluate", "--run", run], capsys)
    assert "is not a tfm run's settings (no \"format\"; it holds [\"checkpoints\", \"epochs\"])" in err
    assert "format None" not in err and "restore config.json from a copy" in err


@pytest.mark.parametrize("section, field, value, said", [  # a field's name is unique across config.json's sections
    ("model", "d_model", "sixteen", "d_model='sixteen' must be an int"),
    ("model", "norm_first", "false", "norm_first='false' must be a bool (true or false)"),
    ("decoding", "length_penalty", float("inf"), "alpha=inf: the length penalty must be a finite number"),
])
def test_a_hand_edited_config_value_is_named_with_the_file(run, capsys, section, field, value, said):
    edit_config(run, lambda info: info[section].update({field: value}))
    err = refused(["translate", "--run", run, "seven"], capsys)
    assert f"{os.path.join(run, runs.CONFIG_FILE)}: {said}" in err and "restore config.json from a copy" in err


def test_a_config_missing_d_model_is_blamed_on_the_config(run, capsys):
    """Once: "43 objects could not be loaded ... the file is damaged"."""
    edit_config(run, lambda info: info["model"].pop("d_model"))
    before = listing(run)
    err = refused(["translate", "--run", run, "seven"], capsys)
    config = os.path.join(run, runs.CONFIG_FILE)
    assert f"was written by a model of another configuration than {config} describes: " in err
    assert "d_model: the checkpoint's 16, config.json's 512 (absent from config.json: the default)" in err
    assert "If config.json was edited, put the checkpoint's values back" in err and "damaged" not in err
    assert listing(run) == before


def test_weights_without_a_record_that_do_not_fit_the_config_blame_the_config(run, capsys):
    """A checkpoint written by Keras itself (or an earlier tfm) has no record: the shapes tell."""
    model = Transformer.from_preset(run_config(run))
    path = runs.latest_checkpoint(run)
    model.save_weights(path)  # Keras' own writer: no record
    assert runs.weights_record(path) is None
    edit_config(run, lambda info: info["model"].pop("d_model"))
    err = refused(["translate", "--run", run, "seven"], capsys)
    assert f"the weights in {path} do not fit the model {os.path.join(run, runs.CONFIG_FILE)} describes: " in err
    assert re.search(r"\d+ of its \d+ arrays differ in shape \(\S+: the file has \(\d+, 16\), the model \(\d+, 512\)\)",
                     err), err
    assert "config.json's model section lacks d_model, so the default was used" in err


def test_a_checkpoint_made_under_another_config_is_refused_by_its_record(run, capsys):
    """Same-shape pre-LN weights in a post-LN config once loaded silently and translated nonsense."""
    edit_config(run, lambda info: info["model"].update(norm_first=True))
    with pytest.raises(ValueError, match="norm_first: the checkpoint's False, config.json's True"):
        Transformer.from_preset(run)
    err = refused(["average", "--run", run], capsys)
    assert "norm_first: the checkpoint's False, config.json's True" in err
    assert not os.path.exists(os.path.join(run, runs.CHECKPOINT_DIR, runs.AVERAGED))


def test_a_resume_whose_config_was_edited_is_refused_by_the_backups_record(finished_run, tmp_path, capsys):
    """Keras' BackupAndRestore loads the backup unchecked: config.json edited to pre-LN (and the flags to
    match) would have continued post-LN weights as pre-LN ones."""
    run_dir = copy_run(finished_run, tmp_path)
    edit_config(run_dir, lambda info: info["model"].update(norm_first=True))
    before = [entry for entry in listing(run_dir) if entry[0] != runs.LOCK_FILE]
    err = refused(train_argv(run_dir, 3, "--set", "norm_first=true"), capsys)
    backup = os.path.join(run_dir, runs.BACKUP_DIR, resume.BACKUP_WEIGHTS)
    assert err.startswith(f"tfm train: error: {backup} was written by a model of another configuration than "
                          f"{os.path.join(run_dir, runs.CONFIG_FILE)} describes: norm_first: the checkpoint's False, "
                          f"config.json's True.")
    assert [entry for entry in listing(run_dir) if entry[0] != runs.LOCK_FILE] == before


def test_checkpoints_record_their_config_and_old_ones_still_load_with_a_log_line(run, caplog):
    caplog.set_level(logging.INFO, logger="tfm.runs")
    record = runs.weights_record(runs.latest_checkpoint(run))
    config = run_config(run)
    assert record["model"] == "transformer" and record["model_config"] == json.loads(json.dumps(config.to_dict()))
    # A recipe field (dropout, beam size ...) may differ: the weights mean the same.
    edit_config(run, lambda info: (info["model"].update(dropout=0.3), info["decoding"].update(beam_size=2)))
    Transformer.from_preset(run)
    model = Transformer.from_preset(config)
    model.save_weights(runs.latest_checkpoint(run))  # as tfm wrote them before checkpoints recorded their config
    loaded = Transformer.from_preset(run, checkpoint="latest")
    assert "records no model config" in caplog.text and "loaded without checking it" in caplog.text
    for got, want in zip(loaded.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_the_averaged_checkpoint_records_its_config(run):
    from tfm.training.averaging import average_checkpoints

    path = average_checkpoints(run, last=2)
    assert runs.weights_record(path)["model_config"]["d_model"] == 16


# 9: messages that send the user the right way ------------------------------------------------------
def test_average_on_a_damaged_epoch_file_says_what_average_can_do(run, capsys):
    damaged = os.path.join(run, runs.CHECKPOINT_DIR, "epoch_002.weights.h5")
    truncate(damaged)
    before = listing(run)
    err = refused(["average", "--run", run], capsys)
    assert f"cannot read the weights in {damaged}: " in err and "restore it from a copy of the run" in err
    assert err.endswith(f"or move it out of {os.path.join(run, runs.CHECKPOINT_DIR)} to average the other "
                        f"checkpoints")
    assert "--checkpoint" not in err and "rerun tfm average" not in err
    assert listing(run) == before  # no averaged.weights.h5


def test_evaluate_says_the_hypotheses_are_saved_when_only_the_scores_are_not(run, monkeypatch, capsys):
    """A file-size limit that the .txt fits under but not the .json: once "not saved, nor the hypotheses"."""
    from tfm.decoding import bleu

    real = runs.write_atomic

    def limited(path, data, before_replace=None):
        if str(path).endswith(".json"):
            raise runs.WriteError(errno.EFBIG, os.strerror(errno.EFBIG), path)
        return real(path, data, before_replace)

    monkeypatch.setattr(runs, "write_atomic", limited)
    assert cli.main(["evaluate", "--run", run, "--split", "val", "--limit", "2", "--beam-size", "1"]) == 1
    captured = capsys.readouterr()
    stem = os.path.join(run, runs.HYPS_DIR, "val.beam1.alpha0.6.epoch_003.first2")
    assert "BLEU" in captured.out
    assert captured.err.strip() == (
        f"tfm evaluate: error: the hypotheses are saved ({stem}.txt), but not the scores above: cannot write "
        f"{stem}.json: the file would exceed the file-size limit set by ulimit -f (EFBIG); fix that and run the "
        f"same command again to save the scores")
    assert os.path.isfile(stem + ".txt") and not os.path.exists(stem + ".json")
    assert bleu.ResultsWriteError(errno.EFBIG, "", "x.json", ["x.txt"]).saved == ["x.txt"]


# 6: numeric settings, checked where they are read (CLI, --set, the Python API, a run's config.json) -------
@pytest.mark.parametrize("setting, said", [
    ("length_penalty=inf", "alpha=inf: the length penalty must be a finite number in [0, 10]"),
    ("length_penalty=nan", "alpha=nan: the length penalty must be a finite number in [0, 10]"),
    ("learning_rate_scale=-1", "learning_rate_scale=-1.0 must be > 0"),
    ("learning_rate_scale=1e39", "learning_rate_scale=1e+39 is beyond float32's range"),
    ("adam_epsilon=1e-50", "adam_epsilon=1e-50 is below float32's smallest normal number"),
    ("layer_norm_epsilon=0", "layer_norm_epsilon=0.0 must be > 0"),
    ("dropout=nan", "dropout=nan must be a finite number"),
    ("warmup_steps=4294967296", "warmup_steps=4294967296 is beyond int32's range"),
])
def test_a_bad_set_value_is_refused_before_a_run_folder_is_made(tmp_path, capsys, setting, said):
    output = tmp_path / "run"
    err = refused(["train", "--output", str(output), "--epochs", "1", "--set", setting], capsys)
    assert said in err
    assert not output.exists()


@pytest.mark.parametrize("argv, said", [
    (["translate", "--run", "r", "--alpha", "1e308", "x"], "argument --alpha: '1e308': the length penalty must be"),
    (["evaluate", "--run", "r", "--alpha", "11"],
     ("argument --alpha: '11': the length penalty must be a finite number in [0, 10]")),
    (["train", "--output", "r", "--seed", "-1"], "argument --seed: -1 must be an int in [0, 4294967295]"),
    (["train", "--output", "r", "--epochs", "4294967296"], "argument --epochs: 4294967296 is beyond int32's range"),
])
def test_a_bad_flag_value_is_refused_by_the_same_rule(argv, said, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.build_parser().parse_args(argv)
    assert stop.value.code == 2
    assert said in capsys.readouterr().err


def test_the_python_api_applies_the_same_rules(run):
    from tfm.decoding import Translator
    from tfm.serving.saved_model import ExportedTranslator

    with pytest.raises(ValueError, match="learning_rate_scale=-1 must be > 0"):
        TrainingConfig(learning_rate_scale=-1)
    with pytest.raises(ValueError, match="alpha=inf: the length penalty must be a finite number"):
        DecodingConfig(length_penalty=float("inf"))
    model = Transformer.from_preset(run)
    tokenizer = runs.load_tokenizer(run, model.config)
    for build in (Translator, ExportedTranslator):
        with pytest.raises(ValueError, match="alpha=1e\\+308: the length penalty must be a finite number in"):
            build(model, tokenizer, alpha=1e308)
    translator = Translator(model, tokenizer, beam_size=1)
    with pytest.raises(ValueError, match="alpha=inf"):
        translator.translate(["seven"], alpha=float("inf"))


# 7: conflicting flags ---------------------------------------------------------------------------------
def test_corpus_files_beside_another_dataset_are_refused_before_a_run_folder_is_made(tmp_path, capsys):
    """Once: trained on numbers, wrote the files into config.json, and refused the next resume over them."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("one\ntwo\n")
    output = tmp_path / "run"
    err = refused(["train", "--output", str(output), "--dataset", "numbers", "--source-file", str(corpus),
                   "--target-file", str(corpus)], capsys)
    assert ("--source-file/--target-file are read only with --dataset files (dataset='files'), but the dataset is "
            "'numbers', which brings its own data: drop --source-file/--target-file, or train on the files with "
            "--dataset files") in err
    assert not output.exists()
    with pytest.raises(ValueError, match="--target-file is read only with --dataset files"):
        DataConfig(dataset="numbers", target_file=str(corpus))


def test_a_run_that_recorded_stray_corpus_files_resumes(finished_run, tmp_path):
    """Runs made before the refusal hold the files beside another dataset: they were never read, and are
    dropped, so the same command resumes the run."""
    run_dir = copy_run(finished_run, tmp_path)
    edit_config(run_dir, lambda info: info["data"].update(source_file="/x/src.txt", target_file="/x/tgt.txt"))
    info = runs.read_run_config(run_dir)
    assert Recipe.from_record(info).data.source_file is None
    assert cli.main(train_argv(run_dir, 2)) == 0  # the same configuration: nothing to train, no refusal


# 8: history.csv on resume ------------------------------------------------------------------------------
def test_a_cut_short_history_is_rebuilt_on_resume_not_shortened(finished_run, tmp_path, caplog):
    run_dir = copy_run(finished_run, tmp_path)
    path = os.path.join(run_dir, runs.HISTORY_FILE)
    before = runs.read_history(run_dir)
    runs.write_rows(path, runs.read_rows(path)[1:])  # epoch 1's row lost (0-based epoch 0)
    assert cli.main(train_argv(run_dir, 3)) == 0
    history = runs.read_history(run_dir)
    assert history["epoch"] == [0, 1, 2]  # continuous, never a history of the last epochs only
    assert np.isnan(history["loss"][0]) and history["loss"][1] == before["loss"][1]
    assert f"{path} holds 1 of the 2 finished epochs' rows (cut short?): rebuilt" in caplog.text
    assert "the numbers of epoch 1 are lost" in caplog.text
    assert os.path.isfile(path + ".damaged")


@pytest.mark.parametrize("damage, said", [
    ("missing", "is missing"),
    ("garbage", "is not text (byte 0x8b at offset 1 is not UTF-8: a compressed or binary file?)"),
    ("no header", "has no epoch column (its first line is '0,2.5')"),
    ("empty", "is empty (0 bytes)"),
])
def test_a_damaged_or_missing_history_is_rebuilt_and_the_original_kept(run, caplog, damage, said):
    path = os.path.join(run, runs.HISTORY_FILE)
    original = None
    if damage == "missing":
        os.remove(path)
    else:
        original = {"garbage": b"\x1f\x8b\x08\x00" + bytes(range(256)), "no header": b"0,2.5\n1,2.0\n",
                    "empty": b""}[damage]
        with open(path, "wb") as f:
            f.write(original)
    assert resume.verify_history(run, 3) == [1, 2, 3]
    assert runs.read_history(run)["epoch"] == [0, 1, 2]
    assert f"{path} {said}: rebuilt with a row per finished epoch (3)" in caplog.text
    assert "the numbers of epochs 1-3 are lost" in caplog.text
    if original is not None:
        with open(path + ".damaged", "rb") as f:
            assert f.read() == original  # kept as it was


def test_a_damaged_history_is_named_where_it_is_read(run):
    path = os.path.join(run, runs.HISTORY_FILE)
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match=f"{path} is not text .*restore it from a copy of the run folder"):
        runs.read_history(run)


def test_a_write_failure_during_training_keeps_the_older_backup_copy(tmp_path, monkeypatch):
    """Once the older copy (*.bkp) was deleted before the new one was written: a full disk then left one copy."""
    backup = str(tmp_path / "backup")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.optimizer.build(model.trainable_variables)

    def back_up(epoch):
        callback = RunBackup(backup)
        callback.set_model(model)
        callback.save(epoch)

    back_up(1)
    back_up(2)
    before = listing(backup)
    real = files.write_atomic

    def full(path, data, before_replace=None):
        raise runs.WriteError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    monkeypatch.setattr(files, "write_atomic", full)  # what RunBackup's writes (weights, then metadata) go through
    with pytest.raises(runs.WriteError):
        back_up(3)
    monkeypatch.setattr(files, "write_atomic", real)
    assert listing(backup) == before  # both copies, as they were
    assert resume.verify_backup(backup) == 2


# 10: tokenizer.json / vocab.txt, listed as run files, are checked when a run is loaded --------------------
@pytest.mark.parametrize("name, damage, said", [
    ("vocab.txt", "truncated", "vocab.txt lists 30 tokens, not the 60 of sentencepiece.model (cut short?)"),
    ("vocab.txt", "missing", "vocab.txt is missing"),
    ("tokenizer.json", "garbage", "tokenizer.json is not valid JSON"),
])
def test_damaged_tokenizer_copies_are_said_once_and_the_run_still_translates(run, capsys, caplog, name, damage,
                                                                                said):
    path = os.path.join(run, runs.TOKENIZER_DIR, name)
    if damage == "truncated":
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines[:30])
    elif damage == "missing":
        os.remove(path)
    else:
        with open(path, "wb") as f:
            f.write(b"\x00\xff{")
    assert cli.main(["translate", "--run", run, "--beam-size", "1", "seven"]) == 0
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1 and said in warnings[0]
    assert "it is a readable copy that tfm does not read (the model uses sentencepiece.model" in warnings[0]
