"""tfm.exercises: every checker accepts its reference solution (notebooks/solutions/) and rejects typical mistakes,
saying in one sentence what is wrong, in English or in Korean (`lang=`, `$TFM_LANG`) with the same verdict."""

import inspect
import pathlib
import re
import runpy
from collections import Counter

import numpy as np
import pytest

from tfm import exercises

SOLUTIONS_DIR = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
EXERCISES = ["target_shift", "padding_mask", "additive_score", "general_score", "scaled_dot_product_attention",
             "split_heads", "merge_heads", "positional_encoding", "causal_mask", "label_smoothed_loss", "schedule",
             "length_penalty", "beam_step", "clipped_precision", "bucket_batch_sizes", "receptive_field",
             "parameter_count", "rest_response", "linearize_tree"]


def _load_solutions():
    """Every function defined in notebooks/solutions/NN_topic.py, by name (each name defined once)."""
    found = {}
    for path in sorted(SOLUTIONS_DIR.glob("[0-9][0-9]_*.py")):
        namespace = runpy.run_path(str(path))
        for name in EXERCISES:
            if name in namespace:
                assert name not in found, f"{name} is defined in two solution files"
                found[name] = namespace[name]
    return found


SOLUTIONS = _load_solutions()
HANGUL = re.compile("[\uac00-\ud7a3]")


@pytest.fixture(autouse=True)
def _english_unless_asked(monkeypatch):
    """A `TFM_LANG` exported in the shell running the tests must not turn the English sentences Korean."""
    monkeypatch.delenv("TFM_LANG", raising=False)


def _verdict(capsys, checker, fn, **lang):
    """Run a checker (with `lang=` when given); return (verdict, the sentence it printed)."""
    result = getattr(exercises, f"check_{checker}")(fn, **lang)
    out = capsys.readouterr().out.strip()
    assert isinstance(result, bool)
    assert out and "\n" not in out, f"expected one line, got {out!r}"
    assert out.endswith("."), out
    return result, out


def test_every_exercise_has_a_solution_and_a_checker():
    assert sorted(SOLUTIONS) == sorted(EXERCISES)
    checkers = sorted(name for name in exercises.__all__ if name.startswith("check_"))
    assert sorted(f"check_{name}" for name in EXERCISES) == checkers
    # Besides the checkers, the course's helper for a run beside its published copy (tfm.exercises.course_runs).
    assert sorted(set(exercises.__all__) - set(checkers)) == [
        "machine_description", "print_beside_published", "published_summary"]
    for name in EXERCISES:
        doc = getattr(exercises, f"check_{name}").__doc__
        assert "Contract" in doc and "Checked against" in doc, name


@pytest.mark.parametrize("name", EXERCISES)
def test_checker_accepts_its_solution(capsys, name):
    ok, sentence = _verdict(capsys, name, SOLUTIONS[name])
    assert ok, sentence
    assert sentence.startswith("correct:")


@pytest.mark.parametrize("name", EXERCISES)
def test_a_stub_is_not_done_yet_and_does_not_raise(capsys, name):
    def my_stub(*args, **kwargs):
        raise NotImplementedError("write me")

    ok, sentence = _verdict(capsys, name, my_stub)
    assert not ok
    assert sentence.startswith("not done yet:") and "my_stub" in sentence


def test_the_course_has_at_least_eighteen_checked_exercises():
    """Issue 40: every notebook has a checked coding exercise, 18 or more in all (tests/test_course.py checks
    that each checker is called from a notebook's exercise cell)."""
    assert len(EXERCISES) >= 18


@pytest.mark.parametrize("name", EXERCISES)
def test_an_error_in_the_readers_code_is_reported_not_raised(capsys, name):
    def broken(*args, **kwargs):
        return 1 / 0

    ok, sentence = _verdict(capsys, name, broken)
    assert not ok
    assert "broken raised ZeroDivisionError on" in sentence


def test_a_non_function_is_refused(capsys):
    ok, sentence = _verdict(capsys, "causal_mask", np.ones((2, 2)))
    assert not ok and "needs a function" in sentence


# ---------------------------------------------------------------------------
# Typical mistakes, each with what its sentence must name
# ---------------------------------------------------------------------------
def _softmax(x, axis=-1):
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


# additive score
def additive_without_tanh(query, key, w1, w2, v):
    return ((query @ w1)[:, :, None] + (key @ w2)[:, None]) @ v


def additive_transposed(query, key, w1, w2, v):
    return np.swapaxes(SOLUTIONS["additive_score"](query, key, w1, w2, v), 1, 2)  # (B, S, T)


def additive_sum_instead_of_v(query, key, w1, w2, v):
    return np.tanh((query @ w1)[:, :, None] + (key @ w2)[:, None]).sum(-1)


# general score
def general_transposed_w(query, key, w):
    return query @ w.T @ np.swapaxes(key, 1, 2)


def general_without_w(query, key, w):
    return query @ np.swapaxes(key, 1, 2)


def general_scaled(query, key, w):
    return query @ w @ np.swapaxes(key, 1, 2) / np.sqrt(w.shape[0])


# scaled dot-product attention
def _attention(query, key, value, mask, scale, fill=-1e9, inverted=False, dtype="float32"):
    q, k, v = (np.asarray(x, dtype) for x in (query, key, value))
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is not None:
        scores = np.where(np.logical_not(mask) if inverted else mask, scores, fill)
    weights = _softmax(scores)
    return weights @ v, weights


def attention_without_sqrt(query, key, value, mask=None):
    return _attention(query, key, value, mask, 1.0)


def attention_inverted_mask(query, key, value, mask=None):
    return _attention(query, key, value, mask, 1 / np.sqrt(query.shape[-1]), inverted=True)


def attention_sqrt_d_v(query, key, value, mask=None):
    return _attention(query, key, value, mask, 1 / np.sqrt(value.shape[-1]))


def attention_float16_fill(query, key, value, mask=None):
    """Right in float32; in float16 `(1 - mask) * -1e9` is `0 * -inf = nan` where the mask is True."""
    scores = query @ np.swapaxes(key, -1, -2) / np.sqrt(query.shape[-1]).astype(query.dtype)
    if mask is not None:
        scores = scores + (1 - np.asarray(mask, query.dtype)) * np.asarray(-1e9, query.dtype)
    weights = _softmax(scores)
    return weights @ value, weights


def attention_output_only(query, key, value, mask=None):
    return SOLUTIONS["scaled_dot_product_attention"](query, key, value, mask)[0]


# positional encoding
def pe_concatenated(length, depth):
    angles = np.arange(length)[:, None] / 10000.0 ** (np.arange(0, depth, 2) / depth)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)


def pe_i_over_depth(length, depth):
    angles = np.arange(length)[:, None] / 10000.0 ** (np.arange(depth // 2) / depth)
    pe = np.zeros((length, depth))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def pe_cos_first(length, depth):
    angles = np.arange(length)[:, None] / 10000.0 ** (np.arange(0, depth, 2) / depth)
    pe = np.zeros((length, depth))
    pe[:, 0::2], pe[:, 1::2] = np.cos(angles), np.sin(angles)
    return pe


# causal mask
def causal_transposed(length):
    return np.triu(np.ones((length, length), bool))


def causal_strict(length):
    return np.tril(np.ones((length, length), bool), k=-1)


def causal_true_means_blocked(length):
    return np.triu(np.ones((length, length), bool), k=1)


# label-smoothed loss
def _smoothed(y_true, logits, eps, pad_id, over_v=False, count_padding=False, dtype="float32"):
    logits = np.asarray(logits, dtype)
    vocab = logits.shape[-1]
    if dtype == "float32":
        log_probs = np.log(_softmax(logits))
    else:  # a naive softmax in the logits' own precision
        e = np.exp(logits)
        log_probs = np.log(e / e.sum(-1, keepdims=True))
    if over_v:
        target = np.full(logits.shape, eps / vocab) + (1 - eps) * np.eye(vocab)[y_true]
    else:
        target = np.full(logits.shape, eps / (vocab - 1))
        np.put_along_axis(target, y_true[..., None], 1 - eps, axis=-1)
    per_token = -(target * log_probs).sum(-1)
    real = np.ones_like(y_true, bool) if count_padding else y_true != pad_id
    return per_token[real].sum() / real.sum()


def loss_counts_padding(y_true, logits, label_smoothing=0.1, pad_id=0):
    return _smoothed(y_true, logits, label_smoothing, pad_id, count_padding=True)


def loss_smoothing_over_v(y_true, logits, label_smoothing=0.1, pad_id=0):
    return _smoothed(y_true, logits, label_smoothing, pad_id, over_v=True)


def loss_in_logits_dtype(y_true, logits, label_smoothing=0.1, pad_id=0):
    return _smoothed(y_true, logits, label_smoothing, pad_id, dtype=np.asarray(logits).dtype)


def loss_per_token(y_true, logits, label_smoothing=0.1, pad_id=0):
    """The per-token losses, not their mean."""
    logits = np.asarray(logits, "float32")
    target = np.full(logits.shape, label_smoothing / (logits.shape[-1] - 1))
    np.put_along_axis(target, y_true[..., None], 1 - label_smoothing, axis=-1)
    return -(target * np.log(_softmax(logits))).sum(-1)


# schedule
def schedule_zero_based(iteration, d_model, warmup_steps):
    step = np.float64(iteration)  # the paper's step taken as Keras' iteration: one step behind
    return d_model**-0.5 * np.minimum(step**-0.5, step * warmup_steps**-1.5)


def schedule_warmup_power(iteration, d_model, warmup_steps):
    step = iteration + 1
    return d_model**-0.5 * min(step**-0.5, step * warmup_steps**-0.5)


def schedule_max(iteration, d_model, warmup_steps):
    step = iteration + 1
    return d_model**-0.5 * max(step**-0.5, step * warmup_steps**-1.5)


# length penalty
def penalty_without_5(length, alpha):
    return (length / 6.0) ** alpha


def penalty_times_alpha(length, alpha):
    return (5.0 + length) / 6.0 * alpha


# beam step
def beam_per_beam(log_probs, token_log_probs):
    """Each beam's best token, then the beams sorted: never two children of one beam."""
    best_token = token_log_probs.argmax(-1)  # (B, K)
    scores = log_probs + token_log_probs.max(-1)
    order = np.argsort(-scores, axis=-1, kind="stable")
    return np.take_along_axis(scores, order, -1), order, np.take_along_axis(best_token, order, -1)


def beam_divides_by_k(log_probs, token_log_probs):
    batch, k, vocab = token_log_probs.shape
    flat = (log_probs[:, :, None] + token_log_probs).reshape(batch, -1)
    best = np.argsort(-flat, -1, kind="stable")[:, :k]
    return np.take_along_axis(flat, best, -1), best // k, best % vocab


def beam_ignores_history(log_probs, token_log_probs):
    batch, k, vocab = token_log_probs.shape
    flat = token_log_probs.reshape(batch, -1)
    best = np.argsort(-flat, -1, kind="stable")[:, :k]
    return np.take_along_axis(flat, best, -1), best // vocab, best % vocab


# clipped precision
def _grams(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def precision_unclipped(hypothesis, references, n):
    counts, seen = _grams(hypothesis, n), set().union(*(_grams(r, n) for r in references))
    return sum(c for g, c in counts.items() if g in seen), sum(counts.values())


def precision_clipped_by_sum(hypothesis, references, n):
    total = sum((_grams(r, n) for r in references), Counter())
    counts = _grams(hypothesis, n)
    return sum(min(c, total[g]) for g, c in counts.items()), sum(counts.values())


def precision_first_reference_only(hypothesis, references, n):
    return SOLUTIONS["clipped_precision"](hypothesis, references[:1], n)


def precision_reference_denominator(hypothesis, references, n):
    numerator, _ = SOLUTIONS["clipped_precision"](hypothesis, references, n)
    return numerator, sum(_grams(references[0], n).values())


# tree linearization
def _linearize(tree, leaf, close):
    tokens = []

    def visit(node):
        if len(node) == 1 and isinstance(node[0], str):
            tokens.append(leaf(node))
            return
        tokens.append("(" + node.label())
        for child in node:
            visit(child)
        tokens.append(close(node))

    visit(tree)
    return tokens


def tree_writes_words(tree):
    return _linearize(tree, lambda node: node[0], lambda node: ")")


def tree_writes_xx(tree):  # Vinyals et al.'s leaves, not the tag leaves notebook 13 trains on
    return _linearize(tree, lambda node: "XX", lambda node: ")")


def tree_typed_closers(tree):
    return _linearize(tree, lambda node: node.label(), lambda node: ")" + node.label())


# target shift
def shift_swapped(target_ids):
    """The shift in the wrong direction: END on the decoder's input, START on the labels."""
    target_in, target_out = SOLUTIONS["target_shift"](target_ids)
    return target_out, target_in


def shift_end_after_padding(target_ids):
    """END appended after the padded row instead of after the last real token."""
    column = np.ones((len(target_ids), 1), target_ids.dtype)
    return np.hstack([2 * column, target_ids]), np.hstack([target_ids, 3 * column])


def shift_slices_start_y_end(target_ids):
    """START y END built on the padded row, then sliced [:-1] / [1:]: right only for rows without padding."""
    column = np.ones((len(target_ids), 1), target_ids.dtype)
    lengths = (target_ids != 0).sum(axis=1)
    full = np.hstack([2 * column, target_ids, 0 * column])
    full[np.arange(len(target_ids)), lengths + 1] = 3
    return full[:, :-1], full[:, 1:]


# padding mask
def _softmax_where(mask, scores):
    return _softmax(np.where(mask, np.asarray(scores, "float32"), -1e9))


def padding_mask_inverted(source_ids, scores):
    mask = source_ids == 0  # True at the padding
    keys = mask if scores.ndim == 2 else mask[:, None, :]
    return mask, _softmax_where(keys, scores)


def padding_mask_after_softmax(source_ids, scores):
    """Padded weights zeroed after the softmax, without renormalising: rows no longer sum to 1."""
    mask = source_ids != 0
    keys = mask if scores.ndim == 2 else mask[:, None, :]
    return mask, _softmax(np.asarray(scores, "float32")) * keys


def padding_mask_float16_fill(source_ids, scores):
    """Right in float32; in float16 `(1 - mask) * -1e9` is `0 * -inf = nan` where the mask is True."""
    mask = source_ids != 0
    keys = mask if scores.ndim == 2 else mask[:, None, :]
    filled = scores + (1 - keys.astype(scores.dtype)) * np.asarray(-1e9, scores.dtype)
    return mask, _softmax(filled)


# heads
def split_without_transpose(x, num_heads):
    b, t, d = x.shape
    return x.reshape(b, num_heads, t, d // num_heads)


def split_positions_and_heads_swapped(x, num_heads):
    b, t, d = x.shape
    return x.reshape(b, t, num_heads, d // num_heads)  # (B, T, N, H): the transpose forgotten


def split_interleaved(x, num_heads):
    """Head i gets every N-th feature instead of a contiguous block."""
    b, t, d = x.shape
    return x.reshape(b, t, d // num_heads, num_heads).transpose(0, 3, 1, 2)


def merge_without_transpose(heads):
    b, n, t, h = heads.shape
    return heads.reshape(b, t, n * h)


def merge_interleaved(heads):
    b, n, t, h = heads.shape
    return heads.transpose(0, 2, 3, 1).reshape(b, t, n * h)


def merge_without_reshape(heads):
    return heads.transpose(0, 2, 1, 3)  # (B, T, N, H): the concatenation forgotten


# bucket batch sizes
def sizes_ignore_replicas(bounds, tokens_per_batch, replicas=1):
    return [tokens_per_batch // bound for bound in bounds]


def sizes_budget_per_replica(bounds, tokens_per_batch, replicas=1):
    """The budget taken as each device's: the global batch is `replicas` times too large."""
    return [replicas * max(1, tokens_per_batch // bound) for bound in bounds]


def sizes_without_minimum(bounds, tokens_per_batch, replicas=1):
    return [tokens_per_batch // bound // replicas * replicas for bound in bounds]


def sizes_rounded(bounds, tokens_per_batch, replicas=1):
    return [max(replicas, round(tokens_per_batch / bound / replicas) * replicas) for bound in bounds]


# receptive field
def _contiguous(n, reach):
    return np.arange(n) >= n - reach


def reach_contiguous_formula(n, kernel_size, dilations):
    """1 + (k - 1) * sum(d) positions, as if no dilation ever left a hole."""
    return _contiguous(n, 1 + (kernel_size - 1) * sum(dilations))


def reach_k_not_k_minus_1(n, kernel_size, dilations):
    return _contiguous(n, 1 + kernel_size * sum(dilations))


def reach_without_itself(n, kernel_size, dilations):
    return _contiguous(n, (kernel_size - 1) * sum(dilations))


def reach_ignores_dilations(n, kernel_size, dilations):
    return _contiguous(n, 1 + (kernel_size - 1) * len(dilations))


# parameter count
def _count(config, biases=True, value_dim_is_key_dim=False, cross_attention=True, output_layer=False,
           positions_rows=None):
    d, h, n = config.d_model, config.num_heads, config.num_layers
    d_k = config.key_dim or d // h
    d_v = d_k if value_dim_is_key_dim else (config.value_dim or d // h)
    b = 1 if biases else 0
    attention = 2 * (d * h * d_k + b * h * d_k) + d * h * d_v + b * h * d_v + h * d_v * d + b * d
    feed_forward = 2 * d * config.d_ff + b * (config.d_ff + d)
    encoder = n * (attention + feed_forward + 4 * d)
    decoder = n * ((2 if cross_attention else 1) * attention + feed_forward + (6 if cross_attention else 4) * d)
    rows = config.max_length + config.extra_positions + 1 if positions_rows is None else positions_rows(config)
    positions = 2 * rows * d if config.positional == "learned" else 0
    output = config.vocab_size * d + config.vocab_size if output_layer else 0
    return config.vocab_size * d + positions + encoder + decoder + output


def params_without_biases(config):
    return _count(config, biases=False)


def params_value_dim_as_key_dim(config):
    return _count(config, value_dim_is_key_dim=True)


def params_without_cross_attention(config):
    return _count(config, cross_attention=False)


def params_separate_output_layer(config):
    return _count(config, output_layer=True)


def params_positions_of_max_length(config):
    return _count(config, positions_rows=lambda c: c.max_length)


# REST response
def _rows(outputs, translation=lambda t: t.decode("utf-8"), score=float, truncated=bool, keys=None):
    names = keys or ("translations", "scores", "truncated")
    convert = {"translations": translation, "scores": score, "truncated": truncated}
    size = len(outputs["translations"])
    return [{name: convert[name](outputs[name][i]) for name in names} for i in range(size)]


def rest_bytes_left(outputs):
    return {"predictions": _rows(outputs, translation=lambda t: t)}


def rest_numpy_scores(outputs):
    return {"predictions": _rows(outputs, score=lambda s: s)}


def rest_without_truncated(outputs):
    return {"predictions": _rows(outputs, keys=("translations", "scores"))}


def rest_columnar(outputs):
    rows = _rows(outputs)
    return {"outputs": {name: [row[name] for row in rows] for name in rows[0]}}


def rest_latin1(outputs):
    return {"predictions": _rows(outputs, translation=lambda t: t.decode("latin-1"))}


def rest_truncated_as_int(outputs):
    return {"predictions": _rows(outputs, truncated=int)}


MISTAKES = [
    ("additive_score", additive_without_tanh, ["the score at index", "should be"]),
    ("additive_score", additive_transposed, ["wrong shape", "expected (2, 3, 4), got (2, 4, 3)"]),
    ("additive_score", additive_sum_instead_of_v, ["the score at index"]),
    ("general_score", general_transposed_w, ["raised ValueError on random query (2, 3, 5)"]),
    ("general_score", general_without_w, ["raised ValueError"]),
    ("general_score", general_scaled, ["the score at index [0, 0, 0] should be"]),
    ("scaled_dot_product_attention", attention_without_sqrt, ["no mask", "the weights at index [0, 0, 0]"]),
    ("scaled_dot_product_attention", attention_inverted_mask, ["padding mask", "the weights at index"]),
    ("scaled_dot_product_attention", attention_sqrt_d_v, ["no mask", "the weights at index"]),
    ("scaled_dot_product_attention", attention_float16_fill, ["float16 inputs", "not a number"]),
    ("scaled_dot_product_attention", attention_output_only, ["expected a pair (output, weights)"]),
    ("positional_encoding", pe_concatenated, ["length=1, depth=4", "index [0, 1] should be 1, got 0"]),
    ("positional_encoding", pe_i_over_depth, ["length=50, depth=16", "index [1, 2] should be"]),
    ("positional_encoding", pe_cos_first, ["length=1, depth=4", "index [0, 0] should be 0, got 1"]),
    ("causal_mask", causal_transposed, ["length=2", "index [0, 1] should be False, got True"]),
    ("causal_mask", causal_strict, ["length=1", "index [0, 0] should be True, got False"]),
    ("causal_mask", causal_true_means_blocked, ["length=1", "should be True, got False"]),
    ("label_smoothed_loss", loss_counts_padding, ["with padding (real lengths 4, 2, 1)", "the loss should be"]),
    ("label_smoothed_loss", loss_smoothing_over_v, ["without padding", "the loss should be"]),
    ("label_smoothed_loss", loss_in_logits_dtype, ["float16 logits", "not a number"]),
    ("label_smoothed_loss", loss_per_token, ["expected a scalar loss", "got shape (2, 3)"]),
    ("schedule", schedule_zero_based, ["iteration=0 (step 1)", "should be 1.74693e-07, got 0"]),
    ("schedule", schedule_warmup_power, ["iteration=0 (step 1)"]),
    ("schedule", schedule_max, ["iteration=0 (step 1)"]),
    ("length_penalty", penalty_without_5, ["length=1, alpha=0.6", "should be 1, got 0.341279"]),
    ("length_penalty", penalty_times_alpha, ["length=1, alpha=0.6"]),
    ("beam_step", beam_per_beam, ["the first step", "scores at index [0, 1]"]),
    ("beam_step", beam_divides_by_k, ["beams at index"]),
    ("beam_step", beam_ignores_history, ["the first step"]),
    ("clipped_precision", precision_unclipped,
     ["n=1, hypothesis 'the the the", "numerator is wrong: expected 2, got 7"]),
    ("clipped_precision", precision_clipped_by_sum, ["n=1, hypothesis 'the the the", "expected 2, got 3"]),
    ("clipped_precision", precision_first_reference_only, ["numerator is wrong"]),
    ("clipped_precision", precision_reference_denominator, ["denominator is wrong: expected 7, got 6"]),
    ("linearize_tree", tree_writes_words, ["token 2 is wrong: expected 'DT', got 'The'"]),
    ("linearize_tree", tree_writes_xx, ["expected 'DT', got 'XX'"]),
    ("linearize_tree", tree_typed_closers, ["token 4 is wrong: expected ')', got ')NP'"]),
    ("target_shift", shift_swapped, ["rows of 3 and 5 tokens", "target_in at index [0, 0] should be 2, got 5"]),
    ("target_shift", shift_end_after_padding, ["rows of 3 and 5 tokens", "target_out at index [0, 3] should be 3, "
                                                                          "got 0"]),
    ("target_shift", shift_slices_start_y_end, ["rows of 3 and 5 tokens", "target_in at index [0, 4] should be 0, "
                                                                           "got 3"]),
    ("padding_mask", padding_mask_inverted, ["one decoder step", "the mask at index [0, 0] should be True, got False"]),
    ("padding_mask", padding_mask_after_softmax, ["one decoder step", "the weights at index [0, 0] should be"]),
    ("padding_mask", padding_mask_float16_fill, ["float16 scores", "not a number"]),
    ("split_heads", split_without_transpose, ["np.arange(48).reshape(2, 3, 8), num_heads=2",
                                              "the output at index [0, 0, 1, 0] should be 8, got 4"]),
    ("split_heads", split_positions_and_heads_swapped, ["wrong shape: expected (2, 2, 3, 4), got (2, 3, 2, 4)"]),
    ("split_heads", split_interleaved, ["the output at index [0, 0, 0, 1] should be 1, got 2"]),
    ("merge_heads", merge_without_transpose, ["np.arange(48).reshape(2, 3, 8)",
                                              "the merged output at index [0, 0, 4] should be 4, got 8"]),
    ("merge_heads", merge_interleaved, ["the merged output at index [0, 0, 1] should be 1, got 4"]),
    ("merge_heads", merge_without_reshape, ["wrong shape: expected (2, 3, 8), got (2, 3, 2, 4)"]),
    ("bucket_batch_sizes", sizes_ignore_replicas, ["replicas=8", "bucket 1 (L=2) should be 12496, got 12500"]),
    ("bucket_batch_sizes", sizes_budget_per_replica, ["replicas=8", "bucket 0 (L=1) should be 25000, got 200000"]),
    ("bucket_batch_sizes", sizes_without_minimum, ["tokens_per_batch=64, replicas=4", "(L=32) should be 4, got 0"]),
    ("bucket_batch_sizes", sizes_rounded, ["replicas=1", "should be 4166, got 4167"]),
    ("receptive_field", reach_contiguous_formula, ["n=10, kernel_size=3, dilations (2,)",
                                                   "index [6] should be False, got True"]),
    ("receptive_field", reach_k_not_k_minus_1, ["n=64, kernel_size=3, dilations (1, 1, 1, 1)",
                                                "index [51] should be False, got True"]),
    ("receptive_field", reach_without_itself, ["n=12, kernel_size=3, dilations ()",
                                               "index [11] should be True, got False"]),
    ("receptive_field", reach_ignores_dilations, ["n=64, kernel_size=3, dilations (1, 3, 9)",
                                                  "index [37] should be True, got False"]),
    ("parameter_count", params_without_biases, ["tiny(vocab_size=50, max_length=16)", "should be 236672", "too few"]),
    ("parameter_count", params_value_dim_as_key_dim, ["key_dim=4", "too few"]),
    ("parameter_count", params_without_cross_attention, ["should be 236672", "too few"]),
    ("parameter_count", params_separate_output_layer, ["should be 236672, got 239922 (3250 too many)"]),
    ("parameter_count", params_positions_of_max_length, ["positional='learned'", "too few"]),
    ("rest_response", rest_bytes_left, ["cannot be written as JSON", "bytes is not JSON serializable"]),
    ("rest_response", rest_numpy_scores, ["cannot be written as JSON", "float32 is not JSON serializable"]),
    ("rest_response", rest_without_truncated, ["prediction 0 has the keys ['scores', 'translations']"]),
    ("rest_response", rest_columnar, ["the body has the keys ['outputs']", "['predictions']"]),
    ("rest_response", rest_latin1, ["non-ASCII letters", '"translations" of prediction 0 should be "Zwei Hunde '
                                                           'laufen über die Straße."']),
    ("rest_response", rest_truncated_as_int, ['"truncated" of prediction 0 should be false, got 0']),
]


@pytest.mark.parametrize("name, mistake, said", MISTAKES, ids=[m[1].__name__ for m in MISTAKES])
def test_checker_rejects_a_typical_mistake(capsys, name, mistake, said):
    ok, sentence = _verdict(capsys, name, mistake)
    assert not ok, sentence
    for words in said:
        assert words in sentence, sentence


def test_every_checker_rejects_at_least_two_mistakes():
    counts = Counter(name for name, _, _ in MISTAKES)
    assert {name: counts[name] for name in EXERCISES if counts[name] < 2} == {}


def test_solutions_in_keras_ops_are_accepted_too(capsys):
    """Tensors (float32 or the inputs' half precision) come back through keras.ops.convert_to_numpy."""
    from keras import ops

    def causal_mask(length):
        return ops.tril(ops.ones((length, length), "bool"))

    def scaled_dot_product_attention(query, key, value, mask=None):
        scores = ops.matmul(query, ops.swapaxes(key, -1, -2)) / ops.sqrt(ops.cast(query.shape[-1], query.dtype))
        scores = ops.cast(scores, "float32")
        if mask is not None:
            scores = ops.where(mask, scores, -1e9)
        weights = ops.softmax(scores, axis=-1)
        return ops.matmul(ops.cast(weights, value.dtype), value), ops.cast(weights, query.dtype)

    for name, fn in [("causal_mask", causal_mask), ("scaled_dot_product_attention", scaled_dot_product_attention)]:
        ok, sentence = _verdict(capsys, name, fn)
        assert ok, sentence


def test_sentences_name_the_shapes(capsys):
    def wrong_shape(length):
        return np.tril(np.ones((length, length + 1), bool))

    ok, sentence = _verdict(capsys, "causal_mask", wrong_shape)
    assert not ok
    assert sentence == "On length=1, the mask has the wrong shape: expected (1, 1), got (1, 2)."


# ---------------------------------------------------------------------------
# The references the checkers trust
# ---------------------------------------------------------------------------
def test_clipped_precision_reference_matches_sacrebleu_and_papineni():
    sacrebleu = pytest.importorskip("sacrebleu")
    bleu = sacrebleu.metrics.BLEU(tokenize="none", max_ngram_order=4)
    reference = exercises.decoding.clipped_precision_reference
    for hypothesis, references in exercises.decoding._BLEU_CASES:
        stats = bleu.corpus_score([hypothesis], [[r] for r in references])
        ours = [reference(hypothesis.split(), [r.split() for r in references], n) for n in (1, 2, 3, 4)]
        assert [tuple(pair) for pair in zip(stats.counts, stats.totals)] == ours, hypothesis
    # Papineni et al., 2002, §2.1: 2/7 for "the" x 7; 17/18 unigrams for candidate 1 of example 1.
    assert reference(["the"] * 7, ["the cat is on the mat".split()], 1) == (2, 7)
    example1 = exercises.decoding._BLEU_CASES[1]
    assert reference(example1[0].split(), [r.split() for r in example1[1]], 1) == (17, 18)


def test_beam_step_reference_follows_tfm_beam_search_rule():
    """Hand-worked: 2 beams, 3 tokens; the two best extensions both continue beam 1."""
    log_probs = np.array([[-2.0, -0.5]])
    token_log_probs = np.log(np.array([[[0.4, 0.3, 0.3], [0.1, 0.6, 0.3]]]))
    scores, beams, tokens = exercises.decoding.beam_step_reference(log_probs, token_log_probs)
    np.testing.assert_allclose(scores, [[-0.5 + np.log(0.6), -0.5 + np.log(0.3)]])
    assert beams.tolist() == [[1, 1]] and tokens.tolist() == [[1, 2]]


def test_beam_step_reference_equals_top_k_over_the_flattened_candidates():
    """The rule of tfm.decoding.beam_search: `tf.math.top_k` over `K * V`, `beam = id // V`, `token = id % V`."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    log_probs = -rng.uniform(0, 5, size=(3, 4))
    token_log_probs = np.log(_softmax(rng.normal(size=(3, 4, 9))))
    scores, beams, tokens = exercises.decoding.beam_step_reference(log_probs, token_log_probs)
    top, ids = tf.math.top_k(tf.reshape(log_probs[:, :, None] + token_log_probs, [3, -1]), k=4)
    np.testing.assert_allclose(scores, top.numpy())
    assert beams.tolist() == (ids.numpy() // 9).tolist() and tokens.tolist() == (ids.numpy() % 9).tolist()


def test_checkers_ignore_a_global_mixed_precision_policy(capsys):
    """A notebook that set mixed_bfloat16 still gets tfm's float32 reference (conftest restores float32)."""
    import keras

    keras.config.set_dtype_policy("mixed_bfloat16")
    for name in ("additive_score", "general_score", "scaled_dot_product_attention", "label_smoothed_loss",
                 "padding_mask", "split_heads", "merge_heads", "receptive_field", "parameter_count"):
        ok, sentence = _verdict(capsys, name, SOLUTIONS[name])
        assert ok, sentence


def test_a_failure_on_tfms_side_is_one_sentence_not_a_traceback(capsys, monkeypatch):
    monkeypatch.setattr(exercises.decoding, "clipped_precision_reference", lambda *args: 1 / 0)
    ok, sentence = _verdict(capsys, "clipped_precision", SOLUTIONS["clipped_precision"])
    assert not ok and "could not compute tfm's reference (ZeroDivisionError" in sentence


# ---------------------------------------------------------------------------
# The Korean edition: the same checks, the same verdicts, the sentence in Korean
# ---------------------------------------------------------------------------
def _numbers(sentence):
    """The numbers a sentence quotes (shapes, indices, values, counts): the same checks quote the same ones."""
    return sorted(re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", sentence))


def _both_languages(capsys, name, fn):
    """The verdict and sentence in English and in Korean; checks what must hold between the two."""
    ok_en, english = _verdict(capsys, name, fn, lang="en")
    ok_ko, korean = _verdict(capsys, name, fn, lang="ko")
    assert ok_en == ok_ko, (english, korean)
    assert HANGUL.search(korean), korean
    assert not HANGUL.search(english), english
    assert _numbers(english) == _numbers(korean), (english, korean)
    # The English sentences' own words (not the reader's data or tfm's names) never reach a Korean one.
    assert not re.search(r"correct:|not done yet| raised |needs a function|could not|should be|expected|, got|"
                         r"wrong shape| at index |not a number|^On ", korean), korean
    return ok_ko, english, korean


def test_every_checker_takes_lang_keyword_only_defaulting_to_the_environment():
    for name in EXERCISES:
        parameter = inspect.signature(getattr(exercises, f"check_{name}")).parameters["lang"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None, name
        assert "lang:" in getattr(exercises, f"check_{name}").__doc__, name


@pytest.mark.parametrize("name", EXERCISES)
def test_the_reference_solutions_are_accepted_in_korean(capsys, name):
    ok, english, korean = _both_languages(capsys, name, SOLUTIONS[name])
    assert ok, korean
    assert english.startswith("correct:") and korean.startswith("정답입니다:"), korean


@pytest.mark.parametrize("name, mistake, said", MISTAKES, ids=[m[1].__name__ for m in MISTAKES])
def test_a_typical_mistake_is_rejected_in_korean_at_the_same_place(capsys, name, mistake, said):
    ok, english, korean = _both_languages(capsys, name, mistake)
    assert not ok, korean
    assert english == _verdict(capsys, name, mistake)[1]  # lang="en" is the default's sentence


@pytest.mark.parametrize("name", EXERCISES)
def test_a_stub_is_not_done_yet_in_korean(capsys, name):
    def my_stub(*args, **kwargs):
        raise NotImplementedError("write me")

    ok, _, korean = _both_languages(capsys, name, my_stub)
    assert not ok
    assert korean.startswith("아직 작성하지 않았습니다:") and "my_stub" in korean and "NotImplementedError" in korean


def test_the_shared_sentences_are_korean_too(capsys, monkeypatch):
    """A non-function, an exception in the reader's code, a value that is no array, a failure on tfm's side."""
    ok, _, korean = _both_languages(capsys, "causal_mask", np.ones((2, 2)))
    assert not ok and korean == "check_causal_mask에는 함수를 넘겨야 하는데 ndarray 값을 받았습니다."
    ok, _, korean = _both_languages(capsys, "causal_mask", lambda length: 1 / 0)
    assert not ok and "<lambda> 함수가 ZeroDivisionError 예외를 일으켰습니다 (division by zero)" in korean
    ok, _, korean = _both_languages(capsys, "causal_mask", lambda length: {"not": "numbers"})
    assert not ok and "숫자 배열로 읽을 수 없습니다" in korean
    ok, _, korean = _both_languages(capsys, "causal_mask", lambda length: np.tril(np.ones((length, length + 1))))
    assert not ok and korean == "length=1에서 마스크의 shape이 틀렸습니다: (1, 1)이어야 하는데 (1, 2)입니다."
    monkeypatch.setattr(exercises.decoding, "clipped_precision_reference", lambda *args: 1 / 0)
    ok, _, korean = _both_languages(capsys, "clipped_precision", SOLUTIONS["clipped_precision"])
    assert not ok and "tfm의 기준값을 계산하지 못했습니다 (ZeroDivisionError" in korean


def test_tfm_lang_sets_the_default_and_lang_overrides_it(capsys, monkeypatch):
    monkeypatch.setenv("TFM_LANG", "ko")
    for name in EXERCISES:
        ok, sentence = _verdict(capsys, name, SOLUTIONS[name])
        assert ok and sentence.startswith("정답입니다:"), sentence
    ok, sentence = _verdict(capsys, "causal_mask", causal_transposed, lang="en")
    assert not ok and sentence == "On length=2, the mask at index [0, 1] should be False, got True."
    monkeypatch.setenv("TFM_LANG", "en")
    assert _verdict(capsys, "causal_mask", causal_transposed)[1].startswith("On length=2")
    monkeypatch.setenv("TFM_LANG", "")  # set but empty reads as unset: English
    assert _verdict(capsys, "causal_mask", causal_transposed)[1].startswith("On length=2")


@pytest.mark.parametrize("name", EXERCISES)
def test_an_unknown_language_is_refused(capsys, monkeypatch, name):
    checker = getattr(exercises, f"check_{name}")
    for bad in ("fr", "KO", "korean", 1):
        with pytest.raises(ValueError, match=re.escape(f"lang={bad!r}") + ".*'en' or 'ko'"):
            checker(SOLUTIONS[name], lang=bad)
    monkeypatch.setenv("TFM_LANG", "de")
    with pytest.raises(ValueError, match=re.escape("$TFM_LANG='de'") + ".*'en' or 'ko'"):
        checker(SOLUTIONS[name])
    assert capsys.readouterr().out == ""  # refused before anything is judged or printed


def test_a_sentence_table_must_have_the_same_keys_and_fields_in_every_language():
    from tfm.exercises.messages import Messages
    with pytest.raises(ValueError, match=re.escape("missing ['b']")):
        Messages(en={"a": "x", "b": "y"}, ko={"a": "엑스"})
    fields = "the 'ko' template of 'a' takes the fields ['m'], the English one ['n']"
    with pytest.raises(ValueError, match=re.escape(fields)):
        Messages(en={"a": "{n} inputs"}, ko={"a": "입력 {m}개"})
    with pytest.raises(ValueError, match="one table per language"):
        Messages(en={"a": "x"})


# ---------------------------------------------------------------------------
# A careless reader: a value that is not what the contract says, a function that never returns
# ---------------------------------------------------------------------------
class _NoLength(list):
    """A pair whose length cannot be read: the checker's own `len(result)` fails on the reader's value."""

    def __len__(self):
        raise ValueError("no length here")


# (checker, the reader's function, what the sentence must say): each a value of the wrong type or dtype.
WRONG_RETURNS = [
    ("causal_mask", lambda length: "mask", "On length=1, the mask could not be read as an array of numbers (got str)."),
    ("causal_mask", lambda length: None, "On length=1, the mask could not be read as an array of numbers "
                                         "(got NoneType)."),
    ("causal_mask", lambda length: np.array([["a"]]), "On length=1, the mask could not be read as an array of "
                                                      "numbers (got ndarray)."),
    ("schedule", lambda iteration, d_model, warmup: 1j, "could not be read as an array of numbers (got complex)"),
    ("label_smoothed_loss", lambda *args, **kwargs: np.datetime64("2017-06-12"),
     "could not be read as an array of numbers (got datetime64)"),
    ("padding_mask", lambda source_ids, scores: _NoLength([1, 2]),
     "what <lambda> returned could not be checked (ValueError: no length here): compare its type, shape and dtype "
     "with the contract in help(check_padding_mask)."),
]


@pytest.mark.parametrize("name, fn, said", WRONG_RETURNS, ids=[f"{w[0]}-{i}" for i, w in enumerate(WRONG_RETURNS)])
def test_a_wrong_return_value_is_the_readers_problem_not_tfms(capsys, name, fn, said):
    ok, english, korean = _both_languages(capsys, name, fn)
    assert not ok
    assert said in english, english
    assert "tfm's reference" not in english and "기준값" not in korean, (english, korean)


def test_an_error_reading_the_readers_value_is_said_in_korean_on_the_same_input(capsys):
    _, english, korean = _both_languages(capsys, "padding_mask", WRONG_RETURNS[-1][1])
    assert english.startswith("On one decoder step, source_ids (2, 5)")
    assert korean == ("디코더 시점 하나, source_ids (2, 5) (문장 0의 실제 토큰은 3개), scores (2, 5)에서 "
                      "<lambda> 함수가 돌려준 값을 검사할 수 없습니다 (ValueError: no length here). "
                      "돌려주는 값의 타입, shape, dtype을 help(check_padding_mask)에 적힌 형식과 비교해 보세요.")
    assert ";" not in korean


def test_a_function_that_never_returns_is_given_up_after_the_time_limit(capsys, monkeypatch):
    """$TFM_CHECK_SECONDS bounds each call of the reader's function; the sentence says the check stopped waiting."""
    import threading
    import time

    monkeypatch.setenv("TFM_CHECK_SECONDS", "0.3")
    release = threading.Event()  # set at the end, so the abandoned calls finish too

    def endless(length):
        release.wait(30)

    try:
        start = time.monotonic()
        ok, english, korean = _both_languages(capsys, "causal_mask", endless)
        assert time.monotonic() - start < 10  # two checks of 0.3 s each, not 2 x 30 s
    finally:
        release.set()
    assert not ok
    assert english.startswith("On length=1, endless had not returned after 0.3 s, so the check stopped waiting; "
                              "Python cannot stop a function from outside, so it may still be running")
    assert "$TFM_CHECK_SECONDS" in english and "$TFM_CHECK_SECONDS" in korean
    assert korean.startswith("length=1에서 endless 함수가 0.3초가 지나도록 값을 돌려주지 않아 검사를 멈췄습니다.")
    assert ";" not in korean
    # Within the limit, the same check runs to its verdict.
    monkeypatch.setenv("TFM_CHECK_SECONDS", "30")
    assert _verdict(capsys, "causal_mask", SOLUTIONS["causal_mask"])[0]


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_time_limit_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("TFM_CHECK_SECONDS", value)
    with pytest.raises(ValueError, match=re.escape(f"$TFM_CHECK_SECONDS={value!r} is not a positive number")):
        exercises.check_causal_mask(SOLUTIONS["causal_mask"])
