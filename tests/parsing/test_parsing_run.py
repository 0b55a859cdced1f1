"""Parsing as translation end to end (§6.3, Table 4): presets, `train` on ptb_parse, `tfm evaluate` reports F1."""

import json
import os

import pytest

from tfm.cli import commands as cli
from tfm.config import Recipe, TransformerConfig


def test_parse_presets_hold_the_papers_section_6_3_settings():
    paper = Recipe.preset("parse")
    assert (paper.model.num_layers, paper.model.d_model, paper.model.vocab_size) == (4, 1024, 16000)
    decoding = (paper.decoding.beam_size, paper.decoding.length_penalty, paper.decoding.max_extra_length)
    assert decoding == (21, 0.3, 300)
    assert paper.model.dropout > 0 and paper.model.attention_dropout > 0  # "both attention and residual" dropout
    cpu = Recipe.preset("parse_small")
    assert cpu.model.num_layers == 4 and cpu.decoding == paper.decoding
    # The RNN baseline of the same preset reads the same data and decodes alike.
    rnn = Recipe.preset("parse_small", model="bahdanau")
    assert (rnn.data, rnn.decoding, rnn.model.vocab_size) == (cpu.data, cpu.decoding, cpu.model.vocab_size)
    assert rnn.training.tokens_per_batch == cpu.training.tokens_per_batch
    assert {"parse", "parse_small"} <= set(TransformerConfig.PRESETS)
    parsed = cli.build_parser().parse_args(["train", "--preset", "parse_small", "--output", "RUN"])
    assert parsed.preset == "parse_small"


def test_train_help_names_the_parsing_dataset(capsys):
    """`tfm train --help` lists ptb_parse beside the translation corpora (and still imports no TensorFlow:
    tests/cli/test_cli.py)."""
    from tfm.data import DATASET_NAMES, PARSING_TASKS

    with pytest.raises(SystemExit):
        cli.main(["train", "--help"])
    options = " ".join(capsys.readouterr().out.split("options:")[1].split())
    dataset_help = options[options.index("--dataset DATASET"):options.index("--source-lang SOURCE_LANG")]
    assert set(PARSING_TASKS) <= set(DATASET_NAMES) and all(task in dataset_help for task in PARSING_TASKS)
    assert "multi30k" in dataset_help and "files" in dataset_help


@pytest.mark.slow
def test_train_and_evaluate_a_parser(treebank_data_dir, tmp_path, capsys):
    """A few steps of the parse_small recipe (shrunk), then `tfm evaluate`: F1 and the repair rate are reported
    and every output tree has one leaf per word."""
    from tfm.training import train

    run = str(tmp_path / "parse")
    recipe = Recipe.preset("parse_small", num_layers=1, d_model=32, num_heads=2, d_ff=64, vocab_size=300, subwords=300,
                           max_length=96, max_pair_length=96, extra_positions=40, max_extra_length=40,
                           tokens_per_batch=2048, dataset="ptb_parse", data_dir=treebank_data_dir, steps_per_epoch=3,
                           validation=False)
    result = train(recipe, output=run, epochs=1, verbose=0, strategy="default")
    assert result.epochs == 1
    assert cli.main(["evaluate", "--run", run, "--split", "test", "--limit", "6", "--beam-size", "2"]) == 0
    out = capsys.readouterr().out
    assert "ptb_parse test: 6 sentences, beam 2" in out and "repaired" in out and "Transformer (4 layers)" in out
    assert "constrained search" in out
    with open(os.path.join(run, "hyps", "test.beam2.alpha0.3.epoch_001.first6.json")) as f:
        scores = json.load(f)
    assert 0.0 <= scores["f1"] <= 100.0 and scores["sentences"] == 6 and 0 <= scores["repaired"] <= 6
    assert scores["constrained"] is True
    import nltk

    from tfm.parsing import TreeConstraint
    from tfm.parsing.treebank import ptb_parse_trees

    # The constraint counts each sentence's words from its subwords: right for every test sentence.
    all_gold = ptb_parse_trees("test", treebank_data_dir, download=False)
    constraint = TreeConstraint.from_tokenizer(result.tokenizer)
    ids = result.tokenizer.tokenize([" ".join(tree.leaves()) for tree in all_gold]).to_tensor()
    assert constraint.sentence_info(ids).numpy().tolist() == [len(tree.leaves()) for tree in all_gold]
    gold = all_gold[:6]
    with open(os.path.join(run, "hyps", "test.beam2.alpha0.3.epoch_001.first6.txt"), encoding="utf-8") as f:
        trees = [nltk.Tree.fromstring(line) for line in f.read().splitlines()]
    assert [tree.leaves() for tree in trees] == [tree.leaves() for tree in gold]
