"""Scaled dot-product attention (Vaswani et al., 2017, §3.2.1, eq. 1)."""

import math

from keras import ops


def _softmax(scores):
    """`ops.softmax` over the last axis; over a single position (the first step of cached decoding,
    one key) the weight is 1, written directly: Keras warns on a softmax over an axis of size 1."""
    if scores.shape[-1] == 1:
        return ops.ones_like(scores)
    return ops.softmax(scores, axis=-1)


def masked_softmax(scores, mask=None):
    """Softmax over the last axis that gives masked positions exactly zero weight.

    Args:
        scores: float `(..., T, S)`.
        mask: bool broadcastable to `(..., T, S)`, True = may attend, or None.

    Returns:
        float `(..., T, S)`, same dtype as `scores`. A row with nothing to attend
        to comes back all zeros (not NaN and not uniform).

    Example:
        >>> scores = ops.array([[1.0, 1.0, 5.0], [1.0, 2.0, 3.0]])
        >>> mask = ops.array([[True, True, False], [False, False, False]])
        >>> ops.convert_to_numpy(masked_softmax(scores, mask)).tolist()  # the second row attends to nothing
        [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]]
    """
    # Softmax in float32: under mixed precision a large negative fill overflows
    # float16 and bfloat16 loses the small weights.
    scores32 = ops.cast(scores, "float32")
    if mask is None:
        return ops.cast(_softmax(scores32), scores.dtype)
    mask = ops.cast(mask, "bool")
    scores32 = ops.where(mask, scores32, ops.full_like(scores32, -1e9))
    weights = _softmax(scores32)
    weights = ops.where(mask, weights, ops.zeros_like(weights))
    return ops.cast(weights, scores.dtype)


def attention_weights(query, key, mask=None):
    """`softmax(Q K^T / sqrt(d_k))` with masked keys at exactly zero weight.

    Args:
        query: float `(..., T, d_k)`.
        key: float `(..., S, d_k)`.
        mask: bool broadcastable to `(..., T, S)`, True = may attend, or None.

    Returns:
        float `(..., T, S)`.

    Example:
        >>> weights = attention_weights(ops.ones((2, 3, 4)), ops.ones((2, 5, 4)))  # (B, T, d_k), (B, S, d_k)
        >>> tuple(weights.shape), round(float(weights[0, 0, 0]), 4)  # equal scores: 1/5 each
        ((2, 3, 5), 0.2)
    """
    d_k = query.shape[-1]
    if d_k is None:
        scale = ops.rsqrt(ops.cast(ops.shape(query)[-1], query.dtype))
    else:
        scale = 1.0 / math.sqrt(d_k)
    # Scale the queries, not the (T, S) scores: fewer multiplications when S > d_k.
    scores = ops.matmul(query * ops.cast(scale, query.dtype), ops.swapaxes(key, -1, -2))  # (..., T, S)
    return masked_softmax(scores, mask)


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

    Example:
        >>> q = ops.array([[[1.0, 0.0]]])                        # (B=1, T=1, d_k=2)
        >>> k = ops.array([[[1.0, 0.0], [0.0, 1.0]]])            # (1, S=2, 2): scores 1/sqrt(2) and 0
        >>> v = ops.array([[[10.0], [20.0]]])                    # (1, 2, d_v=1)
        >>> output, weights = scaled_dot_product_attention(q, k, v)
        >>> [round(float(w), 4) for w in weights[0, 0]]          # softmax([0.7071, 0])
        [0.6698, 0.3302]
        >>> round(float(output[0, 0, 0]), 2)                     # 10 * 0.6698 + 20 * 0.3302
        13.3
    """
    weights = attention_weights(query, key, mask)  # (..., T, S)
    output = ops.matmul(weights, value)  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
    return output, weights
