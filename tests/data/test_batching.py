import collections

import numpy as np
import pytest
import tensorflow as tf

from tfm.data import batching
from tfm.data.multi30k import load_multi30k
from tfm.data.synthetic import number_words_pairs, sequence_task_pairs
from tfm.special_tokens import END_ID, START_ID

BUDGET, MAX_LENGTH = 400, 48


@pytest.fixture(scope="module")
def texts():
    """~1000 number-word and word-sequence pairs (2 to 12 subwords a side), then the only three a
    batcher must drop: a 10,000-token source, a 10,000-token target, an empty source."""
    en, de = number_words_pairs("validation", max_number=9999, num_validation=700, num_test=10)
    src, tgt = sequence_task_pairs("test", num_examples=300, max_length=12)
    sources = en + src + ["alpha " * 10_000, "bravo charlie", ""]
    targets = de + tgt + ["zulu", "delta " * 10_000, "echo"]
    return sources, targets


@pytest.fixture(scope="module")
def pairs(texts):
    return tf.data.Dataset.from_tensor_slices(texts)


def as_arrays(batches):
    return [((s.numpy(), ti.numpy()), to.numpy()) for (s, ti), to in batches]


@pytest.fixture(scope="module")
def bucketed(pairs, synthetic_tokenizer):
    dataset = batching.bucket_by_token_budget(pairs, synthetic_tokenizer, tokens_per_batch=BUDGET,
                                              max_length=MAX_LENGTH)
    return as_arrays(dataset), batching.length_report(pairs, synthetic_tokenizer, MAX_LENGTH)


def expected_pairs(texts, tokenizer):
    """Every pair but the last three (see `texts`), as token ids."""
    sources, targets = (tokenizer.tokenize(list(side[:-3])).to_list() for side in texts)
    return collections.Counter((tuple(s), tuple(t)) for s, t in zip(sources, targets))


def test_report_counts_the_long_and_empty_pairs(bucketed, texts):
    _, report = bucketed
    assert (report.num_pairs, report.too_long, report.empty) == (len(texts[0]), 2, 1)
    assert report.kept == report.num_pairs - 3 and report.filtered == 3
    assert report.longest_source == 10_000 and report.longest_target == 10_001  # T = subwords + 1 (START / END)
    assert f"filtered 2 longer than max_length={MAX_LENGTH} and 1 empty" in str(report)


def test_each_batch_within_budget_and_padded_to_its_longest(bucketed):
    batches, _ = bucketed
    bounds = batching.bucket_boundaries(MAX_LENGTH)
    for (source, target_in), target_out in batches:
        assert source.dtype == target_in.dtype == target_out.dtype == np.int32
        b, s = source.shape
        t = target_in.shape[1]
        assert b * s <= BUDGET and b * t <= BUDGET
        assert target_out.shape == (b, t) and s <= MAX_LENGTH and t <= MAX_LENGTH
        assert (source[:, -1] != 0).any() and (target_in[:, -1] != 0).any()  # no all-padding column
        bound = next(x for x in bounds if x >= max(s, t))
        assert b <= BUDGET // bound


def test_teacher_forcing_shift(bucketed):
    batches, _ = bucketed
    for (_, target_in), target_out in batches:
        for x, y in zip(target_in, target_out):
            n = int(np.sum(y != 0))  # n - 1 subwords + END
            assert x[0] == START_ID and y[n - 1] == END_ID and int(np.sum(x != 0)) == n
            np.testing.assert_array_equal(x[1:n], y[: n - 1])
            assert not (x[n:].any() or y[n:].any())


def test_no_pair_lost_except_the_filtered(bucketed, texts, synthetic_tokenizer):
    batches, report = bucketed
    got = collections.Counter()
    for (source, _), target_out in batches:
        for s, y in zip(source, target_out):
            got[(tuple(s[s != 0].tolist()), tuple(y[y != 0].tolist())[:-1])] += 1
    assert got == expected_pairs(texts, synthetic_tokenizer)
    assert sum(got.values()) == report.kept


def test_drop_remainder_and_pad_to_bucket_give_one_shape_per_bucket(pairs, synthetic_tokenizer):
    dataset = batching.bucket_by_token_budget(pairs, synthetic_tokenizer, tokens_per_batch=BUDGET,
                                              max_length=MAX_LENGTH, drop_remainder=True, pad_to_bucket=True)
    bounds = batching.bucket_boundaries(MAX_LENGTH)
    shapes = set()
    for (source, target_in), target_out in dataset:
        length = source.shape[1]
        assert length in bounds and source.shape == target_in.shape == target_out.shape
        assert source.shape[0] == BUDGET // length
        shapes.add(tuple(source.shape))
    assert len(shapes) == len({s[1] for s in shapes}) > 1


def test_batch_multiple_splits_full_batches_evenly(pairs, synthetic_tokenizer):
    dataset = batching.bucket_by_token_budget(pairs, synthetic_tokenizer, tokens_per_batch=BUDGET,
                                              max_length=MAX_LENGTH, drop_remainder=True, pad_to_bucket=True,
                                              batch_multiple=3)
    sizes = [(source.shape[0], source.shape[1]) for (source, _), _ in dataset]
    # The largest multiple of 3 within the budget (every bucket here fits at least 8 rows).
    assert sizes and all(b % 3 == 0 and b * length <= BUDGET < (b + 3) * length for b, length in sizes)
    with pytest.raises(ValueError, match="batch_multiple=0"):
        batching.bucket_by_token_budget(pairs, synthetic_tokenizer, batch_multiple=0)


def test_shuffle_is_seeded(pairs, synthetic_tokenizer):
    def first_batch(seed):
        dataset = batching.bucket_by_token_budget(pairs, synthetic_tokenizer, BUDGET, MAX_LENGTH, shuffle=True,
                                                  shuffle_buffer=2000, seed=seed)
        return next(iter(dataset))[0][0].numpy()

    a, b, c = first_batch(1), first_batch(1), first_batch(2)
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or (a != c).any()


def test_fixed_length_padding(pairs, synthetic_tokenizer, bucketed):
    dataset = batching.pad_to_fixed_length(pairs, synthetic_tokenizer, batch_size=32, max_length=MAX_LENGTH)
    report = batching.length_report(pairs, synthetic_tokenizer, MAX_LENGTH)
    batches = as_arrays(dataset)
    assert all(s.shape == ti.shape == to.shape == (32, MAX_LENGTH) for (s, ti), to in batches[:-1])
    assert sum(s.shape[0] for (s, _), _ in batches) == report.kept == bucketed[1].kept
    dropped = batching.pad_to_fixed_length(pairs, synthetic_tokenizer, 32, MAX_LENGTH, drop_remainder=True)
    assert dropped.element_spec[1].shape.as_list() == [32, MAX_LENGTH]


def test_batches_run_without_the_autotune_model_thread(pairs, synthetic_tokenizer):
    # model.fit deletes an epoch's iterator when the next epoch starts; with autotuning on, TF 2.21
    # could wait there for the model thread's sleep (up to 60 s). The option must survive what the
    # training pipeline adds after batching (split_evenly's map, repeat).
    for dataset in (batching.bucket_by_token_budget(pairs, synthetic_tokenizer, BUDGET, MAX_LENGTH, shuffle=True),
                    batching.pad_to_fixed_length(pairs, synthetic_tokenizer, 32, MAX_LENGTH)):
        assert dataset.options().autotune.enabled is False
        assert dataset.map(lambda inputs, target_out: (inputs, target_out)).repeat().options().autotune.enabled is False


def test_padding_fraction_by_hand():
    batches = tf.data.Dataset.from_tensors(((tf.constant([[5, 6, 0, 0]]), tf.constant([[2, 7, 0, 0]])),
                                            tf.constant([[7, 3, 0, 0]])))
    assert batching.padding_fraction(batches) == pytest.approx(6 / 12)
    with pytest.raises(ValueError, match="empty"):
        batching.padding_fraction(batches.take(0))


def test_bucket_boundaries_and_argument_errors(pairs, synthetic_tokenizer):
    bounds = batching.bucket_boundaries(256)
    assert bounds[:12] == list(range(1, 13)) and bounds[-1] == 256
    assert all(b / a <= 1.1 + 1e-9 or b == a + 1 for a, b in zip(bounds, bounds[1:-1]))
    with pytest.raises(ValueError, match="tokens_per_batch=100 is smaller than max_length=256"):
        batching.bucket_by_token_budget(pairs, synthetic_tokenizer, tokens_per_batch=100, max_length=256)
    with pytest.raises(ValueError, match="batch_size=0"):
        batching.pad_to_fixed_length(pairs, synthetic_tokenizer, batch_size=0)


def test_multi30k_padding_bucketed_vs_fixed(multi30k_dir, multi30k_tokenizer):
    pairs = load_multi30k("train", "en", "de", data_dir=multi30k_dir).take(10_000)
    bucketed = batching.bucket_by_token_budget(pairs, multi30k_tokenizer, tokens_per_batch=4096, max_length=128,
                                               cache=True)
    fixed = batching.pad_to_fixed_length(pairs, multi30k_tokenizer, batch_size=64, max_length=128)
    bucketed_fraction, fixed_fraction = batching.padding_fraction(bucketed), batching.padding_fraction(fixed)
    print(f"Multi30k en-de padding: bucketed {bucketed_fraction:.1%}, fixed-length {fixed_fraction:.1%}")
    assert bucketed_fraction < 0.15
    assert fixed_fraction > 0.30


def test_every_data_function_has_one_return_contract():
    """No public function of tfm.data picks its return type by a flag: the summary and the report have their
    own functions (`load_parallel_files_with_summary`, `load_multi30k_with_summary`, `length_report`)."""
    import inspect

    import tfm.data

    flagged = {name: [p for p in inspect.signature(obj).parameters if p.startswith("return_")]
               for name, obj in vars(tfm.data).items() if inspect.isfunction(obj) and not name.startswith("_")}
    assert not {name: params for name, params in flagged.items() if params}
