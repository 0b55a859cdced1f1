"""Label-smoothed cross entropy that ignores padding (Vaswani et al., 2017, §5.4)."""

import keras
from keras import ops

from tfm.special_tokens import PAD_ID


def _replicas_in_sync():
    """Replicas whose per-replica losses Keras sums into one gradient (1 outside tf.distribute)."""
    if keras.backend.backend() != "tensorflow":
        return 1
    import tensorflow as tf

    return tf.distribute.get_strategy().num_replicas_in_sync


@keras.saving.register_keras_serializable(package="tfm")
class LabelSmoothedCrossEntropy(keras.losses.Loss):
    """Cross entropy against smoothed one-hot targets, averaged over real tokens.

    The target distribution puts `1 - eps` on the reference token and spreads
    `eps` uniformly over the other `V - 1` ids (§5.4, eps_ls = 0.1). "This hurts
    perplexity, as the model learns to be more unsure, but improves accuracy and
    BLEU." Padding positions contribute nothing, and the mean is over real tokens
    only, so batches with more padding are not down-weighted.

    Args:
        label_smoothing: float in [0, 1). `eps_ls`. Defaults to `0.1`.
        pad_id: int. Target id that is ignored. Defaults to `0`.
        exclude_pad_from_smoothing: bool. Do not spread smoothing mass onto the
            padding id (as tensor2tensor / fairseq do). Defaults to `False`.

    Call args:
        y_true: int `(B, T)` target ids.
        y_pred: float `(B, T, V)` logits (unnormalised).

    Returns:
        scalar: sum of per-token losses / number of non-pad tokens (per replica
        under `tf.distribute`, scaled so that the replicas' sum is their mean).
    """

    def __init__(
        self,
        label_smoothing=0.1,
        pad_id=PAD_ID,
        exclude_pad_from_smoothing=False,
        name="label_smoothed_cross_entropy",
        reduction="sum",
        **kwargs,
    ):
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"label_smoothing={label_smoothing} must be in [0, 1)")
        super().__init__(name=name, reduction=reduction, **kwargs)
        self.label_smoothing = float(label_smoothing)
        self.pad_id = int(pad_id)
        self.exclude_pad_from_smoothing = bool(exclude_pad_from_smoothing)

    def call(self, y_true, y_pred):
        y_true = ops.cast(y_true, "int32")
        logits = ops.cast(y_pred, "float32")  # float32 numerics under mixed precision
        if not hasattr(logits, "ndim"):  # a tf.Variable passed eagerly: take_along_axis needs a tensor
            logits = ops.add(logits, 0.0)
        vocab = ops.shape(logits)[-1]
        # Written on the logits z, never materialising log_softmax over (B, T, V):
        # log p_i = z_i - lse, so nll = lse - z_y and sum_i log p_i = sum_i z_i - V * lse.
        lse = ops.logsumexp(logits, axis=-1)  # (B, T)
        z_y = ops.take_along_axis(logits, ops.expand_dims(y_true, -1), axis=-1)[..., 0]  # (B, T)
        nll = lse - z_y
        eps = self.label_smoothing
        if eps > 0:
            v = ops.cast(vocab, "float32")
            sum_log_probs = ops.sum(logits, axis=-1) - v * lse  # (B, T)
            others = v - 1.0
            if self.exclude_pad_from_smoothing:
                sum_log_probs = sum_log_probs - (logits[..., self.pad_id] - lse)
                others = v - 2.0
            # Smoothing mass eps spread over every id except the reference one.
            smooth = -(sum_log_probs + nll) / others
            loss = (1.0 - eps) * nll + eps * smooth
        else:
            loss = nll
        weights = ops.cast(ops.not_equal(y_true, self.pad_id), "float32")
        count = ops.maximum(ops.sum(weights), 1.0)
        # Summed by reduction="sum" -> the mean over real tokens. Keras adds up the replicas'
        # losses (and gradients) under tf.distribute and divides only its own reductions by
        # the replica count, so this one divides itself: the same loss on 1 or N devices.
        return loss * weights / (count * _replicas_in_sync())

    def get_config(self):
        return {
            **super().get_config(),
            "label_smoothing": self.label_smoothing,
            "pad_id": self.pad_id,
            "exclude_pad_from_smoothing": self.exclude_pad_from_smoothing,
        }
