"""tfm_export.json, the record both exports write beside their model, and the rest of what they share
(tfm.serving.metadata)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tfm.runs
from tfm.serving.metadata import METADATA_FILE, read_metadata, resolve_model, write_metadata
from tfm.serving.saved_model import export_saved_model
from tfm.serving.saved_model_translator import SavedModelTranslator

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_round_trip(tmp_path):
    record = {"format": "saved_model", "beam_size": 4, "alpha": 0.6, "run": "runs/Übersetzung",
              "model_config": {"d_model": 512, "norm_first": False, "dropout": 0.1}, "checkpoint": None,
              "signatures": {"serving_default": {"translations": "tf.string (B,)"}}}
    assert write_metadata(tmp_path, record) == str(tmp_path)
    assert read_metadata(tmp_path) == record
    text = (tmp_path / METADATA_FILE).read_text(encoding="utf-8")
    assert text.endswith("}\n") and "Übersetzung" in text and json.loads(text) == record  # readable as written


def test_a_folder_without_a_record_is_not_an_export(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a tfm export: it has no tfm_export.json"):
        read_metadata(tmp_path)
    with pytest.raises(FileNotFoundError, match="is not a tfm export"):
        SavedModelTranslator(tmp_path)


def test_both_exports_write_the_record(tmp_path, tiny_transformer, number_tokenizer):
    pytest.importorskip("ctranslate2", reason="the CTranslate2 export is an optional extra")
    from tfm.serving.ctranslate2 import export_ctranslate2
    from tfm.serving.ctranslate2_translator import CTranslate2Translator

    pair = (tiny_transformer, number_tokenizer)
    saved = read_metadata(export_saved_model(pair, tmp_path / "saved" / "1", beam_size=2, alpha=0.5))
    ct2 = read_metadata(export_ctranslate2(pair, tmp_path / "ct2", quantization="int8"))
    c = tiny_transformer.config
    for record in (saved, ct2):
        assert record["max_source_length"] == c.max_length and record["max_extra_length"] == c.extra_positions
        assert record["model"] == "Transformer" and record["model_config"] == c.to_dict()
    assert (saved["format"], saved["beam_size"], saved["alpha"]) == ("saved_model", 2, 0.5)
    assert (ct2["format"], ct2["beam_size"], ct2["alpha"], ct2["quantization"]) == (
        "ctranslate2", 4, 0.6, "int8")  # no run: §6.1's beam and alpha (tfm.config.DecodingConfig)
    # Each translator reads its own kind of folder, and says which one the other is.
    with pytest.raises(ValueError, match="holds a ctranslate2 export, not a SavedModel: load it with "
                                         "CTranslate2Translator"):
        SavedModelTranslator(tmp_path / "ct2")
    with pytest.raises(ValueError, match="holds a saved_model export, not a CTranslate2 one: load it with "
                                         "SavedModelTranslator"):
        CTranslate2Translator(tmp_path / "saved" / "1")


def test_resolve_model(tiny_transformer, number_tokenizer, finished_run):
    from tfm.config import DecodingConfig, Recipe

    model, tokenizer = tiny_transformer, number_tokenizer
    assert resolve_model((model, tokenizer)) == (model, tokenizer, {}, DecodingConfig())
    assert resolve_model(model, tokenizer=tokenizer) == (model, tokenizer, {}, DecodingConfig())
    with pytest.raises(ValueError, match="needs a tokenizer"):
        resolve_model(model)
    with pytest.raises(ValueError, match="tokenizer= is for a bare model"):
        resolve_model((model, tokenizer), tokenizer=tokenizer)
    with pytest.raises(ValueError, match="checkpoint= picks the weights of a run folder"):
        resolve_model((model, tokenizer), checkpoint="last")
    # A run folder: its model with the weights the checkpoint rule names, its tokenizer and its decoding part.
    recipe = Recipe.from_record(tfm.runs.read_run_config(finished_run))
    model, tokenizer, source, decoding = resolve_model(finished_run, checkpoint="latest")
    latest = tfm.runs.weights_path(finished_run, "latest")
    assert source == {"run": finished_run, "checkpoint": latest} and decoding == recipe.decoding
    assert model.config == recipe.model and tokenizer.vocab_size == recipe.model.vocab_size
    reference = type(model).from_preset(finished_run, checkpoint=latest)
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), reference.get_weights()))
    assert resolve_model(finished_run)[2]["checkpoint"] == tfm.runs.weights_path(finished_run)  # "auto"
    with pytest.raises(ValueError, match="a run folder exports with its own tokenizer"):
        resolve_model(finished_run, tokenizer=tokenizer)


def test_the_metadata_and_the_ctranslate2_translator_need_no_tensorflow():
    """CTranslate2Translator serves with ctranslate2 and sentencepiece alone: reading an export starts no TensorFlow,
    and neither export module imports the other."""
    probe = ("import sys, tfm.serving.metadata, tfm.serving.ctranslate2\n"
             "print(sorted(m for m in ('tensorflow', 'keras', 'tfm.serving.saved_model') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
