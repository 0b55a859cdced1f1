import numpy as np
import pytest
import tensorflow as tf

from tfm.data import synthetic
from tfm.special_tokens import END_ID, START_ID


def test_sequence_task_ids_shift_and_reverse():
    (source, target_in), target_out = synthetic.sequence_task_ids(5, vocab_size=12, task="reverse", seed=3)
    for s, ti, to in zip(source, target_in, target_out):
        seq = s[s > 0]
        n = len(seq)
        np.testing.assert_array_equal(to[:n], seq[::-1])
        assert to[n] == END_ID and ti[0] == START_ID
        np.testing.assert_array_equal(ti[1 : n + 1], to[:n])


@pytest.mark.parametrize("task", ["reverse", "copy"])
def test_sequence_task_pairs(task):
    sources, targets = synthetic.sequence_task_pairs("train", task=task, num_examples=50, seed=1)
    assert len(sources) == len(targets) == 50
    for s, t in zip(sources, targets):
        words = s.split()
        assert 3 <= len(words) <= 10 and set(words) <= set(synthetic.SYMBOLS)
        assert t.split() == (words[::-1] if task == "reverse" else words)
    assert synthetic.sequence_task_pairs("train", task=task, num_examples=50, seed=1) == (sources, targets)
    assert synthetic.sequence_task_pairs("train", task=task, num_examples=50, seed=2) != (sources, targets)


def test_sequence_task_splits_do_not_overlap():
    splits = {s: set(synthetic.sequence_task_pairs(s, num_examples=300, min_length=2, max_length=4, num_symbols=6)[0])
              for s in ("train", "validation", "test")}
    assert not splits["train"] & splits["validation"]
    assert not splits["train"] & splits["test"]
    assert not splits["validation"] & splits["test"]


def test_sequence_task_impossible_request_fails_clearly():
    with pytest.raises(ValueError, match="num_symbols=2"):
        synthetic.sequence_task_pairs("test", num_examples=50, num_symbols=2, min_length=1, max_length=1)


@pytest.mark.parametrize("n, en, de", [
    (1, "one", "eins"),
    (17, "seventeen", "siebzehn"),
    (21, "twenty one", "einundzwanzig"),
    (30, "thirty", "dreißig"),
    (101, "one hundred one", "einhundert eins"),
    (321, "three hundred twenty one", "dreihundert einundzwanzig"),
    (1000, "one thousand", "eintausend"),
    (7015, "seven thousand fifteen", "siebentausend fünfzehn"),
    (21_000, "twenty one thousand", "einundzwanzigtausend"),
    (999_999, "nine hundred ninety nine thousand nine hundred ninety nine",
     "neunhundert neunundneunzigtausend neunhundert neunundneunzig"),
])
def test_number_words(n, en, de):
    assert synthetic.english_number(n) == en
    assert synthetic.german_number(n) == de


def test_number_words_splits_partition_the_numbers():
    kwargs = dict(max_number=300, num_validation=20, num_test=30, seed=5)
    splits = {s: synthetic.number_words_pairs(s, **kwargs) for s in ("train", "val", "test")}
    sizes = {s: len(pairs[0]) for s, pairs in splits.items()}
    assert sizes == {"train": 250, "val": 20, "test": 30}
    all_sources = [x for pairs in splits.values() for x in pairs[0]]
    assert sorted(all_sources) == sorted(synthetic.english_number(n) for n in range(1, 301))
    de, en = synthetic.number_words_pairs("test", source_lang="de", target_lang="en", **kwargs)
    assert (en, de) == splits["test"]


def test_number_words_errors_name_the_bad_value():
    with pytest.raises(ValueError, match="source_lang='fr'"):
        synthetic.number_words_pairs(source_lang="fr")
    with pytest.raises(ValueError, match="split='dev2'"):
        synthetic.number_words_pairs("dev2")
    with pytest.raises(ValueError, match="n=0"):
        synthetic.english_number(0)


def test_datasets_are_scalar_string_pairs():
    for dataset in (synthetic.sequence_task_dataset("test", num_examples=4),
                    synthetic.number_words_dataset("validation", max_number=50, num_validation=4, num_test=4)):
        spec = dataset.element_spec
        assert [s.dtype for s in spec] == [tf.string, tf.string] and [s.shape.rank for s in spec] == [0, 0]
        assert int(dataset.cardinality()) == 4


def test_german_compounds_can_be_split_for_word_level_alignment():
    assert synthetic.german_number(321, split_compounds=True) == "drei hundert ein und zwanzig"
    assert synthetic.german_number(21_001, split_compounds=True) == "ein und zwanzig tausend eins"
    en, de = synthetic.number_words_pairs("test", max_number=99, num_validation=5, num_test=5, split_compounds=True)
    assert all(" und " in d for e, d in zip(en, de) if len(e.split()) == 2)
