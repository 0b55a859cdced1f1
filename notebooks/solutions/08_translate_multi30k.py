"""Reference solutions, notebook 08. Check: `tfm.exercises.check_length_penalty(length_penalty)`,
`check_beam_step(beam_step)` and `check_clipped_precision(clipped_precision)`."""

from collections import Counter

import numpy as np


def length_penalty(length, alpha):
    """GNMT's `((5 + |Y|) / 6)^alpha`."""
    return ((5.0 + length) / 6.0) ** alpha


def beam_step(log_probs, token_log_probs):
    """The K best of all K * V extensions of (B, K) hypotheses: (scores, beams, tokens), each (B, K), best first."""
    batch, k, vocab = token_log_probs.shape
    candidates = log_probs[:, :, None] + token_log_probs  # (B, K, 1) + (B, K, V) -> (B, K, V)
    flat = candidates.reshape(batch, k * vocab)  # rank all beams together: (B, K*V)
    best = np.argsort(-flat, axis=-1, kind="stable")[:, :k]  # (B, K) flat indices, best first
    return np.take_along_axis(flat, best, axis=-1), best // vocab, best % vocab


def clipped_precision(hypothesis, references, n):
    """BLEU's modified n-gram precision as (numerator, denominator)."""
    def ngrams(tokens):
        return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))

    counts = ngrams(hypothesis)
    max_ref = Counter()
    for reference in references:
        max_ref |= ngrams(reference)  # `|` keeps the larger count of each n-gram
    return sum(min(c, max_ref[g]) for g, c in counts.items()), sum(counts.values())
