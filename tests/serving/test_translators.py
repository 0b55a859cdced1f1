"""One calling convention, three translators: `Translator` (eager TensorFlow), `SavedModelTranslator` (the exported
graph) and `CTranslate2Translator` (the same weights in CTranslate2) answer the same batch alike.

`translate(sentences, *, beam_size=None, alpha=None, on_invalid="error") -> list[str]`,
`translate_with_scores(...) -> (list[str], list[float])`, `__call__ = translate`; a score is
`log P(Y | X) / lp(Y)` with GNMT's penalty, 0 for a blank sentence, nan for refused input.
"""

import inspect
import math

import numpy as np
import pytest

from tfm.decoding import Translator, input_rule
from tfm.serving.saved_model import export_saved_model
from tfm.serving.saved_model_translator import SavedModelTranslator

ctranslate2 = pytest.importorskip("ctranslate2", reason="the CTranslate2 export is an optional extra")

from tfm.serving.ctranslate2 import export_ctranslate2  # noqa: E402  (after importorskip)
from tfm.serving.ctranslate2_translator import CTranslate2Translator  # noqa: E402  (after importorskip)

ALPHA = 0.6
# Short and long sources in one batch (the untrained model runs most of them to their own limit, source length +
# 4), whitespace variants, blanks, and one input past the model's 12 subwords.
SENTENCES = ["two", " two\r\n", "seven hundred", "", "three hundred twenty one", "one thousand two hundred five",
             "\t \n", "ninety nine", " ".join(["seven hundred"] * 10), "a\nb"]


@pytest.fixture(scope="module")
def exports(tmp_path_factory, tiny_transformer, number_tokenizer):
    """`{beam size: SavedModelTranslator}` (the beam is fixed at export) and one `CTranslate2Translator`."""
    root = tmp_path_factory.mktemp("translators")
    saved = {beam: SavedModelTranslator(export_saved_model((tiny_transformer, number_tokenizer),
                                                           root / f"saved_beam{beam}" / "1", beam_size=beam,
                                                           alpha=ALPHA))
             for beam in (1, 2)}
    return saved, CTranslate2Translator(export_ctranslate2((tiny_transformer, number_tokenizer), root / "ct2"))


@pytest.fixture(scope="module")
def eager(tiny_transformer, number_tokenizer):
    return {beam: Translator(tiny_transformer, number_tokenizer, beam_size=beam, alpha=ALPHA) for beam in (1, 2)}


def _pieces(ct2, sentences):
    """The non-blank sentences as subword strings, the way `CTranslate2Translator.translate` cuts them."""
    return [ct2.sentencepiece.encode(input_rule.normalize(s), out_type=str) for s in sentences if s.strip()]


def _limit(ct2, source):
    """A source's output limit in subwords: its (cut) length + max_extra_length."""
    return min(len(source), ct2.max_source_length) + ct2.max_extra_length


def test_greedy_translations_and_scores_are_the_same_from_all_three(exports, eager, caplog):
    saved, ct2 = exports
    with caplog.at_level("WARNING"):
        expected, expected_scores = eager[1].translate_with_scores(SENTENCES)
        saved_out, saved_scores = saved[1].translate_with_scores(SENTENCES)
        ct2_out, ct2_scores = ct2.translate_with_scores(SENTENCES, beam_size=1, alpha=ALPHA)
    assert saved_out == ct2_out == expected
    np.testing.assert_allclose(saved_scores, expected_scores, atol=1e-4)
    np.testing.assert_allclose(ct2_scores, expected_scores, atol=1e-4)
    assert expected[0] == expected[1] and expected[3] == expected[6] == "" and expected_scores[3] == 0.0
    assert ct2_scores[3] == ct2_scores[6] == saved_scores[3] == 0.0
    # The premise: outputs that stop at their own limit, of several lengths, in one batch (CTranslate2 takes one
    # limit per call and runs those sentences again; tfm stops each at its own), and others that end before it.
    sources = _pieces(ct2, SENTENCES)
    outputs = ct2.translate_tokens(sources, beam_size=1)
    at_limit = {_limit(ct2, s) for s, o in zip(sources, outputs) if len(o) == _limit(ct2, s)}
    assert len(at_limit) >= 2 and any(len(o) < _limit(ct2, s) for s, o in zip(sources, outputs)), outputs
    # Each translator warns once about the input past max_length.
    assert caplog.text.count("truncated (the first: index 8)") == 3


def test_beams_agree_where_the_search_is_the_same(exports, eager):
    """The SavedModel runs tfm's beam search: the same translations and scores. CTranslate2 ranks beams with its own
    length penalty, so only where it chose tfm's translation are the scores the same; every output keeps to its
    sentence's limit."""
    saved, ct2 = exports
    expected, expected_scores = eager[2].translate_with_scores(SENTENCES)
    saved_out, saved_scores = saved[2].translate_with_scores(SENTENCES, beam_size=2, alpha=ALPHA)
    assert saved_out == expected
    np.testing.assert_allclose(saved_scores, expected_scores, atol=1e-4)
    ct2_out, ct2_scores = ct2.translate_with_scores(SENTENCES, beam_size=2, alpha=ALPHA)
    same = [i for i, (a, b) in enumerate(zip(ct2_out, expected)) if a == b and a]
    assert len(same) >= 3, (ct2_out, expected)
    np.testing.assert_allclose([ct2_scores[i] for i in same], [expected_scores[i] for i in same], atol=1e-4)
    sources = _pieces(ct2, SENTENCES)
    outputs = ct2.translate_tokens(sources, beam_size=2, alpha=ALPHA)
    assert all(len(o) <= _limit(ct2, s) for s, o in zip(sources, outputs)), outputs


def _translators(exports, eager):
    saved, ct2 = exports
    return {"Translator": eager[1], "SavedModelTranslator": saved[1], "CTranslate2Translator": ct2}


@pytest.mark.parametrize("name", ["Translator", "SavedModelTranslator", "CTranslate2Translator"])
def test_translate_with_scores_agrees_with_translate(exports, eager, name):
    translator = _translators(exports, eager)[name]
    options = {"beam_size": 1} if name == "CTranslate2Translator" else {}
    translations, scores = translator.translate_with_scores(SENTENCES[:5], **options)
    assert translator.translate(SENTENCES[:5], **options) == translator(SENTENCES[:5], **options) == translations
    assert type(translations) is list and type(scores) is list and len(scores) == 5
    assert all(isinstance(s, float) for s in scores) and all(isinstance(t, str) for t in translations)
    assert translator.translate([]) == [] and translator.translate_with_scores([]) == ([], [])


@pytest.mark.parametrize("cls", [Translator, SavedModelTranslator, CTranslate2Translator], ids=lambda c: c.__name__)
def test_one_signature(cls):
    """The calling convention, keyword for keyword."""
    for method in (cls.translate, cls.translate_with_scores):
        parameters = inspect.signature(method).parameters
        assert list(parameters) == ["self", "sentences", "beam_size", "alpha", "on_invalid"], method
        keyword_only = {p.name: p.default for p in parameters.values() if p.kind is p.KEYWORD_ONLY}
        assert keyword_only == {"beam_size": None, "alpha": None, "on_invalid": "error"}, method
    assert cls.__call__ is cls.translate


BATCH = [b"two", b"t\x00wo", "seven hundred", b"broken \xc3(", "ninety nine"]
MESSAGE = f"{input_rule.INVALID} [1, 3]"


def test_refused_input_is_refused_alike_or_answered_empty(exports, eager):
    translators = _translators(exports, eager)
    options = {"CTranslate2Translator": {"beam_size": 1}}
    for name, translator in translators.items():
        with pytest.raises(ValueError) as error:
            translator.translate(BATCH, **options.get(name, {}))
        assert str(error.value) == MESSAGE, name
    answers = {name: t.translate_with_scores(BATCH, on_invalid="empty", **options.get(name, {}))
               for name, t in translators.items()}
    alone = eager[1]([BATCH[i] for i in (0, 2, 4)])
    for name, (translations, scores) in answers.items():
        assert [translations[i] for i in (0, 2, 4)] == alone, name
        assert translations[1] == translations[3] == "" and math.isnan(scores[1]) and math.isnan(scores[3]), name
    for name, translator in translators.items():
        with pytest.raises(ValueError, match="on_invalid='skip'"):
            translator.translate(["two"], on_invalid="skip")
        # A careless batch is named alike by all three (tfm.decoding.input_rule.validate_sentences).
        for careless, named in ((None, "sentences=None: translate takes a list of sentences"),
                                ("two", "sentences='two' is one str: .* wrap a single one in a list"),
                                (["two", 3], r"sentences\[1\]=3 is an int"), (7, "sentences=7 is an int")):
            with pytest.raises(TypeError, match=named):
                translator.translate(careless, **options.get(name, {}))
            with pytest.raises(TypeError, match=named):
                translator.translate_with_scores(careless, **options.get(name, {}))


def test_saved_model_translator_refuses_what_the_export_fixed(exports):
    translator = exports[0][2]
    assert (translator.beam_size, translator.alpha) == (2, ALPHA)
    assert translator(["two"], beam_size=2, alpha=ALPHA) == translator(["two"])  # the exported values: fine
    with pytest.raises(ValueError, match=r"beam_size=4: this SavedModel was exported with beam_size=2, fixed in its "
                                         r"graph; export again with beam_size=4"):
        translator.translate(["two"], beam_size=4)
    with pytest.raises(ValueError, match=r"alpha=1.0: this SavedModel was exported with alpha=0.6"):
        translator.translate_with_scores(["two"], alpha=1.0)
    with pytest.raises(ValueError, match="alpha=-1"):
        translator.translate(["two"], alpha=-1)
    with pytest.raises(ValueError, match="beam_size=True"):
        translator.translate(["two"], beam_size=True)


def test_ctranslate2_translator_takes_beam_and_alpha_per_call(exports, eager):
    ct2 = exports[1]
    assert (ct2.beam_size, ct2.alpha) == (4, 0.6)  # the model config's, recorded at export
    assert ct2(["two", "seven hundred"], beam_size=1) == eager[1](["two", "seven hundred"])
    for bad in ({"beam_size": 0}, {"beam_size": 1.5}, {"alpha": -0.1}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))}="):
            ct2.translate(["two"], **bad)


def test_batch_size_does_not_change_the_answers(exports, tmp_path, tiny_transformer, number_tokenizer):
    saved, ct2 = exports
    small = SavedModelTranslator(saved[1].export_dir, batch_size=3)
    translations, scores = small.translate_with_scores(SENTENCES)
    expected, expected_scores = saved[1].translate_with_scores(SENTENCES)
    assert translations == expected
    np.testing.assert_allclose(scores, expected_scores, atol=1e-5)  # padded to other widths: float rounding apart
    with pytest.raises(ValueError, match="batch_size=0"):
        SavedModelTranslator(saved[1].export_dir, batch_size=0)
    path = export_ctranslate2((tiny_transformer, number_tokenizer), tmp_path / "ct2")
    assert CTranslate2Translator(path, batch_size=2)(SENTENCES, beam_size=1) == ct2(SENTENCES, beam_size=1)
