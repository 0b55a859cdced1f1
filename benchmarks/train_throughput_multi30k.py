"""Training throughput on Multi30k: token-budget bucketing vs fixed-length padding, float32 vs mixed_bfloat16.

    python benchmarks/train_throughput_multi30k.py --data-dir DIR     # small preset, the full measurement
    python benchmarks/train_throughput_multi30k.py --quick            # tiny preset, a short run
    python benchmarks/train_throughput_multi30k.py --xla              # also XLA-compiled train steps
    TFM_DATA_DIR=DIR python benchmarks/train_throughput_multi30k.py

The number measured is non-padding target tokens per second of `model.fit` train
steps (forward, backward, Adam update), the work that teaches the model something.
Four variants are measured side by side in one process:

    bucket / float32   `tfm.data.bucket_by_token_budget` (§5.1), float32
    fixed  / float32   `tfm.data.pad_to_fixed_length`, every batch (tokens_per_batch // L, L)
    bucket / bf16      as above under the `mixed_bfloat16` policy
    fixed  / bf16

With `--xla`, two more: the train step compiled with XLA (`jit_compile`, as `tfm train
--xla`), on bucketed batches padded to their bucket's bound (one program per bucket):

    bucket (to bound) / float32 + XLA
    bucket (to bound) / bf16 + XLA

Their warm-up (tracing and compiling each bucket's program once) is reported apart: a
run of `model.fit` pays it once per bucket shape, within its budget.

Both pipelines spend the same token budget per batch (`tokens_per_batch` positions per
side), so a step costs about the same; bucketing wins by filling those positions with
real tokens. `L` defaults to the longest pair of the corpus (the least padding a
fixed length can have). Each variant gets its own model (same seed) and a fixed set
of cached batches; after a warm-up pass (tracing), rounds alternate the variants in a
rotating order and the medians are compared as ratios.
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data-dir", default=None, help="cache folder holding multi30k/ (default: $TFM_DATA_DIR)")
    p.add_argument("--quick", action="store_true", help="tiny preset, 5000 pairs, 2 rounds of 6 steps")
    p.add_argument("--preset", choices=["tiny", "small", "base"], default=None,
                   help="model size (default: small; tiny with --quick)")
    p.add_argument("--steps", type=int, default=None, help="batches per measurement (default: 12; 6 with --quick)")
    p.add_argument("--rounds", type=int, default=None, help="measurements per variant (default: 4; 2 with --quick)")
    p.add_argument("--tokens-per-batch", type=int, default=None, help="token budget per side (default: the preset's)")
    p.add_argument("--fixed-length", type=int, default=None,
                   help="L of the fixed-length batches (default: the longest pair, rounded up to 8)")
    p.add_argument("--pairs", type=int, default=None, help="training pairs to use (default: all; 5000 with --quick)")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--target-lang", default="de")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--xla", action="store_true",
                   help="also measure XLA-compiled train steps on bucketed batches padded to their bound")
    return p.parse_args(argv)


def find_data_dir(data_dir):
    data_dir = data_dir or os.environ.get("TFM_DATA_DIR")
    if not data_dir:
        sys.exit("Multi30k not given: pass --data-dir DIR or set TFM_DATA_DIR to a folder holding multi30k/"
                 "train.en.gz, ... (see data/README.md); nothing is downloaded by this benchmark")
    return data_dir


def cached_batches(dataset, steps):
    """The first `steps` batches, cached in memory, with their non-padding target token count."""
    import numpy as np
    import tensorflow as tf

    dataset = dataset.take(steps).cache()
    real = positions = batches = 0
    for (_, _), target_out in dataset.as_numpy_iterator():  # also fills the cache
        real += int(np.sum(target_out != 0))
        positions += target_out.size
        batches += 1
    if batches < steps:
        sys.exit(f"only {batches} batches available, fewer than --steps {steps}; use more --pairs")
    # A known length: Keras then does not warn that the data "ran out".
    return dataset.apply(tf.data.experimental.assert_cardinality(batches)), real, positions


def main(argv=None):
    args = parse_args(argv)
    data_dir = find_data_dir(args.data_dir)
    quick = args.quick
    preset = args.preset or ("tiny" if quick else "small")
    steps = args.steps or (6 if quick else 12)
    rounds = args.rounds or (2 if quick else 4)
    pairs_limit = args.pairs or (5000 if quick else None)

    import keras
    import tensorflow as tf

    import tfm
    from tfm.data import bucket_by_token_budget, length_report, load_multi30k, pad_to_fixed_length, train_tokenizer

    try:
        pairs = load_multi30k("train", args.source_lang, args.target_lang, data_dir=data_dir, download=False)
    except FileNotFoundError as error:
        sys.exit(f"Multi30k not found under {data_dir!r}: {error}")
    if pairs_limit:
        pairs = pairs.take(pairs_limit)
    recipe = tfm.Recipe.preset(preset, dropout=0.1)
    tokens_per_batch = args.tokens_per_batch or recipe.training.tokens_per_batch
    tokenizer = train_tokenizer(pairs, recipe.data.subwords, seed=args.seed)
    config = tfm.TransformerConfig.preset(preset, vocab_size=tokenizer.vocab_size)
    report = length_report(pairs, tokenizer, config.max_length)
    longest = max(report.longest_source, report.longest_target)
    length = args.fixed_length or min(config.max_length, -(-longest // 8) * 8)
    batch_size = tokens_per_batch // length

    common = dict(max_length=length, shuffle=True, seed=args.seed, shuffle_buffer=5000)
    pipelines = {
        "bucket": bucket_by_token_budget(pairs, tokenizer, tokens_per_batch=tokens_per_batch, drop_remainder=True,
                                         **common),
        "fixed": pad_to_fixed_length(pairs, tokenizer, batch_size=batch_size, drop_remainder=True, **common),
    }
    if args.xla:  # as `tfm train --xla`: one padded shape per bucket, so XLA compiles one program per bucket
        pipelines["bucket (to bound)"] = bucket_by_token_budget(
            pairs, tokenizer, tokens_per_batch=tokens_per_batch, drop_remainder=True, pad_to_bucket=True, **common)
    data = {name: cached_batches(ds, steps) for name, ds in pipelines.items()}

    variants = [(batching, precision) for precision in ("float32", "mixed_bfloat16")
                for batching in ("bucket", "fixed")]
    if args.xla:
        variants += [("bucket (to bound)", precision + " + XLA") for precision in ("float32", "mixed_bfloat16")]
    models = {}
    for batching, precision in variants:
        keras.utils.set_random_seed(args.seed)
        keras.config.set_dtype_policy(precision.removesuffix(" + XLA"))
        model = tfm.Transformer.from_preset(config)
        model.compile(optimizer=tfm.build_optimizer(preset), loss=tfm.LabelSmoothedCrossEntropy(),
                      jit_compile=precision.endswith(" + XLA"))
        models[batching, precision] = model
    keras.config.set_dtype_policy("float32")

    print(f"tfm {tfm.__version__}, TensorFlow {tf.__version__}, Keras {keras.__version__}, "
          f"{os.cpu_count()} CPU(s), GPUs: {len(tf.config.list_physical_devices('GPU'))}")
    print(f"Multi30k {args.source_lang}->{args.target_lang}: {report}")
    print(f"preset {preset} ({models[variants[0]].count_params():,} parameters, vocab {tokenizer.vocab_size}), "
          f"{tokens_per_batch} tokens per batch; fixed batches ({batch_size}, {length}); "
          f"{steps} steps x {rounds} rounds per variant")
    for name, (_, real, positions) in data.items():
        print(f"  {name:6s} batches: {real} real target tokens in {positions} positions "
              f"({100 * (1 - real / positions):.1f}% padding)")

    def measure(key):
        dataset, real, _ = data[key[0]]
        start = time.perf_counter()
        models[key].fit(dataset, epochs=1, shuffle=False, verbose=0)
        return real / (time.perf_counter() - start)

    warmup = {}
    for key in variants:  # warm-up: trace (and with XLA compile) every shape once
        start = time.perf_counter()
        measure(key)
        warmup[key] = time.perf_counter() - start
    results = {key: [] for key in variants}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[: r % len(variants)]  # rotate: no variant always first
        for key in order:
            results[key].append(measure(key))

    median = {key: statistics.median(values) for key, values in results.items()}
    width = max(24, *(len(f"{batching} / {precision}") for batching, precision in variants))
    print(f"\n{'variant':{width}s} {'median tok/s':>13s} {'min':>9s} {'max':>9s} {'warm-up s':>10s}")
    for key in variants:
        values = results[key]
        print(f"{key[0] + ' / ' + key[1]:{width}s} {median[key]:13.0f} {min(values):9.0f} {max(values):9.0f} "
              f"{warmup[key]:10.1f}")
    print("\nratios of medians (non-padding target tokens/s):")
    for precision in ("float32", "mixed_bfloat16"):
        print(f"  bucket / fixed, {precision:15s} {median['bucket', precision] / median['fixed', precision]:6.2f}x")
    for batching in ("bucket", "fixed"):
        print(f"  mixed_bfloat16 / float32, {batching:6s} "
              f"{median[batching, 'mixed_bfloat16'] / median[batching, 'float32']:6.2f}x")
    for precision in ("float32", "mixed_bfloat16") if args.xla else ():
        print(f"  XLA / no XLA, bucketed, {precision:15s} "
              f"{median['bucket (to bound)', precision + ' + XLA'] / median['bucket', precision]:6.2f}x")
    best = max(median, key=median.get)
    print(f"  best ({best[0]} / {best[1]}) / fixed float32: {median[best] / median['fixed', 'float32']:.2f}x")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import command_line, save_result

    labels = [f"{batching} / {precision}" for batching, precision in median]
    save_result("train_throughput_multi30k", {
        "rows": [{"variant": label, "non_padding_tokens_per_s": round(value, 1),
                  "warmup_s": round(warmup[key], 1)}
                 for label, (key, value) in zip(labels, median.items())],
        "command": command_line(__file__, argv),
        "plot_bars": {"labels": labels, "values": [round(v, 1) for v in median.values()],
                      "xlabel": "non-padding target tokens/s (median)",
                      "title": "Multi30k: token bucketing vs fixed-length padding"},
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
