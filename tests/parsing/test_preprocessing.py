"""Treebank trees as parsers see them (`tfm.parsing.preprocessing`): no empty elements, no function tags,
no root wrapper."""

import nltk
import pytest

from tfm import parsing

# wsj_0001.mrg, sentence 1, as the treebank writes it and after preprocessing.
RAW_FIRST = ("( (S (NP-SBJ (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) (JJ old)) (, ,)) "
             "(VP (MD will) (VP (VB join) (NP (DT the) (NN board)) (PP-CLR (IN as) (NP (DT a) (JJ nonexecutive) "
             "(NN director))) (NP-TMP (NNP Nov.) (CD 29)))) (. .)) )")
FIRST = ("(S (NP (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) (JJ old)) (, ,)) "
         "(VP (MD will) (VP (VB join) (NP (DT the) (NN board)) (PP (IN as) (NP (DT a) (JJ nonexecutive) "
         "(NN director))) (NP (NNP Nov.) (CD 29)))) (. .))")


def test_strip_function_tags():
    cases = {"NP-SBJ-1": "NP", "S-TPC-2": "S", "NP=2": "NP", "PP-LOC=3": "PP", "PP-LOC-CLR": "PP", "VP": "VP",
             "-LRB-": "-LRB-", "-RRB-": "-RRB-", "-NONE-": "-NONE-", "ADVP|PRT": "ADVP", "PRP$": "PRP$"}
    assert {label: parsing.strip_function_tags(label) for label in cases} == cases


def test_preprocess_removes_empty_elements_function_tags_and_the_root_bracket():
    raw = ("( (S (NP-SBJ-1 (-NONE- *)) (VP (VBD said) (SBAR (-NONE- 0) (S-2 (NP-SBJ (PRP he)) "
           "(VP (VBD left) (NP (-NONE- *T*-1)))))) (PRN (-LRB- -LRB-) (NP=2 (NN sic)) (-RRB- -RRB-)) (. .)) )")
    expected = ("(S (VP (VBD said) (SBAR (S (NP (PRP he)) (VP (VBD left))))) "
                "(PRN (-LRB- -LRB-) (NP (NN sic)) (-RRB- -RRB-)) (. .))")
    tree = nltk.Tree.fromstring(raw)
    assert parsing.preprocess_tree(tree) == nltk.Tree.fromstring(expected)
    assert tree == nltk.Tree.fromstring(raw)  # the input is left alone
    assert parsing.preprocess_tree(RAW_FIRST) == nltk.Tree.fromstring(FIRST)
    assert parsing.preprocess_tree("(TOP (S (NN Hi)))") == nltk.Tree.fromstring("(S (NN Hi))")
    assert parsing.preprocess_tree("( (NP (NN Hi)) (. .) )") == nltk.Tree.fromstring("(TOP (NP (NN Hi)) (. .))")
    with pytest.raises(ValueError, match="has no words once empty elements are deleted"):
        parsing.preprocess_tree("( (S (NP-SBJ (-NONE- *))) )")
