"""Training with `model.fit` under `tf.distribute` into a resumable run folder.

    tfm train --preset tiny --dataset multi30k --data-dir DIR --output runs/m30k --epochs 10
    tfm train --preset tiny --output runs/numbers --epochs 3 --set dropout=0.2   # generated data, offline
    TF_CONFIG='{"cluster": {"worker": ["host1:port", "host2:port"]}, "task": {"type": "worker", "index": 0}}' \\
        tfm train --strategy multiworker ...                                    # one command per worker

From Python (notebooks, tests):

    result = tfm.train("tiny", "numbers", output="runs/numbers", epochs=3)   # Recipe.preset("tiny") on numbers
    model = tfm.Transformer.from_preset("runs/numbers")                      # its trained weights

`train` reads as its steps: the recipe (every part validated before anything is written) ->
the run folder (fresh, or the same configuration resumed) -> strategy ->
tokenizer -> where the run stands -> datasets (outside the strategy) -> model,
optimizer and `compile` inside `strategy.scope()` -> `fit` with the run folder's
callbacks. The folder's files are `tfm.runs`' contract, where a run stands (and the
repair of a damaged backup) `tfm.runs.resume`'s; the callbacks are in `tfm.training.callbacks`, the
data side in `tfm.training.pipeline`, strategies and precision in `tfm.training.distribute`,
averaging in `tfm.training.averaging`.

Running the same command again on a RUN resumes it from the last finished epoch (a
run killed during an epoch loses that epoch only) and trains up to `epochs`, exactly as the uninterrupted run
would have: the backup holds the weights, the optimizer's moments and step and every dropout layer's random state,
and epoch `e`'s batches are drawn as the uninterrupted run's epoch `e` (`continue_batches`), so the history and
weights come out the same (on the same kind of machine and number of devices: docs/guides/training.md). A
RUN made with a different model, data or training recipe is refused, naming the
fields that differ (`tfm.runs.config_differences`); the seed, strategy, precision, XLA switch, epochs, steps,
checkpoints kept, validation and the decoding part may change between sessions. A resumed session checks what it
continues from: the backup against the config it was written under (`tfm.runs.verify_weights`), and
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
import logging
import os
import shutil
import warnings

import keras
import tensorflow as tf

from tfm import __version__, runs
from tfm.config import DataConfig, Recipe, Seq2SeqConfig, TrainingConfig, TransformerConfig
from tfm.data.datasets import DATASET_NAMES
from tfm.models import model_class
from tfm.runs import resume
from tfm.training.callbacks import EpochCheckpoint, EpochProgressBar, HistoryCSV, NaNGuard, RunBackup, restore_backup
from tfm.training.distribute import make_strategy, multi_worker_fit_scope, planned_role, precision_policy
from tfm.training.losses import LabelSmoothedCrossEntropy
from tfm.training.metrics import MaskedAccuracy
from tfm.training.pipeline import count_batches, learn_tokenizer, load_pairs, make_datasets, whole_tokens
from tfm.training.schedules import build_optimizer

logger = logging.getLogger("tfm.training")


@dataclasses.dataclass
class TrainResult:
    """What `train` returns.

    Attributes:
        model: the trained `keras.Model` (weights of the last finished epoch).
        tokenizer: the run's `SubwordTokenizer`.
        recipe: the `Recipe` actually used (its model's `vocab_size` = the tokenizer's).
        history: `{metric: [value per epoch]}` of the epochs run by this call
            (`read_history(run_dir)` has every epoch of the run).
        initial_epoch: epochs already finished when this call started (after restoring).
        epochs: epochs finished now, counted from the run folder on disk.
        run_dir: absolute path of the run folder.

    Args:
        model, tokenizer, recipe, history, initial_epoch, epochs, run_dir: the attributes.

    Example:
        See `train`, which returns one; its fields:

        >>> [field.name for field in dataclasses.fields(TrainResult)]
        ['model', 'tokenizer', 'recipe', 'history', 'initial_epoch', 'epochs', 'run_dir']
    """

    model: keras.Model
    tokenizer: object
    recipe: Recipe
    history: dict
    initial_epoch: int
    epochs: int
    run_dir: str


# Step 1: settings ---------------------------------------------------------------
def _absolute(path):
    return None if path is None else os.path.abspath(os.path.expanduser(str(path)))


def resolve_recipe(model="tiny", data=None, training=None):
    """The `Recipe` of a `train` call, every part validated, the dataset name and paths checked.

    Args:
        model, data, training: as in `train`.

    Returns:
        `Recipe`, with the data's folder and files as absolute paths.

    Raises:
        ValueError: naming the bad value; nothing has been written yet.
        TypeError: a part of the wrong type.

    Example:
        >>> recipe = resolve_recipe("tiny", "numbers", TrainingConfig(seed=3, tokens_per_batch=2048))
        >>> recipe.data.max_pair_length, recipe.training.tokens_per_batch, recipe.training.seed
        (64, 2048, 3)
        >>> recipe.training.keep_checkpoints   # None asked: as many as the recipe averages
        5
        >>> resolve_recipe("tiny", "wmt99")
        Traceback (most recent call last):
        ...
        ValueError: unknown dataset name='wmt99'; valid names: [...]
    """
    if isinstance(model, str):
        recipe = Recipe.preset(model)
    elif isinstance(model, Recipe):
        recipe = model
    elif isinstance(model, (TransformerConfig, Seq2SeqConfig)):
        recipe = Recipe.for_model(model)
    else:
        raise TypeError(f"model={model!r}: expected a preset name, a TransformerConfig, a Seq2SeqConfig or a Recipe")
    if isinstance(data, str):
        data = dataclasses.replace(recipe.data, dataset=data, source_file=None, target_file=None)
    elif data is None:
        data = recipe.data
    elif not isinstance(data, DataConfig):
        raise TypeError(f"data={data!r}: expected a dataset name or a DataConfig")
    if data.dataset not in DATASET_NAMES:
        raise ValueError(f"unknown dataset name={data.dataset!r}; valid names: {list(DATASET_NAMES)}")
    for path, flag in ((data.source_file, "--source-file"), (data.target_file, "--target-file")):
        if path is not None and os.path.isdir(os.path.expanduser(str(path))):
            raise ValueError(f"{flag} {path!r} is a folder; give the corpus file itself (plain text or .gz)")
    data = dataclasses.replace(data, data_dir=_absolute(data.data_dir), source_file=_absolute(data.source_file),
                               target_file=_absolute(data.target_file))
    if training is not None and not isinstance(training, TrainingConfig):
        raise TypeError(f"training={training!r}: expected a TrainingConfig")
    training = recipe.training if training is None else training
    if training.keep_checkpoints is None:  # as many as the recipe averages (§6.1: 5 base, 20 big)
        training = dataclasses.replace(training, keep_checkpoints=recipe.decoding.checkpoints_to_average)
    return dataclasses.replace(recipe, data=data, training=training)


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
            + f"\nRepeat the settings of {os.path.join(run_dir, runs.CONFIG_FILE)} to resume it (`tfm train "
              f"--resume` reads them from there), or train into a new --output folder")
    return existing


def _start_run(run_dir, recipe, is_chief):
    """A fresh run: learns the tokenizer, then writes tokenizer/ and config.json (chief only)."""
    if is_chief:
        runs.remove_leftovers(run_dir)
    pairs = load_pairs(recipe.data, "train")
    tokenizer = learn_tokenizer(pairs, recipe.data.subwords, recipe.training.seed,
                                whole_tokens(recipe.data.dataset, pairs))
    recipe = recipe.replace(vocab_size=tokenizer.vocab_size)
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
        runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE), runs.run_record(recipe))
    logger.info("vocabulary: %d subwords learned from the training split", tokenizer.vocab_size)
    return recipe, tokenizer


# Steps 6-7: datasets and the compiled model --------------------------------------------
def _model(config):
    """The built model of a model config (`tfm.models.model_class`)."""
    return model_class(config).from_preset(config)


def compile_model(recipe, strategy):
    """`(model, shadow)`: the recipe's model compiled under `strategy` and the precision policy, and a
    float32 copy that writes weights-only checkpoints.

    Args:
        recipe: the `Recipe` (its model, and its training: optimizer, precision, XLA, label smoothing, R-Drop).
        strategy: a `tf.distribute.Strategy`.

    Returns:
        `(model, shadow)`.

    Example:
        >>> model, shadow = compile_model(Recipe.preset("tiny"), tf.distribute.get_strategy())
        >>> type(model.loss).__name__, shadow.dtype_policy.name
        ('LabelSmoothedCrossEntropy', 'float32')
    """
    training = recipe.training
    previous_policy = keras.config.dtype_policy()
    try:
        keras.config.set_dtype_policy(precision_policy(training.mixed_precision))
        with strategy.scope():
            model = _model(recipe.model)
            model.compile(optimizer=build_optimizer(recipe),
                          loss=LabelSmoothedCrossEntropy(training.label_smoothing,
                                                             rdrop_alpha=training.rdrop_alpha),
                          metrics=[MaskedAccuracy()], jit_compile=training.xla)
            model.optimizer.build(model.trainable_variables)  # so a restored backup finds its slots
        keras.config.set_dtype_policy("float32")
        shadow = _model(recipe.model)
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
def train(model="tiny", data=None, training=None, *, output, epochs=10, strategy="auto", callbacks=(),
          verbose="auto", worker_timeout=None):
    """Trains a model into the run folder `output`, or resumes it there.

    Args:
        model: a preset name (`Recipe.preset(name)`: all four parts), a `Recipe`, or a `TransformerConfig` /
            `Seq2SeqConfig` alone (`Recipe.for_model`: the tiny recipe's other parts, learning the config's
            `vocab_size` subwords). The model's `vocab_size` becomes the tokenizer's (the subwords to learn are
            `data.subwords`, capped, with a warning, at what the training text allows).
        data: None (the recipe's), a dataset name of `tfm.data.load_dataset` ("numbers", "reverse", "copy",
            "multi30k", a TFDS name; the recipe's data with that dataset), or a `DataConfig`.
        training: None (the recipe's) or a `TrainingConfig` (§5, and the seed, precision, XLA, steps per
            epoch, checkpoints kept, validation).
        output: str. The run folder (see `tfm.runs`); resumed if it exists.
        epochs: int. Epochs to reach (a resumed run trains the rest).
        strategy: "auto", "default", "mirrored", "multiworker" or a
            `tf.distribute.Strategy` (see `tfm.training.distribute.make_strategy`).
        callbacks: more `keras.callbacks.Callback`s for `model.fit`, run after the
            run folder's own (history, checkpoints, TensorBoard) and before the
            backup, so one that sets `model.stop_training` ends the run cleanly.
        verbose: `model.fit`'s verbosity ("auto" = progress bar).
        worker_timeout: float or None. "multiworker": seconds to wait for the
            other tasks of TF_CONFIG's cluster (None: `$TFM_WORKER_TIMEOUT`, else 300).

    Returns:
        `TrainResult`.

    Raises:
        ValueError: a RUN made with a different configuration (the differing fields
            are named), another format version, or bad settings (an unknown dataset included: refused
            before anything is written).
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
        >>> from tfm.runs import read_history
        >>> tmp = tempfile.TemporaryDirectory()
        >>> recipe = Recipe.preset("tiny", num_layers=1, d_model=16, num_heads=2, d_ff=32, subwords=60,
        ...                        train_sentences=100, steps_per_epoch=1, validation=False)
        >>> result = train(recipe, output=os.path.join(tmp.name, "run"), epochs=1, verbose=0)
        >>> result.epochs, sorted(os.listdir(os.path.join(result.run_dir, "checkpoints")))
        (1, ['epoch_001.weights.h5'])
        >>> read_history(result.run_dir)["epoch"]
        [0]
        >>> model = model_class(recipe.model).from_preset(result.run_dir)   # what tfm translate / evaluate read

        Real runs, as the CLI starts them (`tfm train ...`):

            train("base", DataConfig("wmt14_translate/de-en", source_lang="en", subwords=37000,
                  max_pair_length=256), TrainingConfig(steps_per_epoch=1000, mixed_precision=True),
                  output="runs/base", epochs=100)
            train("m30k_small", "multi30k", output="runs/m30k", epochs=40)
    """
    if int(epochs) < 1:
        raise ValueError(f"epochs={epochs}: train at least 1 epoch")
    recipe = resolve_recipe(model, data, training)
    run_dir = os.path.abspath(output)
    logger.info("tfm %s, %s (every setting: %s)", __version__, recipe.summary(),
                os.path.join(output, runs.CONFIG_FILE))
    requested = runs.run_record(recipe)
    _existing_run(run_dir, requested)  # refused here, before waiting for a lock or a cluster
    is_chief, worker = planned_role(strategy)
    created = is_chief and not os.path.lexists(run_dir)
    with runs.lock_run(run_dir if is_chief else os.path.join(run_dir, runs.WORKERS_DIR, worker), output):
        if is_chief:
            runs.remove_temporaries(run_dir)
        try:
            return _train_session(run_dir, recipe, requested, strategy, epochs, verbose, callbacks, worker_timeout)
        except BaseException:
            if created:  # a first session that failed before its config.json (no data, interrupted) leaves no folder
                _remove_unstarted(run_dir)
            raise


def _remove_unstarted(run_dir):
    """Removes `run_dir` when it holds nothing but the lock file and temporaries (what a first session that failed
    before its config.json leaves); a folder holding anything else is kept."""
    entries = os.listdir(run_dir) if os.path.isdir(run_dir) and not os.path.islink(run_dir) else [runs.CONFIG_FILE]
    if all(entry == runs.LOCK_FILE or runs.TEMPORARY.search(entry) for entry in entries):
        shutil.rmtree(run_dir, ignore_errors=True)


def _train_session(run_dir, recipe, requested, strategy, epochs, verbose, callbacks, worker_timeout):
    """`train` from the strategy on, with the run folder locked."""
    existing = _existing_run(run_dir, requested)  # again: another session may have started it meanwhile

    # The strategy first: MultiWorkerMirroredStrategy must exist before other TensorFlow ops.
    strategy = make_strategy(strategy, worker_timeout=worker_timeout)
    is_chief, worker = planned_role(strategy)
    keras.utils.set_random_seed(recipe.training.seed)
    if existing is None:
        recipe, tokenizer = _start_run(run_dir, recipe, is_chief)
    else:  # the model as it was trained (its vocabulary), this call's training part
        recipe = dataclasses.replace(recipe, model=Recipe.from_record(existing).model)
        tokenizer = runs.load_tokenizer(run_dir, recipe.model)
        logger.info("resuming %s (vocabulary of %d subwords)", run_dir, tokenizer.vocab_size)

    backup_dir = (os.path.join(run_dir, runs.BACKUP_DIR) if is_chief
                  else os.path.join(run_dir, runs.WORKERS_DIR, worker, runs.BACKUP_DIR))
    standing = (resume.where_run_stands(run_dir, backup_dir) if existing is not None
                else resume.Standing(epochs=0, from_backup=False, checkpoint=None))
    done_before = standing.epochs
    if standing.from_backup:  # Keras restores it unchecked: refused here when made under another architecture
        runs.verify_weights(os.path.join(backup_dir, resume.BACKUP_WEIGHTS), recipe.model,
                            config_file=os.path.join(run_dir, runs.CONFIG_FILE))
    if existing is not None and is_chief:
        resume.verify_history(run_dir, done_before)  # a row per finished epoch before this session adds to it
    if done_before >= epochs:
        logger.info("%s has finished %d epochs already (--epochs %d): nothing to train", run_dir, done_before, epochs)
        model = model_class(recipe.model).from_preset(run_dir if standing.checkpoint else recipe.model,
                                                      checkpoint="latest")
        return TrainResult(model=model, tokenizer=tokenizer, recipe=recipe, history={}, initial_epoch=done_before,
                           epochs=done_before, run_dir=run_dir)
    if done_before:
        logger.info("resuming after epoch %d, from %s", done_before,
                    backup_dir if standing.from_backup else os.path.basename(standing.checkpoint[1]))

    training = recipe.training
    train_batches, val_batches = make_datasets(recipe.data, tokenizer, training, strategy.num_replicas_in_sync)
    model, shadow = compile_model(recipe, strategy)
    logger.info("%s: %s parameters, %s, %s, %d replica(s)%s", recipe.model_name, f"{model.count_params():,}",
                precision_policy(training.mixed_precision), strategy.__class__.__name__,
                strategy.num_replicas_in_sync, ", XLA" if training.xla else "")
    initial_epoch = done_before
    if standing.from_backup:
        if not restore_backup(model, backup_dir):
            logger.warning("%s holds no random state (written by an older tfm): the epochs from %d on draw other "
                           "dropout masks than an uninterrupted run would", backup_dir, done_before + 1)
    elif standing.checkpoint:
        initial_epoch = restore_from_checkpoint(run_dir, standing.checkpoint, model, shadow)
    steps_done = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
    train_batches = continue_batches(train_batches, initial_epoch, steps_done, training)
    fit_callbacks = _run_callbacks(run_dir, backup_dir, training, shadow, is_chief, callbacks)
    if verbose:  # the progress bar's total from the first epoch on (the batches themselves untouched)
        steps = count_batches(recipe.data, tokenizer, training, strategy.num_replicas_in_sync)
        fit_callbacks.insert(0, EpochProgressBar(steps))

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
    return TrainResult(model=model, tokenizer=tokenizer, recipe=recipe, history=dict(history.history),
                       initial_epoch=done_before, epochs=finished, run_dir=run_dir)


def continue_batches(train_batches, epochs_done, steps_done, training):
    """The training batches of a session that starts after `epochs_done` finished epochs (`steps_done` optimizer
    steps), as the uninterrupted run would go on with them: what epoch `e` trains on is a function of the seed and
    `e` alone, never of how many epochs this process has run.

    The batches shuffle anew each pass (`reshuffle_each_iteration`): each pass draws the next order from the
    dataset's seed. `fit` starts a pass per epoch, so a session that starts at epoch `e` first draws the `e` orders
    the finished epochs used (an iterator made and dropped draws one and reads nothing). With `steps_per_epoch`,
    epochs run on through a repeated stream: the finished steps' batches are skipped.

    Args:
        train_batches: the `make_datasets` training batches (built with the run's seed, in this session).
        epochs_done: int. Epochs finished before this session (`model.fit`'s `initial_epoch`).
        steps_done: int. Optimizer steps taken so far (the restored `optimizer.iterations`).
        training: `TrainingConfig` (`steps_per_epoch`).

    Returns:
        The batches to give `model.fit`.

    Example:
        >>> from tfm.config import TrainingConfig
        >>> def shuffled():   # a dataset that reshuffles each pass, seeded
        ...     return tf.data.Dataset.range(6).shuffle(6, seed=1, reshuffle_each_iteration=True)
        >>> tf.random.set_seed(0)
        >>> straight = shuffled()
        >>> orders = [list(straight.as_numpy_iterator()) for _ in range(3)]   # epochs 0, 1, 2 in one session
        >>> tf.random.set_seed(0)
        >>> resumed = continue_batches(shuffled(), 2, 12, TrainingConfig())   # a new session after 2 epochs
        >>> list(resumed.as_numpy_iterator()) == orders[2]
        True
    """
    if training.steps_per_epoch:
        return train_batches.skip(int(steps_done))
    for _ in range(int(epochs_done)):
        iter(train_batches)
    return train_batches


def restore_from_checkpoint(run_dir, checkpoint, model, shadow):
    """Without a backup, continues from `checkpoint` (`(epoch, path)`, `tfm.runs.Standing.checkpoint`): the weights
    are read through `shadow` (a float32 model of the same config) into `model` (compiled, its optimizer built);
    Adam's moments restart, and the step counter comes from history.csv so the learning-rate schedule goes on.
    Returns the epoch to start at (`model.fit`'s `initial_epoch`).

    Example:
        >>> run, layers = tempfile.mkdtemp(), lambda: [keras.Input((3,)), keras.layers.Dense(2)]
        >>> model, shadow = keras.Sequential(layers()), keras.Sequential(layers())
        >>> model.compile(optimizer="adam")
        >>> model.optimizer.build(model.trainable_variables)
        >>> _ = runs.save_weights(shadow, os.path.join(run, "epoch_002.weights.h5"))
        >>> runs.write_rows(os.path.join(run, runs.HISTORY_FILE), [{"epoch": 0, "iterations": 5},
        ...                                                    {"epoch": 1, "iterations": 10}])
        >>> restore_from_checkpoint(run, (2, os.path.join(run, "epoch_002.weights.h5")), model, shadow)
        2
        >>> int(model.optimizer.iterations)   # the schedule goes on from step 10
        10
    """
    epoch, path = checkpoint
    runs.load_weights(shadow, path, config_file=os.path.join(run_dir, runs.CONFIG_FILE))
    model.set_weights(shadow.get_weights())
    try:
        rows = [row for row in runs.read_rows(os.path.join(run_dir, runs.HISTORY_FILE))
                if int(row["epoch"]) == epoch - 1]
    except ValueError:  # a damaged history.csv: verify_history sets it aside before training
        rows = []
    try:
        iterations = int(float(rows[-1]["iterations"]))
    except (IndexError, KeyError, TypeError, ValueError):
        iterations = None
    model.optimizer.iterations.assign(iterations or 0)
    logger.warning("no training state in %s: continuing from %s with fresh optimizer moments and dropout draws at "
                   "step %s (the run goes on, but no longer as the uninterrupted one would)",
                   os.path.join(run_dir, runs.BACKUP_DIR), os.path.basename(path),
                   iterations if iterations is not None else
                   f"0 ({runs.HISTORY_FILE} records no step count for epoch {epoch}: the learning-rate schedule "
                   f"starts again, warm-up included)")
    return epoch
