"""Parsing evaluation (`tfm.parsing.parse_and_score`): a run's split as sentences and gold trees, and the checks made
before decoding. A model parsing and `tfm evaluate` end to end: tests/parsing/test_parsing_run.py."""

import nltk
import pytest

from tfm import parsing


def _run_info(data_dir, dataset="ptb_parse"):
    return {"data": {"dataset": dataset, "data_dir": data_dir}, "checkpoint": "latest"}


def test_the_sources_are_those_the_run_reads_and_the_gold_trees_match_them(treebank_data_dir):
    from tfm.decoding.bleu import split_pairs

    info = _run_info(treebank_data_dir)
    sources, gold = parsing.split_trees(info, "val")
    assert len(sources) == len(gold) == 217
    assert sources == split_pairs(info, "val")[0]  # what load_dataset gives the model, word for word
    assert [tree.leaves() for tree in gold] == [source.split() for source in sources]
    assert all(isinstance(tree, nltk.Tree) and tree.label() != "" for tree in gold)  # preprocessed
    few, few_gold = parsing.split_trees(info, "test", limit=3)
    assert len(few) == len(few_gold) == 3 and few_gold == parsing.split_trees(info, "test")[1][:3]


def test_split_trees_refuses_what_cannot_be_scored(tmp_path):
    with pytest.raises(ValueError, match="split='train'"):
        parsing.split_trees(_run_info(str(tmp_path)), "train")
    with pytest.raises(ValueError, match="trained on 'multi30k', not a parsing task"):
        parsing.split_trees(_run_info(str(tmp_path), "multi30k"), "test")
    with pytest.raises(ValueError, match="limit=0"):
        parsing.split_trees(_run_info(str(tmp_path)), "test", limit=0)


def test_evaluate_parsing_needs_one_gold_tree_per_sentence():
    with pytest.raises(ValueError, match="2 sentences but 1 gold trees"):
        parsing.evaluate_parsing(None, None, ["a b", "c"], [nltk.Tree.fromstring("(S (XX a) (XX b))")])


def test_one_line_writes_a_tree_as_one_bracketed_line():
    tree = nltk.Tree.fromstring("(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (JJ very) (JJ big) (NN dog) "
                                "(PP (IN with) (NP (DT a) (JJ long) (NN tail))))) (. .))")
    line = parsing.one_line(tree)
    assert "\n" not in line and "  " not in line and nltk.Tree.fromstring(line) == tree
