"""What the encoder and decoder blocks, and their stacks, have in common (Vaswani et al., 2017, §3.1).

`TransformerBlock` holds the arguments, feed-forward sub-layer, norms and attention
factory shared by `EncoderLayer` and `DecoderLayer`; `TransformerStack` builds `N` of a
block class plus the final LayerNorm that pre-LN needs. Neither is used on its own.
"""

import keras

from tfm.layers.feed_forward import FeedForward
from tfm.layers.multi_head_attention import MultiHeadAttention


def ensure_built(layer, *tensors):
    """Build `layer` from its tensor arguments' shapes unless built: `call_with_*` methods are plain
    methods, and Layer.__call__, which builds on first use, does not run for them.

    Args:
        layer: a `keras.layers.Layer`.
        *tensors: the tensors its `build` takes shapes from, in order (None where it takes none).

    Example:
        >>> dense = keras.layers.Dense(3)
        >>> ensure_built(dense, keras.ops.ones((2, 5)))
        >>> dense.built, tuple(dense.kernel.shape)
        (True, (5, 3))
    """
    if not layer.built:
        layer.build(*[None if t is None else tuple(t.shape) for t in tensors])


class TransformerBlock(keras.layers.Layer):
    """Base of `EncoderLayer` and `DecoderLayer`: see those for Args and Call args.

    Args:
        num_heads, d_ff, key_dim, value_dim: as in `EncoderLayer`.
        dropout, attention_dropout, activation_dropout: as in `EncoderLayer`.
        norm_first, layer_norm_epsilon: as in `EncoderLayer`.
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`).

    Example:
        >>> from tfm.layers.encoder_layer import EncoderLayer
        >>> issubclass(EncoderLayer, TransformerBlock)
        True
        >>> EncoderLayer(num_heads=2, d_ff=16).get_config()["d_ff"]
        16
    """

    def __init__(self, num_heads, d_ff, key_dim=None, value_dim=None, dropout=0.1,
                 attention_dropout=0.0, norm_first=False, layer_norm_epsilon=1e-6, activation_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.d_ff = int(d_ff)
        self.key_dim = key_dim
        self.value_dim = value_dim
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.activation_dropout = float(activation_dropout)
        self.norm_first = bool(norm_first)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.ffn = FeedForward(d_ff, dropout=self.activation_dropout, name="feed_forward", dtype=self.dtype_policy)
        self.ffn_norm = self._norm("feed_forward_norm")

    def _norm(self, name):
        return keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, name=name, dtype=self.dtype_policy)

    def _dropout(self):
        return keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def _attention(self, name, d_model):
        if self.key_dim is None and d_model % self.num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={self.num_heads}")
        key_dim = self.key_dim or d_model // self.num_heads
        return MultiHeadAttention(self.num_heads, key_dim, self.value_dim or key_dim,
                                  dropout=self.attention_dropout, name=name, dtype=self.dtype_policy)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads, "d_ff": self.d_ff, "key_dim": self.key_dim,
            "value_dim": self.value_dim, "dropout": self.dropout,
            "attention_dropout": self.attention_dropout, "norm_first": self.norm_first,
            "layer_norm_epsilon": self.layer_norm_epsilon, "activation_dropout": self.activation_dropout,
        }


class TransformerStack(keras.layers.Layer):
    """Base of `Encoder` and `Decoder`: `num_layers` blocks of `block_class`, then a final
    LayerNorm when pre-LN (post-LN blocks already end normalised).

    Args:
        num_layers: int. `N`, blocks in the stack.
        num_heads, d_ff, key_dim, value_dim: passed to every block (see `EncoderLayer`).
        dropout, attention_dropout, activation_dropout: passed to every block.
        norm_first, layer_norm_epsilon: passed to every block; `norm_first` also adds the final LayerNorm.
        **kwargs: `keras.layers.Layer` arguments (`name`, `dtype`).

    Example:
        >>> from tfm.layers.encoder import Encoder
        >>> stack = Encoder(num_layers=2, num_heads=2, d_ff=16, norm_first=True)
        >>> isinstance(stack, TransformerStack), len(stack.layers), stack.final_norm is not None
        (True, 2, True)
    """

    block_class = None

    def __init__(self, num_layers, num_heads, d_ff, key_dim=None, value_dim=None, dropout=0.1,
                 attention_dropout=0.0, norm_first=False, layer_norm_epsilon=1e-6, activation_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if int(num_layers) <= 0:
            raise ValueError(f"num_layers={num_layers} must be positive")
        self.num_layers = int(num_layers)
        self.layer_kwargs = dict(
            num_heads=num_heads, d_ff=d_ff, key_dim=key_dim, value_dim=value_dim, dropout=dropout,
            attention_dropout=attention_dropout, norm_first=norm_first,
            layer_norm_epsilon=layer_norm_epsilon, activation_dropout=activation_dropout)
        self.layers = [self.block_class(**self.layer_kwargs, name=f"layer_{i}", dtype=self.dtype_policy)
                       for i in range(self.num_layers)]
        self.final_norm = (
            keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, name="final_norm", dtype=self.dtype_policy)
            if norm_first else None)

    def _build_final_norm(self, x_shape):
        if self.final_norm is not None:
            self.final_norm.build(x_shape)
        self.built = True

    def _final(self, x):
        return x if self.final_norm is None else self.final_norm(x)

    def get_config(self):
        return {**super().get_config(), "num_layers": self.num_layers, **self.layer_kwargs}
