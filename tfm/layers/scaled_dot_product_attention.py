"""Scaled dot-product attention (Vaswani et al., 2017, §3.2.1, eq. 1)."""

import math

from keras import ops


def masked_softmax(scores, mask=None):
    """Softmax over the last axis that gives masked positions exactly zero weight.

    Args:
        scores: float `(..., T, S)`.
        mask: bool broadcastable to `(..., T, S)`, True = may attend, or None.

    Returns:
        float `(..., T, S)`, same dtype as `scores`. A row with nothing to attend
        to comes back all zeros (not NaN and not uniform).
    """
    if mask is None:
        return ops.softmax(scores, axis=-1)
    mask = ops.cast(mask, "bool")
    # Softmax in float32: a large negative fill overflows bfloat16/float16.
    scores32 = ops.cast(scores, "float32")
    scores32 = ops.where(mask, scores32, ops.full_like(scores32, -1e9))
    weights = ops.softmax(scores32, axis=-1)
    weights = ops.where(mask, weights, ops.zeros_like(weights))
    return ops.cast(weights, scores.dtype)


def scaled_dot_product_attention(query, key, value, mask=None):
    """`softmax(Q K^T / sqrt(d_k)) V` (§3.2.1, eq. 1).

    Dividing by `sqrt(d_k)` keeps the logits' variance near 1 as `d_k` grows, so the
    softmax does not saturate into a one-hot with vanishing gradients.

    Args:
        query: float `(..., T, d_k)`.
        key: float `(..., S, d_k)`.
        value: float `(..., S, d_v)`.
        mask: bool broadcastable to `(..., T, S)`, True = may attend, or None.

    Returns:
        `(output, weights)`: float `(..., T, d_v)` and float `(..., T, S)`.
        Masked keys get exactly zero weight.
    """
    d_k = query.shape[-1]
    if d_k is None:
        d_k = ops.shape(query)[-1]
        scale = ops.cast(1.0 / ops.sqrt(ops.cast(d_k, "float32")), query.dtype)
    else:
        scale = 1.0 / math.sqrt(d_k)
    scores = ops.matmul(query, ops.swapaxes(key, -1, -2)) * scale  # (..., T, S)
    weights = masked_softmax(scores, mask)
    output = ops.matmul(weights, value)  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
    return output, weights
