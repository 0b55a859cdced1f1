"""Where a run folder stands, for `tfm.training.train` to resume it: the backup (`RUN/backup/`: weights, optimizer
moments and step of the last finished epoch) if whole (the size and SHA-256 its metadata records; a damaged one is
repaired from its older copy or set aside, never deleted), else the newest epoch checkpoint that reads in full;
and history.csv holding a row per finished epoch.
"""

import json
import logging
import os
import shutil
from typing import NamedTuple

from tfm.runs.checkpoints import epoch_checkpoints, file_digest, weights_problem
from tfm.runs.files import HISTORY_FILE
from tfm.runs.record import history_problem, read_rows, write_rows

logger = logging.getLogger("tfm.runs.resume")

BACKUP_WEIGHTS = "latest.weights.h5"  # BackupAndRestore's names inside RUN/backup/ (`*.bkp`: the older copy)
BACKUP_METADATA = "training_metadata.json"


class Standing(NamedTuple):
    """What a run folder has finished (`where_run_stands`): `epochs`; whether the backup restores them (weights,
    moments and step: `from_backup`), else a session continues from `checkpoint`, `(epoch, path)` of the newest epoch
    checkpoint (or None).

    Example:
        >>> Standing(epochs=0, from_backup=False, checkpoint=None)   # a fresh run
        Standing(epochs=0, from_backup=False, checkpoint=None)
    """

    epochs: int
    from_backup: bool
    checkpoint: tuple | None


def _read_metadata(path):
    try:
        with open(path) as f:
            metadata = json.load(f)
        int(metadata["epoch"])
        return metadata
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _newest_whole_state(backup_dir):
    """`(epoch, weights path, metadata path)` of the newest state whose weights are whole, or None: a `RunBackup`
    metadata file names its weights by size and SHA-256 (whichever of `latest.weights.h5` / `*.bkp` holds them after
    a cut-short write); a Keras one goes with the weights of its suffix, which must read in full."""
    weights = [os.path.join(backup_dir, BACKUP_WEIGHTS + suffix) for suffix in ("", ".bkp")]
    weights = [path for path in weights if os.path.isfile(path)]
    found = []
    for suffix in ("", ".bkp"):
        metadata_path = os.path.join(backup_dir, BACKUP_METADATA + suffix)
        metadata = _read_metadata(metadata_path)
        if metadata is not None:
            found.append((int(metadata["epoch"]), suffix, metadata_path, metadata))
    digests = {}
    for epoch, suffix, metadata_path, metadata in sorted(found, key=lambda item: -item[0]):
        record = metadata.get("weights")
        if isinstance(record, dict):  # RunBackup's
            for path in weights:
                try:
                    if os.path.getsize(path) != int(record["bytes"]):
                        continue
                    digests.setdefault(path, file_digest(path)["sha256"])
                except (OSError, KeyError, TypeError, ValueError):
                    continue
                if digests[path] == record.get("sha256"):
                    return epoch, path, metadata_path
        else:  # Keras' BackupAndRestore's
            path = os.path.join(backup_dir, BACKUP_WEIGHTS + suffix)
            if path in weights and weights_problem(path) is None:
                return epoch, path, metadata_path
    return None


def _describe(path):
    """What is wrong with a backup's weights file: "is damaged (unreadable: ...)"."""
    if not os.path.isfile(path):
        return "is missing (a backup write was cut short)"
    problem = weights_problem(path)
    return (f"is damaged (unreadable: {problem})" if problem
            else "is damaged (not the file its metadata describes: cut short or replaced)")


def verify_backup(backup_dir):
    """Epochs the backup (`RUN/backup/` or a worker's) will restore, 0 without one, once what Keras loads is whole:
    the newest state whose weights are whole is renamed into place when it is not the latest (with a warning); with
    none whole, the folder is set aside as `backup.damaged` and the run goes on from its newest epoch checkpoint.

    Example:
        >>> verify_backup(os.path.join(tempfile.mkdtemp(), "backup"))   # no backup yet
        0
    """
    if not os.path.isdir(backup_dir):
        return 0
    latest = os.path.join(backup_dir, BACKUP_WEIGHTS)
    metadata = os.path.join(backup_dir, BACKUP_METADATA)
    state = _newest_whole_state(backup_dir)
    if state is None:
        if not any(name.startswith((BACKUP_WEIGHTS, BACKUP_METADATA)) for name in os.listdir(backup_dir)):
            return 0  # an empty folder: nothing was backed up yet
        what, aside = _describe(latest), f"{backup_dir}.damaged"
        shutil.rmtree(aside, ignore_errors=True)
        os.replace(backup_dir, aside)
        logger.warning("%s %s and has no whole older copy; moved it to %s and continuing from the "
                       "newest epoch checkpoint", latest, what, aside)
        return 0
    epoch, path, metadata_path = state
    if (path, metadata_path) != (latest, metadata):
        logger.warning("%s %s; restoring the previous training state instead, of epoch %d (%s): "
                       "epoch %d will be trained again and its checkpoint and history row replaced",
                       latest, _describe(latest), epoch, path, epoch + 1)
        if path != latest:
            os.replace(path, latest)
        if metadata_path != metadata:
            os.replace(metadata_path, metadata)
    return epoch


def where_run_stands(run_dir, backup_dir):
    """The `Standing` of a run folder: its backup's epochs (`backup_dir`, after `verify_backup`), else those of its
    newest epoch checkpoint that reads in full (damaged newer ones are named).

    Example:
        >>> from tfm.runs.checkpoints import save_weights
        >>> run = tempfile.mkdtemp()
        >>> os.makedirs(os.path.join(run, "checkpoints"))
        >>> path = os.path.join(run, "checkpoints", "epoch_002.weights.h5")
        >>> _ = save_weights(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), path)
        >>> where_run_stands(run, os.path.join(run, "backup")) == Standing(2, False, (2, path))   # no backup
        True
    """
    found = epoch_checkpoints(run_dir)
    done = verify_backup(backup_dir)
    if done > 0:
        return Standing(done, True, found[-1] if found else None)
    for epoch, path in reversed(found):
        problem = weights_problem(path)
        if problem is None:
            return Standing(epoch, False, (epoch, path))
        logger.warning("%s is damaged (%s); trying the checkpoint before it (this epoch will be trained again and "
                       "the file replaced)", path, problem)
    return Standing(0, False, None)


def verify_history(run_dir, epochs):
    """Makes sure `RUN/history.csv` holds a row for each of the `epochs` finished epochs before a session adds to
    it, never shortening it silently; returns the epochs (from 1) whose rows were lost. A missing, damaged or
    cut-short file is rebuilt from the rows that read (a lost epoch's row holds the epoch alone), the original kept
    as `history.csv.damaged`, and one warning names the file, the cause and the epochs lost.

    Example:
        >>> run = tempfile.mkdtemp()
        >>> write_rows(os.path.join(run, HISTORY_FILE), [{"epoch": 0, "loss": 3.0}])   # cut short: 1 row of 3
        >>> verify_history(run, 3), sorted(os.listdir(run))
        ([2, 3], ['history.csv', 'history.csv.damaged'])
    """
    path = os.path.join(run_dir, HISTORY_FILE)
    rows, why = [], None
    if not os.path.isfile(path):
        if epochs == 0:
            return []
        why = "is missing"
    else:
        why = history_problem(path)
        rows = read_rows(path) if why is None else []
    by_epoch = {int(row["epoch"]): row for row in rows}
    lost = [epoch + 1 for epoch in range(epochs) if epoch not in by_epoch]
    if why is None and not lost:
        return []
    if why is None:
        why = f"holds {len([e for e in by_epoch if e < epochs])} of the {epochs} finished epochs' rows (cut short?)"
    rebuilt = [by_epoch.get(epoch, {"epoch": epoch}) for epoch in range(epochs)]
    rebuilt += [row for epoch, row in sorted(by_epoch.items()) if epoch >= epochs]
    kept = ""
    if os.path.isfile(path):
        shutil.copy2(path, f"{path}.damaged")
        kept = f"; the original is kept as {path}.damaged"
    write_rows(path, rebuilt)
    spans = []  # the lost epochs as "3-5, 8"
    for number in lost:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    logger.warning("%s %s: rebuilt with a row per finished epoch (%d)%s%s", path, why, epochs,
                   f"; the numbers of epoch{'s' if len(lost) > 1 else ''} "
                   f"{', '.join(f'{a}' if a == b else f'{a}-{b}' for a, b in spans)} are lost (their rows hold the "
                   f"epoch alone)" if lost else "", kept)
    return lost


def epochs_on_disk(run_dir):
    """Epochs a run has finished according to its files: the newest epoch checkpoint, else history.csv.

    Example:
        >>> run = tempfile.mkdtemp()
        >>> write_rows(os.path.join(run, HISTORY_FILE), [{"epoch": 0}, {"epoch": 1}])
        >>> epochs_on_disk(run)
        2
    """
    found = epoch_checkpoints(run_dir)
    if found:
        return found[-1][0]
    try:
        return len(read_rows(os.path.join(run_dir, HISTORY_FILE)))
    except ValueError:  # a damaged history.csv counts nothing
        return 0
