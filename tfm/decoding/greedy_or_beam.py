"""Greedy and beam search with a key/value cache (Vaswani et al., 2017, §6.1).

    search(model, source_ids, beam_size=4)              # ids in, a SearchResult out (a tf.function body)
    search(model, source_ids, beam_size=1)              # greedy when beam_size == 1

    search_steps.py   SearchResult, length_penalty, validate_beam_size and the steps both searches take
    greedy.py         greedy_search
    beam.py           beam_search

§6.1: "we used beam search with a beam size of 4 and length penalty α = 0.6 ...
We set the maximum output length during inference to input length + 50, but
terminate early when possible." The length penalty is GNMT's (Wu et al., 2016),
`lp(Y) = ((5 + |Y|) / 6)^α`, and a finished hypothesis scores `log P(Y | X) / lp(Y)`;
`|Y|` counts the output tokens including END (as tensor2tensor, which the paper used).
Every search returns that score, greedy (beam 1) included, with the `alpha` it is given:
`SearchResult.scores` means one thing whatever the beam size.

How it runs:

- Incremental decoding, through the one interface every model has: `encode` once per
  sentence, then `decode_step` once per output token, carrying a `DecodingState`
  (`tfm.models.decoding_state`). The Transformer projects the encoder output to every
  decoder layer's cross-attention keys/values once (the state's `memory`), and at step
  `t` feeds only token `t`; its self-attention keys/values are appended to a cache
  that grows one position per step (`(keys, values)` pairs, `MultiHeadAttention`).
  The RNN seq2seq models carry their recurrent state instead. The search treats every
  state alike: `memory` and `memory_mask` keep one row per sentence (a sentence's k
  beams read one copy), `cache` gets one row per beam and is reordered with the beams.
- Dynamic shapes (the default): a sentence leaves the batch as soon as its search
  is decided (`tfm.decoding.batch_state`), so later steps compute only the
  sentences still being translated. Under XLA (`jit_compile=True`) and without a
  cache the search keeps static shapes instead (`static_shapes=True`): every
  buffer is allocated for `T_max` steps up front, the cache is a fixed
  `(B, 2, N, T_max, H)` written in place, decided sentences are carried along
  with their results frozen; the results are the same (tested).
- Lengths. A sentence of `n` source tokens may produce at most `n + 50` tokens
  (`max_extra_length`; by default the model's `extra_positions`), then END is forced. Sources longer
  than the model accepts (`TransformerConfig.max_length` tokens) are truncated,
  and `T_max` never exceeds the model's position table.
- Ranking: only the 2k best tokens of each beam can be among the 2k best
  continuations, so those k * 2k candidates are ranked (`best_tokens`, with a
  two-pass top-k: TensorFlow's CPU top-k over a 10k vocabulary costs as much as
  the output projection).
- Never generated: PAD and START (their logits are masked before the softmax), nor
  any token a `constraint` forbids at that step (`tfm.decoding.constraints`; parsing's
  `TreeConstraint` keeps every hypothesis a well-formed tree, §6.3).
- Beam search keeps `k` alive and `k` finished hypotheses per sentence
  (tensor2tensor's scheme: the top `2k` continuations, the best `k` that do
  not end stay alive, those that end compete for the finished slots) and stops a
  sentence once no alive hypothesis can beat its worst finished one, even with
  the most favourable length penalty still reachable.

`use_cache=False` runs the whole model on the source and the prefix at every step
(the TensorFlow tutorial's way); it exists for the cached == uncached test and
the speed benchmark (`benchmarks/decoding_speed.py`), and runs in graph mode only.

The models are seen through `tfm.decoding.model_adapter` (start / step); text in,
text out is `tfm.decoding.translator`.
"""

from tfm.decoding.beam import beam_search
from tfm.decoding.greedy import greedy_search
from tfm.decoding.model_adapter import as_decodable
from tfm.decoding.search_steps import validate_beam_size


def search(model, source_ids, beam_size=4, alpha=0.6, max_extra_length=None, use_cache=True, return_all=False,
           static_shapes=None, constraint=None, early_finish=False):
    """`greedy_search` when `beam_size == 1`, else `beam_search`: a `SearchResult` either way (§6.1).

    Args:
        model, source_ids, beam_size, alpha, max_extra_length: as in `beam_search`.
        use_cache, static_shapes, constraint: as in `beam_search`.
        return_all: as in `beam_search`. With `beam_size == 1` the one hypothesis is decided as soon as
            it ends, so `return_all` asks for nothing more (`all_sequences` has `k = 1`).
        early_finish: as in `beam_search` (greedy search stops each sentence at its END already).

    Example:
        >>> import tensorflow as tf
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=40, num_layers=1, extra_positions=4)
        >>> source_ids = tf.constant([[5, 6, 7], [8, 9, 0]])   # (B, S) = (2, 3), 0-padded
        >>> greedy = search(model, source_ids, beam_size=1)
        >>> bool(tf.reduce_all(greedy.sequences == greedy_search(model, source_ids).sequences))
        True
    """
    common = dict(alpha=alpha, max_extra_length=max_extra_length, use_cache=use_cache, static_shapes=static_shapes,
                  constraint=constraint)
    if validate_beam_size(beam_size, as_decodable(model).vocab_size) == 1:
        return greedy_search(model, source_ids, **common)
    return beam_search(model, source_ids, beam_size=beam_size, return_all=return_all, early_finish=early_finish,
                       **common)
