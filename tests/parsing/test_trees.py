"""The vocabulary of trees (`tfm.parsing.trees`): the preterminal test, the one span walker, labels and tokens,
each defined once in the package."""

import ast
import pathlib
import re

import nltk

from tfm import parsing
from tfm.parsing import trees

ROOT = pathlib.Path(__file__).resolve().parents[2]
TFM = ROOT / "tfm"
TREE = nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ runs) (ADVP (RB fast))) (. .))")


def test_preterminals_are_tags_over_one_word():
    assert trees.is_preterminal(nltk.Tree("NN", ["dog"]))
    assert not trees.is_preterminal(nltk.Tree("NP", [nltk.Tree("NN", ["dog"])]))  # a phrase over a tag
    assert not trees.is_preterminal(nltk.Tree("NP", ["the", "dog"]))  # two words
    assert not trees.is_preterminal(nltk.Tree("S", []))
    assert not trees.is_preterminal("dog")


def test_constituents_lists_every_node_with_its_words_children_first():
    spans = trees.constituents(TREE)
    assert [tuple(c) for c in spans] == [
        ("DT", 0, 1, True), ("NN", 1, 2, True), ("NP", 0, 2, False), ("VBZ", 2, 3, True), ("RB", 3, 4, True),
        ("ADVP", 3, 4, False), ("VP", 2, 4, False), (".", 4, 5, True), ("S", 0, 5, False)]
    assert spans[-1].end == len(TREE.leaves())
    # Words directly under a phrase count as words; an empty node spans nothing.
    odd = nltk.Tree.fromstring("(S (NP the dog) (VP ) (. .))")
    assert [tuple(c) for c in trees.constituents(odd)] == [
        ("NP", 0, 2, False), ("VP", 2, 2, False), (".", 2, 3, True), ("S", 0, 3, False)]


def test_labeled_spans_are_the_constituents_above_the_preterminals():
    assert parsing.labeled_spans(TREE) == {("S", 0, 5), ("NP", 0, 2), ("VP", 2, 4), ("ADVP", 3, 4)}


def test_base_label_cuts_function_tags_and_keeps_dash_labels():
    cases = {"NP-SBJ-1": "NP", "PP-LOC=2": "PP", "NP=2": "NP", "S": "S", "-LRB-": "-LRB-", "-NONE-": "-NONE-",
             "ADVP|PRT": "ADVP|PRT", "": ""}
    assert {label: trees.base_label(label) for label in cases} == cases


def test_tree_tokens_are_the_sorted_set_of_tokens():
    assert parsing.tree_tokens(["(S (NP XX ) XX )", "(S XX )"]) == ["(NP", "(S", ")", "XX"]
    assert parsing.tree_tokens([]) == []


def test_the_linearization_tokens_and_root_labels_agree():
    assert " ".join(parsing.linearize(nltk.Tree.fromstring("(S (NN Hi))"), typed_closing=True)) == (
        f"{trees.OPEN_PREFIX}S {trees.LEAF_TOKEN} {trees.CLOSE_TOKEN}S")
    assert trees.REPAIR_ROOT_LABEL in trees.ROOT_LABELS  # the root a repair adds is never scored
    assert trees.EMPTY_ELEMENT_TAG.startswith("-")  # so function-tag stripping keeps it whole
    assert parsing.ROOT_LABELS is trees.ROOT_LABELS and parsing.LEAF_TOKEN is trees.LEAF_TOKEN


def _string_constants(path):
    """The str literals of a module, docstrings and f-string pieces left out."""
    module = ast.parse(path.read_text(encoding="utf-8"))
    skip = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            skip.add(id(node.body[0].value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(value) for value in node.values)
    return {node.value for node in ast.walk(module)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip}


def test_each_tag_root_label_and_token_is_written_once_in_the_package():
    """Every module reads these from their one home: a second spelling of "-NONE-" or "TOP" anywhere in tfm/
    is a copy that can drift."""
    homes = {"-NONE-": "parsing/trees.py", "ROOT": "parsing/trees.py", "TOP": "parsing/trees.py",
             "XX": "parsing/trees.py", "``": "parsing/trees.py", "''": "parsing/trees.py", "PRT": "parsing/evalb.py",
             "tags": "parsing/trees.py"}
    literals = {path.relative_to(TFM).as_posix(): _string_constants(path) for path in TFM.rglob("*.py")}
    where = {value: sorted(path for path, found in literals.items() if value in found) for value in homes}
    assert where == {value: [home] for value, home in homes.items()}
    # The brackets of the linearization: one home among the modules that read or write trees.
    tree_modules = [path for path in literals if path.startswith(("parsing/", "cli/"))]
    for bracket in ("(", ")"):
        assert [path for path in tree_modules if bracket in literals[path]] == ["parsing/trees.py"], bracket


def test_the_preterminal_test_is_written_once():
    pattern = re.compile(r"isinstance\([^()]*\[0\], str\)")
    found = [f"{path.relative_to(TFM)}:{number}" for path in TFM.rglob("*.py")
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert len(found) == 1 and found[0].startswith("parsing/trees.py:"), found
