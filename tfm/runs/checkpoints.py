"""A run's checkpoints: `RUN/checkpoints/epoch_NNN.weights.h5` (the last K epochs, weights only) and
`averaged.weights.h5` (`tfm average`, with its `.averaging.json` record of the epochs averaged), listed
(`epoch_checkpoints`, `latest_checkpoint`) and named (`resolve_checkpoint`: what `--checkpoint` means).
A missing checkpoint is said in one line that names the folder and what it holds. `tfm.runs.folder`
re-exports these names.

Example:
    >>> import os, tempfile
    >>> from tfm.runs.example import write_example_run
    >>> run = write_example_run(os.path.join(tempfile.mkdtemp(), "run"))
    >>> [epoch for epoch, _ in epoch_checkpoints(run)], os.path.basename(resolve_checkpoint(run, "latest"))
    ([1, 2], 'epoch_002.weights.h5')
"""

import json
import logging
import os

from tfm.runs.history import HISTORY_FILE, read_rows
from tfm.runs.layout import AVERAGED, CHECKPOINT_DIR, EPOCH_CHECKPOINT
from tfm.runs.paths import averaging_record

logger = logging.getLogger("tfm.runs")


def epoch_checkpoints(run_dir):
    """`[(epoch, path)]` of `RUN/checkpoints/epoch_NNN.weights.h5`, oldest first (NNN = epochs finished).

    Args:
        run_dir: str. A run folder.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> [(epoch, os.path.basename(path)) for epoch, path in epoch_checkpoints(run)]
        [(1, 'epoch_001.weights.h5'), (2, 'epoch_002.weights.h5')]
    """
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    if not os.path.isdir(folder):
        return []
    found = [(int(m.group(1)), os.path.join(folder, name))
             for name in os.listdir(folder) if (m := EPOCH_CHECKPOINT.match(name))]
    return sorted(found)


def latest_checkpoint(run_dir):
    """Path of the newest epoch checkpoint of a run (`RUN/checkpoints/epoch_NNN.weights.h5`), or None.

    Args:
        run_dir: str. A run folder.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> os.path.basename(latest_checkpoint(run)), latest_checkpoint(tmp.name)
        ('epoch_002.weights.h5', None)
    """
    found = epoch_checkpoints(run_dir)
    return found[-1][1] if found else None


def resolve_checkpoint(run_dir, checkpoint=None):
    """The weights file `checkpoint` names in a run (see `load_run`), as a path.

    Args:
        run_dir: str. A run folder.
        checkpoint: None, "averaged", "latest", an epoch number, a file name in `RUN/checkpoints/` or a path.

    Raises:
        FileNotFoundError: naming what the checkpoint folder holds.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> os.path.basename(resolve_checkpoint(run)), os.path.basename(resolve_checkpoint(run, 1))
        ('epoch_002.weights.h5', 'epoch_001.weights.h5')
        >>> resolve_checkpoint(run, "averaged")
        Traceback (most recent call last):
        ...
        FileNotFoundError: checkpoint '...averaged.weights.h5' not found; '...checkpoints' holds ['epoch_001...
    """
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    averaged = os.path.join(folder, AVERAGED)
    if checkpoint is None:
        if os.path.isfile(averaged):
            _warn_if_stale(run_dir, averaged)
            return averaged
        checkpoint = "latest"
    if checkpoint == "latest":
        path = latest_checkpoint(run_dir)
        if path is None:
            raise FileNotFoundError(_no_checkpoint(run_dir, folder))
        return path
    if checkpoint == "averaged":
        checkpoint = averaged
    if isinstance(checkpoint, str) and checkpoint.isdigit() and not os.path.isfile(checkpoint):
        checkpoint = int(checkpoint)  # `--checkpoint 3`: the epoch number, as from Python
    if isinstance(checkpoint, int):
        checkpoint = f"epoch_{checkpoint:03d}.weights.h5"
    for path in (checkpoint, os.path.join(folder, checkpoint), os.path.join(folder, f"{checkpoint}.weights.h5")):
        if os.path.isfile(path):
            return path
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    raise FileNotFoundError(f"checkpoint {checkpoint!r} not found; {folder!r} holds {names}")


def _no_checkpoint(run_dir, folder):
    try:
        finished = len(read_rows(os.path.join(run_dir, HISTORY_FILE)))
    except ValueError:  # a damaged history.csv says nothing of the epochs finished
        return (f"no epoch checkpoint in {folder!r} (and {HISTORY_FILE} is damaged); put the checkpoints back "
                f"(epoch_NNN.weights.h5), or give a weights file with --checkpoint PATH")
    if not finished:
        return f"no checkpoint in {folder!r}: the run has not finished an epoch yet"
    where = f"{folder!r} holds no epoch checkpoint" if os.path.isdir(folder) else f"{folder!r} is missing"
    return (f"{where}, yet {HISTORY_FILE} records {finished} finished epoch{'' if finished == 1 else 's'}: the "
            f"checkpoints were deleted or moved; put them back (epoch_NNN.weights.h5), or give a weights file "
            f"with --checkpoint PATH")


def _warn_if_stale(run_dir, averaged):
    sidecar = averaging_record(averaged)
    if not os.path.isfile(sidecar):  # averaged by an earlier tfm: `checkpoints/averaged.json`
        sidecar = averaged[: -len(".weights.h5")] + ".json"
    try:
        with open(sidecar) as f:
            newest_averaged = max(json.load(f)["epochs"])
    except (OSError, ValueError, KeyError):
        return
    found = epoch_checkpoints(run_dir)
    if found and found[-1][0] > newest_averaged:
        logger.warning("%s averages checkpoints up to epoch %d, but epoch %d exists; run tfm average again",
                       averaged, newest_averaged, found[-1][0])
