"""Reference solution, notebook 02. Check: `tfm.exercises.check_padding_mask(padding_mask)`."""

import numpy as np

PAD_ID = 0  # tfm.special_tokens


def padding_mask(source_ids, scores):
    """(mask (B, S), True = real token; the softmax of `scores` (B, S) or (B, T, S) over the real tokens only)."""
    mask = np.asarray(source_ids) != PAD_ID  # (B, S)
    keys = mask.reshape(mask.shape[:1] + (1,) * (scores.ndim - 2) + mask.shape[1:])  # (B, S) or (B, 1, S)
    # float32: a large negative fill in float16 overflows; -inf gives padded keys exactly zero weight.
    scores = np.where(keys, np.asarray(scores, "float32"), -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))  # every row has a real token: no -inf max
    return mask, weights / weights.sum(axis=-1, keepdims=True)
