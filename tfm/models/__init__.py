"""Models: the Transformer and the seq2seq baselines, all `(source_ids, target_ids) -> logits`."""

from tfm.models.transformer import Transformer, build_transformer
