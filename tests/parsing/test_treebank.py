"""The Penn Treebank sample (`tfm.parsing.treebank`): its files and splits, reading it from the cache folder only,
fetching it when missing, and the `tf.data` set of (sentence, linearized tree) pairs. The trees themselves
(preprocessing, linearization, scoring) are tested in tests/parsing/."""

import os
import shutil
import zipfile

import nltk
import pytest

from tfm import parsing
from tfm.parsing import treebank as ptb_parse

SHARED_ZIP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data",
                          "nltk_data", "corpora", "treebank.zip")

# wsj_0001.mrg, sentence 1, after preprocessing.
FIRST = ("(S (NP (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) (JJ old)) (, ,)) "
         "(VP (MD will) (VP (VB join) (NP (DT the) (NN board)) (PP (IN as) (NP (DT a) (JJ nonexecutive) "
         "(NN director))) (NP (NNP Nov.) (CD 29)))) (. .))")


def test_splits_partition_the_files():
    files = [ptb_parse.split_fileids(split) for split in ("train", "validation", "test")]
    assert [len(f) for f in files] == [169, 15, 15]
    assert sum(files, []) == [f"wsj_{n:04d}.mrg" for n in range(1, 200)]
    assert ptb_parse.split_fileids("dev") == files[1]
    with pytest.raises(ValueError, match="split='training'"):
        ptb_parse.split_fileids("training")


# ---------------------------------------------------------------------------------------------
# The real sample: a copy of ../shared/data/nltk_data/corpora/treebank.zip in a temporary cache
# (`treebank_data_dir`, tests/conftest.py: the copy, or a skip saying why).


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


def test_load_ptb_parse_gives_scalar_string_pairs(treebank_data_dir, gold, no_network):
    import tensorflow as tf

    dataset = ptb_parse.load_ptb_parse("val", data_dir=treebank_data_dir)
    assert dataset.element_spec == (tf.TensorSpec((), tf.string), tf.TensorSpec((), tf.string))
    assert int(dataset.cardinality()) == 217
    pairs = [(s.numpy().decode(), t.numpy().decode()) for s, t in dataset]
    assert pairs == [(" ".join(tree.leaves()), " ".join(parsing.linearize(tree))) for tree in gold["validation"]]
    assert pairs[0][0].startswith("Carnival Cruise Lines Inc. said potential problems with the construction")
    sources, targets = ptb_parse.ptb_parse_pairs("test", treebank_data_dir, typed_closing=True)
    assert len(sources) == len(targets) == 196
    assert all(len(s.split()) == t.split().count("XX") for s, t in zip(sources, targets))
    assert all(t.split()[-1] == ")" + t.split()[0][1:] for t in targets)


def test_tree_tokens_are_the_labels_closers_and_leaf_token(gold, treebank_data_dir):
    from tfm.training.pipeline import whole_tokens

    targets = [" ".join(parsing.linearize(tree)) for tree in gold["train"]]
    tokens = parsing.tree_tokens(targets)
    labels = {node.label() for tree in gold["train"] for node in tree.subtrees() if not isinstance(node[0], str)}
    assert tokens == sorted({"(" + label for label in labels} | {")", "XX"})
    assert parsing.tree_tokens(["(S (NP XX ) XX )", "(S XX )"]) == ["(NP", "(S", ")", "XX"]
    pairs = ptb_parse.load_ptb_parse("train", data_dir=treebank_data_dir, download=False)
    assert whole_tokens("ptb_parse", pairs) == tokens
    assert whole_tokens("multi30k", pairs) == ()  # translation keeps plain BPE


def test_reading_needs_no_global_nltk_data_path(treebank_data_dir, monkeypatch):
    monkeypatch.setattr(nltk.data, "path", ["/nonexistent/nltk_data"])
    monkeypatch.delenv("NLTK_DATA", raising=False)
    trees = ptb_parse.read_treebank(["wsj_0001.mrg"], treebank_data_dir, download=False)
    assert len(trees) == 2 and parsing.preprocess_tree(trees[0]) == nltk.Tree.fromstring(FIRST)
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
