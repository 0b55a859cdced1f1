"""Attention weights of given outputs, for plots: `attention_maps` (what `Translator.attention` shows for the
translation it chose).

    maps = attention_maps(model, source_ids, result.sequences)   # the chosen hypothesis of a search
    maps["cross_attention"][layer]                               # (B, N, T + 1, S): row i produced output i

The weights come from one teacher-forced pass over `START + output_ids`: the same numbers the
cached steps of the search computed (cached == uncached), without carrying a per-layer, per-head
weights buffer through every beam reorder. Any model with the decoding interface works (a
`Transformer`, a `Seq2Seq` with attention; `tfm.decoding.model_adapter`).

Example:
    >>> from tfm import Transformer
    >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
    >>> sorted(attention_maps(model, [[5, 6, 7]], [[9]]))   # one list per kind of attention
    ['cross_attention', 'decoder_self_attention', 'encoder_self_attention']
"""

import numpy as np
import tensorflow as tf

from tfm.decoding.model_adapter import as_decodable
from tfm.special_tokens import START_ID


def attention_maps(model, source_ids, output_ids):
    """Attention weights of every layer and head for given outputs (e.g. the chosen hypothesis).

    One teacher-forced pass over `START + output_ids`; by the cached == uncached
    property these are the weights the search saw.

    Args:
        model: a `Transformer` or a `Seq2Seq`.
        source_ids: int `(B, S)`.
        output_ids: int `(B, T)`, 0-padded, no START / END (`sequences` of a search).

    Returns:
        dict of lists (one entry per layer) of float arrays, the models' `attention_weights`:
        Transformer: `encoder_self_attention` `(B, N, S, S)`, `decoder_self_attention`
        `(B, N, T+1, T+1)`, `cross_attention` `(B, N, T+1, S)` (row `i` is the
        step that produced output `i`; the last row produced END); Seq2Seq with
        attention: `cross_attention` `[(B, T+1, S)]`.

    Example:
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
        >>> maps = attention_maps(model, [[5, 6, 7]], [[9, 10]])   # outputs 9 10, then END
        >>> maps["cross_attention"][0].shape                        # (B, N, T + 1, S)
        (1, 4, 3, 3)
    """
    decodable = as_decodable(model)
    source_ids = tf.cast(tf.convert_to_tensor(source_ids), tf.int32)
    if decodable.max_source_length is not None:
        source_ids = source_ids[:, : decodable.max_source_length]
    output_ids = tf.cast(tf.convert_to_tensor(output_ids), tf.int32)
    decoder_input = tf.concat([tf.fill([tf.shape(output_ids)[0], 1], START_ID), output_ids], axis=1)
    maps = decodable.attention(source_ids, decoder_input)
    return {name: [np.asarray(w) for w in weights] for name, weights in maps.items()}

