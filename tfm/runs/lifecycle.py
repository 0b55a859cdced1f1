"""A run folder's life around `tfm train`: checked before a new run (`validate_fresh_folder`), cleared of what
a killed session left (`remove_leftovers`, `remove_temporaries`), made (`make_folder`) and held by one
`tfm train` at a time (`lock_run`, whose `.lock` names the holder; a second one gets `RunInUseError`).
`tfm.runs.folder` re-exports these names.

    with lock_run("runs/m30k", output="runs/m30k"):    # RunInUseError if another tfm train holds it
        ...

Example:
    >>> import os, tempfile
    >>> run = os.path.join(tempfile.mkdtemp(), "run")
    >>> validate_fresh_folder(run)   # absent: fine
    >>> with lock_run(run):
    ...     sorted(os.listdir(run))
    ['.lock']
"""

import contextlib
import datetime
import errno
import logging
import os
import shutil
import socket

from tfm.runs.atomic import WriteError, is_running
from tfm.runs.layout import (
    BACKUP_DIR,
    CHECKPOINT_DIR,
    CONFIG_FILE,
    HYPS_DIR,
    LOCK_FILE,
    LOG_DIR,
    RUN_ENTRIES,
    RUN_PRODUCTS,
    TEMPORARY,
    TOKENIZER_DIR,
)
from tfm.runs.paths import refuse_run_file, validate_output_path

logger = logging.getLogger("tfm.runs")


# A new run's folder ---------------------------------------------------------------
def validate_fresh_folder(run_dir):
    """Raises unless `run_dir` is absent, empty, or holds only what a first session leaves before config.json.

    Args:
        run_dir: str. The `--output` of a new run.

    Raises:
        NotADirectoryError: a file, a symbolic link loop or a dangling link.
        FileExistsError: a folder of other files, or a run whose config.json is gone (both named).

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> validate_fresh_folder(tmp.name)   # empty: fine
        >>> open(os.path.join(tmp.name, "thesis.tex"), "w").close()
        >>> validate_fresh_folder(tmp.name)
        Traceback (most recent call last):
        ...
        FileExistsError: --output '...' exists and is not a tfm run folder (no config.json; it holds thesis.tex); ...
    """
    validate_output_path(run_dir)
    refuse_run_file(run_dir, "--output")
    if not os.path.exists(run_dir):
        return
    entries = [e for e in sorted(os.listdir(run_dir)) if not TEMPORARY.search(e) and e != LOCK_FILE]
    made = [f"{e}/" if os.path.isdir(os.path.join(run_dir, e)) else e for e in entries if e in RUN_PRODUCTS]
    foreign = [e for e in entries if e not in RUN_ENTRIES]
    if made:
        raise FileExistsError(
            f"--output {run_dir!r} holds a tfm run ({', '.join(made)}) but its {CONFIG_FILE} is missing (deleted or "
            f"moved): restore {CONFIG_FILE} from a copy of the run to resume it, or choose a new --output")
    if foreign:
        raise FileExistsError(
            f"--output {run_dir!r} exists and is not a tfm run folder (no {CONFIG_FILE}; it holds "
            f"{', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}); choose a new or empty folder")


def remove_leftovers(run_dir):
    """Removes what a first session killed before config.json was written left behind (tokenizer/, logs/).

    Args:
        run_dir: str. A run folder without config.json.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> os.makedirs(os.path.join(tmp.name, TOKENIZER_DIR))
        >>> remove_leftovers(tmp.name)
        >>> os.listdir(tmp.name)
        []
    """
    if not os.path.isdir(run_dir):
        return
    for entry in (TOKENIZER_DIR, LOG_DIR):
        shutil.rmtree(os.path.join(run_dir, entry), ignore_errors=True)
    remove_temporaries(run_dir)


def remove_temporaries(run_dir):
    """Removes the `.tmpPID*` files and folders that writes cut short (killed, disk full) left in a run folder.

    Only those of processes no longer running: a `tfm average` or `tfm evaluate` at work
    beside a training keeps its own. Returns the paths removed.

    Args:
        run_dir: str. A run folder.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> open(os.path.join(tmp.name, ".tmp999999999.config.json"), "w").close()   # no such process
        >>> [os.path.basename(path) for path in remove_temporaries(tmp.name)]
        ['.tmp999999999.config.json']
    """
    removed = []
    for folder in (run_dir, os.path.join(run_dir, CHECKPOINT_DIR), os.path.join(run_dir, BACKUP_DIR),
                   os.path.join(run_dir, HYPS_DIR)):
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            match = TEMPORARY.search(entry)
            if match is None or is_running(int(match.group(1) or match.group(2))):
                continue
            path = os.path.join(folder, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(path)
            removed.append(path)
    if removed:
        logger.info("removed %s, left by writes that were cut short", ", ".join(sorted(removed)))
    return removed


# Making folders ---------------------------------------------------------------
def make_folder(path):
    """`os.makedirs(path, exist_ok=True)`, raising `WriteError` naming the folder.

    Args:
        path: str. The folder, made with its parents.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> make_folder(os.path.join(tmp.name, "run", CHECKPOINT_DIR))
        >>> os.listdir(os.path.join(tmp.name, "run"))
        ['checkpoints']
    """
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        validate_output_path(path, "folder")
        raise
    except OSError as error:
        raise WriteError(error.errno, error.strerror, error.filename or path) from None


# One writer per run folder -------------------------------------------------------
class RunInUseError(BlockingIOError):
    """Another process holds the run folder's lock; the message names its PID.

    Args:
        errno, strerror: as `OSError`'s; `strerror` is the whole message.

    Example:
        >>> import errno
        >>> str(RunInUseError(errno.EWOULDBLOCK, "runs/x is in use by PID 12"))
        'runs/x is in use by PID 12'
    """

    def __str__(self):
        return self.strerror


@contextlib.contextmanager
def lock_run(folder, output=None):
    """Holds `folder/.lock` (an exclusive `fcntl.flock`) while the block runs.

    The lock file keeps the holder's PID, host and start time, so a second
    `tfm train` on the same folder says who has it. The lock goes with the process
    (a killed one holds nothing); the file stays. Where `fcntl` is missing (Windows)
    nothing is locked.

    Args:
        folder: str. The folder to lock (created if needed).
        output: the name the user gave (`--output`), for the message.

    Raises:
        RunInUseError: another process holds it.
        WriteError: the lock file cannot be written (a read-only folder, a full disk).

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> with lock_run(tmp.name):
        ...     print(open(os.path.join(tmp.name, LOCK_FILE)).read().split()[0])   # the holder: PID ...
        PID
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    make_folder(folder)
    path = os.path.join(folder, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise WriteError(error.errno, error.strerror, path) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 1000, 0).decode("utf-8", "replace").strip() or "another process"
            raise RunInUseError(errno.EWOULDBLOCK, f"{output or folder} is in use by {holder}; wait for it to "
                                f"finish or pick another --output") from None
        started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"PID {os.getpid()} (started {started} on {socket.gethostname()})\n".encode(), 0)
        except OSError as error:
            raise WriteError(error.errno, error.strerror, path) from None
        yield
    finally:
        os.close(fd)  # releases the lock
