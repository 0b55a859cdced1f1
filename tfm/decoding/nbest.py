"""What translators ask for beside the best translation: the k best, and where each output word looks.

Written once in TensorFlow ops and used by both routes, so they answer alike:
`Translator.nbest` / `Translator.align` (eager) and the exported SavedModel's optional
`nbest` / `alignment` signatures (`tfm.serving.saved_model`, chosen at export time).

- **n-best**: the `k` finished hypotheses of beam search (§6.1's beam, `k` = beam size), best
  first, each with its score `log P(Y | X) / lp(Y)`. A slot the search did not fill (fewer
  than `k` hypotheses finished) is `""` with score `-inf`; nothing to translate gives `""`
  with score 0 in the first slot.
- **Alignment**: one teacher-forced pass over the chosen translation gives the decoder's
  cross-attention (the weights the search saw: cached == uncached); a layer's weights are
  averaged over its heads — the usual way to read alignments off a Transformer (Garg et al.,
  2019, use one layer's averaged heads) — and each output subword is aligned to the source
  subword it attends to most. The RNN seq2seq models with attention have one map (no heads).
"""

import tensorflow as tf

from tfm.special_tokens import PAD_ID, START_ID


def nbest(tokenizer, result, has_source):
    """Beam search's k finished hypotheses as text.

    Args:
        tokenizer: the run's `SubwordTokenizer`.
        result: a `SearchResult`; its `all_sequences (B, k, T)` and `all_scores (B, k)` (the k
            best with `search(..., return_all=True)`; k = 1 for greedy).
        has_source: bool `(B,)` (`tfm.decoding.text_ops.tokenize_source`).

    Returns:
        `(translations tf.string (B, k), scores float32 (B, k))`, best first.

    Example:
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> from tfm.decoding import SearchResult
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> two, three = tokenizer.tokenize(["two", "three"]).to_tensor().numpy()
        >>> result = SearchResult(*[None] * 4, all_sequences=tf.constant([[two, three]]),   # (B, k, T): k = 2
        ...                       all_scores=tf.constant([[-0.5, float("-inf")]]))          # slot 2 not filled
        >>> texts, scores = nbest(tokenizer, result, has_source=tf.constant([True]))
        >>> texts.numpy().tolist(), scores.numpy().tolist()
        ([[b'two', b'']], [[-0.5, -inf]])
    """
    sequences, scores = result.all_sequences, result.all_scores
    batch, k = tf.shape(sequences)[0], tf.shape(sequences)[1]
    flat = tf.reshape(sequences, [batch * k, -1])  # (B, k, T) -> (B*k, T)
    texts = tf.reshape(tf.strings.strip(tokenizer.detokenize(flat)), [batch, k])
    scores = tf.cast(scores, tf.float32)
    found = tf.logical_and(has_source[:, tf.newaxis], scores > float("-inf"))  # (B, k)
    first = tf.equal(tf.range(k), 0)[tf.newaxis, :]  # (1, k)
    texts = tf.where(found, texts, "")
    scores = tf.where(has_source[:, tf.newaxis], scores, tf.where(first, 0.0, float("-inf")))
    return texts, scores


def validate_alignment_layer(model, layer):
    """`layer` as an int, or ValueError unless `model` has cross-attention in decoder layer `layer` (Python
    indexing: -1 is the last).

    Args:
        model: a `Transformer` or a `Seq2Seq` with attention.
        layer: int.

    Returns:
        int: `layer`.

    Example:
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=2)
        >>> validate_alignment_layer(model, -1)
        -1
        >>> validate_alignment_layer(model, 2)
        Traceback (most recent call last):
        ValueError: alignment layer=2: the decoder has 2 layer(s) with cross-attention
    """
    from tfm.models.seq2seq import Seq2Seq

    if isinstance(model, Seq2Seq):
        if not model.config.attention:
            raise ValueError("this seq2seq model has no attention to align with")
        count = 1  # one attention map
    else:
        count = len(model.decoder.layers)
    if not -count <= int(layer) < count:
        raise ValueError(f"alignment layer={layer}: the decoder has {count} layer(s) with cross-attention")
    return int(layer)


def cross_attention(decodable, source_ids, sequences, layer=-1):
    """Cross-attention of a layer, averaged over heads, for given outputs: float32 `(B, T, S)`.

    Row `t` holds the weights of the step that produced output `t` (the END step is left out).

    Args:
        decodable: `tfm.decoding.as_decodable(model)`.
        source_ids: int `(B, S)`.
        sequences: int `(B, T)`, 0-padded outputs (no START / END).
        layer: int. Decoder layer (Python indexing; -1 = the last).

    Example:
        >>> from tfm import Transformer
        >>> from tfm.decoding import as_decodable
        >>> decodable = as_decodable(Transformer.from_preset("tiny", vocab_size=30, num_layers=1))
        >>> weights = cross_attention(decodable, tf.constant([[5, 6, 7, 0]]), tf.constant([[9, 10]]))
        >>> tuple(weights.shape), float(weights[0, 0, 3])       # (B, T, S); no weight on padding
        ((1, 2, 4), 0.0)
    """
    decoder_input = tf.concat([tf.fill([tf.shape(sequences)[0], 1], START_ID), sequences], axis=1)
    maps = decodable.attention(source_ids, decoder_input)["cross_attention"]
    if not maps:
        raise ValueError("this model has no cross-attention to align with (a seq2seq model without attention)")
    if not -len(maps) <= layer < len(maps):
        raise ValueError(f"alignment layer={layer}: the decoder has {len(maps)} layer(s) with cross-attention")
    weights = tf.cast(maps[layer], tf.float32)
    if weights.shape.rank == 4:  # (B, N, T + 1, S): average the heads
        weights = tf.reduce_mean(weights, axis=1)
    return weights[:, :-1]  # (B, T + 1, S) -> (B, T, S)


def alignments(decodable, tokenizer, source_ids, sequences, lengths, has_source, layer=-1):
    """Subwords and the source position each output subword attends to most.

    Returns:
        dict: `source_tokens` tf.string `(B, S)` and `target_tokens` `(B, T)` ("" for padding;
        T = the longest output),
        `alignment` int32 `(B, T)` (a source position, -1 for padding), `attention` float32
        `(B, T, S)` (the layer's weights averaged over heads; zeros for padding).

    Example:
        >>> from tfm import Transformer
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> from tfm.decoding import as_decodable
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> decodable = as_decodable(Transformer.from_preset("tiny", vocab_size=70, num_layers=1))
        >>> source_ids = tokenizer.tokenize(["two hundred"]).to_tensor()
        >>> maps = alignments(decodable, tokenizer, source_ids, tf.constant([[20, 21, 0]]), tf.constant([2]),
        ...                   tf.constant([True]))
        >>> sorted(maps), tuple(maps["alignment"].shape)          # one source position per output subword
        (['alignment', 'attention', 'source_tokens', 'target_tokens'], (1, 2))
    """
    # Only as wide as the longest output: START + the search's whole buffer can exceed the position table.
    sequences = tf.cast(sequences, tf.int32)[:, : tf.reduce_max(tf.concat([lengths, [0]], 0))]
    weights = cross_attention(decodable, source_ids, sequences, layer)  # (B, T, S)
    positions = tf.range(tf.shape(sequences)[1])[tf.newaxis, :]  # (1, T)
    real = tf.logical_and(positions < lengths[:, tf.newaxis], has_source[:, tf.newaxis])  # (B, T)
    weights = tf.where(real[:, :, tf.newaxis], weights, 0.0)
    alignment = tf.where(real, tf.argmax(weights, axis=-1, output_type=tf.int32), -1)
    source_tokens = tf.where(tf.not_equal(source_ids, PAD_ID), tokenizer.id_to_token(source_ids), "")
    target_tokens = tf.where(real, tokenizer.id_to_token(sequences), "")
    return {"source_tokens": source_tokens, "target_tokens": target_tokens, "alignment": alignment,
            "attention": weights}
