"""Reference solution, notebook 10. Check: `tfm.exercises.check_receptive_field(receptive_field)`."""

import numpy as np


def receptive_field(n, kernel_size, dilations):
    """bool (n,): True at the inputs j that output n - 1 of a stack of causal convolutions depends on."""
    offsets = {0}  # how far back output n - 1 reads: itself before any layer
    for dilation in dilations:  # a causal layer reads t, t - d, ..., t - (k - 1) d
        offsets = {offset + i * dilation for offset in offsets for i in range(kernel_size)}
    reached = np.zeros(n, dtype=bool)
    reached[[n - 1 - offset for offset in offsets if offset < n]] = True
    return reached
