"""Decoding (Vaswani et al., 2017, §6.1): search over ids, and text in / text out.

    search.py       greedy and beam search with the length penalty, KV cache, tf.while_loop: a SearchResult
    search_parts.py SearchResult, the length penalty, the beam size's check, the searches' step helpers
    greedy.py       greedy search
    beam.py         beam search (k alive and k finished hypotheses per sentence)
    batch_state.py  the search's state when a decided sentence leaves the batch (dynamic shapes)
    constraints.py  constrained decoding: the `Constraint` protocol (§6.3's trees: `tfm.parsing.TreeConstraint`)
    adapters.py     how the search sees a Transformer or a Seq2Seq (start / step)
    text.py         the input/output rules shared with the exported SavedModel
    outputs.py      n-best and alignments, shared with the exported SavedModel
    translator.py   `Translator`: sentences in, translations out
"""

from tfm.decoding.decodable import (
    DEFAULT_MAX_EXTRA_LENGTH,
    Decodable,
    Seq2SeqDecodable,
    TransformerDecodable,
    as_decodable,
)
from tfm.decoding.constraints import Constraint
from tfm.decoding.search import (
    NEG_INF,
    SearchResult,
    beam_search,
    validate_beam_size,
    greedy_search,
    length_penalty,
    search,
)
from tfm.decoding.translator import LENGTH_MULTIPLE, Translator, attention_maps, translate

__all__ = ["Constraint", "DEFAULT_MAX_EXTRA_LENGTH", "Decodable", "LENGTH_MULTIPLE", "NEG_INF", "SearchResult",
           "Seq2SeqDecodable", "TransformerDecodable", "Translator", "as_decodable", "attention_maps", "beam_search",
           "validate_beam_size", "greedy_search", "length_penalty", "search", "translate"]
