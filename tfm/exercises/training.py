"""The checkers of the training exercises (notebook 07): the label-smoothed loss (§5.4) and eq. 3's
learning-rate schedule (§5.3)."""

import numpy as np
from keras import ops

from tfm.exercises.checking import (
    Mismatch,
    as_array,
    call_checked,
    compare,
    function_name,
    run_checker,
    seeded_rng,
    shape_text,
)
from tfm.exercises.messages import Messages, validate_language

# ---------------------------------------------------------------------------
# 6-7. Label smoothing and the schedule (notebook 07)
# ---------------------------------------------------------------------------
_LABEL_SMOOTHED_LOSS = Messages(
    en={
        "no_padding": "y_true {y} without padding, logits {logits}",
        "padding": "y_true {y} with padding (real lengths 4, 2, 1), logits {logits}",
        "single": "batch 1 with one position, logits {logits}",
        "no_smoothing": "label_smoothing=0 with padding, logits {logits}",
        "pad_id": "pad_id=2 with padding, logits {logits}",
        "float16": "float16 logits up to about 40 with padding, logits {logits}",
        "bfloat16": "bfloat16 logits with padding, logits {logits}",
        "not_scalar": "on {label}, expected a scalar loss (the mean over real tokens), got shape {shape}",
        "loss": "the loss",
        "correct": "correct: {fn} matches tfm.LabelSmoothedCrossEntropy on {n} inputs",
    },
    ko={
        "no_padding": "패딩 없는 y_true {y}, logits {logits}",
        "padding": "패딩이 있는 y_true {y} (실제 길이 4, 2, 1), logits {logits}",
        "single": "배치 1, 위치 하나, logits {logits}",
        "no_smoothing": "label_smoothing=0, 패딩 있음, logits {logits}",
        "pad_id": "pad_id=2, 패딩 있음, logits {logits}",
        "float16": "값이 약 40까지 커지는 float16 로짓, 패딩 있음, logits {logits}",
        "bfloat16": "bfloat16 로짓, 패딩 있음, logits {logits}",
        "not_scalar": "{label}에서 스칼라 손실(실제 토큰에 대한 평균)을 돌려주어야 하는데 받은 값의 shape은 "
                      "{shape}입니다",
        "loss": "손실",
        "correct": "정답입니다: {fn} 함수가 입력 {n}개 모두에서 tfm.LabelSmoothedCrossEntropy 결과와 일치합니다",
    },
)


def check_label_smoothed_loss(fn, *, lang=None):
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

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> from tfm.training.losses import LabelSmoothedCrossEntropy
        >>> def label_smoothed_loss(y_true, logits, label_smoothing=0.1, pad_id=0):
        ...     loss = LabelSmoothedCrossEntropy(label_smoothing, pad_id=pad_id)
        ...     return float(loss(y_true, np.asarray(logits, "float32")))
        >>> check_label_smoothed_loss(label_smoothed_loss)
        correct: ...
        True
    """
    import ml_dtypes

    from tfm.training.losses import LabelSmoothedCrossEntropy

    lang = validate_language(lang)
    say = _LABEL_SMOOTHED_LOSS.sentences(lang)
    rng = seeded_rng()

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
            (say("no_padding", y=shape_text(2, 3), logits=shape_text(2, 3, 7)), case(2, 3, 7), 1e-5),
            (say("padding", y=shape_text(3, 4), logits=shape_text(3, 4, 6)), case(3, 4, 6, lengths=[4, 2, 1]), 1e-5),
            (say("single", logits=shape_text(1, 1, 3)), case(1, 1, 3), 1e-5),
            (say("no_smoothing", logits=shape_text(2, 3, 5)), case(2, 3, 5, [3, 1], eps=0.0), 1e-5),
            (say("pad_id", logits=shape_text(2, 3, 5)), case(2, 3, 5, [2, 3], pad_id=2), 1e-5),
            (say("float16", logits=shape_text(2, 4, 6)), case(2, 4, 6, [4, 2], dtype="float16", scale=15.0), 1e-2),
            (say("bfloat16", logits=shape_text(2, 3, 6)), case(2, 3, 6, [3, 2], dtype=ml_dtypes.bfloat16), 2e-2),
        ]
        for label, ((ids, logits, eps, pad_id), expected), tol in cases:
            got = call_checked(fn, label, ids, logits, label_smoothing=eps, pad_id=pad_id)
            got = as_array(got, label, say("loss"))
            if got.size != 1:
                raise Mismatch(say("not_scalar", label=label, shape=tuple(got.shape)))
            compare(got.reshape(()), np.float64(expected), label, say("loss"), rtol=tol, atol=tol)
        return say("correct", fn=function_name(fn), n=len(cases))

    return run_checker("check_label_smoothed_loss", fn, body, lang)


_SCHEDULE = Messages(
    en={
        "point": "iteration={iteration} (step {step}), d_model={d_model}, warmup_steps={warmup}",
        "not_one": "on {label}, expected one number, got shape {shape}",
        "rate": "the rate",
        "correct": "correct: {fn} matches tfm.TransformerSchedule at {n} iterations",
    },
    ko={
        "point": "iteration={iteration} (스텝 {step}), d_model={d_model}, warmup_steps={warmup}",
        "not_one": "{label}에서 숫자 하나를 돌려주어야 하는데 받은 값의 shape은 {shape}입니다",
        "rate": "학습률",
        "correct": "정답입니다: {fn} 함수가 iteration {n}개 모두에서 tfm.TransformerSchedule 결과와 일치합니다",
    },
)


def check_schedule(fn, *, lang=None):
    """Eq. 3's learning rate, `d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)` (§5.3).

    Contract: `fn(iteration, d_model, warmup_steps) -> float`, where `iteration` is the Python int
    Keras passes to a schedule: the optimizer's 0-based update count. The paper counts steps from 1,
    so `step = iteration + 1` (the first update must not get a zero rate).

    Checked against `tfm.TransformerSchedule(d_model, warmup_steps)(iteration)` around the start, the
    peak (`step == warmup_steps`) and far into the decay, for `warmup_steps` 4000, 10 and 1.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def schedule(iteration, d_model, warmup_steps):
        ...     step = iteration + 1
        ...     return d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)
        >>> check_schedule(schedule)
        correct: ...
        True
        >>> def schedule_from_zero(iteration, d_model, warmup_steps):   # forgets that the paper counts from 1
        ...     return schedule(iteration - 1, d_model, warmup_steps)
        >>> check_schedule(schedule_from_zero)
        schedule_from_zero raised ZeroDivisionError on iteration=0 (step 1), d_model=512, warmup_steps=4000 (...).
        False
    """
    from tfm.training.schedules import TransformerSchedule

    lang = validate_language(lang)
    say = _SCHEDULE.sentences(lang)

    def body():
        settings = [(512, 4000, [0, 1, 2, 3998, 3999, 4000, 100_000]), (64, 10, list(range(0, 25))), (16, 1, [0, 1, 7])]
        count = 0
        for d_model, warmup, iterations in settings:
            schedule = TransformerSchedule(d_model, warmup)
            for iteration in iterations:
                label = say("point", iteration=iteration, step=iteration + 1, d_model=d_model, warmup=warmup)
                got = as_array(call_checked(fn, label, iteration, d_model, warmup), label, say("rate"))
                if got.size != 1:
                    raise Mismatch(say("not_one", label=label, shape=tuple(got.shape)))
                expected = float(ops.convert_to_numpy(schedule(iteration)))
                compare(got.reshape(()), np.float64(expected), label, say("rate"), rtol=1e-5, atol=0)
                count += 1
        return say("correct", fn=function_name(fn), n=count)

    return run_checker("check_schedule", fn, body, lang)
