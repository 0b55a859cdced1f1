"""Models: the Transformer and the seq2seq baselines, all `(source_ids, target_ids) -> logits`.

    transformer.py   `Transformer` (§3, Figure 1)
    seq2seq.py       `Seq2Seq`: Sutskever's, Bahdanau's and Luong's RNN encoder-decoders
    presets.py       `from_preset(name | config | run folder, **overrides)`, shared by both
    families.py      `model_class(config)`: which class builds a config, the one place the family is chosen
    decoding_state.py  `DecodingState`: what `encode` returns and `decode_step` carries, for both models
    quantization.py  `quantized_copy(model, "int8")`: int8 Dense kernels for serving

One constructor: `Transformer(config)` / `Seq2Seq(config)`, and `X.from_preset(...)`, which also builds (and
loads) the model of a run folder. The models are imported on first use (PEP 562), so `import tfm.models` starts
no TensorFlow.

Example:
    >>> import tfm.models
    >>> tfm.models.Transformer.from_preset("tiny", num_layers=1).config.num_layers
    1
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

# Public name -> the module that defines it (imported on first use).
_LAZY = {
    "Transformer": "tfm.models.transformer",
    "Seq2Seq": "tfm.models.seq2seq",
    "DecodingState": "tfm.models.decoding_state",
    "quantized_copy": "tfm.models.quantization",
    "MODEL_CLASSES": "tfm.models.families",
    "model_class": "tfm.models.families",
}
_SUBMODULES = ("decoding_state", "families", "presets", "quantization", "seq2seq", "transformer")

__all__ = sorted(_LAZY)


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, _SUBMODULES)
