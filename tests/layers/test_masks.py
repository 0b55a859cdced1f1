"""tfm.layers.masks on its own: boolean masks, True = may attend (or = real token)."""

import itertools

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from tfm.layers.masks import causal_mask, merge_masks, padding_mask

B, T, S = 2, 3, 4
KEY_MASK = np.array([[True, True, True, False], [True, True, False, False]])  # (B, S)
QUERY_MASK = np.array([[True, True, False], [True, True, True]])  # (B, T)


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


def test_padding_mask():
    ids = np.array([[5, 6, 0, 0], [7, 0, 8, 0]], "int32")
    mask = _np(padding_mask(ids))
    assert mask.dtype == bool
    np.testing.assert_array_equal(mask, [[True, True, False, False], [True, False, True, False]])
    np.testing.assert_array_equal(_np(padding_mask(ids, pad_id=7)), [[True] * 4, [False, True, True, True]])


def test_causal_mask_by_hand():
    np.testing.assert_array_equal(_np(causal_mask(3)), [[True, False, False],
                                                        [True, True, False],
                                                        [True, True, True]])
    # Two queries at absolute positions 3 and 4 over five cached keys (incremental decoding).
    np.testing.assert_array_equal(_np(causal_mask(2, 5, offset=3)), [[True, True, True, True, False],
                                                                     [True, True, True, True, True]])


@pytest.mark.parametrize("t, s, offset", [(1, 1, 0), (4, 4, 0), (3, 6, 0), (5, 3, 0), (1, 7, 4), (2, 8, 5)])
def test_causal_mask_is_numpy_tril(t, s, offset):
    """Key j is visible to query i when j <= i + offset: NumPy's tril with diagonal `offset`."""
    expected = np.tril(np.ones((t, s), bool), k=offset)
    np.testing.assert_array_equal(_np(causal_mask(t, s, offset=offset)), expected)
    # The same with scalar tensors (as inside the decoding loop).
    got = tf.function(lambda a, b, c: causal_mask(a, b, offset=c))(tf.constant(t), tf.constant(s), tf.constant(offset))
    np.testing.assert_array_equal(_np(got), expected)


# Every combination of key mask, query mask and look-ahead.
COMBINATIONS = [dict(zip(("key", "query", "causal"), flags)) for flags in itertools.product([False, True], repeat=3)]


@pytest.mark.parametrize("use", COMBINATIONS, ids=lambda use: "+".join(k for k, v in use.items() if v) or "none")
def test_merge_masks_every_combination(use):
    mask = merge_masks(key_mask=KEY_MASK if use["key"] else None, query_mask=QUERY_MASK if use["query"] else None,
                       causal=use["causal"], query_length=T, key_length=S)
    if not any(use.values()):
        assert mask is None  # nothing to mask
        return
    # Each piece on its own axes, broadcast together: (B, 1, S), (B, T, 1), (1, T, S).
    pieces = []
    if use["key"]:
        pieces.append(KEY_MASK[:, np.newaxis, :])
    if use["query"]:
        pieces.append(QUERY_MASK[:, :, np.newaxis])
    if use["causal"]:
        pieces.append(np.tril(np.ones((T, S), bool))[np.newaxis])
    expected = np.logical_and.reduce(np.broadcast_arrays(*pieces)) if len(pieces) > 1 else pieces[0]
    mask = _np(mask)
    assert mask.dtype == bool and mask.shape == expected.shape
    np.testing.assert_array_equal(mask, expected)


def test_merge_masks_all_three_by_hand():
    key = np.array([[True, True, False]])  # sentence of 2 tokens + 1 pad, as keys ...
    query = key  # ... and as queries (decoder self-attention)
    np.testing.assert_array_equal(_np(merge_masks(key, query, causal=True)), [[[True, False, False],
                                                                               [True, True, False],
                                                                               [False, False, False]]])


def test_merge_masks_takes_lengths_from_the_masks():
    # Causal with a query mask: T from it, S = T (self-attention) ...
    assert _np(merge_masks(query_mask=QUERY_MASK, causal=True)).shape == (B, T, T)
    # ... or S from the key mask.
    both = _np(merge_masks(KEY_MASK, QUERY_MASK, causal=True))
    assert both.shape == (B, T, S)
    np.testing.assert_array_equal(both, KEY_MASK[:, None] & QUERY_MASK[:, :, None] & np.tril(np.ones((T, S), bool)))
    # 0/1 masks are read as booleans.
    np.testing.assert_array_equal(_np(merge_masks(KEY_MASK.astype("int32"))), KEY_MASK[:, None])


def test_causal_without_a_query_length_names_the_missing_argument():
    with pytest.raises(ValueError, match="needs the query length: pass query_mask or query_length"):
        merge_masks(key_mask=np.ones((1, 3), bool), causal=True)
