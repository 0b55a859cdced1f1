"""Reference solution, notebook 06. Check: `tfm.exercises.check_causal_mask(causal_mask)`."""

import numpy as np


def causal_mask(length):
    """bool (length, length), True = may attend: query i sees keys j <= i (itself and the past)."""
    return np.tril(np.ones((length, length), dtype=bool))
