"""A beam step's kernels, two ways each, side by side: what issue 59's levers change in one product, before a search.

    python benchmarks/step_kernels.py                 # both trained runs' shapes, 64 and 256 rows
    python benchmarks/step_kernels.py --rounds 3 --repeats 5   # a smoke run

Each pair computes the same values two ways on one thread, in alternating rounds (medians), and says whether the
two give the same floats, bit for bit:

    output projection   the shared table read as `E^T` at every step and PAD/START banned by a (1, V) add
                        (before), or a row-major `(D, V)` copy made once per search and the ban as a (V,) bias
                        that grappler fuses into the product (`DecodingState.prepared`, kept); then the softmax
    Q, K and V          three `(D, D)` products with their biases, or one `(D, 3D)` product split in three
                        (lever 2, measured, not kept: no gain on these shapes)
    normaliser          the vocabulary softmax, then the log of the 2k chosen probabilities (the search's), or
                        `log_softmax` (lever 4's one pass, measured: not faster, and other floats)
    top-k chunks        the search's top 2k = 8 of each row's V logits in two passes (`search_steps.top_k`),
                        with chunks of `int(sqrt(V))` entries, the last one padded where that does not divide V
                        (before: 90 chunks of 89 for V = 8000, a padded copy of the logits), or of
                        `search_steps.chunk_size(V, k)`, a divisor of V near `sqrt(V / k)` (kept)

Rows are hypotheses in one step: 64 = a batch of 16 sentences x beam 4, 256 = 64 x 4 (a SavedModel request).
Writes docs/results/NAME.json (default step_kernels), its command with `TF_ENABLE_ONEDNN_OPTS` where that is set
(TensorFlow's oneDNN kernels instead of its own; on by default only on CPUs with AVX512-VNNI, BF16 or AMX).
"""

import argparse
import os
import shlex
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from common import alternate, command_line, median, save_result, timed

SHAPES = {"m30k": (128, 10000), "m30k_small": (256, 8000)}  # (d_model, vocab): the two trained runs' shapes
PAIRS = ("output projection", "Q, K and V", "normaliser", "top-k chunks")  # kernel_pairs' names


def kernel_pairs(d_model, vocab, rows, seed=0):
    """`{pair name: (before, after)}`, each a no-argument callable returning a tensor or a list of tensors."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    x = tf.constant(rng.normal(size=(rows, d_model)).astype("float32"))
    table = tf.Variable(rng.normal(scale=d_model**-0.5, size=(vocab, d_model)).astype("float32"))
    banned = np.where(np.arange(vocab) < 3, -np.inf, 0.0).astype("float32")  # PAD, UNK, START: any 3 ids
    kernels = [tf.Variable(rng.normal(scale=d_model**-0.5, size=(d_model, d_model)).astype("float32")) for _ in "qkv"]
    biases = [tf.Variable(rng.normal(scale=0.1, size=(d_model,)).astype("float32")) for _ in "qkv"]
    fused_kernel, fused_bias = tf.Variable(tf.concat(kernels, 1)), tf.Variable(tf.concat(biases, 0))
    chosen = tf.constant(rng.integers(3, vocab, size=(rows, 8)).astype("int32"))  # 2k tokens per row

    @tf.function(autograph=False)
    def projection_before():
        return tf.nn.softmax(tf.matmul(x, tf.transpose(table)) + banned[np.newaxis])

    row_major = tf.transpose(table)  # once per search

    @tf.function(autograph=False)
    def projection_after():
        return tf.nn.softmax(tf.nn.bias_add(tf.matmul(x, row_major), banned))

    @tf.function(autograph=False)
    def qkv_three():
        return [tf.nn.bias_add(tf.matmul(x, k), b) for k, b in zip(kernels, biases)]

    @tf.function(autograph=False)
    def qkv_one():
        return tf.split(tf.nn.bias_add(tf.matmul(x, fused_kernel), fused_bias), 3, axis=1)

    logits = tf.constant(rng.normal(size=(rows, vocab)).astype("float32"))

    @tf.function(autograph=False)
    def softmax_then_log():
        return tf.math.log(tf.gather(tf.nn.softmax(logits), chosen, batch_dims=1))

    @tf.function(autograph=False)
    def log_softmax():
        return tf.gather(tf.nn.log_softmax(logits), chosen, batch_dims=1)

    from tfm.decoding.search_steps import top_k

    @tf.function(autograph=False)
    def top_k_root_chunks():
        return list(top_k(logits, 8, chunk=int(vocab**0.5)))

    @tf.function(autograph=False)
    def top_k_divisor_chunks():
        return list(top_k(logits, 8))

    return {"output projection": (projection_before, projection_after), "Q, K and V": (qkv_three, qkv_one),
            "normaliser": (softmax_then_log, log_softmax), "top-k chunks": (top_k_root_chunks, top_k_divisor_chunks)}


def same_floats(a, b):
    import numpy as np

    a, b = (a if isinstance(a, list) else [a]), (b if isinstance(b, list) else [b])
    return all(np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(a, b))


def measure(shape, rows, rounds, repeats, pairs=None):
    """Rows of `{shape, rows, pair, before_ms, after_ms, speedup, same_floats}` for one shape and row count
    (`pairs`: their names, None = every pair)."""
    d_model, vocab = SHAPES[shape]
    out = []
    for pair, (before, after) in kernel_pairs(d_model, vocab, rows).items():
        if pairs is not None and pair not in pairs:
            continue
        same = same_floats(before(), after())  # also the trace, outside the timing
        calls = {"before": before, "after": after}
        times = alternate(list(calls), rounds, lambda name, calls=calls: 1000 * timed(calls[name], repeats))
        b, a = median(times["before"]), median(times["after"])
        out.append({"shape": shape, "rows": rows, "pair": pair, "before_ms": round(b, 3), "after_ms": round(a, 3),
                    "speedup": round(b / a, 2), "same_floats": same, "rounds_ms": times})
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=["m30k", "m30k_small"])
    parser.add_argument("--rows", nargs="+", type=int, default=[64, 256])
    parser.add_argument("--rounds", type=int, default=9, help="alternating rounds (default 9)")
    parser.add_argument("--repeats", type=int, default=20, help="calls per round (default 20)")
    parser.add_argument("--pairs", nargs="+", choices=PAIRS, default=None, metavar="PAIR",
                        help=f"the pairs to time (default all: {', '.join(PAIRS)})")
    parser.add_argument("--name", default="step_kernels", help="docs/results/NAME.json")
    args = parser.parse_args(argv)
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    rows = []
    print(f"{'shape':11s} {'rows':>4s}  {'kernels':18s} {'before ms':>9s} {'after ms':>9s} {'speedup':>7s}  "
          "same floats")
    for shape in args.shapes:
        for n in args.rows:
            for row in measure(shape, n, args.rounds, args.repeats, args.pairs):
                rows.append(row)
                print(f"{shape:11s} {n:4d}  {row['pair']:18s} {row['before_ms']:9.3f} {row['after_ms']:9.3f} "
                      f"{row['speedup']:6.2f}x  {'yes' if row['same_floats'] else 'no'}", flush=True)
    onednn = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    env = [] if onednn is None else [f"TF_ENABLE_ONEDNN_OPTS={shlex.quote(onednn)}"]
    command = " ".join([*env, command_line(__file__, argv)])
    print("wrote", save_result(args.name, {"command": command, "threads": 1, "rounds": args.rounds,
                                           "repeats": args.repeats, "rows": rows}))


if __name__ == "__main__":
    main()
