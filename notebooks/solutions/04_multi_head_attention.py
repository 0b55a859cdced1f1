"""Reference solutions, notebook 04. Check:
`tfm.exercises.check_scaled_dot_product_attention(scaled_dot_product_attention)`,
`check_split_heads(split_heads)` and `check_merge_heads(merge_heads)`."""

import numpy as np


def scaled_dot_product_attention(query, key, value, mask=None):
    """Eq. 1, `softmax(Q K^T / sqrt(d_k)) V`; mask bool broadcastable to (..., T, S), True = may attend."""
    # float32 throughout: in float16 a large negative fill overflows and exp() underflows.
    q, k, v = (np.asarray(x, "float32") for x in (query, key, value))
    d_k = q.shape[-1]
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # a masked key can never win the softmax
    scores = scores - scores.max(axis=-1, keepdims=True)  # stable softmax
    weights = np.exp(scores)  # exp(-inf) = 0: masked keys get exactly zero weight
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)


def split_heads(x, num_heads):
    """(B, T, N*H) -> (B, N, T, H): head i gets features i*H ... (i+1)*H - 1 of every position."""
    b, t, d = x.shape
    x = x.reshape(b, t, num_heads, d // num_heads)  # (B, T, N*H) -> (B, T, N, H)
    return x.transpose(0, 2, 1, 3)  # (B, T, N, H) -> (B, N, T, H)


def merge_heads(heads):
    """(B, N, T, H) -> (B, T, N*H): Concat(head_1, ..., head_N) for every position."""
    b, n, t, h = heads.shape
    heads = heads.transpose(0, 2, 1, 3)  # (B, N, T, H) -> (B, T, N, H)
    return heads.reshape(b, t, n * h)  # (B, T, N, H) -> (B, T, N*H)
