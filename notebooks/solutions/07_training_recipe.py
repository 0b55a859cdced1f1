"""Reference solutions, notebook 07. Check: `tfm.exercises.check_label_smoothed_loss(label_smoothed_loss)`
and `tfm.exercises.check_schedule(schedule)`."""

import numpy as np


def label_smoothed_loss(y_true, logits, label_smoothing=0.1, pad_id=0):
    """Cross entropy against `1 - eps` on the reference and `eps / (V - 1)` on each other id, mean over real tokens."""
    y_true = np.asarray(y_true)
    logits = np.asarray(logits, "float32")  # float32: exp() of float16 logits overflows
    vocab = logits.shape[-1]
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (B, T, V)
    target = np.full(logits.shape, label_smoothing / (vocab - 1), "float32")  # (B, T, V)
    np.put_along_axis(target, y_true[..., None], 1.0 - label_smoothing, axis=-1)
    per_token = -(target * log_probs).sum(axis=-1)  # (B, T)
    real = y_true != pad_id  # padding counts neither in the sum nor in the mean
    return per_token[real].sum() / max(real.sum(), 1)


def schedule(iteration, d_model, warmup_steps):
    """Eq. 3 at Keras' 0-based `iteration`: the paper's step is `iteration + 1`."""
    step = iteration + 1
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)
