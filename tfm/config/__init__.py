"""Every setting's one home: the configs, the rules their values obey, and the paper-fidelity table.

    configs.py    `TransformerConfig` (presets `tiny` ... `base`, `big`) and `Seq2SeqConfig`: the models' frozen
                  dataclasses, one comment per field (re-exports the two below)
    run_settings.py  `DataConfig` and `TrainingConfig`: a run's corpus and batching, and how it trains
    rules.py      what every config shares: presets by name, dict/JSON round trips (`ConfigIO`) and
                  `--set FIELD=VALUE` parsing; re-exports the two below
    validation.py the checks every value passes, wherever it comes from (Python, `--set`, a run's config.json)
    rnn_args.py   the RNN baselines' argument rules (cell, attention, score), shared by the layers and
                  `Seq2SeqConfig`
    fidelity.py   the table of where tfm follows the paper and where it differs (docs/paper_fidelity.md)
    paper_settings.py  the paper's values that table compares with, and why ours differ (plain data)

Importing this package starts no TensorFlow: `tfm --help` reads the presets from here.

Example:
    >>> from tfm.config import TransformerConfig, apply_overrides
    >>> config = apply_overrides(TransformerConfig.tiny(), ["num_layers=3"])
    >>> config.num_layers, config.d_model
    (3, 64)
"""

from tfm.config.configs import Seq2SeqConfig, TransformerConfig
from tfm.config.run_settings import DataConfig, TrainingConfig
from tfm.config.rules import (
    PREPROCESSORS,
    ConfigIO,
    apply_overrides,
    parse_overrides,
    validate_field_types,
    validate_fraction,
    validate_length_penalty,
    validate_number,
    validate_positive_int,
    validate_positive_ints,
    validate_positive_number,
    validate_rdrop_alpha,
    validate_recipe,
    validate_seed,
)

__all__ = ["ConfigIO", "DataConfig", "PREPROCESSORS", "Seq2SeqConfig", "TrainingConfig", "TransformerConfig",
           "apply_overrides", "parse_overrides", "validate_field_types", "validate_fraction", "validate_length_penalty",
           "validate_number", "validate_positive_int", "validate_positive_ints", "validate_positive_number",
           "validate_rdrop_alpha", "validate_recipe", "validate_seed"]
