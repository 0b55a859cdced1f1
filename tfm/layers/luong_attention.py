"""Global attention (Luong, Pham and Manning, 2015, §3.1)."""

import keras

from tfm.layers.attention import Attention


@keras.saving.register_keras_serializable(package="tfm")
class LuongAttention(Attention):
    """Global attention with Luong's multiplicative score `s_t^T W h_s` by default.

    Luong et al. score the *current* decoder output `h_t` against every source
    state: "dot" `h_t^T h_s`, "general" `h_t^T W_a h_s` (their best global
    model) or "concat" `v^T tanh(W_a [h_t; h_s])`, which is `score="additive"`
    here. The decoder then forms the attentional state `tanh(W_c [c_t; h_t])`
    (see `RNNDecoder(attention="luong")`).

    Args:
        score: str. `"general"` (default), `"dot"`, `"additive"`, `"scaled_dot"`
            or `"cosine"`.
        units: int. MLP width, only for `score="additive"`.
        sharpness, trainable_sharpness: see `AttentionScore` (cosine only).

    Call args:
        query: float `(B, Dq)` or `(B, T, Dq)`.
        value: float `(B, S, Dv)`.
        key: float `(B, S, Dk)` or None (then `key = value`).
        memory_mask: bool `(B, S)`, True = real source token.

    Returns:
        context float `(B, [T,] Dv)`; `call_with_scores` (same arguments) returns
        `(context, weights (B, [T,] S))`.

    Example:
        >>> attention = LuongAttention()                         # score="general"
        >>> h_t = keras.random.normal((2, 3, 8))                 # (B, T, Dq): decoder outputs
        >>> h_s = keras.random.normal((2, 5, 12))                # (B, S, Dv): encoder outputs
        >>> tuple(attention(h_t, h_s).shape)                     # c_t (B, T, Dv)
        (2, 3, 12)
    """

    def __init__(self, score="general", **kwargs):
        super().__init__(score=score, **kwargs)
