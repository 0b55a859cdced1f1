"""Checkers for the course's coding exercises: `check_<name>(fn)` -> True / False.

Each checker calls the reader's function on random and edge-case inputs (masks, padding,
batch 1, half precision where it applies), compares it with tfm's own implementation, prints
ONE sentence (what is wrong: which input, the first mismatching index, expected vs got shape
or value; or that it is correct) and returns True or False. It never raises: a stub that still
raises `NotImplementedError` prints "not done yet: ..." and returns False, so that a notebook
runs top to bottom before the reader has written anything.

    from tfm.exercises import check_causal_mask
    check_causal_mask(my_causal_mask)        # prints one sentence, returns True or False

Inputs are NumPy arrays (Python ints and lists where the docstring says so); a solution may
use NumPy or `keras.ops` and return anything `np.asarray` (or `keras.ops.convert_to_numpy`)
reads. Reference solutions: `notebooks/solutions/`.

| checker                              | exercise                                    | paper          |
|--------------------------------------|---------------------------------------------|----------------|
| `check_additive_score`               | `v^T tanh(W1 q + W2 k)`                     | Bahdanau 2015  |
| `check_general_score`                | `q^T W k`                                   | Luong 2015     |
| `check_scaled_dot_product_attention` | eq. 1 with a boolean mask                   | §3.2.1         |
| `check_positional_encoding`          | interleaved sinusoids                       | §3.5           |
| `check_causal_mask`                  | the decoder's look-ahead mask               | §3.2.3         |
| `check_label_smoothed_loss`          | label smoothing, padding ignored            | §5.4           |
| `check_schedule`                     | eq. 3's learning rate                       | §5.3           |
| `check_length_penalty`               | GNMT's `((5 + |Y|) / 6)^α`                  | §6.1           |
| `check_beam_step`                    | one beam-search step                        | §6.1           |
| `check_clipped_precision`            | BLEU's clipped n-gram precision             | §6.1 (BLEU)    |
| `check_linearize_tree`               | a tree as a token sequence                  | §6.3           |

The checkers live by topic (`attention`, `training`, `decoding`, `parsing`; what they share in
`checking`: `run_checker`, `call_checked`, `compare`, `Mismatch`, ...); every one is importable from here.
"""

from tfm.exercises.attention import (
                                     check_additive_score,
                                     check_causal_mask,
                                     check_general_score,
                                     check_positional_encoding,
                                     check_scaled_dot_product_attention,
)
from tfm.exercises.decoding import (
                                     beam_step_reference,
                                     check_beam_step,
                                     check_clipped_precision,
                                     check_length_penalty,
                                     clipped_precision_reference,
)
from tfm.exercises.parsing import check_linearize_tree
from tfm.exercises.training import check_label_smoothed_loss, check_schedule

__all__ = [
    "check_additive_score",
    "check_general_score",
    "check_scaled_dot_product_attention",
    "check_positional_encoding",
    "check_causal_mask",
    "check_label_smoothed_loss",
    "check_schedule",
    "check_length_penalty",
    "check_beam_step",
    "check_clipped_precision",
    "check_linearize_tree",
]
