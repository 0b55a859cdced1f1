"""tfm.runs.resume: what a resumed session trusts. A backup counts only when its weights are the file its metadata
describes (size and SHA-256, written last by `RunBackup`), whichever step of a backup write was cut short; an
epoch checkpoint only when every dataset in it reads.

A small Dense model stands in for the Transformer: the backup files do not depend on the model.
"""

import json
import os

import keras
import numpy as np
import pytest

from tfm import runs
from tfm.runs import files, resume
from tfm.training.callbacks import RunBackup

LATEST, METADATA = resume.BACKUP_WEIGHTS, resume.BACKUP_METADATA


def compiled_model(seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


def back_up(backup_dir, model, epoch):
    """What RunBackup writes at the end of epoch `epoch` (1-based count of finished epochs)."""
    callback = RunBackup(str(backup_dir))
    callback.set_model(model)
    callback.save(epoch)


def weights_of(path):
    model = compiled_model(seed=99)
    model.load_weights(str(path))
    return model.get_weights()


def epoch_of(path):
    with open(path) as f:
        return json.load(f)["epoch"]


@pytest.fixture
def two_epochs(tmp_path):
    """A backup folder after epochs 1 and 2 (the weights differ), and the weights of each."""
    backup = tmp_path / "backup"
    first = compiled_model(seed=1)
    back_up(backup, first, 1)
    second = compiled_model(seed=2)
    back_up(backup, second, 2)
    return backup, first.get_weights(), second.get_weights()


def assert_weights(path, want):
    for got, expected in zip(weights_of(path), want):
        np.testing.assert_array_equal(got, expected)


def test_a_whole_backup_restores_its_epoch(two_epochs):
    backup, _, second = two_epochs
    assert sorted(os.listdir(backup)) == [LATEST, LATEST + ".bkp", METADATA, METADATA + ".bkp"]
    record = json.loads((backup / METADATA).read_text())
    assert record["epoch"] == 2 and record["weights"]["bytes"] == os.path.getsize(backup / LATEST)
    assert resume.verify_backup(str(backup)) == 2
    assert_weights(backup / LATEST, second)


@pytest.mark.parametrize("damage", ["truncated", "same size, other bytes", "missing"])
def test_a_damaged_latest_backup_falls_back_to_the_previous_one(two_epochs, damage, caplog):
    """A truncated file keeps a valid HDF5 header (h5py opens it): only the recorded size and checksum tell."""
    backup, first, _ = two_epochs
    data = (backup / LATEST).read_bytes()
    if damage == "truncated":
        (backup / LATEST).write_bytes(data[: len(data) // 2])
    elif damage == "same size, other bytes":
        middle = len(data) // 2
        (backup / LATEST).write_bytes(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64])
                                      + data[middle + 64:])
    else:
        os.remove(backup / LATEST)
    assert resume.verify_backup(str(backup)) == 1
    assert f"{LATEST} is " in caplog.text and "epoch 2 will be trained again" in caplog.text
    assert epoch_of(backup / METADATA) == 1
    assert_weights(backup / LATEST, first)  # what Keras' BackupAndRestore then loads


# RunBackup's steps at the end of an epoch, after dropping the older copy (*.bkp), and the epoch a session
# killed right after each one resumes from.
BACKUP_STEPS = [("write latest.weights.h5 to a temporary file", 2),
                ("rename latest.weights.h5 to *.bkp", 2),
                ("rename training_metadata.json to *.bkp", 2),
                ("rename the temporary file to latest.weights.h5", 2),  # new weights, but no metadata yet
                ("write training_metadata.json to a temporary file", 2),
                ("rename the temporary file to training_metadata.json", 3)]


@pytest.mark.parametrize("cut", range(len(BACKUP_STEPS)), ids=[step for step, _ in BACKUP_STEPS])
def test_a_backup_write_cut_short_at_any_step_leaves_a_whole_state(two_epochs, monkeypatch, cut):
    backup, _, second = two_epochs
    third = compiled_model(seed=3)
    steps = []

    def step():
        steps.append(BACKUP_STEPS[len(steps)][0])
        if len(steps) == cut + 1:
            raise KeyboardInterrupt(steps[-1])  # a kill

    real_replace, real_write = os.replace, files.write_atomic

    def replace(source, target):
        real_replace(source, target)
        step()

    def write_atomic(path, data, before_replace=None):
        step()
        real_write(path, data, before_replace)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(files, "write_atomic", write_atomic)  # RunBackup's weights and metadata writes
    with pytest.raises(KeyboardInterrupt):
        back_up(backup, third, 3)
    monkeypatch.undo()
    runs.remove_temporaries(str(backup.parent))  # what the next session does first
    expected = BACKUP_STEPS[cut][1]
    assert resume.verify_backup(str(backup)) == expected
    assert_weights(backup / LATEST, third.get_weights() if expected == 3 else second)


def test_a_backup_written_by_keras_is_read_in_full(tmp_path, caplog):
    """Folders of earlier versions (Keras' own BackupAndRestore: no checksum): each pair must read in full."""
    backup = tmp_path / "backup"
    for seed in (1, 2):
        callback = keras.callbacks.BackupAndRestore(str(backup), double_checkpoint=True)
        callback.set_model(compiled_model(seed))
        callback.on_epoch_end(seed - 1)  # what Keras wrote at the end of epoch `seed`
    assert resume.verify_backup(str(backup)) == 2
    data = (backup / LATEST).read_bytes()
    (backup / LATEST).write_bytes(data[: len(data) // 2])
    assert resume.verify_backup(str(backup)) == 1 and "unreadable" in caplog.text


def test_a_backup_with_nothing_whole_is_set_aside(two_epochs, caplog):
    backup, _, _ = two_epochs
    for name in (LATEST, LATEST + ".bkp"):
        data = (backup / name).read_bytes()
        (backup / name).write_bytes(data[:100])
    assert resume.verify_backup(str(backup)) == 0
    assert not backup.exists() and (backup.parent / "backup.damaged").is_dir()
    assert f"{LATEST} is damaged (unreadable: " in caplog.text and "moved it to" in caplog.text


def test_a_first_backup_cut_short_before_its_metadata_is_set_aside(tmp_path, caplog):
    """The first epoch's backup write failed half-way (an earlier tfm wrote in place): weights, no metadata."""
    backup = tmp_path / "backup"
    back_up(backup, compiled_model(1), 1)
    os.remove(backup / METADATA)
    data = (backup / LATEST).read_bytes()
    (backup / LATEST).write_bytes(data[: len(data) // 2])
    assert resume.verify_backup(str(backup)) == 0
    assert not backup.exists() and f"{LATEST} is damaged (unreadable: " in caplog.text


def test_a_damaged_newest_checkpoint_is_skipped_when_there_is_no_backup(tmp_path, caplog):
    folder = tmp_path / "run" / runs.CHECKPOINT_DIR
    folder.mkdir(parents=True)
    for epoch in (1, 2):
        runs.save_weights(compiled_model(epoch), str(folder / f"epoch_{epoch:03d}.weights.h5"))
    data = (folder / "epoch_002.weights.h5").read_bytes()
    (folder / "epoch_002.weights.h5").write_bytes(data[: len(data) // 2])
    standing = resume.where_run_stands(str(tmp_path / "run"), str(tmp_path / "run" / runs.BACKUP_DIR))
    assert standing == resume.Standing(1, False, (1, str(folder / "epoch_001.weights.h5")))
    assert "epoch_002.weights.h5 is damaged" in caplog.text
