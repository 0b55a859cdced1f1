"""`tf.distribute` strategies and precision policies for `model.fit`, and Keras 3's multi-worker workaround.

    strategy = make_strategy("mirrored")              # every GPU, else every logical CPU
    keras.config.set_dtype_policy(precision_policy(True))   # mixed_bfloat16 on CPU, mixed_float16 on GPU
"""

import logging
import os

import tensorflow as tf

logger = logging.getLogger("tfm.distribute")


def make_strategy(name="auto"):
    """A `tf.distribute.Strategy` by name.

    Args:
        name: "auto" (`MirroredStrategy` when more than one GPU is visible, else the
            default strategy), "default", "mirrored" (every GPU, else every logical
            CPU device) or "multiworker" (`MultiWorkerMirroredStrategy`, cluster from
            the `TF_CONFIG` environment variable; create it before any other
            TensorFlow op). A `tf.distribute.Strategy` is returned as is.
    """
    if isinstance(name, tf.distribute.Strategy):
        return name
    if name == "multiworker":
        if not os.environ.get("TF_CONFIG"):
            raise ValueError(
                "strategy='multiworker' reads the cluster from the TF_CONFIG environment variable, which is not "
                "set; e.g. TF_CONFIG='{\"cluster\": {\"worker\": [\"host1:12345\", \"host2:12345\"]}, "
                "\"task\": {\"type\": \"worker\", \"index\": 0}}' on the first machine, index 1 on the second")
        return tf.distribute.MultiWorkerMirroredStrategy()
    if name == "default":
        return tf.distribute.get_strategy()
    gpus = tf.config.list_logical_devices("GPU")
    if name == "auto":
        return tf.distribute.MirroredStrategy([d.name for d in gpus]) if len(gpus) > 1 else tf.distribute.get_strategy()
    if name == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    raise ValueError(f"strategy={name!r}: expected auto, default, mirrored or multiworker")


def worker_role(strategy):
    """(is_chief, worker name) in a multi-worker cluster; (True, "chief") otherwise."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None:
        return True, "chief"
    jobs = resolver.cluster_spec().as_dict()
    task_type, task_id = resolver.task_type, resolver.task_id
    if not jobs or task_type is None:
        return True, "chief"
    is_chief = task_type == "chief" or (task_type == "worker" and task_id == 0 and "chief" not in jobs)
    return is_chief, f"{task_type}_{task_id}"


def cpu_has_native_bfloat16(cpuinfo="/proc/cpuinfo"):
    """True when the CPU computes bfloat16 in hardware (x86 `avx512_bf16` or `amx_bf16`, Arm `bf16`).

    Without it, oneDNN emulates bfloat16 and `mixed_bfloat16` brings no speed-up over
    float32, often a slow-down (docs/results.md: `benchmarks/rdrop_cost.py`,
    `benchmarks/train_throughput_multi30k.py`). None when the flags cannot be read (not Linux).
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


def precision_policy(mixed_precision):
    """"float32", or "mixed_float16" on a GPU (Keras adds loss scaling) / "mixed_bfloat16" on a CPU.

    On a CPU without hardware bfloat16 (`cpu_has_native_bfloat16`) a warning says that
    mixed precision will not be faster there."""
    if not mixed_precision:
        return "float32"
    if tf.config.list_logical_devices("GPU"):
        return "mixed_float16"
    if cpu_has_native_bfloat16() is False:
        logger.warning("mixed precision on this CPU: it has no hardware bfloat16 (no avx512_bf16 / amx_bf16 flag), "
                       "so mixed_bfloat16 is emulated and trains no faster than float32, often slower; "
                       "drop --mixed-precision here")
    return "mixed_bfloat16"


def multi_worker_fit_scope(model, strategy, batches):
    """Works around Keras 3 `fit` under `MultiWorkerMirroredStrategy` (keras-team/keras#20585).

    Keras 3.15's TensorFlow trainer fails there twice: before training it
    `strategy.reduce`s one distributed input batch (which the multi-worker strategy
    cannot do for a nested int batch), and each step reduces the scalar logs with
    `axis=0` (invalid for scalars). Here the compiled loss and metrics are built on
    one local batch instead, the model forgets the strategy it was built under (so
    Keras skips the first step), the train / test functions are replaced by ones
    that average the scalar logs over the workers, and `fit` runs inside
    `strategy.scope()`, where Keras finds the strategy for the dataset.

    Returns:
        the context manager to run `fit` in.
    """
    (source_ids, target_in), target_out = next(iter(batches.take(1)))
    with strategy.scope():
        logits = model((source_ids, target_in), training=False)
        model.compute_loss(x=(source_ids, target_in), y=target_out, y_pred=logits)
        model.compute_metrics((source_ids, target_in), target_out, logits)
        model.reset_metrics()

    def make(step):
        def one_step(data):
            logs = strategy.run(step, args=(data,))  # per replica: {name: scalar}
            return {name: strategy.reduce("MEAN", value, axis=None) for name, value in logs.items()}

        one_step = tf.function(one_step, reduce_retracing=True, jit_compile=model.jit_compile)
        return lambda iterator: one_step(next(iterator))

    model._distribute_strategy = None
    model.train_function = make(model.train_step)
    model.test_function = make(model.test_step)
    return strategy.scope()
