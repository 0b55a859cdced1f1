"""Reference solutions, notebook 03 (score functions). Check: `tfm.exercises.check_additive_score(additive_score)`."""

import numpy as np


def additive_score(query, key, w1, w2, v):
    """Bahdanau's `v^T tanh(W1 q + W2 k)`: query (B, T, Dq), key (B, S, Dk) -> (B, T, S)."""
    q = np.asarray(query, "float32") @ np.asarray(w1, "float32")  # (B, T, Dq) -> (B, T, U)
    k = np.asarray(key, "float32") @ np.asarray(w2, "float32")  # (B, S, Dk) -> (B, S, U)
    hidden = np.tanh(q[:, :, None, :] + k[:, None, :, :])  # every pair: (B, T, S, U)
    return hidden @ np.asarray(v, "float32")  # (B, T, S, U) @ (U,) -> (B, T, S)


def general_score(query, key, w):
    """Luong's `q^T W k`: query (B, T, Dq), key (B, S, Dk), w (Dq, Dk) -> (B, T, S)."""
    projected = np.asarray(query, "float32") @ np.asarray(w, "float32")  # (B, T, Dq) -> (B, T, Dk)
    return projected @ np.swapaxes(np.asarray(key, "float32"), -1, -2)  # (B, T, Dk) @ (B, Dk, S) -> (B, T, S)
