"""The Penn Treebank sample as linearized trees: preprocessing, (de)linearization and repairs, the loader."""

import os
import random
import shutil
import zipfile

import nltk
import pytest

from tfm import parsing
from tfm.data import ptb_parse

SHARED_ZIP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data",
                          "nltk_data", "corpora", "treebank.zip")

# wsj_0001.mrg, sentence 1, as the treebank writes it and after preprocessing.
RAW_FIRST = ("( (S (NP-SBJ (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) (JJ old)) (, ,)) "
             "(VP (MD will) (VP (VB join) (NP (DT the) (NN board)) (PP-CLR (IN as) (NP (DT a) (JJ nonexecutive) "
             "(NN director))) (NP-TMP (NNP Nov.) (CD 29)))) (. .)) )")
FIRST = ("(S (NP (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) (JJ old)) (, ,)) "
         "(VP (MD will) (VP (VB join) (NP (DT the) (NN board)) (PP (IN as) (NP (DT a) (JJ nonexecutive) "
         "(NN director))) (NP (NNP Nov.) (CD 29)))) (. .))")
FIRST_TARGET = ("(S (NP (NP XX XX ) XX (ADJP (NP XX XX ) XX ) XX ) (VP XX (VP XX (NP XX XX ) (PP XX (NP XX XX XX ) ) "
                "(NP XX XX ) ) ) XX )")
CLASSIC = "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))"
WORDS = "The man saw a dog .".split()


def tags_of(tree):
    return [tag for _, tag in tree.pos()]


def leaves_are_well_formed(tree, words):
    """Every preterminal holds one word, every other node has subtrees only, and the words are `words`."""
    for node in tree.subtrees():
        assert len(node) >= 1 or node is tree, node
        if any(isinstance(child, str) for child in node):
            assert len(node) == 1, node
    return tree.leaves() == list(words)


# ---------------------------------------------------------------------------------------------
# Preprocessing, linearization, repair: hand-made trees, no data needed.


def test_strip_function_tags():
    cases = {"NP-SBJ-1": "NP", "S-TPC-2": "S", "NP=2": "NP", "PP-LOC=3": "PP", "PP-LOC-CLR": "PP", "VP": "VP",
             "-LRB-": "-LRB-", "-RRB-": "-RRB-", "-NONE-": "-NONE-", "ADVP|PRT": "ADVP", "PRP$": "PRP$"}
    assert {label: ptb_parse.strip_function_tags(label) for label in cases} == cases


def test_preprocess_removes_empty_elements_function_tags_and_the_root_bracket():
    raw = ("( (S (NP-SBJ-1 (-NONE- *)) (VP (VBD said) (SBAR (-NONE- 0) (S-2 (NP-SBJ (PRP he)) "
           "(VP (VBD left) (NP (-NONE- *T*-1)))))) (PRN (-LRB- -LRB-) (NP=2 (NN sic)) (-RRB- -RRB-)) (. .)) )")
    expected = ("(S (VP (VBD said) (SBAR (S (NP (PRP he)) (VP (VBD left))))) "
                "(PRN (-LRB- -LRB-) (NP (NN sic)) (-RRB- -RRB-)) (. .))")
    tree = nltk.Tree.fromstring(raw)
    assert ptb_parse.preprocess_tree(tree) == nltk.Tree.fromstring(expected)
    assert tree == nltk.Tree.fromstring(raw)  # the input is left alone
    assert ptb_parse.preprocess_tree(RAW_FIRST) == nltk.Tree.fromstring(FIRST)
    assert ptb_parse.preprocess_tree("(TOP (S (NN Hi)))") == nltk.Tree.fromstring("(S (NN Hi))")
    assert ptb_parse.preprocess_tree("( (NP (NN Hi)) (. .) )") == nltk.Tree.fromstring("(TOP (NP (NN Hi)) (. .))")
    with pytest.raises(ValueError, match="has no words once empty elements are deleted"):
        ptb_parse.preprocess_tree("( (S (NP-SBJ (-NONE- *))) )")


def test_linearize_writes_xx_for_every_word_and_untyped_closers():
    tree = nltk.Tree.fromstring(CLASSIC)
    assert " ".join(ptb_parse.linearize(tree)) == "(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )"
    assert " ".join(ptb_parse.linearize(tree, typed_closing=True)) == "(S (NP XX XX )NP (VP XX (NP XX XX )NP )VP XX )S"
    assert " ".join(ptb_parse.linearize(nltk.Tree.fromstring(FIRST))) == FIRST_TARGET


@pytest.mark.parametrize("typed_closing", [False, True])
def test_delinearize_inverts_linearize(typed_closing):
    tree = nltk.Tree.fromstring(CLASSIC)
    tokens = ptb_parse.linearize(tree, typed_closing)
    rebuilt, repaired = ptb_parse.delinearize(tokens, WORDS, tags=tags_of(tree))
    assert rebuilt == tree and not repaired
    placeholder, repaired = ptb_parse.delinearize(" ".join(tokens), " ".join(WORDS))
    assert not repaired
    assert placeholder == nltk.Tree.fromstring("(S (NP (XX The) (XX man)) (VP (XX saw) (NP (XX a) (XX dog))) (XX .))")


# (tokens, words, expected tree): every case needs a repair.
REPAIRS = {
    "missing closers": ("(S (NP XX XX ) (VP XX (NP XX", "The man saw it",
                        "(S (NP (XX The) (XX man)) (VP (XX saw) (NP (XX it))))"),
    "extra closers": (") (S (NP XX XX ) ) ) )", "The man", "(S (NP (XX The) (XX man)))"),
    "too few leaves": ("(S (NP XX ) (VP XX ) )", "Dogs bark loudly", "(S (NP (XX Dogs)) (VP (XX bark)) (XX loudly))"),
    "cut off": ("(S (NP XX XX ) (VP XX", "The man saw a dog",
                "(S (NP (XX The) (XX man)) (VP (XX saw) (XX a) (XX dog)))"),
    "too many leaves": ("(S XX (VP XX XX XX ) XX )", "Dogs bark", "(S (XX Dogs) (VP (XX bark)))"),
    "empty constituents": ("(S (NP ) (VP (ADVP ) XX ) )", "Go", "(S (VP (XX Go)))"),
    "several pieces": ("(NP XX ) (VP XX )", "Dogs bark", "(TOP (NP (XX Dogs)) (VP (XX bark)))"),
    "no output": ("", "Dogs bark", "(TOP (XX Dogs) (XX bark))"),
    "bare leaf": ("XX", "Hi", "(TOP (XX Hi))"),
    "mismatched typed closer": ("(S (NP XX )VP XX )S", "Dogs bark", "(S (NP (XX Dogs)) (XX bark))"),
    "bare opener": ("(S ( XX ) XX )", "Dogs bark", "(S (X (XX Dogs)) (XX bark))"),
}


@pytest.mark.parametrize("case", sorted(REPAIRS))
def test_delinearize_repairs_ill_formed_outputs(case):
    tokens, words, expected = REPAIRS[case]
    tree, repaired = ptb_parse.delinearize(tokens, words)
    assert repaired
    assert tree == nltk.Tree.fromstring(expected)
    assert leaves_are_well_formed(tree, words.split())


def test_delinearize_puts_gold_tags_on_the_leaves():
    tree, repaired = ptb_parse.delinearize("(S (NP XX ) (VP XX", ["Dogs", "bark", "."], tags=["NNS", "VBP", "."])
    assert repaired and tree == nltk.Tree.fromstring("(S (NP (NNS Dogs)) (VP (VBP bark) (. .)))")
    with pytest.raises(ValueError, match="got 2 tags for 3 words"):
        ptb_parse.delinearize("(S XX XX XX )", ["Dogs", "bark", "."], tags=["NNS", "VBP"])


def test_delinearize_is_always_well_formed_on_random_tokens():
    vocab = ["(S", "(NP", "(VP", "(PP", "(", ")", ")NP", "XX", "XX", "XX", "junk"]
    rng = random.Random(0)
    for _ in range(500):
        words = [f"w{i}" for i in range(rng.randrange(0, 8))]
        tokens = [rng.choice(vocab) for _ in range(rng.randrange(0, 25))]
        tree, _ = ptb_parse.delinearize(tokens, words)
        assert leaves_are_well_formed(tree, words), (tokens, words, tree)
        # Its brackets are scorable against any tree over the same words.
        parsing.bracket_scores([parsing.right_branching_tree(words)], [tree])


def test_splits_partition_the_files():
    files = [ptb_parse.split_fileids(split) for split in ("train", "validation", "test")]
    assert [len(f) for f in files] == [169, 15, 15]
    assert sum(files, []) == [f"wsj_{n:04d}.mrg" for n in range(1, 200)]
    assert ptb_parse.split_fileids("dev") == files[1]
    with pytest.raises(ValueError, match="split='training'"):
        ptb_parse.split_fileids("training")


# ---------------------------------------------------------------------------------------------
# The real sample: a copy of ../shared/data/nltk_data/corpora/treebank.zip in a temporary cache.


# `treebank_data_dir` (tests/conftest.py): the copy, or a skip saying why.


@pytest.fixture(scope="module")
def gold(treebank_data_dir):
    return {split: ptb_parse.ptb_parse_trees(split, treebank_data_dir, download=False)
            for split in ("train", "validation", "test")}


def test_split_sizes_and_first_tree(gold):
    assert {split: len(trees) for split, trees in gold.items()} == ptb_parse.SPLIT_SIZES
    assert sum(ptb_parse.SPLIT_SIZES.values()) == 3914
    assert gold["train"][0] == nltk.Tree.fromstring(FIRST)


def test_preprocessed_trees_have_no_empty_elements_or_function_tags(gold):
    labels, tags = set(), set()
    for trees in gold.values():
        for tree in trees:
            for node in tree.subtrees():
                (tags if isinstance(node[0], str) else labels).add(node.label())
    assert "-NONE-" not in tags and {"-LRB-", "-RRB-", ",", ".", "``", "''"} <= tags
    assert all("-" not in label and "=" not in label and "|" not in label and label for label in labels), labels
    assert {"S", "NP", "VP", "PP", "SBAR", "ADVP", "PRT", "WHNP"} <= labels and len(labels) <= 30


def test_round_trip_on_every_tree(gold):
    for split, trees in gold.items():
        predicted = []
        for tree in trees:
            words = tree.leaves()
            rebuilt, repaired = ptb_parse.delinearize(ptb_parse.linearize(tree), words)
            assert not repaired and len(rebuilt.leaves()) == len(words)
            gold_brackets, test_brackets, _ = parsing.sentence_brackets(tree, rebuilt)
            assert gold_brackets == test_brackets
            predicted.append(rebuilt)
            # With the gold tags put back the tree itself comes back, typed closers or not.
            typed = ptb_parse.linearize(tree, typed_closing=True)
            assert ptb_parse.delinearize(typed, words, tags=tags_of(tree)) == (tree, False)
        scores = parsing.bracket_scores(trees, predicted)
        assert scores["f1"] == scores["exact_match"] == 100.0, split


def test_right_branching_baseline_on_validation(gold):
    trees = gold["validation"]
    scores = parsing.bracket_scores(trees, [parsing.right_branching_tree(t.leaves(), tags_of(t)) for t in trees])
    assert scores["sentences"] == 217 and scores["gold_brackets"] > 3000
    assert 5.0 < scores["f1"] < 40.0  # far below any parser


def test_load_ptb_parse_gives_scalar_string_pairs(treebank_data_dir, gold, no_network):
    import tensorflow as tf

    dataset = ptb_parse.load_ptb_parse("val", data_dir=treebank_data_dir)
    assert dataset.element_spec == (tf.TensorSpec((), tf.string), tf.TensorSpec((), tf.string))
    assert int(dataset.cardinality()) == 217
    pairs = [(s.numpy().decode(), t.numpy().decode()) for s, t in dataset]
    assert pairs == [(" ".join(tree.leaves()), " ".join(ptb_parse.linearize(tree))) for tree in gold["validation"]]
    assert pairs[0][0].startswith("Carnival Cruise Lines Inc. said potential problems with the construction")
    sources, targets = ptb_parse.ptb_parse_pairs("test", treebank_data_dir, typed_closing=True)
    assert len(sources) == len(targets) == 196
    assert all(len(s.split()) == t.split().count("XX") for s, t in zip(sources, targets))
    assert all(t.split()[-1] == ")" + t.split()[0][1:] for t in targets)


def test_tree_tokens_are_the_labels_closers_and_leaf_token(gold, treebank_data_dir):
    from tfm.data.datasets import whole_tokens

    targets = [" ".join(ptb_parse.linearize(tree)) for tree in gold["train"]]
    tokens = ptb_parse.tree_tokens(targets)
    labels = {node.label() for tree in gold["train"] for node in tree.subtrees() if not isinstance(node[0], str)}
    assert tokens == sorted({"(" + label for label in labels} | {")", "XX"})
    assert ptb_parse.tree_tokens(["(S (NP XX ) XX )", "(S XX )"]) == ["(NP", "(S", ")", "XX"]
    pairs = ptb_parse.load_ptb_parse("train", data_dir=treebank_data_dir, download=False)
    assert whole_tokens("ptb_parse", pairs) == tokens
    assert whole_tokens("multi30k", pairs) == ()  # translation keeps plain BPE


def test_reading_needs_no_global_nltk_data_path(treebank_data_dir, monkeypatch):
    monkeypatch.setattr(nltk.data, "path", ["/nonexistent/nltk_data"])
    monkeypatch.delenv("NLTK_DATA", raising=False)
    trees = ptb_parse.read_treebank(["wsj_0001.mrg"], treebank_data_dir, download=False)
    assert len(trees) == 2 and ptb_parse.preprocess_tree(trees[0]) == nltk.Tree.fromstring(FIRST)
    assert nltk.data.path == ["/nonexistent/nltk_data"]  # put back as it was


def test_reads_the_unzipped_folder_too(tmp_path):
    if not os.path.isfile(SHARED_ZIP):
        pytest.skip(f"Penn Treebank sample not found at {os.path.normpath(SHARED_ZIP)}")
    corpora = tmp_path / "nltk_data" / "corpora"
    with zipfile.ZipFile(SHARED_ZIP) as archive:
        archive.extractall(corpora, [n for n in archive.namelist() if n.startswith("treebank/combined/")])
    assert len(ptb_parse.ptb_parse_trees("validation", tmp_path, download=False)) == 217


def test_missing_corpus_is_downloaded_with_nltk_into_the_cache(tmp_path, monkeypatch):
    if not os.path.isfile(SHARED_ZIP):
        pytest.skip(f"Penn Treebank sample not found at {os.path.normpath(SHARED_ZIP)}")
    calls = []

    def fake_download(name, download_dir, quiet):  # what nltk.download does, from a local copy
        calls.append((name, download_dir, quiet))
        os.makedirs(os.path.join(download_dir, "corpora"), exist_ok=True)
        shutil.copy(SHARED_ZIP, os.path.join(download_dir, "corpora", "treebank.zip"))
        return True

    monkeypatch.setattr(nltk, "download", fake_download)
    monkeypatch.setenv("TFM_DATA_DIR", str(tmp_path / "fresh"))  # no data_dir: the env var decides
    root = ptb_parse.treebank_dir()
    assert root == str(tmp_path / "fresh" / "nltk_data")
    assert calls == [("treebank", root, True)]
    assert ptb_parse.treebank_dir() == root and len(calls) == 1  # present now: no second download


def test_missing_corpus_explains_where_to_put_it(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(nltk, "download", lambda *args, **kwargs: calls.append(args) or False)
    expected = os.path.join(str(tmp_path), "nltk_data", "corpora", "treebank.zip")
    with pytest.raises(FileNotFoundError, match="download=False") as error:
        ptb_parse.treebank_dir(tmp_path, download=False)
    assert expected in str(error.value) and calls == []
    with pytest.raises(FileNotFoundError, match=r"nltk.download\('treebank'\) did not fetch it") as error:
        ptb_parse.load_ptb_parse("train", data_dir=tmp_path)
    assert expected in str(error.value) and "copy treebank.zip" in str(error.value) and len(calls) == 1
