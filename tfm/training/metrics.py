"""Metrics that ignore padding."""

import keras
from keras import ops

from tfm.special_tokens import PAD_ID


@keras.saving.register_keras_serializable(package="tfm")
class MaskedAccuracy(keras.metrics.Metric):
    """Token accuracy over non-padding targets (argmax of the logits == target).

    Args:
        pad_id: int. Target id that is ignored. Defaults to `0`.
        name: str. Defaults to `"accuracy"`.

    Update args:
        y_true: int `(B, T)` target ids.
        y_pred: float `(B, T, V)` logits or probabilities.
        sample_weight: optional float broadcastable to `(B, T)`.

    Example:
        >>> metric = MaskedAccuracy()
        >>> y_true = ops.array([[5, 6, 0]])                      # (B, T); the last token is padding
        >>> y_pred = ops.one_hot(ops.array([[5, 7, 3]]), 8)      # (B, T, V): right, wrong, (padding)
        >>> metric.update_state(y_true, y_pred)
        >>> float(metric.result())                               # 1 of the 2 real tokens
        0.5
    """

    def __init__(self, pad_id=PAD_ID, name="accuracy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.pad_id = int(pad_id)
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct", dtype="float32")
        self.total = self.add_variable(shape=(), initializer="zeros", name="total", dtype="float32")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        pred = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        weights = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        if sample_weight is not None:
            weights = weights * ops.cast(sample_weight, "float32")
        hits = ops.cast(ops.equal(pred, y_true), "float32") * weights
        self.correct.assign_add(ops.sum(hits))
        self.total.assign_add(ops.sum(weights))

    def result(self):
        return ops.divide_no_nan(self.correct, self.total)

    def reset_state(self):
        self.correct.assign(0.0)
        self.total.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "pad_id": self.pad_id}
