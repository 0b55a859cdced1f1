"""The run-folder contract, shared by training and inference (so inference never imports training).

A run folder (`RUN`, the `--output` of `tfm train`) holds:

    config.json        {"tfm_version", "format": 1, "model", "model_config", "data", "training"}
    tokenizer/         the shared subword vocabulary, learned once from the training split: sentencepiece.model
                       (what tfm reads), vocab.txt and tokenizer.json (readable copies, checked against it on load)
    checkpoints/       epoch_001.weights.h5 ... (the last K, weights only), averaged.weights.h5 (+ .averaging.json);
                       each records the model config it was written under, and a model of another architecture
                       refuses it (`verify_weights`)
    history.csv        one row per finished epoch: epoch (0-based), loss, accuracy, val_*, learning_rate,
                       iterations, epoch_seconds
    backup/            the full training state (weights + optimizer) of the last finished epoch
    logs/              TensorBoard
    workers/           backups of the non-chief workers of a multi-worker run
    hyps/              what tfm evaluate wrote
    .lock              held (flock) by the `tfm train` that writes the folder; names its PID

    model, tokenizer, info = load_run("runs/m30k")                 # averaged weights, else the latest
    info["config"].beam_size, info["config"].length_penalty       # the run's decoding settings (§6.1)

Every file is written whole or not at all (`write_atomic`: a temporary `.tmpPID.*` file in
the same folder, fsync, rename; `tfm.runs.atomic`, whose names this module re-exports), so a killed
process or a full disk never leaves half a file where a later session would trust it; a write
that fails raises `WriteError`, which names the file and the cause (disk full, file too large,
read-only). Every path a command writes (train's, average's and the exports' `--output`, evaluate's
`hyps/`) is checked before any work by one rule (`validate_output_file`, `validate_output_folder`): no
folder above it is a file, a link loop or a dangling link, it can be written, and it is never one of a
run's own files (`describe_run_file`). One `tfm train` at a time writes a folder (`lock_run`). What a run
has finished, and how a session resumes it (a damaged backup included), is
`tfm.runs.resume`'s; reading and writing history.csv is `tfm.runs.history`'s (its names re-exported here).
A damaged file is refused in one line that names it and says what to do: config.json that is not JSON,
is a JSON value of another type than an object, or holds settings of the wrong type or value
(`read_run_config`); a weights file that is cut short, garbage or misnamed, was written under another
architecture, or does not fit the config's shapes (`load_weights`, which blames the config then).
"""

import contextlib
import datetime
import errno
import json
import logging
import os
import shutil
import socket

import keras

from tfm import __version__
from tfm.config.configs import DataConfig
from tfm.data.subword_tokenizer import CONFIG_FILE as TOKENIZER_CONFIG_FILE
from tfm.data.subword_tokenizer import MODEL_FILE, VOCAB_FILE, SubwordTokenizer
from tfm.models.registry import build_model, config_class
from tfm.runs.atomic import (  # noqa: F401  (tfm.runs' API)
    CAUSES,
    RECORD_ATTRIBUTE,
    WriteError,
    atomic_folder,
    cause,
    is_running,
    model_record,
    save_weights,
    weights_bytes,
    write_atomic,
    write_json_atomic,
)
from tfm.runs.history import (  # noqa: F401
    HISTORY_COLUMNS,
    HISTORY_FILE,
    format_history,
    history_problem,
    read_history,
    read_rows,  # (tfm.runs' API)
    write_rows,
)

logger = logging.getLogger("tfm.runs")

from tfm.runs.layout import (  # noqa: F401  (tfm.runs' API)
    AVERAGED,
    AVERAGING_RECORD,
    BACKUP_DIR,
    CHECKPOINT_DIR,
    CONFIG_FILE,
    EPOCH_CHECKPOINT,
    FORMAT,
    HYPS_DIR,
    LOCK_FILE,
    LOG_DIR,
    NOT_COMPARED,
    RUN_ENTRIES,
    RUN_PRODUCTS,
    TEMPORARY,
    TOKENIZER_DIR,
    WORKERS_DIR,
)
from tfm.runs.paths import (  # noqa: F401  (tfm.runs' API)
    averaging_record,
    describe_run_file,
    refuse_run_file,
    validate_output_file,
    validate_output_folder,
    validate_output_path,
    validate_writable,
)
from tfm.runs.weights import (  # noqa: F401  (tfm.runs' API)
    HDF5_SIGNATURE,
    KERAS_ARCHIVE_WEIGHTS,
    ZIP_SIGNATURES,
    architecture_differences,
    load_weights,
    verify_weights,
    weights_problem,
    weights_record,
)


# config.json ----------------------------------------------------------------
def read_run_config(run_dir):
    """The parsed `RUN/config.json`, checked to be a run folder of this format.

    Args:
        run_dir: str. The run folder.

    Returns:
        dict: the parsed config.json.

    Raises:
        FileNotFoundError: no such folder, or no config.json.
        NotADirectoryError: `run_dir` is a file; a symbolic link loop or dangling link is named too.
        ValueError: another format version, or a damaged file (not JSON, a JSON value of another type than an
            object, settings missing or of the wrong type or value), named with what to do.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> info = read_run_config(run)
        >>> info["format"], info["model"], info["model_config"]["d_model"]
        (1, 'transformer', 16)
        >>> read_run_config(tmp.name)
        Traceback (most recent call last):
        ...
        FileNotFoundError: '...' is not a tfm run folder: config.json not found (make one with tfm train)
    """
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        validate_output_path(run_dir, "run folder")
        if not os.path.exists(run_dir):
            raise FileNotFoundError(f"run folder {run_dir!r} does not exist (make one with tfm train)")
        raise FileNotFoundError(
            f"{run_dir!r} is not a tfm run folder: {CONFIG_FILE} not found (make one with tfm train)")
    restore = f"restore {CONFIG_FILE} from a copy of the run folder"
    with open(path, "rb") as f:
        data = f.read()
    try:
        info = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not text (byte {data[error.start]:#04x} at offset {error.start} is not UTF-8): "
                         f"it was overwritten or damaged; {restore}") from None
    except json.JSONDecodeError as error:
        what = "is empty (0 bytes)" if not data.strip() else f"is not valid JSON ({error})"
        raise ValueError(f"{path} {what}: it was cut short, overwritten or damaged; {restore}") from None
    if not isinstance(info, dict):
        raise ValueError(f"{path} holds a JSON {_json_kind(info)} ({_preview(info)}), not the object of settings tfm "
                         f"train writes: it was overwritten or damaged; {restore}")
    if "format" not in info:
        raise ValueError(f"{path} is not a tfm run's settings (no \"format\"; it holds {_preview(sorted(info))}): it "
                         f"was overwritten or damaged; {restore}")
    fmt = info["format"]
    if fmt != FORMAT:
        raise ValueError(
            f"{run_dir!r} is a run folder of format {fmt!r} (made by tfm {info.get('tfm_version', '?')}), but tfm "
            f"{__version__} reads format {FORMAT}; use that tfm version or train into a new --output folder")
    missing = [key for key in ("model", "model_config", "data") if key not in info]
    if missing:
        raise ValueError(f"{path} lacks {missing}: it was edited or damaged; {restore}")
    for key in ("model_config", "data"):
        if not isinstance(info[key], dict):
            raise ValueError(f"{path}: \"{key}\" holds a JSON {_json_kind(info[key])} ({_preview(info[key])}), not "
                             f"an object of settings: it was edited or damaged; {restore}")
    for what, read in (("model_config", model_config_from_info), ("data", data_config_from_info)):
        try:
            read(info)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path}: {what} {error}: it was edited or damaged; {restore}, or put back the value "
                             f"tfm train wrote") from None
    return info


def _json_kind(value):
    for kind, name in ((bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "array"),
                       (dict, "object")):
        if isinstance(value, kind):
            return name
    return "null"


def _preview(value, width=60):
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def model_config_from_info(info):
    """The model config dataclass stored in a parsed config.json.

    Runs written before the RNN configs carried their data settings store
    `max_length` / `tokens_per_batch` only under `data`; they are taken from there.

    Args:
        info: dict. A parsed config.json (`read_run_config`).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> model_config_from_info(read_run_config(run)).num_layers
        1
    """
    values = dict(info["model_config"])
    for key in ("max_length", "tokens_per_batch"):
        if key not in values and key in info.get("data", {}):
            values[key] = info["data"][key]
    return config_class(info["model"]).from_dict(values, ignore_unknown=True)


def data_config_from_info(info):
    """The `DataConfig` stored in a parsed config.json.

    Runs written before tfm refused `--source-file` / `--target-file` beside another `--dataset` may hold
    them; they were never read, and are dropped.

    Args:
        info: dict. A parsed config.json (`read_run_config`).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> data_config_from_info(read_run_config(run)).dataset
        'numbers'
    """
    values = dict(info["data"])
    if values.get("dataset", DataConfig.dataset) != "files":
        values.update(source_file=None, target_file=None)
    return DataConfig.from_dict(values, ignore_unknown=True)


def run_record(model, model_config, data, training):
    """The dict config.json holds (JSON types only).

    Args:
        model: str. "transformer" or an RNN baseline's name (`tfm.models.registry.model_name`).
        model_config: the model config dataclass.
        data: `DataConfig`.
        training: `TrainingConfig`.

    Example:
        >>> from tfm.config import TrainingConfig, TransformerConfig
        >>> record = run_record("transformer", TransformerConfig.tiny(), DataConfig(), TrainingConfig())
        >>> sorted(record)
        ['data', 'format', 'model', 'model_config', 'tfm_version', 'training']
    """
    return json.loads(json.dumps({"tfm_version": __version__, "format": FORMAT, "model": model,
                                  "model_config": model_config.to_dict(), "data": data.to_dict(),
                                  "training": training.to_dict()}))


def _flatten(tree, prefix=""):
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def config_differences(stored, requested):
    """`["model_config.d_model: run has 64, now 128", ...]`: what a resume would change (empty = same run).

    Args:
        stored: dict. The run's parsed config.json.
        requested: dict. `run_record` of the settings asked for now.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> import dataclasses
        >>> from tfm.config import TrainingConfig
        >>> stored = read_run_config(run)
        >>> config = model_config_from_info(stored)
        >>> wider = dataclasses.replace(config, d_model=32)
        >>> requested = run_record("transformer", wider, data_config_from_info(stored), TrainingConfig())
        >>> config_differences(stored, requested)
        ['model_config.d_model: run has 16, now 32']
    """
    if stored.get("model") != requested.get("model"):
        return [f"model: run has {stored.get('model')!r}, now {requested.get('model')!r}"]
    normalised = {"model": stored["model"], "model_config": model_config_from_info(stored).to_dict(),
                  "data": data_config_from_info(stored).to_dict()}
    a = _flatten(json.loads(json.dumps(normalised)))
    b = _flatten({k: requested.get(k) for k in ("model", "model_config", "data")})
    return [f"{key}: run has {a.get(key)!r}, now {b.get(key)!r}"
            for key in sorted(set(a) | set(b)) if key not in NOT_COMPARED and a.get(key) != b.get(key)]


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


# Writing files: whole or not at all (tfm.runs.atomic) -----------------------------------
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


# Checkpoints -----------------------------------------------------------------
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


def build_float32_model(config):
    """A model for `config` built in float32 whatever the global dtype policy (for files and averaging).

    Args:
        config: a model config (or a Transformer preset name).

    Example:
        >>> keras.config.set_dtype_policy("mixed_bfloat16")
        >>> build_float32_model("tiny").dtype_policy.name
        'float32'
        >>> keras.config.set_dtype_policy("float32")
    """
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        return build_model(config)
    finally:
        keras.config.set_dtype_policy(previous)


def load_tokenizer(run_dir, config):
    """The run's `SubwordTokenizer`, checked against the model's vocabulary size.

    Args:
        run_dir: str. A run folder.
        config: the run's model config (`model_config_from_info`).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> tokenizer = load_tokenizer(run, model_config_from_info(read_run_config(run)))
        >>> tokenizer.detokenize(tokenizer.tokenize("drei hundert")).numpy().decode()
        'drei hundert'
    """
    path = os.path.join(run_dir, TOKENIZER_DIR, MODEL_FILE)
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise ValueError(f"cannot read the tokenizer {path}: the file is empty (0 bytes), cut short when it was "
                         f"written or copied; restore it from a copy of the run folder — a run cannot be used with "
                         f"another tokenizer")
    tokenizer = SubwordTokenizer.load(os.path.join(run_dir, TOKENIZER_DIR))
    if tokenizer.vocab_size != config.vocab_size:
        raise ValueError(f"{run_dir}: the tokenizer has {tokenizer.vocab_size} ids but the model "
                         f"{config.vocab_size}; the run folder is damaged")
    for problem in tokenizer_copies_problems(os.path.join(run_dir, TOKENIZER_DIR), tokenizer):
        logger.warning("%s; it is a readable copy that tfm does not read (the model uses %s, which is whole): "
                       "restore it from a copy of the run folder, or write it again with "
                       "tfm.data.SubwordTokenizer.load(%r).save(%r)", problem, MODEL_FILE,
                       os.path.join(run_dir, TOKENIZER_DIR), os.path.join(run_dir, TOKENIZER_DIR))
    return tokenizer


def tokenizer_copies_problems(folder, tokenizer):
    """What is wrong with the readable copies beside a run's `sentencepiece.model`: `vocab.txt` (every token, one
    a line, in id order) and `tokenizer.json` (its size and reserved ids); empty when both match the model.

    tfm reads only `sentencepiece.model`; the copies are for people and other tools, so damage there is said
    (by `load_tokenizer`, one warning each) rather than refused.

    Args:
        folder: str. A run's `tokenizer/`.
        tokenizer: the `SubwordTokenizer` loaded from it.

    Returns:
        list of str, one per damaged or missing copy, each naming the file.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> folder = os.path.join(run, TOKENIZER_DIR)
        >>> tokenizer = SubwordTokenizer.load(folder)
        >>> tokenizer_copies_problems(folder, tokenizer)
        []
        >>> with open(os.path.join(folder, VOCAB_FILE), "r+b") as f:
        ...     _ = f.truncate(20)
        >>> tokenizer_copies_problems(folder, tokenizer)
        ['...vocab.txt lists 3 tokens, not the 60 of sentencepiece.model (cut short?)']
    """
    problems = []
    vocab_path, config_path = os.path.join(folder, VOCAB_FILE), os.path.join(folder, TOKENIZER_CONFIG_FILE)
    try:
        with open(vocab_path, encoding="utf-8") as f:
            listed = f.read().split("\n")
        listed = listed[:-1] if listed and listed[-1] == "" else listed
        vocabulary = tokenizer.vocabulary()
        if len(listed) != len(vocabulary):
            problems.append(f"{vocab_path} lists {len(listed)} tokens, not the {len(vocabulary)} of {MODEL_FILE}"
                            f"{' (cut short?)' if len(listed) < len(vocabulary) else ''}")
        elif listed != vocabulary:
            line = next(i for i, (a, b) in enumerate(zip(listed, vocabulary)) if a != b)
            problems.append(f"{vocab_path} differs from {MODEL_FILE} at line {line + 1} ({listed[line]!r}, not "
                            f"{vocabulary[line]!r})")
    except FileNotFoundError:
        problems.append(f"{vocab_path} is missing")
    except (OSError, UnicodeDecodeError) as error:
        problems.append(f"{vocab_path} cannot be read ({error})")
    try:
        with open(config_path, encoding="utf-8") as f:
            record = json.load(f)
        if not isinstance(record, dict) or record.get("vocab_size") != tokenizer.vocab_size:
            found = record.get("vocab_size") if isinstance(record, dict) else record
            problems.append(f"{config_path} records vocab_size {found!r}, not the {tokenizer.vocab_size} of "
                            f"{MODEL_FILE}")
    except FileNotFoundError:
        problems.append(f"{config_path} is missing")
    except (OSError, ValueError) as error:
        problems.append(f"{config_path} is not valid JSON ({str(error).splitlines()[0][:80]})")
    return problems


def load_run(run_dir, checkpoint=None):
    """The model, tokenizer and settings of a run folder made by `train`.

    Args:
        run_dir: the run folder (`--output` of `tfm train`).
        checkpoint: which weights. None: `checkpoints/averaged.weights.h5` when it
            exists (`tfm average`; a warning says when newer epoch checkpoints exist),
            else the latest epoch checkpoint. Also "averaged", "latest", an epoch
            number (int), a file name in `RUN/checkpoints/`, or a path.

    Returns:
        `(model, tokenizer, run_info)`: the built `keras.Model` (current dtype policy)
        with the weights loaded, the `SubwordTokenizer`, and the parsed config.json
        plus `run_dir`, `checkpoint` (the path loaded) and `config` (the model config
        dataclass, whose `beam_size`, `length_penalty`, `max_extra_length` and
        `checkpoints_to_average` are the run's decoding and averaging defaults).

    Raises:
        FileNotFoundError: not a run folder, or no such checkpoint.
        ValueError: another format version, or a damaged file (named).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> model, tokenizer, info = load_run(run)                 # averaged weights, else the latest epoch's
        >>> os.path.basename(info["checkpoint"]), info["config"].beam_size
        ('epoch_002.weights.h5', 4)
        >>> model.count_params() > 0 and tokenizer.vocab_size == info["config"].vocab_size
        True
    """
    run_dir = os.path.abspath(run_dir)
    info = read_run_config(run_dir)
    config = model_config_from_info(info)
    tokenizer = load_tokenizer(run_dir, config)
    path = resolve_checkpoint(run_dir, checkpoint)
    model = build_model(config)
    load_weights(model, path, config_file=os.path.join(run_dir, CONFIG_FILE),
                 remedy="or choose another checkpoint with --checkpoint (latest, an epoch number or a file)")
    return model, tokenizer, {**info, "run_dir": run_dir, "checkpoint": path, "config": config}
