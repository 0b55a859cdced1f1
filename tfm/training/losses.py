"""Label-smoothed cross entropy that ignores padding (Vaswani et al., 2017, §5.4), with an optional
R-Drop term (Liang et al., 2021) for small corpora."""

import keras
from keras import ops

from tfm.config.validation import validate_fraction, validate_rdrop_alpha
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
        rdrop_alpha: float >= 0. R-Drop's weight `α` (Liang et al., 2021, eq. 3). `0`
            (the default) is the paper's plain loss. Above 0 the batch must hold every
            sentence twice in adjacent rows (`0, 0, 1, 1, ...`: `tfm.training.pipeline.pair_rows`,
            which `train` applies when the model config's `rdrop_alpha` is set); the two
            rows see different dropout masks, and each pair adds
            `α · ½ (KL(P1 || P2) + KL(P2 || P1))` per real token to its two cross entropies.
            The whole is divided by the real tokens of both rows, so `α` is the paper's.
        name: str. The loss' name in logs. Defaults to `"label_smoothed_cross_entropy"`.
        reduction: Keras' reduction of `call`'s scalar. Defaults to `"sum"`: `call` already divides by
            the real tokens, so summing its one value keeps the mean described above.

    Call args:
        y_true: int `(B, T)` target ids (`B` even with R-Drop, rows paired as above).
        y_pred: float `(B, T, V)` logits (unnormalised).

    Returns:
        scalar: sum of per-token losses / number of non-pad tokens (per replica
        under `tf.distribute`, scaled so that the replicas' sum is their mean).

    Example:
        >>> import numpy as np
        >>> loss = LabelSmoothedCrossEntropy(label_smoothing=0.1)
        >>> y_true = np.array([[5, 6, 0]])                       # (B, T); the last token is padding
        >>> y_pred = np.zeros((1, 3, 8), "float32")              # (B, T, V) logits: uniform over 8 ids
        >>> round(float(loss(y_true, y_pred)), 4)                # log 8, smoothed or not
        2.0794
    """

    def __init__(
        self,
        label_smoothing=0.1,
        pad_id=PAD_ID,
        exclude_pad_from_smoothing=False,
        rdrop_alpha=0.0,
        name="label_smoothed_cross_entropy",
        reduction="sum",
        **kwargs,
    ):
        label_smoothing = validate_fraction("label_smoothing", label_smoothing)
        rdrop_alpha = validate_rdrop_alpha(rdrop_alpha)
        super().__init__(name=name, reduction=reduction, **kwargs)
        self.label_smoothing = label_smoothing
        self.pad_id = int(pad_id)
        self.exclude_pad_from_smoothing = bool(exclude_pad_from_smoothing)
        self.rdrop_alpha = rdrop_alpha

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
        if self.rdrop_alpha > 0:
            loss = loss + self.rdrop_alpha * paired_kl(logits)
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
            "rdrop_alpha": self.rdrop_alpha,
        }


def paired_kl(logits):
    """Half the symmetric KL divergence between the predictions of each pair of adjacent rows.

    R-Drop (Liang et al., 2021) feeds every sentence twice; rows `2i` and `2i + 1` are
    its two passes. For each position, `½ · ½ (KL(P1 || P2) + KL(P2 || P1))
    = ¼ Σ_v (p1 - p2)(log p1 - log p2)`, given to both rows of the pair, so that
    their sum is the paper's `½ (KL + KL)` once per pair.

    Args:
        logits: float32 `(B, T, V)`, `B` even.

    Returns:
        float32 `(B, T)`.

    Example:
        >>> import numpy as np
        >>> logits = np.log([[[0.5, 0.5]], [[0.75, 0.25]]]).astype("float32")  # (B=2, T=1, V=2): one pair
        >>> [round(float(v), 4) for v in paired_kl(logits)[:, 0]]  # ¼ Σ (p1 - p2)(log p1 - log p2), both rows
        [0.0687, 0.0687]
    """
    batch = logits.shape[0]
    if batch is not None and batch % 2:
        raise ValueError(f"R-Drop needs each sentence twice in adjacent rows; got an odd batch of {batch} rows")
    shape = ops.shape(logits)
    log_probs = ops.log_softmax(logits, axis=-1)
    pairs = ops.reshape(log_probs, (-1, 2, shape[1], shape[2]))  # (B, T, V) -> (B/2, 2, T, V)
    first, second = pairs[:, 0], pairs[:, 1]  # (B/2, T, V) each
    kl = 0.25 * ops.sum((ops.exp(first) - ops.exp(second)) * (first - second), axis=-1)  # (B/2, T)
    return ops.reshape(ops.repeat(ops.expand_dims(kl, 1), 2, axis=1), (-1, shape[1]))  # -> (B, T)
