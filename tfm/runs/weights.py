"""Weights files: what is wrong with one (cut short, garbage, misnamed, written under another architecture,
shapes that do not fit the config), said in one line, and `load_weights`, which checks before it loads.

Example:
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "epoch_001.weights.h5")
    >>> _ = open(path, "wb").write(b"not weights")
    >>> weights_problem(path) is not None
    True
"""

import contextlib
import io
import json
import logging
import os

from tfm.config.rules import ConfigIO
from tfm.models.registry import config_class, model_name
from tfm.runs.atomic import RECORD_ATTRIBUTE, weights_bytes
from tfm.runs.layout import CONFIG_FILE

logger = logging.getLogger("tfm.runs")

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"  # the first bytes of an HDF5 file (.weights.h5)
ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")  # the first bytes of a zip archive (.keras)
KERAS_ARCHIVE_WEIGHTS = "model.weights.h5"  # the weights inside a .keras archive


def _misnamed(path):
    """`(problem, fix)` when `path` cannot be a weights file by its name and first bytes, else None; `fix` is
    None when the file is damaged (no name would make it readable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(HDF5_SIGNATURE))
    except IsADirectoryError:
        return "it is a folder", "give a .weights.h5 file"
    is_hdf5, is_zip = head == HDF5_SIGNATURE, head[:4] in ZIP_SIGNATURES
    name = os.path.basename(str(path))
    if not head:
        return "the file is empty (0 bytes)", None
    if name.endswith(".keras"):
        if is_hdf5:
            return "it is an HDF5 weights file named .keras", "rename it to end in .weights.h5"
        return None if is_zip else ("it is not a .keras archive (a zip file)", None)
    if name.endswith(".weights.h5"):
        if is_zip:
            return "it is a .keras archive named .weights.h5", "rename it to end in .keras"
        return None if is_hdf5 else ("it is not an HDF5 file", None)
    fix = ("rename it to end in .weights.h5" if is_hdf5 else "rename it to end in .keras" if is_zip
           else "give a .weights.h5 file")
    return "tfm reads weights from .weights.h5 (or .keras) files", fix


@contextlib.contextmanager
def _hdf5(path):
    """The weights of `path` as an open `h5py.File`: the file itself, or a zip (.keras) archive's model.weights.h5
    (told apart by their first bytes: a backup's older copy is named `latest.weights.h5.bkp`)."""
    import h5py

    with open(path, "rb") as f:
        head = f.read(4)
    if head in ZIP_SIGNATURES:
        import zipfile

        with zipfile.ZipFile(path) as archive:
            data = archive.read(KERAS_ARCHIVE_WEIGHTS)
        with h5py.File(io.BytesIO(data), "r") as f:
            yield f
    else:
        with h5py.File(path, "r") as f:
            yield f


def weights_problem(path):
    """Why a weights file (HDF5, or a zip archive as `.keras` files are) cannot be trusted ("truncated: ..."), or
    None when every dataset in it reads.

    Opening the file is not enough: a file cut short keeps a valid header, and Keras then
    fails (or crashes) half-way through loading it.

    Args:
        path: str. A `.weights.h5` or `.keras` file.

    Example:
        >>> from tfm.runs.folder import latest_checkpoint
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> path = latest_checkpoint(run)
        >>> weights_problem(path) is None
        True
        >>> with open(path, "r+b") as f:
        ...     _ = f.truncate(os.path.getsize(path) // 2)   # cut short, as a killed write leaves it
        >>> weights_problem(path) is None
        False
    """
    import h5py

    try:
        with _hdf5(path) as f:
            f.visititems(lambda name, item: item[()] if isinstance(item, h5py.Dataset) else None)
    except Exception as error:  # h5py raises OSError, RuntimeError, KeyError ...; zipfile BadZipFile, EOFError ...
        text = str(error).strip().splitlines()
        return text[0][:160] if text else type(error).__name__
    return None


def weights_record(path):
    """The `model_record` a weights file holds (the model config it was written under), or None.

    None for a file written by Keras itself or by tfm before checkpoints recorded their config,
    and for a file that cannot be read (see `weights_problem`).

    Args:
        path: str. A `.weights.h5` or `.keras` file.

    Example:
        >>> from tfm.runs.folder import latest_checkpoint
        >>> import tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> record = weights_record(latest_checkpoint(run))
        >>> record["model"], record["model_config"]["d_model"]
        ('transformer', 16)
    """
    try:
        with _hdf5(path) as f:
            text = f.attrs.get(RECORD_ATTRIBUTE)
        record = json.loads(text.decode() if isinstance(text, bytes) else text) if text is not None else None
    except Exception:  # unreadable: weights_problem says why
        return None
    ok = isinstance(record, dict) and isinstance(record.get("model"), str) and isinstance(record.get("model_config"),
                                                                                         dict)
    return record if ok else None


def architecture_differences(record, config, source="the model's config"):
    """`["norm_first: the checkpoint's True, config.json's False", ...]`: where a weights file's recorded config
    and `config` build models whose weights mean different things (`ConfigIO.architecture`); empty when none.

    Args:
        record: dict. A weights file's `weights_record`.
        config: the model config the weights are to be loaded into.
        source: str. How the messages name `config` (e.g. "RUN/config.json").

    Returns:
        list of str, one per differing field; None when the record cannot be read as a config of this tfm.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> from tfm.runs.atomic import model_record
        >>> class Holder: config = TransformerConfig.tiny(norm_first=True)
        >>> architecture_differences(model_record(Holder()), TransformerConfig.tiny(dropout=0.3))
        ["norm_first: the checkpoint's True, the model's config's False"]
    """
    name = model_name(config)
    if record["model"] != name:
        return [f"model: the checkpoint's {record['model']!r}, {source}'s {name!r}"]
    try:
        recorded = config_class(record["model"]).from_dict(record["model_config"], ignore_unknown=True).architecture()
    except (ValueError, TypeError):
        return None
    wanted = config.architecture()
    return [f"{key}: the checkpoint's {recorded.get(key)!r}, {source}'s {wanted.get(key)!r}"
            for key in sorted(set(recorded) | set(wanted)) if recorded.get(key) != wanted.get(key)]


def _shapes(f):
    """`{array path: shape}` of an open weights file, the path shortened to its layers ("encoder/.../kernel")."""
    import h5py

    shapes = {}

    def visit(name, item):
        if isinstance(item, h5py.Dataset):
            shapes[name.removeprefix("layers/").replace("/vars/", "#")] = tuple(item.shape)

    f.visititems(visit)
    return shapes


def _shape_mismatch(model, path):
    """`(arrays that differ, arrays in the file, an example)` when the file's arrays are not the model's shapes."""
    import h5py

    with _hdf5(path) as f:
        found = _shapes(f)
    with h5py.File(io.BytesIO(bytes(weights_bytes(model))), "r") as f:
        wanted = _shapes(f)
    differ = sorted(name for name in set(found) | set(wanted) if found.get(name) != wanted.get(name))
    if not differ:
        return None
    both = [name for name in differ if name in found and name in wanted]
    example = (f"{both[0]}: the file has {found[both[0]]}, the model {wanted[both[0]]}" if both
               else f"the file has {len(found)} arrays, the model {len(wanted)}")
    return len(differ), len(found), example


def _absent_fields(config, config_file):
    """The architecture fields of `config` that `config_file`'s model_config lacks (their defaults were used)."""
    try:
        with open(config_file) as f:
            stored = json.load(f)["model_config"]
        return [key for key in config.architecture() if key not in stored]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def verify_weights(path, config, *, config_file=None, remedy=None):
    """Checks a weights file against its record: refused when the config it was written under
    (`weights_record`) builds a model whose weights mean something else than `config`'s
    (`architecture_differences`: pre-LN weights in a post-LN model have the same shapes, and would
    load and translate nonsense). A file without a record passes (it cannot be checked).

    Args:
        path: str. A weights file (an epoch checkpoint, the averaged one, the training backup's).
        config: the model config the weights are to be loaded into.
        config_file: str or None. Where `config` was read (`RUN/config.json`), for the message.
        remedy: str or None. What else the command can do, appended to the message.

    Returns:
        The file's record, or None when it has none.

    Raises:
        ValueError: the recorded config differs (each differing field named, with the values on both sides).

    Example:
        >>> from tfm.runs.folder import model_config_from_info, latest_checkpoint, read_run_config
        >>> import dataclasses, os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> config = model_config_from_info(read_run_config(run))
        >>> verify_weights(latest_checkpoint(run), config)["model"]
        'transformer'
        >>> verify_weights(latest_checkpoint(run), dataclasses.replace(config, positional="learned"))
        Traceback (most recent call last):
        ...
        ValueError: ...weights.h5 was written by a model of another configuration than the model's config ...
    """
    source = config_file or "the model's config"
    record = weights_record(path)
    differences = architecture_differences(record, config, os.path.basename(source)) if record else None
    if differences:
        absent = set(_absent_fields(config, config_file)) if config_file else set()
        listed = "; ".join(d + (f" (absent from {CONFIG_FILE}: the default)" if d.split(":")[0] in absent else "")
                           for d in differences)
        raise ValueError(
            f"{path} was written by a model of another configuration than {source} describes: {listed}. If "
            f"{os.path.basename(source)} was edited, put the checkpoint's values back; if the checkpoint comes "
            f"from another run, use it with that run's folder{f', {remedy}' if remedy else ''}")
    return record


def load_weights(model, path, *, config_file=None, remedy=None):
    """`model.load_weights(path)`, refused in one line that names the file, what is wrong and what to do.

    Before loading, the file's recorded config (`weights_record`, written by `save_weights`) is compared with
    the model's (`architecture_differences`): a checkpoint made under another architecture (pre-LN weights in
    a post-LN model have the same shapes) is refused by name instead of translating nonsense. A file without a
    record (Keras', or tfm's before checkpoints recorded their config) is loaded unchecked, with a log line.
    When loading fails, the message says which of these it is: a damaged file (truncated, garbage, a
    .keras archive that is not one), a misnamed one (an HDF5 file named .keras), or weights whose shapes do not
    fit the config (blamed on the config, with the fields `config_file` lacks).

    Args:
        model: a built `keras.Model` (a tfm model carries its config as `model.config`).
        path: str. A `.weights.h5` file (or a `.keras` archive).
        config_file: str or None. Where the model's config was read (`RUN/config.json`), for the messages.
        remedy: str or None. What else the command that loads can do, appended to the message ("or choose
            another checkpoint with --checkpoint ...").

    Raises:
        ValueError: the file is damaged or misnamed, or was written under another config (named).

    Example:
        >>> from tfm.runs.folder import build_float32_model, model_config_from_info, latest_checkpoint, read_run_config
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> model = build_float32_model(model_config_from_info(read_run_config(run)))
        >>> load_weights(model, latest_checkpoint(run))
        >>> load_weights(model, os.path.join(run, "config.json"))
        Traceback (most recent call last):
        ...
        ValueError: cannot read the weights in ...config.json: tfm reads weights from .weights.h5 (or .keras) ...
        >>> import dataclasses
        >>> pre_ln = build_float32_model(dataclasses.replace(model.config, norm_first=True))
        >>> load_weights(pre_ln, latest_checkpoint(run))
        Traceback (most recent call last):
        ...
        ValueError: ...epoch_002.weights.h5 was written by a model of another configuration than the model's ...
    """
    source = config_file or "the model's config"
    tail = f", {remedy}" if remedy else ""
    misnamed = _misnamed(path)
    if misnamed is not None:
        problem, fix = misnamed
        if fix is None:
            raise ValueError(f"cannot read the weights in {path}: {problem}; the file is damaged (cut short, "
                             f"overwritten or not a weights file): restore it from a copy of the run{tail}")
        raise ValueError(f"cannot read the weights in {path}: {problem}; {fix}{tail}")
    config = getattr(model, "config", None)
    record = verify_weights(path, config, config_file=config_file, remedy=remedy) if isinstance(config, ConfigIO) \
        else weights_record(path)
    try:
        model.load_weights(path)
        if record is None:
            logger.info("%s records no model config (written by Keras, or by tfm before checkpoints recorded "
                        "theirs): loaded without checking it against %s", path, source)
        return
    except Exception as error:  # Keras raises ValueError, h5py OSError / KeyError, zipfile BadZipFile ...
        first = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
    problem = weights_problem(path)
    if problem is not None:
        raise ValueError(f"cannot read the weights in {path}: {problem}; the file is damaged (cut short, overwritten "
                         f"or not a weights file): restore it from a copy of the run{tail}")
    mismatch = _shape_mismatch(model, path)
    if mismatch is not None:
        differ, total, example = mismatch
        absent = _absent_fields(config, config_file) if config_file and isinstance(config, ConfigIO) else []
        lacks = (f"; {os.path.basename(source)}'s model_config lacks {', '.join(absent)}, so the default"
                 f"{'s were' if len(absent) > 1 else ' was'} used" if absent else "")
        raise ValueError(
            f"the weights in {path} do not fit the model {source} describes: {differ} of its {total} arrays differ "
            f"in shape ({example}){lacks}; {os.path.basename(source)} was edited or damaged (restore it from a copy "
            f"of the run), or the checkpoint belongs to another run{tail}")
    raise ValueError(f"cannot load the weights in {path} into the model {source} describes: {first}; the "
                     f"checkpoint belongs to another model{tail}")
