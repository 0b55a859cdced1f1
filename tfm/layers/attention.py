"""Attention with a pluggable score: `c_t = sum_s softmax_s(score(s_t, h_s)) h_s`.

The common core of Bahdanau (2015), Luong (2015) and the Transformer's attention
(Vaswani et al., 2017, §3.2): score every key against the query, normalise the
scores with a softmax over the source, and average the values with those weights.
`BahdanauAttention` and `LuongAttention` are this layer with their paper's score.
"""

import keras
from keras import ops

from tfm.layers.attention_score import AttentionScore
from tfm.layers.masks import merge_masks
from tfm.layers.scaled_dot_product_attention import masked_softmax


@keras.saving.register_keras_serializable(package="tfm")
class Attention(keras.layers.Layer):
    """Single-head attention over encoder outputs with any `AttentionScore`.

    Args:
        score: str. `"cosine"`, `"additive"`, `"dot"`, `"general"` or
            `"scaled_dot"` (see `tfm.layers.attention_score`). Defaults to `"dot"`.
        units: int. Width of the additive score's MLP; only for `"additive"`.
        sharpness: float. Cosine score multiplier `beta`. Defaults to `1.0`.
        trainable_sharpness: bool. Learn `beta`. Defaults to `False`.

    Call args:
        query: float `(B, Dq)` (one decoder step) or `(B, T, Dq)`.
        value: float `(B, S, Dv)`, the memory attended to, e.g. the encoder outputs `h_s`.
        key: float `(B, S, Dk)` or None (then `key = value`, as in the RNN papers).
        memory_mask: bool `(B, S)`, True = real source token. Padded positions get
            exactly zero weight.

    Returns:
        context float `(B, Dv)` or `(B, T, Dv)`. `call_with_scores` (same arguments)
        returns `(context, weights)`, the weights `a_ts` float `(B, S)` or `(B, T, S)`.

    Example:
        >>> attention = Attention(score="scaled_dot")
        >>> decoder_states = keras.random.normal((2, 3, 8))      # (B, T, D)
        >>> encoder_outputs = keras.random.normal((2, 5, 8))     # (B, S, D)
        >>> mask = ops.array([[True, True, True, False, False], [True] * 5])  # (B, S), True = real
        >>> context, weights = attention.call_with_scores(decoder_states, encoder_outputs, memory_mask=mask)
        >>> tuple(context.shape), tuple(weights.shape)           # (B, T, D), (B, T, S)
        ((2, 3, 8), (2, 3, 5))
        >>> float(ops.max(weights[0, :, 3:]))                    # padded keys: exactly zero weight
        0.0
    """

    def __init__(self, score="dot", units=None, sharpness=1.0, trainable_sharpness=False, **kwargs):
        super().__init__(**kwargs)
        self.score = score
        self.units = units
        self.sharpness = float(sharpness)
        self.trainable_sharpness = bool(trainable_sharpness)
        self.score_layer = AttentionScore(
            score=score,
            units=units,
            sharpness=sharpness,
            trainable_sharpness=trainable_sharpness,
            name="score",
            dtype=self.dtype_policy,
        )

    def build(self, query_shape, value_shape, key_shape=None, memory_mask_shape=None):
        query_shape = tuple(query_shape)
        if len(query_shape) == 2:
            query_shape = (query_shape[0], 1, query_shape[1])
        self.score_layer.build(query_shape, tuple(key_shape or value_shape))

    def project_keys(self, key):
        """Keys transformed once per source: `(B, S, Dk)` -> what `attend` takes."""
        return self.score_layer.project_keys(key)

    def attend(self, query, value, projected_keys, memory_mask=None):
        """`call_with_scores` with keys already passed through `project_keys`: `(context, weights)`."""
        single_step = len(query.shape) == 2
        if single_step:
            query = ops.expand_dims(query, 1)  # (B, Dq) -> (B, 1, Dq)
        scores = self.score_layer.score_projected(query, projected_keys)  # (B, T, S)
        mask = merge_masks(key_mask=memory_mask)  # (B, S) -> (B, 1, S) or None
        weights = masked_softmax(scores, mask)  # (B, T, S)
        context = ops.matmul(weights, ops.cast(value, weights.dtype))  # (B, T, S) @ (B, S, Dv) -> (B, T, Dv)
        if single_step:
            context, weights = context[:, 0], weights[:, 0]  # (B, 1, .) -> (B, .)
        return context, weights

    def call(self, query, value, key=None, memory_mask=None):
        return self.call_with_scores(query, value, key, memory_mask)[0]

    def call_with_scores(self, query, value, key=None, memory_mask=None):
        """`call`, and the attention weights: `(context (B, [T,] Dv), weights (B, [T,] S))`."""
        key = value if key is None else key
        if not self.built:  # a plain method: Layer.__call__, which builds on first use, does not run
            self.build(tuple(query.shape), tuple(value.shape), tuple(key.shape))
        return self.attend(query, value, self.project_keys(key), memory_mask)

    def get_config(self):
        return {
            **super().get_config(),
            "score": self.score,
            "units": self.units,
            "sharpness": self.sharpness,
            "trainable_sharpness": self.trainable_sharpness,
        }
