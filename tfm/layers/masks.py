"""Attention masks: built and merged here only (Vaswani et al., 2017, §3.2.3).

Every mask in tfm is boolean with True = "may attend" (or "is a real token" for
padding masks). One name per kind of mask, the same in every layer, model and search:

- `padding_mask`: bool `(B, S)`, the padding of the layer's own input sequence
  (`EncoderLayer`, `Encoder`, `RNNEncoder`); `padding_mask(ids)` below builds it.
- `memory_mask`: bool `(B, S)`, the padding of the memory that cross-attention reads,
  the encoder output (`DecoderLayer`, `Decoder`, `Attention` / `BahdanauAttention` /
  `LuongAttention`, `RNNDecoder`, `Transformer.decode` / `decode_step`); what
  `Transformer.encode` returns beside the memory.
- `attention_mask`: bool broadcastable to `(B, T, S)`, True = query `t` may attend key `s`
  (`MultiHeadAttention`). The layers above turn their `padding_mask` / `memory_mask` into
  one with `merge_masks`, never by hand.
- `mask`: an `attention_mask` given to the functions on raw tensors
  (`scaled_dot_product_attention`, `attention_weights`, `masked_softmax`).

`merge_masks` names its inputs by axis instead: `key_mask` `(B, S)` and `query_mask` `(B, T)`.
"""

from keras import ops

from tfm.special_tokens import PAD_ID


def padding_mask(ids, pad_id=PAD_ID):
    """True where `ids` holds a real token.

    Args:
        ids: int `(B, S)` token ids.
        pad_id: int. The padding id. Defaults to `0`.

    Returns:
        bool `(B, S)`.

    Example:
        >>> padding_mask(ops.array([[5, 6, 0]]))   # (B, S): the last position is padding
        <tf.Tensor: shape=(1, 3), dtype=bool, numpy=array([[ True,  True, False]])>
    """
    return ops.not_equal(ids, pad_id)


def causal_mask(query_length, key_length=None, offset=0):
    """Lower-triangular look-ahead mask (§3.2.3: the decoder cannot see the future).

    Args:
        query_length: int or scalar tensor. `T`.
        key_length: int or scalar tensor. `S`. Defaults to `query_length`.
        offset: int or scalar tensor. Absolute position of query 0; key `j` is
            visible to query `i` when `j <= i + offset`. Used by incremental decoding.

    Returns:
        bool `(T, S)`.

    Example:
        >>> ops.convert_to_numpy(causal_mask(3)).astype(int)   # (T, S): query i sees keys 0..i
        array([[1, 0, 0],
               [1, 1, 0],
               [1, 1, 1]])
        >>> ops.convert_to_numpy(causal_mask(1, 3, offset=1)).astype(int)   # decoding step 2 over a 3-key cache
        array([[1, 1, 0]])
    """
    key_length = query_length if key_length is None else key_length
    rows = ops.expand_dims(ops.arange(query_length), 1) + offset  # (T, 1)
    cols = ops.expand_dims(ops.arange(key_length), 0)  # (1, S)
    return ops.greater_equal(rows, cols)


def merge_masks(key_mask=None, query_mask=None, causal=False, query_length=None, key_length=None):
    """Combine padding and look-ahead masks into one `(B, T, S)` attention mask.

    Args:
        key_mask: bool `(B, S)` or None. True = real key.
        query_mask: bool `(B, T)` or None. True = real query. Padded queries then
            attend to nothing (their rows come back as zeros).
        causal: bool. Add the look-ahead mask.
        query_length, key_length: ints, needed only when neither mask gives them.

    Returns:
        bool `(B, T, S)`, `(1, T, S)` when only `causal` is set, or None when
        there is nothing to mask.

    Example:
        >>> keys = ops.array([[True, True, False]])              # (B, S): the third key is padding
        >>> mask = merge_masks(key_mask=keys, causal=True, query_length=3)
        >>> ops.convert_to_numpy(mask)[0].astype(int)           # (B, T, S): look-ahead and padding together
        array([[1, 0, 0],
               [1, 1, 0],
               [1, 1, 0]])
        >>> merge_masks() is None                                # nothing to mask
        True
    """
    mask = None
    if key_mask is not None:
        mask = ops.expand_dims(ops.cast(key_mask, "bool"), 1)  # (B, S) -> (B, 1, S)
    if query_mask is not None:
        q = ops.expand_dims(ops.cast(query_mask, "bool"), 2)  # (B, T) -> (B, T, 1)
        mask = q if mask is None else ops.logical_and(mask, q)
    if causal:
        if query_length is None and query_mask is None:
            raise ValueError("merge_masks(causal=True) needs the query length: pass query_mask or query_length")
        t = query_length if query_length is not None else ops.shape(query_mask)[1]
        s = key_length if key_length is not None else (
            ops.shape(key_mask)[1] if key_mask is not None else t
        )
        c = ops.expand_dims(causal_mask(t, s), 0)  # (T, S) -> (1, T, S)
        mask = c if mask is None else ops.logical_and(mask, c)
    return mask


