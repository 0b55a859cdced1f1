"""EVALB-style bracket scoring (COLLINS.prm, `tfm.parsing.evalb`) on trees worked by hand, and the right-branching
baseline on the real sample."""

import nltk
import pytest

from tfm import parsing

# "The man saw a dog with a telescope ." (words 0..7, the period is deleted before counting).
PP_ON_VP = ("(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog)) "
            "(PP (IN with) (NP (DT a) (NN telescope)))) (. .))")
PP_ON_NP = ("(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (NP (DT a) (NN dog)) "
            "(PP (IN with) (NP (DT a) (NN telescope))))) (. .))")
MAN_SAW_DOG = "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))"


def test_one_wrong_attachment_worked_by_hand():
    # gold: S 0-8, NP 0-2, VP 2-8, NP 3-5, PP 5-8, NP 6-8                 -> 6 brackets
    # test: S 0-8, NP 0-2, VP 2-8, NP 3-8, NP 3-5, PP 5-8, NP 6-8          -> 7 brackets
    # matched 6 (all but the test's NP 3-8): P = 6/7, R = 6/6, F1 = 2*6 / (7 + 6) = 12/13.
    scores = parsing.bracket_scores([PP_ON_VP], [PP_ON_NP])
    assert (scores["matched_brackets"], scores["gold_brackets"], scores["test_brackets"]) == (6, 6, 7)
    assert scores["precision"] == pytest.approx(600 / 7, abs=1e-9)
    assert scores["recall"] == pytest.approx(100.0, abs=1e-9)
    assert scores["f1"] == pytest.approx(1200 / 13, abs=1e-9)
    assert scores["exact_match"] == 0.0 and scores["sentences"] == 1
    # Swapping the roles swaps precision and recall; F1 is symmetric.
    swapped = parsing.bracket_scores([PP_ON_NP], [PP_ON_VP])
    assert (swapped["precision"], swapped["recall"]) == (scores["recall"], scores["precision"])
    assert swapped["f1"] == pytest.approx(scores["f1"], abs=1e-12)


def test_missing_vp_worked_by_hand():
    # gold: S 0-5, NP 0-2, VP 2-5, NP 3-5; test (flat, no VP): S 0-5, NP 0-2, NP 3-5.
    # P = 3/3, R = 3/4, F1 = 2 * 1 * 0.75 / 1.75 = 6/7.
    test = "(S (NP (DT The) (NN man)) (VBD saw) (NP (DT a) (NN dog)) (. .))"
    scores = parsing.bracket_scores([MAN_SAW_DOG], [test])
    assert (scores["matched_brackets"], scores["gold_brackets"], scores["test_brackets"]) == (3, 4, 3)
    assert (scores["precision"], scores["recall"]) == (100.0, 75.0)
    assert scores["f1"] == pytest.approx(600 / 7, abs=1e-9)


def test_corpus_scores_pool_brackets_over_sentences():
    # (6 + 3) matched of (6 + 4) gold and (7 + 3) test brackets; one of three sentences exact.
    flat = "(S (NP (DT The) (NN man)) (VBD saw) (NP (DT a) (NN dog)) (. .))"
    scores = parsing.bracket_scores([PP_ON_VP, MAN_SAW_DOG, MAN_SAW_DOG], [PP_ON_NP, flat, MAN_SAW_DOG])
    assert (scores["matched_brackets"], scores["gold_brackets"], scores["test_brackets"]) == (13, 14, 14)
    assert scores["precision"] == scores["recall"] == pytest.approx(1300 / 14, abs=1e-9)
    assert scores["f1"] == pytest.approx(1300 / 14, abs=1e-9)
    assert scores["exact_match"] == pytest.approx(100 / 3, abs=1e-9) and scores["sentences"] == 3


def test_identical_trees_score_100():
    scores = parsing.bracket_scores([PP_ON_VP, MAN_SAW_DOG], [PP_ON_VP, nltk.Tree.fromstring(MAN_SAW_DOG)])
    assert (scores["precision"], scores["recall"], scores["f1"], scores["exact_match"]) == (100.0,) * 4


def test_punctuation_is_deleted_before_spans_are_counted():
    # The period inside the VP or outside it, the comma inside the NP or not: same spans once deleted.
    gold = "(S (NP (NP (DT The) (NN man)) (, ,)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))"
    test = "(S (NP (NP (DT The) (NN man))) (, ,) (VP (VBD saw) (NP (DT a) (NN dog)) (. .)))"
    scores = parsing.bracket_scores([gold], [test])
    assert scores["f1"] == 100.0 and scores["gold_brackets"] == 5
    # A bracket over punctuation only spans nothing: not counted (EVALB's "zero element").
    quoted = "(S (NP (NN Hi)) (PRN (`` ``) ('' '')) (: :) (, ,))"
    gold, _, _ = parsing.sentence_brackets(quoted, quoted)
    assert gold == {("S", 0, 1): 1, ("NP", 0, 1): 1}


def test_punctuation_positions_come_from_the_gold_tags():
    # The test tree's preterminals are placeholders (what delinearize writes): scored as with gold tags.
    test = "(S (NP (XX The) (XX man)) (VP (XX saw) (NP (XX a) (XX dog))) (XX .))"
    assert parsing.bracket_scores([MAN_SAW_DOG], [test])["f1"] == 100.0
    # Only `` '' . : , are punctuation: $, #, -LRB- and -RRB- words stay and count in spans.
    gold = "(S (NP (-LRB- -LRB-) (NP ($ $) (CD 5)) (-RRB- -RRB-)) (VP (VBZ is) (ADJP (JJ due))))"
    brackets, _, _ = parsing.sentence_brackets(gold, gold)
    assert brackets == {("S", 0, 6): 1, ("NP", 0, 4): 1, ("NP", 1, 3): 1, ("VP", 4, 6): 1, ("ADJP", 5, 6): 1}


def test_function_tags_and_indices_are_stripped():
    gold = "(S (NP-SBJ-1 (PRP He)) (VP (VBD left) (NP-TMP=2 (NN yesterday))) (. .))"
    test = "(S (NP (PRP He)) (VP (VBD left) (NP (NN yesterday))) (. .))"
    assert parsing.bracket_scores([gold], [test])["f1"] == 100.0
    assert [parsing.evalb_label(x) for x in ("NP-SBJ-1", "PP-LOC=2", "S", "-LRB-", "PRT", "PRT-1")] == [
        "NP", "PP", "S", "-LRB-", "ADVP", "ADVP"]


def test_advp_and_prt_are_the_same_label():
    gold = "(S (NP (PRP They)) (VP (VBD gave) (PRT (RP up))))"
    assert parsing.bracket_scores([gold], ["(S (NP (PRP They)) (VP (VBD gave) (ADVP (RP up))))"])["f1"] == 100.0
    other = parsing.bracket_scores([gold], ["(S (NP (PRP They)) (VP (VBD gave) (NP (RP up))))"])
    assert (other["matched_brackets"], other["gold_brackets"], other["test_brackets"]) == (3, 4, 4)


def test_root_wrappers_and_preterminals_are_not_brackets():
    wrapped = f"(TOP {MAN_SAW_DOG})"
    empty_root = f"( {MAN_SAW_DOG} )"
    scores = parsing.bracket_scores([MAN_SAW_DOG, empty_root], [wrapped, f"(ROOT {MAN_SAW_DOG})"])
    assert scores["f1"] == 100.0 and scores["gold_brackets"] == scores["test_brackets"] == 8  # 4 a sentence


def test_brackets_are_a_multiset():
    # Gold has the unary chain NP -> NP over "dogs": two NP 0-1 brackets, the test one. P = 3/3, R = 3/4.
    scores = parsing.bracket_scores(["(S (NP (NP (NNS dogs))) (VP (VBP bark)))"],
                                    ["(S (NP (NNS dogs)) (VP (VBP bark)))"])
    assert (scores["matched_brackets"], scores["gold_brackets"], scores["test_brackets"]) == (3, 4, 3)
    assert (scores["precision"], scores["recall"]) == (100.0, 75.0)


def test_empty_elements_are_deleted_from_both_trees():
    gold = "(S (NP-SBJ (-NONE- *)) (VP (VB Go) (ADVP (RB home))) (. .))"
    test = "(S (VP (VB Go) (ADVP (RB home))) (. .))"
    scores = parsing.bracket_scores([gold], [test])
    assert scores["f1"] == 100.0 and scores["gold_brackets"] == 3  # S, VP, ADVP: the NP spans nothing


def test_max_length_keeps_short_sentences_only():
    # 9 words with the period (punctuation counts for length, as in EVALB's len<=40), 6 without.
    scores = parsing.bracket_scores([PP_ON_VP, MAN_SAW_DOG], [PP_ON_NP, MAN_SAW_DOG], max_length=6)
    assert scores["sentences"] == 1 and scores["f1"] == 100.0
    assert parsing.bracket_scores([PP_ON_VP], [PP_ON_NP], max_length=9)["sentences"] == 1


def test_word_count_mismatch_names_the_sentence():
    with pytest.raises(ValueError, match=r"sentence 1: the gold tree has 6 words, the test tree 4"):
        parsing.bracket_scores([MAN_SAW_DOG, MAN_SAW_DOG],
                               [MAN_SAW_DOG, "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (NN dog))))"])
    with pytest.raises(ValueError, match="2 gold trees but 1 test trees"):
        parsing.bracket_scores([MAN_SAW_DOG, MAN_SAW_DOG], [MAN_SAW_DOG])
    with pytest.raises(ValueError, match="sentence 0: the test tree"):
        parsing.bracket_scores([MAN_SAW_DOG], ["(S (NP (DT The)"])


def test_untagged_words_and_empty_elements_keep_their_positions():
    # A word directly under a phrase (not treebank style) is a word without a tag; -NONE- words are not words,
    # wherever each tree puts them: the spans of both trees are counted over the same 4 words.
    gold = "(S (NP (DT The) (NN man)) (VP (VBD left) (ADVP (RB early)) (NP (-NONE- *T*))) (. .))"
    test = "(S (NP The man) (-NONE- *) (VP left early) (. .))"
    gold_brackets, test_brackets, length = parsing.sentence_brackets(gold, test)
    assert test_brackets == {("S", 0, 4): 1, ("NP", 0, 2): 1, ("VP", 2, 4): 1} and length == 5
    assert gold_brackets == {**test_brackets, ("ADVP", 3, 4): 1}
    # (VP left) alone would be a preterminal (one word under it): never a bracket.
    assert ("VP", 2, 3) not in parsing.sentence_brackets(gold, "(S (NP The man) (VP left) (XX early) (. .))")[1]


def test_no_brackets_gives_zero_not_a_division_error():
    scores = parsing.bracket_scores([], [])
    assert (scores["f1"], scores["sentences"], scores["exact_match"]) == (0.0, 0, 0.0)


def test_right_branching_baseline():
    tree = parsing.right_branching_tree("The man saw a dog .")
    assert tree == nltk.Tree.fromstring(
        "(S (XX The) (S (XX man) (S (XX saw) (S (XX a) (S (XX dog) (XX .))))))")
    # Against MAN_SAW_DOG (period deleted): test S 0-5, S 1-5, S 2-5, S 3-5, S 4-5 (S 5-5 is empty);
    # gold S 0-5, NP 0-2, VP 2-5, NP 3-5: only S 0-5 matches. P = 1/5, R = 1/4, F1 = 2/9.
    scores = parsing.bracket_scores([MAN_SAW_DOG], [tree])
    assert (scores["matched_brackets"], scores["gold_brackets"], scores["test_brackets"]) == (1, 4, 5)
    assert scores["f1"] == pytest.approx(200 / 9, abs=1e-9)
    assert parsing.right_branching_tree(["a"], tags=["DT"]) == nltk.Tree("S", [nltk.Tree("DT", ["a"])])
    assert parsing.right_branching_tree([]) == nltk.Tree("S", [])
    with pytest.raises(ValueError, match="got 1 tags for 2 words"):
        parsing.right_branching_tree(["a", "b"], tags=["DT"])


def test_table4_matches_the_paper():
    rows = {(parser, training): f1 for parser, training, f1 in parsing.TABLE4_WSJ23_F1}
    assert len(rows) == len(parsing.TABLE4_WSJ23_F1) == 12
    assert rows[("Transformer (4 layers)", "WSJ only, discriminative")] == 91.3
    assert rows[("Transformer (4 layers)", "semi-supervised")] == 92.7
    assert rows[("Vinyals & Kaiser et al. (2014)", "WSJ only, discriminative")] == 88.3
    assert rows[("Dyer et al. (2016)", "generative")] == 93.3


def test_parse_report_lists_the_paper_and_the_new_row():
    report = parsing.parse_report(parsing.bracket_scores([PP_ON_VP], [PP_ON_NP]), name="baseline",
                                  repair_rate=0.25)
    lines = report.splitlines()
    assert len(lines) == 1 + 12 + 1
    assert lines[-1].startswith("baseline") and "92.31" in lines[-1] and "25.0% repaired" in lines[-1]
    assert "Luong et al. (2015)" in report and "93.0" in report


def test_right_branching_baseline_on_validation(treebank_data_dir):
    from tfm.parsing.treebank import ptb_parse_trees

    trees = ptb_parse_trees("validation", treebank_data_dir, download=False)
    scores = parsing.bracket_scores(trees, [parsing.right_branching_tree(t.leaves(), [tag for _, tag in t.pos()])
                                            for t in trees])
    assert scores["sentences"] == 217 and scores["gold_brackets"] > 3000
    assert 5.0 < scores["f1"] < 40.0  # far below any parser
