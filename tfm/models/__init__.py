"""Models: the Transformer and the seq2seq baselines, all `(source_ids, target_ids) -> logits`.

    transformer.py   `Transformer` (§3, Figure 1)
    seq2seq.py       `Seq2Seq`: Sutskever's, Bahdanau's and Luong's RNN encoder-decoders
    presets.py       `from_preset(name_or_config, **overrides)`, shared by both
    decoding_state.py  `DecodingState`: what `encode` returns and `decode_step` carries, for both models
    quantization.py  `quantized_copy(model, "int8")`: int8 Dense kernels for serving
    registry.py      model names (`MODELS`) and `make_config`: what `tfm train --model M --preset P` builds

The registry (`MODELS`, `make_config`, ...) and `Seq2SeqConfig` import no TensorFlow;
`Transformer`, `Seq2Seq` and their builders are imported on first use (PEP 562), so
`tfm.models.registry.MODELS` costs the CLI nothing.

Example:
    >>> import tfm.models
    >>> tfm.models.Transformer.from_preset("tiny", num_layers=1).config.num_layers
    1
"""

from tfm._lazy import lazy_attributes as _lazy_attributes
from tfm.config import Seq2SeqConfig
from tfm.models.registry import MODELS, as_config, build_model, config_class, make_config, model_name

# Public name -> the module that defines it (imported on first use).
_LAZY = {
    "Transformer": "tfm.models.transformer",
    "build_transformer": "tfm.models.transformer",
    "Seq2Seq": "tfm.models.seq2seq",
    "build_seq2seq": "tfm.models.seq2seq",
    "DecodingState": "tfm.models.decoding_state",
    "quantized_copy": "tfm.models.quantization",
}
_SUBMODULES = ("decoding_state", "presets", "quantization", "registry", "seq2seq", "transformer")

__all__ = sorted(["MODELS", "Seq2SeqConfig", "as_config", "build_model", "config_class", "make_config", "model_name",
                  *_LAZY])


__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, _SUBMODULES)
