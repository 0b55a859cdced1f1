"""Decoding (Vaswani et al., 2017, §6.1): search over ids, and text in / text out.

    translator.py         `Translator`: sentences in, translations out (`Translator.from_run` for a run folder)
    attention_weights.py  `attention_maps`: every layer's and head's attention for given outputs (for plots)
    greedy_or_beam.py     `search`: greedy or beam search by the beam size, and how every search runs
    greedy.py             greedy search
    beam.py               beam search (k alive and k finished hypotheses per sentence)
    search_steps.py       SearchResult, the length penalty, the beam size's check, the steps both searches take
    batch_state.py        the search's state when a decided sentence leaves the batch (dynamic shapes)
    model_adapter.py      how the search sees a model: `start` / `step` over a `DecodingState`
    constraints.py        constrained decoding: the `Constraint` protocol (§6.3's trees: `tfm.parsing.TreeConstraint`)
    nbest.py              n-best lists and alignments, shared with the exported SavedModel
    input_rule.py         the input rule in plain Python (for what runs without TensorFlow)
    text_ops.py           the input rule, tokenizing and detokenizing in TensorFlow ops, shared with the SavedModel
    bleu.py               BLEU and chrF with sacreBLEU (§6.1, Table 2), a run's results files

Every model decodes through one interface, `encode` -> `DecodingState` and `decode_step`
(`tfm.models.decoding_state`).

Example:
    >>> from tfm import Transformer
    >>> from tfm.decoding import search
    >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1, extra_positions=3)
    >>> result = search(model, [[5, 6, 7]], beam_size=2)    # ids in: a SearchResult, T_max = 3 + 3 + 1
    >>> result.sequences.shape, result.all_sequences.shape
    (TensorShape([1, 7]), TensorShape([1, 2, 7]))
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

# Public name -> the module that defines it, imported on first use (PEP 562): `tfm.decoding.input_rule`
# (what CTranslate2Translator reads) starts no TensorFlow.
_EXPORTS = {
    **dict.fromkeys(("Decodable", "ModelDecodable", "as_decodable"), "tfm.decoding.model_adapter"),
    "Constraint": "tfm.decoding.constraints",
    **dict.fromkeys(("NEG_INF", "SearchResult", "length_penalty", "validate_beam_size"), "tfm.decoding.search_steps"),
    "beam_search": "tfm.decoding.beam",
    "greedy_search": "tfm.decoding.greedy",
    "search": "tfm.decoding.greedy_or_beam",
    **dict.fromkeys(("LENGTH_MULTIPLE", "Translator", "translate"), "tfm.decoding.translator"),
    "attention_maps": "tfm.decoding.attention_weights",
}
_SUBMODULES = ("attention_weights", "batch_state", "beam", "bleu", "constraints", "greedy", "greedy_or_beam",
               "input_rule", "model_adapter", "nbest", "search_steps", "text_ops", "translator")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
