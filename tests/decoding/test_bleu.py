import math

import pytest

from tfm.decoding import bleu


def test_perfect_translation_scores_100():
    refs = ["the cat sat on the mat .", "A dog runs in the snow ."]
    scores = bleu.score(refs, refs)
    assert scores["bleu"] == pytest.approx(100.0)
    assert scores["bleu_tokenized_lc"] == pytest.approx(100.0)
    assert scores["chrf"] == pytest.approx(100.0)
    assert scores["sentences"] == 2


def test_hand_worked_bleu():
    """"the cat sat on the mat" vs "the cat sat on a mat": n-gram precisions 5/6, 3/5, 2/4, 1/3,
    equal lengths (BP = 1): BLEU = (5/6 * 3/5 * 2/4 * 1/3)^(1/4) = 0.5373."""
    scores = bleu.score(["the cat sat on the mat"], ["the cat sat on a mat"])
    expected = 100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert expected == pytest.approx(53.73, abs=0.01)
    assert scores["bleu"] == pytest.approx(expected, abs=1e-6)
    assert scores["bleu_details"]["bp"] == 1.0
    assert [round(p, 4) for p in scores["bleu_details"]["precisions"]] == \
        [round(100 * x, 4) for x in (5 / 6, 3 / 5, 2 / 4, 1 / 3)]


def test_cased_bleu_lowercased_bleu_and_13a_tokenization_by_hand():
    """hyp "The cat sat on the mat." vs ref "the cat sat on the mat .": 13a splits the final period off
    the hypothesis, so both are the same 7 tokens but for "The" / "the". Lowercased: BLEU 100. Cased:
    every n-gram with the first token misses, precisions 6/7, 5/6, 4/5, 3/4, equal lengths (BP = 1):
    BLEU = (6/7 * 5/6 * 4/5 * 3/4)^(1/4) = (3/7)^(1/4) = 80.91."""
    scores = bleu.score(["The cat sat on the mat."], ["the cat sat on the mat ."])
    assert scores["bleu_tokenized_lc"] == pytest.approx(100.0)
    assert scores["bleu"] == pytest.approx(80.91, abs=0.01)
    assert [round(p, 4) for p in scores["bleu_details"]["precisions"]] == \
        [round(100 * x, 4) for x in (6 / 7, 5 / 6, 4 / 5, 3 / 4)]
    # chrF2 (sacreBLEU: spaces dropped, character 1- to 6-grams, P and R averaged over the orders, then F_2):
    # "Thecatsatonthemat." vs "thecatsatonthemat.", 18 characters each, differ in the first only. Of the
    # 19 - n n-grams on either side all but the first match, so P_n = R_n = (18 - n) / (19 - n) and
    # chrF = mean(17/18, 16/17, 15/16, 14/15, 13/14, 12/13) = 93.47.
    expected_chrf = 100 * sum((18 - n) / (19 - n) for n in range(1, 7)) / 6
    assert expected_chrf == pytest.approx(93.47, abs=0.01)
    assert scores["chrf"] == pytest.approx(expected_chrf, abs=1e-6)  # chrF is case-sensitive too
    assert "tok:13a" in scores["bleu_signature"] and "case:mixed" in scores["bleu_signature"]
    assert "tok:13a" in scores["bleu_tokenized_lc_signature"] and "case:lc" in scores["bleu_tokenized_lc_signature"]
    assert "nc:6" in scores["chrf_signature"] and "nw:0" in scores["chrf_signature"]  # chrF2's settings
    lines = bleu.format_scores(scores).splitlines()
    assert lines[0] == f"BLEU                80.91  {scores['bleu_signature']}"
    assert lines[1] == f"BLEU (tok, lc)     100.00  {scores['bleu_tokenized_lc_signature']}"
    assert lines[3] == f"chrF                93.47  {scores['chrf_signature']}"


def test_references_without_4grams_use_effective_order():
    """Number words have at most 3 words: BLEU-4 would be 0 for a perfect system."""
    refs = ["dreitausend fünfhundert achtundsiebzig", "vierhundert sechsundachtzig"]
    perfect = bleu.score(refs, refs)
    assert perfect["bleu"] == pytest.approx(100.0) and "eff:yes" in perfect["bleu_signature"]
    assert "4-grams" in perfect["note"]
    hyps = ["dreitausend fünfhundert zehn", "vierhundert"]
    # Orders 1-3: precisions 3/4, 1/2 and 0/1 (smoothed by "exp" to 1/2); 4 words vs 5: BP = e^(1 - 5/4).
    expected = 100 * math.exp(1 - 5 / 4) * (3 / 4 * 1 / 2 * 1 / 2) ** (1 / 3)
    assert expected == pytest.approx(44.58, abs=0.01)
    assert bleu.score(hyps, refs)["bleu"] == pytest.approx(expected, abs=1e-6)
    long_refs = ["the cat sat on the mat"]
    assert bleu.score(["the cat"], long_refs)["note"] == ""  # real corpora: plain BLEU-4


def test_one_overlong_hypothesis_does_not_sink_short_references():
    """With max order 3, a single 5-word hypothesis among 19 perfect 3-word ones costs a little, not most:
    62 hypothesis words against 60 (BP = 1), n-gram precisions 60/62, 40/42, 20/22, so
    BLEU = (60/62 * 40/42 * 20/22)^(1/3) = 94.27."""
    refs = [f"{a} hundert {b}" for a in ("ein", "zwei", "drei", "vier")
            for b in ("eins", "zwei", "drei", "neun", "zehn")]
    hyps = list(refs)
    hyps[0] = "ein hundert eins und zwanzig"
    scores = bleu.score(hyps, refs)
    expected = 100 * (60 / 62 * 40 / 42 * 20 / 22) ** (1 / 3)
    assert expected == pytest.approx(94.27, abs=0.01)
    assert scores["bleu"] == pytest.approx(expected, abs=1e-6)
    assert scores["bleu_details"]["bp"] == 1.0


def test_score_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        bleu.score(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="nothing to score"):
        bleu.score([], [])


def test_split_names_are_the_data_loaders():
    """`split_pairs` takes `tfm.data`'s split names and aliases ("dev" = "val" = "validation") and refuses
    the training split."""
    info = {"data": {"dataset": "numbers", "source_lang": None, "target_lang": None, "data_dir": None}}
    validation = bleu.split_pairs(info, "validation", limit=5)
    assert bleu.split_pairs(info, "dev", limit=5) == bleu.split_pairs(info, "val", limit=5) == validation
    assert bleu.split_pairs(info, "test", limit=5) != validation
    with pytest.raises(ValueError, match="split='train': evaluate on 'val' or 'test'"):
        bleu.split_pairs(info, "train")
    with pytest.raises(ValueError, match=r"expected one of \['train', 'validation', 'test'\]"):
        bleu.split_pairs(info, "dev2")


def test_results_names_differ_in_everything_that_decides_the_hypotheses():
    base = {"beam_size": 21, "alpha": 0.3, "checkpoint": "/runs/parse/checkpoints/averaged.weights.h5"}
    names = {bleu.results_name("test", base),
             bleu.results_name("val", base),
             bleu.results_name("test", {**base, "beam_size": 4}),
             bleu.results_name("test", {**base, "alpha": 0.6}),
             bleu.results_name("test", {**base, "checkpoint": "epoch_030.weights.h5"}),
             bleu.results_name("test", {**base, "checkpoint": "/elsewhere/best.h5"}),
             bleu.results_name("test", {**base, "constrained": False}),
             bleu.results_name("test", base, limit=50)}
    assert len(names) == 8
    assert bleu.results_name("test", {**base, "constrained": True}) == "test.beam21.alpha0.3.averaged"
    other = {**base, "checkpoint": "/elsewhere/best.h5", "constrained": False}
    assert bleu.results_name("test", other, limit=6) == "test.beam21.alpha0.3.best.unconstrained.first6"


def test_a_lowercasing_runs_scores_lead_with_moses_lowercased_bleu():
    """A model that writes lowercased text is compared by Moses-tokenized lowercased BLEU: that line leads,
    and cased BLEU (which cannot credit a capitalised reference word) is labelled as such."""
    scores = bleu.score(["der hund läuft ."], ["Der Hund läuft."], lang="de", preprocess="moses_lc")
    lines = bleu.format_scores(scores).splitlines()
    assert lines[0] == f"BLEU (Moses, lc)   100.00  {scores['bleu_moses_lc_signature']}"
    assert lines[2].startswith("BLEU (cased)") and f"{scores['bleu']:6.2f}" in lines[2]
    assert scores["bleu"] < 50  # "Der" and "Hund" cannot match: the reason it does not lead
    assert any("capitalised" in line for line in lines[4:])
