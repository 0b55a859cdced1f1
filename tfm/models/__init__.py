"""Models: the Transformer and the seq2seq baselines, all `(source_ids, target_ids) -> logits`."""

from tfm.models.transformer import Transformer, build_transformer
from tfm.models.seq2seq import Seq2Seq, Seq2SeqConfig, build_seq2seq
from tfm.models.registry import (
    MODELS,
    as_config,
    build_model,
    build_optimizer_for,
    config_class,
    make_config,
    model_name,
)
