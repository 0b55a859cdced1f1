"""Output paths: one rule for every path tfm writes (train's --output, average's output and its record,
evaluate's hyps/, both exports), checked before any work; never one of a run's own files.

Example:
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> validate_output_path(os.path.join(folder, "new", "avg.weights.h5"))   # a new folder: fine
    >>> open(os.path.join(folder, "notes.txt"), "w").close()
    >>> validate_output_path(os.path.join(folder, "notes.txt", "avg.weights.h5"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    NotADirectoryError: --output '...': '...notes.txt' is a file, not a folder
"""

import errno
import json
import logging
import os

from tfm.data.subword_tokenizer import MODEL_FILE
from tfm.runs.atomic import WriteError, cause
from tfm.runs.history import HISTORY_FILE
from tfm.runs.layout import (
    AVERAGING_RECORD,
    BACKUP_DIR,
    CHECKPOINT_DIR,
    CONFIG_FILE,
    EPOCH_CHECKPOINT,
    HYPS_DIR,
    LOCK_FILE,
    LOG_DIR,
    TOKENIZER_DIR,
    WORKERS_DIR,
)

logger = logging.getLogger("tfm.runs")

# Output paths: one rule for every path tfm writes -------------------------------------
# train's --output, average's --output and its record, evaluate's hyps/, and both exports: resolved and checked
# here before any work, each refusal one line naming the path and the reason.
def validate_output_path(path, what="--output"):
    """Raises NotADirectoryError when `path`, or a folder above it, is a file, a symbolic link loop or a dangling link.

    The path is a folder to be, or one that exists (a run folder, an export): each part of it is walked, so
    the message names the part that is wrong.

    Args:
        path: str. A folder to be, or one that exists.
        what: str. How messages name it ("--output", "run folder").

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> validate_output_path(os.path.join(tmp.name, "new"))   # absent: fine
        >>> open(os.path.join(tmp.name, "notes.txt"), "w").close()
        >>> validate_output_path(os.path.join(tmp.name, "notes.txt"))
        Traceback (most recent call last):
        ...
        NotADirectoryError: --output '...notes.txt' is a file, not a folder
        >>> validate_output_path(os.path.join(tmp.name, "notes.txt", "1"))
        Traceback (most recent call last):
        ...
        NotADirectoryError: --output '...notes.txt/1': '...notes.txt' is a file, not a folder
    """
    problem = _path_problem(path, what)
    if problem is not None:
        raise NotADirectoryError(problem)
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"{what} {path!r} is a file, not a folder"
                                 + (f" (give the run folder tfm train made, which holds {CONFIG_FILE})"
                                    if what == "run folder" else ""))


def _path_problem(path, what):
    """The first part of `path` that no folder can be made under (a file, a link loop, a dangling link), in
    words; or None."""
    path = os.fspath(path)
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        part = os.sep.join(parts[:i]) or os.sep
        last = i == len(parts)
        whose = f"{what} {path!r}" if last else f"{what} {path!r}: {part!r}"
        try:
            os.stat(part)
        except FileNotFoundError:
            if os.path.islink(part):
                return (f"{whose} is a symbolic link to {os.readlink(part)!r}, which does not exist; remove the "
                        f"link or create its target")
            return None  # from here on nothing exists: folders to be made
        except OSError as error:
            if error.errno == errno.ELOOP:
                return (f"{whose} is a symbolic link loop (it, or a folder above it, links back to itself); "
                        "remove the link or give another path")
            if error.errno == errno.ENOTDIR:
                return f"{whose} is not a folder (a symbolic link in it leads through a file)"
            return f"{whose}: {cause(error)}"
        if not last and not os.path.isdir(part):
            return f"{whose} is a file, not a folder"
    return None


def validate_writable(path, inside=False):
    """Raises `WriteError` naming `path` when the folder it is written in is read-only or not this user's.

    tfm puts a file or a folder in place by renaming a temporary sibling, so what must be writable is the
    folder `path` goes in (or, when that is still to be made, the nearest existing one above); with
    `inside`, `path` is a folder whose files are written in it (`RUN/hyps/`), so it must be writable itself.

    Args:
        path: str. A file or folder to be written.
        inside: bool. `path` is a folder to write files in. Defaults to `False`.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> validate_writable(os.path.join(tmp.name, "new", "averaged.weights.h5"))   # fine
    """
    folder = os.path.abspath(os.fspath(path))
    if not (inside and os.path.isdir(folder)):
        folder = os.path.dirname(folder)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    if os.access(folder, os.W_OK | os.X_OK):
        return
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        read_only = False
    code = errno.EROFS if read_only else errno.EACCES
    raise WriteError(code, os.strerror(code), os.fspath(path))


def _is_run_folder(folder):
    """A tfm run: its tokenizer (learned first), or a config.json that is a tfm run record (a project folder with
    a config.json and a checkpoints/ of its own is not one)."""
    if os.path.isfile(os.path.join(folder, TOKENIZER_DIR, MODEL_FILE)):
        return True
    try:
        with open(os.path.join(folder, CONFIG_FILE), "rb") as f:
            info = json.loads(f.read(1 << 20))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and "model_config" in info


_RUN_PARTS = {CONFIG_FILE: "the config.json", HISTORY_FILE: "the history.csv", TOKENIZER_DIR: "the tokenizer",
              BACKUP_DIR: "the training backup", WORKERS_DIR: "the workers' backups", LOG_DIR: "the TensorBoard logs",
              LOCK_FILE: "the lock file"}


def describe_run_file(path):
    """What `path` is of a tfm run folder's own files ("epoch 8's checkpoint of the run 'runs/m30k'"), or None.

    A run folder is one above `path` holding a tfm tokenizer (`tokenizer/sentencepiece.model`) or a
    config.json that is a run record. Its own files are what training writes and every later command
    trusts: config.json and history.csv (and copies of them beside them), tokenizer/, backup/,
    workers/, logs/, .lock, the epoch checkpoints `checkpoints/epoch_NNN.weights.h5`, and the folders
    checkpoints/ and hyps/ themselves. Other names inside checkpoints/ (`averaged.weights.h5`, any `NAME.weights.h5` of
    tfm average) and hyps/ (tfm evaluate's) are the outputs of later commands. Symbolic links are
    followed, so a link to a run's file is that file.

    Args:
        path: str. A path to be written.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> describe_run_file(os.path.join(run, "checkpoints", "epoch_002.weights.h5"))
        "epoch 2's checkpoint of the run '...run'"
        >>> describe_run_file(os.path.join(run, "checkpoints", "averaged.weights.h5")) is None
        True
    """
    real = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(real)
    while True:
        if _is_run_folder(folder):
            part = _run_part(os.path.relpath(real, folder).split(os.sep))
            if part is not None:
                return f"{part} of the run {folder!r}"
        up = os.path.dirname(folder)
        if up == folder:
            return None
        folder = up


def _run_part(parts):
    """What `RUN/<parts>` is of the run's own files, in words, or None."""
    head, inside = parts[0], "inside " if len(parts) > 1 else ""
    for name in (CONFIG_FILE, HISTORY_FILE):
        if head.startswith(name + ".") and len(parts) == 1:
            return f"a copy of {_RUN_PARTS[name]}"  # a backup beside it (config.json.bak)
    if head in _RUN_PARTS:
        return inside + _RUN_PARTS[head]
    if head == CHECKPOINT_DIR and len(parts) == 1:
        return "the checkpoints folder"
    if head == CHECKPOINT_DIR and (match := EPOCH_CHECKPOINT.match(parts[1])):
        return f"{'inside ' if len(parts) > 2 else ''}epoch {int(match.group(1))}'s checkpoint"
    if head == HYPS_DIR and len(parts) == 1:
        return "the hyps folder (tfm evaluate's outputs)"
    return None


def validate_output_file(path, what="--output", suffix=None):
    """The rule for a file tfm writes (and replaces when it exists): checked before any work, one line if refused.

    The path is resolved (symbolic links followed); no part above it is a file, a link loop or a
    dangling link; the folder it goes in can be written; it is not a folder; it is not one of a run's
    own files (`describe_run_file`: a checkpoint, config.json, the tokenizer, history.csv, the backup).

    Args:
        path: str. The file to write.
        what: str. How messages name it. Defaults to `"--output"`.
        suffix: str or None. The ending the name must have (".weights.h5").

    Returns:
        str: the resolved absolute path to write.

    Raises:
        ValueError: the name lacks `suffix`, or the path is one of a run's own files.
        NotADirectoryError: a part above it is a file, a link loop or a dangling link.
        IsADirectoryError: the path is a folder.
        tfm.runs.WriteError: the folder it goes in is read-only or not this user's.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> os.path.basename(validate_output_file(os.path.join(run, "checkpoints", "averaged.weights.h5")))
        'averaged.weights.h5'
        >>> validate_output_file(os.path.join(run, "checkpoints", "epoch_002.weights.h5"))
        Traceback (most recent call last):
        ...
        ValueError: --output '...epoch_002.weights.h5' is epoch 2's checkpoint of the run '...run'; tfm never writes ...
    """
    path = os.fspath(path)
    if suffix is not None and not path.endswith(suffix):
        raise ValueError(f"{what} {path!r}: the file name must end in {suffix}")
    problem = _path_problem(path, what)
    if problem is not None:
        raise NotADirectoryError(problem)
    if os.path.isdir(path):
        raise IsADirectoryError(f"{what} {path!r} is a folder; give a file name"
                                + (f" ending in {suffix}" if suffix else ""))
    refuse_run_file(path, what)
    validate_writable(path)
    return os.path.realpath(path)


def validate_output_folder(path, what="--output", *, overwrite=False, marker, entries, kind):
    """The rule for a folder tfm writes whole (an export): checked before any work, one line if refused.

    The path is resolved (symbolic links followed); neither it nor a part above it is a file, a link
    loop or a dangling link; the folder it goes in can be written; it is not inside a run's own files
    (`describe_run_file`); and it is absent, empty, or a previous folder of this `kind` (it holds
    `marker` and nothing but `entries`), which is replaced only with `overwrite`.

    Args:
        path: str. The folder to write.
        what: str. How messages name it. Defaults to `"--output"`.
        overwrite: bool. Replace a previous folder of this kind. Defaults to `False`.
        marker: str. The file that says a folder is of this kind ("saved_model.pb", "model.bin").
        entries: the names such a folder may hold.
        kind: str. What such a folder is, in words ("an exported model").

    Returns:
        str: the resolved absolute path to write (with `tfm.runs.atomic.atomic_folder`).

    Raises:
        FileExistsError: the folder holds other things, or a previous export and `overwrite` is False.
        ValueError: the path is inside one of a run's own files.
        NotADirectoryError: it, or a part above it, is a file, a link loop or a dangling link.
        tfm.runs.WriteError: the folder it goes in is read-only or not this user's.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> rule = dict(marker="model.bin", entries={"model.bin", "config.json"}, kind="an exported model")
        >>> target = validate_output_folder(os.path.join(tmp.name, "exported", "1"), **rule)   # absent: fine
        >>> os.makedirs(target)
        >>> open(os.path.join(target, "model.bin"), "w").close()
        >>> validate_output_folder(target, **rule)
        Traceback (most recent call last):
        ...
        FileExistsError: --output '...1' already holds an exported model; replace it with --overwrite ...
        >>> validate_output_folder(target, overwrite=True, **rule) == target
        True
    """
    path = os.fspath(path)
    validate_output_path(path, what)
    refuse_run_file(path, what)
    validate_writable(path)
    real = os.path.realpath(path)
    if not os.path.isdir(real):
        return real
    found = set(os.listdir(real))
    if not found:
        return real
    if marker in found and found <= set(entries):
        if overwrite:
            return real
        raise FileExistsError(f"{what} {path!r} already holds {kind}; replace it with --overwrite (overwrite=True "
                              "in Python), or choose a new folder")
    shown = sorted(found)
    state = "is a tfm run folder, not" if _is_run_folder(real) else "exists and is not"
    raise FileExistsError(f"{what} {path!r} {state} {kind} (it holds {', '.join(shown[:5])}"
                          f"{' ...' if len(shown) > 5 else ''}); choose a new or empty folder, e.g. exported/NAME/1")


def refuse_run_file(path, what):
    """Raises `ValueError` when `path` is one of a run's own files (`describe_run_file`), naming it as `what`.

    Example:
        >>> refuse_run_file("/tmp/nowhere/avg.weights.h5", "--output")   # not a run's file: no error
    """
    part = describe_run_file(path)
    if part is not None:
        raise ValueError(f"{what} {os.fspath(path)!r} is {part}; tfm never writes over a run's own files: "
                         "choose another path")


def averaging_record(weights_path):
    """The record `tfm average` writes beside its weights: `<weights_path>.averaging.json` (the epochs averaged).

    Named after the whole file name, so it can only be the record of those weights: no other file
    (`RUN/config.json` beside `RUN/config.weights.h5`, `pkg.json` beside `pkg.weights.h5`) is
    written over. Runs averaged by earlier versions of tfm have `checkpoints/averaged.json` instead (still read).

    Args:
        weights_path: str. The averaged `.weights.h5` file.

    Example:
        >>> averaging_record("runs/m30k/checkpoints/averaged.weights.h5")
        'runs/m30k/checkpoints/averaged.weights.h5.averaging.json'
    """
    return f"{os.fspath(weights_path)}{AVERAGING_RECORD}"
