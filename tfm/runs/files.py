"""The run folder's files (no TensorFlow here): their names; writes that land whole or not at all (`write_atomic`:
a temporary `.tmpPID.<name>` sibling, fsync, rename, so a killed process or a full disk never leaves half a file
where a later session would trust it; a failed write is a `WriteError` naming the file and the cause); the rule
for every output path, checked before any work and never one of a run's own files (`validate_output_file`; an
export's folder: `tfm.serving.export_folder`); and one writer at a time (`lock_run`).
"""

import contextlib
import datetime
import errno
import json
import logging
import os
import re
import shutil
import socket

logger = logging.getLogger("tfm.runs")

CONFIG_FILE = "config.json"
HISTORY_FILE = "history.csv"
TOKENIZER_DIR = "tokenizer"
CHECKPOINT_DIR = "checkpoints"
BACKUP_DIR = "backup"
LOG_DIR = "logs"
WORKERS_DIR = "workers"  # non-chief workers of a multi-worker run keep their backups here
HYPS_DIR = "hyps"  # tfm evaluate's outputs
LOCK_FILE = ".lock"
AVERAGED = "averaged.weights.h5"
AVERAGING_RECORD = ".averaging.json"  # tfm average's record of the epochs averaged: `<weights file>.averaging.json`
EPOCH_CHECKPOINT = re.compile(r"^epoch_(\d+)\.weights\.h5$")
TEMPORARY = re.compile(r"^\.tmp(\d+)|\.tmp(\d+)$")  # `.tmpPID.name` (and `name.tmpPID` of earlier versions)
_RUN_ENTRIES = {CONFIG_FILE, HISTORY_FILE, TOKENIZER_DIR, CHECKPOINT_DIR, BACKUP_DIR, LOG_DIR, WORKERS_DIR, HYPS_DIR,
                LOCK_FILE}
# What a run has made; found without config.json, they say it was deleted (a first session killed before
# config.json was written leaves only tokenizer/, logs/ or temporary files).
_RUN_PRODUCTS = (HISTORY_FILE, CHECKPOINT_DIR, BACKUP_DIR, HYPS_DIR)
_RUN_PARTS = {CONFIG_FILE: "the config.json", HISTORY_FILE: "the history.csv", TOKENIZER_DIR: "the tokenizer",
              BACKUP_DIR: "the training backup", WORKERS_DIR: "the workers' backups", LOG_DIR: "the TensorBoard logs",
              LOCK_FILE: "the lock file"}
_CAUSES = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
           errno.EFBIG: "the file would exceed the file-size limit set by ulimit -f",
           errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
           errno.EPERM: "permission denied",
           errno.EIO: "an input/output error (a failing disk or a lost network mount)"}


def cause(error):
    """What an `OSError` means, in words.

    Example:
        >>> cause(OSError(errno.ENOSPC, "No space left on device"))
        'the disk is full (ENOSPC)'
    """
    if error.errno in _CAUSES:
        return f"{_CAUSES[error.errno]} ({errno.errorcode[error.errno]})"
    return error.strerror or str(error)


class WriteError(OSError):
    """`OSError(errno, strerror, path)` of a write, whose message names the file and the cause.

    Example:
        >>> str(WriteError(errno.EROFS, "Read-only file system", "runs/x/config.json"))
        'cannot write runs/x/config.json: the file system is read-only (EROFS)'
    """

    def __str__(self):
        return f"cannot write {self.filename}: {cause(self)}"


def write_atomic(path, data, before_replace=None):
    """Writes `data` (bytes, or str as UTF-8) to `path` whole or not at all: into `.tmpPID.<name>` beside it, fsync,
    `before_replace()` if given (to keep the previous file aside), rename over `path`. On any failure the temporary
    file is removed, `path` keeps what it held, and an `OSError` becomes a `WriteError` naming `path`.

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> write_atomic(os.path.join(folder, "notes.txt"), "whole"), os.listdir(folder)   # no temporary file left
        (None, ['notes.txt'])
    """
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".tmp{os.getpid()}.{name}")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if isinstance(error, OSError) and not isinstance(error, WriteError):
            raise WriteError(error.errno, error.strerror, path) from None
        raise
    with contextlib.suppress(OSError):  # the rename reaches the disk too (not possible on every file system)
        fsync_path(folder)


def write_json_atomic(path, value):
    """`json.dump(value)` into `path` (indented, keys sorted, a final newline), whole or not at all.

    Example:
        >>> path = os.path.join(tempfile.mkdtemp(), "config.json")
        >>> write_json_atomic(path, {"format": 1}), json.load(open(path))
        (None, {'format': 1})
    """
    write_atomic(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def remove_entry(path):
    """Removes a file, a link or a folder (with what it holds), whichever `path` is; nothing if it is gone.

    Example:
        >>> remove_entry(tempfile.mkdtemp())
    """
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.remove(path)


def fsync_path(path):
    """Flushes a file's data, or a folder's entries (its renames), to the disk.

    Example:
        >>> fsync_path(tempfile.mkdtemp())
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_running(pid):
    """Whether process `pid` is alive (another user's counts); this process does not count (it writes nothing at
    the moment it cleans). A `.tmpPID.*` whose process is gone was left by a write cut short.

    Example:
        >>> is_running(os.getppid()), is_running(2**22 + 4321)   # the parent; above the default pid_max
        (True, False)
    """
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        pass
    return True


def validate_output_path(path, what="--output"):
    """`path` (a folder, or one to be) unless it or a folder above it is a file, a symbolic link loop or a dangling
    link: then `NotADirectoryError` naming the part that is wrong, and the path as `what` ("--output", "run folder").

    Example:
        >>> validate_output_path(os.path.join(__file__, "1"))
        Traceback (most recent call last):
        NotADirectoryError: --output '...files.py/1': '...files.py' is a file, not a folder
    """
    problem = _path_problem(path, what)
    if problem is not None:
        raise NotADirectoryError(problem)
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(f"{what} {path!r} is a file, not a folder"
                                 + (f" (give the run folder tfm train made, which holds {CONFIG_FILE})"
                                    if what == "run folder" else ""))
    return path


def _path_problem(path, what):
    """The first part of `path` that no folder can be made under (a file, a link loop, a dangling link), or None."""
    path = os.fspath(path)
    parts = os.path.abspath(path).split(os.sep)
    for i in range(2, len(parts) + 1):
        part = os.sep.join(parts[:i]) or os.sep
        whose = f"{what} {path!r}" if i == len(parts) else f"{what} {path!r}: {part!r}"
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
        if i < len(parts) and not os.path.isdir(part):
            return f"{whose} is a file, not a folder"
    return None


def validate_writable(path, inside=False):
    """`path` unless the folder it goes in (or the nearest existing one above) is read-only or not this user's: then
    `WriteError` naming it. With `inside`, `path` is a folder to write files in (`RUN/hyps/`), itself writable.

    Example:
        >>> validate_writable(os.path.join(tempfile.mkdtemp(), "new", "averaged.weights.h5"))
        '...averaged.weights.h5'
    """
    folder = os.path.abspath(os.fspath(path))
    if not (inside and os.path.isdir(folder)):
        folder = os.path.dirname(folder)
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    if os.access(folder, os.W_OK | os.X_OK):
        return path
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        read_only = False
    code = errno.EROFS if read_only else errno.EACCES
    raise WriteError(code, os.strerror(code), os.fspath(path))


def is_run_folder(folder):
    """Whether `folder` is a tfm run: it holds its tokenizer (learned first), or a config.json that is a tfm run
    record (a project folder with a config.json and a checkpoints/ of its own is not one).

    Example:
        >>> is_run_folder(tempfile.mkdtemp())
        False
    """
    from tfm.data.subword_tokenizer import MODEL_FILE  # TensorFlow: only once a path is checked

    if os.path.isfile(os.path.join(folder, TOKENIZER_DIR, MODEL_FILE)):
        return True
    try:
        with open(os.path.join(folder, CONFIG_FILE), "rb") as f:
            info = json.loads(f.read(1 << 20))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and ("model_name" in info or "model_config" in info)  # format 2, or 1


def describe_run_file(path):
    """What `path` is of a tfm run folder's own files ("epoch 8's checkpoint of the run 'runs/m30k'"), or None: what
    training writes and later commands trust (config.json, history.csv and copies beside them, tokenizer/, backup/,
    workers/, logs/, .lock, the epoch checkpoints, the folders checkpoints/ and hyps/). Links are followed.

    Example:
        >>> run = tempfile.mkdtemp()
        >>> write_json_atomic(os.path.join(run, CONFIG_FILE), {"format": 2, "model_name": "transformer"})
        >>> describe_run_file(os.path.join(run, CHECKPOINT_DIR, "epoch_002.weights.h5"))
        "epoch 2's checkpoint of the run '...'"
    """
    real = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(real)
    while True:
        if is_run_folder(folder):
            part = _run_part(os.path.relpath(real, folder).split(os.sep))
            if part is not None:
                return f"{part} of the run {folder!r}"
        if os.path.dirname(folder) == folder:
            return None
        folder = os.path.dirname(folder)


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


def refuse_run_file(path, what="--output"):
    """Raises `ValueError` when `path` is one of a run's own files (`describe_run_file`), naming it as `what`.

    Example:
        >>> refuse_run_file(os.path.join(tempfile.mkdtemp(), "avg.weights.h5"))   # not a run's file: no error
    """
    part = describe_run_file(path)
    if part is not None:
        raise ValueError(f"{what} {os.fspath(path)!r} is {part}; tfm never writes over a run's own files: "
                         "choose another path")


def validate_output_file(path, what="--output", suffix=None):
    """The resolved path of a file tfm writes (or replaces), checked before any work: it ends in `suffix` and is not
    one of a run's own files (`ValueError`), nor a folder (`IsADirectoryError`), nor under a file or a bad link
    (`NotADirectoryError`), and its folder can be written (`WriteError`); messages name it as `what`.

    Example:
        >>> validate_output_file(tempfile.mkdtemp(), suffix=".weights.h5")
        Traceback (most recent call last):
        ValueError: --output '...': the file name must end in .weights.h5
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


def validate_fresh_folder(run_dir):
    """`run_dir`, a new run's `--output`, if it is absent, empty, or holds only what a first session leaves before
    config.json; a folder of other files, or a run whose config.json is gone, is `FileExistsError` (both named).

    Example:
        >>> validate_fresh_folder(os.path.dirname(__file__))
        Traceback (most recent call last):
        FileExistsError: --output '...runs' exists and is not a tfm run folder (no config.json; it holds ...
    """
    validate_output_path(run_dir)
    refuse_run_file(run_dir, "--output")
    if not os.path.exists(run_dir):
        return run_dir
    entries = [e for e in sorted(os.listdir(run_dir)) if not TEMPORARY.search(e) and e != LOCK_FILE]
    made = [f"{e}/" if os.path.isdir(os.path.join(run_dir, e)) else e for e in entries if e in _RUN_PRODUCTS]
    foreign = [e for e in entries if e not in _RUN_ENTRIES]
    if made:
        raise FileExistsError(
            f"--output {run_dir!r} holds a tfm run ({', '.join(made)}) but its {CONFIG_FILE} is missing (deleted or "
            f"moved): restore {CONFIG_FILE} from a copy of the run to resume it, or choose a new --output")
    if foreign:
        raise FileExistsError(
            f"--output {run_dir!r} exists and is not a tfm run folder (no {CONFIG_FILE}; it holds "
            f"{', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}); choose a new or empty folder")
    return run_dir


def remove_leftovers(run_dir):
    """Removes what a first session killed before it wrote config.json left (tokenizer/, logs/, temporaries).

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> os.makedirs(os.path.join(folder, TOKENIZER_DIR))
        >>> remove_leftovers(folder), os.listdir(folder)
        (None, [])
    """
    if os.path.isdir(run_dir):
        for entry in (TOKENIZER_DIR, LOG_DIR):
            shutil.rmtree(os.path.join(run_dir, entry), ignore_errors=True)
        remove_temporaries(run_dir)


def remove_temporaries(run_dir):
    """Removes (and returns) the `.tmpPID*` files and folders that writes cut short left in a run folder: only those of
    processes no longer running (a `tfm average` at work beside a training keeps its own).

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> open(os.path.join(folder, ".tmp999999999.config.json"), "w").close()   # no such process
        >>> [os.path.basename(path) for path in remove_temporaries(folder)]
        ['.tmp999999999.config.json']
    """
    removed = []
    for folder in (run_dir, *(os.path.join(run_dir, name) for name in (CHECKPOINT_DIR, BACKUP_DIR, HYPS_DIR))):
        for entry in os.listdir(folder) if os.path.isdir(folder) else ():
            match = TEMPORARY.search(entry)
            if match is not None and not is_running(int(match.group(1) or match.group(2))):
                remove_entry(os.path.join(folder, entry))
                removed.append(os.path.join(folder, entry))
    if removed:
        logger.info("removed %s, left by writes that were cut short", ", ".join(sorted(removed)))
    return removed


def make_folder(path):
    """`os.makedirs(path, exist_ok=True)`, raising `WriteError` naming the folder.

    Example:
        >>> make_folder(os.path.join(tempfile.mkdtemp(), "run", CHECKPOINT_DIR))
    """
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        validate_output_path(path, "folder")
        raise
    except OSError as error:
        raise WriteError(error.errno, error.strerror, error.filename or path) from None


class RunInUseError(BlockingIOError):
    """Another process holds the run folder's lock; the message (`strerror`) names its PID.

    Example:
        >>> str(RunInUseError(errno.EWOULDBLOCK, "runs/x is in use by PID 12"))
        'runs/x is in use by PID 12'
    """

    def __str__(self):
        return self.strerror


@contextlib.contextmanager
def lock_run(folder, output=None):
    """Holds `folder/.lock` (an exclusive `fcntl.flock`; the folder is made if needed) while the block runs: a second
    holder gets `RunInUseError` naming the first one's PID, host and start time (and `output`, the name the user gave);
    a lock file that cannot be written is `WriteError`. A killed process holds nothing; the file stays. Without
    `fcntl` (Windows) nothing is locked.

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> with lock_run(folder), lock_run(folder):
        ...     pass
        Traceback (most recent call last):
        tfm.runs.files.RunInUseError: ... is in use by PID ...; wait for it to finish or pick another --output
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
