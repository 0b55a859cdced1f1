"""The run-folder contract, shared by training and inference (so inference never imports training).

A run folder (`RUN`, the `--output` of `tfm train`) holds:

    config.json        {"tfm_version", "format": 1, "model", "model_config", "data", "training"}
    tokenizer/         the shared subword vocabulary, learned once from the training split
    checkpoints/       epoch_001.weights.h5 ... (the last K, weights only), averaged.weights.h5 (+ .averaging.json)
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

import keras

from tfm import __version__
from tfm.config.configs import DataConfig
from tfm.data.subword_tokenizer import MODEL_FILE, SubwordTokenizer
from tfm.models.registry import build_model, config_class
from tfm.runs.atomic import (  # noqa: F401  (tfm.runs' API)
    CAUSES,
    WriteError,
    atomic_folder,
    cause,
    is_running,
    save_weights,
    weights_bytes,
    write_atomic,
    write_json_atomic,
)
from tfm.runs.history import (  # noqa: F401
    HISTORY_COLUMNS,
    HISTORY_FILE,
    format_history,
    read_history,
    read_rows,  # (tfm.runs' API)
    write_rows,
)

logger = logging.getLogger("tfm.runs")

FORMAT = 1  # version of the run folder layout (config.json "format")
CONFIG_FILE = "config.json"
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
RUN_ENTRIES = {CONFIG_FILE, HISTORY_FILE, TOKENIZER_DIR, CHECKPOINT_DIR, BACKUP_DIR, LOG_DIR, WORKERS_DIR, HYPS_DIR,
               LOCK_FILE}
# What a run has made; found without config.json, they say it was deleted (a first session killed before
# config.json was written leaves only tokenizer/, logs/ or temporary files).
RUN_PRODUCTS = (HISTORY_FILE, CHECKPOINT_DIR, BACKUP_DIR, HYPS_DIR)
TEMPORARY = re.compile(r"^\.tmp(\d+)|\.tmp(\d+)$")  # `.tmpPID.name` (and `name.tmpPID` of earlier versions)
# Fields compared when a RUN is reused; the rest (a cache location, the learned vocabulary size) may move.
NOT_COMPARED = {"data.data_dir", "data.vocab_size", "model_config.vocab_size"}


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
        ValueError: another format version or a damaged file.

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
    try:
        with open(path) as f:
            info = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not valid JSON ({error}); the run folder is damaged") from None
    fmt = info.get("format") if isinstance(info, dict) else None
    if fmt != FORMAT:
        made_by = info.get("tfm_version", "?") if isinstance(info, dict) else "?"
        raise ValueError(
            f"{run_dir!r} is a run folder of format {fmt!r} (made by tfm {made_by}), but tfm {__version__} reads "
            f"format {FORMAT}; use that tfm version or train into a new --output folder")
    missing = [key for key in ("model", "model_config", "data") if key not in info]
    if missing:
        raise ValueError(f"{path} lacks {missing}; the run folder is damaged")
    return info


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
    return DataConfig.from_dict(info["data"], ignore_unknown=True)


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
    _refuse_run_file(path, what)
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
    _refuse_run_file(path, what)
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


def _refuse_run_file(path, what):
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
    _refuse_run_file(run_dir, "--output")
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
    finished = len(read_rows(os.path.join(run_dir, HISTORY_FILE)))
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


def load_weights(model, path):
    """`model.load_weights(path)`, with a message that names a damaged file instead of h5py's OSError.

    Args:
        model: a built `keras.Model` of the file's architecture.
        path: str. A `.weights.h5` file.

    Raises:
        ValueError: the file is not a readable weights file (truncated, not HDF5, another model's).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> model = build_float32_model(model_config_from_info(read_run_config(run)))
        >>> load_weights(model, latest_checkpoint(run))
        >>> load_weights(model, os.path.join(run, "config.json"))
        Traceback (most recent call last):
        ...
        ValueError: cannot read the weights in ...config.json: ...
    """
    try:
        model.load_weights(path)
    except (OSError, ValueError, KeyError) as error:
        first = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
        raise ValueError(
            f"cannot read the weights in {path}: {first}. The file is damaged (truncated or not a Keras "
            f"weights file) or belongs to another model; choose another checkpoint with --checkpoint "
            f"(e.g. latest, or an epoch number), or rerun tfm average") from None


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
    return tokenizer


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
    load_weights(model, path)
    return model, tokenizer, {**info, "run_dir": run_dir, "checkpoint": path, "config": config}
