"""Multi-head attention written from scratch (Vaswani et al., 2017, §3.2.2)."""

import keras
from keras import ops

from tfm.layers.feed_forward import position_wise
from tfm.layers.masks import causal_mask
from tfm.layers.scaled_dot_product_attention import attention_weights


@keras.saving.register_keras_serializable(package="tfm")
class MultiHeadAttention(keras.layers.Layer):
    """`MultiHead(Q, K, V) = Concat(head_1..head_h) W^O`, `head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)`.

    Self-attention (`value` omitted), cross-attention, causal masking, padding
    masks; the attention weights (`call_with_scores`) and a key/value cache for
    incremental decoding (`call_with_cache`) through their own methods, so each
    method returns one thing.

    Args:
        num_heads: int. `h`.
        key_dim: int. `d_k` per head.
        value_dim: int. `d_v` per head. Defaults to `key_dim`.
        output_dim: int. Width of the output projection `W^O`. Defaults to the
            query's last dimension.
        dropout: float. Dropout on the attention weights. Defaults to `0.0`.
        use_bias: bool. Biases in the four projections. Defaults to `True`.

    Call args:
        query: float `(B, T, Dq)`.
        value: float `(B, S, Dv)`. Defaults to `query` (self-attention).
        key: float `(B, S, Dk)`. Defaults to `value`.
        attention_mask: bool broadcastable to `(B, T, S)`, True = may attend.
        use_causal_mask: bool. Add the look-ahead mask (query i sees keys <= i).

    Returns:
        `call`: float `(B, T, output_dim)`, always. Two methods take the same arguments
        and return more, each one fixed tuple:

        - `call_with_scores(...)` -> `(output, weights (B, N, T, S))`.
        - `call_with_cache(query, cache, cache_update_index=None, ...)` -> `(output, cache)`,
          for incremental decoding (§3.2.3's decoder attention, one position at a time).

    The cache of `call_with_cache` holds keys and values already projected and split into
    heads, in one of two layouts:

    - stacked, float `(B, 2, N, S_max, H)`: keys at index 0, values at index 1, `H = max(d_k, d_v)`
      (`empty_cache`, `compute_cache`). A fixed buffer: what XLA needs.
    - a pair `(keys (B, N, S, d_k), values (B, N, S, d_v))` (`empty_cache_pair`, `split_cache`):
      no slicing of a stacked buffer at every step.

    and is used in one of two ways:

    - written (`cache_update_index` given: self-attention while decoding): the query's new keys
      and values (from `value` / `key`, which default to the query) go to positions
      `[index, index + T)` of a stacked cache, or are appended to a pair (which then holds
      exactly the positions written so far); attention runs over the whole cache, so pass
      `use_causal_mask=True` (or an `attention_mask`) to hide what is not written yet.
    - read-only (`cache_update_index=None`: encoder-decoder attention to a memory projected once
      per sentence): the cache replaces `value` and `key`, and passing either raises ValueError.
      A pair read-only may hold `B` memories for `B * G` queries (G beams of a sentence at rows
      `b * G + j`): each memory is then read once for its G queries. `attention_mask` is then the
      memories' own, `(B, 1, S)` or `(B, T, S)`; `use_causal_mask` lets query `i` see keys `<= i`.

    Dropout on the weights applies on every path (`training=True`). The returned cache has the
    given one's layout.

    Example:
        >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
        >>> x = keras.random.normal((2, 5, 8))                   # (B, T, D)
        >>> tuple(mha(x, use_causal_mask=True).shape)
        (2, 5, 8)
        >>> output, weights = mha.call_with_scores(x, use_causal_mask=True)
        >>> tuple(weights.shape)                                 # (B, N, T, T)
        (2, 2, 5, 5)
        >>> float(ops.max(weights[:, :, 0, 1:]))                 # the first position sees only itself
        0.0
    """

    def __init__(self, num_heads, key_dim, value_dim=None, output_dim=None, dropout=0.0,
                 use_bias=True, **kwargs):
        super().__init__(**kwargs)
        if int(num_heads) <= 0 or int(key_dim) <= 0:
            raise ValueError(f"num_heads={num_heads} and key_dim={key_dim} must be positive")
        self.num_heads = int(num_heads)
        self.key_dim = int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.output_dim = output_dim
        self.dropout = float(dropout)
        self.use_bias = use_bias
        n, h, hv = self.num_heads, self.key_dim, self.value_dim
        dense = dict(use_bias=use_bias, dtype=self.dtype_policy)
        self.query_dense = keras.layers.Dense(n * h, name="query", **dense)
        self.key_dense = keras.layers.Dense(n * h, name="key", **dense)
        self.value_dense = keras.layers.Dense(n * hv, name="value", **dense)
        self.output_dense = None  # built once the query width is known
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        self.query_dense.build(query_shape)
        self.key_dense.build(key_shape)
        self.value_dense.build(value_shape)
        out = self.output_dim or query_shape[-1]
        self.output_dense = keras.layers.Dense(
            out, use_bias=self.use_bias, name="attention_output", dtype=self.dtype_policy
        )
        self.output_dense.build(tuple(query_shape[:-1]) + (self.num_heads * self.value_dim,))
        self.built = True

    def split_heads(self, x, head_dim):
        """One projection split into `num_heads` heads (§3.2.2): `(B, T, N*H) -> (B, N, T, H)`.

        Args:
            x: float `(B, T, N*H)`, a query, key or value projection.
            head_dim: int. `H` (`key_dim` for queries and keys, `value_dim` for values).

        Returns:
            float `(B, N, T, H)`: head `n` is the features `n*H ... (n+1)*H - 1` of every position.

        Example:
            >>> layer = MultiHeadAttention(num_heads=2, key_dim=3)
            >>> x = keras.ops.reshape(keras.ops.arange(12, dtype="float32"), (1, 2, 6))   # (B, T, N*H)
            >>> heads = layer.split_heads(x, 3)
            >>> tuple(heads.shape), keras.ops.convert_to_numpy(heads[0, 1]).tolist()   # head 1: features 3-5
            ((1, 2, 2, 3), [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]])
        """
        t = ops.shape(x)[1]  # an int where static (a decoding step): no shape op for it
        x = ops.reshape(x, (-1, t, self.num_heads, head_dim))  # (B, T, N*H) -> (B, T, N, H)
        return ops.transpose(x, (0, 2, 1, 3))  # (B, T, N, H) -> (B, N, T, H)

    @staticmethod
    def _write_cache(cache, new, index):
        """Write `new (B, 2, N, T, H)` into `cache (B, 2, N, S_max, H)` at positions `[index, index + T)`."""
        new = ops.cast(new, cache.dtype)
        if new.shape[3] == 1:
            # One decoding step: a select, not a dynamic-update-slice. Outside XLA the TF
            # backend's slice_update lowers to XlaDynamicUpdateSlice, an op that TF Serving
            # can only run through XLA's on-demand compiler; a select is a plain core op.
            slots = ops.equal(ops.arange(ops.shape(cache)[3]), index)  # (S_max,)
            return ops.where(slots[:, None], new, cache)  # (S_max, 1) broadcasts over (B, 2, N, S_max, H)
        zero = ops.zeros_like(index)
        return ops.slice_update(cache, [zero, zero, zero, index, zero], new)

    @property
    def _cache_dim(self):
        # Keys and values share one cache tensor; with d_k != d_v (Table 3 row B) the
        # narrower one is zero-padded to H = max(d_k, d_v) and sliced back on reading.
        return max(self.key_dim, self.value_dim)

    def _stack_kv(self, k, v):
        """`(B, N, S, d_k)`, `(B, N, S, d_v)` -> `(B, 2, N, S, H)`."""
        h = self._cache_dim
        pad = lambda x: (  # noqa: E731  (one line, for k and v below)
            x if x.shape[-1] == h else ops.pad(x, [[0, 0]] * 3 + [[0, h - x.shape[-1]]]))
        return ops.stack([pad(k), pad(v)], axis=1)

    def _read_cache(self, cache):
        """`(B, 2, N, S, H)` -> keys `(B, N, S, d_k)` and values `(B, N, S, d_v)`."""
        return cache[:, 0, ..., : self.key_dim], cache[:, 1, ..., : self.value_dim]

    def split_cache(self, cache):
        """A stacked cache as the pair `(keys (B, N, S, d_k), values (B, N, S, d_v))` (see the class docstring).

        Args:
            cache: float `(B, 2, N, S, H)`, e.g. from `compute_cache`.

        Example:
            >>> mha = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3)
            >>> keys, values = mha.split_cache(mha.compute_cache(keras.random.normal((2, 7, 8))))
            >>> tuple(keys.shape), tuple(values.shape)             # (B, N, S, d_k), (B, N, S, d_v)
            ((2, 2, 7, 4), (2, 2, 7, 3))
        """
        return tuple(self._read_cache(cache))

    def empty_cache_pair(self, batch_size):
        """Keys and values of no positions: a self-attention cache that grows one position per step.

        Args:
            batch_size: int or scalar tensor. `B`.

        Returns:
            `(keys (B, N, 0, d_k), values (B, N, 0, d_v))`.

        Example:
            >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
            >>> keys, values = mha.empty_cache_pair(3)
            >>> tuple(keys.shape)
            (3, 2, 0, 4)
        """
        zeros = lambda width: ops.zeros(  # noqa: E731  (one line, for the keys and the values below)
            (batch_size, self.num_heads, 0, width), dtype=self.compute_dtype)
        return zeros(self.key_dim), zeros(self.value_dim)

    def compute_cache(self, value, key=None):
        """Project a memory once for encoder-decoder attention (§3.2.3): a stacked read-only cache.

        Args:
            value: float `(B, S, Dv)`, e.g. the encoder output.
            key: float `(B, S, Dk)`. Defaults to `value`.

        Returns:
            float `(B, 2, N, S, H)`, `H = max(d_k, d_v)`: keys at index 0, values at index 1.

        Example:
            >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
            >>> query, memory = keras.random.normal((2, 3, 8)), keras.random.normal((2, 7, 8))
            >>> direct = mha(query, memory)                         # builds the layer
            >>> cache = mha.compute_cache(memory)                   # once per sentence
            >>> tuple(cache.shape)
            (2, 2, 2, 7, 4)
            >>> output, _ = mha.call_with_cache(query, cache)       # read-only: no cache_update_index
            >>> bool(ops.all(ops.abs(output - direct) < 1e-5))
            True
        """
        key = value if key is None else key
        k = self.split_heads(position_wise(self.key_dense, key), self.key_dim)  # (B, N, S, d_k)
        v = self.split_heads(position_wise(self.value_dense, value), self.value_dim)  # (B, N, S, d_v)
        return self._stack_kv(k, v)  # (B, 2, N, S, H)

    def empty_cache(self, batch_size, max_length):
        """A fixed self-attention buffer for decoding, written one position per step (what XLA needs).

        Args:
            batch_size: int or scalar tensor. `B`.
            max_length: int or scalar tensor. `S_max`, the positions it holds.

        Returns:
            float zeros `(B, 2, N, max_length, H)`, `H = max(d_k, d_v)`.

        Example:
            >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
            >>> tuple(mha.empty_cache(3, max_length=10).shape)
            (3, 2, 2, 10, 4)
        """
        return ops.zeros(
            (batch_size, 2, self.num_heads, max_length, self._cache_dim), dtype=self.compute_dtype
        )

    def call(self, query, value=None, key=None, attention_mask=None, use_causal_mask=False, training=None):
        output, _, _ = self._attend(query, value, key, attention_mask, use_causal_mask, training)
        return output

    def call_with_scores(self, query, value=None, key=None, attention_mask=None, use_causal_mask=False,
                         training=None):
        """`call`, and the attention weights: `(output (B, T, D), weights (B, N, T, S))`.

        The arguments are `call`'s. `weights` are the softmax weights of eq. (1), before dropout.

        Example:
            >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
            >>> output, weights = mha.call_with_scores(keras.random.normal((2, 3, 8)), keras.random.normal((2, 7, 8)))
            >>> tuple(weights.shape), round(float(ops.sum(weights[0, 0, 0])), 4)   # (B, N, T, S); rows sum to 1
            ((2, 2, 3, 7), 1.0)
        """
        self._ensure_built(query, value, key)
        output, weights, _ = self._attend(query, value, key, attention_mask, use_causal_mask, training)
        return output, weights

    def call_with_cache(self, query, cache, cache_update_index=None, value=None, key=None, attention_mask=None,
                        use_causal_mask=False, training=None):
        """`call` with a key/value cache (see the class docstring): `(output (B, T, D), cache)`.

        Args:
            query: float `(B, T, Dq)`.
            cache: a stacked `(B, 2, N, S_max, H)` cache or a `(keys, values)` pair.
            cache_update_index: int or scalar tensor, the position of `query[:, 0]`: its keys and values
                are written into the cache. None: the cache is read as it is.
            value, key, attention_mask, use_causal_mask, training: as in `call`; `value` and `key` are
                refused with a read-only cache (it holds them already).

        Example:
            >>> mha = MultiHeadAttention(num_heads=2, key_dim=4)
            >>> x = keras.random.normal((1, 4, 8))                  # (B, T, D)
            >>> cache, steps = mha.empty_cache(1, max_length=4), []
            >>> for t in range(4):                                  # one position per step
            ...     out, cache = mha.call_with_cache(x[:, t : t + 1], cache, t, use_causal_mask=True)
            ...     steps.append(out)
            >>> full = mha(x, use_causal_mask=True)                 # every position at once
            >>> bool(ops.all(ops.abs(ops.concatenate(steps, axis=1) - full) < 1e-5))
            True
            >>> mha.call_with_cache(x, cache, value=x)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ValueError: value was given with a read-only cache (cache_update_index=None): ...
        """
        self._ensure_built(query, value, key)
        output, _, cache = self._attend(query, value, key, attention_mask, use_causal_mask, training,
                                        cache=cache, cache_update_index=cache_update_index)
        return output, cache

    def _ensure_built(self, query, value=None, key=None):
        # `call_with_*` are plain methods: Layer.__call__, which builds on first use, does not run.
        if not self.built:
            shape = lambda x: None if x is None else tuple(x.shape)  # noqa: E731  (one line, two uses below)
            self.build(tuple(query.shape), shape(value), shape(key))

    def _attend(self, query, value, key, attention_mask, use_causal_mask, training, cache=None,
                cache_update_index=None):
        """`(output, weights, cache)` (cache None without one): what `call` and `call_with_*` return parts of."""
        read_only = cache is not None and cache_update_index is None
        if read_only:
            for name, given in (("value", value), ("key", key)):
                if given is not None:
                    raise ValueError(f"{name} was given with a read-only cache (cache_update_index=None): the cache "
                                     f"already holds the projected keys and values; pass {name} only to write new "
                                     "positions (with cache_update_index)")
        if value is None:
            value = query
        if key is None:
            key = value
        q = self.split_heads(position_wise(self.query_dense, query), self.key_dim)  # (B, T, D) -> (B, N, T, H)
        if isinstance(cache, (tuple, list)):  # (keys, values): read as is, or append the new positions
            k, v = cache
            if read_only:  # no weights: `call_with_scores` takes no cache
                output = self._attend_shared(q, k, v, attention_mask, use_causal_mask, training)
                return output, None, (k, v)
            new_k = self.split_heads(position_wise(self.key_dense, key), self.key_dim)  # (B, T, D) -> (B, N, T, d_k)
            new_v = self.split_heads(position_wise(self.value_dense, value), self.value_dim)
            k = ops.concatenate([k, ops.cast(new_k, k.dtype)], axis=2)  # (B, N, index + T, d_k)
            v = ops.concatenate([v, ops.cast(new_v, v.dtype)], axis=2)
            cache = (k, v)
            # One new position against a pair that holds exactly the positions written so far: the causal
            # mask would be all True (key j <= index for every key), so no mask ops run at each step.
            if q.shape[2] == 1:
                use_causal_mask = False
        elif read_only:
            k, v = self._read_cache(cache)  # (B, N, S, H) each
        else:
            k = self.split_heads(position_wise(self.key_dense, key), self.key_dim)  # (B, S, D) -> (B, N, S, H)
            v = self.split_heads(position_wise(self.value_dense, value), self.value_dim)  # (B, S, D) -> (B, N, S, H)
            if cache is not None:
                cache = self._write_cache(cache, self._stack_kv(k, v), cache_update_index)
                k, v = self._read_cache(cache)  # (B, N, S_max, H)

        mask = attention_mask
        if mask is not None:
            mask = ops.expand_dims(ops.cast(mask, "bool"), 1)  # (B, T, S) -> (B, 1, T, S), shared by heads
        if use_causal_mask:
            offset = 0 if cache_update_index is None else cache_update_index
            causal = causal_mask(ops.shape(q)[2], ops.shape(k)[2], offset=offset)  # (T, S)
            mask = causal if mask is None else ops.logical_and(mask, causal)

        weights = attention_weights(q, k, mask)  # (B, N, T, S)
        dropped = self.dropout_layer(weights, training=training)
        context = ops.matmul(dropped, v)  # (B, N, T, S) @ (B, N, S, H) -> (B, N, T, H)
        context = ops.transpose(context, (0, 2, 1, 3))  # (B, N, T, H) -> (B, T, N, H)
        context = ops.reshape(context, (-1, ops.shape(context)[1], self.num_heads * self.value_dim))  # -> (B, T, N*H)
        output = position_wise(self.output_dense, context)  # (B, T, N*H) -> (B, T, D)
        return output, weights, cache

    def _attend_shared(self, q, k, v, attention_mask, use_causal_mask, training):
        """Attention to a read-only `(keys, values)` pair that G queries share: the beams of a sentence.

        `q (B*G, N, T, d_k)` against `k (B, N, S, d_k)`, `v (B, N, S, d_v)`; `attention_mask` is the
        memories' `(B, 1, S)` or `(B, T, S)`. Each memory is read once for its G beams (one `(G*T, S)`
        product per head instead of G products of T rows), not copied G times. With G = 1 this is
        ordinary attention. Returns the output `(B*G, T, D)`.
        """
        batch = ops.shape(k)[0]
        groups = ops.shape(q)[0] // batch
        t, s = ops.shape(q)[2], ops.shape(k)[2]
        # (B*G, N, T, d) -> (B, G, N, T, d) -> (B, N, G, T, d) -> (B, N, G*T, d): row g * T + i is beam g's query i
        q = ops.reshape(ops.transpose(ops.reshape(q, (batch, groups, self.num_heads, t, self.key_dim)),
                                      (0, 2, 1, 3, 4)), (batch, self.num_heads, groups * t, self.key_dim))
        mask = None
        if attention_mask is not None:
            mask = ops.cast(attention_mask, "bool")  # (B, 1 or T, S)
            if len(mask.shape) != 3:
                raise ValueError(f"attention_mask of shape {tuple(mask.shape)} with a read-only (keys, values) "
                                 "cache: expected the memories' (B, 1, S) or (B, T, S)")
            if mask.shape[1] != 1:  # one row per query position: the same rows for each beam
                mask = ops.tile(mask, (1, groups, 1))  # (B, T, S) -> (B, G*T, S)
            mask = ops.expand_dims(mask, 1)  # -> (B, 1, 1 or G*T, S), shared by heads
        if use_causal_mask:
            causal = ops.tile(causal_mask(t, s), (groups, 1))  # (T, S) -> (G*T, S): query i sees keys <= i
            mask = causal if mask is None else ops.logical_and(mask, causal)
        weights = attention_weights(q, k, mask)  # (B, N, G*T, S)
        weights = self.dropout_layer(weights, training=training)
        context = ops.matmul(weights, v)  # (B, N, G*T, d_v)
        context = ops.transpose(ops.reshape(context, (batch, self.num_heads, groups, t, self.value_dim)),
                                (0, 2, 3, 1, 4))  # -> (B, G, T, N, d_v)
        return position_wise(self.output_dense, ops.reshape(context, (-1, t, self.num_heads * self.value_dim)))

    def compute_output_spec(self, query, value=None, key=None, **kwargs):
        out_dim = self.output_dim or query.shape[-1]
        return keras.KerasTensor(query.shape[:-1] + (out_dim,), dtype=self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "key_dim": self.key_dim,
            "value_dim": self.value_dim,
            "output_dim": self.output_dim,
            "dropout": self.dropout,
            "use_bias": self.use_bias,
        }
