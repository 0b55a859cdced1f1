"""What a careless user meets on the command line: a flag the export's format would ignore is refused by name
(exit 2, before any work), `--set vocab_size=N` is the vocabulary's one setting (never ignored), and
`tfm translate` answers each line while its input is still open."""

import argparse
import io
import os
import shlex
import subprocess
import sys
import threading
import types

import pytest

from tfm.cli import arguments
from tfm.cli import commands as cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---------------------------------------------------------------------------
# tfm train --set vocab_size=N: the subwords to learn, as --vocab-size (the model takes the tokenizer's size)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("flags", [["--set", "vocab_size=200"], ["--vocab-size", "200"], ["--set", "subwords=200"]])
def test_the_vocabulary_is_one_setting(flags):
    parser = argparse.ArgumentParser()
    arguments.add_train(parser)
    args = parser.parse_args(["--output", "run", "--preset", "tiny", "--dataset", "numbers", *flags])
    assert arguments.train_recipe(args).data.subwords == 200  # what the tokenizer learns, so the model's size


def test_the_next_hint_after_training_can_be_copied(tmp_path, monkeypatch, capsys):
    """`tfm train`'s last two lines name the run folder quoted for a shell: a space or a quote in it stays one
    argument (it was printed bare)."""
    import tfm.runs
    import tfm.training.trainer

    output = str(tmp_path / "my runs" / "it's tiny")
    monkeypatch.setattr(tfm.training.trainer, "train",
                        lambda recipe, output, **kwargs: types.SimpleNamespace(run_dir=output, epochs=1))
    monkeypatch.setattr(tfm.runs, "read_history", lambda run_dir: {"epoch": [0], "loss": [2.5]})
    assert cli.main(["train", "--preset", "tiny", "--output", output, "--epochs", "1"]) == 0
    average, evaluate = capsys.readouterr().out.splitlines()[-2:]
    average, evaluate = average.removeprefix("next: "), evaluate.removeprefix("then: ")
    assert shlex.split(average) == ["tfm", "average", "--run", output]
    assert shlex.split(evaluate) == ["tfm", "evaluate", "--run", output]


# ---------------------------------------------------------------------------
# tfm export: a flag the chosen format would ignore is a usage error
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("flags, message", [
    (["--format", "ctranslate2", "--signatures", "nbest"],
     "--signatures nbest is for --format savedmodel (a CTranslate2 export has no signatures"),
    (["--format", "ctranslate2", "--signatures", "nbest", "alignment"], "--signatures nbest alignment is for"),
    (["--alignment-layer", "99"], "--alignment-layer 99 is for --format savedmodel --signatures alignment"),
    (["--signatures", "nbest", "--alignment-layer", "0"], "--alignment-layer 0 is for --format savedmodel "
                                                          "--signatures alignment"),
    (["--format", "ctranslate2", "--alignment-layer", "2"], "--alignment-layer 2 is for --format savedmodel"),
    (["--format", "ctranslate2", "--xla"], "--xla is for --format savedmodel (CTranslate2 compiles nothing)"),
    (["--format", "ctranslate2", "--early-finish"], "--early-finish is for --format savedmodel"),
    (["--quantize", "int16"], "--quantize int16: a SavedModel takes int8 or bfloat16 (or float32); int16 is for "
                              "--format ctranslate2"),
])
def test_export_refuses_a_flag_its_format_would_ignore(tmp_path, capsys, flags, message):
    """Refused before the run is read (this one does not exist) and before anything is written."""
    output = tmp_path / "exported"
    assert cli.main(["export", "--run", str(tmp_path / "no_run"), "--output", str(output)] + flags) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tfm export: error: {message}") and err.count("\n") == 1, err
    assert not output.exists()


@pytest.mark.parametrize("flags", [
    [], ["--signatures", "alignment", "--alignment-layer", "99"], ["--signatures", "nbest", "alignment"],
    ["--alignment-layer", "-1"], ["--quantize", "int8"], ["--quantize", "bfloat16"], ["--xla"], ["--early-finish"],
    ["--format", "ctranslate2", "--quantize", "int16"], ["--format", "ctranslate2"],
])
def test_export_flags_that_take_effect_are_not_refused(flags):
    args = cli.build_parser().parse_args(["export", "--run", "RUN", "--output", "OUT"] + flags)
    assert cli._export_flags_refused(args) is None


# ---------------------------------------------------------------------------
# tfm translate: lines are translated as they arrive
# ---------------------------------------------------------------------------
def _next_within(iterator, seconds):
    """`next(iterator)` on a thread; fails when nothing came within `seconds`."""
    box = []
    worker = threading.Thread(target=lambda: box.append(next(iterator)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"nothing within {seconds} s while the input stays open"
    return box[0]


def test_line_batches_give_a_line_while_the_input_stays_open():
    read_end, write_end = os.pipe()
    with open(read_end, "rb", buffering=0) as raw, open(write_end, "wb", buffering=0) as writer:
        stdin = io.TextIOWrapper(io.BufferedReader(raw))
        batches = cli._line_batches(stdin)
        writer.write(b"seven\r\n")
        assert _next_within(batches, 30) == [b"seven"]  # the writer has not closed its end
        writer.write(b"three\nbroken \xff\n")
        got = _next_within(batches, 30)
        if got == [b"three"]:  # the second line came later than the batch's short wait
            got += _next_within(batches, 30)
        assert got == [b"three", b"broken \xff"]  # undecodable bytes kept as they are
        writer.write(b"last line, no line end")
        writer.close()
        assert _next_within(batches, 30) == [b"last line, no line end"]
        assert next(batches, None) is None  # the input ended


def test_line_batches_hold_at_most_translate_lines_and_keep_the_order(monkeypatch):
    monkeypatch.setattr(cli, "TRANSLATE_LINES", 3)
    lines = [f"line {i}".encode() for i in range(10)]
    batches = list(cli._line_batches(io.TextIOWrapper(io.BytesIO(b"\n".join(lines) + b"\n"))))
    assert [line for batch in batches for line in batch] == lines
    assert all(1 <= len(batch) <= 3 for batch in batches) and len(batches) >= 4


def test_translate_in_batches_keeps_the_order_and_counts_lines_across_batches(finished_run, monkeypatch, capsys):
    monkeypatch.setattr(cli, "TRANSLATE_LINES", 2)
    sentences = ["seven", "three hundred", "", "twelve", "ninety one"]
    assert cli.main(["translate", "--run", finished_run, "--beam-size", "1"] + sentences) == 0
    expected = capsys.readouterr().out.split("\n")[:-1]
    assert len(expected) == 5 and expected[2] == ""
    data = "\n".join(sentences[:3]).encode() + b"\n\xff\xfe\n" + "\n".join(sentences[3:]).encode() + b"\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert cli.main(["translate", "--run", finished_run, "--beam-size", "1"]) == 1  # one line refused
    captured = capsys.readouterr()
    assert captured.out.split("\n")[:-1] == expected[:3] + [""] + expected[3:]
    assert "tfm translate: line 4 of standard input is not valid UTF-8" in captured.err  # in the second batch


def test_translate_answers_a_line_while_its_input_is_still_open(finished_run, tmp_path, capsys):
    """A person typing: `tfm translate` prints each sentence's translation before its input ends."""
    assert cli.main(["translate", "--run", finished_run, "seven", "three hundred"]) == 0
    seven, three_hundred = capsys.readouterr().out.split("\n")[:2]
    with open(tmp_path / "stderr.txt", "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "tfm.cli", "translate", "--run", finished_run],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=ROOT)
        try:
            lines = iter(process.stdout.readline, b"")
            process.stdin.write(b"seven\n")
            process.stdin.flush()
            assert _next_within(lines, 240).decode() == seven + "\n"  # TensorFlow starts, the run loads
            process.stdin.write(b"three hundred\n")
            process.stdin.flush()
            assert _next_within(lines, 60).decode() == three_hundred + "\n"
            process.stdin.close()
            assert process.wait(60) == 0
            assert process.stdout.read() == b""
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
