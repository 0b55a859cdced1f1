"""tfm.cli: help without TensorFlow, flags checked by argparse, settings from the run's stored config,
and careless input answered with a message (never a traceback)."""

import argparse
import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tfm.cli import commands as cli
from tfm.config import Recipe
from tfm.decoding import bleu

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUBCOMMANDS = list(cli.COMMANDS)

HELP_PROBE = """
import sys
from tfm.cli import commands as cli
for argv in [["--help"]] + [[name, "--help"] for name in cli.COMMANDS]:
    try:
        cli.main(argv)
    except SystemExit as stop:
        assert stop.code == 0, (argv, stop.code)
heavy = sorted(m for m in ("tensorflow", "keras", "tensorflow_text", "tensorflow_datasets") if m in sys.modules)
print("HEAVY", heavy)
"""


def test_help_answers_without_importing_tensorflow():
    """`tfm --help` and every `tfm COMMAND --help` run on the standard library alone (fails if any imports TF)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "0"}  # if TensorFlow were imported, its start-up lines would show
    done = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "HEAVY []" in done.stdout
    for name in SUBCOMMANDS:
        assert f"tfm {name}" in done.stdout  # each subcommand printed its usage
    assert done.stderr == ""


def test_version_comes_from_package_metadata(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert capsys.readouterr().out.strip() == f"tfm {version('tfm')}"


@pytest.mark.parametrize("argv, flag", [
    (["train", "--output", "r", "--keep-checkpoints", "0"], "--keep-checkpoints"),
    (["train", "--output", "r", "--epochs", "-1"], "--epochs"),
    (["translate", "--run", "r", "--alpha", "-5", "x"], "--alpha"),
    (["translate", "--run", "r", "--alpha", "nan", "x"], "--alpha"),
    (["translate", "--run", "r", "--alpha", "inf", "x"], "--alpha"),
    (["train", "--output", "r", "--worker-timeout", "0"], "--worker-timeout"),
    (["evaluate", "--run", "r", "--beam-size", "0"], "--beam-size"),
    (["average", "--run", "r", "--last", "0"], "--last"),
])
def test_bad_flag_values_are_refused_by_name(argv, flag, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.build_parser().parse_args(argv)
    assert stop.value.code == 2
    assert flag in capsys.readouterr().err


# A run folder made by hand (no training): its config says beam 2, alpha 0, average 3.
@pytest.fixture(scope="module")
def run(tmp_path_factory):
    import keras

    from tfm import runs
    from tfm.data import number_words_pairs, train_tokenizer
    from tfm.models.transformer import Transformer

    run_dir = str(tmp_path_factory.mktemp("cli") / "run")
    sources, targets = number_words_pairs("train", max_number=2000)
    tokenizer = train_tokenizer(list(zip(sources, targets)), vocab_size=60)
    recipe = Recipe.preset("tiny", vocab_size=tokenizer.vocab_size, num_layers=1, d_model=16, num_heads=2, d_ff=32,
                           dropout=0.0, max_length=24, extra_positions=3, max_extra_length=3, tokens_per_batch=512,
                           max_pair_length=24, subwords=60, beam_size=2, length_penalty=0.0,
                           checkpoints_to_average=3, keep_checkpoints=3)
    tokenizer.save(os.path.join(run_dir, runs.TOKENIZER_DIR))
    runs.write_json_atomic(os.path.join(run_dir, runs.CONFIG_FILE), runs.run_record(recipe))
    keras.utils.set_random_seed(1)
    model = Transformer.from_preset(recipe.model)
    folder = os.path.join(run_dir, runs.CHECKPOINT_DIR)
    os.makedirs(folder)
    for epoch in (1, 2):
        model.set_weights([w + 0.01 * epoch for w in model.get_weights()])
        model.save_weights(os.path.join(folder, f"epoch_{epoch:03d}.weights.h5"))
    return run_dir


def test_export_takes_beam_and_alpha_from_the_run_unless_a_flag_overrides(run, tmp_path, capsys):
    from tfm.serving.metadata import METADATA_FILE

    assert cli.main(["export", "--run", run, "--output", str(tmp_path / "a" / "1")]) == 0
    with open(tmp_path / "a" / "1" / METADATA_FILE) as f:
        metadata = json.load(f)
    assert (metadata["beam_size"], metadata["alpha"], metadata["max_extra_length"]) == (2, 0.0, 3)
    assert cli.main(["export", "--run", run, "--output", str(tmp_path / "b" / "1"), "--beam-size", "1",
                     "--alpha", "0.6"]) == 0
    with open(tmp_path / "b" / "1" / METADATA_FILE) as f:
        metadata = json.load(f)
    assert (metadata["beam_size"], metadata["alpha"]) == (1, 0.6)
    assert "beam 1, alpha 0.6" in capsys.readouterr().out


def test_evaluate_takes_beam_and_alpha_from_the_run_and_keeps_an_earlier_evaluations_files(run, capsys):
    assert cli.main(["evaluate", "--run", run, "--split", "val", "--limit", "4", "--checkpoint", "2"]) == 0
    first = os.path.join(run, "hyps", "val.beam2.alpha0.epoch_002.first4")  # what decided the hypotheses
    with open(first + ".json") as f:
        scores = json.load(f)
    assert (scores["beam_size"], scores["alpha"], scores["sentences"]) == (2, 0.0, 4)
    assert f"hypotheses: {first}.txt" in capsys.readouterr().out
    # Another alpha and checkpoint: files of their own; the first evaluation's are kept as they were.
    with open(first + ".txt", encoding="utf-8") as f:
        hypotheses = f.read()
    assert cli.main(["evaluate", "--run", run, "--split", "val", "--limit", "4", "--checkpoint", "1",
                     "--alpha", "1.5"]) == 0
    with open(os.path.join(run, "hyps", "val.beam2.alpha1.5.epoch_001.first4.json")) as f:
        assert (json.load(f)["alpha"], scores["alpha"]) == (1.5, 0.0)
    with open(first + ".txt", encoding="utf-8") as f:
        assert f.read() == hypotheses
    with open(first + ".json") as f:
        assert json.load(f) == scores


def test_average_defaults_to_the_runs_checkpoints_to_average(run, tmp_path, capsys, caplog):
    """The run averages 3 but has 2: the default averages the 2 there are (and says so); --last 3 is refused."""
    from tfm import runs

    output = str(tmp_path / "avg.weights.h5")
    assert cli.main(["average", "--run", run, "--output", output]) == 0
    with open(runs.averaging_record(output)) as f:  # avg.weights.h5.averaging.json
        assert json.load(f)["epochs"] == [1, 2]
    assert "averages 3 checkpoints" in caplog.text
    from tfm.models.transformer import Transformer

    averaged = Transformer.from_preset(run, checkpoint=output)
    one, two = (Transformer.from_preset(averaged.config) for _ in range(2))
    one.load_weights(os.path.join(run, "checkpoints", "epoch_001.weights.h5"))
    two.load_weights(os.path.join(run, "checkpoints", "epoch_002.weights.h5"))
    for a, b, c in zip(averaged.get_weights(), one.get_weights(), two.get_weights()):
        np.testing.assert_allclose(a, (b + c) / 2, rtol=1e-6, atol=1e-7)
    assert cli.main(["average", "--run", run, "--last", "3", "--output", output]) == 1
    assert "has 2" in capsys.readouterr().err


def _stdin(monkeypatch, data):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_translate_names_an_invalid_line_and_translates_the_others(run, monkeypatch, capsys):
    assert cli.main(["translate", "--run", run, "seven", "three"]) == 0
    seven, three = capsys.readouterr().out.splitlines()
    _stdin(monkeypatch, b"seven\n\xff\xfe\nthree\n")
    assert cli.main(["translate", "--run", run]) == 1
    captured = capsys.readouterr()
    assert captured.out.split("\n") == [seven, "", three, ""]  # line for line, the bad one empty
    assert "line 2 of standard input is not valid UTF-8" in captured.err
    _stdin(monkeypatch, b"seven\n\xff\xfe\nthree\n")
    assert cli.main(["translate", "--run", run, "--strict"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "nothing translated" in captured.err


def test_translate_with_empty_stdin_says_so(run, monkeypatch, capsys):
    _stdin(monkeypatch, b"")
    assert cli.main(["translate", "--run", run]) == 1
    assert "nothing to translate" in capsys.readouterr().err


def test_translate_says_once_when_an_input_was_truncated(run, capsys, caplog):
    long_input = " ".join(["seven hundred"] * 200)
    assert cli.main(["translate", "--run", run, long_input, "three", long_input]) == 0
    assert capsys.readouterr().err == ("tfm translate: arguments 1, 3 are longer than the model's 24 subwords: "
                                       "translated from their first 24\n")
    assert not [r for r in caplog.records if "truncated" in r.getMessage()]  # said once, by the command


def test_translate_counts_a_truncated_line_from_1_across_batches(run, monkeypatch, capsys):
    """The third line is line 3 (was "index 2", and "index 0" in a later batch of standard input)."""
    monkeypatch.setattr(cli, "TRANSLATE_LINES", 2)
    _stdin(monkeypatch, b"three\nseven\n" + b" seven hundred" * 200 + b"\ntwelve\n")
    assert cli.main(["translate", "--run", run]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.split("\n")) == 5 and "index" not in captured.err
    assert captured.err == ("tfm translate: line 3 of standard input is longer than the model's 24 subwords: "
                            "translated from its first 24\n")


def test_a_beam_too_wide_for_the_vocabulary_is_one_line(run, capsys):
    assert cli.main(["translate", "--run", run, "--beam-size", "1000", "seven"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tfm translate: error: beam_size=1000 needs a vocabulary of at least 2000 ids")
    assert "Traceback" not in err and "in user code" not in err


def test_export_refuses_an_unrelated_folder(run, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    assert cli.main(["export", "--run", run, "--output", str(folder)]) == 1
    assert "not an exported model" in capsys.readouterr().err
    assert (folder / "notes.txt").read_text() == "keep me" and os.listdir(folder) == ["notes.txt"]


def test_exported_model_wants_a_1d_batch_and_tensorflow_text(run, tmp_path):
    """A scalar or a matrix is refused with what the signature wants; loading needs tensorflow_text's ops
    (checked in a fresh process, where nothing registered them)."""
    import tensorflow as tf

    path = str(tmp_path / "m" / "1")
    assert cli.main(["export", "--run", run, "--output", path]) == 0
    serve = tf.saved_model.load(path).signatures["serving_default"]
    for bad in (tf.constant("seven"), tf.constant([["seven", "three"]])):
        with pytest.raises(tf.errors.InvalidArgumentError, match="1-D batch of strings"):
            serve(text=bad)
    probe = f"import tensorflow as tf\ntry:\n    tf.saved_model.load({path!r})\nexcept Exception as e:\n    print(e)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    # Which SentencePiece op is met first depends on the order of the saved functions (their traced names).
    assert re.search(r"Op type not registered 'Sentencepiece\w*Op'", done.stdout), done.stdout[-500:]


def test_export_with_extra_signatures(run, tmp_path, capsys):
    import tensorflow as tf

    out = str(tmp_path / "x" / "1")
    assert cli.main(["export", "--run", run, "--output", out, "--signatures", "nbest", "alignment"]) == 0
    printed = capsys.readouterr().out
    assert "(serving_default: tf.string text (B,) -> translations, scores, truncated; nbest: text -> " \
           "translations, scores, truncated; alignment: text -> translations, scores, source_tokens, target_tokens, " \
           "alignment, attention, truncated; beam 2, alpha " in printed
    signatures = tf.saved_model.load(out).signatures
    assert signatures["nbest"](text=tf.constant(["seven"]))["translations"].shape == (1, 2)  # the run's beam 2
    assert cli.main(["export", "--run", run, "--output", str(tmp_path / "y"), "--signatures", "alignment",
                     "--alignment-layer", "4"]) == 1
    assert "alignment layer=4: the decoder has 1 layer(s)" in capsys.readouterr().err


def test_export_to_ctranslate2(run, tmp_path, capsys):
    pytest.importorskip("ctranslate2", reason="the CTranslate2 export is an optional extra")
    from tfm.serving.ctranslate2_translator import CTranslate2Translator

    out = tmp_path / "ct2"
    assert cli.main(["export", "--run", run, "--output", str(out), "--format", "ctranslate2",
                     "--quantization", "int8"]) == 0
    assert "CTranslate2, int8 weights" in capsys.readouterr().out
    assert (out / "model.bin").is_file() and (out / "sentencepiece.model").is_file()
    assert CTranslate2Translator(str(out)).metadata["beam_size"] == 2  # the run's
    assert cli.main(["export", "--run", run, "--output", str(tmp_path / "sm"), "--quantize", "int16"]) == 2
    assert ("--quantize int16: a SavedModel takes int8 or bfloat16 (or float32); int16 is for --format "
            "ctranslate2") in capsys.readouterr().err
    assert not (tmp_path / "sm").exists()
    assert cli.main(["export", "--run", run, "--output", str(tmp_path / "c"), "--format", "ctranslate2",
                     "--xla"]) == 2  # a flag the format would ignore: a usage error (tests/cli/test_careless.py)
    assert "--xla is for --format savedmodel" in capsys.readouterr().err


def test_export_int8_savedmodel(run, tmp_path, capsys):
    """`tfm export --quantize int8`: int8 kernels in the SavedModel, recorded, and its translations those of
    `Translator(quantize="int8")` on the same run."""
    import tensorflow as tf

    from tfm.decoding import Translator
    from tfm.serving.metadata import read_metadata

    out = str(tmp_path / "int8" / "1")
    assert cli.main(["export", "--run", run, "--output", out, "--quantize", "int8"]) == 0
    assert ", int8 weights)" in capsys.readouterr().out
    assert read_metadata(out)["quantize"] == "int8"
    loaded = tf.saved_model.load(out)
    assert any(v.dtype == tf.int8 for v in loaded.model_variables)
    sentences = ["seven", "three hundred twenty one"]
    served = [t.decode() for t in loaded.signatures["serving_default"](text=tf.constant(sentences))["translations"]
              .numpy()]
    assert served == Translator.from_run(run, checkpoint=None, quantize="int8", batch_size=8)(sentences)


# ---------------------------------------------------------------------------
# evaluate and translate on conftest.py's tiny untrained model (Translator.from_run and the run record faked), then the
# whole chain once on a real run (moved here from test_evaluation.py: the CLI's tests in one place).
# ---------------------------------------------------------------------------
@pytest.fixture
def fake_run(tmp_path, monkeypatch, tiny_transformer, number_tokenizer):
    """A run folder the CLI reads as `tiny_transformer` and `number_tokenizer` (no weights file), its config.json's
    data the numbers task."""
    import tfm.runs
    from tfm.decoding import Translator

    info = {"format": 2, "data": {"dataset": "numbers", "source_lang": None, "target_lang": None, "data_dir": None}}
    monkeypatch.setattr(tfm.runs, "read_run_config", lambda run_dir: info)
    monkeypatch.setattr(tfm.runs, "weights_path", lambda run_dir, checkpoint="auto": None)

    def from_run(cls, run_dir, checkpoint="auto", beam_size=None, alpha=None, **kwargs):
        return cls(tiny_transformer, number_tokenizer, beam_size=beam_size, alpha=alpha, **kwargs)

    monkeypatch.setattr(Translator, "from_run", classmethod(from_run))
    return tmp_path


def test_evaluate_command_writes_hypotheses_and_scores(fake_run, capsys):
    args = argparse.Namespace(run=str(fake_run), split="val", beam_size=2, alpha=0.6, limit=12, checkpoint=None)
    assert cli.evaluate_command(args) == 0
    with open(fake_run / "hyps" / "val.beam2.alpha0.6.first12.txt", encoding="utf-8") as f:  # no checkpoint file
        hyps = f.read().split("\n")
    assert len(hyps) == 12 + 1 and hyps[-1] == ""  # one line per sentence
    with open(fake_run / "hyps" / "val.beam2.alpha0.6.first12.json") as f:
        scores = json.load(f)
    for key in ("bleu", "bleu_signature", "bleu_tokenized_lc", "chrf", "beam_size", "split", "dataset"):
        assert key in scores
    assert scores["sentences"] == 12 and scores["beam_size"] == 2 and scores["split"] == "val"
    out = capsys.readouterr().out
    assert bleu.format_scores(scores) in out
    assert os.path.join(str(fake_run), "hyps", "val.beam2.alpha0.6.first12.txt") in out


def test_translate_command_reads_arguments_and_stdin(fake_run, capsys, monkeypatch, tiny_transformer,
                                                     number_tokenizer):
    from tfm import decoding

    expected = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=1)(["seven", "", "two hundred"])
    args = argparse.Namespace(run=str(fake_run), beam_size=1, alpha=0.6, checkpoint=None, strict=False,
                              text=["seven", "", "two hundred"])
    assert cli.translate_command(args) == 0
    assert capsys.readouterr().out.split("\n")[:3] == expected
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"seven\n\ntwo hundred\n")))
    args.text = []
    assert cli.translate_command(args) == 0
    assert capsys.readouterr().out.split("\n")[:3] == expected


def test_evaluate_rejects_unknown_split(fake_run):
    args = argparse.Namespace(run=str(fake_run), split="dev2", beam_size=1, alpha=0.6, limit=2, checkpoint=None)
    with pytest.raises(ValueError, match="split"):
        cli.evaluate_command(args)


@pytest.mark.slow
def test_cli_end_to_end_on_a_real_run(tmp_path, capsys):
    """train -> evaluate -> translate -> export through `tfm.cli.main` and `Translator.from_run`."""
    from tfm.training import train

    run = str(tmp_path / "run")
    recipe = Recipe.preset("tiny", subwords=80, num_layers=1, max_length=24, max_pair_length=24, extra_positions=3,
                           max_extra_length=3, tokens_per_batch=512, steps_per_epoch=1, validation=False)
    train(recipe, "numbers", output=run, epochs=1, verbose=0)
    assert cli.main(["evaluate", "--run", run, "--split", "test", "--beam-size", "2", "--limit", "8"]) == 0
    results = os.path.join(run, "hyps", "test.beam2.alpha0.6.epoch_001.first8.json")
    assert os.path.isfile(results)
    assert cli.main(["translate", "--run", run, "--beam-size", "2", "seven", "ninety nine"]) == 0
    assert cli.main(["export", "--run", run, "--output", str(tmp_path / "export" / "1"), "--beam-size", "2"]) == 0
    out = capsys.readouterr().out
    with open(results) as f:
        assert bleu.format_scores(json.load(f)) in out
    assert "exported" in out


def test_train_prints_no_line_over_200_characters(tmp_path):
    """`tfm train` opens with the recipe in a few short lines (config.json keeps the full record), never one long
    JSON line; a progress bar's redraws (carriage returns) count as lines too."""
    from training_helper import child_env, train_argv

    done = subprocess.run([sys.executable, "-m", "tfm.cli", *train_argv(tmp_path / "my run", 1)], cwd=ROOT,
                          env=child_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    assert "transformer recipe:" in output and "  model:    num_layers=" in output
    longest = max(output.splitlines(), key=len)
    assert len(longest) <= 200, longest
    assert f"tfm average --run '{tmp_path / 'my run'}'" in output  # the next: hint copies as one argument


def test_resume_goes_on_with_the_recipe_the_run_records(finished_run, tmp_path, capsys):
    """`tfm train --output RUN --resume --epochs N` trains RUN's own recipe (here not the default preset's sizes)
    exactly as the command with every setting repeated does: the same losses and steps, epoch by epoch."""
    from training_helper import copy_run, train_argv

    from tfm import runs

    repeated, resumed = copy_run(finished_run, tmp_path / "a"), copy_run(finished_run, tmp_path / "b")
    assert cli.main(train_argv(repeated, 3)) == 0
    assert cli.main(["train", "--output", resumed, "--resume", "--epochs", "3", "--strategy", "default"]) == 0
    assert "next: tfm average" in capsys.readouterr().out
    a, b = runs.read_history(repeated), runs.read_history(resumed)
    assert b["epoch"] == [0, 1, 2]
    assert (b["loss"], b["iterations"]) == (a["loss"], a["iterations"])
    assert runs.read_run_config(resumed)["model"] == runs.read_run_config(finished_run)["model"]


def test_resume_refuses_a_flag_of_the_recipe_and_a_folder_without_a_run(finished_run, tmp_path, capsys):
    """--resume with a recipe flag names the flags and changes nothing; on a folder that holds no run it says so."""
    from training_helper import copy_run

    run_dir = copy_run(finished_run, tmp_path)
    before = sorted((path, os.path.getmtime(os.path.join(folder, path))) for folder, _, names in os.walk(run_dir)
                    for path in names)
    argv = ["train", "--output", run_dir, "--resume", "--epochs", "3", "--preset", "small", "--set", "dropout=0.2"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "--preset, --set would change it" in err and "config.json" in err
    assert sorted((path, os.path.getmtime(os.path.join(folder, path))) for folder, _, names in os.walk(run_dir)
                  for path in names) == before
    assert cli.main(["train", "--output", str(tmp_path / "none"), "--resume"]) == 1
    assert "holds no run to resume (no config.json)" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()
