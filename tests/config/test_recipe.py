"""The config split: each setting in exactly one part, presets that name all four, `--set` by field name,
and config.json's format 1 (the layout of tfm 0.1.0 before the split) converted by one function."""

import dataclasses
import json

import pytest

from tfm.config import (
    DataConfig,
    DecodingConfig,
    Recipe,
    Seq2SeqConfig,
    TrainingConfig,
    TransformerConfig,
    apply_overrides,
    upgrade_record,
)

PARTS = (TransformerConfig, Seq2SeqConfig, DataConfig, TrainingConfig, DecodingConfig)
SECTION_5 = {"warmup_steps", "learning_rate_scale", "adam_beta_1", "adam_beta_2", "adam_epsilon", "label_smoothing",
             "rdrop_alpha", "tokens_per_batch", "learning_rate", "clipnorm"}
SECTION_6_1 = {"beam_size", "length_penalty", "max_extra_length", "checkpoints_to_average"}


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}


def test_each_setting_lives_in_one_part():
    model_parts = (TransformerConfig, DataConfig, TrainingConfig, DecodingConfig)
    names = [name for cls in model_parts for name in _fields(cls)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    rnn_parts = (Seq2SeqConfig, DataConfig, TrainingConfig, DecodingConfig)
    names = [name for cls in rnn_parts for name in _fields(cls)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for model in (TransformerConfig, Seq2SeqConfig):
        assert not _fields(model) & (SECTION_5 | SECTION_6_1 | {"preprocess", "subwords", "max_pair_length"})
    assert SECTION_5 <= _fields(TrainingConfig) and SECTION_6_1 == _fields(DecodingConfig)


@pytest.mark.parametrize("name", Recipe.PRESETS)
def test_every_preset_names_all_four_parts_and_round_trips(name):
    recipe = Recipe.preset(name)
    assert isinstance(recipe.data, DataConfig) and isinstance(recipe.training, TrainingConfig)
    assert isinstance(recipe.decoding, DecodingConfig)
    assert Recipe.from_dict(json.loads(json.dumps(recipe.to_dict()))) == recipe
    assert Recipe.from_record(recipe.to_record("0.1.0")) == recipe


def test_presets_keep_their_numbers():
    """The values the presets had before the split, now in the part that owns each."""
    m30k = Recipe.preset("m30k")
    assert (m30k.model.d_model, m30k.model.norm_first, m30k.data.subwords, m30k.data.preprocess) == (128, True, 10000,
                                                                                                     "moses_lc")
    assert (m30k.training.warmup_steps, m30k.training.learning_rate_scale, m30k.training.tokens_per_batch) == (
        2000, round(0.005 * (128 * 2000) ** 0.5, 4), 4096)
    assert (m30k.decoding.beam_size, m30k.decoding.length_penalty, m30k.decoding.checkpoints_to_average) == (5, 1.0, 10)
    parse = Recipe.preset("parse_small")
    assert (parse.model.extra_positions, parse.decoding.max_extra_length, parse.decoding.beam_size) == (300, 300, 21)
    tiny = Recipe.preset("tiny")
    assert (tiny.model.max_length, tiny.data.max_pair_length, tiny.training.warmup_steps) == (64, 64, 400)
    # The RNN baselines: the preset's data and decoding, Adam at a constant rate, clipped.
    luong = Recipe.preset("small", model="luong")
    assert (luong.model.units, luong.model.attention, luong.data.subwords) == (256, "luong", 8000)
    assert (luong.training.learning_rate, luong.training.clipnorm, luong.training.adam_beta_2) == (1e-3, 1.0, 0.999)
    assert Recipe.preset("sutskever") == Recipe.preset("base", model="seq2seq")
    # Table 3's rows stay a replace of the part they change.
    row_b = dataclasses.replace(Recipe.preset("base"), model=dataclasses.replace(TransformerConfig.base(), key_dim=16))
    assert row_b.model.head_key_dim == 16 and row_b.training == Recipe.preset("base").training


def test_the_output_limit_is_one_setting():
    """§6.1's "input length + 50": the decoding's limit is the model's room (`extra_positions`), written once (the
    parse presets' 300 in their model), followed when the room changes, never set beyond it; a run recorded
    with other values reads as it was written (its outputs stay as they were)."""
    assert DecodingConfig().max_extra_length is None  # the model's room, which a recipe writes in
    for name, room in (("tiny", 50), ("parse_small", 300)):
        for model in ("transformer", "bahdanau"):
            assert Recipe.preset(name, model=model).decoding.max_extra_length == room
    follows = apply_overrides(Recipe.preset("tiny"), ["extra_positions=12"])
    assert (follows.model.extra_positions, follows.decoding.max_extra_length) == (12, 12)
    lower = Recipe.preset("parse").replace(max_extra_length=40)  # a shorter limit than the room stays one
    assert (lower.model.extra_positions, lower.decoding.max_extra_length) == (300, 40)
    assert lower.replace(extra_positions=350).decoding.max_extra_length == 40
    assert Recipe.for_model(TransformerConfig.tiny(extra_positions=4)).decoding.max_extra_length == 4
    with pytest.raises(ValueError, match=r"max_extra_length=80 exceeds the model's extra_positions=50, .*set "
                                         r"extra_positions=80"):
        apply_overrides(Recipe.preset("tiny"), ["max_extra_length=80"])
    both = Recipe.preset("tiny", extra_positions=80, max_extra_length=80)
    assert (both.model.extra_positions, both.decoding.max_extra_length) == (80, 80)
    record = Recipe.preset("tiny").to_record("0.1.0")
    record["decoding"]["max_extra_length"] = 70  # a run trained before: its own values, as recorded
    assert Recipe.from_record(record).decoding.max_extra_length == 70


def test_set_finds_the_part_by_the_field_name():
    recipe = apply_overrides(Recipe.preset("tiny"), ["num_layers=3", "subwords=500", "warmup_steps=100",
                                                      "length_penalty=1.0", "key_dim=none", "xla=true"])
    assert (recipe.model.num_layers, recipe.data.subwords, recipe.training.warmup_steps) == (3, 500, 100)
    assert (recipe.decoding.length_penalty, recipe.model.key_dim, recipe.training.xla) == (1.0, None, True)
    with pytest.raises(ValueError, match=r"--set 'warmup=3': no part of the recipe has a field 'warmup' \(did you "
                                         r"mean warmup_steps\?\)"):
        apply_overrides(Recipe.preset("tiny"), ["warmup=3"])
    with pytest.raises(ValueError, match="TrainingConfig.warmup_steps is an int"):
        apply_overrides(Recipe.preset("tiny"), ["warmup_steps=soon"])
    with pytest.raises(ValueError, match="beam_size=0 must be a positive int"):
        apply_overrides(Recipe.preset("tiny"), ["beam_size=0"])


def test_bad_values_are_named_by_their_part():
    with pytest.raises(ValueError, match="max_pair_length=128 exceeds the model's max_length=64"):
        Recipe.preset("tiny", max_pair_length=128)
    with pytest.raises(ValueError, match="tokens_per_batch=32 is smaller than max_pair_length=64"):
        Recipe.preset("tiny", tokens_per_batch=32)
    with pytest.raises(ValueError, match="subwords=3 leaves no room"):
        DataConfig(subwords=3)
    with pytest.raises(ValueError, match="learning_rate=0"):
        TrainingConfig(learning_rate=0)
    with pytest.raises(ValueError, match="alpha=11"):
        DecodingConfig(length_penalty=11)
    with pytest.raises(ValueError, match="preset='huge'"):
        Recipe.preset("huge")
    with pytest.raises(TypeError, match="Recipe data="):
        Recipe(TransformerConfig.tiny(), data="numbers")


# config.json as tfm 0.1.0 wrote it (`tfm.runs.record.run_record` of resolve_settings(config, "numbers", seed=3)
# at commit 89494f6), for a one-layer tiny Transformer and a tiny Luong baseline: the format-1 layout.
FORMAT_1_TRANSFORMER = {
    "data": {"data_dir": None, "dataset": "numbers", "max_length": 64, "preprocess": None, "source_file": None,
             "source_lang": None, "target_file": None, "target_lang": None, "tokens_per_batch": 2048,
             "train_sentences": None, "vocab_size": 60},
    "format": 1, "model": "transformer",
    "model_config": {"activation_dropout": 0.0, "adam_beta_1": 0.9, "adam_beta_2": 0.98, "adam_epsilon": 1e-09,
                     "attention_dropout": 0.0, "beam_size": 4, "checkpoints_to_average": 5, "d_ff": 256,
                     "d_model": 64, "dropout": 0.1, "key_dim": None, "label_smoothing": 0.1,
                     "layer_norm_epsilon": 1e-06, "learning_rate_scale": 1.0, "length_penalty": 0.6,
                     "max_extra_length": 50, "max_length": 64, "norm_first": False, "num_heads": 4, "num_layers": 1,
                     "positional": "sinusoidal", "preprocess": None, "rdrop_alpha": 0.0, "share_embeddings": True,
                     "token_dropout": 0.0, "tokens_per_batch": 2048, "value_dim": None, "vocab_size": 60,
                     "warmup_steps": 400},
    "tfm_version": "0.1.0",
    "training": {"keep_checkpoints": 5, "label_smoothing": 0.1, "mixed_precision": False, "rdrop_alpha": 0.0,
                 "seed": 3, "steps_per_epoch": None, "strategy": "auto", "xla": False}}
FORMAT_1_LUONG = {
    "data": {"data_dir": None, "dataset": "numbers", "max_length": 64, "preprocess": None, "source_file": None,
             "source_lang": None, "target_file": None, "target_lang": None, "tokens_per_batch": 2048,
             "train_sentences": None, "vocab_size": 1000},
    "format": 1, "model": "luong",
    "model_config": {"attention": "luong", "attention_units": None, "beam_size": 4, "bidirectional": False,
                     "cell": "lstm", "checkpoints_to_average": 5, "clipnorm": 1.0, "dropout": 0.0,
                     "embedding_dim": 32, "input_feeding": False, "label_smoothing": 0.1, "learning_rate": 0.001,
                     "length_penalty": 0.6, "max_extra_length": 50, "max_length": 64, "num_layers": 1,
                     "score": "general", "tokens_per_batch": 2048, "units": 64, "vocab_size": 1000},
    "tfm_version": "0.1.0",
    "training": {"keep_checkpoints": 5, "label_smoothing": 0.1, "mixed_precision": False, "rdrop_alpha": 0.0,
                 "seed": 3, "steps_per_epoch": None, "strategy": "auto", "xla": False}}


def test_a_format_1_transformer_run_converts_to_the_same_settings():
    recipe = Recipe.from_record(FORMAT_1_TRANSFORMER)
    assert recipe == Recipe.preset("tiny", num_layers=1, vocab_size=60, subwords=60, seed=3, keep_checkpoints=5)
    # The same position table as before: max_length + max_extra_length + 1 rows.
    assert recipe.model.max_length + recipe.model.extra_positions + 1 == 64 + 50 + 1
    upgraded = upgrade_record(FORMAT_1_TRANSFORMER)
    assert upgraded["format"] == 2 and upgraded["tfm_version"] == "0.1.0"
    assert sorted(upgraded) == ["data", "decoding", "format", "model", "model_name", "tfm_version", "training"]
    assert upgrade_record(upgraded) is upgraded  # format 2 as is


def test_a_format_1_rnn_run_keeps_the_optimizer_it_trained_with():
    recipe = Recipe.from_record(FORMAT_1_LUONG)
    expected = Recipe.preset("tiny", model="luong", seed=3, keep_checkpoints=5)  # format 1 recorded the 5 kept
    assert (recipe.model, recipe.data, recipe.decoding) == (expected.model, expected.data, expected.decoding)
    # Keras' Adam defaults and Seq2SeqConfig's old rate and clipping (eq. 3's warm-up does not apply: its default).
    t = recipe.training
    assert (t.learning_rate, t.clipnorm, t.adam_beta_1, t.adam_beta_2, t.adam_epsilon) == (1e-3, 1.0, 0.9, 0.999, 1e-7)
    assert t == expected.training and recipe == expected  # `tfm train --preset tiny --model luong --seed 3` resumes it


def test_another_format_is_refused_in_one_line():
    with pytest.raises(ValueError) as error:
        upgrade_record({**FORMAT_1_TRANSFORMER, "format": 3, "tfm_version": "0.9.0"})
    message = str(error.value)
    assert "\n" not in message and "format 3" in message and "tfm 0.9.0" in message
    assert "reads formats 1 and 2" in message
