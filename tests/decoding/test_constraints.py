"""The search's generic constraint protocol (`tfm.decoding.Constraint`) with constraints that know nothing of
trees: greedy and beam search, static or dynamic shapes, write only what a constraint allows. (The parser's
tree constraint is tested in tests/parsing/test_tree_constraint.py.)"""

import numpy as np
import pytest
import tensorflow as tf

from tfm import decoding
from tfm.special_tokens import END_ID, RESERVED_TOKENS

BANNED = 7
EXTRA = 4  # conftest's tiny_transformer: outputs at most source length + 4


class Never(decoding.Constraint):
    """Never writes `token`; nothing to know about a sentence (the base class's `sentence_info`)."""

    def __init__(self, vocab_size, token):
        self.vocab_size, self.token = vocab_size, token

    def allowed(self, prefix, index, info):
        row = tf.range(self.vocab_size) != self.token  # (V,)
        return tf.tile(row[tf.newaxis], [tf.shape(prefix)[0], 1])  # (N, V)


class EvenIdsAsLongAsTheSource:
    """No base class (the protocol is duck-typed): even ids only, exactly as many as the source has tokens,
    then END. `sentence_info` is each source's length, so the search must carry it through beams and
    through sentences leaving the batch."""

    def __init__(self, vocab_size):
        self.vocab_size = vocab_size

    def sentence_info(self, source_ids):
        return tf.reduce_sum(tf.cast(source_ids > 0, tf.int32), axis=1)  # (B,)

    def allowed(self, prefix, index, info):
        ids = tf.range(self.vocab_size)
        even = (ids % 2 == 0) & (ids >= len(RESERVED_TOKENS))  # (V,)
        done = tf.fill(tf.shape(info), index) >= info  # (N,)
        return tf.where(done[:, tf.newaxis], (ids == END_ID)[tf.newaxis], even[tf.newaxis])  # (N, V)


@pytest.fixture(scope="module")
def leaning(tiny_transformer, number_tokenizer, biased_decodable):
    """The untrained tiny Transformer, its logits pushed towards BANNED and odd ids: left alone it writes
    them, so a constraint that forbids them is seen at work."""
    bias = np.where(np.arange(number_tokenizer.vocab_size) % 2 == 1, 2.0, 0.0).astype("float32")
    bias[BANNED] = 6.0
    return biased_decodable(tiny_transformer, bias)


@pytest.fixture(scope="module")
def sources(leaning):
    rng = np.random.default_rng(0)
    ids = rng.integers(len(RESERVED_TOKENS), leaning.vocab_size, size=(5, 6)).astype("int32")
    for row, length in enumerate([6, 1, 3, 5, 2]):
        ids[row, length:] = 0
    return ids


def _outputs(result):
    """Every finished hypothesis of every sentence, as a list of token lists."""
    rows = result.all_sequences.numpy().reshape(-1, result.all_sequences.shape[-1])
    finite = np.isfinite(result.all_scores.numpy().reshape(-1))
    return [[t for t in row.tolist() if t] for row in rows[finite]]


SEARCHES = [dict(beam_size=1), dict(beam_size=3), dict(beam_size=2, alpha=1.0)]


@pytest.mark.parametrize("kwargs", SEARCHES)
def test_a_banned_token_is_never_written(leaning, sources, kwargs):
    free = decoding.search(leaning, sources, return_all=True, **kwargs)
    assert any(BANNED in tokens for tokens in _outputs(free))  # the model wants it: the test is not vacuous
    tied = decoding.search(leaning, sources, return_all=True, constraint=Never(leaning.vocab_size, BANNED),
                           **kwargs)
    outputs = _outputs(tied)
    assert len(outputs) >= len(sources) and not any(BANNED in tokens for tokens in outputs)
    assert np.isfinite(tied.scores.numpy()).all()


@pytest.mark.parametrize("kwargs", SEARCHES)
def test_a_constraint_that_reads_the_source(leaning, sources, kwargs):
    free = decoding.search(leaning, sources, **kwargs)
    assert any(t % 2 for row in free.sequences.numpy() for t in row if t)  # odd ids are what it likes
    result = decoding.search(leaning, sources, constraint=EvenIdsAsLongAsTheSource(leaning.vocab_size), **kwargs)
    source_lengths = (sources > 0).sum(axis=1)
    np.testing.assert_array_equal(result.lengths.numpy(), source_lengths)  # END exactly when allowed
    for row, length in zip(result.sequences.numpy(), source_lengths):
        assert all(t % 2 == 0 and t >= len(RESERVED_TOKENS) for t in row[:length]) and not row[length:].any()
    assert np.isfinite(result.scores.numpy()).all()


def test_dynamic_shapes_equal_static_under_a_constraint(leaning, sources):
    """Sentences leave the batch at different steps (their lengths differ): the constraint's per-sentence
    info leaves with them, and the answers equal those of fixed shapes."""
    constraint = EvenIdsAsLongAsTheSource(leaning.vocab_size)
    run = lambda static: tf.function(lambda ids: decoding.beam_search(  # noqa: E731  (two uses below)
        leaning, ids, beam_size=3, return_all=True, static_shapes=static, constraint=constraint))(sources)
    dynamic, static = run(False), run(True)
    for key in ("sequences", "lengths", "all_sequences"):
        np.testing.assert_array_equal(getattr(dynamic, key).numpy(), getattr(static, key).numpy(), err_msg=key)
    np.testing.assert_allclose(dynamic.scores.numpy(), static.scores.numpy(), atol=1e-5)


def test_the_base_class_knows_nothing_about_sentences_and_allows_nothing_by_itself():
    source = tf.constant([[5, 6, 0], [7, 0, 0]])
    assert decoding.Constraint().sentence_info(source).numpy().tolist() == [0, 0]
    with pytest.raises(NotImplementedError, match="Constraint must implement allowed"):
        decoding.Constraint().allowed(source, 0, tf.zeros([2], tf.int32))


def test_translator_takes_a_constraint_of_its_vocabulary_only(tiny_transformer, number_tokenizer):
    vocab = number_tokenizer.vocab_size
    translator = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=2,
                                     constraint=Never(vocab, BANNED))
    assert len(translator(["one hundred", "seven"])) == 2
    with pytest.raises(ValueError, match=f"covers {vocab + 1} ids, the model's vocabulary has {vocab}"):
        decoding.Translator(tiny_transformer, number_tokenizer, constraint=Never(vocab + 1, BANNED))
