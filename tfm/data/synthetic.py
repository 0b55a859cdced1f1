"""Generated tasks the project makes itself: deterministic by seed, no download.

`reverse_ids` / `copy_ids` give integer batches ready for `model.fit`; they are
what the learning tests and `make demo`'s fallback use.
"""

import numpy as np

from tfm.data.special_tokens import END_ID, START_ID

FIRST_FREE_ID = 4  # ids below are reserved (pad, unk, start, end)


def sequence_task_ids(num_examples, vocab_size=20, min_length=3, max_length=10, task="reverse", seed=0):
    """Random token sequences and their reversal (or copy), already as ids.

    Args:
        num_examples: int. Number of pairs.
        vocab_size: int. Total vocabulary including the 4 reserved ids.
        min_length, max_length: ints. Source length range (inclusive).
        task: "reverse" or "copy".
        seed: int. Same seed, same data.

    Returns:
        `((source, target_in), target_out)` int32 arrays: source `(n, max_length)`,
        target_in / target_out `(n, max_length + 1)`, zero-padded. `target_in`
        starts with START; `target_out` ends with END (teacher forcing).
    """
    if task not in ("reverse", "copy"):
        raise ValueError(f"task={task!r}: expected 'reverse' or 'copy'")
    if vocab_size <= FIRST_FREE_ID:
        raise ValueError(f"vocab_size={vocab_size} leaves no ids beyond the {FIRST_FREE_ID} reserved ones")
    if not 1 <= min_length <= max_length:
        raise ValueError(f"need 1 <= min_length <= max_length, got {min_length}, {max_length}")
    rng = np.random.default_rng(seed)
    source = np.zeros((num_examples, max_length), "int32")
    target_in = np.zeros((num_examples, max_length + 1), "int32")
    target_out = np.zeros((num_examples, max_length + 1), "int32")
    lengths = rng.integers(min_length, max_length + 1, size=num_examples)
    for i, n in enumerate(lengths):
        seq = rng.integers(FIRST_FREE_ID, vocab_size, size=n)
        out = seq[::-1] if task == "reverse" else seq
        source[i, :n] = seq
        target_in[i, 0] = START_ID
        target_in[i, 1 : n + 1] = out
        target_out[i, :n] = out
        target_out[i, n] = END_ID
    return (source, target_in), target_out
