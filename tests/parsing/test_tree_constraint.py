"""The tree constraint (`tfm.parsing.TreeConstraint`, a `tfm.decoding.Constraint`): its rules by hand, and
searches that can only write well-formed trees with one leaf per word (§6.3)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfm
from tfm import decoding
from tfm.parsing import TreeConstraint, delinearize
from tfm.special_tokens import END_ID, RESERVED_TOKENS, START_ID

# ids: 0-3 reserved, 4 "(S", 5 "(NP", 6 ")", 7 "XX", 8 "▁dog", 9 "s", 10 "▁the", 11 "▁("
VOCAB = RESERVED_TOKENS + ["▁(S", "▁(NP", "▁)", "▁XX", "▁dog", "s", "▁the", "▁("]
OPEN_S, OPEN_NP, CLOSE, XX, DOG, S_PIECE, THE, PAREN = range(4, 12)
PIECE = {i: p.lstrip("▁") for i, p in enumerate(VOCAB)}


def reference_allowed(tokens, words):
    """The rules of `TreeConstraint` in plain Python: the ids allowed after `tokens` for a sentence of `words`."""
    depth = sum((t in (OPEN_S, OPEN_NP)) - (t == CLOSE) for t in tokens)
    leaves = sum(t == XX for t in tokens)
    last_open = bool(tokens) and tokens[-1] in (OPEN_S, OPEN_NP)
    allowed = set()
    if leaves < words and (depth > 0 or not tokens):
        allowed |= {OPEN_S, OPEN_NP}
    if leaves < words and depth > 0:
        allowed.add(XX)
    if depth > 0 and not last_open and (depth > 1 or leaves == words):
        allowed.add(CLOSE)
    if tokens and depth == 0:
        allowed.add(END_ID)
    return allowed


@pytest.fixture(scope="module")
def constraint():
    return TreeConstraint(VOCAB)


def test_pieces_are_classified(constraint):
    assert isinstance(constraint, decoding.Constraint)  # the search's protocol
    # "▁(" alone is a word piece (a literal parenthesis), not an opener.
    assert (constraint.open_ids, constraint.close_ids, constraint.leaf_ids) == ([OPEN_S, OPEN_NP], [CLOSE], [XX])
    assert "2 openers" in repr(constraint)


@pytest.mark.parametrize("tokens, words", [
    ([], 2), ([OPEN_S], 2), ([OPEN_S, XX], 2), ([OPEN_S, XX, XX], 2), ([OPEN_S, XX, XX, CLOSE], 2),
    ([OPEN_S, OPEN_NP], 2), ([OPEN_S, OPEN_NP, XX], 2), ([OPEN_S, OPEN_NP, XX, CLOSE], 2),
    ([OPEN_S, OPEN_NP, XX, XX], 2), ([OPEN_S, OPEN_NP, OPEN_NP, XX, CLOSE], 3), ([], 0),
])
def test_allowed_tokens_match_the_rules_worked_by_hand(constraint, tokens, words):
    width = 8
    prefix = np.zeros((1, width), "int32")
    prefix[0, 0] = START_ID
    prefix[0, 1: 1 + len(tokens)] = tokens
    allowed = constraint.allowed(tf.constant(prefix), tf.constant(len(tokens)), tf.constant([words]))
    got = set(np.flatnonzero(allowed.numpy()[0]).tolist())
    assert got == reference_allowed(tokens, words)


def test_specific_cases_by_hand(constraint):
    def allowed(tokens, words):
        prefix = np.array([[START_ID] + tokens + [0] * (6 - len(tokens))], "int32")
        return set(np.flatnonzero(constraint.allowed(prefix, len(tokens), [words]).numpy()[0]).tolist())

    assert allowed([], 2) == {OPEN_S, OPEN_NP}  # a tree starts with its root
    assert allowed([OPEN_S, XX], 2) == {OPEN_S, OPEN_NP, XX}  # the root may not close with a word left
    assert allowed([OPEN_S, XX, XX], 2) == {CLOSE}  # every word has its leaf: close
    assert allowed([OPEN_S, XX, XX, CLOSE], 2) == {END_ID}  # one root only
    assert allowed([OPEN_S, OPEN_NP], 2) == {OPEN_S, OPEN_NP, XX}  # no empty constituent


def test_words_are_counted_from_the_source_pieces(constraint):
    # "the dogs ( dog" -> ▁the ▁dog s ▁( ▁dog: four words; PAD and reserved ids count nothing.
    source = tf.constant([[THE, DOG, S_PIECE, PAREN, DOG, 0], [DOG, 0, 0, 0, 0, 0]])
    assert constraint.sentence_info(source).numpy().tolist() == [4, 1]


def test_a_vocabulary_without_tree_pieces_is_refused():
    with pytest.raises(ValueError, match=r"no opener .*whole_tokens"):
        TreeConstraint(RESERVED_TOKENS + ["▁(", "NP", "▁)", "▁XX"])


class Preference(decoding.Decodable):
    """A decodable whose next-token logits are the same at every step: `order`, most liked first."""

    vocab_size = len(VOCAB)
    max_source_length = None
    max_steps = None
    default_max_extra_length = 12

    def __init__(self, order):
        logits = np.full(self.vocab_size, -20.0, "float32")
        logits[list(order)] = -np.arange(len(order), dtype="float32")
        self.logits = tf.constant(logits)

    def step(self, sequences, index, state, use_cache=True):  # `Decodable.start`'s state: the source, no cache
        return tf.tile(self.logits[tf.newaxis], [tf.shape(sequences)[0], 1]), state


# A model that likes to close and to end: unconstrained, it writes ")" and ends; constrained, a tree.
CLOSER = Preference([CLOSE, END_ID, XX, OPEN_NP, OPEN_S, DOG])


def _tokens(row):
    return [t for t in np.asarray(row).tolist() if t]


def test_greedy_writes_a_tree_where_unconstrained_search_writes_brackets(constraint):
    source = tf.constant([[THE, DOG, DOG, 0], [DOG, 0, 0, 0]])  # 3 words, 1 word
    free = decoding.greedy_search(CLOSER, source)
    assert [_tokens(r) for r in free.sequences.numpy()] == [[CLOSE] * 15, [CLOSE] * 13]  # until the limit
    tied = decoding.greedy_search(CLOSER, source, constraint=constraint)
    assert [_tokens(r) for r in tied.sequences.numpy()] == [[OPEN_NP, XX, XX, XX, CLOSE], [OPEN_NP, XX, CLOSE]]
    # The scores renormalise over the allowed tokens: one choice -> log 1 = 0; XX over {XX, (NP, (S};
    # then / lp(|Y|) with alpha 0.6 (|Y| = 5 and 3 tokens + END).
    choice = np.log(np.exp(-2.0) / (np.exp(-2.0) + np.exp(-3.0) + np.exp(-4.0)))
    first = np.log(np.exp(-3.0) / (np.exp(-3.0) + np.exp(-4.0)))  # (NP over {(NP, (S}
    np.testing.assert_allclose(tied.scores.numpy(), [(first + 3 * choice) / (11 / 6) ** 0.6,
                                                     (first + choice) / (9 / 6) ** 0.6], rtol=1e-5)


@pytest.fixture(scope="module")
def random_model():
    keras.utils.set_random_seed(0)
    config = tfm.TransformerConfig.tiny(vocab_size=len(VOCAB), dropout=0.0, num_layers=1, max_length=16,
                                        extra_positions=30)
    return tfm.Transformer.from_preset(config)


@pytest.fixture(scope="module")
def leaning(random_model, biased_decodable):
    """The untrained Transformer, its logits leaning towards leaves and closers: left alone, random
    weights mostly open brackets until the length limit, which tests nothing."""
    bias = np.zeros(len(VOCAB), "float32")
    bias[[XX, CLOSE]] = 3.0
    return biased_decodable(random_model, bias)


@pytest.fixture(scope="module")
def word_sources():
    rng = np.random.default_rng(0)
    ids = rng.choice([THE, DOG], size=(6, 5)).astype("int32")
    for i, n in enumerate([5, 1, 3, 4, 2, 5]):
        ids[i, n:] = 0
    return ids


def _check_every_output(constraint, sources, sequences, lengths, limit_extra):
    """Each output obeys the rules at every step; an output that ended before its limit is a whole tree."""
    words = constraint.sentence_info(sources).numpy()
    for n, source_length, row, length in zip(words, (sources > 0).sum(1), sequences, lengths):
        tokens = _tokens(row)[:length]
        for step, token in enumerate(tokens):
            assert token in reference_allowed(tokens[:step], n), (tokens, step)
        if length < source_length + limit_extra:  # ended by END, not at the limit
            tree, repaired = delinearize([PIECE[t] for t in tokens], ["w"] * n)
            assert not repaired and len(tree.leaves()) == n, tokens


@pytest.mark.parametrize("kwargs", [dict(beam_size=1), dict(beam_size=3), dict(beam_size=2, alpha=1.0)])
def test_an_untrained_transformer_writes_only_trees(leaning, word_sources, constraint, kwargs):
    result = decoding.search(leaning, word_sources, constraint=constraint, **kwargs)
    sequences, lengths = result.sequences.numpy(), result.lengths.numpy()
    _check_every_output(constraint, word_sources, sequences, lengths, 30)
    ended = [length < (s > 0).sum() + 30 for s, length in zip(word_sources, lengths)]
    assert sum(ended) >= 3, lengths  # most end well before the limit: the check above is not vacuous


def test_constrained_dynamic_shapes_equal_static(leaning, word_sources, constraint):
    """The constraint reads its state from the prefix: beams reordered and sentences leaving the batch agree."""
    run = lambda static: tf.function(lambda ids: decoding.beam_search(  # noqa: E731  (two uses below)
        leaning, ids, beam_size=3, return_all=True, static_shapes=static, constraint=constraint))(word_sources)
    dynamic, static = run(False), run(True)
    for key in ("sequences", "lengths", "all_sequences"):
        np.testing.assert_array_equal(getattr(dynamic, key).numpy(), getattr(static, key).numpy(), err_msg=key)
    np.testing.assert_allclose(dynamic.scores.numpy(), static.scores.numpy(), atol=1e-5)
    for beam in range(3):
        finished = np.isfinite(dynamic.all_scores.numpy()[:, beam])
        all_sequences = dynamic.all_sequences.numpy()[:, beam]
        _check_every_output(constraint, word_sources[finished], all_sequences[finished],
                            (all_sequences[finished] > 0).sum(1), 30)


def test_translator_refuses_a_constraint_of_another_vocabulary(random_model):
    class Tokenizer:
        vocab_size = 20

    other = TreeConstraint(VOCAB + [f"▁w{i}" for i in range(8)])
    with pytest.raises(ValueError, match="covers 20 ids, the model's vocabulary has 12"):
        decoding.Translator(random_model, Tokenizer(), constraint=other)


@pytest.mark.parametrize("beam_size", [1, 3])
def test_a_sentence_with_no_words_ends_at_once(constraint, beam_size):
    """No token is allowed for a source without a word (no root can get a leaf): the search may then
    end, and does, instead of writing a token the constraint forbids."""
    source = tf.constant([[S_PIECE, 0], [DOG, 0]])  # "s" begins no word: 0 words; "▁dog": 1 word
    result = decoding.search(CLOSER, source, beam_size=beam_size, constraint=constraint)
    assert result.lengths.numpy()[0] == 0 and np.isfinite(result.scores.numpy()).all()  # END, not NaN
    assert int(result.steps) < 10  # the wordless sentence did not run to its limit (14 tokens, then END)
    assert _tokens(result.sequences.numpy()[1]) == [OPEN_NP, XX, CLOSE]


def test_tag_leaves_are_the_pos_tag_pieces():
    """With leaf_tokens = the POS tags, the tag pieces are leaves (and "▁XX" is not); `from_tokenizer` picks
    the leaves of a style by name; a vocabulary without any tag piece is refused, saying so."""
    from tfm.parsing import leaf_tokens

    vocab = RESERVED_TOKENS + ["▁(S", "▁(NP", "▁)", "▁DT", "▁NN", "▁XX", "▁dog", "▁."]
    tagged = TreeConstraint(vocab, leaf_tokens=leaf_tokens("tags"))
    assert tagged.leaf_ids == [7, 8, 11] and tagged.open_ids == [4, 5] and tagged.close_ids == [6]
    assert TreeConstraint(vocab).leaf_ids == [9]

    class Tokenizer:
        def vocabulary(self):
            return vocab

    assert TreeConstraint.from_tokenizer(Tokenizer(), leaves="tags").leaf_ids == [7, 8, 11]
    assert TreeConstraint.from_tokenizer(Tokenizer()).leaf_ids == [9]
    with pytest.raises(ValueError, match="no leaf '▁#' \\(or another POS tag\\)"):
        TreeConstraint(RESERVED_TOKENS + ["▁(S", "▁)", "▁XX"], leaf_tokens=leaf_tokens("tags"))
