"""Serving speed: tfm's decoders vs CTranslate2 on the same weights, text in, text out.

    python benchmarks/quality_at_budget.py --models m30k --name quality_m30k --keep-checkpoints 100   # a run
    python benchmarks/decoding_vs_ctranslate2.py --run runs/bench_quality/m30k --run runs/08_multi30k_d256
    python benchmarks/decoding_vs_ctranslate2.py --run RUN --quick

One table per trained run (`--run`, repeated: a d_model-128 and a d_model-256 model show whether a
ratio only holds where per-op overhead dominates), its Multi30k test_2016_flickr sources (prepared as the run was
trained: `tfm.data.preprocess`), the paper's decoding rules for every candidate (beam 4, α = 0.6,
output limit input + 50), 2 threads each. Candidates:

    tfm Translator        tfm.decoding.Translator: what `tfm translate` / `tfm evaluate` run, two
                          batches of 64 in flight (its default on 2 cores)
    tfm Translator 1x     the same, one batch at a time
    tfm Translator early finish  Translator(early_finish=True): a sentence stops once its best finished
                          hypothesis cannot be beaten (issue 59); `same` counts its outputs equal to float32's
    tfm Translator int8   Translator(quantize="int8"): Keras' int8 Dense kernels (tfm.models.quantization)
    tfm Translator bf16   Translator(quantize="bfloat16"): weights and products in bfloat16, scores in float32
    tfm Translator XLA    Translator(jit_compile=True): the whole search compiled, once per padded shape
    SavedModel b32 / b64  the exported SavedModel's serving_default (what TF Serving runs), fed
                          requests of 32 / 64 strings in file order, two requests in flight (as a
                          server answers concurrent clients)
    SavedModel early b64  `tfm export --early-finish` (float32), requests of 64
    SavedModel early sorted b64  the same export, the sentences sorted by length (characters) before they are
                          cut into requests of 64, the answers put back in file order: the layout CTranslate2
                          and the Translator give themselves (each sorts a call's sentences by length into its
                          batches), which a client with many sentences at once can give the SavedModel
    SavedModel int8 b64   `tfm export --quantize int8`, requests of 64
    SavedModel bf16 b64   `tfm export --quantize bfloat16`, requests of 64
    SavedModel bf16 early b64  `tfm export --quantize bfloat16 --early-finish`, requests of 64
    SavedModel bf16 early sorted b64  the same export, fed as `SavedModel early sorted b64` is
    SavedModel early sorted b128 / SavedModel bf16 early sorted b128  the same two exports, sorted requests of 128:
                          a step's fixed cost (a few hundred small ops) shared by twice the hypotheses
    SavedModel XLA b64    `tfm export --xla` (the search XLA-compiled inside the SavedModel), requests of 64
    CTranslate2 float32   the same weights converted by `tfm export --format ctranslate2`, two
                          batches of 64 in parallel (inter_threads 2): its fastest use of 2 threads
    CTranslate2 float32 1x  one batch at a time on 2 intra-op threads (the issue's measurement)
    CTranslate2 float32 b128  two batches of 128 in parallel: CTranslate2 given the b128 rows' batch size
    CTranslate2 int8      int8 weights, two batches in parallel

`--candidates` measures some of them (CTranslate2 float32, the baseline, and tfm Translator, the reference of
the `same` column, always): a shorter run, the ratios still side by side.

Threads: TensorFlow runs with 1 intra-op and `--threads` inter-op threads (what `tfm
translate` sets: the decoder's ops are too small to split, whole batches side by side use
the cores), CTranslate2 with `--threads` threads as the row says.

Rates are sentences/s and output subwords/s, medians over `--rounds` rounds that
alternate the candidates, after one warm-up pass over all the sentences (tracing, every XLA
compilation, thread pools; its seconds are kept as `warmup_s`); ratios are against CTranslate2
float32 at its fastest layout (two batches in parallel). After each table, the beam step's
profile (`beam_step_profile.py`) on the same run: where the Translator's time goes.
BLEU is the run's metric (`tfm.decoding.bleu.score`: Moses-tokenized lowercased for a
moses_lc run, else tokenized lowercased), so "same BLEU" is visible in the same table.
CTranslate2's length penalty is `|Y|^α`, not GNMT's `((5 + |Y|) / 6)^α` (§6.1), so its
beams may rank a few sentences differently; its greedy outputs equal tfm's
(tests/serving/test_ctranslate2.py).
"""

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from common import alternate, command_line, median, path_free, save_result, use_bench_deps

BASELINE = "CTranslate2 float32"
REFERENCE = "tfm Translator"  # the `same` column counts outputs equal to its
CANDIDATES = (REFERENCE, "tfm Translator 1x", "tfm Translator early finish", "tfm Translator int8",
              "tfm Translator bf16", "tfm Translator XLA", "SavedModel b32", "SavedModel b64", "SavedModel early b64",
              "SavedModel early sorted b64", "SavedModel int8 b64", "SavedModel bf16 b64", "SavedModel bf16 early b64",
              "SavedModel bf16 early sorted b64", "SavedModel early sorted b128", "SavedModel bf16 early sorted b128",
              "SavedModel XLA b64", BASELINE, BASELINE + " 1x", BASELINE + " b128", "CTranslate2 int8")
DEFAULT_RUNS = ("runs/bench_quality/m30k", "runs/08_multi30k_d256")


def in_requests(texts, size, request, pool, by_length=False):
    """`texts` answered by `request` in requests of `size`, as many in flight as `pool` has workers; the answers
    come back in the order of `texts`.

    Args:
        texts: list of str.
        size: int, sentences per request.
        request: list of str -> list of str, one answer per sentence (the SavedModel's signature).
        pool: a `concurrent.futures` executor (its `map` keeps the requests' order).
        by_length: bool. Cut the requests from the sentences sorted by length (characters; stable, so equal
            lengths keep file order), as CTranslate2 and `tfm.decoding.Translator` batch a call's sentences;
            False: in file order.

    Returns:
        list of str, `answers[i]` for `texts[i]`.
    """
    order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if by_length else list(range(len(texts)))
    batches = [[texts[i] for i in order[start : start + size]] for start in range(0, len(texts), size)]
    answers = [None] * len(texts)
    for i, answer in zip(order, (a for batch in pool.map(request, batches) for a in batch)):
        answers[i] = answer
    return answers


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", default=None,
                        help="a trained run folder, repeatable: one table each (default: runs/bench_quality/m30k "
                             "and runs/08_multi30k_d256, those present)")
    parser.add_argument("--sentences", type=int, default=1000, help="test sentences (default: all 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="threads per decoder (default 2)")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--profile-sentences", type=int, default=256,
                        help="sentences the profile traces (default 256; 0: no profile, the table alone)")
    parser.add_argument("--quick", action="store_true", help="200 sentences, 1 round, 64 profiled")
    parser.add_argument("--name", default="decoding_vs_ctranslate2", help="docs/results/NAME.json")
    parser.add_argument("--candidates", nargs="+", default=None, metavar="NAME", choices=CANDIDATES,
                        help="measure only these (the baseline and tfm Translator always); default: all")
    args = parser.parse_args(argv)
    if args.quick:
        args.sentences, args.rounds, args.profile_sentences = min(args.sentences, 200), 1, 64
    given = args.run is not None
    run_dirs = [r for r in (args.run or DEFAULT_RUNS) if os.path.exists(os.path.join(r, "config.json"))]
    missing = [r for r in (args.run or DEFAULT_RUNS) if r not in run_dirs]
    if missing and (given or not run_dirs):
        sys.exit(f"--run {missing[0]!r} is not a run folder; train one first:\n"
                 "  python benchmarks/quality_at_budget.py --models m30k --name quality_m30k --keep-checkpoints 100")
    for r in missing:
        print(f"({r} is absent: no table for it)")
    use_bench_deps()
    try:
        import ctranslate2
    except ImportError:
        sys.exit("ctranslate2 is missing: make bench-deps (or pip install 'tfm[ctranslate2]')")

    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    tables = [table(run_dir, args) for run_dir in run_dirs]
    save_result(args.name, {
        "command": command_line(__file__, argv),
        "sentences": tables[0]["sentences"], "threads": args.threads, "beam_size": args.beam_size,
        "alpha": args.alpha, "ctranslate2": ctranslate2.__version__, "tables": tables,
        "plot_bars": {"labels": [f"{r['candidate']} · d{t['d_model']}" for t in tables for r in t["rows"]],
                      "values": [r["sentences_per_s"] for t in tables for r in t["rows"]],
                      "xlabel": "sentences/s (median)",
                      "title": f"Decoding {tables[0]['sentences']} Multi30k sentences, beam {args.beam_size}, "
                               f"{args.threads} threads"},
    })


def table(run_dir, args):
    """One run's table: every candidate's rate, ratio and BLEU, then the beam step's profile."""
    from concurrent.futures import ThreadPoolExecutor

    import ctranslate2
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the SavedModel's SentencePiece ops)
    from beam_step_profile import int8_matmuls, print_int8_matmuls, print_profile, profile_search

    from tfm import runs
    from tfm.data.preprocess import preprocess
    from tfm.decoding import Translator
    from tfm.decoding.bleu import score, split_pairs
    from tfm.serving.ctranslate2 import export_ctranslate2
    from tfm.serving.ctranslate2_translator import CTranslate2Translator
    from tfm.serving.saved_model import export_saved_model

    loaded = Translator.from_run(run_dir)  # the weights of the one checkpoint rule (averaged, else the latest)
    model, tokenizer, info = loaded.model, loaded.tokenizer, runs.read_run_config(run_dir)
    data = info["data"]
    sources, references = split_pairs(info, "test", limit=args.sentences)
    method = data.get("preprocess")
    sources = preprocess(sources, data.get("source_lang"), method)
    decoding = dict(beam_size=args.beam_size, alpha=args.alpha)
    config = model.config
    shape = f"d_model {config.d_model}, {config.num_layers}+{config.num_layers} layers, vocab {config.vocab_size}"

    chosen = set(args.candidates or CANDIDATES) | {BASELINE, REFERENCE}
    workdir = tempfile.mkdtemp(prefix="tfm_vs_ct2_")
    served = {}
    for name, options in (("", {}), (" early", dict(early_finish=True)), (" int8", dict(quantize="int8")),
                          (" bf16", dict(quantize="bfloat16")),
                          (" bf16 early", dict(quantize="bfloat16", early_finish=True)),
                          (" XLA", dict(jit_compile=True))):
        if not chosen & {f"SavedModel{name}{order} b{size}" for size in (32, 64, 128) for order in ("", " sorted")}:
            # no row reads this export
            continue
        folder = os.path.join(workdir, "savedmodel" + name.replace(" ", "_"), "1")
        export_saved_model((model, tokenizer), folder, **decoding, **options)
        served[name] = tf.saved_model.load(folder).signatures["serving_default"]
    ct2_dir = export_ctranslate2((model, tokenizer), os.path.join(workdir, "ct2"))
    ct2_int8_dir = export_ctranslate2((model, tokenizer), os.path.join(workdir, "ct2_int8"), quantization="int8")
    ct2 = {BASELINE: CTranslate2Translator(ct2_dir, intra_threads=1, inter_threads=args.threads),
           BASELINE + " 1x": CTranslate2Translator(ct2_dir, intra_threads=args.threads, inter_threads=1),
           BASELINE + " b128": CTranslate2Translator(ct2_dir, intra_threads=1, inter_threads=args.threads,
                                                     batch_size=128),
           "CTranslate2 int8": CTranslate2Translator(ct2_int8_dir, intra_threads=1, inter_threads=args.threads)}
    pool = ThreadPoolExecutor(args.threads)

    def saved_model_in_batches(size, serve, by_length=False):
        def request(texts):
            return [t.decode("utf-8") for t in serve(text=tf.constant(texts))["translations"].numpy()]
        return lambda texts: in_requests(texts, size, request, pool, by_length)

    makers = {"tfm Translator": lambda: Translator(model, tokenizer, workers=args.threads, **decoding),
              "tfm Translator 1x": lambda: Translator(model, tokenizer, workers=1, **decoding),
              "tfm Translator early finish": lambda: Translator(model, tokenizer, workers=args.threads,
                                                                early_finish=True, **decoding),
              "tfm Translator int8": lambda: Translator(model, tokenizer, workers=args.threads, quantize="int8",
                                                        **decoding),
              "tfm Translator bf16": lambda: Translator(model, tokenizer, workers=args.threads, quantize="bfloat16",
                                                        **decoding),
              "tfm Translator XLA": lambda: Translator(model, tokenizer, workers=args.threads, jit_compile=True,
                                                       **decoding),
              "SavedModel b32": lambda: saved_model_in_batches(32, served[""]),
              "SavedModel b64": lambda: saved_model_in_batches(64, served[""]),
              "SavedModel early b64": lambda: saved_model_in_batches(64, served[" early"]),
              "SavedModel early sorted b64": lambda: saved_model_in_batches(64, served[" early"], by_length=True),
              "SavedModel int8 b64": lambda: saved_model_in_batches(64, served[" int8"]),
              "SavedModel bf16 b64": lambda: saved_model_in_batches(64, served[" bf16"]),
              "SavedModel bf16 early b64": lambda: saved_model_in_batches(64, served[" bf16 early"]),
              "SavedModel bf16 early sorted b64": lambda: saved_model_in_batches(64, served[" bf16 early"],
                                                                                 by_length=True),
              "SavedModel early sorted b128": lambda: saved_model_in_batches(128, served[" early"], by_length=True),
              "SavedModel bf16 early sorted b128": lambda: saved_model_in_batches(128, served[" bf16 early"],
                                                                                  by_length=True),
              "SavedModel XLA b64": lambda: saved_model_in_batches(64, served[" XLA"])}
    for name, translator in ct2.items():
        makers[name] = lambda t=translator: lambda texts: t(texts, **decoding)
    candidates = {name: makers[name]() for name in CANDIDATES if name in chosen}

    outputs, warmup = {}, {}
    for name, translate in candidates.items():  # warm-up: tracing, every XLA compilation, thread pools
        start = time.perf_counter()
        translate(sources)
        warmup[name] = time.perf_counter() - start
        print(f"  warm-up {name}: {warmup[name]:.1f} s", flush=True)

    def measure(name):
        start = time.perf_counter()
        outputs[name] = candidates[name](sources)
        return len(sources) / (time.perf_counter() - start)

    rates = alternate(list(candidates), args.rounds, measure)
    base = median(rates[BASELINE])
    float_outputs = outputs[REFERENCE]
    rows = []
    for name in candidates:
        hypotheses = outputs[name]
        subwords = sum(len(r) for r in tokenizer.tokenize(tf.constant([h or " " for h in hypotheses])).to_list())
        scores = score(hypotheses, references, lang=data.get("target_lang"), preprocess=method)
        bleu_key = "bleu_moses_lc" if method else "bleu_tokenized_lc"
        rate = median(rates[name])
        rows.append({"candidate": name, "sentences_per_s": round(rate, 1),
                     "subwords_per_s": round(rate * subwords / len(sources)),
                     "vs_ctranslate2_float32": round(rate / base, 2), "bleu": round(scores[bleu_key], 2),
                     "bleu_metric": bleu_key, "same_as_translator": sum(a == b for a, b in zip(hypotheses,
                                                                                              float_outputs)),
                     "rounds": [round(r, 1) for r in rates[name]], "warmup_s": round(warmup[name], 1)})

    model_name = info.get("model_name", "transformer")
    print(f"{len(sources)} test_2016_flickr sentences, {path_free(run_dir)} ({model_name}, {shape}), "
          f"beam {args.beam_size}, alpha {args.alpha}, {args.threads} threads, medians of {args.rounds} alternating "
          f"rounds; ctranslate2 {ctranslate2.__version__}")
    header = (f"{'decoder (text in, text out)':<26}{'sent/s':>9}{'subwords/s':>12}{'vs CT2 f32':>12}{'BLEU':>8}"
              f"{'same':>7}{'warm-up s':>11}")
    print(header)
    for r in rows:
        print(f"{r['candidate']:<26}{r['sentences_per_s']:>9}{r['subwords_per_s']:>12}"
              f"{r['vs_ctranslate2_float32']:>11}x{r['bleu']:>8}{r['same_as_translator']:>7}{r['warmup_s']:>11}")
    print(f"same: outputs equal to tfm Translator's, of {len(sources)}; BLEU = {rows[0]['bleu_metric']}; "
          "vs CT2 f32 = against CTranslate2 float32 at its fastest layout")
    result = {"run": run_dir, "model": model_name, "shape": shape, "d_model": config.d_model,
              "num_layers": config.num_layers, "vocab_size": config.vocab_size, "sentences": len(sources), "rows": rows}
    if args.profile_sentences <= 0:  # the table alone
        return result
    profile = profile_search(Translator(model, tokenizer, workers=1, **decoding), sources[: args.profile_sentences])
    print(f"Beam step profile (tfm Translator 1x, 1 thread, {args.profile_sentences} sentences):")
    print_profile(profile)
    matmuls = int8_matmuls([("FFN inner", config.d_model, config.d_ff), ("FFN outer", config.d_ff, config.d_model),
                            ("attention projection", config.d_model, config.d_model),
                            ("output projection", config.d_model, config.vocab_size)],
                           rows=64 * args.beam_size)  # a batch of 64 sentences x k beams
    print_int8_matmuls(matmuls, rows=64 * args.beam_size)
    return {**result, "profile": profile, "int8_matmuls": matmuls}


if __name__ == "__main__":
    main()
