"""The checkers of the architecture exercises: how far back a stack of (dilated) causal convolutions reaches, the
path-length column of Table 1 (notebook 10), and the parameter count of a Transformer config, Table 3's
"params" column (notebook 11)."""

import numpy as np

from tfm.exercises.checking import (
    Mismatch,
    as_array,
    call_checked,
    compare,
    format_value,
    function_name,
    run_checker,
)
from tfm.exercises.messages import Messages, validate_language


# ---------------------------------------------------------------------------
# 17. The reach of a convolution stack (notebook 10)
# ---------------------------------------------------------------------------
def _measured_reach(n, kernel_size, dilations):
    """bool `(n,)`: where `d y_{n-1} / d x_j` is not zero through causal `keras.layers.Conv1D`s, as notebook 10
    measures it (kernels of ones and no bias: the gradient counts the paths, so only a missing path gives 0)."""
    import keras
    import tensorflow as tf

    layers = [keras.layers.Conv1D(1, kernel_size, padding="causal", dilation_rate=d, use_bias=False,
                                  kernel_initializer="ones", dtype="float32") for d in dilations]
    x = tf.ones((1, n, 1))  # (B, n, d)
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = x
        for layer in layers:
            h = layer(h)  # (B, n, d): causal padding keeps the length
        last = h[0, -1, 0]  # the last output position
    return tape.gradient(last, x).numpy()[0, :, 0] > 0  # (n,)


_RECEPTIVE_FIELD = Messages(
    en={
        "case": "n={n}, kernel_size={k}, dilations {dilations}",
        "reached": "the reached inputs",
        "not_boolean": "on {label}, the result holds values other than True/False (e.g. {value}); return booleans, "
                       "True = output n - 1 depends on input j",
        "correct": "correct: {fn} matches the gradient through causal keras.layers.Conv1D stacks on {n} stacks",
    },
    ko={
        "case": "n={n}, kernel_size={k}, dilations {dilations}",
        "reached": "닿는 입력",
        "not_boolean": "{label}에서 결과에 True/False가 아닌 값이 들어 있습니다 (예: {value}). boolean 값을 돌려주세요 "
                       "(True = 출력 n - 1이 입력 j에 의존함)",
        "correct": "정답입니다: {fn} 함수가 스택 {n}개 모두에서 인과 keras.layers.Conv1D 스택을 거친 그래디언트 결과와 "
                   "일치합니다",
    },
)


def check_receptive_field(fn, *, lang=None):
    """Which inputs the last output of a stack of causal (dilated) convolutions depends on: Table 1's maximum path
    length for convolutional layers, `O(n / k)` contiguous and `O(log_k n)` dilated (Vaswani et al., 2017, §4).

    Contract: `fn(n, kernel_size, dilations) -> reached`
        n: int, the sequence length; kernel_size: int `k >= 2`; dilations: tuple of ints, one causal
            convolution layer per entry, applied in order (empty: no layer at all).
        A causal layer with dilation `d` computes output `t` from inputs `t, t - d, ..., t - (k - 1) d`.
        Returns bool `(n,)`: True at `j` where output `n - 1` of the whole stack depends on input `j`
        (0/1 integers are read as booleans). Dilations that grow faster than the reach leave holes.

    Checked against the gradient `d y_{n-1} / d x_j` through `keras.layers.Conv1D(padding="causal",
    dilation_rate=d)` layers, measured as notebook 10's section 3 does, on: no layer; that section's two stacks
    (4 contiguous layers with `k = 3`; dilations 1, 3, 9); the dilations 1, 2, 4, 8 on a long and on a short
    sequence; `k = 2` with doubling dilations; and dilations that leave holes.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every stack matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def receptive_field(n, kernel_size, dilations):
        ...     offsets = {0}                                         # output n - 1 reads input n - 1 - offset
        ...     for d in dilations:
        ...         offsets = {o + i * d for o in offsets for i in range(kernel_size)}
        ...     reached = np.zeros(n, bool)
        ...     reached[[n - 1 - o for o in offsets if o < n]] = True
        ...     return reached
        >>> check_receptive_field(receptive_field)
        correct: receptive_field matches the gradient through causal keras.layers.Conv1D stacks on 9 stacks.
        True
    """
    lang = validate_language(lang)
    say = _RECEPTIVE_FIELD.sentences(lang)
    # Notebook 10's two stacks first (4 contiguous layers; dilations growing by k), then doubling dilations on a
    # long and a short sequence, k = 2, and dilations that leave holes.
    stacks = [(12, 3, ()), (64, 3, (1, 1, 1, 1)), (64, 3, (1, 3, 9)), (40, 3, (1, 2, 4, 8)), (8, 3, (1, 2, 4, 8)),
              (20, 2, (1, 2, 4)), (10, 3, (2,)), (24, 3, (1, 4)), (30, 2, (1, 3, 9))]

    def body():
        for n, k, dilations in stacks:
            label = say("case", n=n, k=k, dilations=dilations)
            got = as_array(call_checked(fn, label, n, k, dilations), label, say("reached"))
            if got.dtype != bool:
                if got.size and not np.all(np.isin(got, (0, 1))):
                    raise Mismatch(say("not_boolean", label=label,
                                       value=format_value(got[~np.isin(got, (0, 1))][0])))
                got = got.astype(bool)
            compare(got, _measured_reach(n, k, dilations), label, say("reached"), exact=True)
        return say("correct", fn=function_name(fn), n=len(stacks))

    return run_checker("check_receptive_field", fn, body, lang)


# ---------------------------------------------------------------------------
# 18. The parameters of a Transformer config (notebook 11)
# ---------------------------------------------------------------------------
_PARAMETER_COUNT = Messages(
    en={
        "config": "TransformerConfig.tiny({overrides})",
        "count": "the parameter count",
        "not_one": "on {label}, expected one number, got shape {shape}",
        "wrong": "on {label}, the parameter count should be {expected}, got {got} ({difference} too {side})",
        "many": "many",
        "few": "few",
        "correct": "correct: {fn} matches count_params() of tfm.Transformer.from_preset(config) for {n} configs",
    },
    ko={
        "config": "TransformerConfig.tiny({overrides})",
        "count": "파라미터 수",
        "not_one": "{label}에서 숫자 하나를 돌려주어야 하는데 받은 값의 shape은 {shape}입니다",
        "wrong": "{label}에서 파라미터 수는 {expected}이어야 하는데 {got}입니다 ({difference}개 {side})",
        "many": "많음",
        "few": "부족",
        "correct": "정답입니다: {fn} 함수가 config {n}개 모두에서 tfm.Transformer.from_preset(config)의 "
                   "count_params() 결과와 일치합니다",
    },
)


def check_parameter_count(fn, *, lang=None):
    """The number of parameters of a Transformer, Table 3's "params" column (Vaswani et al., 2017, §3, §6.2).

    Contract: `fn(config) -> int`
        config: a `tfm.TransformerConfig` with the paper's shared embeddings (`share_embeddings=True`: one
            `(V, D)` matrix embeds source and target and is the pre-softmax projection, §3.4, no output bias)
            and post-LN layers (`norm_first=False`: no final LayerNorm). Read `num_layers` (N, in the encoder
            and in the decoder), `d_model` (D), `num_heads` (h), `d_ff`, `vocab_size` (V), `key_dim` and
            `value_dim` (per head; None = D / h, each on its own), `positional` and, for `"learned"` positions,
            `max_length` and `extra_positions`.
        Every Dense layer has a bias: an attention block is `W^Q`, `W^K` (`D x h d_k`), `W^V` (`D x h d_v`) and
        `W^O` (`h d_v x D`), each with its bias; the feed-forward network `D x d_ff` and `d_ff x D` with
        biases; each LayerNorm a scale and an offset of `D`. An encoder layer has self-attention, the
        feed-forward network and 2 LayerNorms; a decoder layer adds cross-attention and a third LayerNorm.
        Sinusoidal positions have no parameters; learned ones are two tables (source, target) of
        `max_length + extra_positions + 1` rows of `D`.
        Returns the total number of parameters, an int.

    Checked against `tfm.Transformer.from_preset(config).count_params()` for the tiny preset, Table 3 row B's
    smaller `d_k` (`d_v` unchanged), row C's fewer layers and narrower `d_ff` and `d_model`, and row E's
    learned positions.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every config matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> def parameter_count(config):                     # embeddings and feed-forward networks only
        ...     d, n = config.d_model, config.num_layers
        ...     return config.vocab_size * d + 2 * n * (2 * d * config.d_ff + config.d_ff + d)
        >>> check_parameter_count(parameter_count)
        On TransformerConfig.tiny(vocab_size=50, max_length=16), the parameter count should be 236672, got 135552 ...
        False
    """
    from tfm.config.configs import TransformerConfig
    from tfm.models.transformer import Transformer

    lang = validate_language(lang)
    say = _PARAMETER_COUNT.sentences(lang)
    base = {"vocab_size": 50, "max_length": 16}
    variants = [{}, {"key_dim": 4}, {"num_layers": 1, "d_ff": 128}, {"d_model": 32}, {"positional": "learned"}]

    def body():
        for variant in variants:
            overrides = {**base, **variant}
            label = say("config", overrides=", ".join(f"{k}={v!r}" for k, v in overrides.items()))
            config = TransformerConfig.tiny(**overrides)
            got = as_array(call_checked(fn, label, config), label, say("count")).reshape(-1)
            if got.size != 1:
                raise Mismatch(say("not_one", label=label, shape=tuple(got.shape)))
            expected = int(Transformer.from_preset(config).count_params())
            if got[0] != expected:
                difference = float(got[0]) - expected
                raise Mismatch(say("wrong", label=label, expected=expected, got=format_value(got[0]),
                                   difference=format_value(abs(difference)),
                                   side=say("many" if difference > 0 else "few")))
        return say("correct", fn=function_name(fn), n=len(variants))

    return run_checker("check_parameter_count", fn, body, lang)
