"""Checkers for the course's coding exercises: `check_<name>(fn)` -> True / False.

Each checker calls the reader's function on random and edge-case inputs (masks, padding,
batch 1, half precision where it applies), compares it with tfm's own implementation, prints
ONE sentence (what is wrong: which input, the first mismatching index, expected vs got shape
or value; or that it is correct) and returns True or False. It never raises: a stub that still
raises `NotImplementedError` prints "not done yet: ..." and returns False, so that a notebook
runs top to bottom before the reader has written anything.

    from tfm.exercises import check_causal_mask
    check_causal_mask(my_causal_mask)        # prints one sentence, returns True or False

Inputs are NumPy arrays (Python ints and lists where the docstring says so); a solution may
use NumPy or `keras.ops` and return anything `np.asarray` (or `keras.ops.convert_to_numpy`)
reads. Reference solutions: `notebooks/solutions/`.

| checker                              | exercise                                    | paper          |
|--------------------------------------|---------------------------------------------|----------------|
| `check_additive_score`               | `v^T tanh(W1 q + W2 k)`                     | Bahdanau 2015  |
| `check_general_score`                | `q^T W k`                                   | Luong 2015     |
| `check_scaled_dot_product_attention` | eq. 1 with a boolean mask                   | §3.2.1         |
| `check_positional_encoding`          | interleaved sinusoids                       | §3.5           |
| `check_causal_mask`                  | the decoder's look-ahead mask               | §3.2.3         |
| `check_label_smoothed_loss`          | label smoothing, padding ignored            | §5.4           |
| `check_schedule`                     | eq. 3's learning rate                       | §5.3           |
| `check_length_penalty`               | GNMT's `((5 + |Y|) / 6)^α`                  | §6.1           |
| `check_beam_step`                    | one beam-search step                        | §6.1           |
| `check_clipped_precision`            | BLEU's clipped n-gram precision             | §6.1 (BLEU)    |
| `check_linearize_tree`               | a tree as a token sequence                  | §6.3           |
"""

import collections

import numpy as np
from keras import ops

__all__ = [
    "check_additive_score",
    "check_general_score",
    "check_scaled_dot_product_attention",
    "check_positional_encoding",
    "check_causal_mask",
    "check_label_smoothed_loss",
    "check_schedule",
    "check_length_penalty",
    "check_beam_step",
    "check_clipped_precision",
    "check_linearize_tree",
]


# ---------------------------------------------------------------------------
# The machinery every checker shares
# ---------------------------------------------------------------------------
class _Mismatch(Exception):
    """Raised inside a checker with the sentence to print."""


def _rng():
    # A fixed seed: the same inputs, so the same sentence, every time a checker runs.
    return np.random.default_rng(2017)


def _name(fn):
    return getattr(fn, "__name__", None) or type(fn).__name__


def _call(fn, label, *args, **kwargs):
    """`fn(*args, **kwargs)`, turning any exception into a `_Mismatch` that names the input."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise _Mismatch(f"not done yet: {_name(fn)} still raises NotImplementedError; write its body, "
                        f"then run this check again") from None
    except Exception as error:  # noqa: BLE001 - the reader's code may raise anything
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        message = message if len(message) <= 160 else message[:157] + "..."
        raise _Mismatch(f"{_name(fn)} raised {type(error).__name__} on {label}"
                        + (f" ({message})" if message else "")) from None


def _run(name, fn, body):
    """Run `body()` (which raises `_Mismatch` or returns the success sentence); print; return the verdict."""
    if not callable(fn):
        print(f"{name} needs a function, got {type(fn).__name__}.")
        return False
    try:
        with np.errstate(all="ignore"):  # overflow in a reader's float16 shows up as a mismatch, not a warning
            sentence = body()
    except _Mismatch as mismatch:
        print(_sentence(str(mismatch)))
        return False
    except Exception as error:  # noqa: BLE001 - tfm's side failed (e.g. an optional package is missing)
        print(_sentence(f"{name} could not compute tfm's reference ({type(error).__name__}: {error}); "
                        f"your function was not judged"))
        return False
    print(_sentence(sentence))
    return True


def _sentence(text):
    text = text.strip()
    if text.startswith("on "):
        text = "On " + text[3:]
    return text if text.endswith((".", "!", "?")) else text + "."


def _to_numpy(x, label, what):
    """The reader's output as a NumPy array (bfloat16 and float16 read as float32)."""
    try:
        if hasattr(x, "numpy") or type(x).__module__.split(".")[0] in ("tensorflow", "keras", "jax", "torch"):
            x = ops.convert_to_numpy(x)
        array = np.asarray(x)
    except Exception:  # noqa: BLE001
        raise _Mismatch(f"on {label}, {what} could not be read as an array (got {type(x).__name__})") from None
    if array.dtype == object:
        raise _Mismatch(f"on {label}, {what} could not be read as an array of numbers (got {type(x).__name__})")
    if array.dtype.kind == "V" or str(array.dtype) in ("bfloat16", "float16"):
        array = array.astype("float32")
    return array


def _fmt(value):
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _index(position):
    return "[" + ", ".join(str(int(i)) for i in position) + "]"


def _compare(got, expected, label, what="the result", rtol=1e-5, atol=1e-6, exact=False):
    """Raise `_Mismatch` naming the shape or the first index where `got` differs from `expected`."""
    got = _to_numpy(got, label, what)
    expected = np.asarray(expected)
    if got.shape != expected.shape:
        raise _Mismatch(f"on {label}, {what} has the wrong shape: expected {tuple(expected.shape)}, "
                        f"got {tuple(got.shape)}")
    if exact:
        bad = got != expected
    else:
        got64, expected64 = got.astype("float64"), expected.astype("float64")
        bad = ~np.isclose(got64, expected64, rtol=rtol, atol=atol, equal_nan=False)
        # -inf == -inf is a match (np.isclose says so too, but spell it out for +-inf).
        bad &= ~(np.isinf(expected64) & (got64 == expected64))
    if np.any(bad):
        position = tuple(np.argwhere(bad)[0])
        where = f" at index {_index(position)}" if position else ""
        hint = " (not a number: an overflow, or 0 * inf?)" if not exact and np.isnan(got[position]) else ""
        raise _Mismatch(f"on {label}, {what}{where} should be {_fmt(expected[position])}, "
                        f"got {_fmt(got[position])}{hint}")


def _shape(*dims):
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


# ---------------------------------------------------------------------------
# 1-2. Score functions (notebook 03)
# ---------------------------------------------------------------------------
def _score_layer(score, query, key, kernels, units=None):
    from tfm.layers.attention_score import AttentionScore

    layer = AttentionScore(score, units=units, dtype="float32")
    q32, k32 = query.astype("float32"), key.astype("float32")
    layer(q32, k32)  # build
    for dense, kernel in kernels(layer):
        dense.kernel.assign(kernel.astype("float32"))
    return ops.convert_to_numpy(layer(q32, k32))


def check_additive_score(fn):
    """Bahdanau's additive (concat) score `e_ts = v^T tanh(W1 q_t + W2 k_s)` (Bahdanau et al., 2015, §A.1.2).

    Contract: `fn(query, key, w1, w2, v) -> scores`
        query: float `(B, T, Dq)`, the decoder states `q_t` (`s_{t-1}` in Bahdanau's notation).
        key: float `(B, S, Dk)`, the encoder outputs `k_s` (`h_s`).
        w1: float `(Dq, U)`; w2: float `(Dk, U)`; v: float `(U,)`. Row vectors: `q_t @ w1`.
        Returns float `(B, T, S)`: one score per query/key pair, before the softmax.

    Checked against `tfm.layers.AttentionScore("additive", units=U)` with the same weights, on random
    inputs with `Dq != Dk`, batch 1 with one query and one key, and float16 inputs.
    """
    rng = _rng()

    def case(b, t, s, dq, dk, u, dtype="float32", scale=1.0):
        q = (scale * rng.normal(size=(b, t, dq))).astype(dtype)
        k = (scale * rng.normal(size=(b, s, dk))).astype(dtype)
        w1, w2 = rng.normal(size=(dq, u)).astype(dtype), rng.normal(size=(dk, u)).astype(dtype)
        v = rng.normal(size=(u,)).astype(dtype)
        expected = _score_layer("additive", q, k, lambda layer: [(layer.query_dense, w1), (layer.key_dense, w2),
                                                                 (layer.score_dense, v[:, None])], units=u)
        return (q, k, w1, w2, v), expected

    def body():
        cases = [
            (f"random query {_shape(2, 3, 5)}, key {_shape(2, 4, 6)}, U=7", case(2, 3, 4, 5, 6, 7), 1e-4),
            (f"batch 1, one query and one key, query {_shape(1, 1, 3)}, key {_shape(1, 1, 2)}, U=4",
             case(1, 1, 1, 3, 2, 4), 1e-4),
            (f"float16 query {_shape(2, 2, 4)}, key {_shape(2, 5, 4)}, U=3", case(2, 2, 5, 4, 4, 3, "float16"), 2e-2),
        ]
        for label, (args, expected), tol in cases:
            _compare(_call(fn, label, *args), expected, label, "the score", rtol=tol, atol=tol)
        return f"correct: {_name(fn)} matches tfm's additive AttentionScore on {len(cases)} inputs"

    return _run("check_additive_score", fn, body)


def check_general_score(fn):
    """Luong's general (bilinear) score `e_ts = q_t^T W k_s` (Luong et al., 2015, §3.1, eq. 8).

    Contract: `fn(query, key, w) -> scores`
        query: float `(B, T, Dq)`; key: float `(B, S, Dk)`; w: float `(Dq, Dk)`.
        Returns float `(B, T, S)` with `scores[b, t, s] = query[b, t] @ w @ key[b, s]`.

    Checked against `tfm.layers.AttentionScore("general")` (whose key kernel is `w^T`) on random
    inputs with `Dq != Dk`, a square `w` (so a transposed `w` shows), batch 1 with one key, and float16.
    """
    rng = _rng()

    def case(b, t, s, dq, dk, dtype="float32"):
        q = rng.normal(size=(b, t, dq)).astype(dtype)
        k = rng.normal(size=(b, s, dk)).astype(dtype)
        w = rng.normal(size=(dq, dk)).astype(dtype)
        expected = _score_layer("general", q, k, lambda layer: [(layer.key_dense, w.T)])
        return (q, k, w), expected

    def body():
        cases = [
            (f"random query {_shape(2, 3, 5)}, key {_shape(2, 4, 6)}, w {_shape(5, 6)}", case(2, 3, 4, 5, 6), 1e-4),
            (f"square w {_shape(4, 4)}, query {_shape(2, 3, 4)}, key {_shape(2, 5, 4)}", case(2, 3, 5, 4, 4), 1e-4),
            (f"batch 1 with one key, query {_shape(1, 2, 3)}, key {_shape(1, 1, 2)}", case(1, 2, 1, 3, 2), 1e-4),
            (f"float16 query {_shape(2, 2, 4)}, key {_shape(2, 3, 4)}", case(2, 2, 3, 4, 4, "float16"), 3e-2),
        ]
        for label, (args, expected), tol in cases:
            _compare(_call(fn, label, *args), expected, label, "the score", rtol=tol, atol=tol)
        return f"correct: {_name(fn)} matches tfm's general AttentionScore on {len(cases)} inputs"

    return _run("check_general_score", fn, body)


# ---------------------------------------------------------------------------
# 3. Scaled dot-product attention (notebook 04)
# ---------------------------------------------------------------------------
def check_scaled_dot_product_attention(fn):
    """Eq. 1, `softmax(Q K^T / sqrt(d_k)) V`, with a boolean mask (Vaswani et al., 2017, §3.2.1).

    Contract: `fn(query, key, value, mask=None) -> (output, weights)`
        query: float `(..., T, d_k)`; key: float `(..., S, d_k)`; value: float `(..., S, d_v)`.
        mask: None or bool broadcastable to `(..., T, S)`, True = may attend. Masked keys must get
            exactly zero weight; every query here has at least one key it may attend.
        Returns `output` float `(..., T, d_v)` and `weights` float `(..., T, S)` (rows sum to 1).

    Checked against `tfm.scaled_dot_product_attention` on: no mask; a padding mask `(B, 1, S)`; a causal
    mask `(T, S)`; batch 1 with heads `(1, N, T, d_k)`; float16 inputs whose logits overflow a naive
    float16 masking; and bfloat16 inputs.
    """
    import ml_dtypes

    from tfm.layers.scaled_dot_product_attention import scaled_dot_product_attention

    rng = _rng()

    def case(lead, t, s, dk, dv, mask=None, dtype="float32", scale=1.0):
        q = (scale * rng.normal(size=(*lead, t, dk))).astype(dtype)
        k = (scale * rng.normal(size=(*lead, s, dk))).astype(dtype)
        v = rng.normal(size=(*lead, s, dv)).astype(dtype)
        f32 = [x.astype("float32") for x in (q, k, v)]
        output, weights = scaled_dot_product_attention(*f32, mask=mask)
        return (q, k, v, mask), (ops.convert_to_numpy(output), ops.convert_to_numpy(weights))

    lengths = np.array([4, 2])  # the second sentence has 2 real keys of 4
    padding = (np.arange(4)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, S)
    causal = np.tril(np.ones((4, 4), bool))  # (T, S)

    def body():
        cases = [
            (f"query {_shape(2, 3, 8)}, key {_shape(2, 4, 8)}, value {_shape(2, 4, 5)}, no mask",
             case((2,), 3, 4, 8, 5), 1e-4),
            (f"query {_shape(2, 3, 8)}, key {_shape(2, 4, 8)}, value {_shape(2, 4, 5)}, padding mask "
             f"{_shape(2, 1, 4)} (sentence 1 has 2 real keys)", case((2,), 3, 4, 8, 5, padding), 1e-4),
            (f"causal mask {_shape(4, 4)}, query {_shape(2, 4, 6)}, value {_shape(2, 4, 3)}",
             case((2,), 4, 4, 6, 3, causal), 1e-4),
            (f"batch 1 with 2 heads, query {_shape(1, 2, 3, 4)}, key {_shape(1, 2, 5, 4)}, mask {_shape(1, 1, 1, 5)}",
             case((1, 2), 3, 5, 4, 4, np.array([True, True, True, False, False])[None, None, None, :]), 1e-4),
            (f"float16 inputs with large logits, query {_shape(2, 3, 16)}, padding mask {_shape(2, 1, 4)}",
             case((2,), 3, 4, 16, 4, padding, "float16", scale=3.0), 2e-2),
            (f"bfloat16 inputs, query {_shape(2, 3, 8)}, padding mask {_shape(2, 1, 4)}",
             case((2,), 3, 4, 8, 4, padding, ml_dtypes.bfloat16), 4e-2),
        ]
        for label, ((q, k, v, mask), (output, weights)), tol in cases:
            result = _call(fn, label, q, k, v, mask=mask) if mask is not None else _call(fn, label, q, k, v)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise _Mismatch(f"on {label}, expected a pair (output, weights), got {type(result).__name__}"
                                + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
            _compare(result[1], weights, label, "the weights", rtol=tol, atol=tol)
            _compare(result[0], output, label, "the output", rtol=tol, atol=tol)
        return f"correct: {_name(fn)} matches tfm.scaled_dot_product_attention on {len(cases)} inputs"

    return _run("check_scaled_dot_product_attention", fn, body)


# ---------------------------------------------------------------------------
# 4. Positional encoding (notebook 05)
# ---------------------------------------------------------------------------
def check_positional_encoding(fn):
    """The sinusoidal positional encoding of §3.5, sines and cosines interleaved.

    Contract: `fn(length, depth) -> pe`, two Python ints (`depth` even), returning float `(length, depth)` with
    `pe[p, 2i] = sin(p / 10000^(2i / depth))` and `pe[p, 2i + 1] = cos(p / 10000^(2i / depth))`.

    Checked against `tfm.positional_encoding(length, depth)` for one position, the smallest depth, and
    long and wide tables.
    """
    from tfm.layers.positional_encoding import positional_encoding_numpy

    def body():
        sizes = [(1, 4), (3, 2), (50, 16), (20, 128)]
        for length, depth in sizes:
            label = f"length={length}, depth={depth}"
            _compare(_call(fn, label, length, depth), positional_encoding_numpy(length, depth), label,
                     "the encoding", rtol=1e-4, atol=1e-4)
        return f"correct: {_name(fn)} matches tfm.positional_encoding for {len(sizes)} sizes"

    return _run("check_positional_encoding", fn, body)


# ---------------------------------------------------------------------------
# 5. Causal mask (notebook 06)
# ---------------------------------------------------------------------------
def check_causal_mask(fn):
    """The decoder's look-ahead mask (§3.2.3: position t may not attend to later positions).

    Contract: `fn(length) -> mask`, bool `(length, length)`, True = may attend: query `i` may attend
    key `j` when `j <= i` (0/1 integers are read as booleans).

    Checked against `tfm.masks.causal_mask(length)` for lengths 1, 2 and 5.
    """
    from tfm.masks import causal_mask

    def body():
        for length in (1, 2, 5):
            label = f"length={length}"
            got = _to_numpy(_call(fn, label, length), label, "the mask")
            if got.dtype != bool:
                if got.size and not np.all(np.isin(got, (0, 1))):
                    raise _Mismatch(f"on {label}, the mask holds values other than True/False "
                                    f"(e.g. {_fmt(got[~np.isin(got, (0, 1))][0])}); return booleans, True = may attend")
                got = got.astype(bool) if got.shape == (length, length) else got
            _compare(got, ops.convert_to_numpy(causal_mask(length)), label, "the mask", exact=True)
        return f"correct: {_name(fn)} matches tfm.masks.causal_mask for lengths 1, 2 and 5"

    return _run("check_causal_mask", fn, body)


# ---------------------------------------------------------------------------
# 6-7. Label smoothing and the schedule (notebook 07)
# ---------------------------------------------------------------------------
def check_label_smoothed_loss(fn):
    """Label-smoothed cross entropy that ignores padding (§5.4, eps_ls = 0.1).

    Contract: `fn(y_true, logits, label_smoothing=0.1, pad_id=0) -> loss`
        y_true: int `(B, T)` target ids, `pad_id` where the target is padding.
        logits: float `(B, T, V)`, unnormalised.
        The target distribution puts `1 - eps` on the reference id and `eps / (V - 1)` on each of the
        other `V - 1` ids (the padding id included). Returns a float scalar: the summed cross entropy
        of the real (non-pad) positions divided by their number.

    Checked against `tfm.LabelSmoothedCrossEntropy(label_smoothing, pad_id)` on: no padding; padded
    targets; batch 1 with one position; `label_smoothing=0`; another `pad_id`; float16 logits large
    enough to overflow `exp` in float16 (compute in float32); and bfloat16 logits.
    """
    import ml_dtypes

    from tfm.losses import LabelSmoothedCrossEntropy

    rng = _rng()

    def case(b, t, v, lengths=None, eps=0.1, pad_id=0, dtype="float32", scale=2.0):
        ids = rng.integers(0, v, size=(b, t))
        ids = np.where(ids == pad_id, (pad_id + 1) % v, ids)  # real targets are never the padding id
        if lengths is not None:
            ids = np.where(np.arange(t)[None, :] < np.asarray(lengths)[:, None], ids, pad_id)
        logits = (scale * rng.normal(size=(b, t, v))).astype(dtype)
        loss = LabelSmoothedCrossEntropy(label_smoothing=eps, pad_id=pad_id)
        expected = float(ops.convert_to_numpy(loss(ids.astype("int32"), logits.astype("float32"))))
        return (ids.astype("int32"), logits, eps, pad_id), expected

    def body():
        cases = [
            (f"y_true {_shape(2, 3)} without padding, logits {_shape(2, 3, 7)}", case(2, 3, 7), 1e-5),
            (f"y_true {_shape(3, 4)} with padding (real lengths 4, 2, 1), logits {_shape(3, 4, 6)}",
             case(3, 4, 6, lengths=[4, 2, 1]), 1e-5),
            (f"batch 1 with one position, logits {_shape(1, 1, 3)}", case(1, 1, 3), 1e-5),
            (f"label_smoothing=0 with padding, logits {_shape(2, 3, 5)}", case(2, 3, 5, [3, 1], eps=0.0), 1e-5),
            (f"pad_id=2 with padding, logits {_shape(2, 3, 5)}", case(2, 3, 5, [2, 3], pad_id=2), 1e-5),
            (f"float16 logits up to about 40 with padding, logits {_shape(2, 4, 6)}",
             case(2, 4, 6, [4, 2], dtype="float16", scale=15.0), 1e-2),
            (f"bfloat16 logits with padding, logits {_shape(2, 3, 6)}",
             case(2, 3, 6, [3, 2], dtype=ml_dtypes.bfloat16), 2e-2),
        ]
        for label, ((ids, logits, eps, pad_id), expected), tol in cases:
            got = _to_numpy(_call(fn, label, ids, logits, label_smoothing=eps, pad_id=pad_id), label, "the loss")
            if got.size != 1:
                raise _Mismatch(f"on {label}, expected a scalar loss (the mean over real tokens), "
                                f"got shape {tuple(got.shape)}")
            _compare(got.reshape(()), np.float64(expected), label, "the loss", rtol=tol, atol=tol)
        return f"correct: {_name(fn)} matches tfm.LabelSmoothedCrossEntropy on {len(cases)} inputs"

    return _run("check_label_smoothed_loss", fn, body)


def check_schedule(fn):
    """Eq. 3's learning rate, `d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)` (§5.3).

    Contract: `fn(iteration, d_model, warmup_steps) -> float`, where `iteration` is the Python int
    Keras passes to a schedule: the optimizer's 0-based update count. The paper counts steps from 1,
    so `step = iteration + 1` (the first update must not get a zero rate).

    Checked against `tfm.TransformerSchedule(d_model, warmup_steps)(iteration)` around the start, the
    peak (`step == warmup_steps`) and far into the decay, for `warmup_steps` 4000, 10 and 1.
    """
    from tfm.schedules import TransformerSchedule

    def body():
        settings = [(512, 4000, [0, 1, 2, 3998, 3999, 4000, 100_000]), (64, 10, list(range(0, 25))), (16, 1, [0, 1, 7])]
        count = 0
        for d_model, warmup, iterations in settings:
            schedule = TransformerSchedule(d_model, warmup)
            for iteration in iterations:
                label = f"iteration={iteration} (step {iteration + 1}), d_model={d_model}, warmup_steps={warmup}"
                got = _to_numpy(_call(fn, label, iteration, d_model, warmup), label, "the rate")
                if got.size != 1:
                    raise _Mismatch(f"on {label}, expected one number, got shape {tuple(got.shape)}")
                expected = float(ops.convert_to_numpy(schedule(iteration)))
                _compare(got.reshape(()), np.float64(expected), label, "the rate", rtol=1e-5, atol=0)
                count += 1
        return f"correct: {_name(fn)} matches tfm.TransformerSchedule at {count} iterations"

    return _run("check_schedule", fn, body)


# ---------------------------------------------------------------------------
# 8-10. Decoding and BLEU (notebook 08)
# ---------------------------------------------------------------------------
def check_length_penalty(fn):
    """GNMT's length penalty `lp(Y) = ((5 + |Y|) / 6)^alpha` (Wu et al., 2016, eq. 14; §6.1: alpha = 0.6).

    Contract: `fn(length, alpha) -> float`, `length` a Python int `|Y| >= 1`, `alpha` a float >= 0.
    Beam search ranks finished hypotheses by `log P(Y | X) / lp(Y)`.

    Checked against `tfm.decoding.search.length_penalty` for lengths 1 to 50 and alpha 0, 0.6 and 1.
    """
    from tfm.decoding.search import length_penalty

    def body():
        cases = [(1, 0.6), (7, 0.6), (50, 0.6), (10, 0.0), (3, 1.0), (2, 0.2)]
        for length, alpha in cases:
            label = f"length={length}, alpha={alpha}"
            got = _to_numpy(_call(fn, label, length, alpha), label, "the penalty")
            if got.size != 1:
                raise _Mismatch(f"on {label}, expected one number, got shape {tuple(got.shape)}")
            expected = float(length_penalty(length, alpha).numpy())
            _compare(got.reshape(()), np.float64(expected), label, "the penalty", rtol=1e-5, atol=1e-6)
        return f"correct: {_name(fn)} matches tfm's length_penalty on {len(cases)} inputs"

    return _run("check_length_penalty", fn, body)


def beam_step_reference(log_probs, token_log_probs):
    """NumPy twin of the ranking rule in `tfm.decoding.search.beam_search` (see `check_beam_step`)."""
    log_probs, token_log_probs = np.asarray(log_probs, "float64"), np.asarray(token_log_probs, "float64")
    batch, k, vocab = token_log_probs.shape
    candidates = (log_probs[:, :, None] + token_log_probs).reshape(batch, k * vocab)  # (B, K, V) -> (B, K*V)
    # Ties go to the lower flat index, as tf.math.top_k breaks them.
    order = np.argsort(-candidates, axis=-1, kind="stable")[:, :k]  # (B, K)
    return np.take_along_axis(candidates, order, axis=-1), order // vocab, order % vocab


def check_beam_step(fn):
    """One step of beam search (§6.1, beam size 4): extend every hypothesis, keep the K best.

    Contract: `fn(log_probs, token_log_probs) -> (scores, beams, tokens)`
        log_probs: float `(B, K)`, `log P(y_1..t | x)` of the K live hypotheses of each sentence
            (`-inf` for an empty slot: at the first step only beam 0 is live).
        token_log_probs: float `(B, K, V)`, `log P(y_t+1 = v | y_1..t, x)` for each hypothesis.
        Returns three `(B, K)` arrays, best first for each sentence: the K best of all `K * V`
        extensions ranked together (not per beam), `scores = log_probs[b, beam] + token_log_probs[b, beam, token]`,
        `beams` int, the hypothesis each extends, and `tokens` int, the id it appends.
    No length penalty here: tfm ranks live hypotheses by `log P` alone and divides by `lp(Y)` only
    when a hypothesis ends (`check_length_penalty`).

    Checked against a NumPy reference of `tfm.decoding.beam_search`'s rule (flat top-K over `K * V`,
    `beam = index // V`, `token = index % V`) on: the first step of a batch of 1; random beams; K = 1
    (greedy); and K = V.
    """
    rng = _rng()

    def log_softmax(x):
        x = x - x.max(axis=-1, keepdims=True)
        return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))

    def case(b, k, v, first=False):
        token_log_probs = log_softmax(2.0 * rng.normal(size=(b, k, v))).astype("float32")
        if first:
            log_probs = np.tile(np.array([0.0] + [-np.inf] * (k - 1), "float32"), (b, 1))
        else:
            log_probs = -np.sort(rng.uniform(0.5, 6.0, size=(b, k)), axis=-1).astype("float32")
        return log_probs, token_log_probs

    def body():
        cases = [
            ("the first step (only beam 0 live), batch 1, K=3, V=6", case(1, 3, 6, first=True)),
            ("random beams, B=2, K=3, V=7", case(2, 3, 7)),
            ("K=1 (greedy), B=2, V=5", case(2, 1, 5)),
            ("K=V=4, batch 1", case(1, 4, 4)),
        ]
        for label, (log_probs, token_log_probs) in cases:
            result = _call(fn, label, log_probs.copy(), token_log_probs.copy())
            if not isinstance(result, (tuple, list)) or len(result) != 3:
                raise _Mismatch(f"on {label}, expected three arrays (scores, beams, tokens), got "
                                f"{type(result).__name__}"
                                + (f" of length {len(result)}" if isinstance(result, (tuple, list)) else ""))
            scores, beams, tokens = beam_step_reference(log_probs, token_log_probs)
            _compare(result[0], scores, label, "scores", rtol=1e-5, atol=1e-5)
            _compare(result[1], beams, label, "beams", exact=True)
            _compare(result[2], tokens, label, "tokens", exact=True)
        return f"correct: {_name(fn)} ranks the K * V extensions as tfm's beam search does on {len(cases)} inputs"

    return _run("check_beam_step", fn, body)


def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def clipped_precision_reference(hypothesis, references, n):
    """`(numerator, denominator)` of BLEU's modified n-gram precision (Papineni et al., 2002, §2.1).

    Each hypothesis n-gram counts at most as often as it occurs in the one reference where it
    occurs most (its count is clipped by the max over references, not their sum).
    """
    counts = _ngrams(list(hypothesis), n)
    most = collections.Counter()
    for reference in references:
        for gram, count in _ngrams(list(reference), n).items():
            most[gram] = max(most[gram], count)
    return sum(min(count, most[gram]) for gram, count in counts.items()), sum(counts.values())


_BLEU_CASES = [
    # Papineni et al., 2002, §2.1, example 2: "the" clipped to 2 of 7.
    ("the the the the the the the", ["the cat is on the mat", "there is a cat on the mat"]),
    # Papineni et al., §2.1, example 1 (candidate 1 and its three references).
    ("It is a guide to action which ensures that the military always obeys the commands of the party",
     ["It is a guide to action that ensures that the military will forever heed Party commands",
      "It is the guiding principle which guarantees the military forces always being under the command of the Party",
      "It is the practical guide for the army always to heed the directions of the party"]),
    # Clipped by the max over references (2 of "a"), not their sum (3).
    ("a a a b a b", ["a a b c", "a c b b"]),
    # Shorter than n for n >= 3: no n-grams at all, (0, 0).
    ("a cat", ["a cat sat"]),
    # One word, one reference that lacks it.
    ("dog", ["cat"]),
]


def check_clipped_precision(fn):
    """BLEU's clipped (modified) n-gram precision p_n for one hypothesis (Papineni et al., 2002, §2.1).

    Contract: `fn(hypothesis, references, n) -> (numerator, denominator)`
        hypothesis: list of str tokens; references: list of lists of str tokens; n: int 1..4.
        numerator: how many of the hypothesis' n-grams match, each n-gram's count clipped to the
            most times it occurs in any single reference; denominator: how many n-grams the
            hypothesis has (`max(0, len(hypothesis) - n + 1)`). Both ints.
    BLEU (`tfm.evaluation`, through sacreBLEU) sums these over the corpus for n = 1..4.

    Checked against a Counter reference (which tests/test_exercises.py checks against sacreBLEU's
    counts) for n = 1..4 on Papineni's two examples, a clip by the max over references, a hypothesis
    shorter than n, and a one-word miss.
    """

    def body():
        for hypothesis, references in _BLEU_CASES:
            hyp, refs = hypothesis.split(), [r.split() for r in references]
            for n in (1, 2, 3, 4):
                short = hypothesis if len(hypothesis) <= 40 else hypothesis[:37] + "..."
                label = f"n={n}, hypothesis {short!r}"
                result = _call(fn, label, list(hyp), [list(r) for r in refs], n)
                if not isinstance(result, (tuple, list)) or len(result) != 2:
                    raise _Mismatch(f"on {label}, expected a pair (numerator, denominator), got "
                                    f"{type(result).__name__}")
                expected = clipped_precision_reference(hyp, refs, n)
                for what, got, want in zip(("numerator", "denominator"), result, expected):
                    got = _to_numpy(got, label, f"the {what}")
                    if got.size != 1 or float(got.reshape(())) != want:
                        raise _Mismatch(f"on {label} with {len(refs)} reference(s), the {what} is wrong: "
                                        f"expected {want}, got {got.tolist()}")
        return f"correct: {_name(fn)} gives BLEU's clipped counts for n = 1..4 on {len(_BLEU_CASES)} hypotheses"

    return _run("check_clipped_precision", fn, body)


# ---------------------------------------------------------------------------
# 11. Tree linearization (notebook 13)
# ---------------------------------------------------------------------------
_TREES = [
    "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))",
    "(S (NN Yes))",
    "(S (VP (VB Go) (ADVP (RB home))) (. !))",
    "(S (NP (NP (DT the) (NN end)) (PP (IN of) (NP (DT the) (NN day)))) (VP (VBZ counts)))",
]


def check_linearize_tree(fn):
    """A parse tree as the token sequence a sequence model writes (§6.3; Vinyals et al., 2015).

    Contract: `fn(tree) -> tokens`
        tree: `nltk.Tree`, e.g. `(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))`.
        Returns a list of str: "(LABEL" when a constituent opens, ")" when it closes (untyped), and
        "XX" for each word with its part-of-speech tag (neither the word nor the tag is written):
        `["(S", "(NP", "XX", "XX", ")", "(VP", "XX", ")", "XX", ")"]`.

    Checked against `tfm.parsing.linearize` on a sentence, a one-word tree, unary chains and deep nesting.
    """
    def body():
        import nltk

        from tfm.parsing import linearize

        for text in _TREES:
            label = f"tree {text}"
            tree = nltk.Tree.fromstring(text)
            got = _call(fn, label, tree.copy(deep=True))
            expected = list(linearize(tree))
            try:
                got = [str(token) for token in got]
            except TypeError:
                raise _Mismatch(f"on {label}, expected a list of str tokens, got {type(got).__name__}") from None
            for i, (want, have) in enumerate(zip(expected, got)):
                if want != have:
                    raise _Mismatch(f"on {label}, token {i} is wrong: expected {want!r}, got {have!r}")
            if len(got) != len(expected):
                raise _Mismatch(f"on {label}, expected {len(expected)} tokens, got {len(got)}"
                                + (f" (the extra ones start with {got[len(expected)]!r})" if len(got) > len(expected)
                                   else f" (missing from {expected[len(got)]!r} on)"))
        return f"correct: {_name(fn)} matches tfm.parsing.linearize on {len(_TREES)} trees"

    return _run("check_linearize_tree", fn, body)

