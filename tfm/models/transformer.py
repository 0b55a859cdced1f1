"""The Transformer (Vaswani et al., 2017, §3, Figure 1)."""

import keras
from keras import ops

from tfm.config import TransformerConfig
from tfm.layers.decoder import Decoder
from tfm.layers.encoder import Encoder
from tfm.layers.masks import padding_mask
from tfm.layers.positional_encoding import PositionalEmbedding, PositionalEncoding
from tfm.layers.token_dropout import TokenDropout
from tfm.layers.token_embedding import TokenEmbedding
from tfm.models.decoding_state import DecodingState
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

    The pieces, each with one fixed output: `encoder_output` -> `(memory, memory_mask)`, `decode` ->
    logits, `attention_weights` -> every layer's softmax attention weights (teacher forced). Incremental
    decoding, the interface `Seq2Seq` shares (`tfm.decoding` drives either through it):
    `encode` -> a `DecodingState`, `decode_step` -> `(logits, state)`.

    Build one with `Transformer(config)` or `Transformer.from_preset(name | config | run folder, **overrides)`
    (keras-hub's front door; a run folder gives the trained model).

    Example:
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)  # D = 64
        >>> source_ids = ops.array([[5, 6, 7, 0], [8, 9, 10, 11]])  # (B, S), 0 = padding
        >>> target_in = ops.array([[2, 12, 13], [2, 14, 0]])     # (B, T), START + y[:-1]
        >>> tuple(model((source_ids, target_in)).shape)          # logits (B, T, V)
        (2, 3, 30)
        >>> memory, memory_mask = model.encoder_output(source_ids)
        >>> tuple(memory.shape), ops.convert_to_numpy(memory_mask).tolist()  # (B, S, D), (B, S)
        ((2, 4, 64), [[True, True, True, False], [True, True, True, True]])
        >>> maps = model.attention_weights(source_ids, target_in)
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
            self.source_embedding = TokenEmbedding(c.vocab_size, c.d_model, name="shared_embedding", dtype=dtype)
            self.target_embedding = self.source_embedding
            self.output_projection = None
        else:
            self.source_embedding = TokenEmbedding(c.vocab_size, c.d_model, name="source_embedding", dtype=dtype)
            self.target_embedding = TokenEmbedding(c.vocab_size, c.d_model, name="target_embedding", dtype=dtype)
            self.output_projection = keras.layers.Dense(c.vocab_size, name="output_projection", dtype="float32")
        # Room for outputs up to input length + extra_positions tokens (§6.1), then END.
        positions = c.max_length + c.extra_positions + 1
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
            activation_dropout=c.activation_dropout, norm_first=c.norm_first, layer_norm_epsilon=c.layer_norm_epsilon,
            dtype=dtype)
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

    # Limits the search reads (tfm.decoding) ---------------------------------
    @property
    def max_source_length(self):
        """int: the longest source the model takes, `config.max_length` subwords (the search truncates longer ones).

        Example:
            >>> Transformer.from_preset("tiny", vocab_size=30, num_layers=1, max_length=16).max_source_length
            16
        """
        return int(self.config.max_length)

    @property
    def max_decode_steps(self):
        """int: decoder positions the model has, `max_length + extra_positions + 1` (§6.1: room for an output of
        input length + `extra_positions` subwords, then END): no search runs more steps.

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1, max_length=16, extra_positions=4)
            >>> model.max_decode_steps                            # 16 + 4 + 1
            21
        """
        return int(self.config.max_length + self.config.extra_positions + 1)

    # Pieces used by training, decoding and the notebooks -------------------
    def _embed_source(self, source_ids, training):
        x = self.source_embedding(source_ids)  # (B, S) -> (B, S, D), scaled by sqrt(D)
        return self.source_dropout(self.source_positions(x), training=training)

    def _embed_target(self, target_ids, training, start_index=0):
        y = self.target_embedding(target_ids)  # (B, T) -> (B, T, D)
        return self.target_dropout(self.target_positions(y, start_index=start_index), training=training)

    def encoder_output(self, source_ids, training=False):
        """The encoder stack on the embedded source (§3.1): what the decoder attends to.

        Args:
            source_ids: int `(B, S)`, 0 = padding.
            training: bool.

        Returns:
            `(memory (B, S, D), memory_mask (B, S))`: the encoder output and True where the source is a
            real token. `decode` takes both.

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
            >>> memory, memory_mask = model.encoder_output(ops.array([[5, 6, 0]]))
            >>> tuple(memory.shape), ops.convert_to_numpy(memory_mask).tolist()
            ((1, 3, 64), [[True, True, False]])
        """
        memory_mask = padding_mask(source_ids)  # (B, S)
        memory = self.encoder(self._embed_source(source_ids, training), padding_mask=memory_mask, training=training)
        return memory, memory_mask

    def project(self, x):
        """Decoder states -> next-token logits (§3.4: the embedding matrix transposed when shared).

        Args:
            x: float `(B, T, D)`.

        Returns:
            float32 `(B, T, V)`.

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
            >>> tuple(model.project(keras.random.normal((2, 3, 64))).shape)
            (2, 3, 30)
        """
        if self.output_projection is None:
            return self.target_embedding(x, reverse=True)
        return self.output_projection(x)

    def decode(self, target_ids, memory, memory_mask, training=False):
        """The teacher-forced decoder stack (§3.1): every target position at once, under the causal mask.

        Args:
            target_ids: int `(B, T)`, the shifted target (START + y[:-1]), 0 = padding.
            memory: float `(B, S, D)`, from `encoder_output`.
            memory_mask: bool `(B, S)`, True = real source token, from `encoder_output`.
            training: bool.

        Returns:
            float32 logits `(B, T, V)`.

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
            >>> source_ids, target_in = ops.array([[5, 6, 0]]), ops.array([[2, 9]])
            >>> logits = model.decode(target_in, *model.encoder_output(source_ids))
            >>> bool(ops.all(ops.abs(logits - model((source_ids, target_in))) < 1e-5))   # the model's own pass
            True
        """
        hidden = self.decoder(self._embed_target(target_ids, training), memory, memory_mask=memory_mask,
                              training=training)
        return self.project(hidden)

    def attention_weights(self, source_ids, target_ids):
        """Every layer's attention weights, after the softmax, on one teacher-forced pass (inference: no dropout).

        The weights of eq. (1) per head (§3.2.1), for the three kinds of attention of §3.2.3.

        Args:
            source_ids: int `(B, S)`.
            target_ids: int `(B, T)`, the shifted target (START + y[:-1]).

        Returns:
            dict of lists, one entry per layer: `encoder_self_attention` `(B, N, S, S)`,
            `decoder_self_attention` `(B, N, T, T)`, `cross_attention` `(B, N, T, S)`; each row sums to 1.

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
            >>> maps = model.attention_weights(ops.array([[5, 6, 0]]), ops.array([[2, 9]]))
            >>> {name: tuple(w[0].shape) for name, w in maps.items()}
            {'encoder_self_attention': (1, 4, 3, 3), 'decoder_self_attention': (1, 4, 2, 2),
             'cross_attention': (1, 4, 2, 3)}
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
        memory, memory_mask = self.encoder_output(source_ids, training=training)
        return self.decode(target_ids, memory, memory_mask, training=training)

    # Incremental decoding (the interface tfm.decoding drives) ---------------
    def encode(self, source_ids, training=False, max_length=None):
        """Start incremental decoding (§6.1): encode the source once, project it for every decoder layer once.

        Args:
            source_ids: int `(B, S)`, 0 = padding.
            training: bool.
            max_length: int, scalar tensor or None. None: each layer's self-attention cache starts empty
                and grows one position per step. An int: it is a fixed buffer of that many positions,
                written in place (the shapes XLA needs); `decode_step` then runs at most that many steps.

        Returns:
            `DecodingState`: `memory`, per decoder layer the encoder output's cross-attention
            `(keys (B, N, S, d_k), values (B, N, S, d_v))`; `memory_mask` `(B, S)`; `cache`, per decoder
            layer the self-attention cache: `(keys (B, N, 0, d_k), values (B, N, 0, d_v))`, or zeros
            `(B, 2, N, max_length, H)` with `max_length`; `prepared`, `{"logit_table": (D, V)}`, the shared
            embedding transposed once for every step's pre-softmax projection (§3.4).

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)   # N = 4 heads of 16
            >>> state = model.encode(ops.array([[5, 6, 7, 0], [8, 9, 10, 11]]))
            >>> keys, values = state.memory[0]                     # layer 1's view of the source
            >>> tuple(keys.shape), tuple(state.memory_mask.shape), tuple(state.cache[0][0].shape)
            ((2, 4, 4, 16), (2, 4), (2, 4, 0, 16))
            >>> tuple(model.encode(ops.array([[5, 6]]), max_length=9).cache[0].shape)   # a fixed buffer
            (1, 2, 4, 9, 16)
            >>> tuple(state.prepared["logit_table"].shape)          # (D, V)
            (64, 30)
        """
        memory, memory_mask = self.encoder_output(source_ids, training=training)
        batch = ops.shape(source_ids)[0]
        layers = self.decoder.layers
        if max_length is None:
            cache = [layer.self_attention.empty_cache_pair(batch) for layer in layers]
        else:
            cache = [layer.self_attention.empty_cache(batch, max_length) for layer in layers]
        return DecodingState(memory=self.decoder.compute_cross_caches(memory), memory_mask=memory_mask, cache=cache,
                             prepared=self._prepare_decoding())

    def _prepare_decoding(self):
        """`DecodingState.prepared`: the shared table transposed, `(D, V)`, once per search (§3.4's `x E^T` as
        a product with a row-major matrix); `()`, nothing, with a separate output projection."""
        if self.output_projection is not None:
            return ()
        return {"logit_table": self.target_embedding.reverse_table()}

    def decode_step(self, token_ids, index, state):
        """One output position for every hypothesis, reading and extending the cache (§6.1's decoding).

        Only token `index` goes through the decoder: the earlier positions' self-attention keys and values
        are in `state.cache` (the causal mask makes them final once computed) and the source's in
        `state.memory`. The logits equal those of a teacher-forced pass at position `index`.

        Args:
            token_ids: int `(N,)` (or `(N, 1)`), the token at position `index` of each hypothesis.
            index: int or scalar tensor, its position (0 for START).
            state: `DecodingState` from `encode` or the previous step; `state.cache` has `N` rows, the memory
                `B` rows with `N = B * G` (G hypotheses per sentence at rows `b * G + j`; G = 1 without beams).

        Returns:
            `(logits (N, V) float32, state)`: the new state holds the cache with position `index` added.

        Example:
            >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
            >>> source_ids, target_in = ops.array([[5, 6, 0]]), ops.array([[2, 9, 4]])
            >>> state, steps = model.encode(source_ids), []
            >>> for t in range(3):
            ...     logits, state = model.decode_step(target_in[:, t], t, state)
            ...     steps.append(logits)
            >>> full = model((source_ids, target_in))                # (B, T, V) teacher forced
            >>> bool(ops.all(ops.abs(ops.stack(steps, axis=1) - full) < 1e-4))
            True
        """
        if len(token_ids.shape) == 1:
            token_ids = token_ids[:, None]  # (N,) -> (N, 1)
        y = self._embed_target(token_ids, False, start_index=index)  # (N, 1, D)
        x, cache = self.decoder.call_with_cache(y, state.cache, index, state.memory,
                                                memory_mask=state.memory_mask, training=False)
        x = x[:, 0]  # (N, 1, D) -> (N, D): a 2-D product below, no shape ops around it
        table = dict(state.prepared or {}).get("logit_table")  # E^T (D, V), transposed once per search by encode
        if table is None:  # a separate output projection, or a state without what encode prepared
            logits = self.project(x)  # (N, V)
        else:
            logits = self.target_embedding.reverse(x, table)  # (N, V)
        return logits, state._replace(cache=cache)

    def get_config(self):
        return {**keras.layers.Layer.get_config(self), "config": self.config.to_dict()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        return cls(TransformerConfig.from_dict(config.pop("config")), **config)

