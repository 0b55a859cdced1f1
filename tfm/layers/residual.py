"""The residual connection around every sub-layer (Vaswani et al., 2017, §3.1, §5.4)."""


def residual_block(x, sublayer, norm, dropout, norm_first, training=None):
    """Post-LN `LayerNorm(x + Dropout(Sublayer(x)))` (the paper) or pre-LN `x + Dropout(Sublayer(LayerNorm(x)))`.

    Args:
        x: float `(B, T, D)`.
        sublayer: callable `(B, T, D) -> (B, T, D)` or `-> (output, *extras)`.
        norm: the block's `LayerNormalization`.
        dropout: the block's `Dropout` (P_drop on the sub-layer output, §5.4).
        norm_first: bool. Pre-LN when True.

    Returns:
        `(y, extras)`: float `(B, T, D)` and the tuple of whatever else `sublayer`
        returned (attention weights, caches).

    Example:
        >>> import keras
        >>> x = keras.ops.ones((1, 2, 4))
        >>> norm, dropout = keras.layers.LayerNormalization(), keras.layers.Dropout(0.1)
        >>> y, extras = residual_block(x, lambda h: 2 * h, norm, dropout, norm_first=True)  # x + 2 LN(x), LN(1) = 0
        >>> keras.ops.convert_to_numpy(y)[0, 0].tolist(), extras
        ([1.0, 1.0, 1.0, 1.0], ())
    """
    out = sublayer(norm(x) if norm_first else x)
    extras = ()
    if isinstance(out, tuple):
        out, extras = out[0], out[1:]
    y = x + dropout(out, training=training)
    return (y if norm_first else norm(y)), extras
