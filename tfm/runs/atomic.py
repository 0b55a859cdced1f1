"""Files written whole or not at all, and what a failed write means in words.

`write_atomic` puts the data in a temporary `.tmpPID.<name>` file in the same folder, flushes it to the
disk (fsync) and renames it over the target, so a killed process or a full disk never leaves half a
file where a later session would trust it. A write that fails raises `WriteError`, which names the
file and the cause (disk full, file too large, read-only). Weights are built in memory first
(`weights_bytes`), so such a failure happens in Python's write, never inside HDF5; a tfm model's
weights file records the config it was written under (`model_record`, in the file's `tfm` attribute),
so that loading it into a model of another architecture is refused (`tfm.runs.load_weights`). The
run-folder contract built on these is `tfm.runs`'s (which re-exports every name here).

    write_json_atomic("runs/m30k/config.json", {"format": 1})
    save_weights(model, "runs/m30k/checkpoints/epoch_001.weights.h5")   # {"bytes", "sha256"}
    with atomic_folder("exported/m30k/1", replace=False) as tmp:          # a folder: filled, then renamed
        tf.saved_model.save(module, tmp)

A folder (an export) is written the same way: into a temporary sibling `.tmpPID.<name>`, renamed into place
only once it is complete (`atomic_folder`), so a failed or killed export leaves nothing where a server looks.
"""

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import shutil

from tfm import __version__
from tfm.config.rules import ConfigIO
from tfm.models.registry import model_name

RECORD_ATTRIBUTE = "tfm"  # the weights file's root attribute holding `model_record` as JSON

CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file would exceed the file-size limit set by ulimit -f",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EIO: "an input/output error (a failing disk or a lost network mount)",
}


def cause(error):
    """What an `OSError` means, in words: "the disk is full (ENOSPC)".

    Args:
        error: an `OSError`.

    Example:
        >>> import errno
        >>> cause(OSError(errno.ENOSPC, "No space left on device"))
        'the disk is full (ENOSPC)'
    """
    if error.errno in CAUSES:
        return f"{CAUSES[error.errno]} ({errno.errorcode[error.errno]})"
    return error.strerror or str(error)


class WriteError(OSError):
    """A file could not be written; the message names it and the cause (`OSError(errno, strerror, path)`).

    Args:
        errno, strerror, filename: as `OSError`'s.

    Example:
        >>> import errno
        >>> str(WriteError(errno.EROFS, "Read-only file system", "runs/x/config.json"))
        'cannot write runs/x/config.json: the file system is read-only (EROFS)'
    """

    def __str__(self):
        return f"cannot write {self.filename}: {cause(self)}"


def write_atomic(path, data, before_replace=None):
    """Writes `data` (bytes or str) to `path` whole or not at all.

    The data go to `.tmpPID.<name>` in the same folder, are flushed to the disk (fsync)
    and renamed over `path`. On any failure the temporary file is removed and `path`
    keeps what it held before.

    Args:
        path: str. The file to write (its folder must exist).
        data: bytes or str (written as UTF-8).
        before_replace: called between the fsync and the rename (e.g. to keep the
            previous file under another name).

    Raises:
        WriteError: naming `path` and the cause (disk full, file too large, read-only, ...).

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> write_atomic(os.path.join(tmp.name, "notes.txt"), "whole or not at all\\n")
        >>> os.listdir(tmp.name)   # no temporary file is left
        ['notes.txt']
    """
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".tmp{os.getpid()}.{name}")
    data = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with open(tmp, "wb") as f:
            f.write(data)
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
    _sync_folder(folder)


def is_running(pid):
    """Whether process `pid` is alive (another user's counts as alive); this process's own does not count.

    A temporary file or folder named `.tmpPID.*` whose process is gone was left by a write cut short.

    Args:
        pid: int.

    Example:
        >>> is_running(os.getppid()), is_running(2**22 + 4321)   # the parent; above the default pid_max
        (True, False)
    """
    if pid == os.getpid():
        return False  # this process writes nothing at the moment it cleans
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def atomic_folder(path, replace=False):
    """A folder written whole or not at all: yields a temporary sibling to fill, renamed to `path` at the end.

    The block writes into `.tmpPID.<name>` beside `path`; when it ends without an error the files are
    flushed to the disk and the folder is renamed to `path` (an empty folder there is replaced; an
    existing one only with `replace=True`, swapped out and then removed). When the block raises, the
    temporary folder (and any folder made for it) is removed and `path` keeps what it held.
    Temporary siblings of `path` left by processes that are gone (killed exports) are removed first.
    Checking `path` before any work is `tfm.runs.folder.validate_output_folder`'s.

    Args:
        path: str. The folder to write (its parent is made if needed).
        replace: bool. Replace a non-empty folder at `path`. Defaults to `False`.

    Raises:
        WriteError: the parent, the temporary folder or the rename failed (named, with the cause).
        FileExistsError: `path` is a non-empty folder (made meanwhile) and `replace` is False.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> target = os.path.join(tmp.name, "exported", "1")
        >>> with atomic_folder(target) as folder:
        ...     write_atomic(os.path.join(folder, "model.txt"), "complete")
        >>> os.listdir(os.path.dirname(target)), os.listdir(target)
        (['1'], ['model.txt'])
        >>> with atomic_folder(target, replace=True) as folder:
        ...     raise RuntimeError("the export failed")
        Traceback (most recent call last):
        RuntimeError: the export failed
        >>> os.listdir(os.path.dirname(target)), os.listdir(target)   # nothing left behind, the old one kept
        (['1'], ['model.txt'])
        >>> with atomic_folder(os.path.join(tmp.name, "new", "1")) as folder:
        ...     raise RuntimeError("the export failed")
        Traceback (most recent call last):
        RuntimeError: the export failed
        >>> sorted(os.listdir(tmp.name))   # not even the folder made for it
        ['exported']
    """
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    made = parent  # the first folder this call makes, removed again (when empty) if the write fails
    while not os.path.lexists(os.path.dirname(made)) and os.path.dirname(made) != made:
        made = os.path.dirname(made)
    made = None if os.path.lexists(made) else made
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as error:
        raise WriteError(error.errno, error.strerror, error.filename or parent) from None
    _remove_stale_siblings(parent, name)
    tmp = os.path.join(parent, f".tmp{os.getpid()}.{name}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        try:
            os.mkdir(tmp)
        except OSError as error:
            raise WriteError(error.errno, error.strerror, path) from None
        try:
            yield tmp
            _sync_tree(tmp)
            _rename_into_place(tmp, path, replace)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    except BaseException:
        _remove_empty_folders(parent, made)
        raise
    _sync_folder(parent)


def _remove_empty_folders(folder, top):
    """Removes `folder` and the folders above it up to `top` (included) while they are empty; nothing when `top` is
    None."""
    if top is None:
        return
    while True:
        try:
            os.rmdir(folder)
        except OSError:
            return
        if folder == top or os.path.dirname(folder) == folder:
            return
        folder = os.path.dirname(folder)


def _remove_stale_siblings(parent, name):
    """Removes `.tmpPID.<name>` and `.tmpPID.replaced.<name>` in `parent` whose process is gone."""
    pattern = re.compile(rf"^\.tmp(\d+)\.(?:replaced\.)?{re.escape(name)}$")
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry)
        if match and not is_running(int(match.group(1))):
            stale = os.path.join(parent, entry)
            if os.path.isdir(stale) and not os.path.islink(stale):
                shutil.rmtree(stale, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(stale)


def _sync_tree(folder):
    """Every file under `folder` flushed to the disk, then the folders themselves (a rename then publishes whole
    files)."""
    for root, _, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            except OSError:  # not possible on every file system
                pass
            finally:
                os.close(fd)
        _sync_folder(root)


def _rename_into_place(tmp, path, replace):
    try:
        try:
            os.rename(tmp, path)  # absent, or an empty folder: replaced in one step
            return
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.EISDIR, errno.ENOTDIR):
                raise
        if not replace:
            raise FileExistsError(f"{path} appeared while it was being written (another process?); it is kept, "
                                  "and nothing was written") from None
        old = os.path.join(os.path.dirname(path), f".tmp{os.getpid()}.replaced.{os.path.basename(path)}")
        os.rename(path, old)
        try:
            os.rename(tmp, path)
        except OSError:
            os.rename(old, path)  # the previous folder back where it was
            raise
        if os.path.isdir(old) and not os.path.islink(old):
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.remove(old)
    except OSError as error:
        if isinstance(error, (WriteError, FileExistsError)):
            raise
        raise WriteError(error.errno, error.strerror, path) from None


def _sync_folder(folder):
    try:  # the rename itself reaches the disk (POSIX; not possible on every file system)
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json_atomic(path, value):
    """`json.dump(value)` into `path`, whole or not at all (`write_atomic`).

    Args:
        path: str. The file to write.
        value: anything `json.dumps` takes; written indented, keys sorted, with a final newline.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> write_json_atomic(os.path.join(tmp.name, "config.json"), {"format": 1})
        >>> json.load(open(os.path.join(tmp.name, "config.json")))
        {'format': 1}
    """
    write_atomic(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def model_record(model):
    """What a weights file of `model` records about it: `{"model", "model_config", "tfm_version"}`, or None.

    None for a model without a tfm config (`model.config`, a `TransformerConfig` / `Seq2SeqConfig`): a plain
    Keras model has nothing to record.

    Args:
        model: a `keras.Model` (or layer).

    Example:
        >>> import keras
        >>> from tfm.config import TransformerConfig
        >>> holder = keras.layers.Layer()
        >>> holder.config = TransformerConfig.tiny(norm_first=True)
        >>> record = model_record(holder)
        >>> record["model"], record["model_config"]["norm_first"]
        ('transformer', True)
        >>> model_record(keras.layers.Layer()) is None
        True
    """
    config = getattr(model, "config", None)
    if not isinstance(config, ConfigIO):
        return None
    try:
        name = model_name(config)
    except TypeError:
        return None
    return {"model": name, "model_config": json.loads(json.dumps(config.to_dict())), "tfm_version": __version__}


def weights_bytes(model):
    """The `.weights.h5` file of `model` (what `model.save_weights` writes), built in memory.

    Keras' own writer (`H5IOStore` over a `BytesIO`, which it accepts), so the file reads
    back with `model.load_weights`. Writing it to the disk afterwards (`write_atomic`)
    means a full disk or a file-size limit fails in Python's `write`, with the file
    named, instead of inside HDF5 (which can leave half a file whose header passes for
    whole, and crash the interpreter at exit). A tfm model's config goes into the file's
    root attribute `tfm` (`model_record`; Keras ignores it when loading).

    Args:
        model: a built `keras.Model` (or layer).

    Returns:
        `memoryview` of the file's bytes.

    Example:
        >>> import keras
        >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        >>> bytes(weights_bytes(model)[:4])   # an HDF5 file
        b'\\x89HDF'
    """
    from keras.src.saving import saving_lib

    buffer = io.BytesIO()
    store = saving_lib.H5IOStore(buffer, mode="w")
    try:
        saving_lib._save_state(model, weights_store=store, assets_store=None, inner_path="",
                               visited_saveables=set())
        record = model_record(model)
        if record is not None:
            store.h5_file.attrs[RECORD_ATTRIBUTE] = json.dumps(record, sort_keys=True)
    finally:
        store.close()
    return buffer.getbuffer()


def save_weights(model, path):
    """`model.save_weights(path)` whole or not at all; returns `{"bytes", "sha256"}` of the file written.

    Args:
        model: a built `keras.Model`.
        path: str. The `.weights.h5` file to write.

    Raises:
        WriteError: naming `path` and the cause.

    Example:
        >>> import keras, os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        >>> written = save_weights(model, os.path.join(tmp.name, "epoch_001.weights.h5"))
        >>> sorted(written), written["bytes"] == os.path.getsize(os.path.join(tmp.name, "epoch_001.weights.h5"))
        (['bytes', 'sha256'], True)
        >>> model.load_weights(os.path.join(tmp.name, "epoch_001.weights.h5"))   # Keras reads it back
    """
    data = weights_bytes(model)
    write_atomic(path, data)
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
