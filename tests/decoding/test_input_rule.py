"""One input rule on every path (tfm.decoding.text_ops documents it): the plain-Python rule (tfm.decoding.input_rule)
and the TensorFlow one answer one table of cases alike, and Translator, `tfm translate` (arguments and standard input),
the exported SavedModel and CTranslate2Translator each translate every case as its clean form."""

import io
import math
import os
import subprocess
import sys
import unicodedata

import numpy as np
import pytest
import tensorflow as tf

import tfm.runs
from tfm.cli import commands as cli
from tfm.decoding import Translator, input_rule, text_ops
from tfm.serving import saved_model as tfm_export

# (input, what the rule makes of it). Whitespace only separates words; other characters stay.
CASES = [
    ("two", "two"),
    ("two\n", "two"),
    ("two\r\n", "two"),
    ("two\r", "two"),
    (" two ", "two"),
    ("\ttwo", "two"),
    ("", ""),
    ("\n", ""),
    ("\r\n \t", ""),
    ("a\nb", "a b"),  # a line break inside a string: one sentence, wrapped
    ("two  \t three", "two three"),
    ("\u00a0two", "two"),  # no-break space
    ("\v\ftwo\x85\u3000", "two"),  # vertical tab, form feed, NEL, ideographic space
    ("two\u2028three\u2029", "two three"),  # line and paragraph separators
    ("\u2000two\u200a\u202f\u205f", "two"),
    ("\u200btwo", "\u200btwo"),  # zero-width space: a format character, not a space
    ("\x01two\x1f\x7f", "\x01two\x1f\x7f"),  # other control characters are characters
    ("two\u00e9 🙂", "two\u00e9 🙂"),
]

# (bytes, what is wrong): refused on every path.
REFUSED = [
    (b"two\x00", input_rule.HAS_NUL),
    (b"\x00", input_rule.HAS_NUL),
    (b"t\x00w\x00o\x00", input_rule.HAS_NUL),  # "two" in UTF-16-LE
    (b"\xff", input_rule.NOT_UTF8),
    (b"two\xc3(", input_rule.NOT_UTF8),  # a cut two-byte sequence
    (b"\xc0\xaf", input_rule.NOT_UTF8),  # overlong "/"
    (b"\xed\xa0\x80", input_rule.NOT_UTF8),  # a UTF-16 surrogate
    (b"\xf4\x90\x80\x80", input_rule.NOT_UTF8),  # beyond U+10FFFF
    (b"\xff\x00", input_rule.NOT_UTF8),
]
ACCEPTED_BYTES = [b"two", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xc3\xa9\n"]  # U+FFFF, U+10FFFF: valid UTF-8

INPUTS = [case for case, _ in CASES]
CLEAN = [clean for _, clean in CASES]


# ---------------------------------------------------------------------------
# The rule itself: Python == TensorFlow, case by case.
# ---------------------------------------------------------------------------
def test_python_and_tensorflow_rules_normalize_alike():
    graph = [t.decode("utf-8") for t in text_ops.normalize_strings(tf.constant(INPUTS)).numpy()]
    python = [input_rule.normalize(case) for case in INPUTS]
    assert python == CLEAN
    assert graph == CLEAN


def test_python_and_tensorflow_rules_refuse_alike():
    raw = [text.encode("utf-8") for text in INPUTS] + ACCEPTED_BYTES + [data for data, _ in REFUSED]
    graph = text_ops.invalid(tf.constant(raw)).numpy().tolist()
    python = [input_rule.problem(data) is not None for data in raw]
    assert python == graph == [False] * (len(INPUTS) + len(ACCEPTED_BYTES)) + [True] * len(REFUSED)
    assert [input_rule.problem(data) for data, _ in REFUSED] == [problem for _, problem in REFUSED]


def test_normalize_is_idempotent_and_the_separators_are_unicodes_white_space():
    assert all(input_rule.normalize(clean) == clean for clean in CLEAN)
    # Unicode's White_Space (PropList.txt): every character str.isspace() calls a space, except the four
    # ASCII information separators U+001C-U+001F that Python counts and Unicode does not.
    spaces = {chr(c) for c in range(0x110000) if chr(c).isspace()} - {"\x1c", "\x1d", "\x1e", "\x1f"}
    assert set(input_rule.SEPARATORS) == spaces
    assert all(unicodedata.category(c) in ("Zs", "Zl", "Zp", "Cc") for c in input_rule.SEPARATORS)


def test_the_python_rule_needs_no_tensorflow():
    """Why there are two versions: CTranslate2Translator runs without TensorFlow, and so does its rule."""
    probe = ("import sys, tfm.decoding.input_rule, tfm.serving.ctranslate2\n"
             "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# ---------------------------------------------------------------------------
# Every path, on one tiny untrained model: each case is translated as its clean form.
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def translator(tiny_transformer, number_tokenizer):
    return Translator(tiny_transformer, number_tokenizer, beam_size=1)


@pytest.fixture(scope="module")
def expected(translator):
    return translator(CLEAN)


@pytest.fixture(scope="module")
def serve(tmp_path_factory, tiny_transformer, number_tokenizer):
    """serving_default of one greedy export, shared by this module's cases."""
    path = str(tmp_path_factory.mktemp("rule") / "translator" / "1")
    tfm_export.export_saved_model((tiny_transformer, number_tokenizer), path, beam_size=1)
    return tf.saved_model.load(path).signatures["serving_default"]


def test_translator_translates_each_case_as_its_clean_form(translator, expected):
    assert any(expected) and expected[6] == expected[7] == ""  # real outputs, and blank in -> blank out
    assert translator(INPUTS) == expected
    assert [list(ids) for ids in translator.encode(INPUTS)] == [list(ids) for ids in translator.encode(CLEAN)]


def test_saved_model_translates_each_case_as_its_clean_form(serve, expected):
    out = serve(text=tf.constant(INPUTS))
    clean = serve(text=tf.constant(CLEAN))
    translations = [t.decode("utf-8") for t in out["translations"].numpy()]
    assert translations == [t.decode("utf-8") for t in clean["translations"].numpy()] == expected
    np.testing.assert_array_equal(out["scores"].numpy(), clean["scores"].numpy())
    assert not out["truncated"].numpy().any()


@pytest.fixture
def cli_run(monkeypatch, tiny_transformer, number_tokenizer):
    """`tfm translate --run RUN` answered by this module's model (a run without preprocessing)."""
    from tfm.decoding import Translator

    monkeypatch.setattr(tfm.runs, "weights_path", lambda run, checkpoint="auto": f"{run}/checkpoints/x.weights.h5")
    monkeypatch.setattr(tfm.runs, "read_run_config", lambda run: {"data": {}})
    monkeypatch.setattr(Translator, "from_run", classmethod(
        lambda cls, run, checkpoint="auto", **kwargs: cls(tiny_transformer, number_tokenizer, **kwargs)))
    return ["translate", "--run", "RUN", "--beam-size", "1"]


def test_cli_arguments_translate_each_case_as_its_clean_form(cli_run, capsys, expected):
    assert cli.main(cli_run + INPUTS) == 0
    assert capsys.readouterr().out.split("\n") == expected + [""]


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n"])
def test_cli_standard_input_translates_each_case_as_its_clean_form(cli_run, monkeypatch, capsys, expected, line_end):
    """Standard input holds one sentence per line, so the cases with a line feed inside are left out."""
    keep = [i for i, case in enumerate(INPUTS) if "\n" not in case]
    data = b"".join(INPUTS[i].encode("utf-8") + line_end for i in keep)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert cli.main(cli_run) == 0
    assert capsys.readouterr().out.split("\n") == [expected[i] for i in keep] + [""]


@pytest.fixture(scope="module")
def ct2(tmp_path_factory, tiny_transformer, number_tokenizer):
    pytest.importorskip("ctranslate2", reason="the CTranslate2 export is an optional extra")
    from tfm.serving.ctranslate2 import export_ctranslate2
    from tfm.serving.ctranslate2_translator import CTranslate2Translator

    return CTranslate2Translator(export_ctranslate2((tiny_transformer, number_tokenizer),
                                                    tmp_path_factory.mktemp("rule_ct2") / "ct2"))


def test_ctranslate2_translates_each_case_as_its_clean_form(ct2):
    clean = ct2(CLEAN, beam_size=1)
    assert any(clean) and clean[6] == clean[7] == ""
    assert ct2(INPUTS, beam_size=1) == clean
    assert ct2([case.encode("utf-8") for case in INPUTS], beam_size=1) == clean  # UTF-8 bytes too


# ---------------------------------------------------------------------------
# Refused input: the same strings refused, with the same message, on every path.
# ---------------------------------------------------------------------------
BATCH = [b"two", REFUSED[0][0], b"three", REFUSED[4][0]]  # a NUL at 1, invalid UTF-8 at 3
MESSAGE = f"{input_rule.INVALID} [1, 3]"


def test_translator_refuses_or_answers_empty(translator):
    with pytest.raises(ValueError) as error:
        translator(BATCH)
    assert str(error.value) == MESSAGE
    translations, scores = translator.translate_with_scores(BATCH, on_invalid="empty")
    alone = translator([b"two", b"three"])
    assert [translations[0], translations[2]] == alone and translations[1] == translations[3] == ""
    assert math.isnan(scores[1]) and math.isnan(scores[3])


def test_saved_model_refuses_the_batch(serve):
    with pytest.raises(tf.errors.InvalidArgumentError) as error:
        serve(text=tf.constant(BATCH))
    assert f"tfm translator: {input_rule.INVALID}] [1 3]" in error.value.message


def test_ctranslate2_refuses_or_answers_empty(ct2, translator):
    with pytest.raises(ValueError) as error:
        ct2(BATCH, beam_size=1)
    assert str(error.value) == MESSAGE
    out = ct2(BATCH, beam_size=1, on_invalid="empty")
    assert out[1] == out[3] == "" and [out[0], out[2]] == ct2(["two", "three"], beam_size=1)


def test_cli_names_each_refused_line_and_why(cli_run, monkeypatch, capsys, expected):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"two\nt\x00w\x00o\x00\r\n\xff\n")))
    assert cli.main(cli_run) == 1
    captured = capsys.readouterr()
    assert captured.out.split("\n") == [expected[0], "", "", ""]
    assert ("tfm translate: line 2 of standard input holds a NUL byte (U+0000: UTF-16 text? convert it to UTF-8); "
            "an empty line is printed in its place") in captured.err
    assert "tfm translate: line 3 of standard input is not valid UTF-8; an empty line" in captured.err
    # Arguments: Python hands undecodable bytes over as surrogates ("\udcff"); a NUL can come only in-process.
    assert cli.main(cli_run + ["two", "\udcff", "two\x00"]) == 1
    captured = capsys.readouterr()
    assert captured.out.split("\n") == [expected[0], "", "", ""]
    assert "argument 2 is not valid UTF-8" in captured.err and "argument 3 holds a NUL byte" in captured.err
    assert cli.main(cli_run + ["--strict", "two", "two\x00"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "nothing translated (--strict)" in captured.err


# ---------------------------------------------------------------------------
# Long input: cut at max_length subwords on every path, and each path says so.
# ---------------------------------------------------------------------------
LONG = " ".join(["two"] * 10)  # 30 subwords; the model reads 12


def test_long_input_is_cut_and_said(serve, translator, number_tokenizer, caplog):
    """The SavedModel answers `truncated`; Translator (so `tfm translate`) warns once per call."""
    assert len(number_tokenizer.tokenize([LONG])[0]) > translator.decodable.max_source_length == 12
    out = serve(text=tf.constant(["two", LONG, ""]))
    assert out["truncated"].numpy().tolist() == [False, True, False]
    with caplog.at_level("WARNING"):
        eager = translator(["two", LONG, ""])
    assert [t.decode("utf-8") for t in out["translations"].numpy()] == eager
    assert [r.getMessage() for r in caplog.records if "truncated" in r.getMessage()] == [
        "1 input(s) longer than the model's 12 subwords were truncated (the first: index 1)"]


def test_ctranslate2_cuts_long_input_and_warns(ct2, caplog):
    with caplog.at_level("WARNING"):
        out = ct2(["two", LONG, ""], beam_size=1)
    assert out[1] == ct2([" ".join(["two"] * 4)], beam_size=1)[0]  # the first 12 subwords: "two" x 4
    assert [r.getMessage() for r in caplog.records if "truncated" in r.getMessage()] == [
        "1 input(s) longer than the model's 12 subwords were truncated (the first: index 1)"]


# ---------------------------------------------------------------------------
# A careless batch (None, one str, a number): a message naming `sentences`, from every method that takes one.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("careless, message", [
    (None, "sentences=None: translate takes a list of sentences (str), got None"),
    ("two", "sentences='two' is one str: translate takes a list of sentences; wrap a single one in a list"),
    (b"two", "sentences=b'two' is one bytes: translate takes a list of sentences; wrap a single one in a list"),
    (7, "sentences=7 is an int: translate takes a list of sentences (str)"),
    (["two", 3], "sentences[1]=3 is an int: translate takes a list of sentences (str)"),
    (("two", None), "sentences[1]=None is a NoneType: translate takes a list of sentences (str)"),
])
def test_a_careless_batch_is_named_by_every_method_that_takes_sentences(translator, careless, message):
    for method in (translator.translate, translator.translate_with_scores, translator.nbest, translator.align,
                   translator.encode, translator.invalid, input_rule.validate_sentences):
        with pytest.raises(TypeError) as error:
            method(careless)
        assert str(error.value) == message, method.__name__


def test_screen_sentences_answers_as_every_translator_does():
    """(Moved from tests/serving/test_metadata.py with the function, tfm.serving.metadata.check_sentences.)"""
    assert input_rule.screen_sentences([]) == ([], [])
    assert input_rule.screen_sentences(["two", "drei\udcff"], on_invalid="empty") == ([b"two", b"drei\xff"], [1])
    with pytest.raises(TypeError, match=r"sentences\[1\]=3 is an int"):
        input_rule.screen_sentences(["two", 3])
    with pytest.raises(ValueError, match=r"on_invalid='skip': expected one of \('error', 'empty'\)"):
        input_rule.screen_sentences(["two"], on_invalid="skip")
    with pytest.raises(ValueError, match=r"indices of the invalid strings: \[0, 2\]"):
        input_rule.screen_sentences([b"\xff", "two", "a\x00b"])


def test_validate_sentences_returns_a_new_list_and_reads_an_iterator_once():
    given = ["two", b"three"]
    checked = input_rule.validate_sentences(given)
    assert checked == given and checked is not given
    assert input_rule.validate_sentences(s for s in ("two", "three")) == ["two", "three"]
    assert input_rule.validate_sentences(np.array(["two", "three"])) == ["two", "three"]  # np.str_ is a str
    long = "x" * 100
    with pytest.raises(TypeError, match=r"^sentences='x{56}\.\.\. is one str"):  # a long value is cut in the message
        input_rule.validate_sentences(long)
