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
the same folder, fsync, rename; `tfm.runs.atomic`), so a killed process or a full disk never leaves half a
file where a later session would trust it; a write that fails raises `WriteError`, which names the file and
the cause (disk full, file too large, read-only). Every path a command writes (train's, average's and the
exports' `--output`, evaluate's `hyps/`) is checked before any work by one rule (`tfm.runs.paths`:
`validate_output_file`, `validate_output_folder`): no folder above it is a file, a link loop or a dangling
link, it can be written, and it is never one of a run's own files (`describe_run_file`).

This module loads a run (`load_run`, `load_tokenizer`, `build_float32_model`); the rest of the contract lives
beside it, and this module re-exports its names, so `from tfm.runs.folder import X` works for all of them:

    record.py        config.json: `read_run_config`, `model_config_from_info`, `run_record`, `config_differences`
    checkpoints.py   `epoch_checkpoints`, `latest_checkpoint`, `resolve_checkpoint` (what --checkpoint means)
    lifecycle.py     a new run's folder checked and cleaned, made, and locked: one `tfm train` at a time
                     writes a folder (`lock_run`)
    layout.py, paths.py, weights.py, atomic.py, history.py    names, output paths, weights files, writes,
                     history.csv

What a run has finished, and how a session resumes it (a damaged backup included), is `tfm.runs.resume`'s.
A damaged file is refused in one line that names it and says what to do: config.json that is not JSON,
is a JSON value of another type than an object, or holds settings of the wrong type or value
(`read_run_config`); a weights file that is cut short, garbage or misnamed, was written under another
architecture, or does not fit the config's shapes (`load_weights`, which blames the config then).
"""

import json
import logging
import os

import keras

from tfm.data.subword_tokenizer import CONFIG_FILE as TOKENIZER_CONFIG_FILE
from tfm.data.subword_tokenizer import MODEL_FILE, VOCAB_FILE, SubwordTokenizer
from tfm.models.registry import build_model
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
from tfm.runs.checkpoints import (  # noqa: F401  (tfm.runs' API)
    epoch_checkpoints,
    latest_checkpoint,
    resolve_checkpoint,
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
from tfm.runs.lifecycle import (  # noqa: F401  (tfm.runs' API)
    RunInUseError,
    lock_run,
    make_folder,
    remove_leftovers,
    remove_temporaries,
    validate_fresh_folder,
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
from tfm.runs.record import (  # noqa: F401  (tfm.runs' API)
    config_differences,
    data_config_from_info,
    model_config_from_info,
    read_run_config,
    run_record,
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

logger = logging.getLogger("tfm.runs")


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
