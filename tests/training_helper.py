"""Tiny training runs shared by the tests, and `tfm.training.train` in a fresh process.

`SMALL` (fields of the tiny recipe, any part) and `RUN` (the rest of a `train` call) are a run small enough for
2 shared CPU cores (a few seconds an epoch): `train(small_recipe(), output=..., epochs=..., **RUN)`; `train_argv`
is the same run as a `tfm train` command line.

Strategies that must be configured before TensorFlow starts (logical CPU devices,
`MultiWorkerMirroredStrategy` from `TF_CONFIG`) need their own process:

    python tests/training_helper.py '{"logical_cpus": 2, "result": "out.json",
                                      "recipe": {...Recipe.preset("tiny") fields...},
                                      "train": {...keyword arguments of train...}}'

Writes `{"history": ..., "replicas": ...}` to `result`; with `"sessions": [{...train keyword arguments...}, ...]`
instead of `"train"`, runs each in turn and writes `{"states": [digests of each session's final state], ...}`.
"""

import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = dict(num_layers=1, d_model=16, num_heads=2, d_ff=32, dropout=0.0, subwords=80, warmup_steps=20,
             tokens_per_batch=256, max_length=24, max_pair_length=24, steps_per_epoch=2, validation=False)
RUN = dict(verbose=0, strategy="default")


def small_recipe(**fields):
    """`Recipe.preset("tiny", **SMALL, **fields)`: the tiny recipe at `SMALL`'s sizes."""
    from tfm.config import Recipe

    return Recipe.preset("tiny", **{**SMALL, **fields})


def train_argv(output, epochs, *extra):
    """`tfm train` arguments for `train(small_recipe(validation=True), output=output, epochs=epochs, **RUN)`
    (the CLI validates on the numbers task's validation split)."""
    argv = ["train", "--output", str(output), "--epochs", str(epochs),
            "--steps-per-epoch", str(SMALL["steps_per_epoch"]), "--keep-checkpoints", "5", "--strategy", "default",
            "--vocab-size", str(SMALL["subwords"]),
            "--max-length", str(SMALL["max_length"]), "--tokens-per-batch", str(SMALL["tokens_per_batch"])]
    argv += [arg for key in ("num_layers", "d_model", "num_heads", "d_ff", "dropout", "warmup_steps")
             for arg in ("--set", f"{key}={SMALL[key]}")]
    return argv + list(extra)

def copy_run(run_dir, tmp_path):
    """A copy of a run folder under `tmp_path` (tests that damage a run work on a copy)."""
    import shutil

    target = str(tmp_path / "copy")
    shutil.copytree(run_dir, target)
    return target


def fail_fsync(monkeypatch, code, name):
    """os.fsync raises OSError(code) for the files whose path holds `name`: written, not yet on the disk."""
    real = os.fsync

    def fsync(fd):
        if name in os.readlink(f"/proc/self/fd/{fd}"):
            raise OSError(code, os.strerror(code))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def stop_inside_second_epoch(command, run_dir, log, signum, after=0.2, timeout=300):
    """Starts `command` (a `tfm train` into `run_dir`, output to the file `log`), waits until its first epoch is
    backed up, lets epoch 2 run for `after` seconds, sends it `signum` (SIGTERM, SIGKILL) and waits for it to end;
    kills it on any failure. Returns its exit status; fails when the run ended before it could be stopped."""
    import signal
    import subprocess
    import time

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    metadata = os.path.join(str(run_dir), "backup", "training_metadata.json")
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=root, env=child_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + timeout
        while time.time() < deadline and process.poll() is None:
            try:
                with open(metadata) as f:
                    if json.load(f)["epoch"] == 1:  # epoch 1 is backed up: epoch 2 runs
                        break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.02)
        with open(log) as f:
            assert process.poll() is None, f"the run ended before it could be stopped:\n{f.read()[-3000:]}"
        time.sleep(after)
        process.send_signal(signum)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert signum != signal.SIGTERM or process.returncode != 0
    return process.returncode


def free_ports(n):
    """`n` free TCP ports on 127.0.0.1 (for TF_CONFIG clusters)."""
    import socket

    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def child_env(**extra):
    """The environment of a child TensorFlow process: one thread pool thread each, so several share 2 cores."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow", TF_NUM_INTRAOP_THREADS="1",
               TF_NUM_INTEROP_THREADS="1", **extra)
    return env


def main(spec):
    import tensorflow as tf

    if spec.get("logical_cpus"):
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * int(spec["logical_cpus"]))

    from tfm.training import train

    recipe = small_recipe(**spec.get("recipe", {}))
    if "sessions" in spec:  # several train calls in this process (a run and its resumed twin); each one's state
        states = []
        for session in spec["sessions"]:
            result = train(recipe, **{**RUN, **session})
            states.append(_state_digests(result.model))
        output = {"states": states}
    else:
        result = train(recipe, **spec["train"])
        output = {"history": result.history}
    output["replicas"] = result.model.distribute_strategy.num_replicas_in_sync
    with open(spec["result"], "w") as f:
        json.dump(output, f)


def _state_digests(model):
    """SHA-256 of each weight, optimizer variable and random state of `model`, in order (bit-for-bit comparable)."""
    import hashlib

    import numpy as np

    from tfm.training.callbacks import random_state

    def digests(variables):
        return [hashlib.sha256(np.ascontiguousarray(np.array(v)).tobytes()).hexdigest() for v in variables]

    return {"weights": digests(model.weights), "optimizer": digests(model.optimizer.variables),
            "random_state": random_state(model)}


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
