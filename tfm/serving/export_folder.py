"""An export's folder (a SavedModel, a CTranslate2 model): checked before any work by the rule every output path
follows (`tfm.runs.files`), and written whole or not at all, so that a failed or killed export leaves nothing where
a server looks.

    target = validate_output_folder("exported/m30k/1", marker="saved_model.pb", entries=FILES, kind="an export")
    with atomic_folder(target, replace=overwrite) as folder:   # filled, then renamed into place
        tf.saved_model.save(module, folder)
"""

import contextlib
import errno
import os
import re
import shutil

from tfm.runs.files import (
    WriteError,
    fsync_path,
    is_run_folder,
    is_running,
    refuse_run_file,
    remove_entry,
    validate_output_path,
    validate_writable,
)


def validate_output_folder(path, what="--output", *, overwrite=False, marker, entries, kind):
    """The resolved path of a folder tfm writes whole (an export, with `atomic_folder`), checked before any work as
    `tfm.runs.validate_output_file` checks a file; and it is absent, empty, or (replaced only with `overwrite`) a
    previous folder of this `kind` ("an exported model"): it holds `marker` and nothing but `entries`; else
    `FileExistsError`.

    Example:
        >>> rule = dict(marker="model.bin", entries={"model.bin", "config.json"}, kind="an exported model")
        >>> target = tempfile.mkdtemp()
        >>> open(os.path.join(target, "model.bin"), "w").close()
        >>> validate_output_folder(target, **rule)
        Traceback (most recent call last):
        ...
        FileExistsError: --output '...' already holds an exported model; replace it with --overwrite ...
        >>> validate_output_folder(target, overwrite=True, **rule) == os.path.realpath(target)
        True
    """
    path = os.fspath(path)
    validate_output_path(path, what)
    refuse_run_file(path, what)
    validate_writable(path)
    real = os.path.realpath(path)
    found = set(os.listdir(real)) if os.path.isdir(real) else set()
    if not found or (overwrite and marker in found and found <= set(entries)):
        return real
    if marker in found and found <= set(entries):
        raise FileExistsError(f"{what} {path!r} already holds {kind}; replace it with --overwrite (overwrite=True "
                              "in Python), or choose a new folder")
    shown = sorted(found)
    state = "is a tfm run folder, not" if is_run_folder(real) else "exists and is not"
    raise FileExistsError(f"{what} {path!r} {state} {kind} (it holds {', '.join(shown[:5])}"
                          f"{' ...' if len(shown) > 5 else ''}); choose a new or empty folder, e.g. exported/NAME/1")



@contextlib.contextmanager
def atomic_folder(path, replace=False):
    """A folder written whole or not at all (an export): yields a temporary sibling `.tmpPID.<name>` to fill, renamed
    to `path` once the block ends without an error (a non-empty `path` is replaced only with `replace`, else
    `FileExistsError`). When the block raises, the temporary folder and any folder made for it are removed and `path`
    keeps what it held. Siblings left by killed processes are removed first; a failed step raises `WriteError`.

    Example:
        >>> target = os.path.join(tempfile.mkdtemp(), "exported", "1")
        >>> with atomic_folder(target) as folder:
        ...     open(os.path.join(folder, "model.txt"), "w").close()
        >>> with atomic_folder(target, replace=True) as folder:
        ...     raise RuntimeError("the export failed")
        Traceback (most recent call last):
        RuntimeError: the export failed
        >>> os.listdir(os.path.dirname(target)), os.listdir(target)   # nothing left behind, the old one kept
        (['1'], ['model.txt'])
    """
    path = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(path)
    made, above = [], parent  # the folders this call makes, removed again (when empty) if the write fails
    while not os.path.lexists(above) and os.path.dirname(above) != above:
        made, above = [*made, above], os.path.dirname(above)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as error:
        raise WriteError(error.errno, error.strerror, error.filename or parent) from None
    pattern = re.compile(rf"^\.tmp(\d+)\.(?:replaced\.)?{re.escape(name)}$")  # stale siblings of killed exports
    for entry in os.listdir(parent) if os.access(parent, os.R_OK) else ():
        if (match := pattern.match(entry)) and not is_running(int(match.group(1))):
            remove_entry(os.path.join(parent, entry))
    tmp = os.path.join(parent, f".tmp{os.getpid()}.{name}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        try:
            os.mkdir(tmp)
        except OSError as error:
            raise WriteError(error.errno, error.strerror, path) from None
        try:
            yield tmp
            for root, _, names in os.walk(tmp):  # every file on the disk before the rename publishes them
                for entry in [*names, ""]:
                    with contextlib.suppress(OSError):  # not possible on every file system
                        fsync_path(os.path.join(root, entry))
            _rename_into_place(tmp, path, replace)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    except BaseException:
        for folder in made:
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        raise
    with contextlib.suppress(OSError):
        fsync_path(parent)


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
        remove_entry(old)
    except OSError as error:
        if isinstance(error, (WriteError, FileExistsError)):
            raise
        raise WriteError(error.errno, error.strerror, path) from None
