"""Base preset training throughput on a GPU: fp32 vs mixed precision, with and without XLA.

    python benchmarks/gpu_throughput.py            # needs a GPU; says it skipped without one
    python benchmarks/gpu_throughput.py --tokens 25000 --steps 20

Measures target tokens/s of `model.fit`-equivalent train steps (`train_on_batch`) for the base
preset (6+6 layers, d_model 512, vocabulary 37000) on batches of about `--tokens` target tokens,
alternating the four settings round by round and reporting medians. CI never runs this.
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import alternate, command_line, median, save_result, timed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=25000, help="target tokens per batch (default 25000, §5.1)")
    parser.add_argument("--length", type=int, default=50, help="sequence length (default 50)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        print("skipped: no GPU visible to TensorFlow (this benchmark needs one; CI never runs it)")
        save_result("gpu_throughput", {"skipped": "no GPU"})
        return 0
    import keras
    import numpy as np

    import tfm

    batch = max(1, args.tokens // args.length)
    rng = np.random.default_rng(0)
    config = tfm.TransformerConfig.base(max_length=args.length)
    src = rng.integers(4, config.vocab_size, (batch, args.length)).astype("int32")
    tgt = rng.integers(4, config.vocab_size, (batch, args.length + 1)).astype("int32")
    steps = {}
    for policy in ("float32", "mixed_float16", "mixed_bfloat16"):
        for xla in (False, True):
            keras.config.set_dtype_policy(policy)
            model = tfm.Transformer.from_preset(config)
            model.compile(optimizer=tfm.build_optimizer("base"), loss=tfm.LabelSmoothedCrossEntropy(0.1),
                          jit_compile=xla)
            keras.config.set_dtype_policy("float32")

            def step(model=model):
                return float(model.train_on_batch((src, tgt[:, :-1]), tgt[:, 1:]))

            for _ in range(3):
                step()
            steps[f"{policy}{' + XLA' if xla else ''}"] = step
    tokens = batch * args.length
    results = alternate(list(steps), args.rounds, lambda name: tokens / timed(steps[name], args.steps))
    device = tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")
    print(f"{device}; base preset, batch {batch} x {args.length} = {tokens} target tokens")
    rows = []
    base = median(results["float32"])
    for name, values in results.items():
        rate = median(values)
        rows.append({"setting": name, "tokens_per_s": rate, "rounds": values, "ratio": rate / base})
        print(f"  {name:24s} {rate:10.0f} tokens/s  {rate / base:5.2f}x fp32")
    save_result("gpu_throughput", {"device": device, "rows": rows, "batch": batch, "length": args.length,
                                   "command": command_line(__file__, argv)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
