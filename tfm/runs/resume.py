"""Where a run folder stands, and how a resumed session continues from it.

    standing = resume.where_run_stands(run_dir, backup_dir)   # epochs done, from the backup or a checkpoint
    initial_epoch = resume.restore_from_checkpoint(run_dir, standing.checkpoint, model, shadow)

`tfm.training.train` asks this module what a run folder (`tfm.runs`) has finished
before it trains. Two records say it: Keras' `BackupAndRestore` folder (`RUN/backup/`:
weights, optimizer moments and step of the last finished epoch) and the epoch
checkpoints (`RUN/checkpoints/epoch_NNN.weights.h5`, weights only). The backup is
preferred; a damaged one is repaired from its older copy or set aside (never deleted),
and a missing one falls back to the newest epoch checkpoint that reads in full, with
fresh optimizer moments. Nothing is trusted for being there: a backup's weights must
have the size and SHA-256 its metadata records (`tfm.training.callbacks.RunBackup` writes them
last), or, written by Keras' own `BackupAndRestore`, every dataset must read; an epoch
checkpoint must read in full; history.csv must hold a row for every finished epoch
(`verify_history`: a damaged, cut-short or missing one is rebuilt, the original kept beside it,
and the epochs whose numbers are lost said). Only training reads this; inference needs `tfm.runs`
alone.
"""

import hashlib
import json
import logging
import os
import shutil
from typing import NamedTuple

from tfm.runs import folder as runs

logger = logging.getLogger("tfm.runs.resume")

BACKUP_WEIGHTS = "latest.weights.h5"  # BackupAndRestore's names inside RUN/backup/ (`*.bkp`: the older copy)
BACKUP_METADATA = "training_metadata.json"


class Standing(NamedTuple):
    """What a run folder has finished, as `where_run_stands` reads it.

    Attributes:
        epochs: int. Epochs finished (0 for a fresh run).
        from_backup: bool. The backup restores them (weights, moments and step);
            otherwise a session continues from `checkpoint`.
        checkpoint: `(epoch, path)` of the newest epoch checkpoint, or None.

    Args:
        epochs, from_backup, checkpoint: the attributes.

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


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _newest_whole_state(backup_dir):
    """`(epoch, weights path, metadata path)` of the newest state of a backup folder whose weights are whole,
    or None.

    A `RunBackup` metadata file names its weights by size and SHA-256 (whichever of
    `latest.weights.h5` / `*.bkp` they are in after a cut-short write); a Keras one is paired
    with the weights of the same suffix, which must read in full. The newest state is
    checked first, so a whole backup costs one checksum.
    """
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
                    digests.setdefault(path, _sha256(path))
                except (OSError, KeyError, TypeError, ValueError):
                    continue
                if digests[path] == record.get("sha256"):
                    return epoch, path, metadata_path
        else:  # Keras' BackupAndRestore's
            path = os.path.join(backup_dir, BACKUP_WEIGHTS + suffix)
            if path in weights and runs.weights_problem(path) is None:
                return epoch, path, metadata_path
    return None


def _describe(path):
    """What is wrong with a backup's weights file: "is damaged (unreadable: ...)"."""
    if not os.path.isfile(path):
        return "is missing (a backup write was cut short)"
    problem = runs.weights_problem(path)
    return (f"is damaged (unreadable: {problem})" if problem
            else "is damaged (not the file its metadata describes: cut short or replaced)")


def verify_backup(backup_dir):
    """Epochs the backup will restore, after making sure what Keras loads is whole.

    The newest state whose weights are whole wins; when it is not the latest one
    (`latest.weights.h5` is damaged, or a write was cut short between renames), it is
    renamed into place with a warning. When no state is whole, the folder is moved
    aside (kept, renamed `backup.damaged`) so the run continues from its newest epoch
    checkpoint.

    Args:
        backup_dir: str. `RUN/backup/` (or a worker's).

    Returns:
        int: epochs the backup restores; 0 without a usable backup.

    Example:
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> verify_backup(os.path.join(run, runs.BACKUP_DIR))   # the example run has no backup
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
    """The `Standing` of an existing run folder: its backup's epochs (after `verify_backup`), else
    those of its newest epoch checkpoint that reads in full (damaged newer ones are named).

    Args:
        run_dir: str. The run folder.
        backup_dir: str. Its backup folder (`RUN/backup/`, or a worker's).

    Example:
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> standing = where_run_stands(run, os.path.join(run, runs.BACKUP_DIR))
        >>> standing.epochs, standing.from_backup, os.path.basename(standing.checkpoint[1])
        (2, False, 'epoch_002.weights.h5')
    """
    found = runs.epoch_checkpoints(run_dir)
    done = verify_backup(backup_dir)
    if done > 0:
        return Standing(done, True, found[-1] if found else None)
    for epoch, path in reversed(found):
        problem = runs.weights_problem(path)
        if problem is None:
            return Standing(epoch, False, (epoch, path))
        logger.warning("%s is damaged (%s); trying the checkpoint before it (this epoch will be trained again and "
                       "the file replaced)", path, problem)
    return Standing(0, False, None)


def restore_from_checkpoint(run_dir, checkpoint, model, shadow):
    """The backup is gone (deleted or damaged) but epoch checkpoints exist: continue from the newest.

    The weights come from the checkpoint (read through the float32 `shadow`); Adam's
    moments restart, and the step counter is set from history.csv so the
    learning-rate schedule continues.

    Args:
        run_dir: str. The run folder (its history.csv gives the step counter).
        checkpoint: `(epoch, path)`, e.g. `Standing.checkpoint`.
        model: the compiled model (its optimizer built).
        shadow: a float32 model of the same config, to read the weights file through.

    Returns:
        int: the epoch to start at (`model.fit`'s `initial_epoch`).

    Example:
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> config = runs.model_config_from_info(runs.read_run_config(run))
        >>> model, shadow = runs.build_float32_model(config), runs.build_float32_model(config)
        >>> model.compile(optimizer="adam")
        >>> model.optimizer.build(model.trainable_variables)
        >>> restore_from_checkpoint(run, where_run_stands(run, os.path.join(run, runs.BACKUP_DIR)).checkpoint,
        ...                         model, shadow)
        2
    """
    epoch, path = checkpoint
    runs.load_weights(shadow, path, config_file=os.path.join(run_dir, runs.CONFIG_FILE))
    model.set_weights(shadow.get_weights())
    try:
        rows = [row for row in runs.read_rows(os.path.join(run_dir, runs.HISTORY_FILE))
                if int(row["epoch"]) == epoch - 1]
    except ValueError:  # a damaged history.csv: verify_history sets it aside before training
        rows = []
    try:
        iterations = int(float(rows[-1]["iterations"]))
    except (IndexError, KeyError, TypeError, ValueError):
        iterations = None
    model.optimizer.iterations.assign(iterations or 0)
    logger.warning("no training state in %s: continuing from %s with fresh optimizer moments at step %s",
                   os.path.join(run_dir, runs.BACKUP_DIR), os.path.basename(path),
                   iterations if iterations is not None else
                   f"0 ({runs.HISTORY_FILE} records no step count for epoch {epoch}: the learning-rate schedule "
                   f"starts again, warm-up included)")
    return epoch


def _epochs(numbers):
    """`[3, 4, 5, 8]` -> "3-5, 8" (epochs counted from 1)."""
    spans = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)


def verify_history(run_dir, epochs):
    """Makes sure `RUN/history.csv` holds a row for each of the `epochs` finished epochs before a session adds
    to it; rebuilds it when not, never shortening it silently.

    A missing, damaged (not text, not CSV, no epoch column) or cut-short file is rebuilt from what the run
    knows: the rows that read, and for each finished epoch without one a row holding the epoch alone (its
    numbers are lost: nan in `read_history`). The original is kept as `history.csv.damaged`, and one warning
    names the file, the cause and the epochs whose numbers are lost.

    Args:
        run_dir: str. The run folder.
        epochs: int. Epochs the run has finished (`Standing.epochs`).

    Returns:
        list of int: the epochs (counted from 1) whose rows were lost; empty when the file was whole.

    Example:
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"), epochs=3)
        >>> verify_history(run, 3)
        []
        >>> path = os.path.join(run, runs.HISTORY_FILE)
        >>> runs.write_rows(path, runs.read_rows(path)[:1])   # cut short: epochs 2 and 3 lost
        >>> verify_history(run, 3)
        [2, 3]
        >>> runs.read_history(run)["epoch"], os.path.isfile(path + ".damaged")   # the original kept
        ([0, 1, 2], True)
    """
    path = os.path.join(run_dir, runs.HISTORY_FILE)
    damaged = f"{path}.damaged"
    rows, why = [], None
    if not os.path.isfile(path):
        if epochs == 0:
            return []
        why = "is missing"
    else:
        why = runs.history_problem(path)
        rows = runs.read_rows(path) if why is None else []
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
        shutil.copy2(path, damaged)
        kept = f"; the original is kept as {damaged}"
    runs.write_rows(path, rebuilt)
    logger.warning("%s %s: rebuilt with a row per finished epoch (%d)%s%s", path, why, epochs,
                   f"; the numbers of epoch{'s' if len(lost) > 1 else ''} {_epochs(lost)} are lost (their rows "
                   f"hold the epoch alone)" if lost else "", kept)
    return lost


def stream_seed(seed, done_before):
    """The shuffle and dropout seed of a session that starts after `done_before` epochs.

    A resumed run draws new shuffles and dropout masks. Reseeded with `seed` alone, it would
    replay the first epochs' batches with the same masks (the dropout streams are not in the
    backup), which the model has fitted already: training loss drops, regularisation weakens.

    Args:
        seed: int. The run's seed (`TrainingConfig.seed`).
        done_before: int. Epochs finished before this session.

    Example:
        >>> stream_seed(0, 0), stream_seed(0, 3), stream_seed(7, 3)
        (0, 3, 7000024)
    """
    return (seed * 1_000_003 + done_before) % (2**31 - 1) if done_before else seed


def epochs_on_disk(run_dir):
    """Epochs a run has finished according to its files: the newest epoch checkpoint, else history.csv.

    Args:
        run_dir: str. A run folder.

    Example:
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> epochs_on_disk(run)
        2
    """
    found = runs.epoch_checkpoints(run_dir)
    if found:
        return found[-1][0]
    try:
        return len(runs.read_rows(os.path.join(run_dir, runs.HISTORY_FILE)))
    except ValueError:  # a damaged history.csv counts nothing
        return 0
