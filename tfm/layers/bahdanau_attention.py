"""Additive attention (Bahdanau, Cho and Bengio, 2015, §3.1 and §A.1.2)."""

import keras

from tfm.layers.attention import Attention


@keras.saving.register_keras_serializable(package="tfm")
class BahdanauAttention(Attention):
    """Additive ("concat") attention: `e_ts = v^T tanh(W_1 s_t + W_2 h_s)`.

    An MLP "alignment model" scores how well the inputs around source position
    `s` match the output at step `t`; its softmax `a_ts` weights the annotations
    `h_s` into the context `c_t` (eqs. 5-6). In an RNN decoder the query is the
    *previous* decoder state `s_{t-1}` and `c_t` is fed into the next step (see
    `RNNDecoder(attention="bahdanau")`).

    Args:
        units: int. `n'`, the alignment MLP's hidden width (1000 in the paper).

    Call args:
        query: float `(B, Dq)` or `(B, T, Dq)`.
        value: float `(B, S, Dv)`.
        key: float `(B, S, Dk)` or None (then `key = value`).
        memory_mask: bool `(B, S)`, True = real source token.

    Returns:
        context float `(B, [T,] Dv)`; `call_with_scores` (same arguments) returns
        `(context, weights (B, [T,] S))`.

    Example:
        >>> attention = BahdanauAttention(units=16)
        >>> s_prev = keras.random.normal((2, 8))                 # (B, Dq): the previous decoder state
        >>> annotations = keras.random.normal((2, 5, 12))        # (B, S, Dv)
        >>> context, weights = attention.call_with_scores(s_prev, annotations)
        >>> tuple(context.shape), tuple(weights.shape)           # c_t (B, Dv), a_t (B, S)
        ((2, 12), (2, 5))
    """

    def __init__(self, units, **kwargs):
        super().__init__(score="additive", units=units, **kwargs)

    def get_config(self):
        config = super().get_config()
        for name in ("score", "sharpness", "trainable_sharpness"):
            del config[name]
        return config
