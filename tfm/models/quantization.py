"""Smaller weights for serving: an int8 or a bfloat16 copy of a trained model.

`quantized_copy(model, "int8")` builds the same model, copies the weights and calls Keras'
`Model.quantize("int8")` (post-training quantization): every `Dense` layer (attention's Q/K/V/output
projections, the FFN; §3.2.2, §3.3) keeps an int8 kernel with one float scale per output unit, and
quantizes its input per row on the fly (abs-max). The shared embedding and output projection
(`TokenEmbedding`, §3.4), the norms and the positional encoding stay in float.

`quantized_copy(model, "bfloat16")` builds the same model under Keras' `"bfloat16"` dtype policy: every
weight is stored in bfloat16 (8 bits of mantissa, float32's range) and every matrix product runs in it,
which processors with bfloat16 instructions (AVX512_BF16, AMX) compute at twice float32's rate or more,
and the decoder's cached keys and values take half the memory. What stays float32 is what the model
already keeps float32 under `mixed_bfloat16` (`docs/guides/training.md`): the attention softmax, the
layer norms' statistics and the logits, so the search ranks hypotheses in float32.

`tfm.decoding.Translator(quantize=...)` and `tfm export --quantize ...` use it; the original model is
left as it was.

What it gives on CPU is measured, not assumed: `benchmarks/decoding_vs_ctranslate2.py` has the int8 and
bfloat16 rows beside float32, with BLEU.
"""

import logging
import warnings

logger = logging.getLogger("tfm.models")

QUANTIZE_MODES = ("int8", "bfloat16")


def validate_quantize(mode):
    """`mode` checked: None (float weights) or one of `QUANTIZE_MODES`, else ValueError naming it.

    Example:
        >>> validate_quantize("int8"), validate_quantize(None)
        ('int8', None)
        >>> validate_quantize("int4")
        Traceback (most recent call last):
        ValueError: quantize='int4': expected None or one of ['int8', 'bfloat16']
    """
    if mode is None or mode in QUANTIZE_MODES:
        return mode
    raise ValueError(f"quantize={mode!r}: expected None or one of {list(QUANTIZE_MODES)}")


def cpu_has_native_bfloat16(cpuinfo="/proc/cpuinfo"):
    """True when the CPU computes bfloat16 in hardware (x86 `avx512_bf16` or `amx_bf16`, Arm `bf16`).

    Without it, bfloat16 is emulated: `mixed_bfloat16` training brings no speed-up over float32, often a
    slow-down (docs/results.md: `benchmarks/rdrop_cost.py`, `benchmarks/train_throughput_multi30k.py`), and a
    bfloat16 serving copy (`quantized_copy(model, "bfloat16")`) decodes slower than float32. None when the flags
    cannot be read (not Linux). `tfm.training.distribute` asks it before mixed precision, `quantized_copy` before
    a bfloat16 copy.

    Args:
        cpuinfo: str. The file listing the CPU's flags.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "cpuinfo")
        >>> _ = open(path, "w").write("flags : fpu sse2 avx512f avx512_bf16\\n")
        >>> cpu_has_native_bfloat16(path), cpu_has_native_bfloat16(os.path.join(tmp.name, "missing"))
        (True, None)
    """
    try:
        with open(cpuinfo) as f:
            flags = set()
            for line in f:
                if line.lower().startswith(("flags", "features")):
                    flags.update(line.split(":", 1)[1].split())
    except OSError:
        return None
    return bool(flags & {"avx512_bf16", "amx_bf16", "bf16"})


def quantized_copy(model, mode="int8"):
    """A copy of `model` with `mode` weights; `model` itself is not changed.

    Args:
        model: a built `Transformer` or `Seq2Seq` (anything with a `config` that its class's `from_preset`
            builds) with its trained weights.
        mode: str, one of `QUANTIZE_MODES`. "int8": Keras' per-channel abs-max int8 kernels in the Dense
            layers, inputs quantized per row at run time. "bfloat16": every weight rounded to bfloat16 and
            the products computed in it (the softmax, norm statistics and logits stay float32).

    Returns:
        a new model of the same config, weights copied, then quantized: int8 keeps the model's dtype policy,
        bfloat16 is built under the `"bfloat16"` policy.

    Raises:
        ValueError: an unknown `mode`, a model already int8, or a bfloat16 copy asked of a bfloat16 model.

    A bfloat16 copy asked on a CPU without hardware bfloat16 (`cpu_has_native_bfloat16()` False) is made all the
    same, with a warning on the `tfm.models` logger: there it decodes slower than the float32 model.

    Example:
        >>> import numpy as np
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1)
        >>> int8 = quantized_copy(model, "int8")
        >>> kernel = int8.encoder.layers[0].ffn.inner._kernel
        >>> kernel.dtype, model.encoder.layers[0].ffn.inner.kernel.dtype   # the original keeps float32
        ('int8', 'float32')
        >>> ids = np.array([[5, 6, 7, 0]])
        >>> float(np.max(np.abs(int8((ids, ids)) - model((ids, ids))))) < 0.05   # logits close, not equal
        True
        >>> bf16 = quantized_copy(model, "bfloat16")
        >>> bf16.encoder.layers[0].ffn.inner.kernel.dtype, bf16((ids, ids)).dtype.name   # logits stay float32
        ('bfloat16', 'float32')
    """
    import keras

    mode = validate_quantize(mode)
    if mode is None:
        raise ValueError("quantize=None: nothing to quantize (pass 'int8')")
    policy = model.dtype_policy
    if getattr(policy, "quantization_mode", None):
        raise ValueError(f"the model is already quantized ({policy.name}); quantize its float original")
    if mode == "bfloat16" and policy.compute_dtype == "bfloat16" and policy.variable_dtype == "bfloat16":
        raise ValueError(f"the model is already bfloat16 ({policy.name}); nothing to quantize")
    if mode == "bfloat16" and cpu_has_native_bfloat16() is False:
        logger.warning("a bfloat16 copy on this CPU: it has no hardware bfloat16 (no avx512_bf16 / amx_bf16 / bf16 "
                       "flag), so here its products are emulated and it decodes slower than the float32 model; "
                       "it is faster only where it runs on a CPU with bfloat16 instructions (serve float32 "
                       "elsewhere: quantize=None)")
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy("bfloat16" if mode == "bfloat16" else policy.name)
    try:
        copy = type(model).from_preset(model.config)
    finally:
        keras.config.set_dtype_policy(previous)
    copy.set_weights(model.get_weights())
    if mode == "bfloat16":
        return copy
    with warnings.catch_warnings():  # "Layer LayerNormalization does not have a `quantize` method": by design
        warnings.filterwarnings("ignore", message=".*does not have a `quantize` method.*")
        copy.quantize(mode)
    return copy
