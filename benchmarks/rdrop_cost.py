"""What R-Drop and mixed precision cost per training step on this machine (issue 27).

    python benchmarks/rdrop_cost.py                 # the m30k_small preset, 2048-token batches
    python benchmarks/rdrop_cost.py --steps 4 --rounds 2

Three variants of one model size are timed side by side in one process, on the same
synthetic batches (64 pairs x 32 tokens per side, i.e. the preset's 2048-token budget):

    float32                  the plain label-smoothed loss
    float32 + R-Drop         `rdrop_alpha=5`: every batch twice (`pair_rows`), the KL term
    mixed_bfloat16           the plain loss under the `mixed_bfloat16` policy

After one warm-up fit per variant (tracing), rounds alternate the variants in a rotating
order; the numbers are medians of training pairs per second (forward, backward, Adam), and
the ratios to float32 are what the recipe search needs: how many fewer epochs R-Drop gets
in the same 90 minutes, and whether bfloat16 helps on this CPU (`cpu_has_native_bfloat16`).
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="m30k_small")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--steps", type=int, default=6, help="batches per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="measurements per variant")
    parser.add_argument("--rdrop-alpha", type=float, default=5.0)
    parser.add_argument("--quick", action="store_true", help="2 steps x 1 round (a smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.rounds = 2, 1

    import keras
    import numpy as np
    import tensorflow as tf

    import tfm
    from tfm.config import TrainingConfig
    from tfm.data.pipeline import pair_rows
    from tfm.distribute import cpu_has_native_bfloat16
    from tfm.training import compile_model

    rng = np.random.default_rng(0)
    pairs, length = 64, 32
    batch = tuple(rng.integers(4, args.vocab_size, (pairs, length)) for _ in range(3))
    plain = tf.data.Dataset.from_tensors(((batch[0], batch[1]), batch[2])).repeat(args.steps)
    variants = {"float32": (0.0, False), "float32 + R-Drop": (args.rdrop_alpha, False),
                "mixed_bfloat16": (0.0, True)}
    models, data = {}, {}
    for name, (alpha, mixed) in variants.items():
        keras.utils.set_random_seed(0)
        config = tfm.TransformerConfig.preset(args.preset, vocab_size=args.vocab_size, rdrop_alpha=alpha)
        training = TrainingConfig(rdrop_alpha=alpha, mixed_precision=mixed)
        models[name], _ = compile_model(config, tf.distribute.get_strategy(), training)
        data[name] = plain.map(pair_rows) if alpha else plain

    def measure(name):
        start = time.perf_counter()
        models[name].fit(data[name], verbose=0)
        return args.steps * pairs / (time.perf_counter() - start)

    for name in variants:
        measure(name)  # tracing
    results = {name: [] for name in variants}
    names = list(variants)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            results[name].append(measure(name))
    median = {name: statistics.median(values) for name, values in results.items()}
    print(f"tfm {tfm.__version__}, TensorFlow {tf.__version__}, {os.cpu_count()} CPU(s), "
          f"hardware bfloat16: {cpu_has_native_bfloat16()}; preset {args.preset}, vocab {args.vocab_size}, "
          f"{pairs} pairs x {length} tokens per batch, {args.steps} steps x {args.rounds} rounds")
    print(f"{'variant':20s} {'pairs/s (median)':>17s} {'min':>7s} {'max':>7s} {'vs float32':>11s}")
    for name in variants:
        values = results[name]
        print(f"{name:20s} {median[name]:17.1f} {min(values):7.1f} {max(values):7.1f} "
              f"{median[name] / median['float32']:10.2f}x")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import save_result

    save_result("rdrop_cost", {
        "rows": [{"variant": name, "pairs_per_s": round(median[name], 1),
                  "vs_float32": round(median[name] / median["float32"], 3)} for name in variants],
        "hardware_bfloat16": cpu_has_native_bfloat16(), "preset": args.preset,
        "command": "python benchmarks/rdrop_cost.py " + " ".join(sys.argv[1:] if argv is None else argv),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
