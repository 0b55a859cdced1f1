"""Token dropout: whole input tokens replaced by UNK while training (not in the paper)."""

import keras
from keras import ops

from tfm.config.validation import validate_fraction
from tfm.special_tokens import RESERVED_TOKENS, UNK_ID


@keras.saving.register_keras_serializable(package="tfm")
class TokenDropout(keras.layers.Layer):
    """Replaces each input token by `UNK` with probability `rate`, in training only.

    A regulariser for small corpora (word dropout: Sennrich et al., 2016, "Edinburgh Neural Machine
    Translation Systems for WMT 16", §3; Gal & Ghahramani, 2016): the model cannot lean on any one word of
    its input, and learns what to do with an unknown one. Not in the paper, whose §5.4 drops activations
    only. Reserved ids (PAD, UNK, START, END) are never replaced, so padding masks do not change. The
    Transformer applies it to the source and to the shifted target it is fed (`token_dropout` in
    `TransformerConfig`); the labels stay whole.

    Args:
        rate: float in [0, 1). Probability of replacing a token. Defaults to `0.0` (the identity).
        seed: int or None. Seed of the layer's random stream. Defaults to `None`.

    Call args:
        ids: int `(B, T)`, token ids, 0 = padding.
        training: bool.

    Returns:
        int `(B, T)`, `ids` with some tokens set to `UNK_ID` (1) when training, else `ids`.

    Example:
        >>> layer = TokenDropout(0.5, seed=0)
        >>> ids = ops.array([[2, 7, 8, 9, 3, 0]])                # START, three words, END, PAD
        >>> ops.convert_to_numpy(layer(ids)).tolist()            # inference: unchanged
        [[2, 7, 8, 9, 3, 0]]
        >>> out = ops.convert_to_numpy(layer(ids, training=True))[0]
        >>> [int(t) for t in out[[0, 4, 5]]], set(out[1:4].tolist()) <= {1, 7, 8, 9}
        ([2, 3, 0], True)
    """

    def __init__(self, rate=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = validate_fraction("rate", rate)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed) if self.rate > 0 else None
        self.built = True

    def call(self, ids, training=None):
        if not training or self.rate == 0.0:
            return ids
        drop = keras.random.uniform(ops.shape(ids), seed=self.seed_generator) < self.rate
        replaceable = ops.greater_equal(ids, len(RESERVED_TOKENS))
        return ops.where(ops.logical_and(drop, replaceable), ops.cast(UNK_ID, ids.dtype), ids)

    def compute_output_shape(self, ids_shape):
        return ids_shape

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}
