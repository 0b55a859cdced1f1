"""Peak resident memory per preset during training (one process per preset).

    python benchmarks/memory.py                 # tiny, small, base, big
    python benchmarks/memory.py --presets tiny small --tokens 2048

Each preset trains a few steps in a fresh subprocess on batches of `--tokens` target tokens
(batch x length 32, vocabulary = the preset's) and reports the process's peak RSS
(`resource.getrusage(...).ru_maxrss`), next to the parameter count and the bytes that weights,
gradients and Adam's two moments need in float32 (16 bytes per parameter). The paper's
25k-token batches for base/big do not fit a 24 GiB CPU machine; the token count is printed.
"""

import argparse
import json
import os
import resource
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, save_result

LENGTH = 32


def child(preset, tokens, steps, mixed):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import numpy as np

    import tfm

    if mixed:
        keras.config.set_dtype_policy("mixed_bfloat16")
    config = tfm.TransformerConfig.preset(preset, max_length=LENGTH)
    model = tfm.Transformer.from_preset(config)
    model.compile(optimizer=tfm.build_optimizer(preset), loss=tfm.LabelSmoothedCrossEntropy(0.1))
    batch = max(1, tokens // LENGTH)
    rng = np.random.default_rng(0)
    src = rng.integers(4, config.vocab_size, (batch, LENGTH)).astype("int32")
    tgt = rng.integers(4, config.vocab_size, (batch, LENGTH + 1)).astype("int32")
    for _ in range(steps):
        model.train_on_batch((src, tgt[:, :-1]), tgt[:, 1:])
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"preset": preset, "params": model.count_params(), "batch": batch,
                      "tokens": batch * LENGTH, "peak_rss_mib": peak_kib / 1024, "mixed": mixed}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["tiny", "small", "base", "big"])
    parser.add_argument("--tokens", type=int, default=4096, help="target tokens per batch (default 4096)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--mixed-precision", action="store_true", help="mixed_bfloat16")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.tokens, args.steps, args.mixed_precision)
    rows = []
    print(f"{'preset':8s} {'params':>9s} {'batch':>9s} {'peak RSS':>10s} {'16 B/param':>11s}")
    for preset in args.presets:
        cmd = [sys.executable, __file__, "--child", preset, "--tokens", str(args.tokens), "--steps", str(args.steps)]
        if args.mixed_precision:
            cmd.append("--mixed-precision")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
        if proc.returncode != 0 or not lines:
            print(f"{preset:8s} failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
            rows.append({"preset": preset, "error": proc.returncode})
            continue
        row = json.loads(lines[-1])
        rows.append(row)
        state_mib = row["params"] * 16 / 2**20
        print(f"{preset:8s} {row['params'] / 1e6:8.1f}M {row['batch']:>4d}x{LENGTH:<4d} "
              f"{row['peak_rss_mib']:8.0f} MiB {state_mib:8.0f} MiB")
    path = save_result("memory", {"rows": rows, "length": LENGTH, "tokens": args.tokens,
                                  "command": command_line(__file__, argv)})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
