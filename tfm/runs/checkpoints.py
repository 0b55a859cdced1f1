"""A run's weights files: `RUN/checkpoints/epoch_NNN.weights.h5` (the last K epochs) and `averaged.weights.h5`
(`tfm average`); written whole with the model config they were written under (`save_weights`), checked before they
are loaded (`load_weights`: cut short, garbage, misnamed, another architecture, shapes that do not fit, each said in
one line), and named by one rule (`weights_path`: the averaged weights when present, else the latest epoch's).
"""

import contextlib
import hashlib
import io
import json
import logging
import os

from tfm import __version__
from tfm.config import ConfigIO, config_class, model_name
from tfm.runs import files
from tfm.runs.files import AVERAGED, AVERAGING_RECORD, CHECKPOINT_DIR, CONFIG_FILE, EPOCH_CHECKPOINT, HISTORY_FILE
from tfm.runs.record import read_rows

logger = logging.getLogger("tfm.runs")

_RECORD_ATTRIBUTE = "tfm"  # the weights file's root attribute holding `_model_record` as JSON
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"  # the first bytes of an HDF5 file (.weights.h5)
_ZIP_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06")  # the first bytes of a zip archive (.keras)
_KERAS_ARCHIVE_WEIGHTS = "model.weights.h5"  # the weights inside a .keras archive


def _model_record(model):
    """What a weights file of `model` records, `{"model", "model_config", "tfm_version"}`; None without a tfm config."""
    config = getattr(model, "config", None)
    if not isinstance(config, ConfigIO):
        return None
    try:
        name = model_name(config)
    except TypeError:
        return None
    return {"model": name, "model_config": json.loads(json.dumps(config.to_dict())), "tfm_version": __version__}


def save_weights(model, path, before_replace=None):
    """Keras' `model.save_weights` (a compiled model's optimizer state too: the training backup) into memory, with
    the model's config in the root attribute `tfm`, then to `path` whole or not at all (`write_atomic`, whose
    `before_replace` it takes): a full disk or a file-size limit fails in Python's write, never inside HDF5 (whose
    handles then crash the interpreter at exit). Returns `file_digest` of the file written.

    Example:
        >>> path = tempfile.mkdtemp() + ".weights.h5"
        >>> save_weights(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), path) == file_digest(path)
        True
    """
    import h5py

    buffer, record = _WeightsFile(), _model_record(model)
    model.save_weights(buffer)
    if record is not None:
        with h5py.File(buffer, "a") as f:
            f.attrs[_RECORD_ATTRIBUTE] = json.dumps(record, sort_keys=True)
    data = buffer.getbuffer()
    files.write_atomic(path, data, before_replace)
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


class _WeightsFile(io.BytesIO):
    """A `.weights.h5` file in memory (Keras' weights writer takes a `BytesIO`; `save_weights`, one so named)."""

    def __str__(self):
        return "memory.weights.h5"


def file_digest(path):
    """`{"bytes", "sha256"}` of a file: what the training backup's metadata records of its weights.

    Example:
        >>> file_digest(os.devnull)["sha256"][:12]
        'e3b0c44298fc'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return {"bytes": os.path.getsize(path), "sha256": digest.hexdigest()}


def _misnamed(path):
    """`(problem, fix)` when `path` cannot be a weights file by its name and first bytes, else None; `fix` is
    None when the file is damaged (no name would make it readable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_HDF5_SIGNATURE))
    except IsADirectoryError:
        return "it is a folder", "give a .weights.h5 file"
    is_hdf5, is_zip = head == _HDF5_SIGNATURE, head[:4] in _ZIP_SIGNATURES
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
    """The weights of `path` as an open `h5py.File`: the file itself, or a .keras (zip) archive's model.weights.h5
    (told apart by their first bytes: a backup's older copy is named `latest.weights.h5.bkp`)."""
    import h5py

    with open(path, "rb") as f:
        head = f.read(4)
    if head in _ZIP_SIGNATURES:
        import zipfile

        with zipfile.ZipFile(path) as archive:
            data = archive.read(_KERAS_ARCHIVE_WEIGHTS)
        with h5py.File(io.BytesIO(data), "r") as f:
            yield f
    else:
        with h5py.File(path, "r") as f:
            yield f


def weights_problem(path):
    """Why a weights file (`.weights.h5`, or a `.keras` archive) cannot be trusted, or None when every array in it
    reads (opening it is not enough: a file cut short keeps a valid header).

    Example:
        >>> path = tempfile.mkdtemp() + ".weights.h5"
        >>> size = save_weights(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), path)["bytes"]
        >>> os.truncate(path, size // 2)   # cut short, as a killed write leaves it
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
    """The record `{"model", "model_config", "tfm_version"}` a weights file holds, or None (none, or unreadable).

    Example:
        >>> from tfm.config import TransformerConfig
        >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        >>> path = tempfile.mkdtemp() + ".weights.h5"
        >>> model.config = TransformerConfig.tiny(d_model=16)   # as a tfm model carries its config
        >>> _ = save_weights(model, path)
        >>> weights_record(path)["model_config"]["d_model"]
        16
    """
    try:
        with _hdf5(path) as f:
            text = f.attrs.get(_RECORD_ATTRIBUTE)
        record = json.loads(text.decode() if isinstance(text, bytes) else text) if text is not None else None
    except Exception:  # unreadable: weights_problem says why
        return None
    ok = isinstance(record, dict) and isinstance(record.get("model"), str) and isinstance(record.get("model_config"),
                                                                                         dict)
    return record if ok else None


def _architecture_differences(record, config, source):
    """One line per field where the weights file's recorded config and `config` build models whose weights mean
    different things (`ConfigIO.architecture`); None when the record is not a config of this tfm."""
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


def _absent_fields(config, config_file):
    """The architecture fields of `config` that `config_file`'s model section lacks (their defaults were used)."""
    try:
        with open(config_file) as f:
            info = json.load(f)
        stored = info["model_config"] if "model_config" in info else info["model"]  # format 1, format 2
        return [key for key in config.architecture() if key not in stored]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def verify_weights(path, config, *, config_file=None, remedy=None):
    """The file's `weights_record` (None: it has none, and passes unchecked), refused with `ValueError` (each field
    named, with both values) when it builds a model whose weights mean something else than the model `config`'s:
    pre-LN weights in a post-LN model have the same shapes, and would load and translate nonsense. `config_file` is
    where `config` was read (`RUN/config.json`), and `remedy` what else the command can do, for the message.

    Example:
        >>> from tfm.config import TransformerConfig
        >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
        >>> path = tempfile.mkdtemp() + ".weights.h5"
        >>> model.config = TransformerConfig.tiny()   # post-LN
        >>> _ = save_weights(model, path)
        >>> verify_weights(path, TransformerConfig.tiny(norm_first=True))
        Traceback (most recent call last):
        ValueError: ... another configuration than the model's config describes: norm_first: the checkpoint's False...
    """
    source = config_file or "the model's config"
    record = weights_record(path)
    differences = _architecture_differences(record, config, os.path.basename(source)) if record else None
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
    """`model.load_weights(path)` (a `.weights.h5` file or a `.keras` archive), refused with a `ValueError` in one line
    that names the file, what is wrong and what to do (`config_file` and `remedy` as `verify_weights` takes them).

    A tfm model's config is first checked against the file's record (`verify_weights`; a file without one loads
    unchecked, with a log line). A failure is said as a damaged file, a misnamed one, or weights whose shapes do
    not fit the config (blamed on the config, with the fields `config_file` lacks).

    Example:
        >>> load_weights(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), __file__)
        Traceback (most recent call last):
        ValueError: cannot read the weights in ...checkpoints.py: tfm reads weights from .weights.h5 (or .keras) ...
    """
    source = config_file or "the model's config"
    tail = f", {remedy}" if remedy else ""
    damaged = "the file is damaged (cut short, overwritten or not a weights file): restore it from a copy of the run"
    misnamed = _misnamed(path)
    if misnamed is not None:
        problem, fix = misnamed
        raise ValueError(f"cannot read the weights in {path}: {problem}; {fix or damaged}{tail}")
    config = getattr(model, "config", None)
    checkable = isinstance(config, ConfigIO)
    record = verify_weights(path, config, config_file=config_file, remedy=remedy) if checkable else weights_record(path)
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
        raise ValueError(f"cannot read the weights in {path}: {problem}; {damaged}{tail}")
    mismatch = _shape_mismatch(model, path)
    if mismatch is not None:
        differ, total, example = mismatch
        absent = _absent_fields(config, config_file) if config_file and checkable else []
        lacks = (f"; {os.path.basename(source)}'s model section lacks {', '.join(absent)}, so the default"
                 f"{'s were' if len(absent) > 1 else ' was'} used" if absent else "")
        raise ValueError(
            f"the weights in {path} do not fit the model {source} describes: {differ} of its {total} arrays differ "
            f"in shape ({example}){lacks}; {os.path.basename(source)} was edited or damaged (restore it from a copy "
            f"of the run), or the checkpoint belongs to another run{tail}")
    raise ValueError(f"cannot load the weights in {path} into the model {source} describes: {first}; the "
                     f"checkpoint belongs to another model{tail}")


def _shape_mismatch(model, path):
    """`(arrays that differ, arrays in the file, an example)` when the file's arrays are not the model's shapes."""
    import h5py

    found, wanted = {}, {}

    def into(shapes):  # {array path: shape}, the path shortened to its layers ("encoder/.../kernel")
        return lambda name, item: (shapes.update({name.removeprefix("layers/").replace("/vars/", "#"): item.shape})
                                   if isinstance(item, h5py.Dataset) else None)

    with _hdf5(path) as f:
        f.visititems(into(found))
    model.save_weights(buffer := _WeightsFile())
    with h5py.File(buffer, "r") as f:
        f.visititems(into(wanted))
    differ = sorted(name for name in set(found) | set(wanted) if found.get(name) != wanted.get(name))
    if not differ:
        return None
    both = [name for name in differ if name in found and name in wanted]
    example = (f"{both[0]}: the file has {found[both[0]]}, the model {wanted[both[0]]}" if both
               else f"the file has {len(found)} arrays, the model {len(wanted)}")
    return len(differ), len(found), example


def epoch_checkpoints(run_dir):
    """`[(epoch, path)]` of `RUN/checkpoints/epoch_NNN.weights.h5`, oldest first (NNN: epochs finished).

    Example:
        >>> run = tempfile.mkdtemp()
        >>> os.makedirs(os.path.join(run, CHECKPOINT_DIR))
        >>> for name in ("epoch_002.weights.h5", "epoch_001.weights.h5", AVERAGED):
        ...     open(os.path.join(run, CHECKPOINT_DIR, name), "w").close()
        >>> [epoch for epoch, path in epoch_checkpoints(run)]
        [1, 2]
    """
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    if not os.path.isdir(folder):
        return []
    return sorted((int(m.group(1)), os.path.join(folder, name))
                  for name in os.listdir(folder) if (m := EPOCH_CHECKPOINT.match(name)))


def latest_checkpoint(run_dir):
    """Path of the newest epoch checkpoint of a run, or None.

    Example:
        >>> latest_checkpoint(tempfile.mkdtemp()) is None
        True
    """
    found = epoch_checkpoints(run_dir)
    return found[-1][1] if found else None


def averaging_record(weights_path):
    """The record `tfm average` writes beside its weights (the epochs averaged), named after the whole file name so
    that it can only be theirs (earlier versions wrote `checkpoints/averaged.json`, still read).

    Example:
        >>> averaging_record("runs/m30k/checkpoints/averaged.weights.h5")
        'runs/m30k/checkpoints/averaged.weights.h5.averaging.json'
    """
    return f"{os.fspath(weights_path)}{AVERAGING_RECORD}"


def weights_path(run_dir, checkpoint="auto"):
    """The weights file of `run_dir` that `checkpoint` names: the checkpoint rule of every command,
    `Translator.from_run` and `from_preset(run)`. A missing run folder, or a file given as one, is said first.

    `checkpoint` "auto" (or None) is the averaged weights when `tfm average` made them (a warning says when newer epoch
    checkpoints exist), else the latest epoch's, which one logged; also "latest", "averaged", an epoch number (int,
    or its digits), a file name in `RUN/checkpoints/`, or a path. A missing one is `FileNotFoundError` saying what
    the folder holds and what to do.

    Example:
        >>> weights_path(os.path.join(tempfile.mkdtemp(), "absent"))
        Traceback (most recent call last):
        FileNotFoundError: run folder '...absent' does not exist (make one with tfm train)
    """
    if not os.path.isdir(run_dir):  # said first: a missing folder has no averaged weights either
        files.validate_output_path(run_dir, "run folder")
        raise FileNotFoundError(f"run folder {run_dir!r} does not exist (make one with tfm train)")
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    averaged = os.path.join(folder, AVERAGED)
    if checkpoint in (None, "auto"):
        if os.path.isfile(averaged):
            _warn_if_stale(run_dir, averaged)
            logger.info("%s: the averaged weights (%s)", run_dir, averaged)
            return averaged
        path = weights_path(run_dir, "latest")
        logger.info("%s: no averaged weights, the latest epoch's (%s)", run_dir, os.path.basename(path))
        return path
    if checkpoint == "latest":
        path = latest_checkpoint(run_dir)
        if path is None:
            raise FileNotFoundError(_no_checkpoint(run_dir, folder))
        return path
    if checkpoint == "averaged" and not os.path.isfile(averaged):
        raise FileNotFoundError(f"run {run_dir!r} has no averaged weights ({averaged}): average its last checkpoints "
                                f"first (`tfm average --run {run_dir}`), or choose the latest checkpoint")
    checkpoint = averaged if checkpoint == "averaged" else checkpoint
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
