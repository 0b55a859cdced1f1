"""Checkpoint averaging (Vaswani et al., 2017, §6.1).

    tfm average --run runs/m30k                 # the run's checkpoints_to_average (5 base, 20 big)
    tfm.training.averaging.average_checkpoints("runs/m30k", last=5)

"For the base models, we used a single model obtained by averaging the last 5
checkpoints, which were written at 10-minute intervals. For the big models, we
averaged the last 20 checkpoints." tfm writes one checkpoint per epoch.
"""

import contextlib
import logging
import os

import keras
import numpy as np

from tfm import runs
from tfm.config import Recipe
from tfm.models.families import model_class

logger = logging.getLogger("tfm.training.averaging")


def average_checkpoints(run_dir, last=None, output=None, epochs=None):
    """Averages the weights of the last `last` epoch checkpoints (§6.1), or of the `epochs` named.

    Args:
        run_dir: the run folder.
        last: int or None. How many of the newest `epoch_NNN.weights.h5` to average.
            None: the run's `decoding.checkpoints_to_average` (5 base, 20 big), or every
            checkpoint there is when the run has fewer (a warning says so).
        output: str or None. Where to write; defaults to
            `RUN/checkpoints/averaged.weights.h5` (what `from_preset(run)` prefers). Checked
            before any work (`tfm.runs.validate_output_file`): never one of a
            run's own files (an epoch checkpoint, config.json, ...). `<output>.averaging.json`
            beside it lists the epochs averaged (`tfm.runs.averaging_record`).
        epochs: list of int or None. Average these epochs' checkpoints instead of the
            last ones (e.g. the best on validation); `last` must then be None.

    Returns:
        str: the path written.

    Raises:
        ValueError: `last` asks for more checkpoints than the run has (says how many),
            a checkpoint is damaged (named), or `output` is one of a run's own files or
            does not end in .weights.h5.
        NotADirectoryError: a folder above `output` is a file, a link loop or a dangling link.
        tfm.runs.WriteError: `output` cannot be written (named, with the cause); a file
            already there is kept as it was.

    Example:
        A run folder of three epochs of untrained weights, made by hand:

        >>> import tempfile
        >>> recipe = Recipe.preset("tiny", num_layers=1, d_model=16, num_heads=2, d_ff=32, vocab_size=40)
        >>> run = tempfile.mkdtemp()
        >>> runs.write_json_atomic(os.path.join(run, runs.CONFIG_FILE), runs.run_record(recipe))
        >>> os.makedirs(os.path.join(run, runs.CHECKPOINT_DIR))
        >>> for epoch in (1, 2, 3):
        ...     path = os.path.join(run, runs.CHECKPOINT_DIR, f"epoch_{epoch:03d}.weights.h5")
        ...     _ = runs.save_weights(model_class(recipe.model).from_preset(recipe.model), path)
        >>> os.path.basename(average_checkpoints(run, last=2))     # what from_preset(run) then prefers
        'averaged.weights.h5'
        >>> import json
        >>> json.load(open(os.path.join(run, "checkpoints", "averaged.weights.h5.averaging.json")))["epochs"]
        [2, 3]
        >>> average_checkpoints(run, last=2, output=os.path.join(run, "checkpoints", "epoch_003.weights.h5"))
        Traceback (most recent call last):
        ...
        ValueError: --output '...epoch_003.weights.h5' is epoch 3's checkpoint of the run '...'; tfm never ...
    """
    run_dir = os.path.abspath(run_dir)
    recipe = Recipe.from_record(runs.read_run_config(run_dir))
    folder = os.path.join(run_dir, runs.CHECKPOINT_DIR)
    default = os.path.join(folder, runs.AVERAGED)
    output = os.fspath(output) if output is not None else default
    target = runs.validate_output_file(output, suffix=".weights.h5")  # before any work, as every output path
    record = runs.validate_output_file(runs.averaging_record(target), "--output's record")
    found = runs.epoch_checkpoints(run_dir)
    if epochs is not None:
        if last is not None:
            raise ValueError(f"last={last} and epochs={list(epochs)}: give one of them")
        on_disk = dict(found)
        missing = sorted(set(int(e) for e in epochs) - set(on_disk))
        if missing or not epochs:
            raise ValueError(f"epochs={list(epochs)}: {folder} has no checkpoint of epoch(s) {missing}; "
                             f"it has {sorted(on_disk)}" if missing else "epochs=[]: name at least one epoch")
        found = [(epoch, on_disk[epoch]) for epoch in sorted(set(int(e) for e in epochs))]
        last = len(found)
    if last is None:
        last = recipe.decoding.checkpoints_to_average
        if 0 < len(found) < last:
            logger.warning("the run config averages %d checkpoints but %s has %d: averaging those %d",
                           last, folder, len(found), len(found))
            last = len(found)
    if int(last) < 1:
        raise ValueError(f"last={last}: average at least 1 checkpoint")
    if len(found) < last:
        keep = recipe.training.keep_checkpoints
        raise ValueError(
            f"cannot average the last {last} checkpoints: {folder} has {len(found)}"
            f"{' (' + ', '.join(os.path.basename(p) for _, p in found) + ')' if found else ''}; "
            f"train more epochs or ask for --last {max(len(found), 1)}"
            + (f" (the run keeps its last {keep})" if keep and keep < last else ""))
    chosen = found[-int(last):]
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("float32")  # files hold float32 weights, whatever the session's policy
    try:
        model = model_class(recipe.model).from_preset(recipe.model)
    finally:
        keras.config.set_dtype_policy(previous)
    total = None
    for _, path in chosen:
        runs.load_weights(model, path, config_file=os.path.join(run_dir, runs.CONFIG_FILE),
                          remedy=f"or move it out of {folder} to average the other checkpoints")
        weights = model.get_weights()
        if total is None:
            total = [w.astype(np.float64) if np.issubdtype(w.dtype, np.floating) else w for w in weights]
        else:
            total = [t + w if np.issubdtype(w.dtype, np.floating) else w for t, w in zip(total, weights)]
    model.set_weights([t / len(chosen) if np.issubdtype(t.dtype, np.floating) else t for t in total])
    runs.make_folder(os.path.dirname(target))
    runs.save_weights(model, target)
    runs.write_json_atomic(record, {"epochs": [epoch for epoch, _ in chosen],
                                    "checkpoints": [os.path.basename(p) for _, p in chosen]})
    if target == os.path.realpath(default):  # the record's name before: checkpoints/averaged.json, now stale
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(folder, "averaged.json"))
    logger.info("averaged %s into %s", ", ".join(os.path.basename(p) for _, p in chosen), output)
    return output
