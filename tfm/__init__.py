"""tfm: "Attention Is All You Need" (Vaswani et al., 2017) rebuilt on Keras 3 / TensorFlow.

Shape legend used in every docstring and shape comment:
    B batch, S source length, T target length, N heads, H head dim,
    D model dim, F feed-forward dim, V vocabulary.

The packages, in the one order their imports run (a package imports only those before it;
docs/api/index.md and tests/test_import_graph.py hold the order):

    config      every setting's one home: a Recipe's parts TransformerConfig / Seq2SeqConfig, DataConfig,
                TrainingConfig, DecodingConfig
    data        corpora, the shared subword tokenizer, token-budget batches (§5.1)
    layers      attention (§3.2, eq. 1), masks, positional encoding (§3.5), embeddings (§3.4),
                feed-forward (§3.3), encoder/decoder layers and stacks (§3.1), the RNN baselines' parts
    models      Transformer and Seq2Seq, `from_preset`, `model_class` (which class builds a config)
    runs        the run folder every command reads and writes
    decoding    greedy and beam search (§6.1), the Translator, BLEU evaluation
    parsing     constituency parsing as translation (§6.3, Table 4)
    training    train(), losses (§5.4), schedules (§5.3, eq. 3), callbacks, tf.distribute, averaging
    serving     the SavedModel for TF Serving and the CTranslate2 export
    viz         plots and the architecture figures drawn from a config
    exercises   the course's checked exercises
    cli         the `tfm` command

Where the rest of the paper lives: §4 / Table 1 (why self-attention) is notebooks/10; Table 3's
variants are `dataclasses.replace` on `TransformerConfig.base()` (tfm.config).

Names are imported lazily (PEP 562): `import tfm` starts neither TensorFlow nor Keras; the first
use of a name that needs them does. So `tfm --help` answers at once.

Example:
    >>> import tfm
    >>> model = tfm.Transformer.from_preset("tiny", vocab_size=40)
    >>> tuple(model((tf.constant([[5, 6, 0]]), tf.constant([[2, 7]]))).shape)   # logits (B, T, V)
    (1, 2, 40)
"""

import os as _os

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

# The public names, each with the module that defines it (imported on first use). Chosen by hand: a module
# is not public because it exists.
_EXPORTS = {
    # Configs (tfm.config).
    "TransformerConfig": "tfm.config.configs",
    "Seq2SeqConfig": "tfm.config.configs",
    "DataConfig": "tfm.config.run_settings",
    "TrainingConfig": "tfm.config.run_settings",
    "DecodingConfig": "tfm.config.run_settings",
    "Recipe": "tfm.config.recipe",
    # Models (tfm.models): the front door is `Transformer.from_preset` / `Seq2Seq.from_preset`.
    "Transformer": "tfm.models.transformer",
    "Seq2Seq": "tfm.models.seq2seq",
    # Training (tfm.training).
    "train": "tfm.training.trainer",
    "LabelSmoothedCrossEntropy": "tfm.training.losses",
    "MaskedAccuracy": "tfm.training.metrics",
    "TransformerSchedule": "tfm.training.schedules",
    "build_optimizer": "tfm.training.schedules",
    "TrainingBudget": "tfm.training.callbacks",
    "average_checkpoints": "tfm.training.averaging",
    # Runs (tfm.runs).
    "read_history": "tfm.runs.record",
    # Decoding (tfm.decoding): sentences in, translations out.
    "Translator": "tfm.decoding.translator",
    "translate": "tfm.decoding.translator",
    # Serving (tfm.serving): one calling convention with the Translator.
    "export_saved_model": "tfm.serving.saved_model",
    "export_ctranslate2": "tfm.serving.ctranslate2",
    "SavedModelTranslator": "tfm.serving.saved_model_translator",
    "CTranslate2Translator": "tfm.serving.ctranslate2_translator",
}
# The paper's building blocks (tfm.layers).
_LAYERS = ("Attention", "AttentionScore", "BahdanauAttention", "Decoder", "DecoderLayer", "Encoder", "EncoderLayer",
           "FeedForward", "LuongAttention", "MultiHeadAttention", "PositionalEmbedding", "PositionalEncoding",
           "RNNDecoder", "RNNEncoder", "TokenDropout", "TokenEmbedding", "attention_weights", "masked_softmax",
           "positional_encoding", "scaled_dot_product_attention")
_EXPORTS.update({name: "tfm.layers" for name in _LAYERS})
# The public subpackages, reachable as `tfm.<name>` without an import (`tfm.cli` is the command, not an API).
_SUBPACKAGES = ("config", "data", "decoding", "exercises", "layers", "models", "parsing", "runs", "serving",
                "training", "viz")

__all__ = sorted(_EXPORTS) + ["__version__"]

from tfm._lazy import lazy_attributes as _lazy_attributes  # noqa: E402  (after the environment defaults above)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBPACKAGES)
