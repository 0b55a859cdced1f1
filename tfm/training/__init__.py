"""Training (Vaswani et al., 2017, §5): `train()` and the parts `model.fit` runs with.

    trainer.py     `train(model, data, training, output=...)`: the recipe, strategy, model, `fit`, the run folder
    pipeline.py    the data side of a run: pairs, the tokenizer, token-budget batches
    losses.py      label-smoothed cross-entropy (§5.4), R-Drop's paired KL
    metrics.py     token accuracy over real (non-padding) targets
    schedules.py   eq. 3's learning rate and the one optimizer builder (`build_optimizer`)
    callbacks.py   the run's per-epoch work: checkpoints, history.csv, backup, NaN guard, time budget
    distribute.py  `tf.distribute` strategies, multi-worker roles, mixed precision
    averaging.py   checkpoint averaging (§6.1: the last 5 or 20 checkpoints)

Names are imported on first use (PEP 562).

Example:
    >>> import tfm.training
    >>> schedule = tfm.training.TransformerSchedule(d_model=512, warmup_steps=4000)
    >>> round(float(schedule(3999)), 6)  # the peak: step 4000 = 512^-0.5 * 4000^-0.5
    0.000699
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

_EXPORTS = {
    **dict.fromkeys(("TrainResult", "compile_model", "train"), "tfm.training.trainer"),
    **dict.fromkeys(("LabelSmoothedCrossEntropy",), "tfm.training.losses"),
    **dict.fromkeys(("MaskedAccuracy",), "tfm.training.metrics"),
    **dict.fromkeys(("TransformerSchedule", "build_optimizer"), "tfm.training.schedules"),
    **dict.fromkeys(("EpochCheckpoint", "EpochProgressBar", "HistoryCSV", "NaNGuard", "RunBackup", "TrainingBudget"),
                    "tfm.training.callbacks"),
    **dict.fromkeys(("make_strategy", "precision_policy"), "tfm.training.distribute"),
    **dict.fromkeys(("average_checkpoints",), "tfm.training.averaging"),
}
_SUBMODULES = ("averaging", "callbacks", "distribute", "losses", "metrics", "pipeline", "schedules", "trainer")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
