"""`tf.distribute` strategies and precision policies for `model.fit`, and Keras 3's multi-worker workaround.

    strategy = make_strategy("mirrored")              # every GPU, else every logical CPU
    strategy = make_strategy("multiworker", worker_timeout=600)   # TF_CONFIG's cluster; waits up to 10 min for it
    keras.config.set_dtype_policy(precision_policy(True))   # mixed_bfloat16 on CPU, mixed_float16 on GPU
    native_mixed_precision()                          # True on a GPU or a CPU with hardware bfloat16
"""

import contextlib
import json
import logging
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import tensorflow as tf

from tfm._framework import forget_distribute_strategy
from tfm.models.quantization import cpu_has_native_bfloat16

logger = logging.getLogger("tfm.training.distribute")

WORKER_TIMEOUT = 300.0  # seconds a worker waits for the rest of its cluster (--worker-timeout, $TFM_WORKER_TIMEOUT)
COLLECTIVE_JOBS = ("chief", "worker")  # the tasks MultiWorkerMirroredStrategy trains with
TF_CONFIG_EXAMPLE = ("TF_CONFIG='{\"cluster\": {\"worker\": [\"host1:12345\", \"host2:12345\"]}, "
                     "\"task\": {\"type\": \"worker\", \"index\": 0}}' on the first machine, index 1 on the second")


def make_strategy(name="auto", worker_timeout=None):
    """A `tf.distribute.Strategy` by name.

    Args:
        name: "auto" (`MirroredStrategy` when more than one GPU is visible, else the
            default strategy), "default", "mirrored" (every GPU, else every logical
            CPU device) or "multiworker" (`MultiWorkerMirroredStrategy`, cluster from
            the `TF_CONFIG` environment variable; create it before any other
            TensorFlow op). A `tf.distribute.Strategy` is returned as is.
        worker_timeout: float or None. "multiworker": seconds to wait for the other
            tasks of the cluster (`wait_for_cluster`); None = `$TFM_WORKER_TIMEOUT`,
            else 300.

    Raises:
        ValueError: an unknown name, or a missing or malformed TF_CONFIG (named).
        TimeoutError: the cluster did not assemble in time (the missing tasks named).

    Example:
        >>> type(make_strategy("default")).__name__
        '_DefaultDistributionStrategy'
        >>> make_strategy("mirrored").num_replicas_in_sync >= 1   # every GPU, else every logical CPU
        True
    """
    if isinstance(name, tf.distribute.Strategy):
        return name
    if name == "multiworker":
        cluster, task_type, task_index = cluster_from_env()
        timeout = worker_timeout_seconds(worker_timeout)
        wait_for_cluster(cluster, task_type, task_index, timeout)
        return _join_cluster(timeout)
    if name == "default":
        return tf.distribute.get_strategy()
    gpus = tf.config.list_logical_devices("GPU")
    if name == "auto":
        return tf.distribute.MirroredStrategy([d.name for d in gpus]) if len(gpus) > 1 else tf.distribute.get_strategy()
    if name == "mirrored":
        devices = gpus or tf.config.list_logical_devices("CPU")
        return tf.distribute.MirroredStrategy([d.name for d in devices])
    raise ValueError(f"strategy={name!r}: expected auto, default, mirrored or multiworker")


def worker_timeout_seconds(value=None):
    """`value`, else `$TFM_WORKER_TIMEOUT`, else `WORKER_TIMEOUT`, checked to be a positive number of seconds.

    Args:
        value: a number of seconds (or a string that reads as one), or None.

    Returns:
        float.

    Raises:
        ValueError: not a positive finite number (the source named: `worker_timeout` or `TFM_WORKER_TIMEOUT`).

    Example:
        >>> worker_timeout_seconds("600"), worker_timeout_seconds() == float(os.environ.get("TFM_WORKER_TIMEOUT", 300))
        (600.0, True)
    """
    source = "worker_timeout"
    if value is None:
        value, source = os.environ.get("TFM_WORKER_TIMEOUT", WORKER_TIMEOUT), "TFM_WORKER_TIMEOUT"
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"{source}={value!r}: expected a positive number of seconds")
    return seconds


def cluster_from_env():
    """`(cluster, task_type, task_index)` of the `TF_CONFIG` environment variable, checked.

    Takes no arguments: reads `os.environ["TF_CONFIG"]`.

    Raises:
        ValueError: naming TF_CONFIG: unset, not JSON, or not a cluster holding this task.

    Example:
        >>> os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": ["host1:12345", "host2:12345"]},
        ...                                       "task": {"type": "worker", "index": 1}})
        >>> cluster_from_env()
        ({'worker': ['host1:12345', 'host2:12345']}, 'worker', 1)
        >>> del os.environ["TF_CONFIG"]
    """
    text = os.environ.get("TF_CONFIG", "")
    if not text.strip():
        raise ValueError("strategy='multiworker' reads the cluster from the TF_CONFIG environment variable, which is "
                         f"not set; e.g. {TF_CONFIG_EXAMPLE}")
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"the TF_CONFIG environment variable is not valid JSON ({error}): {text[:100]!r}; e.g. "
                         f"{TF_CONFIG_EXAMPLE}") from None
    cluster = config.get("cluster") if isinstance(config, dict) else None
    task = config.get("task") if isinstance(config, dict) else None
    if not (isinstance(cluster, dict) and any(cluster.get(job) for job in COLLECTIVE_JOBS)
            and all(isinstance(tasks, list) and all(isinstance(a, str) and _address(a) for a in tasks)
                    for tasks in cluster.values())):
        raise ValueError(f"TF_CONFIG needs a \"cluster\" of {' or '.join(COLLECTIVE_JOBS)} tasks, each a list of "
                         f"\"host:port\" addresses; got {text[:160]!r}; e.g. {TF_CONFIG_EXAMPLE}")
    index = task.get("index") if isinstance(task, dict) else None
    if (not isinstance(task, dict) or task.get("type") not in cluster or isinstance(index, bool)
            or not isinstance(index, int) or not 0 <= index < len(cluster[task["type"]])):
        raise ValueError(f"TF_CONFIG's \"task\" must name a job of its cluster ({', '.join(cluster)}) and an index "
                         f"in it, e.g. {{\"type\": \"worker\", \"index\": 0}}; got {json.dumps(task)}")
    return cluster, task["type"], index


def _address(text):
    """`(host, port)` of "host:port" (or "[v6]:port"), or None."""
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return (host, int(port)) if host and port.isdigit() and 0 < int(port) < 65536 else None


def _is_chief(cluster, task_type, task_index):
    return task_type == "chief" or (task_type == "worker" and task_index == 0 and "chief" not in cluster)


def planned_role(strategy):
    """`(is_chief, worker name)` of this process, known before the strategy is made (`worker_role` after).

    "multiworker" reads TF_CONFIG (checked, see `cluster_from_env`); other names are the chief.

    Args:
        strategy: a strategy name ("auto", "multiworker", ...) or a `tf.distribute.Strategy`.

    Example:
        >>> planned_role("auto")
        (True, 'chief')
        >>> os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": ["host1:12345", "host2:12345"]},
        ...                                       "task": {"type": "worker", "index": 1}})
        >>> planned_role("multiworker")
        (False, 'worker_1')
        >>> del os.environ["TF_CONFIG"]
    """
    if isinstance(strategy, tf.distribute.Strategy):
        return worker_role(strategy)
    if strategy == "multiworker":
        cluster, task_type, task_index = cluster_from_env()
        return _is_chief(cluster, task_type, task_index), f"{task_type}_{task_index}"
    return True, "chief"


def wait_for_cluster(cluster, task_type, task_index, timeout=WORKER_TIMEOUT, poll=0.25):
    """Returns once every other chief/worker task of `cluster` answers at its address; interruptible.

    TensorFlow's own start-up of a multi-worker strategy blocks inside C++, holding
    the GIL, until every task has joined: no timeout, Ctrl-C waits, and SIGTERM goes to
    its preemption notifier. So a worker first waits here, in Python: it listens on its
    own port (TensorFlow takes the port over afterwards) and connects to the others'
    until all answer, saying whom it waits for.

    Args:
        cluster, task_type, task_index: as `cluster_from_env` returns them.
        timeout: float. Seconds before giving up.
        poll: float. Seconds between two rounds of connection attempts. Defaults to `0.25`.

    Raises:
        TimeoutError: the tasks that did not answer, named with their addresses.
        ValueError: this task's own port is taken by another process.

    Example:
        A one-task cluster has no one to wait for:

        >>> wait_for_cluster({"worker": ["localhost:12345"]}, "worker", 0, timeout=1)
    """
    own = cluster[task_type][task_index]
    peers = {address: f"{job} {i}" for job in COLLECTIVE_JOBS for i, address in enumerate(cluster.get(job, []))
             if (job, i) != (task_type, task_index)}
    if not peers:
        return
    listener = socket.socket(socket.AF_INET6 if ":" in _address(own)[0] else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("", _address(own)[1]))
    except OSError as error:
        listener.close()
        raise ValueError(f"TF_CONFIG gives this task ({task_type} {task_index}) the address {own}, but its port "
                         f"cannot be opened ({error.strerror}): another process (an earlier tfm train?) uses "
                         "it") from None
    listener.listen(16)
    listener.setblocking(False)
    start = time.monotonic()
    said = start
    try:
        while True:
            with contextlib.suppress(OSError):
                while True:  # the others' probes: accept and hang up
                    listener.accept()[0].close()
            for address in list(peers):
                with contextlib.suppress(OSError):
                    if _answers(address, poll):
                        del peers[address]
            if not peers:
                return
            waited = time.monotonic() - start
            if waited >= timeout:
                raise TimeoutError(
                    f"the cluster of TF_CONFIG did not assemble within {timeout:g} s: no answer from "
                    f"{_list(peers)}. Start tfm train there too (same command, TF_CONFIG with that task), check the "
                    f"addresses and the firewall, or wait longer with --worker-timeout (or TFM_WORKER_TIMEOUT)")
            if said == start or time.monotonic() - said >= 60:
                logger.info("%s %s waits for %s (gives up in %.0f s; --worker-timeout)", task_type, task_index,
                            _list(peers), timeout - waited)
                said = time.monotonic()
            time.sleep(poll)
    finally:
        listener.close()


def _answers(address, timeout):
    """Whether a task listens at `address`. A connection that reached itself is no answer: connecting to a port
    of this host that nothing listens on can pick that same port as its own, and TCP then connects the socket to
    itself (a "self-connect"), which would pass a missing local task for one that answered."""
    with socket.create_connection(_address(address), timeout=timeout) as connection:
        return connection.getsockname() != connection.getpeername()


def _list(peers):
    return ", ".join(f"{name} at {address}" for address, name in peers.items())


_WATCHDOG = """
import os, signal, sys, time
parent, timeout, message = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
def give_up(text):
    sys.stderr.write(text + "\\n")
    sys.stderr.flush()
    os.kill(parent, signal.SIGKILL)
    os._exit(0)
signal.signal(signal.SIGINT, lambda *_: give_up("tfm: interrupted while TensorFlow joins the cluster of TF_CONFIG"))
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    if os.getppid() != parent:
        os._exit(0)
    time.sleep(0.5)
give_up(message)
"""


def _join_cluster(timeout):
    """`MultiWorkerMirroredStrategy()`, with a watchdog process for the time TensorFlow blocks.

    `wait_for_cluster` has seen every task answer, but TensorFlow may still block (a
    task that answered, then died): a small child process, which needs no GIL, ends
    this one with a message after `timeout` seconds, or at Ctrl-C. TensorFlow's
    preemption notifier takes SIGTERM over on the way; the handlers in place before
    (e.g. the CLI's) are put back.
    """
    main = threading.current_thread() is threading.main_thread()
    held = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
    message = (f"tfm: TensorFlow did not finish joining the cluster of TF_CONFIG within {timeout:g} s (a task that "
               "answered has gone?); stopped. Start every task again, or raise --worker-timeout")
    watchdog = None
    if sys.executable:
        watchdog = subprocess.Popen([sys.executable, "-c", _WATCHDOG, str(os.getpid()), str(timeout), message],
                                    stdin=subprocess.DEVNULL)
    try:
        return tf.distribute.MultiWorkerMirroredStrategy()
    finally:
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()
        for sig, handler in held.items():
            if handler is not None:
                signal.signal(sig, handler)


def worker_role(strategy):
    """(is_chief, worker name) in a multi-worker cluster; (True, "chief") otherwise.

    Args:
        strategy: a `tf.distribute.Strategy`.

    Example:
        >>> worker_role(tf.distribute.get_strategy())
        (True, 'chief')
    """
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None:
        return True, "chief"
    jobs = resolver.cluster_spec().as_dict()
    task_type, task_id = resolver.task_type, resolver.task_id
    if not jobs or task_type is None:
        return True, "chief"
    is_chief = task_type == "chief" or (task_type == "worker" and task_id == 0 and "chief" not in jobs)
    return is_chief, f"{task_type}_{task_id}"


def native_mixed_precision():
    """True where mixed precision is computed in hardware: a GPU, or a CPU with hardware bfloat16
    (`cpu_has_native_bfloat16`). The rule behind the benchmarks' `--precision auto` and the notebooks' full runs:
    elsewhere bfloat16 is emulated and float32 trains as fast or faster. False when the CPU flags cannot be read.

    Takes no arguments.

    Example:
        >>> native_mixed_precision() in (True, False)
        True

        As the benchmarks and notebooks use it:

            tfm.training.train(config, "multi30k", output=RUN, mixed_precision=native_mixed_precision())
    """
    return bool(tf.config.list_logical_devices("GPU")) or cpu_has_native_bfloat16() is True


def precision_policy(mixed_precision):
    """"float32", or "mixed_float16" on a GPU (Keras adds loss scaling) / "mixed_bfloat16" on a CPU.

    On a CPU without hardware bfloat16 (`cpu_has_native_bfloat16`) a warning says that
    mixed precision will not be faster there.

    Args:
        mixed_precision: bool.

    Example:
        >>> precision_policy(False)
        'float32'
        >>> precision_policy(True) in ("mixed_float16", "mixed_bfloat16")
        True
    """
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
    one local batch instead, the model forgets the strategy it was built under
    (`tfm._framework.forget_distribute_strategy`, so Keras skips the symbolic build
    before the first step), the train / test functions are replaced by ones
    that average the scalar logs over the workers, and `fit` runs inside
    `strategy.scope()`, where Keras finds the strategy for the dataset.

    Args:
        model: the compiled model.
        strategy: the `tf.distribute.MultiWorkerMirroredStrategy` it was compiled under.
        batches: the training dataset of `((source_ids, target_in), target_out)` batches.

    Returns:
        the context manager to run `fit` in.

    Example:
        What `tfm.training.train` does under "multiworker" (every task of TF_CONFIG runs it):

            with multi_worker_fit_scope(model, strategy, train_batches):
                model.fit(train_batches, epochs=10)
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

    forget_distribute_strategy(model)
    model.train_function = make(model.train_step)
    model.test_function = make(model.test_step)
    return strategy.scope()
