"""Training with `model.fit` under `tf.distribute`: run folders, callbacks, resuming, checkpoint averaging.

    tfm train --preset tiny --dataset multi30k --data-dir DIR --output runs/m30k --epochs 10
    tfm train --preset tiny --output runs/numbers --epochs 3 --set dropout=0.2   # generated data, offline
    tfm average --run runs/m30k --last 5                                        # §6.1
    TF_CONFIG='{"cluster": {"worker": ["host1:port", "host2:port"]}, "task": {"type": "worker", "index": 0}}' \\
        tfm train --strategy multiworker ...                                    # one command per worker

From Python (notebooks, tests):

    result = tfm.training.train(TransformerConfig.tiny(), "numbers", output="runs/numbers", epochs=3)
    model, tokenizer, run_info = tfm.training.load_run("runs/numbers")

The dataset and the tokenizer are built outside the strategy; model, optimizer and
`compile` inside `strategy.scope()`; then `fit`.

A run folder (`RUN`, the `--output` of `tfm train`) holds:

    config.json        {"tfm_version", "format": 1, "model", "model_config", "data", "training"}
    tokenizer/         the shared subword vocabulary, learned once from the training split
    checkpoints/       epoch_001.weights.h5 ... (the last K, weights only), averaged.weights.h5
    history.csv        one row per finished epoch: epoch (0-based), loss, accuracy, val_*, learning_rate,
                       iterations, epoch_seconds
    backup/            the full training state (weights + optimizer) of the last finished epoch
    logs/              TensorBoard

Running the same command again on a RUN resumes it from the last finished epoch (a
run killed during an epoch loses that epoch only) and trains up to `--epochs`. A
RUN made with a different model or data configuration is refused, naming the
fields that differ; the seed, strategy, precision, XLA switch, epochs and steps may
change between sessions.
"""

import contextlib
import csv
import dataclasses
import difflib
import importlib.util
import json
import logging
import os
import re
import shutil
import time
import typing
import warnings

import keras
import numpy as np

import tfm
from tfm.config import TransformerConfig

logger = logging.getLogger("tfm.training")

FORMAT = 1  # version of the run folder layout (config.json "format")
CONFIG_FILE = "config.json"
HISTORY_FILE = "history.csv"
TOKENIZER_DIR = "tokenizer"
CHECKPOINT_DIR = "checkpoints"
BACKUP_DIR = "backup"
LOG_DIR = "logs"
WORKERS_DIR = "workers"  # non-chief workers of a multi-worker run keep their backups here
AVERAGED = "averaged.weights.h5"
_EPOCH_CHECKPOINT = re.compile(r"^epoch_(\d+)\.weights\.h5$")
_RUN_ENTRIES = {CONFIG_FILE, HISTORY_FILE, TOKENIZER_DIR, CHECKPOINT_DIR, BACKUP_DIR, LOG_DIR, WORKERS_DIR}

MODELS = ("transformer", "seq2seq", "bahdanau", "luong")
# Data settings of the RNN baselines when no Transformer preset gives them.
SEQ2SEQ_DEFAULTS = {"tokens_per_batch": 4096, "max_length": 128, "checkpoints_to_average": 5,
                    "learning_rate": 1e-3, "clipnorm": 1.0, "label_smoothing": 0.1}
# Fields compared when a RUN is reused; the rest (a cache location) may move.
_NOT_COMPARED = {"data.data_dir", "model_config.vocab_size"}


@dataclasses.dataclass
class TrainResult:
    """What `train` returns.

    Attributes:
        model: the trained `keras.Model` (weights of the last finished epoch).
        tokenizer: the run's `SubwordTokenizer`.
        config: the model config actually used (`vocab_size` = the tokenizer's).
        history: `{metric: [value per epoch]}` of the epochs run by this call
            (`read_history(run_dir)` has every epoch of the run).
        initial_epoch: epochs already finished when this call started.
        epochs: epochs finished now.
        run_dir: absolute path of the run folder.
    """

    model: keras.Model
    tokenizer: object
    config: object
    history: dict
    initial_epoch: int
    epochs: int
    run_dir: str


# Configs ------------------------------------------------------------------
def model_name(config):
    """"transformer", "seq2seq" (no attention), "bahdanau" or "luong", from the config's type."""
    if isinstance(config, TransformerConfig):
        return "transformer"
    from tfm.models.seq2seq import Seq2SeqConfig

    if isinstance(config, Seq2SeqConfig):
        return {None: "seq2seq", "bahdanau": "bahdanau", "luong": "luong"}[config.attention]
    raise TypeError(f"expected a TransformerConfig or a Seq2SeqConfig, got {type(config).__name__}")


def config_class(model="transformer"):
    """The config dataclass of a model name."""
    if model not in MODELS:
        raise ValueError(f"model={model!r}: expected one of {list(MODELS)}")
    if model == "transformer":
        return TransformerConfig
    from tfm.models.seq2seq import Seq2SeqConfig

    return Seq2SeqConfig


def build_model(config):
    """A built model for a `TransformerConfig` or a `Seq2SeqConfig` (current dtype policy)."""
    if model_name(config) == "transformer":
        return tfm.build_transformer(config)
    from tfm.models.seq2seq import build_seq2seq

    return build_seq2seq(config)


def _field_types(cls):
    return typing.get_type_hints(cls)


def _convert(cls_name, name, kind, text):
    kinds = typing.get_args(kind) or (kind,)
    if type(None) in kinds and text.strip().lower() in ("none", "null"):
        return None
    kind = next(k for k in kinds if k is not type(None))
    if kind is bool:
        low = text.strip().lower()
        if low in ("true", "1", "yes", "on"):
            return True
        if low in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"--set {name}={text!r}: {cls_name}.{name} is a bool; use true or false")
    if kind is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"--set {name}={text!r}: {cls_name}.{name} is an int, e.g. --set {name}=4") from None
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"--set {name}={text!r}: {cls_name}.{name} is a float, e.g. --set {name}=0.1") from None
    return text


def parse_overrides(cls, assignments):
    """`["dropout=0.2", "key_dim=none"]` -> `{"dropout": 0.2, "key_dim": None}`, typed by the dataclass `cls`.

    Values are converted to the field's type (int, float, bool: true/false, str;
    `none` for optional fields). Later assignments of a field win.

    Raises:
        ValueError: for an item without `=`, an unknown field (naming the closest
            ones and listing all), or a value of the wrong type.
    """
    types = _field_types(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    values = {}
    for item in assignments or ():
        if "=" not in item:
            raise ValueError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set dropout=0.2")
        name, text = (part.strip() for part in item.split("=", 1))
        if name not in types or name not in names:
            close = difflib.get_close_matches(name, names, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ValueError(f"--set {item!r}: {cls.__name__} has no field {name!r}{hint}; fields: {', '.join(names)}")
        values[name] = _convert(cls.__name__, name, types[name], text)
    return values


def apply_overrides(config, assignments):
    """`dataclasses.replace(config, **parse_overrides(type(config), assignments))`; the config validates."""
    return dataclasses.replace(config, **parse_overrides(type(config), assignments))


def make_config(preset="tiny", model="transformer", overrides=(), vocab_size=None, max_length=None,
                tokens_per_batch=None):
    """The model config of `tfm train --preset P --model M [--set ...] [--vocab-size ...]`.

    The Transformer takes `TransformerConfig.preset(preset)`. The RNN baselines take
    `Seq2SeqConfig`: for tiny / small a small model (`Seq2SeqConfig.tiny`, small
    widened to 256 units) with the attention of `model`, for base / big the paper's
    preset (Sutskever, Bahdanau or Luong); their vocabulary size is the Transformer
    preset's. `overrides` (`--set FIELD=VALUE`) apply to that dataclass, then the
    explicit `vocab_size`, `max_length` and `tokens_per_batch` (Transformer fields).
    """
    cls = config_class(model)
    transformer_preset = TransformerConfig.preset(preset)
    if model == "transformer":
        config = transformer_preset
    else:
        attention = {"seq2seq": None, "bahdanau": "bahdanau", "luong": "luong"}[model]
        if preset in ("tiny", "small"):
            sizes = {} if preset == "tiny" else dict(embedding_dim=256, units=256)
            config = cls.tiny(attention=attention, vocab_size=transformer_preset.vocab_size, **sizes)
        else:
            paper = {"seq2seq": "sutskever", "bahdanau": "bahdanau", "luong": "luong"}[model]
            config = cls.preset(paper, vocab_size=transformer_preset.vocab_size)
    config = apply_overrides(config, overrides)
    explicit = {"vocab_size": vocab_size}
    if model == "transformer":
        explicit.update(max_length=max_length, tokens_per_batch=tokens_per_batch)
    explicit = {k: v for k, v in explicit.items() if v is not None}
    return dataclasses.replace(config, **explicit) if explicit else config


def _as_config(config):
    if isinstance(config, str):
        return TransformerConfig.preset(config)
    model_name(config)  # type check
    return config


def _optimizer(config):
    if model_name(config) == "transformer":
        return tfm.build_optimizer(config)
    # The RNN baselines: Adam with a constant rate and gradient clipping, as RNNs need.
    return keras.optimizers.Adam(learning_rate=SEQ2SEQ_DEFAULTS["learning_rate"],
                                 clipnorm=SEQ2SEQ_DEFAULTS["clipnorm"])


def _jsonable(value):
    return json.loads(json.dumps(value))


# Strategy -----------------------------------------------------------------
def make_strategy(name="auto"):
    """A `tf.distribute.Strategy` by name.

    Args:
        name: "auto" (`MirroredStrategy` when more than one GPU is visible, else the
            default strategy), "default", "mirrored" (every GPU, else every logical
            CPU device) or "multiworker" (`MultiWorkerMirroredStrategy`, cluster from
            the `TF_CONFIG` environment variable; create it before any other
            TensorFlow op). A `tf.distribute.Strategy` is returned as is.
    """
    import tensorflow as tf

    if isinstance(name, tf.distribute.Strategy):
        return name
    if name == "multiworker":
        if not os.environ.get("TF_CONFIG"):
            raise ValueError(
                "strategy='multiworker' reads the cluster from the TF_CONFIG environment variable, which is not "
                "set; e.g. TF_CONFIG='{\"cluster\": {\"worker\": [\"host1:12345\", \"host2:12345\"]}, "
                "\"task\": {\"type\": \"worker\", \"index\": 0}}' on the first machine, index 1 on the second")
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "default":
        return tf.distribute.get_strategy()
    gpus = tf.config.list_logical_devices("GPU")
    if name == "auto":
        return tf.distribute.MirroredStrategy([d.name for d in gpus]) if len(gpus) > 1 else tf.distribute.get_strategy()
    if name == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    raise ValueError(f"strategy={name!r}: expected auto, default, mirrored or multiworker")


def _worker_role(strategy):
    """(is_chief, worker name) in a multi-worker cluster; (True, "chief") otherwise."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None:
        return True, "chief"
    jobs = resolver.cluster_spec().as_dict()
    task_type, task_id = resolver.task_type, resolver.task_id
    if not jobs or task_type is None:
        return True, "chief"
    is_chief = task_type == "chief" or (task_type == "worker" and task_id == 0 and "chief" not in jobs)
    return is_chief, f"{task_type}_{task_id}"


def precision_policy(mixed_precision):
    """"float32", or "mixed_float16" on a GPU (Keras adds loss scaling) / "mixed_bfloat16" on a CPU."""
    if not mixed_precision:
        return "float32"
    import tensorflow as tf

    return "mixed_float16" if tf.config.list_logical_devices("GPU") else "mixed_bfloat16"


# Run folder ---------------------------------------------------------------
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
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    fmt = info.get("format") if isinstance(info, dict) else None
    if fmt != FORMAT:
        raise ValueError(
            f"{run_dir!r} is a run folder of format {fmt!r} (made by tfm {info.get('tfm_version', '?')}), but tfm "
            f"{tfm.__version__} reads format {FORMAT}; use that tfm version or train into a new --output folder")
    missing = [key for key in ("model", "model_config", "data") if key not in info]
    if missing:
        raise ValueError(f"{path} lacks {missing}; the run folder is damaged")
    return info


def _config_from_info(info):
    return config_class(info["model"]).from_dict(info["model_config"])


def _flatten(tree, prefix=""):
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _differences(stored, requested):
    a = _flatten({k: stored.get(k) for k in ("model", "model_config", "data")})
    b = _flatten({k: requested.get(k) for k in ("model", "model_config", "data")})
    if a.get("model") != b.get("model"):
        return [f"model: run has {a.get('model')!r}, now {b.get('model')!r}"]
    return [f"{key}: run has {a.get(key)!r}, now {b.get(key)!r}"
            for key in sorted(set(a) | set(b)) if key not in _NOT_COMPARED and a.get(key) != b.get(key)]


def _check_fresh_folder(run_dir, remove_leftovers):
    if not os.path.exists(run_dir):
        return
    if not os.path.isdir(run_dir):
        raise FileExistsError(f"--output {run_dir!r} exists and is not a folder")
    entries = sorted(os.listdir(run_dir))
    foreign = [e for e in entries if e not in _RUN_ENTRIES and not e.startswith(".tmp")]
    if foreign:
        raise FileExistsError(
            f"--output {run_dir!r} exists and is not a tfm run folder (no {CONFIG_FILE}; it holds "
            f"{', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}); choose a new or empty folder")
    if remove_leftovers:  # a first session killed before config.json was written
        for entry in entries:
            if entry == TOKENIZER_DIR or entry.startswith(".tmp"):
                shutil.rmtree(os.path.join(run_dir, entry), ignore_errors=True)


def _write_json_atomic(path, value):
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _learn_tokenizer(pairs, vocab_size, seed):
    from tfm.data import train_tokenizer

    try:
        return train_tokenizer(pairs, vocab_size, seed=seed)
    except ValueError as error:
        found = re.search(r"value <= (\d+)", str(error))
        if not found:
            raise
        cap = int(found.group(1))
        logger.warning("the training text allows at most %d subwords: using vocab_size=%d instead of %d",
                       cap, cap, vocab_size)
        return train_tokenizer(pairs, cap, seed=seed)


def _load_pairs(data, split):
    from tfm.data import load_dataset

    kwargs = {}
    if data["dataset"] == "files":
        kwargs = dict(source_path=data["source_file"], target_path=data["target_file"])
    return load_dataset(data["dataset"], split, source_lang=data["source_lang"], target_lang=data["target_lang"],
                        data_dir=data["data_dir"], **kwargs)


# Checkpoints --------------------------------------------------------------
def epoch_checkpoints(run_dir):
    """`[(epoch, path)]` of `RUN/checkpoints/epoch_NNN.weights.h5`, oldest first (NNN = epochs finished)."""
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    if not os.path.isdir(folder):
        return []
    found = [(int(m.group(1)), os.path.join(folder, name))
             for name in os.listdir(folder) if (m := _EPOCH_CHECKPOINT.match(name))]
    return sorted(found)


def latest_checkpoint(run_dir):
    """Path of the newest epoch checkpoint of a run (`RUN/checkpoints/epoch_NNN.weights.h5`), or None."""
    found = epoch_checkpoints(run_dir)
    return found[-1][1] if found else None


def _resolve_checkpoint(run_dir, checkpoint):
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
        plus `run_dir`, `checkpoint` (the path loaded) and `config` (the dataclass).

    Raises:
        FileNotFoundError: not a run folder, or no such checkpoint.
        ValueError: another format version.
    """
    from tfm.data import SubwordTokenizer

    run_dir = os.path.abspath(run_dir)
    info = read_run_config(run_dir)
    config = _config_from_info(info)
    tokenizer = SubwordTokenizer.load(os.path.join(run_dir, TOKENIZER_DIR))
    if tokenizer.vocab_size != config.vocab_size:
        raise ValueError(f"{run_dir}: the tokenizer has {tokenizer.vocab_size} ids but the model "
                         f"{config.vocab_size}; the run folder is damaged")
    path = _resolve_checkpoint(run_dir, checkpoint)
    model = build_model(config)
    model.load_weights(path)
    return model, tokenizer, {**info, "run_dir": run_dir, "checkpoint": path, "config": config}


def average_checkpoints(run_dir, last=5, output=None):
    """Averages the weights of the last `last` epoch checkpoints (Vaswani et al., 2017, §6.1).

    "For the base models, we used a single model obtained by averaging the last 5
    checkpoints [...]. For the big models, we averaged the last 20 checkpoints."

    Args:
        run_dir: the run folder.
        last: int. How many of the newest `epoch_NNN.weights.h5` to average.
        output: str or None. Where to write; defaults to
            `RUN/checkpoints/averaged.weights.h5` (what `load_run` prefers). A
            `.json` beside it lists the epochs averaged.

    Returns:
        str: the path written.

    Raises:
        ValueError: when the run has fewer checkpoints than `last` (says how many).
    """
    run_dir = os.path.abspath(run_dir)
    info = read_run_config(run_dir)
    if int(last) < 1:
        raise ValueError(f"last={last}: average at least 1 checkpoint")
    found = epoch_checkpoints(run_dir)
    folder = os.path.join(run_dir, CHECKPOINT_DIR)
    if len(found) < last:
        keep = info.get("training", {}).get("keep_checkpoints")
        raise ValueError(
            f"cannot average the last {last} checkpoints: {folder} has {len(found)}"
            f"{' (' + ', '.join(os.path.basename(p) for _, p in found) + ')' if found else ''}; "
            f"train more epochs or ask for --last {max(len(found), 1)}"
            + (f" (the run keeps its last {keep})" if keep and keep < last else ""))
    output = output or os.path.join(folder, AVERAGED)
    if not str(output).endswith(".weights.h5"):
        raise ValueError(f"output={output!r}: the file name must end in .weights.h5")
    chosen = found[-last:]
    previous_policy = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")
    try:
        model = build_model(_config_from_info(info))
    finally:
        keras.config.set_dtype_policy(previous_policy)
    total = None
    for _, path in chosen:
        model.load_weights(path)
        weights = model.get_weights()
        if total is None:
            total = [w.astype(np.float64) if np.issubdtype(w.dtype, np.floating) else w for w in weights]
        else:
            total = [t + w if np.issubdtype(w.dtype, np.floating) else w for t, w in zip(total, weights)]
    model.set_weights([t / len(chosen) if np.issubdtype(t.dtype, np.floating) else t for t in total])
    os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
    tmp = os.path.join(os.path.dirname(os.path.abspath(output)), f".tmp{os.getpid()}.weights.h5")
    model.save_weights(tmp)
    os.replace(tmp, output)
    _write_json_atomic(str(output)[: -len(".weights.h5")] + ".json",
                       {"epochs": [epoch for epoch, _ in chosen],
                        "checkpoints": [os.path.basename(p) for _, p in chosen]})
    logger.info("averaged %s into %s", ", ".join(os.path.basename(p) for _, p in chosen), output)
    return output


# History ------------------------------------------------------------------
def _read_rows(path):
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    good = []
    for row in rows:
        try:
            int(row.get("epoch", ""))
        except ValueError:
            continue
        good.append(row)
    return good


def _write_rows(path, rows):
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
    rows = _read_rows(os.path.join(run_dir, HISTORY_FILE))
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


class HistoryCSV(keras.callbacks.Callback):
    """`CSVLogger` for resumable runs: one row per finished epoch in `history.csv`.

    When a resumed `fit` starts at epoch `e`, rows of epochs `>= e` (an epoch that
    ended in the file but not in the backup) are dropped first, so the epochs stay
    0..N-1 with no gap and no duplicate. The file is rewritten atomically each
    epoch; besides the logs it records `learning_rate`, `iterations` (optimizer
    steps so far) and `epoch_seconds`.
    """

    def __init__(self, path):
        super().__init__()
        self.path = path
        self._rows = None
        self._start = None

    def on_epoch_begin(self, epoch, logs=None):
        if self._rows is None:
            rows = _read_rows(self.path)
            self._rows = [row for row in rows if int(row["epoch"]) < epoch]
            if len(self._rows) != len(rows):
                _write_rows(self.path, self._rows)
        self._start = time.time()

    def on_epoch_end(self, epoch, logs=None):
        row = {"epoch": epoch}
        row.update({key: float(value) for key, value in (logs or {}).items()})
        optimizer = self.model.optimizer
        row["learning_rate"] = float(keras.ops.convert_to_numpy(optimizer.learning_rate))
        row["iterations"] = int(keras.ops.convert_to_numpy(optimizer.iterations))
        row["epoch_seconds"] = round(time.time() - self._start, 3)
        self._rows.append(row)
        _write_rows(self.path, self._rows)


class EpochCheckpoint(keras.callbacks.Callback):
    """Saves the model weights (no optimizer state) as `epoch_NNN.weights.h5` after each epoch; keeps the last K.

    NNN is the number of finished epochs (epoch_001 after the first). Files are
    written under a temporary name and renamed, so a killed run never leaves half a
    checkpoint. `shadow` is a plain float32 copy of the model that does the saving,
    which keeps optimizer state out of the files.
    """

    def __init__(self, folder, keep, shadow):
        super().__init__()
        if int(keep) < 1:
            raise ValueError(f"keep_checkpoints={keep}: keep at least 1")
        self.folder = folder
        self.keep = int(keep)
        self.shadow = shadow

    def on_epoch_end(self, epoch, logs=None):
        os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"epoch_{epoch + 1:03d}.weights.h5")
        tmp = os.path.join(self.folder, f".tmp{os.getpid()}.weights.h5")
        self.shadow.set_weights(self.model.get_weights())
        self.shadow.save_weights(tmp)
        os.replace(tmp, path)
        for _, old in epoch_checkpoints(os.path.dirname(self.folder))[: -self.keep]:
            os.remove(old)


class NaNGuard(keras.callbacks.TerminateOnNaN):
    """`TerminateOnNaN` that raises `FloatingPointError` with what to try.

    Raising (instead of stopping gracefully) skips the epoch-end callbacks, so the
    backup, the checkpoints and history.csv keep the last finished epoch.
    """

    def __init__(self):
        super().__init__(raise_error=True)
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not np.isfinite(float(loss)):
            raise FloatingPointError(
                f"the training loss became {float(loss)} at batch {batch} of epoch {self._epoch}; training stopped "
                "and the run folder keeps the last finished epoch. Try, in a new --output folder, a smaller learning "
                "rate (--set learning_rate_scale=0.5), a longer warm-up (--set warmup_steps=8000) or a smaller "
                "--tokens-per-batch; or rerun this command without --mixed-precision / --xla, which resumes the run")


# Training -----------------------------------------------------------------
def train(config="tiny", dataset="numbers", *, output, epochs=10, steps_per_epoch=None, strategy="auto",
          mixed_precision=False, xla=False, tokens_per_batch=None, max_length=None, source_lang=None,
          target_lang=None, data_dir=None, source_file=None, target_file=None, keep_checkpoints=None, seed=0,
          validation=True, verbose="auto", callbacks=()):
    """Trains a model into the run folder `output`, or resumes it there.

    Args:
        config: `TransformerConfig`, `Seq2SeqConfig` or a Transformer preset name.
            Its `vocab_size` is the subword vocabulary to learn (capped, with a
            warning, at what the training text allows; the config used then has the
            tokenizer's size).
        dataset: a name of `tfm.data.load_dataset` ("numbers", "reverse", "copy",
            "multi30k", a TFDS name, or "files" with `source_file` / `target_file`).
        output: str. The run folder (see the module docstring); resumed if it exists.
        epochs: int. Epochs to reach (a resumed run trains the rest).
        steps_per_epoch: int or None. Batches per epoch (the data then repeats);
            None = one pass over the training split.
        strategy: "auto", "default", "mirrored", "multiworker" or a
            `tf.distribute.Strategy` (see `make_strategy`).
        mixed_precision: bool. `mixed_float16` on a GPU, `mixed_bfloat16` on a CPU.
        xla: bool. `jit_compile` the train step; batches are then padded to their
            bucket's bound, so XLA compiles one program per bucket, not per shape.
        tokens_per_batch: int or None. Token budget per side per batch (§5.1);
            defaults to the config's (`SEQ2SEQ_DEFAULTS` for the RNN baselines).
        max_length: int or None. Pairs longer than this (in subwords) are dropped;
            defaults to the config's `max_length`, which it may not exceed.
        source_lang, target_lang, data_dir, source_file, target_file: passed to
            `tfm.data.load_dataset`.
        keep_checkpoints: int or None. Epoch checkpoints to keep; defaults to the
            config's `checkpoints_to_average`.
        seed: int. Weight initialisation, dropout and shuffling; a resumed run draws
            its shuffles and dropout masks from `seed` and the epoch it starts at.
        validation: bool. Evaluate on the validation split after each epoch (not for
            "files", which has none).
        verbose: `model.fit`'s verbosity ("auto" = progress bar).
        callbacks: more `keras.callbacks.Callback`s for `model.fit`, run after the
            run folder's own (history, checkpoints, TensorBoard) and before the
            backup, so one that sets `model.stop_training` ends the run cleanly.

    Returns:
        `TrainResult`.

    Raises:
        ValueError: a RUN made with a different configuration (the differing fields
            are named), another format version, or bad settings.
        FileExistsError: `output` exists and is not a run folder.
        FloatingPointError: the loss became NaN or infinite.
    """
    import tensorflow as tf

    from tfm.data import SubwordTokenizer, bucket_by_token_budget

    config = _as_config(config)
    name = model_name(config)
    transformer = name == "transformer"
    run_dir = os.path.abspath(output)
    if int(epochs) < 1:
        raise ValueError(f"epochs={epochs}: train at least 1 epoch")
    if steps_per_epoch is not None and int(steps_per_epoch) < 1:
        raise ValueError(f"steps_per_epoch={steps_per_epoch}: expected a positive number or None")
    if dataset == "files" and not (source_file and target_file):
        raise ValueError("dataset='files' needs source_file and target_file (--source-file, --target-file)")
    tokens_per_batch = int(tokens_per_batch or (config.tokens_per_batch if transformer
                                                else SEQ2SEQ_DEFAULTS["tokens_per_batch"]))
    max_length = int(max_length or (config.max_length if transformer else SEQ2SEQ_DEFAULTS["max_length"]))
    if transformer and max_length > config.max_length:
        raise ValueError(f"max_length={max_length} exceeds the model's max_length={config.max_length}; "
                         f"raise both (--max-length sets both)")
    keep = int(keep_checkpoints
               or getattr(config, "checkpoints_to_average", SEQ2SEQ_DEFAULTS["checkpoints_to_average"]))
    label_smoothing = getattr(config, "label_smoothing", SEQ2SEQ_DEFAULTS["label_smoothing"])

    def absolute(path):
        return None if path is None else os.path.abspath(os.path.expanduser(str(path)))

    data = {"dataset": dataset, "source_lang": source_lang, "target_lang": target_lang, "data_dir": absolute(data_dir),
            "source_file": absolute(source_file), "target_file": absolute(target_file), "max_length": max_length,
            "tokens_per_batch": tokens_per_batch, "vocab_size": config.vocab_size}
    requested = _jsonable({"model": name, "model_config": dataclasses.asdict(config), "data": data})
    logger.info("tfm %s: %s %s", tfm.__version__, name, json.dumps(dataclasses.asdict(config), sort_keys=True))
    logger.info("data: %s", json.dumps(data, sort_keys=True))

    # Refuse a mismatching RUN before any TensorFlow work.
    config_path = os.path.join(run_dir, CONFIG_FILE)
    existing = read_run_config(run_dir) if os.path.isfile(config_path) else None
    if existing is not None:
        differences = _differences(existing, requested)
        if differences:
            raise ValueError(
                f"{run_dir} was made with a different configuration; differing fields:\n  "
                + "\n  ".join(differences)
                + f"\nRepeat the settings of {config_path} to resume it, or train into a new --output folder")

    # The strategy first: MultiWorkerMirroredStrategy must exist before other TensorFlow ops.
    strategy = make_strategy(strategy)
    is_chief, worker = _worker_role(strategy)
    if existing is None:
        _check_fresh_folder(run_dir, remove_leftovers=is_chief)
    keras.utils.set_random_seed(seed)

    # Tokenizer and datasets, outside the strategy.
    if existing is not None:
        tokenizer = SubwordTokenizer.load(os.path.join(run_dir, TOKENIZER_DIR))
        config = _config_from_info(existing)
        logger.info("resuming %s (vocabulary of %d subwords)", run_dir, tokenizer.vocab_size)
    else:
        tokenizer = _learn_tokenizer(_load_pairs(data, "train"), config.vocab_size, seed)
        config = dataclasses.replace(config, vocab_size=tokenizer.vocab_size)
        if is_chief:
            os.makedirs(run_dir, exist_ok=True)
            tmp = os.path.join(run_dir, f".tmp{os.getpid()}_{TOKENIZER_DIR}")
            tokenizer.save(tmp)
            shutil.rmtree(os.path.join(run_dir, TOKENIZER_DIR), ignore_errors=True)
            os.replace(tmp, os.path.join(run_dir, TOKENIZER_DIR))
            training = {"seed": seed, "keep_checkpoints": keep, "label_smoothing": label_smoothing,
                        "strategy": strategy.__class__.__name__, "mixed_precision": bool(mixed_precision),
                        "xla": bool(xla), "steps_per_epoch": steps_per_epoch}
            _write_json_atomic(config_path, {"tfm_version": tfm.__version__, "format": FORMAT, "model": name,
                                             "model_config": dataclasses.asdict(config), "data": data,
                                             "training": training})
        logger.info("vocabulary: %d subwords learned from the training split", tokenizer.vocab_size)
    if tokenizer.vocab_size != config.vocab_size:
        raise ValueError(f"{run_dir}: tokenizer has {tokenizer.vocab_size} ids, model_config.vocab_size is "
                         f"{config.vocab_size}; the run folder is damaged")

    # Where the run stands: the backup's epoch, else (backup deleted) the newest epoch checkpoint.
    backup_dir = (os.path.join(run_dir, BACKUP_DIR) if is_chief
                  else os.path.join(run_dir, WORKERS_DIR, worker, BACKUP_DIR))
    has_backup = os.path.isdir(backup_dir) and bool(os.listdir(backup_dir))
    found = epoch_checkpoints(run_dir) if existing is not None else []
    done_before = _backup_epoch(backup_dir) if has_backup else (found[-1][0] if found else 0)
    if done_before >= epochs:
        logger.info("%s has finished %d epochs already (--epochs %d): nothing to train", run_dir, done_before, epochs)
        model, _, _ = load_run(run_dir, checkpoint="latest") if found else (build_model(config), None, None)
        return TrainResult(model=model, tokenizer=tokenizer, config=config, history={}, initial_epoch=done_before,
                           epochs=done_before, run_dir=run_dir)

    # A resumed run draws new shuffles and dropout masks. Reseeded with `seed` alone, it would
    # replay the first epochs' batches with the same masks (the dropout streams are not in the
    # backup), which the model has fitted already: training loss drops, regularisation weakens.
    stream_seed = (seed * 1_000_003 + done_before) % (2**31 - 1) if done_before else seed
    if done_before:
        keras.utils.set_random_seed(stream_seed)

    # Full batches split evenly across replicas (Keras builds the model from the first
    # batch with a cross-replica reduce that needs equal shapes on every replica).
    batching = dict(tokens_per_batch=tokens_per_batch, max_length=max_length, cache=True, pad_to_bucket=bool(xla),
                    batch_multiple=strategy.num_replicas_in_sync)
    train_batches = bucket_by_token_budget(_load_pairs(data, "train"), tokenizer, shuffle=True, seed=stream_seed, **batching)
    if steps_per_epoch:
        train_batches = train_batches.repeat()  # epochs of steps_per_epoch batches continue through the data
    val_batches = None
    if validation and dataset != "files":
        val_batches = bucket_by_token_budget(_load_pairs(data, "validation"), tokenizer, **batching)
        # A known length spares Keras' "ran out of data" warning and gives the progress bar its total.
        count = int(val_batches.reduce(np.int64(0), lambda n, _: n + 1))
        val_batches = val_batches.apply(tf.data.experimental.assert_cardinality(count)) if count else None

    previous_policy = keras.config.dtype_policy()
    policy = precision_policy(mixed_precision)
    try:
        keras.config.set_dtype_policy(policy)
        with strategy.scope():
            model = build_model(config)
            model.compile(optimizer=_optimizer(config), loss=tfm.LabelSmoothedCrossEntropy(label_smoothing),
                          metrics=[tfm.MaskedAccuracy()], jit_compile=bool(xla))
            model.optimizer.build(model.trainable_variables)  # so a restored backup finds its slots
        keras.config.set_dtype_policy("float32")
        shadow = build_model(config)  # float32 copy that writes weights-only checkpoints
    finally:
        keras.config.set_dtype_policy(previous_policy)
    logger.info("%s: %s parameters, %s, %s, %d replica(s)%s", name, f"{model.count_params():,}", policy,
                strategy.__class__.__name__, strategy.num_replicas_in_sync, ", XLA" if xla else "")

    initial_epoch = 0 if has_backup or not found else _resume_without_backup(run_dir, found[-1], model, shadow)

    fit_callbacks = [NaNGuard()]
    if is_chief:
        fit_callbacks += [HistoryCSV(os.path.join(run_dir, HISTORY_FILE)),
                          EpochCheckpoint(os.path.join(run_dir, CHECKPOINT_DIR), keep, shadow)]
        if importlib.util.find_spec("tensorboard") is not None:  # tf.summary needs the tensorboard package
            fit_callbacks.append(keras.callbacks.TensorBoard(os.path.join(run_dir, LOG_DIR), write_graph=False))
        else:
            logger.info("no TensorBoard logs: the tensorboard package is not installed (pip install tensorboard)")
    fit_callbacks += list(callbacks)
    # Last, so a kill between callbacks repeats an epoch rather than losing its row or checkpoint.
    # Kept after fit: rerunning a finished run finds its epoch and optimizer state.
    fit_callbacks.append(keras.callbacks.BackupAndRestore(backup_dir, double_checkpoint=True, delete_checkpoint=False))

    fit_scope = contextlib.nullcontext()
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        fit_scope = _multi_worker_fit_scope(model, strategy, train_batches)
    with fit_scope, warnings.catch_warnings():
        # An epoch is one pass over shuffled buckets, whose batch count Keras cannot know ahead;
        # its "input ran out of data" warning at the end of the first epoch is expected.
        warnings.filterwarnings("ignore", message="Your input ran out of data")
        history = model.fit(train_batches, epochs=int(epochs), steps_per_epoch=steps_per_epoch,
                            validation_data=val_batches, callbacks=fit_callbacks, initial_epoch=initial_epoch,
                            shuffle=False, verbose=verbose)  # the dataset shuffles itself
    return TrainResult(model=model, tokenizer=tokenizer, config=config, history=dict(history.history),
                       initial_epoch=done_before, epochs=done_before + len(history.history.get("loss", [])),
                       run_dir=run_dir)


def _multi_worker_fit_scope(model, strategy, batches):
    """Works around Keras 3 `fit` under `MultiWorkerMirroredStrategy` (keras-team/keras#20585).

    Keras 3.15's TensorFlow trainer fails there twice: before training it
    `strategy.reduce`s one distributed input batch (which the multi-worker strategy
    cannot do for a nested int batch), and each step reduces the scalar logs with
    `axis=0` (invalid for scalars). Here the compiled loss and metrics are built on
    one local batch instead, the model forgets the strategy it was built under (so
    Keras skips the first step), the train / test functions are replaced by ones
    that average the scalar logs over the workers, and `fit` runs inside
    `strategy.scope()`, where Keras finds the strategy for the dataset.
    """
    import tensorflow as tf

    (source_ids, target_in), target_out = next(iter(batches.take(1)))
    with strategy.scope():
        logits = model((source_ids, target_in), training=False)
        model.compute_loss(x=(source_ids, target_in), y=target_out, y_pred=logits)
        model.compute_metrics((source_ids, target_in), target_out, logits)
        model.reset_metrics()

    def make(step):
        def one_step(data):
            logs = strategy.run(step, args=(data,))  # per replica: {name: scalar}
            return {name: strategy.reduce("MEAN", value, axis=None) for name, value in logs.items()}

        one_step = tf.function(one_step, reduce_retracing=True, jit_compile=model.jit_compile)
        return lambda iterator: one_step(next(iterator))

    model._distribute_strategy = None
    model.train_function = make(model.train_step)
    model.test_function = make(model.test_step)
    return strategy.scope()


def _backup_epoch(backup_dir):
    """Epochs finished according to a BackupAndRestore folder (0 when empty)."""
    try:
        with open(os.path.join(backup_dir, "training_metadata.json")) as f:
            return int(json.load(f)["epoch"])
    except (OSError, ValueError, KeyError):
        return 0


def _resume_without_backup(run_dir, checkpoint, model, shadow):
    """The backup is gone (deleted by hand) but epoch checkpoints exist: continue from the newest.

    The weights come from the checkpoint; Adam's moments restart, and the step
    counter is set from history.csv so the learning-rate schedule continues.
    Returns the epoch to start at.
    """
    epoch, path = checkpoint
    shadow.load_weights(path)
    model.set_weights(shadow.get_weights())
    rows = [row for row in _read_rows(os.path.join(run_dir, HISTORY_FILE)) if int(row["epoch"]) == epoch - 1]
    iterations = int(float(rows[-1]["iterations"])) if rows and rows[-1].get("iterations") else 0
    model.optimizer.iterations.assign(iterations)
    logger.warning("no training state in %s: continuing from %s with fresh optimizer moments at step %d",
                   os.path.join(run_dir, BACKUP_DIR), os.path.basename(path), iterations)
    return epoch


# Command line ---------------------------------------------------------------
def _setup_logging():
    if not logging.getLogger().handlers and not logger.handlers:
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    logging.getLogger("tfm").setLevel(logging.INFO)


def train_command(args):
    """`tfm train`: the CLI arguments (see `tfm.cli._add_train`) mapped onto `train`."""
    _setup_logging()
    config = make_config(args.preset, args.model, overrides=args.set, vocab_size=args.vocab_size,
                         max_length=args.max_length, tokens_per_batch=args.tokens_per_batch)
    preset = TransformerConfig.preset(args.preset)
    if args.model == "transformer":
        tokens_per_batch, max_length = config.tokens_per_batch, config.max_length
    else:  # the preset's data settings serve every model
        tokens_per_batch = args.tokens_per_batch or preset.tokens_per_batch
        max_length = args.max_length or preset.max_length
    try:
        result = train(config, args.dataset, output=args.output, epochs=args.epochs,
                       steps_per_epoch=args.steps_per_epoch, strategy=args.strategy,
                       mixed_precision=args.mixed_precision, xla=args.xla, tokens_per_batch=tokens_per_batch,
                       max_length=max_length, source_lang=args.source_lang, target_lang=args.target_lang,
                       data_dir=args.data_dir, source_file=args.source_file, target_file=args.target_file,
                       keep_checkpoints=args.keep_checkpoints, seed=args.seed)
    except FloatingPointError as error:
        print(f"tfm train: error: {error}", flush=True)
        return 1
    history = read_history(result.run_dir)
    last = {k: v[-1] for k, v in history.items() if v and k != "epoch"}
    summary = ", ".join(f"{k} {last[k]:.4f}" for k in ("loss", "accuracy", "val_loss", "val_accuracy") if k in last)
    keep = read_run_config(result.run_dir).get("training", {}).get("keep_checkpoints", 5)
    print(f"{result.run_dir}: {result.epochs} epoch{'' if result.epochs == 1 else 's'} finished"
          f"{'; ' + summary if summary else ''}")
    print(f"next: tfm average --run {args.output} --last {min(keep, result.epochs)}, "
          f"then tfm evaluate --run {args.output}")
    return 0


def average_command(args):
    """`tfm average --run RUN --last N [--output FILE]`."""
    _setup_logging()
    path = average_checkpoints(args.run, last=args.last, output=args.output)
    print(f"wrote {path}")
    return 0
