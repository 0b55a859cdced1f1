"""Trees as token sequences and back (`tfm.parsing.linearization`): linearize, delinearize and its repairs,
and the round trip on every tree of the real sample."""

import random

import nltk
import pytest

from tfm import parsing

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


def test_linearize_writes_xx_for_every_word_and_untyped_closers():
    tree = nltk.Tree.fromstring(CLASSIC)
    assert " ".join(parsing.linearize(tree)) == "(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )"
    assert " ".join(parsing.linearize(tree, typed_closing=True)) == "(S (NP XX XX )NP (VP XX (NP XX XX )NP )VP XX )S"
    assert " ".join(parsing.linearize(nltk.Tree.fromstring(FIRST))) == FIRST_TARGET


@pytest.mark.parametrize("typed_closing", [False, True])
def test_delinearize_inverts_linearize(typed_closing):
    tree = nltk.Tree.fromstring(CLASSIC)
    tokens = parsing.linearize(tree, typed_closing)
    rebuilt, repaired = parsing.delinearize(tokens, WORDS, tags=tags_of(tree))
    assert rebuilt == tree and not repaired
    placeholder, repaired = parsing.delinearize(" ".join(tokens), " ".join(WORDS))
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
    tree, repaired = parsing.delinearize(tokens, words)
    assert repaired
    assert tree == nltk.Tree.fromstring(expected)
    assert leaves_are_well_formed(tree, words.split())


def test_delinearize_puts_gold_tags_on_the_leaves():
    tree, repaired = parsing.delinearize("(S (NP XX ) (VP XX", ["Dogs", "bark", "."], tags=["NNS", "VBP", "."])
    assert repaired and tree == nltk.Tree.fromstring("(S (NP (NNS Dogs)) (VP (VBP bark) (. .)))")
    with pytest.raises(ValueError, match="got 2 tags for 3 words"):
        parsing.delinearize("(S XX XX XX )", ["Dogs", "bark", "."], tags=["NNS", "VBP"])


def test_delinearize_is_always_well_formed_on_random_tokens():
    vocab = ["(S", "(NP", "(VP", "(PP", "(", ")", ")NP", "XX", "XX", "XX", "junk"]
    rng = random.Random(0)
    for _ in range(500):
        words = [f"w{i}" for i in range(rng.randrange(0, 8))]
        tokens = [rng.choice(vocab) for _ in range(rng.randrange(0, 25))]
        tree, _ = parsing.delinearize(tokens, words)
        assert leaves_are_well_formed(tree, words), (tokens, words, tree)
        # Its brackets are scorable against any tree over the same words.
        parsing.bracket_scores([parsing.right_branching_tree(words)], [tree])


# ---------------------------------------------------------------------------------------------
# The real sample (`treebank_data_dir`, tests/conftest.py: a copy of ../shared/data's, or a skip saying why).


@pytest.fixture(scope="module")
def gold(treebank_data_dir):
    from tfm.parsing.treebank import ptb_parse_trees

    return {split: ptb_parse_trees(split, treebank_data_dir, download=False)
            for split in ("train", "validation", "test")}


def test_round_trip_on_every_tree(gold):
    for split, trees in gold.items():
        predicted = []
        for tree in trees:
            words = tree.leaves()
            rebuilt, repaired = parsing.delinearize(parsing.linearize(tree), words)
            assert not repaired and len(rebuilt.leaves()) == len(words)
            gold_brackets, test_brackets, _ = parsing.sentence_brackets(tree, rebuilt)
            assert gold_brackets == test_brackets
            predicted.append(rebuilt)
            # With the gold tags put back the tree itself comes back, typed closers or not.
            typed = parsing.linearize(tree, typed_closing=True)
            assert parsing.delinearize(typed, words, tags=tags_of(tree)) == (tree, False)
        scores = parsing.bracket_scores(trees, predicted)
        assert scores["f1"] == scores["exact_match"] == 100.0, split


def test_tag_leaves_write_each_words_tag_and_come_back_without_gold_tags():
    """leaves="tags": every word is written as its POS tag; rebuilt without gold tags, the tree is the
    original one (the tags are the preterminals); an unknown style is refused by name."""
    tree = nltk.Tree.fromstring(CLASSIC)
    tokens = parsing.linearize(tree, leaves="tags")
    assert " ".join(tokens) == "(S (NP DT NN ) (VP VBD (NP DT NN ) ) . )"
    assert parsing.delinearize(tokens, WORDS) == (tree, False)
    assert parsing.leaf_tokens("XX") == ("XX",) and set(parsing.leaf_tokens("tags")) == parsing.POS_TAGS
    assert len(parsing.POS_TAGS) == 45 and parsing.PUNCTUATION_TAGS < parsing.POS_TAGS
    for call in (lambda: parsing.linearize(tree, leaves="words"), lambda: parsing.leaf_tokens("words")):
        with pytest.raises(ValueError, match="leaves='words'"):
            call()
    with pytest.raises(ValueError, match="would read as a bracket"):
        parsing.linearize(nltk.Tree("S", [nltk.Tree("(", ["("]), nltk.Tree("NN", ["x"])]), leaves="tags")


def test_the_tags_dataset_is_the_same_trees_with_tags_for_leaves(treebank_data_dir, gold):
    """ptb_parse_tags: the targets of ptb_parse with each XX replaced by the word's gold tag, every tag one
    of the 45; the two parsing datasets are the ones tfm.data lists."""
    from tfm.data import PARSING_TASKS, load_dataset

    assert tuple(parsing.DATASET_LEAVES) == PARSING_TASKS
    pairs = {name: list(load_dataset(name, "validation", data_dir=treebank_data_dir).as_numpy_iterator())
             for name in PARSING_TASKS}
    for (source, xx), (same, tagged), tree in zip(pairs["ptb_parse"], pairs["ptb_parse_tags"], gold["validation"]):
        assert source == same
        xx, tagged = xx.decode().split(), tagged.decode().split()
        leaves = [t for t in tagged if not t.startswith(("(", ")"))]
        assert leaves == tags_of(tree) and set(leaves) <= parsing.POS_TAGS
        assert [("XX" if t in leaves and not t.startswith(("(", ")")) else t) for t in tagged] == xx
