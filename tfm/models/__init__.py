"""Models: the Transformer and the seq2seq baselines, all `(source_ids, target_ids) -> logits`.

The registry (`MODELS`, `make_config`, ...) and `Seq2SeqConfig` import no TensorFlow;
`Transformer`, `Seq2Seq` and their builders are imported on first use (PEP 562), so
`tfm.models.registry.MODELS` costs the CLI nothing.
"""

import importlib

from tfm.config import Seq2SeqConfig
from tfm.models.registry import (
    MODELS,
    as_config,
    build_model,
    build_optimizer_for,
    config_class,
    make_config,
    model_name,
)

# Public name -> the module that defines it (imported on first use).
_LAZY = {
    "Transformer": "tfm.models.transformer",
    "build_transformer": "tfm.models.transformer",
    "Seq2Seq": "tfm.models.seq2seq",
    "build_seq2seq": "tfm.models.seq2seq",
}
_SUBMODULES = ("registry", "seq2seq", "transformer")

__all__ = sorted(["MODELS", "Seq2SeqConfig", "as_config", "build_model", "build_optimizer_for", "config_class",
                  "make_config", "model_name", *_LAZY])


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"tfm.models.{name}")
    else:
        raise AttributeError(f"module 'tfm.models' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
