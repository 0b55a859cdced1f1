"""Recurrent decoder with no, Bahdanau or Luong attention.

Three decoders from the papers the Transformer replaced:

- `attention=None`: Sutskever et al. (2014) / Cho et al. (2014). The decoder
  starts from the encoder's final state and never sees the source again: one
  fixed-size vector must carry the whole sentence (the bottleneck attention removes).
- `attention="bahdanau"` (Bahdanau et al., 2015, §3.1): at step `t` the
  *previous* state `s_{t-1}` queries the encoder outputs; the context `c_t` is
  concatenated to the input embedding, and the readout sees `[s_t; c_t]`.
- `attention="luong"` (Luong et al., 2015, §3): the *current* output `h_t`
  queries the encoder outputs; the attentional state `h~_t = tanh(W_c [c_t; h_t])`
  feeds the readout, and, with `input_feeding`, the next step's input (§3.3).
"""

import keras
from keras import ops

from tfm.config.rnn_args import resolve_attention_args, validate_rnn_args
from tfm.layers.attention import Attention
from tfm.layers.rnn_encoder import states_per_layer


@keras.saving.register_keras_serializable(package="tfm")
class RNNDecoder(keras.layers.Layer):
    """Target embedding + stacked LSTM/GRU cells [+ attention] + vocabulary projection.

    Args:
        vocab_size: int. `V`.
        embedding_dim: int. Target embedding width `E`.
        units: int. Hidden width `U` of every recurrent layer.
        cell: str. `"lstm"` or `"gru"`. Defaults to `"lstm"`.
        attention: None, `"bahdanau"` or `"luong"`. Defaults to None.
        score: str. Attention score (see `AttentionScore`); None = the paper's:
            `"additive"` (Bahdanau) or `"general"` (Luong).
        attention_units: int. Additive score MLP width; None = `units`.
        input_feeding: bool. Luong's input feeding: `h~_{t-1}` joins the input at
            step `t`. Defaults to `False`.
        num_layers: int. Stacked recurrent layers. Defaults to `1`.
        dropout: float. Dropout on the embeddings, between layers and before the
            projection (fresh masks at every time step). Defaults to `0.0`.

    Call args (teacher forcing):
        target_ids: int `(B, T)`, the shifted target (START + y[:-1]).
        encoder_outputs: float `(B, S, Dv)`; needed with attention, ignored without.
        initial_state: flat list of `(B, U)` cell states, per layer bottom to top
            (`[h, c]` LSTM, `[h]` GRU), e.g. the encoder's final state; None = zeros.
        memory_mask: bool `(B, S)`, True = real source token.
        training: bool.

    Returns:
        float32 logits `(B, T, V)`. With attention, `call_with_scores` (same arguments)
        returns `(logits, weights (B, T, S))`.

    Incremental decoding: `state = decoder.start_state(initial_state, batch_size)`,
    then repeatedly `logits, state, weights = decoder.step(token_ids, state,
    encoder_outputs, memory_mask)`. It gives the same logits as teacher forcing.
    `state` is a flat list of batch-first tensors: the cell states as in
    `initial_state`, then, with `input_feeding`, `h~_{t-1}` `(B, U)`.

    Example:
        >>> decoder = RNNDecoder(vocab_size=20, embedding_dim=8, units=16, attention="bahdanau")
        >>> target_in = ops.array([[2, 5, 6, 0], [2, 7, 8, 9]])  # (B, T), START first, 0 = padding
        >>> encoder_outputs = keras.random.normal((2, 5, 12))    # (B, S, Dv)
        >>> tuple(decoder(target_in, encoder_outputs).shape)     # logits (B, T, V)
        (2, 4, 20)
    """

    def __init__(
        self,
        vocab_size,
        embedding_dim,
        units,
        cell="lstm",
        attention=None,
        score=None,
        attention_units=None,
        input_feeding=False,
        num_layers=1,
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        # The teacher-forced loop is an `ops.scan` (a while loop without a static
        # trip count), which XLA cannot differentiate; like Keras' own LSTM/GRU on
        # GPU, opt out so `jit_compile="auto"` picks graph mode.
        self.supports_jit = False
        validate_rnn_args(cell, num_layers, dropout)
        score, attention_units = resolve_attention_args(attention, score, units, attention_units, input_feeding)
        self.vocab_size = vocab_size
        self.embedding_dim = embedding_dim
        self.units = units
        self.cell = cell
        self.attention = attention
        self.score = score
        self.attention_units = attention_units
        self.input_feeding = bool(input_feeding)
        self.num_layers = num_layers
        self.dropout = float(dropout)
        dtype = self.dtype_policy
        self.embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="embedding", dtype=dtype)
        cell_cls = keras.layers.LSTMCell if cell == "lstm" else keras.layers.GRUCell
        self.cells = [cell_cls(units, name=f"{cell}_cell_{i}", dtype=dtype) for i in range(num_layers)]
        self.attention_layer = None
        self.attentional_dense = None
        if attention is not None:
            self.attention_layer = Attention(score=score, units=attention_units, name="attention", dtype=dtype)
        if attention == "luong":
            # W_c of h~_t = tanh(W_c [c_t; h_t]) (Luong et al., eq. 5).
            self.attentional_dense = keras.layers.Dense(
                units, activation="tanh", use_bias=False, name="attentional_dense", dtype=dtype
            )
        self.dropout_layer = keras.layers.Dropout(self.dropout, name="dropout", dtype=dtype)
        self.output_projection = keras.layers.Dense(vocab_size, name="output_projection", dtype=dtype)

    # Shapes ---------------------------------------------------------------
    @property
    def state_size(self):
        """Widths of the `step` state tensors, in order (each is `(B, width)`)."""
        sizes = [self.units] * (self.num_layers * states_per_layer(self.cell))
        return sizes + ([self.units] if self.input_feeding else [])

    def build(self, target_ids_shape, encoder_outputs_shape=None, initial_state_shape=None, memory_mask_shape=None):
        batch = tuple(target_ids_shape)[0]
        self.embedding.build(tuple(target_ids_shape))
        value_dim = 0
        if self.attention is not None:
            if encoder_outputs_shape is None:
                raise ValueError(f"attention={self.attention!r} needs encoder_outputs (B, S, Dv); got None")
            value_dim = encoder_outputs_shape[-1]
            self.attention_layer.build((batch, self.units), tuple(encoder_outputs_shape))
        width = self.embedding_dim + (value_dim if self.attention == "bahdanau" else 0)
        width += self.units if self.input_feeding else 0
        for cell in self.cells:
            cell.build((batch, width))
            width = self.units
        if self.attention == "luong":
            self.attentional_dense.build((batch, value_dim + self.units))
        readout = self.units + (value_dim if self.attention == "bahdanau" else 0)
        self.output_projection.build((batch, None, readout))

    # State ----------------------------------------------------------------
    def start_state(self, initial_state=None, batch_size=None):
        """The `step` state before the first target token.

        Args:
            initial_state: flat list of cell states `(B, U)` (see class docstring), or None for zeros.
            batch_size: int or scalar tensor; needed when `initial_state` is None.

        Returns:
            flat list of tensors, shapes `(B, w)` for `w` in `state_size`.
        """
        n_cell = self.num_layers * states_per_layer(self.cell)
        if initial_state is None:
            if batch_size is None:
                raise ValueError("start_state needs initial_state or batch_size")
            state = [ops.zeros((batch_size, self.units), self.compute_dtype) for _ in range(n_cell)]
        else:
            state = [ops.cast(s, self.compute_dtype) for s in initial_state]
            if len(state) != n_cell:
                raise ValueError(
                    f"initial_state has {len(state)} tensors; a {self.num_layers}-layer {self.cell} decoder "
                    f"needs {n_cell} ({states_per_layer(self.cell)} per layer)"
                )
            batch_size = ops.shape(state[0])[0]
        if self.input_feeding:
            state.append(ops.zeros((batch_size, self.units), self.compute_dtype))
        return state

    # One step (shared by teacher forcing and incremental decoding) ---------
    def _run_cells(self, x, cell_states, between_masks=None):
        """Stacked cells, one time step: `(B, in)` -> top output `(B, U)`, new cell states."""
        k = states_per_layer(self.cell)
        new_states = []
        for i, cell in enumerate(self.cells):
            if i > 0 and between_masks is not None:
                x = x * between_masks[i - 1]
            x, state = cell(x, list(cell_states[i * k : (i + 1) * k]))  # (B, in) -> (B, U)
            new_states.extend(state)
        return x, new_states

    def _attend_step(self, query, encoder_outputs, keys, memory_mask):
        """One step's attention: `query (N, U)` for `N = B * G` rows against `B` memories, `G` consecutive
        rows per memory (the beams of a sentence, rows `b * G + j`; `G = 1` otherwise).

        Each memory is read once for its G queries, as G query positions of one sentence, instead of
        being copied G times. Returns `(context (N, Dv), weights (N, S))`.
        """
        # Static sizes where known, so that the teacher-forced scan keeps its carry's shapes.
        dim = lambda x, axis: (  # noqa: E731  (one line, two uses below)
            x.shape[axis] if x.shape[axis] is not None else ops.shape(x)[axis])
        batch, rows = dim(encoder_outputs, 0), dim(query, 0)
        grouped = ops.reshape(query, (batch, rows // batch, query.shape[-1]))  # (N, U) -> (B, G, U)
        context, weights = self.attention_layer.attend(grouped, encoder_outputs, keys, memory_mask)  # (B, G, .)
        return (ops.reshape(context, (rows, context.shape[-1])),  # (B, G, Dv) -> (N, Dv)
                ops.reshape(weights, (rows, dim(weights, -1))))  # (B, G, S) -> (N, S)

    def _decode_step(self, x, state, encoder_outputs, keys, memory_mask, between_masks=None):
        """Embedded input `(N, E)` -> (readout `(N, O)`, new state, weights `(N, S)` or None); `N` may be
        a multiple of the memories' `B` (see `_attend_step`)."""
        n_cell = self.num_layers * states_per_layer(self.cell)
        cell_states = state[:n_cell]
        weights = None
        if self.attention == "bahdanau":
            query = cell_states[-states_per_layer(self.cell)]  # top layer's previous h: s_{t-1}
            context, weights = self._attend_step(query, encoder_outputs, keys, memory_mask)
            x = ops.concatenate([x, context], axis=-1)  # (N, E + Dv)
        elif self.input_feeding:
            x = ops.concatenate([x, state[n_cell]], axis=-1)  # (N, E + U)
        h, new_state = self._run_cells(x, cell_states, between_masks)
        if self.attention == "bahdanau":
            out = ops.concatenate([h, context], axis=-1)  # readout from [s_t; c_t]: (N, U + Dv)
        elif self.attention == "luong":
            context, weights = self._attend_step(h, encoder_outputs, keys, memory_mask)
            out = self.attentional_dense(ops.concatenate([context, h], axis=-1))  # h~_t: (B, U)
            if self.input_feeding:
                new_state.append(out)
        else:
            out = h
        return out, new_state, weights

    def _project(self, out, training=None):
        out = self.dropout_layer(out, training=training)
        # Logits in float32 so the softmax/loss are stable under mixed precision.
        return ops.cast(self.output_projection(out), "float32")  # (..., O) -> (..., V)

    # Teacher forcing --------------------------------------------------------
    def call(self, target_ids, encoder_outputs=None, initial_state=None, memory_mask=None, training=None):
        return self._teacher_forced(target_ids, encoder_outputs, initial_state, memory_mask, training)[0]

    def call_with_scores(self, target_ids, encoder_outputs, initial_state=None, memory_mask=None, training=None):
        """`call`, and the attention weights: `(logits (B, T, V), weights (B, T, S))`. Needs attention."""
        if self.attention is None:
            raise ValueError("this decoder has no attention (attention=None): no weights to return")
        if not self.built:  # a plain method: Layer.__call__, which builds on first use, does not run
            self.build(tuple(target_ids.shape), tuple(encoder_outputs.shape))
        return self._teacher_forced(target_ids, encoder_outputs, initial_state, memory_mask, training)

    def _teacher_forced(self, target_ids, encoder_outputs, initial_state, memory_mask, training):
        """`(logits (B, T, V), weights (B, T, S) or None without attention)`."""
        batch = ops.shape(target_ids)[0]
        x = self.embedding(target_ids)  # (B, T) -> (B, T, E)
        x = self.dropout_layer(x, training=training)
        state = self.start_state(initial_state, batch_size=batch)
        keys = None
        if self.attention is not None:
            encoder_outputs = ops.cast(encoder_outputs, self.compute_dtype)
            keys = self.attention_layer.project_keys(encoder_outputs)  # once per sentence, not per step
        xs = ops.swapaxes(x, 0, 1)  # (B, T, E) -> (T, B, E): scan runs over axis 0
        if training and self.dropout > 0 and self.num_layers > 1:
            ones = ops.ones((ops.shape(xs)[0], batch, self.num_layers - 1, self.units), self.compute_dtype)
            masks = ops.unstack(self.dropout_layer(ones, training=training), axis=2)  # L-1 x (T, B, U)
            xs = (xs, masks)

        # Only the recurrence needs the loop when the step's output does not feed
        # the next step (no attention, or Luong without input feeding).
        parallel = self.attention is None or (self.attention == "luong" and not self.input_feeding)
        if parallel:

            def step_fn(carry, inputs):
                x_t, masks_t = inputs if isinstance(inputs, tuple) else (inputs, None)
                h, new_state = self._run_cells(x_t, carry[0], masks_t)
                return (new_state, h), (new_state, h)

            h0 = ops.zeros((batch, self.units), self.compute_dtype)
            _, (_, hs) = ops.scan(step_fn, (state, h0), xs)
            hs = ops.swapaxes(hs, 0, 1)  # (T, B, U) -> (B, T, U)
            weights = None
            if self.attention == "luong":
                context, weights = self.attention_layer.attend(hs, encoder_outputs, keys, memory_mask)
                out = self.attentional_dense(ops.concatenate([context, hs], axis=-1))  # (B, T, U)
            else:
                out = hs
        else:

            def step_fn(carry, inputs):
                x_t, masks_t = inputs if isinstance(inputs, tuple) else (inputs, None)
                out, new_state, w = self._decode_step(x_t, carry[0], encoder_outputs, keys, memory_mask, masks_t)
                return (new_state, out, w), (new_state, out, w)

            out_dim = self.output_projection.kernel.shape[0]
            init = (
                state,
                ops.zeros((batch, out_dim), self.compute_dtype),
                ops.zeros((batch, ops.shape(encoder_outputs)[1]), self.compute_dtype),
            )
            _, (_, out, weights) = ops.scan(step_fn, init, xs)
            out = ops.swapaxes(out, 0, 1)  # (T, B, O) -> (B, T, O)
            weights = ops.swapaxes(weights, 0, 1)  # (T, B, S) -> (B, T, S)

        logits = self._project(out, training=training)  # (B, T, O) -> (B, T, V)
        return logits, weights

    # Incremental decoding -----------------------------------------------
    def step(self, token_ids, state, encoder_outputs=None, memory_mask=None):
        """One decoding step (inference, no dropout).

        Args:
            token_ids: int `(N,)` (or `(N, 1)`), the previous output token of each of `N` rows.
            state: flat list from `start_state` or the previous `step`, `(N, w)` each.
            encoder_outputs: float `(B, S, Dv)` (with attention). `N` may be `B * G`: then rows
                `b * G .. b * G + G - 1` (the G beams of sentence `b`) all read memory `b`.
            memory_mask: bool `(B, S)`, True = real source token.

        Returns:
            `(logits, new_state, weights)`: float32 `(N, V)`, a list shaped like
            `state`, and float `(N, S)` attention weights (None without attention).
        """
        if len(token_ids.shape) == 2:
            token_ids = token_ids[:, 0]  # (B, 1) -> (B,)
        x = self.embedding(token_ids)  # (B,) -> (B, E)
        keys = None
        if self.attention is not None:
            encoder_outputs = ops.cast(encoder_outputs, self.compute_dtype)
            keys = self.attention_layer.project_keys(encoder_outputs)
        out, new_state, weights = self._decode_step(x, list(state), encoder_outputs, keys, memory_mask)
        return self._project(out), new_state, weights

    def get_config(self):
        return {
            **super().get_config(),
            "vocab_size": self.vocab_size,
            "embedding_dim": self.embedding_dim,
            "units": self.units,
            "cell": self.cell,
            "attention": self.attention,
            "score": self.score,
            "attention_units": self.attention_units,
            "input_feeding": self.input_feeding,
            "num_layers": self.num_layers,
            "dropout": self.dropout,
        }
