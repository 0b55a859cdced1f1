"""One rule for every output path (issue 39, items 1, 2, 3 and 5), as a careless user meets it.

`tfm average`, `tfm export` (both formats), `tfm evaluate` and `tfm train` resolve and check where they
write before any work (`tfm.runs.validate_output_file` / `tfm.serving.export_folder.validate_output_folder`): never
one of a run's own files, never under a file, a symbolic link loop or a dangling link. A refusal is one line and
exit status 1, and no file of the run or beside the output changes (bytes and modification times
compared). Exports are written into a temporary sibling and renamed into place only when complete; an
existing export is replaced only with `--overwrite` / `overwrite=True`.
"""

import json
import os

import pytest
import tensorflow as tf
from training_helper import train_argv

import tfm.training.averaging
import tfm.training.trainer
from tfm import runs
from tfm.cli import commands as cli
from tfm.config.recipe import RECORD_FORMAT
from tfm.models import Transformer
from tfm.serving import ctranslate2 as ct2_export
from tfm.serving import export_folder
from tfm.serving import saved_model as sm_export
from tfm.serving.metadata import read_metadata
from tfm.serving.saved_model_translator import SavedModelTranslator
from tfm.training.averaging import average_checkpoints

DEAD = 2**22 + 4321  # above the default pid_max: no such process


def snapshot(*folders):
    """Every entry under `folders`: a file's bytes and modification time, a link's target, a folder."""
    state = {}
    for folder in folders:
        for parent, dirs, files in os.walk(folder):
            for name in dirs + files:
                path = os.path.join(parent, name)
                if os.path.islink(path):
                    state[path] = ("link", os.readlink(path))
                elif os.path.isdir(path):
                    state[path] = ("folder",)
                else:
                    with open(path, "rb") as f:
                        state[path] = (f.read(), os.stat(path).st_mtime_ns)
    return state


def one_line(capsys):
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def no_work(monkeypatch):
    """Loading a run, building a model or reading a corpus fails the test: a refusal comes before any work."""
    def refuse(*args, **kwargs):
        raise AssertionError("work started before the output path was checked")

    monkeypatch.setattr(Transformer, "from_preset", refuse)
    monkeypatch.setattr(tfm.training.trainer, "load_pairs", refuse)


# 1: tfm average never writes over one of its inputs or any file of a run ---------------------------
def test_average_refuses_to_overwrite_an_epoch_checkpoint(example_run, capsys, no_work):
    target = os.path.join(example_run, "checkpoints", "epoch_002.weights.h5")
    before = snapshot(example_run)
    assert cli.main(["average", "--run", example_run, "--output", target]) == 1
    assert one_line(capsys) == (f"tfm average: error: --output {target!r} is epoch 2's checkpoint of the run "
                                f"{example_run!r}; tfm never writes over a run's own files: choose another path")
    assert snapshot(example_run) == before
    with pytest.raises(ValueError, match="is epoch 2's checkpoint of the run"):  # the Python API alike
        average_checkpoints(example_run, last=2, output=target)


@pytest.mark.parametrize("inside", ["backup/latest.weights.h5", "tokenizer/x.weights.h5", "logs/x.weights.h5",
                                    "checkpoints/epoch_009.weights.h5", "link.weights.h5"])
def test_average_refuses_every_file_of_a_run_even_through_a_link(example_run, tmp_path, capsys, inside, no_work):
    """A run's files are what training wrote (an epoch not written yet included: it would be read as that epoch);
    a link to one of them is that file."""
    output = os.path.join(example_run, inside)
    if inside == "link.weights.h5":
        output = str(tmp_path / inside)
        os.symlink(os.path.join(example_run, "checkpoints", "epoch_003.weights.h5"), output)
    before = snapshot(example_run, tmp_path)
    assert cli.main(["average", "--run", example_run, "--output", output]) == 1
    err = one_line(capsys)
    assert err.startswith(f"tfm average: error: --output {output!r} is ") and err.endswith(
        f" of the run {example_run!r}; tfm never writes over a run's own files: choose another path")
    assert snapshot(example_run, tmp_path) == before


def test_average_output_must_be_a_weights_file_name(example_run, tmp_path, no_work):
    with pytest.raises(IsADirectoryError, match=f"--output '{tmp_path}/x.weights.h5' is a folder; give a file name "
                       "ending in .weights.h5"):
        (tmp_path / "x.weights.h5").mkdir()
        average_checkpoints(example_run, output=str(tmp_path / "x.weights.h5"))
    with pytest.raises(ValueError, match="the file name must end in .weights.h5"):
        average_checkpoints(example_run, output=str(tmp_path / "avg.h5"))


def test_average_into_another_runs_checkpoint_is_refused(example_run, fresh_run, capsys, no_work):
    target = os.path.join(fresh_run, "checkpoints", "epoch_001.weights.h5")
    before = snapshot(example_run, fresh_run)
    assert cli.main(["average", "--run", example_run, "--output", target]) == 1
    assert one_line(capsys) == (f"tfm average: error: --output {target!r} is epoch 1's checkpoint of the run "
                                f"{fresh_run!r}; tfm never writes over a run's own files: choose another path")
    assert snapshot(example_run, fresh_run) == before


# 2: the average's record is named after the whole weights file: it clobbers nothing -------------
def test_average_record_cannot_overwrite_config_json(fresh_run, capsys):
    config = os.path.join(fresh_run, "config.json")
    before = snapshot(os.path.join(fresh_run, "checkpoints"), os.path.join(fresh_run, "tokenizer"))
    with open(config, "rb") as f:
        config_bytes, config_mtime = f.read(), os.stat(config).st_mtime_ns
    output = os.path.join(fresh_run, "config.weights.h5")
    assert cli.main(["average", "--run", fresh_run, "--last", "2", "--output", output]) == 0
    with open(config, "rb") as f:
        assert (f.read(), os.stat(config).st_mtime_ns) == (config_bytes, config_mtime)
    assert runs.read_run_config(fresh_run)["format"] == RECORD_FORMAT  # the run still reads as a run
    with open(output + ".averaging.json") as f:
        assert json.load(f) == {"epochs": [2, 3], "checkpoints": ["epoch_002.weights.h5", "epoch_003.weights.h5"]}
    assert snapshot(os.path.join(fresh_run, "checkpoints"), os.path.join(fresh_run, "tokenizer")) == before


def test_average_record_leaves_a_json_of_the_same_stem_alone(example_run, tmp_path, capsys):
    mine = tmp_path / "pkg.json"
    mine.write_text('{"mine": true}\n')
    before = snapshot(example_run) | {str(mine): (mine.read_bytes(), mine.stat().st_mtime_ns)}
    output = str(tmp_path / "pkg.weights.h5")
    assert cli.main(["average", "--run", example_run, "--last", "2", "--output", output]) == 0
    assert snapshot(example_run) | {str(mine): (mine.read_bytes(), mine.stat().st_mtime_ns)} == before
    assert sorted(os.listdir(tmp_path)) == ["pkg.json", "pkg.weights.h5", "pkg.weights.h5.averaging.json"]


def test_an_earlier_versions_record_is_still_read_then_replaced(fresh_run, caplog):
    """Runs averaged before: `checkpoints/averaged.json`. weights_path still says the average is stale from it; the
    next tfm average writes the new record and removes the old one."""
    checkpoints = os.path.join(fresh_run, "checkpoints")
    average_checkpoints(fresh_run, last=2, epochs=None)
    os.replace(runs.averaging_record(os.path.join(checkpoints, runs.AVERAGED)),
               os.path.join(checkpoints, "averaged.json"))
    with open(os.path.join(checkpoints, "averaged.json"), "w") as f:
        json.dump({"epochs": [1, 2]}, f)  # older than epoch 3
    runs.weights_path(fresh_run)
    assert any("averages checkpoints up to epoch 2, but epoch 3 exists" in r.getMessage() for r in caplog.records)
    average_checkpoints(fresh_run, last=2)
    assert "averaged.json" not in os.listdir(checkpoints)
    assert "averaged.weights.h5.averaging.json" in os.listdir(checkpoints)


# 3: an output under a bad parent: one line, before any work, for every command --------------------
def bad_parent(tmp_path, kind):
    if kind == "a file":
        parent = tmp_path / "notes.txt"
        parent.write_text("keep me")
        return str(parent), f"{str(parent)!r} is a file, not a folder"
    if kind == "a link loop":
        parent = tmp_path / "loop"
        os.symlink(parent, parent)
        return str(parent), (f"{str(parent)!r} is a symbolic link loop (it, or a folder above it, links back to "
                             "itself); remove the link or give another path")
    parent = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", parent)
    return str(parent), (f"{str(parent)!r} is a symbolic link to {str(tmp_path / 'nowhere')!r}, which does not "
                         "exist; remove the link or create its target")


@pytest.mark.parametrize("kind", ["a file", "a link loop", "a dangling link"])
@pytest.mark.parametrize("command", ["export", "export-ct2", "average", "train"])
def test_an_output_under_a_bad_parent_is_one_line_before_any_work(example_run, tmp_path, capsys, no_work, kind,
                                                                  command):
    parent, reason = bad_parent(tmp_path, kind)
    output = os.path.join(parent, "avg.weights.h5" if command == "average" else "1")
    argv = {"export": ["export", "--run", example_run, "--output", output],
            "export-ct2": ["export", "--run", example_run, "--output", output, "--format", "ctranslate2"],
            "average": ["average", "--run", example_run, "--output", output],
            "train": train_argv(output, 1)}[command]
    before = snapshot(example_run, tmp_path)
    assert cli.main(argv) == 1
    assert one_line(capsys) == f"tfm {argv[0]}: error: --output {output!r}: {reason}"
    assert snapshot(example_run, tmp_path) == before


class NotBuilt:
    @staticmethod
    def from_preset(*args, **kwargs):
        pytest.fail("averaged first")


@pytest.mark.parametrize("read_only", [False, True])
def test_an_output_that_cannot_be_written_is_one_line_before_any_work(example_run, fresh_run, tmp_path, monkeypatch,
                                                                      capsys, read_only):
    """As root, `chmod` stops nothing: `os.access` answers for a folder that is not this user's, `statvfs` for a
    read-only mount."""
    from tfm.decoding import bleu

    real_access, real_statvfs = os.access, os.statvfs
    under = str(tmp_path)

    def access(path, mode, *args, **kwargs):
        return False if os.fspath(path).startswith(under) and mode & os.W_OK else real_access(path, mode, *args,
                                                                                               **kwargs)

    class ReadOnly:
        f_flag = os.ST_RDONLY

    monkeypatch.setattr(os, "access", access)
    monkeypatch.setattr(os, "statvfs", lambda path: ReadOnly() if read_only else real_statvfs(path))
    monkeypatch.setattr(bleu, "evaluate", lambda *args, **kwargs: pytest.fail("decoded first"))
    monkeypatch.setattr(tfm.training.averaging, "model_class", lambda config: NotBuilt)  # no model before the check
    cause = "the file system is read-only (EROFS)" if read_only else "permission denied (EACCES)"
    export, average = str(tmp_path / "exported" / "1"), str(tmp_path / "avg.weights.h5")
    before = snapshot(example_run, tmp_path)
    for argv, path in [(["export", "--run", example_run, "--output", export], export),
                       (["export", "--run", example_run, "--output", export, "--format", "ctranslate2"], export),
                       (["average", "--run", example_run, "--output", average], average),
                       (["evaluate", "--run", fresh_run, "--split", "val"], os.path.join(fresh_run, "hyps"))]:
        assert cli.main(argv) == 1
        assert one_line(capsys) == f"tfm {argv[0]}: error: cannot write {path}: {cause}"
    assert snapshot(example_run, tmp_path) == before


def test_replacing_an_export_needs_the_folder_it_is_in_to_be_writable(tmp_path, monkeypatch):
    """An export is put in place by renaming a sibling: its parent must be writable, not only the export."""
    target = tmp_path / "exported" / "1"
    target.mkdir(parents=True)
    (target / "saved_model.pb").write_bytes(b"an export")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kwargs: os.fspath(path) != str(target.parent)
                        and real_access(path, mode, **kwargs))
    with pytest.raises(runs.WriteError, match=f"cannot write {target}: permission denied"):
        sm_export.validate_saved_model_dir(str(target), overwrite=True)


def test_a_new_run_inside_a_runs_own_files_is_refused(example_run, capsys, no_work):
    before = snapshot(example_run)
    output = os.path.join(example_run, "tokenizer")
    assert cli.main(train_argv(output, 1)) == 1
    assert one_line(capsys) == (f"tfm train: error: --output {output!r} is the tokenizer of the run {example_run!r}; "
                                "tfm never writes over a run's own files: choose another path")
    assert snapshot(example_run) == before


def test_a_project_folder_with_a_config_json_is_no_run(tmp_path, capsys, no_work):
    """Only a tfm run's files are protected: elsewhere config.json and checkpoints/ are just names."""
    (tmp_path / "config.json").write_text('{"learning_rate": 0.1}')
    (tmp_path / "checkpoints").mkdir()
    assert runs.describe_run_file(str(tmp_path / "checkpoints" / "epoch_001.weights.h5")) is None
    assert export_folder.validate_output_folder(str(tmp_path / "logs" / "1"), marker="saved_model.pb", entries=(),
                                                kind="an exported model") == str(tmp_path / "logs" / "1")


def test_export_into_a_runs_own_files_is_refused(example_run, capsys, no_work):
    before = snapshot(example_run)
    for output, reason in [(os.path.join(example_run, "checkpoints"), "is the checkpoints folder of the run"),
                           (os.path.join(example_run, "tokenizer", "1"), "is inside the tokenizer of the run")]:
        assert cli.main(["export", "--run", example_run, "--output", output, "--overwrite"]) == 1
        assert one_line(capsys) == (f"tfm export: error: --output {output!r} {reason} {example_run!r}; tfm never "
                                    "writes over a run's own files: choose another path")
    assert cli.main(["export", "--run", example_run, "--output", example_run, "--overwrite"]) == 1
    assert one_line(capsys) == (f"tfm export: error: --output {example_run!r} is a tfm run folder, not an exported "
                                "model (it holds checkpoints, config.json, history.csv, tokenizer); choose a new or "
                                "empty folder, e.g. exported/NAME/1")
    assert snapshot(example_run) == before


def test_evaluate_refuses_a_results_folder_that_is_a_file_before_decoding(fresh_run, capsys, monkeypatch):
    from tfm.decoding import bleu

    def refuse(*args, **kwargs):
        raise AssertionError("decoded before the output path was checked")

    monkeypatch.setattr(bleu, "evaluate", refuse)
    hyps = os.path.join(fresh_run, "hyps")
    with open(hyps, "w") as f:
        f.write("not a folder")
    before = snapshot(fresh_run)
    assert cli.main(["evaluate", "--run", fresh_run, "--split", "val", "--limit", "2"]) == 1
    assert one_line(capsys) == f"tfm evaluate: error: the results folder {hyps!r} is a file, not a folder"
    assert snapshot(fresh_run) == before


# 5: exports land whole or not at all; an existing one is replaced only when asked ------------------
@pytest.fixture(scope="module")
def example_model(example_run):
    model = Transformer.from_preset(example_run)
    return model, runs.load_tokenizer(example_run, model.config)


def test_a_failed_export_leaves_nothing_and_the_retry_works(example_run, example_model, tmp_path, monkeypatch,
                                                            capsys):
    """A save cut short (half a variables/ folder written, then TensorFlow's error) once left a folder that
    blocked the retry; a killed export's temporary folder is removed by the next one."""
    real_save = tf.saved_model.save

    def half_written(module, folder, **kwargs):
        os.makedirs(os.path.join(folder, "variables"))
        with open(os.path.join(folder, "variables", "variables_temp"), "wb") as f:
            f.write(b"half")
        raise tf.errors.ResourceExhaustedError(None, None, f"{folder}/variables/variables_temp; No space left on "
                                               "device")

    monkeypatch.setattr(tf.saved_model, "save", half_written)
    target = str(tmp_path / "exported" / "numbers" / "1")
    with pytest.raises(tf.errors.ResourceExhaustedError):
        sm_export.export_saved_model(example_model, target, beam_size=1)
    assert os.listdir(tmp_path) == []  # not even the folders made for it
    (tmp_path / "exported" / "numbers").mkdir(parents=True)
    assert cli.main(["export", "--run", example_run, "--output", target]) == 1
    err = one_line(capsys)
    assert err.startswith("tfm export: error: cannot write ") and err.endswith(": No space left on device")
    assert os.listdir(tmp_path / "exported" / "numbers") == []

    monkeypatch.setattr(tf.saved_model, "save", real_save)
    killed = tmp_path / "exported" / "numbers" / f".tmp{DEAD}.1"  # what a killed export leaves
    (killed / "variables").mkdir(parents=True)
    (killed / "variables" / "variables_temp").write_bytes(b"half")
    assert cli.main(["export", "--run", example_run, "--output", target]) == 0
    assert os.listdir(tmp_path / "exported" / "numbers") == ["1"]
    assert sorted(os.listdir(target)) == ["assets", "fingerprint.pb", "saved_model.pb", "tfm_export.json",
                                          "variables"]
    translator = SavedModelTranslator(target)
    assert translator(["seven"]) == __import__("tfm").Translator(*example_model, beam_size=4)(["seven"])


def test_an_existing_saved_model_is_replaced_only_with_overwrite(example_run, example_model, tmp_path, monkeypatch,
                                                                 capsys):
    target = str(tmp_path / "exported" / "1")
    assert cli.main(["export", "--run", example_run, "--output", target, "--beam-size", "1"]) == 0
    capsys.readouterr()
    before = snapshot(tmp_path)
    assert cli.main(["export", "--run", example_run, "--output", target, "--beam-size", "2"]) == 1
    assert one_line(capsys) == (f"tfm export: error: --output {target!r} already holds an exported model; replace "
                                "it with --overwrite (overwrite=True in Python), or choose a new folder")
    assert snapshot(tmp_path) == before

    def fails(*args, **kwargs):
        raise RuntimeError("the save failed")

    with monkeypatch.context() as patch:  # a failed replacement keeps the old export as it was
        patch.setattr(tf.saved_model, "save", fails)
        with pytest.raises(RuntimeError, match="the save failed"):
            sm_export.export_saved_model(example_model, target, beam_size=2, overwrite=True)
    assert snapshot(tmp_path) == before

    assert cli.main(["export", "--run", example_run, "--output", target, "--beam-size", "2", "--overwrite"]) == 0
    assert read_metadata(target)["beam_size"] == 2
    assert os.listdir(tmp_path / "exported") == ["1"]  # no temporary sibling, no old copy


def test_overwrite_never_replaces_a_folder_that_is_not_an_export(example_run, tmp_path, capsys, no_work):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(b"mine")
    (folder / "notes.txt").write_text("keep me")
    before = snapshot(tmp_path)
    for argv in (["--overwrite"], ["--overwrite", "--format", "ctranslate2"]):
        assert cli.main(["export", "--run", example_run, "--output", str(folder), *argv]) == 1
        assert one_line(capsys).startswith(f"tfm export: error: --output {str(folder)!r} exists and is not ")
    assert snapshot(tmp_path) == before


def test_an_existing_ctranslate2_export_is_replaced_only_with_overwrite(example_run, example_model, tmp_path,
                                                                         monkeypatch, capsys):
    pytest.importorskip("ctranslate2")
    target = str(tmp_path / "ct2")
    argv = ["export", "--run", example_run, "--output", target, "--format", "ctranslate2"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    before = snapshot(tmp_path)
    assert cli.main(argv + ["--quantization", "int8"]) == 1
    assert one_line(capsys) == (f"tfm export: error: --output {target!r} already holds a CTranslate2 export; "
                                "replace it with --overwrite (overwrite=True in Python), or choose a new folder")
    assert snapshot(tmp_path) == before

    def fails(self, folder):
        with open(os.path.join(folder, "model.bin"), "wb") as f:
            f.write(b"half")
        raise OSError(28, "No space left on device")

    from ctranslate2.specs import TransformerSpec

    with monkeypatch.context() as patch:  # a failed replacement keeps the old export as it was
        patch.setattr(TransformerSpec, "save", fails)
        with pytest.raises(OSError, match="No space left"):
            ct2_export.export_ctranslate2(example_model, target, quantization="int8", overwrite=True)
    assert snapshot(tmp_path) == before

    assert cli.main(argv + ["--quantization", "int8", "--overwrite"]) == 0
    assert read_metadata(target)["quantization"] == "int8"
    assert os.listdir(tmp_path) == ["ct2"]
