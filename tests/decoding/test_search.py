import gc
import importlib
import math
import os
import pathlib
import subprocess
import sys
import weakref

import keras
import numpy as np
import pytest
import tensorflow as tf
from model_variants import BF16_LOGIT_RTOL, VARIANTS, build_variant, is_bf16

import tfm
from tfm import decoding
from tfm.config import TransformerConfig
from tfm.special_tokens import END_ID, PAD_ID, START_ID, UNK_ID

VOCAB = 30
EXTRA = 6  # short outputs keep the untrained models' searches fast


@pytest.fixture(scope="module")
def transformer():
    keras.utils.set_random_seed(0)
    config = TransformerConfig.tiny(vocab_size=VOCAB, dropout=0.0, num_layers=1, max_length=16,
                                    extra_positions=EXTRA)
    return tfm.Transformer.from_preset(config)


@pytest.fixture(scope="module")
def sources():
    ids = np.random.default_rng(1).integers(4, VOCAB, size=(3, 7)).astype("int32")
    ids[1, 3:] = 0  # sentences of different lengths
    ids[2, 5:] = 0
    return ids


def _numpy(result):
    """A `SearchResult` of tensors -> the same of NumPy arrays."""
    assert isinstance(result, decoding.SearchResult), type(result)
    return decoding.SearchResult(*(np.asarray(value) for value in result))


def _teacher_forced_logits(model, sources, sequences):
    """One full pass over START + `sequences`: float64 `(B, T + 1, V)`, row t = the step that produced output t."""
    target_in = np.concatenate([np.full((len(sequences), 1), START_ID), sequences], 1).astype("int32")
    return np.asarray(model((sources, target_in)), np.float64)


def _cached_logits(model, sources, sequences, steps):
    """The cached decoder replayed along `sequences`: `Decodable.start` / `step` (growing caches, as the
    search runs them), fed START + `sequences`; float64 `(B, steps, V)`."""
    decodable = decoding.as_decodable(model)
    fed = tf.constant(np.concatenate([np.full((len(sequences), 1), START_ID), sequences], 1), tf.int32)
    state = decodable.start(tf.constant(sources, tf.int32), None)
    assert isinstance(state, tfm.models.DecodingState)
    rows = []
    for index in range(steps):
        logits, state = decodable.step(fed, index, state)
        rows.append(np.asarray(logits, np.float64))
    return np.stack(rows, 1)


def _path_scores(logits, sequences, lengths, limits, alpha):
    """`log P(Y | X) / lp(Y)` of each output by hand, as the search scores it: a softmax without PAD and
    START (never generated), the output's tokens then END, whose log-probability is 0 where the limit
    forced it.

    Args:
        logits: `(B, T + 1, V)`, row t the step that produced output t.
        sequences, lengths: the outputs `(B, T)` and their token counts `(B,)`.
        limits: `(B,)`, the most tokens each sentence may write before END is forced.
    """
    logits = np.array(logits, np.float64)
    logits[..., [PAD_ID, START_ID]] = -np.inf
    top = logits.max(-1, keepdims=True)
    log_probs = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
    scores = []
    for i, n in enumerate(lengths):
        total = sum(log_probs[i, t, token] for t, token in enumerate(sequences[i, :n]))
        total += log_probs[i, n, END_ID] if n < limits[i] else 0.0
        scores.append(total / ((5 + n + 1) / 6) ** alpha)  # |Y| = n tokens + END
    return np.array(scores)


def _limits(sources, extra=EXTRA):
    return (np.asarray(sources) != PAD_ID).sum(1) + extra


# ---------------------------------------------------------------------------
# A hand-made bigram "model": next-token probabilities depend on the last token only,
# so every hypothesis score can be worked out by hand.
# ---------------------------------------------------------------------------
A, B, C, D = 4, 5, 6, 7


class Bigram(decoding.Decodable):
    """A `Decodable` (`step`, `vocab_size`, limits; the default `start`) over a fixed bigram table."""

    vocab_size = 8
    max_source_length = None
    max_steps = None
    default_max_extra_length = 5

    def __init__(self, table):
        probs = np.zeros((self.vocab_size, self.vocab_size))
        for last, row in table.items():
            for token, p in row.items():
                probs[last, token] = p
        with np.errstate(divide="ignore"):
            self.logits = tf.constant(np.where(probs > 0, np.log(np.maximum(probs, 1e-30)), -1e9), tf.float32)

    def step(self, sequences, index, state, use_cache=True):
        last = tf.gather(sequences, index, axis=1)  # (N,)
        return tf.gather(self.logits, last), state


# From START: END 0.5, A 0.45, UNK 0.05; then A B C D END, each step with p = 0.99.
CHAIN = Bigram({
    START_ID: {END_ID: 0.5, A: 0.45, UNK_ID: 0.05},
    A: {B: 0.99, UNK_ID: 0.01}, B: {C: 0.99, UNK_ID: 0.01}, C: {D: 0.99, UNK_ID: 0.01},
    D: {END_ID: 0.99, UNK_ID: 0.01}, UNK_ID: {END_ID: 1.0},
})
NEVER_ENDS = Bigram({START_ID: {A: 1.0}, A: {A: 0.9, B: 0.1}, B: {A: 1.0}})


def test_length_penalty_hand_numbers():
    # ((5 + |Y|) / 6)^alpha
    np.testing.assert_allclose(decoding.length_penalty(1, 0.6), 1.0, rtol=1e-6)
    np.testing.assert_allclose(decoding.length_penalty(7, 0.6), 1.515717, rtol=1e-6)  # 2^0.6
    np.testing.assert_allclose(decoding.length_penalty(3, 1.0), 8 / 6, rtol=1e-6)
    np.testing.assert_allclose(decoding.length_penalty([1, 10, 25], 0.0), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(decoding.length_penalty(10, 0.6), 2.5**0.6, rtol=1e-6)  # 1.7329


def test_length_penalty_changes_the_winner():
    """Hand-worked: "END" scores log 0.5 = -0.693; "A B C D END" scores
    (log 0.45 + 4 log 0.99) / ((5 + 5) / 6)^0.6 = -0.8387 / 1.3586 = -0.6173."""
    source = np.full((1, 3), 9, np.int32)
    short = math.log(0.5)
    long_log_prob = math.log(0.45) + 4 * math.log(0.99)
    long = long_log_prob / ((5 + 5) / 6) ** 0.6
    assert long == pytest.approx(-0.6173, abs=1e-4) and short == pytest.approx(-0.6931, abs=1e-4)

    greedy = _numpy(decoding.greedy_search(CHAIN, source))  # END is the single most likely token
    assert greedy.lengths[0] == 0 and greedy.steps == 1
    np.testing.assert_allclose(greedy.scores, [short], rtol=1e-5)

    beam = _numpy(decoding.beam_search(CHAIN, source, beam_size=2, alpha=0.6, return_all=True))
    np.testing.assert_array_equal(beam.sequences[0, :5], [A, B, C, D, PAD_ID])
    np.testing.assert_allclose(beam.scores, [long], rtol=1e-5)
    np.testing.assert_allclose(beam.all_scores[0], [long, short], rtol=1e-5)

    no_penalty = _numpy(decoding.beam_search(CHAIN, source, beam_size=2, alpha=0.0))
    assert no_penalty.lengths[0] == 0
    np.testing.assert_allclose(no_penalty.scores, [short], rtol=1e-5)


def test_stops_at_end_token_and_pads_after_it():
    source = np.full((1, 3), 9, np.int32)
    beam = _numpy(decoding.beam_search(CHAIN, source, beam_size=2, alpha=0.6))
    assert beam.lengths[0] == 4
    assert np.all(beam.sequences[0, 4:] == PAD_ID)
    assert END_ID not in beam.sequences
    # "A B C D END" finishes at step 5; the early stop ends the search before the limit (3 + 5 + 1).
    assert beam.steps < 9


def test_output_limit_is_source_length_plus_extra():
    source = np.array([[9, 9, 9, 0, 0], [9, 9, 9, 9, 9]], np.int32)  # lengths 3 and 5
    for result in (decoding.greedy_search(NEVER_ENDS, source, max_extra_length=4),
                   decoding.beam_search(NEVER_ENDS, source, beam_size=2, max_extra_length=4)):
        result = _numpy(result)
        np.testing.assert_array_equal(result.lengths, [3 + 4, 5 + 4])
        assert result.sequences.shape[1] == 5 + 4 + 1  # static T_max = S + extra + 1
        assert START_ID not in result.sequences


class NeverEndingTransformer(decoding.ModelDecodable):
    """The module's Transformer with END never chosen: every output runs to the limit the search sets."""

    def step(self, sequences, index, state, use_cache=True):
        logits, state = super().step(sequences, index, state, use_cache)
        return logits - 1e9 * tf.one_hot(END_ID, self.vocab_size), state  # (N, V)


def test_transformer_limit_clamped_to_positions(transformer):
    """A limit asked beyond the model's room is cut to its position table (`max_length + extra_positions + 1`
    rows: the one clamp, in `search_steps`); by a model that never ends, so the output reaches it."""
    never_ends = NeverEndingTransformer(transformer)
    config = transformer.config
    long = np.full((1, 40), 5, np.int32)  # longer than max_length=16: truncated to 16
    for result in (decoding.greedy_search(never_ends, long, max_extra_length=30),
                   decoding.beam_search(never_ends, long, beam_size=2, max_extra_length=30)):
        result = _numpy(result)
        assert result.sequences.shape[1] == config.max_length + config.extra_positions + 1  # 23, not 16 + 30 + 1
        assert result.lengths[0] == config.max_length + config.extra_positions  # 22 tokens, then END forced


def _graph(fn, **kwargs):
    return tf.function(lambda ids: fn(**kwargs, source_ids=ids))


@pytest.fixture(scope="module", params=list(VARIANTS))
def variant(request):
    """`(name, model)`: each variant of tests/model_variants.py, built once for this module."""
    return request.param, build_variant(request.param, VOCAB, max_length=16, max_extra_length=EXTRA)


def _path(result, i):
    """Sentence `i`'s output tokens then END: what the search chose at each step."""
    n = int(result.lengths[i])
    return list(result.sequences[i, :n]) + [END_ID]


def test_cached_equals_uncached(variant, sources):
    """Greedy and beam search, KV cache vs the whole prefix recomputed at every step.

    Along the outputs the cached search chose, the cached decoder's step logits (replayed with the
    search's own `Decodable.start` / `step`) equal a teacher-forced pass over them (the uncached
    computation of the same prefixes): to 1e-4 in float32, within `BF16_LOGIT_RTOL * max|logit|`
    under mixed_bfloat16, where the two routes round differently. float32: both searches choose
    the same outputs, and their scores are the teacher-forced pass's `log P / lp`. bf16: tokens can
    be equal only where no two candidates are closer than that rounding, so greedy's agree with the
    uncached search's up to the first step where two candidates tie within twice it. For beams no
    such cheap tie check exists (a near-tie among the 2k candidates of any step changes which
    hypotheses stay alive), so under bf16 beams are held to the logits along their path only.
    """
    name, model = variant
    bf16 = is_bf16(name)
    memory = tf.nest.flatten(model.encode(sources).memory)[0]
    assert memory.dtype == ("bfloat16" if bf16 else "float32")  # the variant is what it says
    for search, kwargs in ((decoding.greedy_search, {}), (decoding.beam_search, dict(beam_size=3, return_all=True))):
        cached = _numpy(_graph(search, model=model, **kwargs)(sources))
        uncached = _numpy(_graph(search, model=model, use_cache=False, **kwargs)(sources))
        full = _teacher_forced_logits(model, sources, cached.sequences)  # (B, T_max + 1, V)
        steps = _cached_logits(model, sources, cached.sequences, int(cached.lengths.max()) + 1)
        atol = BF16_LOGIT_RTOL * np.abs(full).max() if bf16 else 1e-4
        for i, length in enumerate(cached.lengths):
            np.testing.assert_allclose(steps[i, : length + 1], full[i, : length + 1], atol=atol,
                                       err_msg=f"{name} {search.__name__} sentence {i}")
        if not bf16:
            np.testing.assert_array_equal(cached.sequences, uncached.sequences)
            np.testing.assert_array_equal(cached.all_sequences, uncached.all_sequences)
            np.testing.assert_allclose(cached.scores, uncached.scores, atol=1e-4)
            expected = _path_scores(full, cached.sequences, cached.lengths, _limits(sources), alpha=0.6)
            np.testing.assert_allclose(cached.scores, expected, atol=1e-4)
        elif search is decoding.greedy_search:
            for i in range(len(sources)):
                a, b = _path(cached, i), _path(uncached, i)
                t = next((t for t, (x, y) in enumerate(zip(a, b)) if x != y), None)
                if t is None:
                    assert a == b
                    continue
                gap = abs(steps[i, t, a[t]] - steps[i, t, b[t]])  # the prefixes agree up to step t
                assert gap <= 2 * atol, f"{name}: sentence {i} differs at step {t} without a near-tie ({gap})"


@pytest.mark.parametrize("key_dim, value_dim", [(8, 24), (24, 8)])  # Table 3 row (B): d_k != d_v
def test_cached_equals_uncached_when_key_and_value_widths_differ(sources, key_dim, value_dim):
    keras.utils.set_random_seed(0)
    config = TransformerConfig.tiny(vocab_size=VOCAB, dropout=0.0, num_layers=1, max_length=16,
                                    extra_positions=EXTRA, key_dim=key_dim, value_dim=value_dim)
    model = tfm.Transformer.from_preset(config)
    for search, kwargs in ((decoding.greedy_search, {}), (decoding.beam_search, dict(beam_size=3))):
        cached = _numpy(_graph(search, model=model, **kwargs)(sources))
        uncached = _numpy(_graph(search, model=model, use_cache=False, **kwargs)(sources))
        np.testing.assert_array_equal(cached.sequences, uncached.sequences)
        np.testing.assert_allclose(cached.scores, uncached.scores, atol=1e-4)


def test_beam_size_one_equals_greedy(transformer, sources):
    # With alpha = 0 a 1-beam search ranks like greedy; alpha > 0 may let it keep searching
    # past an END that a longer hypothesis beats after the penalty (which greedy cannot).
    greedy = _numpy(_graph(decoding.greedy_search, model=transformer, alpha=0.0)(sources))
    beam = _numpy(_graph(decoding.beam_search, model=transformer, beam_size=1, alpha=0.0)(sources))
    np.testing.assert_array_equal(beam.sequences, greedy.sequences)
    np.testing.assert_allclose(beam.scores, greedy.scores, atol=1e-5)
    np.testing.assert_allclose(beam.all_scores, greedy.all_scores, atol=1e-5)
    # search() picks greedy for one beam, with the caller's alpha, and keeps return_all's fields (k = 1).
    dispatched = _numpy(_graph(decoding.search, model=transformer, beam_size=1, alpha=0.6, return_all=True)(sources))
    np.testing.assert_array_equal(dispatched.sequences, greedy.sequences)
    assert dispatched.all_sequences.shape == (3, 1, greedy.sequences.shape[1])
    np.testing.assert_array_equal(dispatched.all_sequences[:, 0], dispatched.sequences)
    np.testing.assert_array_equal(dispatched.all_scores[:, 0], dispatched.scores)
    # The same tokens, scored log P / lp: alpha 0.6 differs from alpha 0 wherever |Y| > 1.
    penalty = ((5 + greedy.lengths + 1) / 6) ** 0.6
    np.testing.assert_allclose(dispatched.scores, greedy.scores / penalty, rtol=1e-5)
    assert (greedy.lengths > 0).any() and not np.allclose(dispatched.scores, greedy.scores)


@pytest.mark.parametrize("beam_size", [1, 3])
@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_scores_are_teacher_forced_log_prob_over_length_penalty(transformer, sources, beam_size, alpha):
    """One meaning for every beam size: the returned score of each output (and of each of the k finished
    hypotheses) is sum log-softmax of its tokens, END included, from a teacher-forced pass over it,
    divided by ((5 + |Y|) / 6)^alpha."""
    result = _numpy(decoding.search(transformer, sources, beam_size=beam_size, alpha=alpha, return_all=True))
    limits = _limits(sources)
    expected = _path_scores(_teacher_forced_logits(transformer, sources, result.sequences), result.sequences,
                            result.lengths, limits, alpha)
    np.testing.assert_allclose(result.scores, expected, atol=1e-4)
    assert result.all_sequences.shape[:2] == result.all_scores.shape == (len(sources), beam_size)
    np.testing.assert_array_equal(result.all_sequences[:, 0], result.sequences)
    flat = result.all_sequences.reshape(len(sources) * beam_size, -1)  # (B * k, T)
    found = np.isfinite(result.all_scores.reshape(-1))
    assert found.sum() >= len(sources) * beam_size - 1  # nearly every slot filled: the check below is not vacuous
    sources_k, flat = np.repeat(sources, beam_size, axis=0)[found], flat[found]
    expected_all = _path_scores(_teacher_forced_logits(transformer, sources_k, flat), flat, (flat != PAD_ID).sum(1),
                                np.repeat(limits, beam_size)[found], alpha)
    np.testing.assert_allclose(result.all_scores.reshape(-1)[found], expected_all, atol=1e-4)


def test_batch_equals_one_at_a_time(transformer, sources):
    search = tf.function(lambda ids: decoding.beam_search(transformer, ids, beam_size=3),
                         input_signature=[tf.TensorSpec([None, None], tf.int32)])
    batch = _numpy(search(sources))
    for i in range(len(sources)):
        n = int(np.sum(sources[i] != 0))
        one = _numpy(search(sources[i : i + 1, :n]))
        length = batch.lengths[i]
        assert one.lengths[0] == length
        np.testing.assert_array_equal(one.sequences[0, :length], batch.sequences[i, :length])
        np.testing.assert_allclose(one.scores[0], batch.scores[i], atol=1e-4)


def test_xla_compiled_equals_eager(transformer, sources):
    eager = _numpy(decoding.beam_search(transformer, sources, beam_size=2))
    compiled = tf.function(lambda ids: decoding.beam_search(transformer, ids, beam_size=2), jit_compile=True)
    xla = _numpy(compiled(sources))
    np.testing.assert_array_equal(xla.sequences, eager.sequences)
    np.testing.assert_allclose(xla.scores, eager.scores, atol=1e-4)


@pytest.mark.parametrize("preset", [dict(attention="bahdanau"),
                                    dict(attention="luong", cell="lstm", num_layers=2, input_feeding=True)])
def test_seq2seq_cached_equals_uncached(sources, preset):
    from tfm.config import Seq2SeqConfig

    keras.utils.set_random_seed(0)
    model = tfm.Seq2Seq.from_preset(Seq2SeqConfig.tiny(vocab_size=VOCAB, **preset))
    # Beam search: the recurrent state is reordered with the beams at every step.
    kwargs = dict(beam_size=2, max_extra_length=3, return_all=True)
    cached = _numpy(_graph(decoding.beam_search, model=model, **kwargs)(sources))
    uncached = _numpy(_graph(decoding.beam_search, model=model, use_cache=False, **kwargs)(sources))
    np.testing.assert_array_equal(cached.all_sequences, uncached.all_sequences)
    np.testing.assert_allclose(cached.all_scores, uncached.all_scores, atol=1e-4)
    # Along the chosen outputs the recurrent steps compute what one teacher-forced pass does.
    full = _teacher_forced_logits(model, sources, cached.sequences)
    np.testing.assert_allclose(_cached_logits(model, sources, cached.sequences, int(cached.lengths.max()) + 1),
                               full[:, : int(cached.lengths.max()) + 1], atol=1e-4)
    expected = _path_scores(full, cached.sequences, cached.lengths, _limits(sources, extra=3), alpha=0.6)
    np.testing.assert_allclose(cached.scores, expected, atol=1e-4)
    maps = decoding.attention_maps(model, sources, cached.sequences)
    assert maps["cross_attention"][0].shape == (3, cached.sequences.shape[1] + 1, sources.shape[1])


def test_attention_maps_of_the_chosen_hypothesis(transformer, sources):
    result = _numpy(decoding.beam_search(transformer, sources, beam_size=2))
    maps = decoding.attention_maps(transformer, sources, result.sequences)
    t, s = result.sequences.shape[1] + 1, sources.shape[1]
    heads, layers = transformer.config.num_heads, transformer.config.num_layers
    assert len(maps["cross_attention"]) == layers
    assert maps["cross_attention"][0].shape == (3, heads, t, s)
    assert maps["decoder_self_attention"][0].shape == (3, heads, t, t)
    assert maps["encoder_self_attention"][0].shape == (3, heads, s, s)
    np.testing.assert_allclose(maps["cross_attention"][-1].sum(-1), 1.0, atol=1e-5)
    assert np.all(maps["cross_attention"][0][1, :, :, 3:] == 0)  # padded source keys get no weight


def test_rejects_bad_arguments(transformer, sources):
    with pytest.raises(ValueError, match="beam_size"):
        decoding.beam_search(transformer, sources, beam_size=0)
    with pytest.raises(ValueError, match="max_extra_length"):
        decoding.greedy_search(transformer, sources, max_extra_length=-1)
    with pytest.raises(TypeError, match="cannot decode"):
        decoding.greedy_search(object(), sources)


# ---------------------------------------------------------------------------
# Text in, text out
# ---------------------------------------------------------------------------
# The number-words tokenizer and tiny Transformer are conftest.py's `number_tokenizer` and `tiny_transformer`.


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis")
def test_translator_matches_the_id_search(tiny_transformer, number_tokenizer):
    sentences = ["three hundred twenty one", "", "seven", "one thousand two hundred five", " \t "]
    translator = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=2)
    search = tf.function(lambda ids: decoding.beam_search(tiny_transformer, ids, beam_size=2),
                         input_signature=[tf.TensorSpec([None, None], tf.int32)])
    outputs, scores = translator.translate_with_scores(sentences)
    assert translator.translate(sentences) == translator(sentences) == outputs
    assert len(outputs) == 5 and all(isinstance(o, str) for o in outputs)
    assert outputs[1] == outputs[4] == "" and scores[1] == scores[4] == 0.0  # nothing in, nothing out
    for sentence, output, score in zip(sentences[:4], outputs, scores):
        ids = number_tokenizer.tokenize([sentence]).to_tensor()
        if ids.shape[1] == 0:
            continue
        result = search(ids)
        expected = number_tokenizer.detokenize(result.sequences).numpy()[0].decode().strip()
        assert output == expected
        assert score == pytest.approx(float(result.scores[0]), abs=1e-4)
    assert decoding.translate(tiny_transformer, number_tokenizer, sentences, beam_size=2) == outputs
    with pytest.raises(TypeError):
        translator("a sentence, not a list")
    with pytest.raises(ValueError, match="not valid UTF-8"):
        translator([b"\xff\xfe"])


def test_one_beam_translator_scores_are_length_normalised(tiny_transformer, number_tokenizer):
    """`Translator(beam_size=1)` (what `tfm translate --beam-size 1` runs) scores log P / lp, as beams do:
    the same translation with alpha 0 and 0.6, its score divided by ((5 + |Y|) / 6)^0.6."""
    sentences = ["three hundred twenty one", "seven"]
    plain = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=1, alpha=0.0)
    penalised = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=1, alpha=0.6)
    texts, scores = plain.translate_with_scores(sentences)
    same, normalised = penalised.translate_with_scores(sentences)
    assert same == texts
    lengths = [int(plain.search_ids(number_tokenizer.tokenize([s]).to_tensor().numpy()).lengths[0]) for s in sentences]
    assert max(lengths) > 0  # |Y| > 1 somewhere: the penalty is not 1
    np.testing.assert_allclose(normalised, np.array(scores) / ((5 + np.array(lengths) + 1) / 6) ** 0.6, rtol=1e-5)


def test_translate_helper_lets_the_model_go(number_tokenizer):
    """`translate()` reuses one Translator per model, and the model can still be garbage-collected."""
    keras.utils.set_random_seed(0)
    config = TransformerConfig.tiny(vocab_size=number_tokenizer.vocab_size, dropout=0.0, num_layers=1, d_model=16,
                                    num_heads=2, d_ff=32, max_length=8, extra_positions=2)
    model = tfm.Transformer.from_preset(config)
    first = decoding.translate(model, number_tokenizer, ["seven"], beam_size=1)
    assert decoding.translate(model, number_tokenizer, ["seven"], beam_size=1) == first
    assert len(model._tfm_translators) == 1  # reused, not rebuilt
    alive = weakref.ref(model)
    del model
    gc.collect()
    assert alive() is None, gc.get_referrers(alive())


def test_translator_truncates_long_input_and_gives_attention(tiny_transformer, number_tokenizer, caplog):
    translator = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=1)
    long = " ".join(["seven hundred"] * 500)
    with caplog.at_level("WARNING", logger="tfm.decoding"):
        [output] = translator([long])
    assert "truncated" in caplog.text and "12 subwords" in caplog.text
    # The translation of the first max_length subwords, nothing of the rest.
    first = number_tokenizer.tokenize([long])[:, :12].to_tensor()
    result = _graph(decoding.greedy_search, model=tiny_transformer)(first)
    assert output == number_tokenizer.detokenize(result.sequences).numpy()[0].decode().strip()
    maps = translator.attention("three hundred twenty one")
    assert maps["cross_attention"][0].shape == (4, len(maps["target_tokens"]), len(maps["source_tokens"]))
    assert maps["target_tokens"][-1] == "[END]"


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis")  # an empty source: one key
def test_attention_translation_is_the_translators(tiny_transformer, number_tokenizer):
    """`Translator.attention(s)["translation"]` is `Translator([s])[0]`: the same text rules, so a
    blank sentence gives "" there too, not what the model invents for an empty source."""
    translator = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=1)
    sentences = ["three hundred twenty one", "", " \t "]
    assert [translator.attention(s)["translation"] for s in sentences] == translator(sentences)


@pytest.mark.parametrize("search, kwargs", [(decoding.greedy_search, {}),
                                            (decoding.beam_search, dict(beam_size=3, return_all=True)),
                                            (decoding.beam_search, dict(beam_size=2, alpha=1.0)),
                                            (decoding.beam_search, dict(beam_size=3))])
def test_dynamic_shapes_equal_static(transformer, search, kwargs):
    """Finished sentences leaving the batch and caches that grow give what the static search gives, every
    field: without `return_all` a decided sentence's other slots keep what had finished when it was decided
    in both (the static search freezes it; beam 3 here differs without that)."""
    rng = np.random.default_rng(3)
    ids = rng.integers(4, VOCAB, size=(6, 9)).astype("int32")
    for i, n in enumerate([9, 1, 4, 7, 2, 5]):  # outputs end at different steps
        ids[i, n:] = 0
    graph = lambda static: _numpy(  # noqa: E731  (one line, two uses below)
        _graph(search, model=transformer, static_shapes=static, **kwargs)(ids))
    dynamic, static = graph(False), graph(True)
    for key, value in static._asdict().items():  # every field, the k hypotheses included
        if key != "steps":
            np.testing.assert_allclose(getattr(dynamic, key), value, atol=1e-5, err_msg=key)
    assert dynamic.steps == static.steps


class _Unprepared(decoding.ModelDecodable):
    """The model's decoding without its `prepared` weights: each step projects with the table as trained."""

    def start(self, source_ids, max_steps=None, use_cache=True):
        return super().start(source_ids, max_steps, use_cache)._replace(prepared=())


def _onednn():
    """True where TensorFlow runs oneDNN's CPU kernels: its default on CPUs with AVX512-VNNI, BF16 or AMX, and where
    `TF_ENABLE_ONEDNN_OPTS=1`; TensorFlow's own (Eigen) kernels elsewhere."""
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


@pytest.mark.parametrize("static_shapes", [False, True], ids=["dynamic", "static"])
def test_prepared_table_changes_no_output(static_shapes):
    """The output projection read from `DecodingState.prepared` (the table transposed once per search): every
    step's logits and every output the same to the last bit as with the table read transposed at each step, in
    the compiled search, on TensorFlow's own kernels. Both searches ban PAD and START with the same (V,) bias (x + 0
    and x - inf, exact). oneDNN multiplies the two layouts in different orders (docs/results.md, "the output
    projection's layout"): there the logits agree to float32 rounding and the search's tokens are the same, and
    the bit-for-bit check runs in a process with oneDNN off (the next test)."""
    if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "0":  # the next test's process: the bit-for-bit branch below
        assert not _onednn(), "TF_ENABLE_ONEDNN_OPTS=0 left oneDNN on: the bit-for-bit check would not run"
    keras.utils.set_random_seed(5)
    model = tfm.Transformer.from_preset(TransformerConfig.tiny(vocab_size=300, dropout=0.0, num_layers=1,
                                                               max_length=16, extra_positions=EXTRA))
    ids = np.random.default_rng(4).integers(4, 300, size=(8, 9)).astype("int32")
    ids[3, 4:] = 0
    state = model.encode(ids)
    assert tuple(state.prepared["logit_table"].shape) == (64, 300)
    np.testing.assert_array_equal(state.prepared["logit_table"], np.asarray(model.source_embedding.embeddings).T)
    step = tf.function(lambda tokens, state: model.decode_step(tokens, 0, state)[0])
    tokens = tf.fill([8], START_ID)
    search = lambda m: _numpy(_graph(decoding.beam_search, model=m, beam_size=4, return_all=True,  # noqa: E731
                                     static_shapes=static_shapes)(ids))
    prepared, unprepared = search(model), search(_Unprepared(model))
    if _onednn():
        np.testing.assert_allclose(step(tokens, state), step(tokens, state._replace(prepared=())), rtol=0, atol=4e-6)
        for key, value in unprepared._asdict().items():
            if np.asarray(value).dtype.kind in "iub":
                np.testing.assert_array_equal(getattr(prepared, key), value, err_msg=key)
            else:
                np.testing.assert_allclose(getattr(prepared, key), value, rtol=0, atol=4e-5, err_msg=key)
        return
    np.testing.assert_array_equal(step(tokens, state), step(tokens, state._replace(prepared=())))
    for key, value in unprepared._asdict().items():
        np.testing.assert_array_equal(getattr(prepared, key), value, err_msg=key)


def test_prepared_table_changes_no_output_on_tensorflows_own_kernels():
    """Where this process runs oneDNN, the test above runs again in a process with `TF_ENABLE_ONEDNN_OPTS=0`, so
    the bit-for-bit claim is checked on every CPU."""
    if not _onednn():
        pytest.skip("this process runs TensorFlow's own kernels: the test above checked every bit")
    root = pathlib.Path(__file__).resolve().parents[2]
    env = {**os.environ, "TF_ENABLE_ONEDNN_OPTS": "0", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "tests/decoding/test_search.py", "-k", "test_prepared_table_changes_no_output and not own"],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("vocab, k", [(10000, 8), (1000, 4), (37000, 8), (70, 2), (8000, 8), (7919, 8)])
def test_top_k_in_two_passes_equals_tf_top_k(vocab, k):
    top_k = importlib.import_module("tfm.decoding.search_steps").top_k
    rng = np.random.default_rng(vocab)
    values = rng.normal(size=(5, vocab)).astype("float32")
    values[1, :] = np.round(values[1, :])  # many ties: the lower index must win, as in tf.math.top_k
    values[2, 17] = np.inf
    values[3, : vocab // 2] = -np.inf
    values[4, rng.choice(vocab, size=3 * k, replace=False)] = 50.0  # the best entries in few chunks
    expected_values, expected_ids = tf.math.top_k(values, k=k)
    got_values, got_ids = top_k(tf.constant(values), k)
    np.testing.assert_array_equal(got_values, expected_values)
    np.testing.assert_array_equal(got_ids, expected_ids)


def test_top_k_chunks_divide_the_vocabulary_where_they_can():
    """No padding copy of the (N, V) values where V has a divisor near sqrt(V / k): notebook 08's 8000 subwords
    were padded to 90 chunks of 89 (a copy of the logits at every beam step)."""
    steps = importlib.import_module("tfm.decoding.search_steps")
    # V = 8000, k = 8: the divisors within 2x of sqrt(1000) = 31.6 and their V / C + k * C:
    # 16: 500 + 128, 20: 400 + 160, 25: 320 + 200, 32: 250 + 256 = 506 (the fewest), 40: 200 + 320, 50: 160 + 400
    assert steps.chunk_size(8000, 8) == 32
    assert steps.chunk_size(10000, 8) == 40  # 250 + 320 = 570; 25 and 50 give 600
    assert steps.chunk_size(7919, 8) == 32  # a prime: ceil(31.5), the last chunk padded

    def op_types(vocab):
        graph = tf.function(lambda x: steps.top_k(x, 8)).get_concrete_function(
            tf.TensorSpec([None, vocab], tf.float32)).graph
        return {op.type for op in graph.get_operations()}

    assert not {"Pad", "PadV2"} & op_types(8000)
    assert {"Pad", "PadV2"} & op_types(7919)
    with pytest.raises(ValueError, match="chunk=2000 for top 8 of 8000 entries"):
        steps.top_k(tf.zeros([1, 8000]), 8, chunk=2000)  # 4 chunks: fewer than k
    with pytest.raises(ValueError, match="chunk=0 for top 8"):
        steps.top_k(tf.zeros([1, 8000]), 8, chunk=0)


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis")
def test_translator_batches_in_flight_keep_the_order(tiny_transformer, number_tokenizer):
    sentences = ["seven", "three hundred twenty one", "", "ninety nine", "one thousand two hundred five", "four",
                 "eighty eight"]
    one = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=2, batch_size=2, workers=1)
    three = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=2, batch_size=2, workers=3)
    assert three.translate_with_scores(sentences) == one.translate_with_scores(sentences)
    with pytest.raises(ValueError, match="workers=0"):
        decoding.Translator(tiny_transformer, number_tokenizer, workers=0)


def test_many_translators_raise_no_retracing_warning(tiny_transformer, number_tokenizer):
    """Each `Translator` search (one per beam size and alpha) traces once; TensorFlow's detector counts traces
    per Python function, so without the filter the fifth one in a process is reported as "retracing". The
    filter drops that report for a Translator's search only; a real retrace of another function still warns."""
    import logging

    import tensorflow as tf

    records = []
    handler = logging.Handler()
    handler.emit = records.append
    tf.get_logger().addHandler(handler)
    try:
        for beam_size in (1, 2, 1, 2, 1, 2, 1):
            translator = decoding.Translator(tiny_transformer, number_tokenizer, beam_size=beam_size)
            translator(["two", "three hundred"])
            translator.translate_with_scores(["four"])
            translator.nbest(["five"])

        def retraced(x):
            return x + 1

        function = tf.function(retraced)
        for length in range(1, 8):  # a new shape each call: a real retrace
            function(tf.zeros((length,)))
    finally:
        tf.get_logger().removeHandler(handler)
    messages = [record.getMessage() for record in records if "retracing" in record.getMessage()]
    assert messages and all("retraced" in message for message in messages), messages


class _Bigram(decoding.Decodable):
    """Next-token logits from the last token alone (a random table, END made likely): searches that end early."""

    def __init__(self, seed, vocab=VOCAB, end_boost=2.0):
        table = np.random.default_rng(seed).normal(0.0, 2.0, size=(vocab, vocab)).astype("float32")
        table[:, END_ID] += end_boost
        self.table, self.vocab_size, self.default_max_extra_length = tf.constant(table), vocab, 12

    def step(self, sequences, index, state, use_cache=True):
        return tf.gather(self.table, tf.gather(sequences, index, axis=1)), state  # (N,) -> (N, V)


@pytest.mark.parametrize("static_shapes", [False, True])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.5])
def test_early_finish_gives_the_same_best_in_fewer_steps(static_shapes, alpha):
    """Issue 59: `early_finish` stops a sentence when its best finished hypothesis cannot be beaten (not its
    worst): the same outputs and scores in fewer steps (a random Transformer, and bigram tables that end early)."""
    keras.utils.set_random_seed(0)
    transformer = tfm.Transformer.from_preset(TransformerConfig.tiny(
        vocab_size=VOCAB, dropout=0.0, num_layers=1, d_model=16, d_ff=32, max_length=16, extra_positions=8))
    fewer = []
    for seed, model in enumerate([transformer] + [_Bigram(seed) for seed in range(4)]):
        ids = np.random.default_rng(seed).integers(4, VOCAB, size=(6, 7)).astype("int32")
        ids[1, 3:], ids[4, 1:] = 0, 0
        runs = [_numpy(_graph(decoding.beam_search, model=model, beam_size=3, alpha=alpha,
                              static_shapes=static_shapes, early_finish=early)(ids)) for early in (False, True)]
        np.testing.assert_array_equal(runs[1].sequences, runs[0].sequences)
        np.testing.assert_array_equal(runs[1].lengths, runs[0].lengths)
        np.testing.assert_allclose(runs[1].scores, runs[0].scores, rtol=0, atol=1e-5)
        assert runs[1].steps <= runs[0].steps
        fewer.append(int(runs[1].steps) < int(runs[0].steps))
    assert any(fewer), "early_finish never saved a step: the lever does nothing"
