"""`Translator`'s calling convention: per-call beam size and alpha, and `Translator.from_run`.

The convention is the exported translators' too (`SavedModelTranslator`, `CTranslate2Translator`):
`translate(sentences, *, beam_size=None, alpha=None, on_invalid="error") -> list[str]`,
`translate_with_scores(...) -> (list[str], list[float])`, `__call__ = translate`.
"""

import inspect
import os

import pytest
from training_helper import copy_run

from tfm import decoding
from tfm.runs import AVERAGED, CHECKPOINT_DIR

SENTENCES = ["three hundred twenty one", "seven", "", "one thousand two hundred five"]


def test_the_calling_convention():
    for method in (decoding.Translator.translate, decoding.Translator.translate_with_scores):
        parameters = inspect.signature(method).parameters
        assert list(parameters)[:2] == ["self", "sentences"]
        keyword_only = {name: p.default for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
        assert keyword_only == {"beam_size": None, "alpha": None, "on_invalid": "error"}, method
    assert decoding.Translator.__call__ is decoding.Translator.translate


def test_per_call_settings_equal_a_translator_built_with_them(tiny_transformer, number_tokenizer):
    """`translate(..., beam_size=k, alpha=a)` is what a Translator built with k and a answers; None is the
    translator's own setting; each setting is compiled once and kept."""
    translator = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=2, alpha=0.6)
    own = translator.translate_with_scores(SENTENCES)
    for beam_size, alpha in ((1, 0.6), (3, 0.6), (2, 0.0), (1, 1.0)):
        built = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=beam_size, alpha=alpha)
        assert translator.translate_with_scores(SENTENCES, beam_size=beam_size, alpha=alpha) == \
            built.translate_with_scores(SENTENCES), (beam_size, alpha)
        assert translator(SENTENCES, beam_size=beam_size, alpha=alpha) == built(SENTENCES)
    assert translator.translate_with_scores(SENTENCES) == own  # the per-call settings did not stick
    assert translator.translate_with_scores(SENTENCES, beam_size=None, alpha=None) == own
    assert sorted(translator._searches) == [(1, 0.6, False), (1, 1.0, False), (2, 0.0, False), (2, 0.6, False),
                                            (3, 0.6, False)]
    with pytest.raises(ValueError, match="beam_size=0"):
        translator.translate(SENTENCES, beam_size=0)
    with pytest.raises(ValueError, match="alpha"):
        translator.translate(SENTENCES, alpha=-1.0)
    # The one-call helper reuses one Translator for every setting.
    assert decoding.translate(tiny_transformer, number_tokenizer, SENTENCES, beam_size=3) == translator(
        SENTENCES, beam_size=3)
    assert decoding.translate(tiny_transformer, number_tokenizer, SENTENCES, beam_size=1) == translator(
        SENTENCES, beam_size=1)


def test_from_run_follows_the_one_checkpoint_rule_and_the_runs_decoding(finished_run, tmp_path):
    """`Translator.from_run(run)` and `Transformer.from_preset(run)` read the weights `tfm.runs.weights_path`
    names: the latest epoch's until `tfm average` has run, then the averaged ones; beam and alpha are the run's."""
    import numpy as np

    import tfm
    from tfm.config import Recipe

    def same(a, b):
        return all(np.array_equal(x, y) for x, y in zip(a.get_weights(), b.get_weights()))

    run = copy_run(finished_run, tmp_path)
    with pytest.raises(FileNotFoundError, match=r"no averaged weights .*`tfm average --run .*`"):
        decoding.Translator.from_run(run, checkpoint="averaged")
    latest = decoding.Translator.from_run(run, checkpoint="latest", beam_size=1)
    assert latest.beam_size == 1
    # No averaged weights yet: "auto" is the latest epoch's, for the translator and for from_preset (issue 49).
    assert same(decoding.Translator.from_run(run).model, latest.model)
    assert same(tfm.Transformer.from_preset(run), latest.model)
    tfm.average_checkpoints(run, last=2)
    assert os.path.isfile(os.path.join(run, CHECKPOINT_DIR, AVERAGED))
    translator = decoding.Translator.from_run(run, batch_size=8)
    part = Recipe.from_record(tfm.runs.read_run_config(run)).decoding
    assert (translator.beam_size, translator.alpha) == (part.beam_size, part.length_penalty) == (4, 0.6)
    assert translator.batch_size == 8
    averaged = tfm.Transformer.from_preset(run, checkpoint="averaged")
    assert same(translator.model, averaged) and not same(translator.model, latest.model)
    assert translator(SENTENCES) == decoding.Translator(averaged, translator.tokenizer)(SENTENCES)
