"""Every setting's one home: a run's four parts, the rules their values obey, and the paper-fidelity table.

    configs.py    the models' architecture: `TransformerConfig` (presets `tiny` ... `base`, `big`) and
                  `Seq2SeqConfig`, one comment per field
    run_settings.py  the other parts: `DataConfig` (corpus, languages, preprocessing, subwords to learn, pair
                  filter), `TrainingConfig` (§5) and `DecodingConfig` (§6.1)
    recipe.py     `Recipe`: the four parts; presets by name (`Recipe.preset("base")`), `--set FIELD=VALUE` by the
                  field's name (`apply_overrides`), `model_name`, a run's config.json (`upgrade_record`)
    rules.py      what every config shares: presets by name, dict/JSON round trips (`ConfigIO`), `--set` parsing,
                  and a model config field's declaration: `fixed` or `free` once the model is trained
    validation.py the checks every value passes, wherever it comes from (Python, `--set`, a run's config.json)
    rnn_args.py   the RNN baselines' argument rules (cell, attention, score), shared by the layers and
                  `Seq2SeqConfig`
    fidelity.py   the table of where tfm follows the paper and where it differs (docs/paper_fidelity.md)
    paper_settings.py  the paper's values that table compares with, and why ours differ (plain data)

Each setting is a field of exactly one of the four parts. Importing this package starts no TensorFlow:
`tfm --help` reads the presets from here.

Example:
    >>> from tfm.config import Recipe, apply_overrides
    >>> recipe = apply_overrides(Recipe.preset("tiny"), ["num_layers=3", "warmup_steps=100"])
    >>> recipe.model.num_layers, recipe.model.d_model, recipe.training.warmup_steps
    (3, 64, 100)
"""

from tfm.config.configs import DEFAULT_MAX_EXTRA_LENGTH, Seq2SeqConfig, TransformerConfig
from tfm.config.recipe import (
    MODELS,
    Recipe,
    apply_overrides,
    config_class,
    model_name,
    output_room,
    upgrade_record,
)
from tfm.config.rules import ON_TRAINED_MODEL, ConfigIO, fixed, free, parse_overrides
from tfm.config.run_settings import DataConfig, DecodingConfig, TrainingConfig
from tfm.config.validation import (
    PREPROCESSORS,
    validate_field_types,
    validate_fraction,
    validate_length_penalty,
    validate_number,
    validate_positive_int,
    validate_positive_ints,
    validate_positive_number,
    validate_rdrop_alpha,
    validate_seed,
)

__all__ = ["DEFAULT_MAX_EXTRA_LENGTH", "MODELS", "ON_TRAINED_MODEL", "ConfigIO", "DataConfig", "DecodingConfig",
           "PREPROCESSORS", "Recipe", "Seq2SeqConfig", "TrainingConfig", "TransformerConfig", "apply_overrides",
           "config_class", "fixed", "free", "model_name", "output_room", "parse_overrides", "upgrade_record",
           "validate_field_types", "validate_fraction", "validate_length_penalty", "validate_number",
           "validate_positive_int", "validate_positive_ints", "validate_positive_number", "validate_rdrop_alpha",
           "validate_seed"]
