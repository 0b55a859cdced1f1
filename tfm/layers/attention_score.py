"""Alignment score functions, one interface (Graves 2014 → Vaswani et al., 2017, §3.2.1).

| `score`        | `score(s_t, h_s)`                 | from                           |
|----------------|-----------------------------------|--------------------------------|
| `"cosine"`     | `beta * cos(s_t, h_s)`            | Graves et al. 2014 (content)   |
| `"additive"`   | `v^T tanh(W_1 s_t + W_2 h_s)`     | Bahdanau et al. 2015 (concat)  |
| `"dot"`        | `s_t^T h_s`                       | Luong et al. 2015              |
| `"general"`    | `s_t^T W h_s`                     | Luong et al. 2015              |
| `"scaled_dot"` | `s_t^T h_s / sqrt(d_k)`           | Vaswani et al. 2017, eq. 1     |

`s_t` is a query (decoder state), `h_s` a key (encoder output).
"""

import math

import keras
from keras import ops

from tfm.config.rnn_args import SAME_WIDTH_SCORES, validate_score


@keras.saving.register_keras_serializable(package="tfm")
class AttentionScore(keras.layers.Layer):
    """Unnormalised alignment scores `e_ts = score(s_t, h_s)` for all query/key pairs.

    Args:
        score: str. One of `"cosine"`, `"additive"`, `"dot"`, `"general"`,
            `"scaled_dot"` (see the module table). Defaults to `"dot"`.
        units: int. Hidden width `n'` of the additive score's MLP (Bahdanau
            et al., 2015, §A.1.2). Required for `"additive"`, unused otherwise.
        sharpness: float. `beta`, the cosine score's multiplier (Graves et al.'s
            key strength; cosines live in [-1, 1], too flat for a softmax on their
            own). Defaults to `1.0`.
        trainable_sharpness: bool. Learn `beta` (starting from `sharpness`).
            Defaults to `False`.

    Call args:
        query: float `(B, T, Dq)`.
        key: float `(B, S, Dk)`. `Dk` must equal `Dq` for `"cosine"`, `"dot"` and
            `"scaled_dot"`.

    Returns:
        float `(B, T, S)` scores (before the softmax).

    `project_keys` + `score_projected` split the work so a decoder can transform
    the keys once per source sentence instead of once per target step.

    Example:
        >>> score = AttentionScore("additive", units=16)
        >>> e = score(keras.random.normal((2, 3, 8)), keras.random.normal((2, 5, 6)))  # (B, T, Dq), (B, S, Dk)
        >>> tuple(e.shape)                                       # (B, T, S)
        (2, 3, 5)
        >>> dot = AttentionScore("scaled_dot")
        >>> ops.convert_to_numpy(dot(ops.ones((1, 1, 4)), ops.ones((1, 2, 4)))).tolist()  # q . k / sqrt(d_k) = 4 / 2
        [[[2.0, 2.0]]]
    """

    def __init__(self, score="dot", units=None, sharpness=1.0, trainable_sharpness=False, **kwargs):
        super().__init__(**kwargs)
        validate_score(score, units)
        self.score = score
        self.units = units
        self.sharpness = float(sharpness)
        self.trainable_sharpness = bool(trainable_sharpness)
        dtype = self.dtype_policy
        self.query_dense = self.key_dense = self.score_dense = None
        if score == "additive":
            self.query_dense = keras.layers.Dense(units, use_bias=False, name="query_dense", dtype=dtype)  # W_1
            self.key_dense = keras.layers.Dense(units, use_bias=False, name="key_dense", dtype=dtype)  # W_2
            self.score_dense = keras.layers.Dense(1, use_bias=False, name="score_dense", dtype=dtype)  # v
        self.beta = None

    def build(self, query_shape, key_shape):
        query_dim, key_dim = query_shape[-1], key_shape[-1]
        if self.score in SAME_WIDTH_SCORES and query_dim != key_dim:
            raise ValueError(
                f"score={self.score!r} compares queries and keys directly, but the query width "
                f"Dq={query_dim} != key width Dk={key_dim}; use 'general' or 'additive', or equal widths"
            )
        self.key_dim = key_dim
        if self.score == "additive":
            self.query_dense.build(query_shape)
            self.key_dense.build(key_shape)
            self.score_dense.build((None, None, None, self.units))
        elif self.score == "general":
            # W maps keys into the query space: s^T (W h).
            self.key_dense = keras.layers.Dense(query_dim, use_bias=False, name="key_dense", dtype=self.dtype_policy)
            self.key_dense.build(key_shape)
        elif self.score == "cosine" and self.trainable_sharpness:
            self.beta = self.add_weight(
                name="sharpness", shape=(), initializer=keras.initializers.Constant(self.sharpness)
            )

    def project_keys(self, key):
        """The query-independent part of the score: `(B, S, Dk)` -> `(B, S, K)`."""
        if self.score == "additive":
            return self.key_dense(key)  # (B, S, Dk) -> (B, S, units)
        if self.score == "general":
            return self.key_dense(key)  # (B, S, Dk) -> (B, S, Dq)
        if self.score == "cosine":
            return _l2_normalize(key)
        return key

    def score_projected(self, query, projected_keys):
        """Scores from queries `(B, T, Dq)` and `project_keys(key)`: `(B, T, S)`."""
        if self.score == "additive":
            q = ops.expand_dims(self.query_dense(query), 2)  # (B, T, Dq) -> (B, T, 1, units)
            k = ops.expand_dims(projected_keys, 1)  # (B, S, units) -> (B, 1, S, units)
            return ops.squeeze(self.score_dense(ops.tanh(q + k)), -1)  # (B, T, S, units) -> (B, T, S)
        if self.score == "cosine":
            query = _l2_normalize(query)
        scores = ops.matmul(query, ops.swapaxes(projected_keys, -1, -2))  # (B, T, Dq) @ (B, Dq, S) -> (B, T, S)
        if self.score == "scaled_dot":
            # Unit-variance logits for unit-variance q, k, whatever d_k (§3.2.1).
            scores = scores * ops.cast(1.0 / math.sqrt(self.key_dim), scores.dtype)
        elif self.score == "cosine":
            beta = self.beta if self.beta is not None else self.sharpness
            scores = scores * ops.cast(beta, scores.dtype)
        return scores

    def call(self, query, key):
        return self.score_projected(query, self.project_keys(key))

    def compute_output_shape(self, query_shape, key_shape):
        return (query_shape[0], query_shape[1], key_shape[1])

    def get_config(self):
        return {
            **super().get_config(),
            "score": self.score,
            "units": self.units,
            "sharpness": self.sharpness,
            "trainable_sharpness": self.trainable_sharpness,
        }


def _l2_normalize(x, epsilon=1e-6):
    # The epsilon keeps an all-zero vector (e.g. a padded encoder output) at zero, not NaN.
    x32 = ops.cast(x, "float32")
    norm = ops.sqrt(ops.sum(ops.square(x32), axis=-1, keepdims=True) + epsilon**2)
    return ops.cast(x32 / norm, x.dtype)
