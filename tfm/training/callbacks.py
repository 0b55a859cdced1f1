"""Keras callbacks of a run folder: history.csv, epoch checkpoints, a NaN guard, the training backup.

`tfm.training.train` adds them to `model.fit` in this order, `RunBackup` last (so a
kill between callbacks repeats an epoch rather than losing its row or checkpoint).
Every file is written whole or not at all (`tfm.runs.write_atomic`). `TrainingBudget` is for the caller:
it stops training once a time budget is spent (the CPU recipes' "90 minutes of training").
"""

import json
import os
import time

import keras
import numpy as np

from tfm.runs import checkpoints, files, resume
from tfm.runs.record import read_rows, write_rows

_clock = time.perf_counter  # TrainingBudget's clock (a test gives it a fake one)
_cpu_clock = time.process_time  # this process' CPU seconds, all threads (a test gives it a fake one)


class HistoryCSV(keras.callbacks.Callback):
    """`CSVLogger` for resumable runs: one row per finished epoch in `history.csv`.

    When a resumed `fit` starts at epoch `e`, rows of epochs `>= e` (an epoch that
    ended in the file but not in the backup) are dropped first, so the epochs stay
    0..N-1 with no gap and no duplicate. The file is rewritten atomically each
    epoch; besides the logs it records `learning_rate`, `iterations` (optimizer
    steps so far) and `epoch_seconds`.

    Args:
        path: str. The CSV file.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((4, 2)), np.ones((4, 1))
        >>> path = os.path.join(tmp.name, "history.csv")
        >>> _ = model.fit(x, y, epochs=2, verbose=0, callbacks=[HistoryCSV(path)])
        >>> [row["epoch"] for row in read_rows(path)], sorted(read_rows(path)[0])
        (['0', '1'], ['epoch', 'epoch_seconds', 'iterations', 'learning_rate', 'loss'])
    """

    def __init__(self, path):
        super().__init__()
        self.path = path
        self._rows = None
        self._start = None

    def on_epoch_begin(self, epoch, logs=None):
        if self._rows is None:
            rows = read_rows(self.path)
            self._rows = [row for row in rows if int(row["epoch"]) < epoch]
            if len(self._rows) != len(rows):
                write_rows(self.path, self._rows)
        self._start = time.time()

    def on_epoch_end(self, epoch, logs=None):
        row = {"epoch": epoch}
        row.update({key: float(value) for key, value in (logs or {}).items()})
        optimizer = self.model.optimizer
        row["learning_rate"] = float(keras.ops.convert_to_numpy(optimizer.learning_rate))
        row["iterations"] = int(keras.ops.convert_to_numpy(optimizer.iterations))
        row["epoch_seconds"] = round(time.time() - self._start, 3)
        self._rows.append(row)
        write_rows(self.path, self._rows)


class EpochCheckpoint(keras.callbacks.Callback):
    """Saves the model weights (no optimizer state) as `epoch_NNN.weights.h5` after each epoch; keeps the last K.

    NNN is the number of finished epochs (epoch_001 after the first). Files are
    written whole or not at all (`tfm.runs.checkpoints.save_weights`), so a killed run or a full
    disk never leaves half a checkpoint.

    Args:
        folder: str. `RUN/checkpoints`.
        keep: int. Checkpoints to keep (>= 1).
        shadow: a plain float32 copy of the model that does the saving, which keeps
            optimizer state and mixed-precision casts out of the files.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((4, 2)), np.ones((4, 1))
        >>> shadow = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> folder = os.path.join(tmp.name, "checkpoints")
        >>> _ = model.fit(x, y, epochs=3, verbose=0, callbacks=[EpochCheckpoint(folder, keep=2, shadow=shadow)])
        >>> sorted(os.listdir(folder))
        ['epoch_002.weights.h5', 'epoch_003.weights.h5']
    """

    def __init__(self, folder, keep, shadow):
        super().__init__()
        if int(keep) < 1:
            raise ValueError(f"keep_checkpoints={keep}: keep at least 1")
        self.folder = folder
        self.keep = int(keep)
        self.shadow = shadow

    def on_epoch_end(self, epoch, logs=None):
        files.make_folder(self.folder)
        self.shadow.set_weights(self.model.get_weights())
        checkpoints.save_weights(self.shadow, os.path.join(self.folder, f"epoch_{epoch + 1:03d}.weights.h5"))
        for _, old in checkpoints.epoch_checkpoints(os.path.dirname(self.folder))[: -self.keep]:
            os.remove(old)


class RunBackup(keras.callbacks.Callback):
    """The training state of the last finished epoch in `RUN/backup/`, written whole or not at all: what a resumed
    session needs to go on exactly as the uninterrupted run would have.

    `latest.weights.h5` holds the weights and the optimizer's variables (Adam's moments, the step counter);
    `training_metadata.json` the epochs finished, the size and SHA-256 of those weights, and the random state
    (`random_state`: every Keras `SeedGenerator`'s state, so dropout and token dropout draw the masks they would
    have drawn). `restore_backup` reads it back before `fit`. At the end of each epoch:

    1. the weights are written to a temporary file, fsynced;
    2. only then is the current pair renamed over the older copy (`*.bkp`), the new file renamed into place;
    3. `training_metadata.json` is written last, with the size and SHA-256 of its weights.

    A failure at any step leaves a pair whose metadata matches its weights, which `tfm.runs.resume.verify_backup`
    finds (and names) before a session restores it, and the older copy stays until the new one is whole (so the
    disk holds a third backup for a moment). Folders written by Keras' `BackupAndRestore` (tfm before 0.1) read too.

    Args:
        backup_dir: str. `RUN/backup`, or a non-chief worker's own folder.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dropout(0.5), keras.layers.Dense(1)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((4, 2)), np.ones((4, 1))
        >>> backup = os.path.join(tmp.name, "backup")
        >>> _ = model.fit(x, y, epochs=2, verbose=0, callbacks=[RunBackup(backup)])
        >>> sorted(os.listdir(backup))   # the last epoch's state, and the one before it
        ['latest.weights.h5', 'latest.weights.h5.bkp', 'training_metadata.json', 'training_metadata.json.bkp']
        >>> metadata = json.load(open(os.path.join(backup, "training_metadata.json")))
        >>> metadata["epoch"], len(metadata["random_state"])   # epochs finished; the dropout layer's seed state
        (2, 1)
    """

    def __init__(self, backup_dir):
        super().__init__()
        self.backup_dir = backup_dir

    def on_epoch_end(self, epoch, logs=None):
        self.save(epoch + 1)

    def save(self, epochs):
        """Writes the model's training state as that of `epochs` finished epochs."""
        files.make_folder(self.backup_dir)
        latest = os.path.join(self.backup_dir, resume.BACKUP_WEIGHTS)
        metadata = os.path.join(self.backup_dir, resume.BACKUP_METADATA)

        def keep_previous():  # the new weights are whole on the disk: the current pair becomes the older copy
            for path in (latest, metadata):
                if os.path.exists(path):
                    os.replace(path, path + ".bkp")

        written = checkpoints.save_weights(self.model, latest, before_replace=keep_previous)  # {"bytes", "sha256"}
        record = {"epoch": int(epochs), "batch": 0, "weights": written, "random_state": random_state(self.model)}
        files.write_atomic(metadata, json.dumps(record))


def _random_variables(model):
    """The variables of `model` that are random state, not weights: its `SeedGenerator`s' states, in build order."""
    weights = {id(variable) for variable in model.weights}
    return [variable for variable in model.non_trainable_variables if id(variable) not in weights]


def random_state(model):
    """Every Keras `SeedGenerator` state of `model` (dropout, token dropout), as JSON lists in build order: with the
    weights and the optimizer, what decides the rest of a training run.

    Example:
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dropout(0.5, seed=7)])
        >>> random_state(model)   # [seed, draws so far] per generator
        [[7, 0]]
    """
    return [np.asarray(keras.ops.convert_to_numpy(variable)).tolist() for variable in _random_variables(model)]


def restore_backup(model, backup_dir):
    """Loads `RunBackup`'s state into `model` (compiled, its optimizer built): weights, optimizer variables and,
    when the metadata holds it, the random state. Returns whether the random state was restored (a backup of tfm
    before the exact resumption, or Keras' own, holds none: the session then draws other dropout masks).

    Args:
        model: the compiled `keras.Model` the backup was written from (same config).
        backup_dir: str. `RUN/backup` after `tfm.runs.resume.verify_backup`.

    Example:
        >>> import tempfile
        >>> backup = os.path.join(tempfile.mkdtemp(), "backup")
        >>> def compiled():
        ...     model = keras.Sequential([keras.Input((2,)), keras.layers.Dropout(0.5), keras.layers.Dense(1)])
        ...     model.compile(optimizer="adam", loss="mse")
        ...     model.optimizer.build(model.trainable_variables)
        ...     return model
        >>> trained = compiled()
        >>> _ = trained.fit(np.ones((4, 2)), np.ones((4, 1)), epochs=2, verbose=0, callbacks=[RunBackup(backup)])
        >>> fresh = compiled()
        >>> restore_backup(fresh, backup)
        True
        >>> random_state(fresh) == random_state(trained), int(fresh.optimizer.iterations)
        (True, 2)
    """
    model.load_weights(os.path.join(backup_dir, resume.BACKUP_WEIGHTS))
    try:
        with open(os.path.join(backup_dir, resume.BACKUP_METADATA)) as f:
            state = json.load(f).get("random_state")
    except (OSError, ValueError, AttributeError):
        state = None
    variables = _random_variables(model)
    if not isinstance(state, list) or len(state) != len(variables):
        return False
    for variable, value in zip(variables, state, strict=True):
        variable.assign(np.asarray(value, dtype=variable.dtype))
    return True


class NaNGuard(keras.callbacks.TerminateOnNaN):
    """`TerminateOnNaN` that raises `FloatingPointError` with what to try.

    Raising (instead of stopping gracefully) skips the epoch-end callbacks, so the
    backup, the checkpoints and history.csv keep the last finished epoch.

    Takes no arguments.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        >>> model.compile(optimizer="sgd", loss="mse")
        >>> x, y = np.ones((4, 2)), np.ones((4, 1))
        >>> _ = model.fit(x, np.full((4, 1), np.inf), verbose=0, callbacks=[NaNGuard()])
        Traceback (most recent call last):
        ...
        FloatingPointError: the training loss became inf at batch 0 of epoch 0; training stopped and ...
    """

    def __init__(self):
        super().__init__(raise_error=True)
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(float(loss)):
            raise FloatingPointError(
                f"the training loss became {float(loss)} at batch {batch} of epoch {self._epoch}; training stopped "
                "and the run folder keeps the last finished epoch. Try, in a new --output folder, a smaller learning "
                "rate (--set learning_rate_scale=0.5), a longer warm-up (--set warmup_steps=8000) or a smaller "
                "--tokens-per-batch; or rerun this command without --mixed-precision / --xla, which resumes the run")


class EpochProgressBar(keras.callbacks.ProgbarLogger):
    """Keras' progress bar, told the number of steps of an epoch before the first one ends.

    Keras learns the length of a dataset of unknown size only when one pass over it ends, so its first
    epoch shows `12/Unknown`; given the count (`tfm.training.pipeline.count_batches`), every epoch shows
    `12/40`. The batches are not touched: a dataset given its length would be iterated differently by Keras
    (another shuffle draw per epoch), and a seeded run must not depend on how its progress is shown.

    Args:
        steps: int or None. Batches per epoch (None: Keras' own behaviour).

    Example:
        >>> bar = EpochProgressBar(40)
        >>> bar.set_params({"verbose": 1, "epochs": 2, "steps": None})
        >>> bar.target
        40
    """

    def __init__(self, steps):
        super().__init__()
        self.steps = steps

    def set_params(self, params):
        super().set_params(params)
        if self.target is None:
            self.target = self.steps


class TrainingBudget(keras.callbacks.Callback):
    """Stops `fit` at the end of the first epoch that brings the training time to `seconds`.

    Only time inside epochs counts, from each epoch's start to this callback's epoch end (the run's own
    checkpoint and history writes included), not what `on_epoch` does after it (e.g. a validation
    score): recipes are compared by what their training costs. An epoch is never cut short, so a run
    stopped by its budget ends on an epoch checkpoint and can be averaged or resumed like any other.

    Args:
        seconds: float > 0. The training time after which no new epoch starts.
        on_epoch: callable `(epoch, spent, logs)` or None, called at each epoch's end once `spent`
            (training seconds so far) is updated: a progress line, a validation score.

    Attributes:
        spent: float. Training seconds so far (0 before `fit`).
        epochs: int. Epochs finished under this callback.
        epoch_seconds: list of `(wall, cpu)` per finished epoch: its training seconds and the CPU
            seconds this process used in them (all threads). The budget counts wall time, so an epoch
            whose CPU share fell far below the others' spent part of it idle (`stalled_epochs`).

    Example:
        >>> budget = TrainingBudget(900)                   # model.fit(..., callbacks=[budget]) or
        >>> budget.seconds, budget.spent, budget.epochs    # tfm.training.train(..., callbacks=[budget])
        (900.0, 0.0, 0)
        >>> TrainingBudget(0)
        Traceback (most recent call last):
        ValueError: seconds=0 must be a positive number of training seconds
    """

    def __init__(self, seconds, on_epoch=None):
        super().__init__()
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ValueError(f"seconds={seconds!r} must be a positive number of training seconds")
        self.seconds, self.on_epoch = float(seconds), on_epoch
        self.spent, self.epochs, self._start, self.epoch_seconds = 0.0, 0, None, []

    def on_epoch_begin(self, epoch, logs=None):
        self._start = (_clock(), _cpu_clock())

    def on_epoch_end(self, epoch, logs=None):
        wall, cpu = _clock() - self._start[0], _cpu_clock() - self._start[1]
        self.epoch_seconds.append((wall, cpu))
        self.spent += wall
        self.epochs += 1
        if self.on_epoch is not None:
            self.on_epoch(epoch, self.spent, logs or {})
        if self.spent >= self.seconds:
            self.model.stop_training = True

    def stalled_epochs(self, fraction=0.75):
        """Indices of the epochs in which this process got less than `fraction` of its best epoch's CPU share
        (CPU seconds per wall second): epochs in which it sat idle part of the time, whose wall time the
        budget counted all the same. Another job or a paused VM can cause it, and so can a wait inside
        TensorFlow: with tf.data autotuning on, deleting the last epoch's iterator can wait up to 60 s (why
        tfm's batches turn it off, `tfm.data.batching._prefetched`). The best epoch, not the median, is the
        yardstick, so that a run stalled more often than not still shows it. Empty with fewer than 3 epochs.

        Args:
            fraction: float in (0, 1]. An epoch below this share of the best epoch's CPU share is stalled.

        Example:
            >>> budget = TrainingBudget(900)
            >>> budget.epoch_seconds = [(75, 148), (76, 150), (140, 152), (74, 147)]   # epoch 2: 64 s stalled
            >>> budget.stalled_epochs()
            [2]
        """
        shares = [cpu / wall if wall > 0 else 0.0 for wall, cpu in self.epoch_seconds]
        if len(shares) < 3:
            return []
        best = max(shares)
        return [i for i, share in enumerate(shares) if share < fraction * best]
