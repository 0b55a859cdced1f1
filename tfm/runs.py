"""The run-folder contract, shared by training and inference (so inference never imports training).

A run folder (`RUN`, the `--output` of `tfm train`) holds:

    config.json        {"tfm_version", "format": 1, "model", "model_config", "data", "training"}
    tokenizer/         the shared subword vocabulary, learned once from the training split
    checkpoints/       epoch_001.weights.h5 ... (the last K, weights only), averaged.weights.h5 (+ .json)
    history.csv        one row per finished epoch: epoch (0-based), loss, accuracy, val_*, learning_rate,
                       iterations, epoch_seconds
    backup/            the full training state (weights + optimizer) of the last finished epoch
    logs/              TensorBoard
    workers/           backups of the non-chief workers of a multi-worker run

    model, tokenizer, info = load_run("runs/m30k")                 # averaged weights, else the latest
    info["config"].beam_size, info["config"].length_penalty       # the run's decoding settings (§6.1)

Every file is written under a temporary name and renamed (`write_json_atomic`,
`write_rows`), so a killed process never leaves half a file behind. What a run has
finished, and how a session resumes it (a damaged backup included), is `tfm.resume`'s.
"""

import csv
import json
import logging
import os
import re
import shutil

import keras

from tfm import __version__
from tfm.config import DataConfig
from tfm.data.subword_tokenizer import SubwordTokenizer
from tfm.models.registry import build_model, config_class

logger = logging.getLogger("tfm.runs")

FORMAT = 1  # version of the run folder layout (config.json "format")
CONFIG_FILE = "config.json"
HISTORY_FILE = "history.csv"
TOKENIZER_DIR = "tokenizer"
CHECKPOINT_DIR = "checkpoints"
BACKUP_DIR = "backup"
LOG_DIR = "logs"
WORKERS_DIR = "workers"  # non-chief workers of a multi-worker run keep their backups here
AVERAGED = "averaged.weights.h5"
EPOCH_CHECKPOINT = re.compile(r"^epoch_(\d+)\.weights\.h5$")
RUN_ENTRIES = {CONFIG_FILE, HISTORY_FILE, TOKENIZER_DIR, CHECKPOINT_DIR, BACKUP_DIR, LOG_DIR, WORKERS_DIR}
# Fields compared when a RUN is reused; the rest (a cache location, the learned vocabulary size) may move.
NOT_COMPARED = {"data.data_dir", "data.vocab_size", "model_config.vocab_size"}


# config.json ----------------------------------------------------------------
def read_run_config(run_dir):
    """The parsed `RUN/config.json`, checked to be a run folder of this format.

    Raises:
        FileNotFoundError: no config.json.
        ValueError: another format version or a damaged file.
    """
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
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
    """
    values = dict(info["model_config"])
    for key in ("max_length", "tokens_per_batch"):
        if key not in values and key in info.get("data", {}):
            values[key] = info["data"][key]
    return config_class(info["model"]).from_dict(values, ignore_unknown=True)


def data_config_from_info(info):
    """The `DataConfig` stored in a parsed config.json."""
    return DataConfig.from_dict(info["data"], ignore_unknown=True)


def run_record(model, model_config, data, training):
    """The dict config.json holds (JSON types only)."""
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
    """`["model_config.d_model: run has 64, now 128", ...]`: what a resume would change (empty = same run)."""
    if stored.get("model") != requested.get("model"):
        return [f"model: run has {stored.get('model')!r}, now {requested.get('model')!r}"]
    normalised = {"model": stored["model"], "model_config": model_config_from_info(stored).to_dict(),
                  "data": data_config_from_info(stored).to_dict()}
    a = _flatten(json.loads(json.dumps(normalised)))
    b = _flatten({k: requested.get(k) for k in ("model", "model_config", "data")})
    return [f"{key}: run has {a.get(key)!r}, now {b.get(key)!r}"
            for key in sorted(set(a) | set(b)) if key not in NOT_COMPARED and a.get(key) != b.get(key)]


def check_fresh_folder(run_dir):
    """Raises FileExistsError unless `run_dir` is absent, empty, or holds only run-folder entries."""
    if not os.path.exists(run_dir):
        return
    if not os.path.isdir(run_dir):
        raise FileExistsError(f"--output {run_dir!r} exists and is not a folder")
    foreign = [e for e in sorted(os.listdir(run_dir)) if e not in RUN_ENTRIES and not e.startswith(".tmp")]
    if foreign:
        raise FileExistsError(
            f"--output {run_dir!r} exists and is not a tfm run folder (no {CONFIG_FILE}; it holds "
            f"{', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}); choose a new or empty folder")


def remove_leftovers(run_dir):
    """Removes what a first session killed before config.json was written left behind."""
    if not os.path.isdir(run_dir):
        return
    for entry in os.listdir(run_dir):
        if entry == TOKENIZER_DIR or entry.startswith(".tmp"):
            shutil.rmtree(os.path.join(run_dir, entry), ignore_errors=True)


def write_json_atomic(path, value):
    """`json.dump(value)` into `path` through a temporary file and a rename."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# history.csv ---------------------------------------------------------------
def read_rows(path):
    """The rows of a history.csv (dicts of str); rows without an integer epoch are skipped."""
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    good = []
    for row in rows:
        try:
            int(row.get("epoch", ""))
        except (TypeError, ValueError):
            continue
        good.append(row)
    return good


def write_rows(path, rows):
    """Rewrites a history.csv atomically; columns in order of first appearance."""
    columns = ["epoch"]
    for row in rows:
        columns += [key for key in row if key not in columns]
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_history(run_dir):
    """`RUN/history.csv` as `{column: [value per epoch]}` (epoch as int, the rest float; missing = nan)."""
    rows = read_rows(os.path.join(run_dir, HISTORY_FILE))
    columns = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    history = {}
    for column in columns:
        if column == "epoch":
            history[column] = [int(row["epoch"]) for row in rows]
        else:
            history[column] = [float(row[column]) if row.get(column) not in (None, "") else float("nan")
                               for row in rows]
    return history


# Checkpoints -----------------------------------------------------------------
def epoch_checkpoints(run_dir):
    """`[(epoch, path)]` of `RUN/checkpoints/epoch_NNN.weights.h5`, oldest first (NNN = epochs finished)."""
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    if not os.path.isdir(folder):
        return []
    found = [(int(m.group(1)), os.path.join(folder, name))
             for name in os.listdir(folder) if (m := EPOCH_CHECKPOINT.match(name))]
    return sorted(found)


def latest_checkpoint(run_dir):
    """Path of the newest epoch checkpoint of a run (`RUN/checkpoints/epoch_NNN.weights.h5`), or None."""
    found = epoch_checkpoints(run_dir)
    return found[-1][1] if found else None


def resolve_checkpoint(run_dir, checkpoint=None):
    """The weights file `checkpoint` names in a run (see `load_run`), as a path.

    Raises:
        FileNotFoundError: naming what the checkpoint folder holds.
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
            raise FileNotFoundError(f"no checkpoint in {folder!r}: the run has not finished an epoch yet")
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


def _warn_if_stale(run_dir, averaged):
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

    Raises:
        ValueError: the file is not a readable weights file (truncated, not HDF5, another model's).
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
    """A model for `config` built in float32 whatever the global dtype policy (for files and averaging)."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        return build_model(config)
    finally:
        keras.config.set_dtype_policy(previous)


def load_tokenizer(run_dir, config):
    """The run's `SubwordTokenizer`, checked against the model's vocabulary size."""
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
    """
    run_dir = os.path.abspath(run_dir)
    info = read_run_config(run_dir)
    config = model_config_from_info(info)
    tokenizer = load_tokenizer(run_dir, config)
    path = resolve_checkpoint(run_dir, checkpoint)
    model = build_model(config)
    load_weights(model, path)
    return model, tokenizer, {**info, "run_dir": run_dir, "checkpoint": path, "config": config}
