"""Attention weights of given outputs, for plots: `attention_maps`, and what a `Translator` answers with them
(`align`, `beam_attention`, `sentence_attention`: the bodies of `Translator.align`, `.beam_attention` and
`.attention`, which search with the translator's settings and read the weights of what it chose).

    maps = attention_maps(model, source_ids, result.sequences)   # the chosen hypothesis of a search
    maps["cross_attention"][layer]                               # (B, N, T + 1, S): row i produced output i

The weights come from one teacher-forced pass over `START + output_ids`: the same numbers the
cached steps of the search computed (cached == uncached), without carrying a per-layer, per-head
weights buffer through every beam reorder. Any model with the decoding interface works (a
`Transformer`, a `Seq2Seq` with attention; `tfm.decoding.decodable`). `tfm.decoding.translator`
re-exports `attention_maps`: `from tfm.decoding.translator import attention_maps` works too.

Example:
    >>> from tfm import Transformer
    >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
    >>> sorted(attention_maps(model, [[5, 6, 7]], [[9]]))   # one list per kind of attention
    ['cross_attention', 'decoder_self_attention', 'encoder_self_attention']
"""

import numpy as np
import tensorflow as tf

from tfm.decoding import input_rule_ops, nbest
from tfm.decoding.decodable import as_decodable
from tfm.special_tokens import END_ID, START_ID


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


def align(translator, sentences, layer=-1):
    """Translations with the source subword each output subword attends to most.

    Args:
        translator: a `Translator`; its search settings and batch size are used.
        sentences: list of str.
        layer: int. The decoder layer whose cross-attention (averaged over heads) is read.

    Returns:
        list of dicts: `translation`, `score`, `source_tokens` and `target_tokens` (subword
        strings), `alignment` (one source index per target subword) and `attention`
        (float `(T, S)`), as the exported model's `alignment` signature answers.
    """
    nbest.validate_alignment_layer(translator.model, layer)
    rows, has_source, _ = translator.prepare(list(sentences))
    aligned = [None] * len(rows)
    for chunk, ids in translator._batches(rows):
        result = translator.search_ids(ids)
        present = tf.constant(has_source[chunk])
        texts, scores = input_rule_ops.finish(translator.tokenizer, result.sequences, result.scores, present)
        maps = nbest.alignments(translator.decodable, translator.tokenizer, tf.constant(ids), result.sequences,
                                  tf.constant(result.lengths), present, layer)
        maps = {name: value.numpy() for name, value in maps.items()}
        for j, row in enumerate(chunk):
            n, s = int((maps["alignment"][j] >= 0).sum()), len(rows[row])
            aligned[row] = {
                "translation": texts[j].numpy().decode("utf-8", "replace"), "score": float(scores[j]),
                "source_tokens": [t.decode("utf-8", "replace") for t in maps["source_tokens"][j, :s]],
                "target_tokens": [t.decode("utf-8", "replace") for t in maps["target_tokens"][j, :n]],
                "alignment": [int(a) for a in maps["alignment"][j, :n]],
                "attention": maps["attention"][j, :n, :s],
            }
    return aligned


def beam_attention(translator, sentence, layer=-1):
    """Each of the k best hypotheses of one sentence with its cross-attention (for `tfm.viz.plot_beam_attention`).

    Args:
        translator: a `Translator`; its beam size and alpha are used.
        sentence: str.
        layer: int. The decoder layer whose cross-attention (averaged over heads) is read.

    Returns:
        list of dicts (best first, unfilled slots left out): `translation`, `score`,
        `source_tokens`, `target_tokens`, `attention` float `(T, S)` (layer `layer`,
        averaged over heads).
    """
    nbest.validate_alignment_layer(translator.model, layer)
    rows, has_source, _ = translator.prepare([sentence])
    if not has_source[0]:
        return []
    ids = _one_source(rows[0])  # (1, S)
    result = translator._search_function(translator.beam_size, translator.alpha, return_all=True)(tf.constant(ids))
    texts, scores = nbest.nbest(translator.tokenizer, result, tf.constant(has_source))
    sequences = result.all_sequences[0]  # (k, T)
    k = int(tf.shape(sequences)[0])
    lengths = tf.reduce_sum(tf.cast(tf.not_equal(sequences, 0), tf.int32), axis=1)
    maps = nbest.alignments(translator.decodable, translator.tokenizer, tf.repeat(ids, k, axis=0), sequences, lengths,
                              tf.ones([k], tf.bool), layer)
    hypotheses = []
    for j in range(k):
        if not np.isfinite(scores[0, j]):
            continue
        n = int(lengths[j])
        hypotheses.append({
            "translation": texts[0, j].numpy().decode("utf-8", "replace"), "score": float(scores[0, j]),
            "source_tokens": [t.decode("utf-8", "replace") for t in maps["source_tokens"][j].numpy()],
            "target_tokens": [t.decode("utf-8", "replace") for t in maps["target_tokens"][j, :n].numpy()],
            "attention": maps["attention"][j, :n].numpy(),
        })
    return hypotheses


def sentence_attention(translator, sentence):
    """Translate one sentence and return its attention maps for plotting.

    Args:
        translator: a `Translator`; its search settings are used.
        sentence: str.

    Returns:
        dict: `source_tokens` and `target_tokens` (subword strings; the target
        ends with `[END]`), `translation` (str), and the arrays of
        `attention_maps` for this sentence (batch axis removed).
    """
    rows, has_source, _ = translator.prepare([sentence])
    row = rows[0]
    ids = _one_source(row)  # (1, S), S >= 1
    result = translator.search_ids(ids)
    # Nothing to translate: no output tokens (only END), as `translate` answers "".
    n = int(result.lengths[0]) if has_source[0] else 0
    output = result.sequences[:, :n]
    translation, _ = input_rule_ops.finish(translator.tokenizer, output, result.scores[:1], tf.constant(has_source))
    maps = attention_maps(translator.model, ids, output)
    tokens = lambda x: [t.decode("utf-8", errors="replace") for t in  # noqa: E731
                        translator.tokenizer.id_to_token(tf.constant(x, tf.int32)).numpy()]
    return {
        "source_tokens": tokens(row),
        "target_tokens": tokens(list(output[0]) + [END_ID]),
        "translation": translation.numpy()[0].decode("utf-8", "replace"),
        **{name: [w[0] for w in weights] for name, weights in maps.items()},
    }


def _one_source(row):
    """One sentence's source ids, padded as the Translator pads a batch: int32 `(1, S)`, S >= 1."""
    return input_rule_ops.pad_source(tf.ragged.constant([[int(t) for t in row]], dtype=tf.int32,
                                                      ragged_rank=1)).numpy()
