import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest

from tfm.config import Recipe, TransformerConfig, fidelity

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "paper_fidelity.md")


def _preset(monkeypatch, name, **changes):
    """Makes `Recipe.preset(name)` return the recipe with `changes` (in any part), as a drifted preset would."""
    original = Recipe.preset.__func__

    def drifted(cls, preset, *args, **fields):
        recipe = original(cls, preset, *args, **fields)
        return recipe.replace(**changes) if preset == name else recipe

    monkeypatch.setattr(Recipe, "preset", classmethod(drifted))


def _row(table, setting, preset=None):
    return next(r for r in table if r.setting == setting and r.preset == preset)


def test_every_difference_from_the_paper_has_a_reason():
    assert fidelity.undocumented() == []
    table = fidelity.rows()
    assert {r.status for r in table} == {"same", "differs", "not in paper"}
    # The paper's settings that DESIGN.md promises are read as equal.
    for preset, field in [("base", "d_model"), ("big", "d_model"), ("base", "adam_beta_2"), ("big", "dropout"),
                          ("big", "checkpoints_to_average"), ("base", "max_extra_length")]:
        assert _row(table, field, preset).status == "same", (preset, field)


@pytest.mark.parametrize("preset, field, value", [("base", "d_ff", 1024), ("big", "dropout", 0.1),
                                                   ("base", "adam_beta_2", 0.999),
                                                   ("big", "checkpoints_to_average", 5)])
def test_a_preset_that_drifts_from_the_paper_is_caught(monkeypatch, preset, field, value):
    _preset(monkeypatch, preset, **{field: value})
    problems = fidelity.undocumented()
    assert [(r.preset, r.setting, r.code) for r in problems] == [(preset, field, value)]
    assert "no reason" in fidelity.render_markdown()
    assert fidelity.main([]) == 1


def test_a_reason_explains_one_value_only(monkeypatch):
    monkeypatch.setitem(fidelity.DIFFERENCES, ("model", "base.d_ff"), (1024, "a documented change"))
    _preset(monkeypatch, "base", d_ff=1024)
    assert fidelity.undocumented() == []
    assert _row(fidelity.rows(), "d_ff", "base").reason == "a documented change"
    _preset(monkeypatch, "base", d_ff=3072)  # drifts again: the reason was for 1024
    assert [r.code for r in fidelity.undocumented()] == [3072]


def test_a_config_field_without_a_paper_entry_is_refused(monkeypatch):
    monkeypatch.delitem(fidelity.PAPER_MODEL, "warmup_steps")
    with pytest.raises(ValueError, match="warmup_steps"):
        fidelity.rows()


def test_rows_read_the_live_code():
    table = fidelity.rows()
    recipe = Recipe.preset("base")
    base = recipe.model
    for field in (f.name for f in dataclasses.fields(TransformerConfig)):
        code = _row(table, field, "base").code
        assert code == (base.head_key_dim if field == "key_dim" else
                        base.head_value_dim if field == "value_dim" else getattr(base, field))
    for part, field in (("training", "warmup_steps"), ("decoding", "beam_size"), ("data", "subwords")):
        assert _row(table, field, "base").code == getattr(getattr(recipe, part), field)
    import inspect

    from tfm.decoding.beam import beam_search

    defaults = inspect.signature(beam_search).parameters
    assert _row(table, "beam_search(beam_size)").code == defaults["beam_size"].default
    assert _row(table, "beam_search(alpha)").code == defaults["alpha"].default


def test_docs_table_is_current():
    with open(DOC, encoding="utf-8") as f:
        assert f.read() == fidelity.render_markdown(), (
            "stale: python -m tfm.config.fidelity --write docs/paper_fidelity.md")


def test_check_flag_reports_a_stale_file(tmp_path):
    path = tmp_path / "table.md"
    assert fidelity.main(["--write", str(path)]) == 0
    assert fidelity.main(["--check", str(path)]) == 0
    path.write_text(path.read_text().replace("| same |", "| differs |", 1))
    assert fidelity.main(["--check", str(path)]) == 1


def test_conventions_described_are_the_code():
    """The convention rows' 'tfm' column: the loss's target and the search's length penalty."""
    import tensorflow as tf

    import tfm
    from tfm.decoding.search_steps import length_penalty

    eps, vocab, reference = 0.1, 7, 2
    logits = tf.Variable(tf.zeros((1, 1, vocab)))
    with tf.GradientTape() as tape:
        loss = tfm.LabelSmoothedCrossEntropy(eps)(tf.constant([[reference]]), logits)
    target = (tf.nn.softmax(logits) - tape.gradient(loss, logits)).numpy()[0, 0]  # q = p - dL/dz
    expected = np.full(vocab, eps / (vocab - 1))
    expected[reference] = 1 - eps
    np.testing.assert_allclose(target, expected, atol=1e-6)
    np.testing.assert_allclose(float(length_penalty(tf.constant(7.0), 0.6)), (12 / 6) ** 0.6, rtol=1e-6)


def test_module_runs_without_tensorflow():
    code = ("import sys, tfm.config.fidelity as f; f.rows(); f.render_markdown(); "
            "sys.exit('tensorflow' in sys.modules or 'keras' in sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=120)
