"""tfm: "Attention Is All You Need" (Vaswani et al., 2017) rebuilt on Keras 3 / TensorFlow.

Shape legend used in every docstring and shape comment:
    B batch, S source length, T target length, N heads, H head dim,
    D model dim, F feed-forward dim, V vocabulary.

Where each part of the paper lives:
    §3.1 encoder/decoder stacks      tfm.layers.encoder, decoder, encoder_layer, decoder_layer
    §3.2 attention (eq. 1, MHA)      tfm.layers.scaled_dot_product_attention, multi_head_attention; tfm.masks
    §3.3 feed-forward                tfm.layers.feed_forward
    §3.4 shared embeddings           tfm.layers.shared_embedding
    §3.5 positional encoding         tfm.layers.positional_encoding
    §4 / Table 1 why self-attention  notebooks/10_why_self_attention.ipynb
    §5.1 batching by token budget    tfm.data.batching
    §5.3 optimizer, eq. 3            tfm.schedules
    §5.4 label smoothing             tfm.losses
    §6.1 beam search, averaging      tfm.decoding, tfm.checkpoints
    Table 3 variants, presets        tfm.config
    baselines (seq2seq, Bahdanau)    tfm.models.seq2seq, tfm.layers.bahdanau_attention, luong_attention

Names are imported lazily (PEP 562): `import tfm` starts neither TensorFlow nor
Keras; the first use of a name that needs them does. So `tfm --help` answers at once.
"""

import os as _os
import pkgutil as _pkgutil

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")
# TensorFlow's C++ log: warnings off; errors too where no NVIDIA driver is loaded: there the one error it
# prints is "failed call to cuInit" (looking for a GPU that cannot be there). A value set by the user wins.
_NVIDIA_DRIVER = _os.path.exists("/proc/driver/nvidia") or _os.path.exists("/dev/dxg")  # Linux; WSL
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2" if _NVIDIA_DRIVER else "3")


def _package_version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tfm")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"


__version__ = _package_version()

# Public name -> the module that defines it.
_EXPORTS = {
    "TransformerConfig": "tfm.config",
    "DataConfig": "tfm.config",
    "TrainingConfig": "tfm.config",
    "LabelSmoothedCrossEntropy": "tfm.losses",
    "MaskedAccuracy": "tfm.metrics",
    "TransformerSchedule": "tfm.schedules",
    "build_optimizer": "tfm.schedules",
    "Seq2Seq": "tfm.models",
    "Seq2SeqConfig": "tfm.config",
    "Transformer": "tfm.models",
    "build_seq2seq": "tfm.models",
    "build_transformer": "tfm.models",
    "build_model": "tfm.models",
    "make_config": "tfm.models",
    "train": "tfm.training",
    "TrainingBudget": "tfm.callbacks",
    "load_run": "tfm.runs",
    "read_history": "tfm.runs",
    "average_checkpoints": "tfm.checkpoints",
    "Translator": "tfm.decoding",
    "translate": "tfm.decoding",
}
_LAYERS = ("Attention", "AttentionScore", "BahdanauAttention", "Decoder", "DecoderLayer", "Encoder", "EncoderLayer",
           "FeedForward", "LuongAttention", "MultiHeadAttention", "PositionalEmbedding", "PositionalEncoding",
           "RNNDecoder", "RNNEncoder", "SharedEmbedding", "TokenDropout", "attention_weights", "masked_softmax",
           "positional_encoding", "scaled_dot_product_attention")
_EXPORTS.update({name: "tfm.layers" for name in _LAYERS})
# Every module and package in tfm/, read from the folder so a new one is never missed: `tfm.parsing` etc.
_SUBMODULES = tuple(sorted(m.name for m in _pkgutil.iter_modules(__path__) if not m.name.startswith("_")))

__all__ = sorted(_EXPORTS) + ["__version__"]

from tfm._lazy import lazy_attributes as _lazy_attributes  # noqa: E402  (after the environment defaults above)


__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
