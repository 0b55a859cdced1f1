"""What R-Drop and mixed precision cost per training step on this machine (issue 27).

    python benchmarks/rdrop_cost.py                 # the m30k_small preset, 2048-token batches
    python benchmarks/rdrop_cost.py --steps 4 --rounds 2

Three variants of one model size are timed side by side in one process, on the same
synthetic batches (64 pairs x 32 tokens per side, i.e. the preset's 2048-token budget):

    float32                  the plain label-smoothed loss
    float32 + R-Drop         `rdrop_alpha=5`: every batch twice (`pair_rows`), the KL term
    mixed_bfloat16           the plain loss under the `mixed_bfloat16` policy

After one warm-up fit per variant (tracing), rounds alternate the variants in a rotating
order; the numbers are medians of training pairs per second (forward, backward, Adam) over the
rounds in which the process did not sit idle (a round whose CPU share fell under 3/4 of its variant's
best is left out and counted: another job or a paused VM can take the cores; so did, before the dataset
ran without autotuning, a tf.data iterator's teardown, up to 4 s per round), and
the ratios to float32 are what the recipe search needs: how many fewer epochs R-Drop gets
in the same 90 minutes, and whether bfloat16 helps on this CPU (`cpu_has_native_bfloat16`).

    python benchmarks/rdrop_cost.py --levers --steps 20 --rounds 5   # docs/results/regulariser_cost.json

`--levers` times issue 27's regularisers instead, each on top of the preset, all in the precision the
recipe trains in here (`mixed_bfloat16` where the CPU has hardware bfloat16, else float32): the preset
as it is, `attention_dropout=0.1`, `activation_dropout=0.1`, `token_dropout=0.1` and R-Drop, with
the ratios to the preset: what each lever costs in epochs within a fixed budget, measured side by side
rather than read from two 90-minute runs that idle waits may have slowed.
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
    parser.add_argument("--levers", action="store_true",
                        help="time the preset against each of its regularisers (attention, activation and token "
                             "dropout 0.1, R-Drop) in the recipe's precision; docs/results/regulariser_cost.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.rounds = 2, 1

    import keras
    import numpy as np
    import tensorflow as tf

    import tfm
    from tfm.config import Recipe
    from tfm.data.batching import autotune_off
    from tfm.models.quantization import cpu_has_native_bfloat16
    from tfm.training import compile_model
    from tfm.training.pipeline import pair_rows

    rng = np.random.default_rng(0)
    pairs, length = 64, 32
    batch = tuple(rng.integers(4, args.vocab_size, (pairs, length)) for _ in range(3))
    # As tfm's batching functions: no autotuning model thread, whose teardown could add seconds to a round.
    plain = tf.data.Dataset.from_tensors(((batch[0], batch[1]), batch[2])).repeat(args.steps)
    plain = plain.with_options(autotune_off())
    # name -> (model config overrides, mixed precision); R-Drop is `rdrop_alpha` in both configs.
    if args.levers:
        mixed = cpu_has_native_bfloat16()
        variants = {args.preset: ({}, mixed)}
        for field in ("attention_dropout", "activation_dropout", "token_dropout"):
            variants[f"+ {field}=0.1"] = ({field: 0.1}, mixed)
        variants[f"+ R-Drop (alpha {args.rdrop_alpha:g})"] = ({"rdrop_alpha": args.rdrop_alpha}, mixed)
    else:
        variants = {"float32": ({}, False), "float32 + R-Drop": ({"rdrop_alpha": args.rdrop_alpha}, False),
                    "mixed_bfloat16": ({}, True)}
    base = next(iter(variants))
    models, data = {}, {}
    for name, (overrides, mixed) in variants.items():
        keras.utils.set_random_seed(0)
        alpha = overrides.get("rdrop_alpha", 0.0)
        recipe = Recipe.preset(args.preset, vocab_size=args.vocab_size, rdrop_alpha=alpha, mixed_precision=mixed)
        models[name], _ = compile_model(recipe, tf.distribute.get_strategy())
        data[name] = plain.map(pair_rows) if alpha else plain

    def measure(name):
        """(pairs per second, CPU seconds per second): a low CPU share means the process sat idle in the round."""
        start, cpu = time.perf_counter(), time.process_time()
        models[name].fit(data[name], verbose=0)
        seconds = time.perf_counter() - start
        return args.steps * pairs / seconds, (time.process_time() - cpu) / seconds

    for name in variants:
        measure(name)  # tracing
    measured = {name: [] for name in variants}
    names = list(variants)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            measured[name].append(measure(name))
    # A round in which this process got under 3/4 of the CPU share of the variant's best round sat idle part
    # of the time (a core taken away, a paused VM, a wait inside TensorFlow): left out, and counted, so that
    # its speed is not read as the variant's. Per variant, since variants differ in how many cores they keep
    # busy (R-Drop ~1.4, the rest ~1.9 here), and against the best round, so that a variant idle in most
    # rounds still shows it.
    best = {name: max(share for _, share in rounds) for name, rounds in measured.items()}
    stalled = {name: sum(share < 0.75 * best[name] for _, share in rounds) for name, rounds in measured.items()}
    results = {name: [speed for speed, share in rounds if share >= 0.75 * best[name]]
               for name, rounds in measured.items()}
    median = {name: statistics.median(values) for name, values in results.items()}
    print(f"tfm {tfm.__version__}, TensorFlow {tf.__version__}, {os.cpu_count()} CPU(s), "
          f"hardware bfloat16: {cpu_has_native_bfloat16()}; preset {args.preset}, vocab {args.vocab_size}, "
          f"{pairs} pairs x {length} tokens per batch, {args.steps} steps x {args.rounds} rounds"
          + (f", all {'mixed_bfloat16' if variants[base][1] else 'float32'}" if args.levers else ""))
    width = max(20, *(len(name) for name in variants))
    print(f"{'variant':{width}s} {'pairs/s (median)':>17s} {'min':>7s} {'max':>7s} {'vs ' + base:>{len(base) + 5}s}"
          f" {'stalled rounds':>15s} {'best CPU share':>15s}")
    for name in variants:
        values = results[name]
        print(f"{name:{width}s} {median[name]:17.1f} {min(values):7.1f} {max(values):7.1f} "
              f"{median[name] / median[base]:{len(base) + 4}.2f}x {stalled[name]:>9d} of {args.rounds} "
              f"{best[name]:15.2f}")
    print("CPU share: CPU seconds per second; a stalled round (under 3/4 of its variant's best) "
          "is left out of the medians")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import command_line, save_result

    ratio = "vs_preset" if args.levers else "vs_float32"
    save_result("regulariser_cost" if args.levers else "rdrop_cost", {
        "rows": [{"variant": name, "pairs_per_s": round(median[name], 1),
                  ratio: round(median[name] / median[base], 3), "stalled_rounds": stalled[name],
                  "rounds": [[round(speed, 1), round(share, 2)] for speed, share in measured[name]]}
                 for name in variants],
        "hardware_bfloat16": cpu_has_native_bfloat16(), "preset": args.preset,
        "mixed_bfloat16": variants[base][1] if args.levers else None,
        "command": command_line(__file__, argv),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
