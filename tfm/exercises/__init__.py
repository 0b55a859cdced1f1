"""Checkers for the course's coding exercises: `check_<name>(fn)` -> True / False.

Each checker calls the reader's function on random and edge-case inputs (masks, padding,
batch 1, half precision where it applies), compares it with tfm's own implementation, prints
ONE sentence (what is wrong: which input, the first mismatching index, expected vs got shape
or value; or that it is correct) and returns True or False. It never raises on the reader's account:
a stub that still raises `NotImplementedError` prints "not done yet: ..." and returns False, so that
a notebook runs top to bottom before the reader has written anything.

    from tfm.exercises import check_causal_mask
    check_causal_mask(my_causal_mask)        # prints one sentence, returns True or False

Inputs are NumPy arrays (Python ints and lists where the docstring says so); a solution may
use NumPy or `keras.ops` and return anything `np.asarray` (or `keras.ops.convert_to_numpy`)
reads. Reference solutions: `notebooks/solutions/`.

| nb | checker                              | exercise                                   | paper         |
|----|--------------------------------------|--------------------------------------------|---------------|
| 01 | `check_target_shift`                 | decoder input START + y, labels y + END    | §3.1          |
| 02 | `check_padding_mask`                 | padded source positions at zero weight     | Bahdanau 2015 |
| 03 | `check_additive_score`               | `v^T tanh(W1 q + W2 k)`                    | Bahdanau 2015 |
| 03 | `check_general_score`                | `q^T W k`                                  | Luong 2015    |
| 04 | `check_scaled_dot_product_attention` | eq. 1 with a boolean mask                  | §3.2.1        |
| 04 | `check_split_heads`                  | `(B, T, N*H) -> (B, N, T, H)`              | §3.2.2        |
| 04 | `check_merge_heads`                  | `(B, N, T, H) -> (B, T, N*H)`              | §3.2.2        |
| 05 | `check_positional_encoding`          | interleaved sinusoids                      | §3.5          |
| 06 | `check_causal_mask`                  | the decoder's look-ahead mask              | §3.2.3        |
| 07 | `check_label_smoothed_loss`          | label smoothing, padding ignored           | §5.4          |
| 07 | `check_schedule`                     | eq. 3's learning rate                      | §5.3          |
| 08 | `check_length_penalty`               | GNMT's `((5 + |Y|) / 6)^α`                 | §6.1          |
| 08 | `check_beam_step`                    | one beam-search step                       | §6.1          |
| 08 | `check_clipped_precision`            | BLEU's clipped n-gram precision            | §6.1 (BLEU)   |
| 09 | `check_bucket_batch_sizes`           | token-budget batches over replicas         | §5.1, §5.2    |
| 10 | `check_receptive_field`              | what a (dilated) convolution stack reaches | §4, Table 1   |
| 11 | `check_parameter_count`              | a config's parameters                      | Table 3       |
| 12 | `check_rest_response`                | TF Serving's REST response body            | (serving)     |
| 13 | `check_linearize_tree`               | a tree as a token sequence                 | §6.3          |

The checkers live by topic (`masks`, `attention`, `heads`, `positional`, `batching`, `training`, `decoding`,
`architecture`, `serving`, `parsing`; what they share: calling and comparing in `checking` (`run_checker`,
`call_checked`, `compare`, `Mismatch`, ...), the languages and sentence tables in `messages` (`Messages`,
`validate_language`)); every checker is importable from here. Beside them, `course_runs` prints a notebook's run
beside its published copy (`print_beside_published`, `machine_description`): what notebooks 08 and 13 show when
their numbers depend on the machine. Each checker keeps its sentences in one `Messages` table beside it, English and
Korean templates under the same keys.

The sentence's language: every checker takes `lang="en"` or `lang="ko"` (the Korean edition, 한국어판,
in the glossary's terms: docs/ko/glossary.md). Left out (None), it is the environment variable
`TFM_LANG` ("en" or "ko"), else English: the Korean notebooks (notebooks/ko/) have the English code
cells byte for byte, so a Korean reader sets the variable once instead of editing every call:

    TFM_LANG=ko .venv/bin/jupyter lab notebooks/ko/

The language changes only the words: the same inputs are checked and the verdict is the same. Any
other language raises `ValueError` naming the value and the choices (`$TFM_LANG` included).

Example:
    >>> import os
    >>> from unittest import mock
    >>> import numpy as np
    >>> from tfm.exercises import check_causal_mask
    >>> def causal_mask(length):
    ...     return np.triu(np.ones((length, length), bool))     # the future instead of the past
    >>> check_causal_mask(causal_mask, lang="en")
    On length=2, the mask at index [0, 1] should be False, got True.
    False
    >>> check_causal_mask(causal_mask, lang="ko")
    length=2에서 마스크의 인덱스 [0, 1] 값은 False이어야 하는데 True입니다.
    False
    >>> with mock.patch.dict(os.environ, {"TFM_LANG": "ko"}):   # as after `export TFM_LANG=ko`
    ...     check_causal_mask(lambda length: np.tril(np.ones((length, length), bool)))
    정답입니다: <lambda> 함수가 길이 1, 2, 5 모두에서 tfm.layers.masks.causal_mask 결과와 일치합니다.
    True
    >>> check_causal_mask(causal_mask, lang="fr")
    Traceback (most recent call last):
    ...
    ValueError: lang='fr' is not a language of tfm.exercises; choose 'en' or 'ko' (None reads $TFM_LANG)
"""

from tfm.exercises.architecture import check_parameter_count, check_receptive_field
from tfm.exercises.attention import check_additive_score, check_general_score, check_scaled_dot_product_attention
from tfm.exercises.batching import check_bucket_batch_sizes, check_target_shift
from tfm.exercises.course_runs import machine_description, print_beside_published, published_summary
from tfm.exercises.decoding import check_beam_step, check_clipped_precision, check_length_penalty
from tfm.exercises.heads import check_merge_heads, check_split_heads
from tfm.exercises.masks import check_causal_mask, check_padding_mask
from tfm.exercises.parsing import check_linearize_tree
from tfm.exercises.positional import check_positional_encoding
from tfm.exercises.serving import check_rest_response
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
    "check_target_shift",
    "check_padding_mask",
    "check_split_heads",
    "check_merge_heads",
    "check_bucket_batch_sizes",
    "check_receptive_field",
    "check_parameter_count",
    "check_rest_response",
    "machine_description",
    "print_beside_published",
    "published_summary",
]
