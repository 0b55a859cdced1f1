"""Where a run folder stands, and how a resumed session continues from it.

    standing = resume.where_run_stands(run_dir, backup_dir)   # epochs done, from the backup or a checkpoint
    initial_epoch = resume.restore_from_checkpoint(run_dir, standing.checkpoint, model, shadow)

`tfm.training.train` asks this module what a run folder (`tfm.runs`) has finished
before it trains. Two records say it: Keras' `BackupAndRestore` folder (`RUN/backup/`:
weights, optimizer moments and step of the last finished epoch) and the epoch
checkpoints (`RUN/checkpoints/epoch_NNN.weights.h5`, weights only). The backup is
preferred; a damaged one is repaired from its older copy or set aside (never deleted),
and a missing one falls back to the newest epoch checkpoint with fresh optimizer
moments. Only training reads this; inference needs `tfm.runs` alone.
"""

import json
import logging
import os
import shutil
from typing import NamedTuple

import h5py

from tfm import runs

logger = logging.getLogger("tfm.resume")

BACKUP_WEIGHTS = "latest.weights.h5"  # BackupAndRestore's names inside RUN/backup/ (`*.bkp`: the older copy)
BACKUP_METADATA = "training_metadata.json"


class Standing(NamedTuple):
    """What a run folder has finished, as `where_run_stands` reads it.

    Attributes:
        epochs: int. Epochs finished (0 for a fresh run).
        from_backup: bool. The backup restores them (weights, moments and step);
            otherwise a session continues from `checkpoint`.
        checkpoint: `(epoch, path)` of the newest epoch checkpoint, or None.
    """

    epochs: int
    from_backup: bool
    checkpoint: tuple | None


def _readable_weights(path):
    try:
        with h5py.File(path, "r"):
            return True
    except OSError:
        return False


def _backup_epoch(backup_dir, suffix=""):
    """Epochs finished according to a BackupAndRestore folder's metadata (0 when absent or unreadable)."""
    try:
        with open(os.path.join(backup_dir, BACKUP_METADATA + suffix)) as f:
            return int(json.load(f)["epoch"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def check_backup(backup_dir):
    """Epochs the backup will restore, after setting aside a damaged latest backup.

    Keras' BackupAndRestore falls back to its older copy (`*.bkp`) silently when the
    latest weights are unreadable; here that is said, and when no copy is readable
    the backup folder is moved aside (kept, renamed `backup.damaged`) so the run
    continues from its newest epoch checkpoint.
    """
    latest = os.path.join(backup_dir, BACKUP_WEIGHTS)
    if not os.path.isfile(latest):
        return _backup_epoch(backup_dir) if os.path.isdir(backup_dir) else 0
    if _readable_weights(latest):
        return _backup_epoch(backup_dir)
    previous = latest + ".bkp"
    if os.path.isfile(previous) and _readable_weights(previous):
        epoch = _backup_epoch(backup_dir, ".bkp")
        logger.warning("%s is damaged (unreadable); restoring the previous training state instead, of epoch %d "
                       "(%s): epoch %d will be trained again and its checkpoint and history row replaced",
                       latest, epoch, previous, epoch + 1)
        shutil.copyfile(previous, latest)
        metadata = os.path.join(backup_dir, BACKUP_METADATA)
        if os.path.isfile(metadata + ".bkp"):
            shutil.copyfile(metadata + ".bkp", metadata)
        return epoch
    aside = f"{backup_dir}.damaged"
    shutil.rmtree(aside, ignore_errors=True)
    os.replace(backup_dir, aside)
    logger.warning("%s is damaged and has no readable older copy; moved it to %s and continuing from the newest "
                   "epoch checkpoint", latest, aside)
    return 0


def where_run_stands(run_dir, backup_dir):
    """The `Standing` of an existing run folder: its backup's epochs (after `check_backup`), else
    its newest epoch checkpoint's."""
    found = runs.epoch_checkpoints(run_dir)
    newest = found[-1] if found else None
    done = check_backup(backup_dir)
    if done > 0:
        return Standing(done, True, newest)
    return Standing(newest[0] if newest else 0, False, newest)


def restore_from_checkpoint(run_dir, checkpoint, model, shadow):
    """The backup is gone (deleted or damaged) but epoch checkpoints exist: continue from the newest.

    The weights come from the checkpoint (read through the float32 `shadow`); Adam's
    moments restart, and the step counter is set from history.csv so the
    learning-rate schedule continues.

    Args:
        checkpoint: `(epoch, path)`, e.g. `Standing.checkpoint`.

    Returns:
        int: the epoch to start at (`model.fit`'s `initial_epoch`).
    """
    epoch, path = checkpoint
    runs.load_weights(shadow, path)
    model.set_weights(shadow.get_weights())
    rows = [row for row in runs.read_rows(os.path.join(run_dir, runs.HISTORY_FILE)) if int(row["epoch"]) == epoch - 1]
    iterations = int(float(rows[-1]["iterations"])) if rows and rows[-1].get("iterations") else 0
    model.optimizer.iterations.assign(iterations)
    logger.warning("no training state in %s: continuing from %s with fresh optimizer moments at step %d",
                   os.path.join(run_dir, runs.BACKUP_DIR), os.path.basename(path), iterations)
    return epoch


def stream_seed(seed, done_before):
    """The shuffle and dropout seed of a session that starts after `done_before` epochs.

    A resumed run draws new shuffles and dropout masks. Reseeded with `seed` alone, it would
    replay the first epochs' batches with the same masks (the dropout streams are not in the
    backup), which the model has fitted already: training loss drops, regularisation weakens.
    """
    return (seed * 1_000_003 + done_before) % (2**31 - 1) if done_before else seed


def epochs_on_disk(run_dir):
    """Epochs a run has finished according to its files: the newest epoch checkpoint, else history.csv."""
    found = runs.epoch_checkpoints(run_dir)
    if found:
        return found[-1][0]
    return len(runs.read_rows(os.path.join(run_dir, runs.HISTORY_FILE)))
