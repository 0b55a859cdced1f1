"""tfm_export.json, the record both exports write beside their model, and the rest of what they share
(tfm.serving.metadata)."""

import json
import os
import subprocess
import sys

import pytest

import tfm.runs
from tfm.serving import metadata
from tfm.serving.metadata import METADATA_FILE, read_metadata, resolve_model, write_metadata
from tfm.serving.saved_model import SavedModelTranslator, export_saved_model

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
    from tfm.serving.ctranslate2 import CTranslate2Translator, export_ctranslate2

    pair = (tiny_transformer, number_tokenizer)
    saved = read_metadata(export_saved_model(pair, tmp_path / "saved" / "1", beam_size=2, alpha=0.5))
    ct2 = read_metadata(export_ctranslate2(pair, tmp_path / "ct2", quantization="int8"))
    c = tiny_transformer.config
    for record in (saved, ct2):
        assert record["max_source_length"] == c.max_length and record["max_extra_length"] == c.max_extra_length
        assert record["model"] == "Transformer" and record["model_config"] == c.to_dict()
    assert (saved["format"], saved["beam_size"], saved["alpha"]) == ("saved_model", 2, 0.5)
    assert (ct2["format"], ct2["beam_size"], ct2["alpha"], ct2["quantization"]) == (
        "ctranslate2", c.beam_size, c.length_penalty, "int8")
    # Each translator reads its own kind of folder, and says which one the other is.
    with pytest.raises(ValueError, match="holds a ctranslate2 export, not a SavedModel: load it with "
                                         "CTranslate2Translator"):
        SavedModelTranslator(tmp_path / "ct2")
    with pytest.raises(ValueError, match="holds a saved_model export, not a CTranslate2 one: load it with "
                                         "SavedModelTranslator"):
        CTranslate2Translator(tmp_path / "saved" / "1")


def test_resolve_model(monkeypatch, tiny_transformer, number_tokenizer):
    model, tokenizer = tiny_transformer, number_tokenizer
    assert resolve_model((model, tokenizer)) == (model, tokenizer, {})
    assert resolve_model(model, tokenizer=tokenizer) == (model, tokenizer, {})
    with pytest.raises(ValueError, match="needs a tokenizer"):
        resolve_model(model)
    with pytest.raises(ValueError, match="tokenizer= is for a bare model"):
        resolve_model((model, tokenizer), tokenizer=tokenizer)
    with pytest.raises(ValueError, match="checkpoint= picks the weights of a run folder"):
        resolve_model((model, tokenizer), checkpoint="last")

    def fake_load_run(run_dir, checkpoint=None):
        return model, tokenizer, {"run_dir": run_dir, "checkpoint": f"{run_dir}/checkpoints/{checkpoint}.weights.h5"}

    monkeypatch.setattr(tfm.runs.folder, "load_run", fake_load_run)
    assert resolve_model("RUN", checkpoint="best") == (
        model, tokenizer, {"run": "RUN", "checkpoint": "RUN/checkpoints/best.weights.h5"})
    with pytest.raises(ValueError, match="a run folder exports with its own tokenizer"):
        resolve_model("RUN", tokenizer=tokenizer)


def test_check_sentences():
    assert metadata.check_sentences([]) == ([], [])
    assert metadata.check_sentences(["two", "drei\udcff"], on_invalid="empty") == ([b"two", b"drei\xff"], [1])
    with pytest.raises(TypeError, match=r"sentences\[1\] is a int, expected str"):
        metadata.check_sentences(["two", 3])


def test_the_metadata_and_the_ctranslate2_translator_need_no_tensorflow():
    """CTranslate2Translator serves with ctranslate2 and sentencepiece alone: reading an export starts no TensorFlow,
    and neither export module imports the other."""
    probe = ("import sys, tfm.serving.metadata, tfm.serving.ctranslate2\n"
             "print(sorted(m for m in ('tensorflow', 'keras', 'tfm.serving.saved_model') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
