"""Where a beam step's time goes: matrix products vs the few hundred small ops around them.

    python benchmarks/beam_step_profile.py --run runs/bench_quality/m30k
    python benchmarks/beam_step_profile.py --run RUN --sentences 128 --quick
    python benchmarks/beam_step_profile.py --name levers --sentences 64 --batch-size 16 \
        --variant main@/path/to/main-checkout --variant this --variant early:early_finish=true

The last form (levers mode) needs no trained run: a random model (`LEVER_MODELS`, `--lever-model`), the same random
sources, each variant in its own process (a checkout of tfm, and/or Translator options), alternating
rounds, medians of wall ms and ops per step side by side, and a digest of each variant's outputs
(tokens and scores to 1e-5) so that a lever that changes an output shows at once. `--lever-run RUN` puts a
trained run and its test sentences in the random model's place: a random model rarely ends a sentence before its
limit, a trained one ends each where it should, so what sentences leaving the batch cost shows there.

Traces `tfm.decoding.Translator`'s compiled search (what `tfm translate` and, inside the SavedModel,
TF Serving run) with TensorFlow's profiler on batches of `--batch-size` Multi30k test sentences, one
batch at a time on one thread, and reads the profiler's per-op self-times (its `framework_op_stats`
tool). Every op is put in one group:

    matrix products       MatMul / BatchMatMul / Einsum, split by where they sit: the output
                          projection (logits over the vocabulary), attention (Q/K/V/output
                          projections and the Q.K / weights.V products), the FFN
    softmax and top-k     the vocabulary softmax, `top_k` over the vocabulary and the beams
    beam reorder          gathers: each beam's cache and sequence follow it, sentences leave
    cache writes          concats and scatters: the step's keys/values into the cache
    elementwise           adds, multiplies, selects, casts, masks, norms
    control flow          the while loop's own ops, identities, constants, shapes
    encoder and set-up    every op outside the loop (the encoder runs once per batch), spread per step

The op self-times add up to less than the wall time: the rest is the executor's dispatch (it
runs the ops one by one) and Python. Both are printed per decoding step (loop iteration).
`decoding_vs_ctranslate2.py` calls `profile_search` and keeps the profile beside its table.
"""

import argparse
import glob
import json
import os
import re
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from common import command_line, path_free, save_result

MATMUL_TYPES = re.compile(r"(MatMul|Einsum)")
GROUPS = {  # group -> op types (matched against the op type with any _Mkl / _Fused prefix dropped)
    "softmax and top-k": {"Softmax", "TopKV2", "Log", "LogSoftmax", "ArgMax", "Max", "Sort"},
    "beam reorder": {"GatherV2", "GatherNd", "ResourceGather", "Where", "Transpose", "Reshape"},
    "cache writes": {"ConcatV2", "TensorScatterUpdate", "DynamicUpdateSlice", "XlaDynamicUpdateSlice", "Pad",
                     "TensorListSetItem", "Tile", "Pack"},
    "control flow": {"While", "StatelessWhile", "If", "StatelessIf", "Enter", "Exit", "Merge", "Switch",
                     "NextIteration", "LoopCond", "Identity", "IdentityN", "Const", "Shape", "NoOp",
                     "PartitionedCall", "StatefulPartitionedCall", "ReadVariableOp", "_Retval", "_Arg",
                     "StridedSlice", "Range", "Fill", "Size", "Placeholder"},
}
GROUP_ORDER = ["matrix products: output projection", "matrix products: attention", "matrix products: FFN",
               "softmax and top-k", "beam reorder", "cache writes", "elementwise",
               "control flow", "encoder and set-up (once per batch)"]


ATTENTION_PROJECTIONS = re.compile(r"(^|/)(query|key|value|attention_output)(_\d+)?/")


def op_group(op_type, op_name):
    """The group of one op (the module docstring's list), from its type and name."""
    if "while/" not in op_name:
        return "encoder and set-up (once per batch)"
    base = re.sub(r"^_(Mkl|Fused|MklFused|MklNative)+", "", op_type)
    if MATMUL_TYPES.search(base):
        name = op_name.lower()
        if "feed_forward" in name:
            return "matrix products: FFN"
        if "embedding" in name or "output_projection" in name:
            return "matrix products: output projection"
        if base.endswith("MatMul") and "Batch" not in base and not ATTENTION_PROJECTIONS.search(name):
            # A 2-D product outside every attention projection: the output projection, which grappler may have
            # fused with the search's next add (named after that add, e.g. `while/add_6`)
            return "matrix products: output projection"
        return "matrix products: attention"  # Q/K/V/output projections, Q.K^T and weights.V
    for group, types in GROUPS.items():
        if base in types:
            return group
    return "elementwise"


def read_op_stats(logdir):
    """The profiler's host ops: list of (type, name, occurrences, self-time us)."""
    from tensorflow.python.profiler.internal import _pywrap_profiler_plugin as plugin  # no public reader

    planes = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)
    data, _ = plugin.xspace_to_tools_data(planes, "framework_op_stats", {})
    table = json.loads(data)[0]
    columns = [c["id"] for c in table["cols"]]
    ops = []
    for row in table["rows"]:
        values = dict(zip(columns, (cell.get("v") if cell else None for cell in row["c"])))
        if values.get("host_or_device") != "Host" or values["type"] in ("IDLE",):
            continue
        ops.append((values["type"], values["operation"], int(values["occurrences"]), float(values["total_self_time"])))
    return ops


def profile_search(translator, sources, batch_size=64, beam_size=None, alpha=None):
    """Profile `translator`'s compiled search on `sources` in batches of `batch_size`, one at a time.

    Returns:
        dict: `steps` (loop iterations, all batches), `wall_ms_per_step`, `ops_per_step`,
        `op_ms_per_step` (the ops' self-times), `dispatch_ms_per_step` (the rest), and `groups`:
        a list of {group, ms_per_step, share, ops_per_step, top_ops} in `GROUP_ORDER`.
    """
    return profile_batches(translator, source_batches(translator, sources, batch_size), beam_size, alpha)


def source_batches(translator, sources, batch_size=64):
    """`sources` (text) as the search's input: int32 `(B, S)` arrays of `batch_size` sentences in file order, each
    0-padded to the longest sentence of all (`translator.prepare`'s subword ids)."""
    import numpy as np

    rows, _, _ = translator.prepare(sources)
    width = max(len(r) for r in rows)
    batches = []
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        padded = np.zeros([len(chunk), width], np.int32)
        for i, r in enumerate(chunk):
            padded[i, : len(r)] = r
        batches.append(padded)
    return batches


def run_sources(run_dir, sentences):
    """The first `sentences` test sources of a trained run's dataset, preprocessed as the run was."""
    from tfm import runs
    from tfm.data.preprocess import preprocess
    from tfm.decoding.bleu import split_pairs

    info = runs.read_run_config(run_dir)
    sources, _ = split_pairs(info, "test", limit=sentences)
    return preprocess(sources, info["data"].get("source_lang"), info["data"].get("preprocess"))


def profile_batches(translator, batches, beam_size=None, alpha=None):
    """`profile_search` on batches already padded: int `(B, S)` arrays, searched one at a time."""
    import tensorflow as tf

    translator.search_ids(batches[0], beam_size=beam_size, alpha=alpha)  # trace outside the profile
    logdir = tempfile.mkdtemp(prefix="tfm_profile_")
    steps = 0
    tf.profiler.experimental.start(logdir)
    start = time.perf_counter()
    for batch in batches:
        steps += int(translator.search_ids(batch, beam_size=beam_size, alpha=alpha).steps)
    wall = time.perf_counter() - start
    tf.profiler.experimental.stop()
    ops = read_op_stats(logdir)
    groups = {name: {"us": 0.0, "count": 0, "ops": {}} for name in GROUP_ORDER}
    for op_type, name, count, self_us in ops:
        if op_type in ("While", "StatelessWhile", "StatefulPartitionedCall", "PartitionedCall"):
            continue  # their self-time is their bodies' dispatch, counted below
        group = groups[op_group(op_type, name)]
        group["us"] += self_us
        group["count"] += count
        group["ops"][op_type] = group["ops"].get(op_type, 0.0) + self_us
    op_us = sum(g["us"] for g in groups.values())
    wall_ms = 1000 * wall / steps
    result = {"batches": len(batches), "batch_size": len(batches[0]), "steps": steps,
              "wall_ms_per_step": round(wall_ms, 3),
              "ops_per_step": round(sum(g["count"] for g in groups.values()) / steps, 1),
              "op_ms_per_step": round(op_us / 1000 / steps, 3),
              "dispatch_ms_per_step": round(wall_ms - op_us / 1000 / steps, 3), "groups": []}
    for name in GROUP_ORDER:
        g = groups[name]
        top = sorted(g["ops"].items(), key=lambda item: -item[1])[:3]
        result["groups"].append({"group": name, "ms_per_step": round(g["us"] / 1000 / steps, 3),
                                 "share_of_wall": round(g["us"] / 1000 / steps / wall_ms, 3),
                                 "ops_per_step": round(g["count"] / steps, 1),
                                 "top_ops": [op for op, _ in top]})
    return result


def int8_matmuls(shapes, rows=256, repeats=200):
    """float32 vs Keras' int8 `Dense` on one thread, for each `(name, d_in, d_out)` of `shapes`: the
    matrix products of one beam step (`rows` = sentences x beams). Keras' int8 kernel quantizes the input
    per row and multiplies int8 by int8 into int32 (`BatchMatMulV3`); the ratio says what TensorFlow's
    CPU kernels make of that. Returns a list of {name, d_in, d_out, float32_us, int8_us, int8_vs_float32}."""
    import keras
    import tensorflow as tf

    results = []
    for name, d_in, d_out in shapes:
        x = tf.random.normal((rows, d_in))
        dense = keras.layers.Dense(d_out)
        dense.build((None, d_in))
        int8 = keras.layers.Dense(d_out)
        int8.build((None, d_in))
        int8.set_weights(dense.get_weights())
        int8.quantize("int8")
        times = {}
        for label, layer in (("float32", dense), ("int8", int8)):
            call = tf.function(layer.__call__)
            call(x)
            start = time.perf_counter()
            for _ in range(repeats):
                call(x)
            times[label] = 1e6 * (time.perf_counter() - start) / repeats
        results.append({"name": name, "d_in": d_in, "d_out": d_out, "float32_us": round(times["float32"]),
                        "int8_us": round(times["int8"]), "int8_vs_float32": round(times["int8"] / times["float32"], 2)})
    return results


def print_int8_matmuls(results, rows=256):
    print(f"One matrix product of a beam step ({rows} rows), float32 vs Keras int8 Dense, 1 thread:")
    for r in results:
        print(f"  {r['name']:<22} {r['d_in']:>5} -> {r['d_out']:<6} float32 {r['float32_us']:>6} us   int8 "
              f"{r['int8_us']:>6} us   ({r['int8_vs_float32']:.2f}x the time)")


def print_profile(profile):
    print(f"{profile['steps']} decoding steps ({profile['batches']} batches of {profile['batch_size']}): "
          f"{profile['wall_ms_per_step']:.2f} ms per step, {profile['ops_per_step']:.0f} ops per step")
    print(f"{'group':<38}{'ms/step':>9}{'of wall':>9}{'ops/step':>10}  largest")
    for g in profile["groups"]:
        print(f"{g['group']:<38}{g['ms_per_step']:>9.3f}{g['share_of_wall']:>8.0%} {g['ops_per_step']:>9.1f}  "
              + ", ".join(g["top_ops"]))
    dispatch = profile["dispatch_ms_per_step"]
    print(f"{'dispatch and Python (wall - ops)':<38}{dispatch:>9.3f}{dispatch / profile['wall_ms_per_step']:>8.0%}")


# --- levers: one small random model, several variants of the code or of the Translator's options, side by side ---

LEVER_MODELS = {  # --lever-model: random weights of these shapes (the served ones: the two trained runs' presets)
    "small": dict(d_model=32, num_layers=2, num_heads=4, d_ff=64, vocab_size=1000, max_length=32,
                  extra_positions=10, dropout=0.0),  # dispatch-bound: shows ops per step
    "m30k_small": dict(d_model=256, num_layers=3, num_heads=4, d_ff=1024, vocab_size=8000, max_length=32,
                       extra_positions=10, dropout=0.0, norm_first=True),  # runs/08_multi30k_d256's shape
    "m30k": dict(d_model=128, num_layers=4, num_heads=4, d_ff=256, vocab_size=10000, max_length=32,
                 extra_positions=10, dropout=0.0, norm_first=True),  # runs/bench_quality/m30k's shape
}
LEVER_MODEL = LEVER_MODELS["small"]


def parse_variant(text):
    """`LABEL[@TREE][:OPTION=VALUE,...]` -> `{label, tree, options}`: a checkout to import tfm from (default:
    this one) and `Translator` keyword arguments (`true`/`false`, numbers, else strings).

    Example:
        >>> parse_variant("bf16@/tmp/main:precision=bfloat16,early_finish=true")
        {'label': 'bf16', 'tree': '/tmp/main', 'options': {'precision': 'bfloat16', 'early_finish': True}}
    """
    head, _, options = text.partition(":")
    label, _, tree = head.partition("@")
    parsed = {}
    for item in filter(None, options.split(",")):
        key, _, value = item.partition("=")
        if value.lower() in ("true", "false"):
            parsed[key] = value.lower() == "true"
        else:
            try:
                parsed[key] = json.loads(value)
            except ValueError:
                parsed[key] = value
    return {"label": label, "tree": tree or None, "options": parsed}


def lever_batches(sentences, batch_size, seed=0, vocab_size=LEVER_MODEL["vocab_size"]):
    """Random 0-padded source batches (lengths 4..16) over a vocabulary of `vocab_size`: int32 `(B, S)` arrays."""
    import numpy as np

    rng = np.random.default_rng(seed)
    batches = []
    for start in range(0, sentences, batch_size):
        rows = min(batch_size, sentences - start)
        lengths = rng.integers(4, 17, rows)
        batch = np.zeros([rows, int(lengths.max())], np.int32)
        for i, length in enumerate(lengths):
            batch[i, :length] = rng.integers(4, vocab_size, length)
        batches.append(batch)
    return batches


def lever_worker(spec):
    """One variant (`parse_variant`'s dict plus `sentences`, `batch_size`, `beam_size`, `seed`): the profile of a
    Translator over the random model, and a digest of its outputs (tokens; scores rounded to 1e-5)."""
    import hashlib

    import keras
    import numpy as np
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if spec.get("tree"):  # ahead of this checkout, which the script's own path setting put first
        sys.path.insert(0, os.path.abspath(spec["tree"]))
    import tfm
    from tfm.decoding import Translator

    if spec.get("tree") and not os.path.abspath(tfm.__file__).startswith(os.path.abspath(spec["tree"]) + os.sep):
        sys.exit(f"tfm came from {tfm.__file__}, not from the variant's tree {spec['tree']}")

    keras.utils.set_random_seed(spec["seed"])
    if spec.get("run"):  # a trained run: its test sentences, its tokenizer
        loaded = Translator.from_run(spec["run"])
        translator = Translator(loaded.model, loaded.tokenizer, beam_size=spec["beam_size"], alpha=spec["alpha"],
                                workers=1, **spec["options"])
        batches = source_batches(translator, run_sources(spec["run"], spec["sentences"]), spec["batch_size"])
    else:
        shape = LEVER_MODELS[spec.get("model", "small")]
        model = tfm.Transformer.from_preset("tiny", **shape)
        batches = lever_batches(spec["sentences"], spec["batch_size"], spec["seed"], shape["vocab_size"])
        model((batches[0][:1], batches[0][:1]))  # build
        translator = Translator(model, None, beam_size=spec["beam_size"], workers=1, **spec["options"])
    # The profile first: once a traced search has run twice, the profiler sees few of its ops (measured on a
    # trained run's equal-width batches: 11 ops a step instead of 187), so the outputs are read after it.
    profile = profile_batches(translator, batches)
    digest = hashlib.sha1()
    for batch in batches:
        result = translator.search_ids(batch)
        digest.update(result.sequences.tobytes())
        digest.update(np.round(result.scores, 5).tobytes())
    return {"tfm": os.path.dirname(tfm.__file__), "digest": digest.hexdigest()[:12], **profile}


def compare_levers(variants, rounds=3, sentences=64, batch_size=16, beam_size=4, seed=0, model="small", run=None,
                   alpha=0.6):
    """Profile each variant in its own process (its tree first on `PYTHONPATH`), `rounds` alternating rounds;
    returns one row per variant: medians of wall ms and ops per step, op ms, and the output digest. `run`: a
    trained run folder instead of the random `model` (its first `sentences` test sentences, length penalty
    `alpha`)."""
    import subprocess

    runs = {v["label"]: [] for v in variants}
    for _ in range(rounds):
        for variant in variants:
            spec = {**variant, "sentences": sentences, "batch_size": batch_size, "beam_size": beam_size, "seed": seed,
                    "model": model, "run": run and os.path.abspath(run), "alpha": alpha}
            env = dict(os.environ)
            if variant["tree"]:
                env["PYTHONPATH"] = os.pathsep.join([variant["tree"], env.get("PYTHONPATH", "")])
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--lever-worker", json.dumps(spec)],
                                  env=env, capture_output=True, text=True, check=False)
            if done.returncode:
                sys.exit(f"variant {variant['label']} failed:\n{done.stderr[-3000:]}")
            runs[variant["label"]].append(json.loads(done.stdout.strip().splitlines()[-1]))
    rows = []
    for variant in variants:
        got = runs[variant["label"]]
        med = lambda key, got=got: sorted(r[key] for r in got)[len(got) // 2]  # noqa: E731
        rows.append({"label": variant["label"], "tree": variant["tree"], "options": variant["options"],
                     "wall_ms_per_step": med("wall_ms_per_step"), "op_ms_per_step": med("op_ms_per_step"),
                     "ops_per_step": med("ops_per_step"), "steps": got[0]["steps"], "digest": got[0]["digest"],
                     "same_digest_every_round": len({r["digest"] for r in got}) == 1,
                     "rounds_wall_ms": [r["wall_ms_per_step"] for r in got],
                     "groups_ops_per_step": {g["group"]: g["ops_per_step"] for g in got[0]["groups"]},
                     "groups_ms_per_step": {
                         g["group"]: sorted(r["groups"][i]["ms_per_step"] for r in got)[len(got) // 2]
                         for i, g in enumerate(got[0]["groups"])}})
    return rows


def print_levers(rows):
    print(f"{'variant':<22}{'wall ms/step':>13}{'op ms/step':>12}{'ops/step':>10}{'steps':>7}  outputs")
    first = rows[0]["digest"]
    for r in rows:
        same = "same as " + rows[0]["label"] if r["digest"] == first else "DIFFERENT"
        print(f"{r['label']:<22}{r['wall_ms_per_step']:>13.3f}{r['op_ms_per_step']:>12.3f}{r['ops_per_step']:>10.1f}"
              f"{r['steps']:>7}  {r['digest']} ({same})")
    print("op ms per step by group (medians of the rounds):")
    print(f"{'group':<40}" + "".join(f"{r['label'][:12]:>13}" for r in rows))
    for group in rows[0]["groups_ms_per_step"]:
        print(f"{group:<40}" + "".join(f"{r['groups_ms_per_step'][group]:>13.3f}" for r in rows))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", default="runs/bench_quality/m30k", help="a trained run folder")
    parser.add_argument("--sentences", type=int, default=256, help="test sentences profiled (default 256)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--quick", action="store_true", help="64 sentences")
    parser.add_argument("--name", default="beam_step_profile", help="docs/results/NAME.json")
    parser.add_argument("--variant", action="append", default=None, metavar="LABEL[@TREE][:OPTION=VALUE,...]",
                        help="levers mode (no run folder): profile a random model (--lever-model) under each "
                             "variant, side by side; TREE: a checkout to import tfm from; OPTIONs: Translator "
                             "keyword arguments. Repeatable")
    parser.add_argument("--rounds", type=int, default=3, help="levers mode: alternating rounds (default 3)")
    parser.add_argument("--lever-model", choices=sorted(LEVER_MODELS), default="small",
                        help="levers mode: the random model's shape (default small, dispatch-bound; m30k_small and "
                             "m30k: the trained runs' shapes, where the products weigh as when served)")
    parser.add_argument("--lever-run", default=None, metavar="RUN",
                        help="levers mode: a trained run folder instead of the random model (its test sentences in "
                             "file order, --alpha): where sentences end when a trained model says so")
    parser.add_argument("--lever-worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.lever_worker:
        print(json.dumps(lever_worker(json.loads(args.lever_worker))))
        return
    if args.quick:
        args.sentences = 64
    if args.variant:
        variants = [parse_variant(v) for v in args.variant]
        if args.lever_run and not os.path.exists(os.path.join(args.lever_run, "config.json")):
            sys.exit(f"--lever-run {args.lever_run!r} is not a run folder (see decoding_vs_ctranslate2.py for how "
                     "to train one)")
        rows = compare_levers(variants, args.rounds, args.sentences, args.batch_size, args.beam_size,
                              model=args.lever_model, run=args.lever_run, alpha=args.alpha)
        what = (f"Trained run {path_free(args.lever_run)}, {args.sentences} test sentences" if args.lever_run else
                f"Random model {args.lever_model} {LEVER_MODELS[args.lever_model]}, {args.sentences} random sources")
        print(f"{what} in batches of {args.batch_size}, beam {args.beam_size}, 1 thread, medians of {args.rounds} "
              "alternating rounds")
        print_levers(rows)
        model = ({"run": args.lever_run, "alpha": args.alpha} if args.lever_run else
                 {"name": args.lever_model, **LEVER_MODELS[args.lever_model]})
        save_result(args.name, {"command": command_line(__file__, argv),
                                "model": model, "beam_size": args.beam_size, "levers": rows})
        return
    if not os.path.exists(os.path.join(args.run, "config.json")):
        sys.exit(f"--run {args.run!r} is not a run folder (see decoding_vs_ctranslate2.py for how to train one)")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    from tfm.decoding import Translator

    loaded = Translator.from_run(args.run)  # the weights of the one checkpoint rule (averaged, else the latest)
    model, tokenizer = loaded.model, loaded.tokenizer
    sources = run_sources(args.run, args.sentences)
    translator = Translator(model, tokenizer, beam_size=args.beam_size, alpha=args.alpha, workers=1)
    profile = profile_search(translator, sources, args.batch_size)
    print(f"{path_free(args.run)}: d_model {model.config.d_model}, {model.config.num_layers}+"
          f"{model.config.num_layers} layers, vocab {model.config.vocab_size}; beam {args.beam_size}, 1 thread")
    print_profile(profile)
    save_result(args.name, {"command": command_line(__file__, argv),
                            "run": args.run, "beam_size": args.beam_size, "alpha": args.alpha, "profile": profile})


if __name__ == "__main__":
    main()
