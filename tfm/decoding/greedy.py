"""Greedy search (Vaswani et al., 2017, §6.1 with beam size 1): the most likely next token at every step.

Beam search is `tfm.decoding.beam`; how both run (the cache, dynamic shapes, the length limit) is
`tfm.decoding.greedy_or_beam`'s docstring.
"""

import tensorflow as tf

from tfm.decoding.batch_state import retire, store, while_loop
from tfm.decoding.search_steps import (
    SearchResult,
    best_tokens,
    finalize,
    length_penalty,
    start_search,
    start_sequences,
    write_column,
)
from tfm.special_tokens import END_ID, PAD_ID


def greedy_search(model, source_ids, alpha=0.6, max_extra_length=None, use_cache=True, static_shapes=None,
                  constraint=None):
    """The most likely next token at every step, until END (or the length limit).

    Args:
        model: a `Transformer`, a `Seq2Seq`, or a decodable (`as_decodable`).
        source_ids: int `(B, S)`, 0-padded source subwords (no START / END).
        alpha: float >= 0. Length penalty exponent of the returned scores (the choice of
            tokens does not depend on it); `0` gives `log P(Y | X)`. Defaults to `0.6` (§6.1).
        max_extra_length: int. Output limit = source length + this. Defaults to
            the model's `extra_positions` (50, §6.1).
        use_cache: bool. `False` recomputes the decoder over the prefix at every
            step (graph mode only; not under XLA).
        static_shapes: bool or None. True: every buffer keeps its shape for the whole
            search (what XLA needs). False: finished sentences leave the batch and the
            caches grow a position per step (faster). None: static under XLA and
            without a cache, dynamic otherwise. The results are the same.
        constraint: None or a constraint (`tfm.decoding.constraints`, e.g. `TreeConstraint`):
            only the tokens it allows are chosen.

    Returns:
        `SearchResult`: `scores` = `log P(Y | X) / lp(Y)`, as beam search's; `all_sequences`
        `(B, 1, T_max)` and `all_scores` `(B, 1)` hold the same output (k = 1).

    Example:
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=40, num_layers=1, extra_positions=4)
        >>> source_ids = tf.constant([[5, 6, 7], [8, 9, 0]])   # (B, S) = (2, 3), 0-padded; T_max = 3 + 4 + 1 = 8
        >>> result = greedy_search(model, source_ids)
        >>> tuple(result.sequences.shape), tuple(result.all_sequences.shape)   # (B, T_max), (B, 1, T_max)
        ((2, 8), (2, 1, 8))
        >>> bool(tf.reduce_all(result.lengths <= [3 + 4, 2 + 4]))   # source length + max_extra_length
        True
    """
    decodable, _, alpha, static_shapes, source_ids, limits, max_steps, batch, decoding = start_search(
        model, source_ids, alpha, max_extra_length, use_cache, static_shapes)

    sentence = {
        "position": tf.range(batch), "limit": limits,
        "sequence": start_sequences([batch], max_steps),  # (B, T_max + 1)
        "finished": tf.zeros([batch], tf.bool), "score": tf.zeros([batch], tf.float32),
        # One hypothesis per sentence: the DecodingState has one row each, but for what it `prepared` (no rows),
        # which goes to every step as it is, outside the loop's state.
        "decoding": decoding._replace(prepared=()),
    }
    prepared = decoding.prepared
    if constraint is not None:
        sentence["constraint"] = constraint.sentence_info(source_ids)  # (B,)
    state = {"sentence": sentence, "rows": {}}
    outputs = {name: tf.zeros_like(sentence[name]) for name in ("sequence", "score")}

    def cond(index, state, outputs):
        finished = state["sentence"]["finished"]
        return tf.logical_and(index < max_steps, tf.logical_not(tf.reduce_all(finished)))

    def body(index, state, outputs):
        s = dict(state["sentence"])
        logits, decoding = decodable.step(s["sequence"], index, s["decoding"]._replace(prepared=prepared),
                                          use_cache)  # (b, V)
        s["decoding"] = decoding._replace(prepared=())
        allowed = None if constraint is None else constraint.allowed(s["sequence"], index, s["constraint"])
        token_log_probs, tokens = best_tokens(logits, index, s["limit"], 1, allowed)  # (b, 1) each
        token_log_probs, tokens = token_log_probs[:, 0], tokens[:, 0]  # (b,)
        s["score"] += tf.where(s["finished"], 0.0, token_log_probs)
        tokens = tf.where(s["finished"], PAD_ID, tokens)
        s["sequence"] = write_column(s["sequence"], index + 1, tokens)
        s["finished"] = tf.logical_or(s["finished"], tf.equal(tokens, END_ID))
        state = {"sentence": s, "rows": {}}
        if not static_shapes:
            state, outputs = retire(s["finished"], state, outputs, s, per_sentence=1)
        return index + 1, state, outputs

    steps, state, outputs = while_loop(cond, body, (tf.constant(0), state, outputs), static_shapes)
    everyone = tf.ones_like(state["sentence"]["finished"])  # the sentences still in the batch at the end
    outputs = store(outputs, state["sentence"]["position"], state["sentence"], everyone)
    tokens, lengths = finalize(outputs["sequence"])
    scores = outputs["score"] / length_penalty(lengths + 1, alpha)  # |Y| = tokens + END
    return SearchResult(sequences=tokens, lengths=lengths, scores=scores, steps=steps,
                        all_sequences=tokens[:, tf.newaxis], all_scores=scores[:, tf.newaxis])

