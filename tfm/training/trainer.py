"""Training with `model.fit` under `tf.distribute` into a resumable run folder.

    tfm train --preset tiny --dataset multi30k --data-dir DIR --output runs/m30k --epochs 10
    tfm train --preset tiny --output runs/numbers --epochs 3 --set dropout=0.2   # generated data, offline
    TF_CONFIG='{"cluster": {"worker": ["host1:port", "host2:port"]}, "task": {"type": "worker", "index": 0}}' \\
        tfm train --strategy multiworker ...                                    # one command per worker

From Python (notebooks, tests):

    result = tfm.training.train(TransformerConfig.tiny(), "numbers", output="runs/numbers", epochs=3)
    model, tokenizer, run_info = tfm.runs.load_run("runs/numbers")

`train` reads as its steps: settings (validated before anything is written) ->
the run folder (fresh, or the same configuration resumed) -> strategy ->
tokenizer -> where the run stands -> datasets (outside the strategy) -> model,
optimizer and `compile` inside `strategy.scope()` -> `fit` with the run folder's
callbacks. The folder's files are `tfm.runs`' contract, where a run stands (and the
repair of a damaged backup) `tfm.runs.resume`'s; the callbacks are in `tfm.training.callbacks`, the
data side in `tfm.training.pipeline`, strategies and precision in `tfm.training.distribute`,
averaging in `tfm.training.averaging`.

Running the same command again on a RUN resumes it from the last finished epoch (a
run killed during an epoch loses that epoch only) and trains up to `epochs`. A
RUN made with a different model or data configuration is refused, naming the
fields that differ; the seed, strategy, precision, XLA switch, epochs and steps may
change between sessions. A resumed session checks what it continues from: the
backup against the config it was written under (`tfm.runs.verify_weights`), and
history.csv for a row per finished epoch (`tfm.runs.resume.verify_history`, which
rebuilds a damaged or cut-short one and says which epochs' numbers are lost). One
session at a time writes a RUN: it holds `RUN/.lock` (`tfm.runs.lock_run`) from
before it reads where the run stands until it returns, and a second one is refused
with the first one's PID. A write that fails (disk full, file
too large, read-only) raises `tfm.runs.WriteError` naming the file, and leaves the
files a later session trusts as they were.
"""

import contextlib
import dataclasses
import importlib.util
import json
import logging
import os
import shutil
import warnings

import keras
import tensorflow as tf

from tfm import __version__
from tfm.config.configs import DataConfig, TrainingConfig
from tfm.models.registry import as_config, build_model, model_name
from tfm.runs import folder as runs
from tfm.runs import resume
from tfm.training.callbacks import EpochCheckpoint, HistoryCSV, NaNGuard, RunBackup
from tfm.training.distribute import make_strategy, multi_worker_fit_scope, planned_role, precision_policy
from tfm.training.losses import LabelSmoothedCrossEntropy
from tfm.training.metrics import MaskedAccuracy
from tfm.training.pipeline import learn_tokenizer, load_pairs, make_datasets, whole_tokens
from tfm.training.schedules import build_optimizer

logger = logging.getLogger("tfm.training")


@dataclasses.dataclass
class TrainResult:
    """What `train` returns.

    Attributes:
        model: the trained `keras.Model` (weights of the last finished epoch).
        tokenizer: the run's `SubwordTokenizer`.
        config: the model config actually used (`vocab_size` = the tokenizer's).
        history: `{metric: [value per epoch]}` of the epochs run by this call
            (`read_history(run_dir)` has every epoch of the run).
        initial_epoch: epochs already finished when this call started (after restoring).
        epochs: epochs finished now, counted from the run folder on disk.
        run_dir: absolute path of the run folder.

    Args:
        model, tokenizer, config, history, initial_epoch, epochs, run_dir: the attributes.

    Example:
        See `train`, which returns one; its fields:

        >>> [field.name for field in dataclasses.fields(TrainResult)]
        ['model', 'tokenizer', 'config', 'history', 'initial_epoch', 'epochs', 'run_dir']
    """

    model: keras.Model
    tokenizer: object
    config: object
    history: dict
    initial_epoch: int
    epochs: int
    run_dir: str


# Step 1: settings ---------------------------------------------------------------
def _absolute(path):
    return None if path is None else os.path.abspath(os.path.expanduser(str(path)))


def resolve_settings(config, dataset="numbers", *, tokens_per_batch=None, max_length=None, source_lang=None,
                     target_lang=None, data_dir=None, source_file=None, target_file=None, keep_checkpoints=None,
                     seed=0, strategy="auto", mixed_precision=False, xla=False, steps_per_epoch=None,
                     train_sentences=None):
    """The `(model config, DataConfig, TrainingConfig)` of a `train` call, every value validated.

    Data and averaging settings default to the model config's (`max_length`,
    `tokens_per_batch`, `vocab_size`, `checkpoints_to_average`, `label_smoothing`),
    the same for the Transformer and the RNN baselines.

    Args:
        config: `TransformerConfig`, `Seq2SeqConfig` or a Transformer preset name.
        dataset, tokens_per_batch, max_length, train_sentences: as in `train`.
        source_lang, target_lang, data_dir, source_file, target_file: as in `train`.
        keep_checkpoints, seed, strategy, mixed_precision, xla, steps_per_epoch: as in `train`.

    Returns:
        `(config, DataConfig, TrainingConfig)`.

    Raises:
        ValueError: naming the bad value; nothing has been written yet.

    Example:
        >>> config, data, training = resolve_settings("tiny", "numbers", seed=3)
        >>> data.max_length, data.tokens_per_batch, training.keep_checkpoints, training.seed
        (64, 2048, 5, 3)
        >>> resolve_settings("tiny", max_length=128)
        Traceback (most recent call last):
        ...
        ValueError: max_length=128 exceeds the model's max_length=64; raise both (--max-length sets both)
    """
    config = as_config(config)
    if max_length is not None and int(max_length) > config.max_length:
        raise ValueError(f"max_length={max_length} exceeds the model's max_length={config.max_length}; "
                         f"raise both (--max-length sets both)")
    for path, flag in ((source_file, "--source-file"), (target_file, "--target-file")):
        if path is not None and os.path.isdir(os.path.expanduser(str(path))):
            raise ValueError(f"{flag} {path!r} is a folder; give the corpus file itself (plain text or .gz)")
    data = DataConfig(dataset=dataset, source_lang=source_lang, target_lang=target_lang,
                      data_dir=_absolute(data_dir), source_file=_absolute(source_file),
                      target_file=_absolute(target_file),
                      max_length=int(config.max_length if max_length is None else max_length),
                      tokens_per_batch=int(config.tokens_per_batch if tokens_per_batch is None else tokens_per_batch),
                      vocab_size=int(config.vocab_size), preprocess=getattr(config, "preprocess", None),
                      train_sentences=train_sentences)
    strategy_name = strategy if isinstance(strategy, str) else type(strategy).__name__
    training = TrainingConfig(
        seed=int(seed), label_smoothing=float(config.label_smoothing), strategy=strategy_name,
        rdrop_alpha=float(getattr(config, "rdrop_alpha", 0.0)),
        keep_checkpoints=int(config.checkpoints_to_average if keep_checkpoints is None else keep_checkpoints),
        mixed_precision=bool(mixed_precision), xla=bool(xla),
        steps_per_epoch=None if steps_per_epoch is None else int(steps_per_epoch))
    return config, data, training


# Steps 2-4: run folder and tokenizer ------------------------------------------------
def _existing_run(run_dir, requested):
    """The run's parsed config.json when `run_dir` holds one of the same configuration, else None."""
    if not os.path.isfile(os.path.join(run_dir, runs.CONFIG_FILE)):
        runs.validate_fresh_folder(run_dir)
        return None
    existing = runs.read_run_config(run_dir)
    differences = runs.config_differences(existing, requested)
    if differences:
        raise ValueError(
            f"{run_dir} was made with a different configuration; differing fields:\n  "
            + "\n  ".join(differences)
            + f"\nRepeat the settings of {os.path.join(run_dir, runs.CONFIG_FILE)} to resume it, "
              f"or train into a new --output folder")
    return existing


def _start_run(run_dir, config, data, training, is_chief):
    """A fresh run: learns the tokenizer, then writes tokenizer/ and config.json (chief only)."""
    if is_chief:
        runs.remove_leftovers(run_dir)
    pairs = load_pairs(data, "train")
    tokenizer = learn_tokenizer(pairs, config.vocab_size, training.seed, whole_tokens(data.dataset, pairs))
    config = dataclasses.replace(config, vocab_size=tokenizer.vocab_size)
    data = dataclasses.replace(data, vocab_size=tokenizer.vocab_size)
    if is_chief:
        runs.make_folder(run_dir)
        tmp = os.path.join(run_dir, f".tmp{os.getpid()}_{runs.TOKENIZER_DIR}")
        try:
            tokenizer.save(tmp)
        except OSError as error:
            shutil.rmtree(tmp, ignore_errors=True)
            raise runs.WriteError(error.errno, error.strerror, os.path.join(run_dir, runs.TOKENIZER_DIR)) from None
        shutil.rmtree(os.path.join(run_dir, runs.TOKENIZER_DIR), ignore_errors=True)
        os.replace(tmp, os.path.join(run_dir, runs.TOKENIZER_DIR))
        runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE),
                               runs.run_record(model_name(config), config, data, training))
    logger.info("vocabulary: %d subwords learned from the training split", tokenizer.vocab_size)
    return config, tokenizer


# Steps 6-7: datasets and the compiled model --------------------------------------------
def compile_model(config, strategy, training):
    """`(model, shadow)`: the model compiled under `strategy` and the precision policy, and a
    float32 copy that writes weights-only checkpoints.

    Args:
        config: the model config.
        strategy: a `tf.distribute.Strategy`.
        training: `TrainingConfig` (precision, XLA, label smoothing, R-Drop).

    Returns:
        `(model, shadow)`.

    Example:
        >>> config, _, training = resolve_settings("tiny")
        >>> model, shadow = compile_model(config, tf.distribute.get_strategy(), training)
        >>> type(model.loss).__name__, shadow.dtype_policy.name
        ('LabelSmoothedCrossEntropy', 'float32')
    """
    previous_policy = keras.config.dtype_policy()
    try:
        keras.config.set_dtype_policy(precision_policy(training.mixed_precision))
        with strategy.scope():
            model = build_model(config)
            model.compile(optimizer=build_optimizer(config),
                          loss=LabelSmoothedCrossEntropy(training.label_smoothing,
                                                             rdrop_alpha=training.rdrop_alpha),
                          metrics=[MaskedAccuracy()], jit_compile=training.xla)
            model.optimizer.build(model.trainable_variables)  # so a restored backup finds its slots
        keras.config.set_dtype_policy("float32")
        shadow = build_model(config)
    finally:
        keras.config.set_dtype_policy(previous_policy)
    return model, shadow


def _run_callbacks(run_dir, backup_dir, training, shadow, is_chief, extra):
    fit_callbacks = [NaNGuard()]
    if is_chief:
        fit_callbacks += [HistoryCSV(os.path.join(run_dir, runs.HISTORY_FILE)),
                          EpochCheckpoint(os.path.join(run_dir, runs.CHECKPOINT_DIR), training.keep_checkpoints,
                                          shadow)]
        if importlib.util.find_spec("tensorboard") is not None:  # tf.summary needs the tensorboard package
            fit_callbacks.append(keras.callbacks.TensorBoard(os.path.join(run_dir, runs.LOG_DIR), write_graph=False))
        else:
            logger.info("no TensorBoard logs: the tensorboard package is not installed (pip install tensorboard)")
    fit_callbacks += list(extra)
    # Last, so a kill between callbacks repeats an epoch rather than losing its row or checkpoint.
    # Kept after fit: rerunning a finished run finds its epoch and optimizer state.
    fit_callbacks.append(RunBackup(backup_dir))
    return fit_callbacks


# Step 8: train ----------------------------------------------------------------------
def train(config="tiny", dataset="numbers", *, output, epochs=10, steps_per_epoch=None, strategy="auto",
          mixed_precision=False, xla=False, tokens_per_batch=None, max_length=None, source_lang=None,
          target_lang=None, data_dir=None, source_file=None, target_file=None, keep_checkpoints=None, seed=0,
          validation=True, verbose="auto", callbacks=(), worker_timeout=None, train_sentences=None):
    """Trains a model into the run folder `output`, or resumes it there.

    Args:
        config: `TransformerConfig`, `Seq2SeqConfig` or a Transformer preset name.
            Its `vocab_size` is the subword vocabulary to learn (capped, with a
            warning, at what the training text allows; the config used then has the
            tokenizer's size).
        dataset: a name of `tfm.data.load_dataset` ("numbers", "reverse", "copy",
            "multi30k", a TFDS name, or "files" with `source_file` / `target_file`).
        output: str. The run folder (see `tfm.runs`); resumed if it exists.
        epochs: int. Epochs to reach (a resumed run trains the rest).
        steps_per_epoch: int or None. Batches per epoch (the data then repeats);
            None = one pass over the training split.
        strategy: "auto", "default", "mirrored", "multiworker" or a
            `tf.distribute.Strategy` (see `tfm.training.distribute.make_strategy`).
        mixed_precision: bool. `mixed_float16` on a GPU, `mixed_bfloat16` on a CPU.
        xla: bool. `jit_compile` the train step; batches are then padded to their
            bucket's bound, so XLA compiles one program per bucket, not per shape.
        tokens_per_batch: int or None. Token budget per side per batch (§5.1);
            defaults to the config's.
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
        worker_timeout: float or None. "multiworker": seconds to wait for the
            other tasks of TF_CONFIG's cluster (None: `$TFM_WORKER_TIMEOUT`, else 300).
        train_sentences: int or None. Train (and learn the vocabulary) on the first
            this many training pairs only, for learning curves; None = all of them.

    Returns:
        `TrainResult`.

    Raises:
        ValueError: a RUN made with a different configuration (the differing fields
            are named), another format version, or bad settings (refused before
            anything is written).
        FileExistsError: `output` exists and is not a run folder, or is a run whose
            config.json is gone.
        NotADirectoryError: `output` is a file, a symbolic link loop or a dangling link.
        tfm.runs.RunInUseError: another process trains into `output` (its PID named).
        tfm.runs.WriteError: a file could not be written (named, with the cause);
            rerunning resumes from what was written whole.
        TimeoutError: "multiworker": the cluster did not assemble in time.
        FloatingPointError: the loss became NaN or infinite.

    Example:
        A one-layer model on 100 number pairs, one step, into a temporary folder (a few seconds):

        >>> import tempfile
        >>> from tfm.config import TransformerConfig
        >>> from tfm.runs import load_run, read_history
        >>> tmp = tempfile.TemporaryDirectory()
        >>> config = TransformerConfig.tiny(num_layers=1, d_model=16, num_heads=2, d_ff=32, vocab_size=60)
        >>> result = train(config, "numbers", output=os.path.join(tmp.name, "run"), epochs=1, steps_per_epoch=1,
        ...                train_sentences=100, validation=False, verbose=0)
        >>> result.epochs, sorted(os.listdir(os.path.join(result.run_dir, "checkpoints")))
        (1, ['epoch_001.weights.h5'])
        >>> read_history(result.run_dir)["epoch"]
        [0]
        >>> model, tokenizer, info = load_run(result.run_dir)   # what tfm translate / evaluate read

        Real runs, as the CLI starts them (`tfm train ...`):

            train("base", "wmt14_translate/de-en", output="runs/base", source_lang="en", epochs=100,
                  steps_per_epoch=1000, mixed_precision=True)
            train(TransformerConfig.m30k_small(), "multi30k", output="runs/m30k", epochs=40)
    """
    if int(epochs) < 1:
        raise ValueError(f"epochs={epochs}: train at least 1 epoch")
    config, data, training = resolve_settings(
        config, dataset, tokens_per_batch=tokens_per_batch, max_length=max_length, source_lang=source_lang,
        target_lang=target_lang, data_dir=data_dir, source_file=source_file, target_file=target_file,
        keep_checkpoints=keep_checkpoints, seed=seed, strategy=strategy, mixed_precision=mixed_precision, xla=xla,
        steps_per_epoch=steps_per_epoch, train_sentences=train_sentences)
    name = model_name(config)
    run_dir = os.path.abspath(output)
    logger.info("tfm %s: %s %s", __version__, name, json.dumps(config.to_dict(), sort_keys=True))
    logger.info("data: %s", json.dumps(data.to_dict(), sort_keys=True))
    requested = runs.run_record(name, config, data, training)
    _existing_run(run_dir, requested)  # refused here, before waiting for a lock or a cluster
    is_chief, worker = planned_role(strategy)
    with runs.lock_run(run_dir if is_chief else os.path.join(run_dir, runs.WORKERS_DIR, worker), output):
        if is_chief:
            runs.remove_temporaries(run_dir)
        return _train_session(run_dir, config, data, training, requested, strategy, epochs, validation, verbose,
                              callbacks, worker_timeout)


def _train_session(run_dir, config, data, training, requested, strategy, epochs, validation, verbose, callbacks,
                   worker_timeout):
    """`train` from the strategy on, with the run folder locked."""
    name = model_name(config)
    existing = _existing_run(run_dir, requested)  # again: another session may have started it meanwhile

    # The strategy first: MultiWorkerMirroredStrategy must exist before other TensorFlow ops.
    strategy = make_strategy(strategy, worker_timeout=worker_timeout)
    is_chief, worker = planned_role(strategy)
    keras.utils.set_random_seed(training.seed)
    if existing is None:
        config, tokenizer = _start_run(run_dir, config, data, training, is_chief)
    else:
        config = runs.model_config_from_info(existing)
        tokenizer = runs.load_tokenizer(run_dir, config)
        logger.info("resuming %s (vocabulary of %d subwords)", run_dir, tokenizer.vocab_size)

    backup_dir = (os.path.join(run_dir, runs.BACKUP_DIR) if is_chief
                  else os.path.join(run_dir, runs.WORKERS_DIR, worker, runs.BACKUP_DIR))
    standing = (resume.where_run_stands(run_dir, backup_dir) if existing is not None
                else resume.Standing(epochs=0, from_backup=False, checkpoint=None))
    done_before = standing.epochs
    if standing.from_backup:  # Keras restores it unchecked: refused here when made under another architecture
        runs.verify_weights(os.path.join(backup_dir, resume.BACKUP_WEIGHTS), config,
                            config_file=os.path.join(run_dir, runs.CONFIG_FILE))
    if existing is not None and is_chief:
        resume.verify_history(run_dir, done_before)  # a row per finished epoch before this session adds to it
    if done_before >= epochs:
        logger.info("%s has finished %d epochs already (--epochs %d): nothing to train", run_dir, done_before, epochs)
        model = runs.load_run(run_dir, checkpoint="latest")[0] if standing.checkpoint else build_model(config)
        return TrainResult(model=model, tokenizer=tokenizer, config=config, history={}, initial_epoch=done_before,
                           epochs=done_before, run_dir=run_dir)
    if done_before:
        logger.info("resuming after epoch %d, from %s", done_before,
                    backup_dir if standing.from_backup else os.path.basename(standing.checkpoint[1]))
        training = dataclasses.replace(training, seed=resume.stream_seed(training.seed, done_before))
        keras.utils.set_random_seed(training.seed)

    train_batches, val_batches = make_datasets(data, tokenizer, training, strategy.num_replicas_in_sync, validation)
    model, shadow = compile_model(config, strategy, training)
    logger.info("%s: %s parameters, %s, %s, %d replica(s)%s", name, f"{model.count_params():,}",
                precision_policy(training.mixed_precision), strategy.__class__.__name__,
                strategy.num_replicas_in_sync, ", XLA" if training.xla else "")
    initial_epoch = 0
    if standing.checkpoint and not standing.from_backup:
        initial_epoch = resume.restore_from_checkpoint(run_dir, standing.checkpoint, model, shadow)
    fit_callbacks = _run_callbacks(run_dir, backup_dir, training, shadow, is_chief, callbacks)

    fit_scope = contextlib.nullcontext()
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        fit_scope = multi_worker_fit_scope(model, strategy, train_batches)
    with fit_scope, warnings.catch_warnings():
        # An epoch is one pass over shuffled buckets, whose batch count Keras cannot know ahead;
        # its "input ran out of data" warning at the end of the first epoch is expected.
        warnings.filterwarnings("ignore", message="Your input ran out of data")
        history = model.fit(train_batches, epochs=int(epochs), steps_per_epoch=training.steps_per_epoch,
                            validation_data=val_batches, callbacks=fit_callbacks, initial_epoch=initial_epoch,
                            shuffle=False, verbose=verbose)  # the dataset shuffles itself
    run_epochs = len(history.history.get("loss", []))
    finished = resume.epochs_on_disk(run_dir) if is_chief else done_before + run_epochs
    return TrainResult(model=model, tokenizer=tokenizer, config=config, history=dict(history.history),
                       initial_epoch=done_before, epochs=finished, run_dir=run_dir)
