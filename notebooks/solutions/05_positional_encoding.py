"""Reference solution, notebook 05. Check: `tfm.exercises.check_positional_encoding(positional_encoding)`."""

import numpy as np


def positional_encoding(length, depth):
    """`PE[p, 2i] = sin(p / 10000^(2i/depth))`, `PE[p, 2i+1] = cos(...)`, interleaved: (length, depth)."""
    positions = np.arange(length)[:, None]  # (L, 1)
    two_i = np.arange(0, depth, 2)[None, :]  # (1, D/2): 0, 2, 4, ...
    angles = positions / 10000.0 ** (two_i / depth)  # (L, D/2)
    pe = np.zeros((length, depth), "float32")
    pe[:, 0::2] = np.sin(angles)  # even columns
    pe[:, 1::2] = np.cos(angles)  # odd columns
    return pe
