"""Reference solution, notebook 01. Check: `tfm.exercises.check_target_shift(target_shift)`."""

import numpy as np

PAD_ID, START_ID, END_ID = 0, 2, 3  # tfm.special_tokens


def target_shift(target_ids):
    """Padded targets (B, n) -> (target_in, target_out), each (B, n + 1): START y, and y END, then padding."""
    target_ids = np.asarray(target_ids)
    batch, n = target_ids.shape
    lengths = (target_ids != PAD_ID).sum(axis=1)  # (B,): real tokens per row (rows are right-padded)
    target_in = np.full((batch, n + 1), PAD_ID, target_ids.dtype)
    target_in[:, 0] = START_ID
    target_in[:, 1:] = target_ids  # START y_1 ... y_k, then the row's own padding
    target_out = np.full((batch, n + 1), PAD_ID, target_ids.dtype)
    target_out[:, :n] = target_ids
    target_out[np.arange(batch), lengths] = END_ID  # END right after the last real token, not after the padding
    return target_in, target_out
