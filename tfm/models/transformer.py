"""The Transformer (Vaswani et al., 2017, §3, Figure 1)."""

import keras
from keras import ops

from tfm.config.configs import TransformerConfig
from tfm.layers.decoder import Decoder
from tfm.layers.encoder import Encoder
from tfm.layers.positional_encoding import PositionalEmbedding, PositionalEncoding
from tfm.layers.shared_embedding import SharedEmbedding
from tfm.layers.token_dropout import TokenDropout
from tfm.layers.masks import padding_mask
from tfm.models.presets import PresetMixin


@keras.saving.register_keras_serializable(package="tfm")
class Transformer(PresetMixin, keras.Model):
    """Encoder-decoder Transformer on token ids; returns next-token logits.

    Source and target go through the (shared) embedding scaled by sqrt(D), plus
    positional encodings, plus dropout (§3.4, §3.5, §5.4); the encoder's output
    is attended by every decoder layer; the decoder's output is projected to the
    vocabulary with the transposed embedding matrix when `share_embeddings`.

    Args:
        config: `TransformerConfig` (or its dict).

    Call args:
        inputs: `(source_ids, target_ids)`, int `(B, S)` and `(B, T)`, 0 = padding.
            `target_ids` is the shifted target (START + y[:-1]).
        training: bool.

    Returns:
        float32 logits `(B, T, V)`.

    The pieces, each with one fixed output: `encode` -> `(memory, memory_mask)`, `decode` ->
    logits, `attention_scores` -> every layer's attention weights (teacher forced), and for
    incremental decoding `init_cache` + `decode_step` -> `(logits, cache)`.

    Build one with `Transformer.from_preset(name_or_config, **overrides)` (keras-hub's front door).

    Example:
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)  # D = 64
        >>> source_ids = ops.array([[5, 6, 7, 0], [8, 9, 10, 11]])  # (B, S), 0 = padding
        >>> target_in = ops.array([[2, 12, 13], [2, 14, 0]])     # (B, T), START + y[:-1]
        >>> tuple(model((source_ids, target_in)).shape)          # logits (B, T, V)
        (2, 3, 30)
        >>> memory, memory_mask = model.encode(source_ids)
        >>> tuple(memory.shape), ops.convert_to_numpy(memory_mask).tolist()  # (B, S, D), (B, S)
        ((2, 4, 64), [[True, True, True, False], [True, True, True, True]])
        >>> maps = model.attention_scores(source_ids, target_in)
        >>> tuple(maps["cross_attention"][0].shape)              # layer 1: (B, N, T, S)
        (2, 4, 3, 4)
    """

    config_class = TransformerConfig
    default_name = "transformer"

    def __init__(self, config, **kwargs):
        if isinstance(config, dict):
            config = TransformerConfig.from_dict(config)
        super().__init__(**kwargs)
        self.config = config
        c = config
        dtype = self.dtype_policy
        if c.share_embeddings:
            self.source_embedding = SharedEmbedding(c.vocab_size, c.d_model, name="shared_embedding", dtype=dtype)
            self.target_embedding = self.source_embedding
            self.output_projection = None
        else:
            self.source_embedding = SharedEmbedding(c.vocab_size, c.d_model, name="source_embedding", dtype=dtype)
            self.target_embedding = SharedEmbedding(c.vocab_size, c.d_model, name="target_embedding", dtype=dtype)
            self.output_projection = keras.layers.Dense(c.vocab_size, name="output_projection", dtype="float32")
        # Room for decoding up to (input length + max_extra_length) tokens (§6.1).
        positions = c.max_length + c.max_extra_length + 1
        if c.positional == "sinusoidal":
            self.source_positions = PositionalEncoding(positions, name="positional_encoding", dtype=dtype)
            self.target_positions = self.source_positions
        else:
            self.source_positions = PositionalEmbedding(positions, name="source_positions", dtype=dtype)
            self.target_positions = PositionalEmbedding(positions, name="target_positions", dtype=dtype)
        self.source_dropout = keras.layers.Dropout(c.dropout, dtype=dtype)
        self.target_dropout = keras.layers.Dropout(c.dropout, dtype=dtype)
        # Word dropout on the inputs of a training pass (`call` only: decoding never drops tokens).
        self.source_token_dropout = TokenDropout(c.token_dropout, name="source_token_dropout")
        self.target_token_dropout = TokenDropout(c.token_dropout, name="target_token_dropout")
        stack = dict(
            num_layers=c.num_layers, num_heads=c.num_heads, d_ff=c.d_ff, key_dim=c.head_key_dim,
            value_dim=c.head_value_dim, dropout=c.dropout, attention_dropout=c.attention_dropout,
            activation_dropout=c.activation_dropout, norm_first=c.norm_first, layer_norm_epsilon=c.layer_norm_epsilon, dtype=dtype)
        self.encoder = Encoder(name="encoder", **stack)
        self.decoder = Decoder(name="decoder", **stack)

    def build(self, input_shape=None):
        seq, hidden = (None, None), (None, None, self.config.d_model)
        # Shared sublayers appear twice: build each once.
        for layer, shape in [(self.source_embedding, seq), (self.target_embedding, seq),
                             (self.source_positions, hidden), (self.target_positions, hidden),
                             (self.encoder, hidden), (self.output_projection, hidden)]:
            if layer is not None and not layer.built:
                layer.build(shape)
        self.decoder.build(hidden, hidden)
        self.built = True

    # Pieces used by training, decoding and the notebooks -------------------
    def _embed_source(self, source_ids, training):
        x = self.source_embedding(source_ids)  # (B, S) -> (B, S, D), scaled by sqrt(D)
        return self.source_dropout(self.source_positions(x), training=training)

    def _embed_target(self, target_ids, training):
        y = self.target_embedding(target_ids)  # (B, T) -> (B, T, D)
        return self.target_dropout(self.target_positions(y), training=training)

    def encode(self, source_ids, training=False):
        """`(B, S)` ids -> `(memory (B, S, D), memory_mask (B, S))`: the encoder output and its padding."""
        memory_mask = padding_mask(source_ids)  # (B, S)
        memory = self.encoder(self._embed_source(source_ids, training), padding_mask=memory_mask, training=training)
        return memory, memory_mask

    def project(self, x):
        """Decoder states `(B, T, D)` -> float32 logits `(B, T, V)`."""
        if self.output_projection is None:
            return self.target_embedding(x, reverse=True)
        return self.output_projection(x)

    def decode(self, target_ids, memory, memory_mask, training=False):
        """Teacher-forced decoder: `(B, T)` ids -> logits `(B, T, V)`."""
        hidden = self.decoder(self._embed_target(target_ids, training), memory, memory_mask=memory_mask,
                              training=training)
        return self.project(hidden)

    def attention_scores(self, source_ids, target_ids):
        """Every layer's attention weights on one teacher-forced pass (inference: no dropout).

        Args:
            source_ids: int `(B, S)`.
            target_ids: int `(B, T)`, the shifted target (START + y[:-1]).

        Returns:
            dict of lists, one entry per layer: `encoder_self_attention` `(B, N, S, S)`,
            `decoder_self_attention` `(B, N, T, T)`, `cross_attention` `(B, N, T, S)`.
        """
        memory_mask = padding_mask(source_ids)  # (B, S)
        memory, encoder_weights = self.encoder.call_with_scores(
            self._embed_source(source_ids, False), padding_mask=memory_mask, training=False)
        _, self_weights, cross_weights = self.decoder.call_with_scores(
            self._embed_target(target_ids, False), memory, memory_mask=memory_mask, training=False)
        return {"encoder_self_attention": encoder_weights, "decoder_self_attention": self_weights,
                "cross_attention": cross_weights}

    def call(self, inputs, training=None):
        if isinstance(inputs, dict):
            source_ids, target_ids = inputs["source_ids"], inputs["target_ids"]
        else:
            source_ids, target_ids = inputs
        source_ids = self.source_token_dropout(source_ids, training=training)  # identity unless token_dropout
        target_ids = self.target_token_dropout(target_ids, training=training)
        memory, memory_mask = self.encode(source_ids, training=training)
        return self.decode(target_ids, memory, memory_mask, training=training)

    # Incremental decoding (used by tfm.decoding) ---------------------------
    def init_cache(self, memory, max_length):
        """Caches for `decode_step`: self-attention zeros `(B, 2, N, max_length, H)` and the
        memory's keys/values `(B, 2, N, S, H)`, one of each per decoder layer."""
        batch = ops.shape(memory)[0]
        return {
            "self": [layer.self_attention.empty_cache(batch, max_length) for layer in self.decoder.layers],
            "cross": self.decoder.compute_cross_caches(memory),
        }

    def decode_step(self, token_ids, index, cache, memory_mask):
        """One decoder position with cached keys/values.

        Args:
            token_ids: int `(B, 1)`, the token at position `index`.
            index: int scalar, its position.
            cache: dict from `init_cache` (updated copy returned).
            memory_mask: bool `(B, S)`.

        Returns:
            `(logits (B, V) float32, cache)`.
        """
        y = self.target_embedding(token_ids)  # (B, 1) -> (B, 1, D)
        y = self.target_positions(y, start_index=index)
        x, self_caches = self.decoder.call_with_cache(y, cache["self"], index, cache["cross"],
                                                      memory_mask=memory_mask, training=False)
        logits = self.project(x)[:, 0]  # (B, 1, V) -> (B, V)
        return logits, {"self": self_caches, "cross": cache["cross"]}

    def get_config(self):
        return {**keras.layers.Layer.get_config(self), "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(TransformerConfig.from_dict(config.pop("config")), **config)


def build_transformer(config):
    """A built `Transformer` for `config` (a `TransformerConfig` or a preset name): `Transformer.from_preset`.

    Returns:
        `keras.Model` taking `(source_ids, target_ids)` int tensors (0 = padding)
        and returning float32 logits `(B, T, vocab_size)`.

    Example:
        >>> model = build_transformer("tiny")                    # TransformerConfig.tiny()
        >>> model.config.num_layers, model.config.d_model, model.built
        (2, 64, True)
    """
    return Transformer.from_preset(config)
