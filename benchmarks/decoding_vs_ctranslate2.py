"""Serving speed: tfm's decoders vs CTranslate2 on the same weights, text in, text out.

    python benchmarks/quality_at_budget.py --models m30k --name quality_m30k --keep-checkpoints 100   # the run
    python benchmarks/decoding_vs_ctranslate2.py --run runs/bench_quality/m30k
    python benchmarks/decoding_vs_ctranslate2.py --run RUN --sentences 300 --rounds 1 --quick-check

One trained run, its Multi30k test_2016_flickr sources (prepared as the run was trained:
`tfm.data.preprocess`), the paper's decoding rules for every candidate (beam 4, α = 0.6,
output limit input + 50), 2 threads each. Candidates:

    tfm Translator        tfm.decoding.Translator: what `tfm translate` / `tfm evaluate` run, two
                          batches of 64 in flight (its default on 2 cores)
    tfm Translator 1x     the same, one batch at a time
    SavedModel b32 / b64  the exported SavedModel's serving_default (what TF Serving runs), fed
                          requests of 32 / 64 strings in file order, two requests in flight (as a
                          server answers concurrent clients)
    CTranslate2 float32   the same weights converted by `tfm export --format ctranslate2`, two
                          batches of 64 in parallel (inter_threads 2): its fastest use of 2 threads
    CTranslate2 float32 1x  one batch at a time on 2 intra-op threads (the issue's measurement)
    CTranslate2 int8      int8 weights, two batches in parallel
    [tfm jit_compile]     Translator(jit_compile=True), with --xla (one XLA compilation per shape)

Threads: TensorFlow runs with 1 intra-op and `--threads` inter-op threads (what `tfm
translate` sets: the decoder's ops are too small to split, whole batches side by side use
the cores), CTranslate2 with `--threads` threads as the row says.

Rates are sentences/s and output subwords/s, medians over `--rounds` rounds that
alternate the candidates (warm-up excluded); ratios are against CTranslate2 float32.
BLEU is the run's metric (`tfm.decoding.evaluation.score`: Moses-tokenized lowercased for a
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

from common import alternate, median, path_free, save_result, use_bench_deps  # noqa: E402

BASELINE = "CTranslate2 float32"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", default="runs/bench_quality/m30k",
                        help="a trained run folder (default: the one quality_at_budget.py --models m30k writes)")
    parser.add_argument("--sentences", type=int, default=1000, help="test sentences (default: all 1000)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--threads", type=int, default=2, help="threads per decoder (default 2)")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--xla", action="store_true", help="also Translator(jit_compile=True)")
    parser.add_argument("--quick", action="store_true", help="200 sentences, 1 round")
    parser.add_argument("--name", default="decoding_vs_ctranslate2", help="docs/results/NAME.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.sentences, args.rounds = min(args.sentences, 200), 1
    if not os.path.exists(os.path.join(args.run, "config.json")):
        sys.exit(f"--run {args.run!r} is not a run folder; train one first:\n"
                 "  python benchmarks/quality_at_budget.py --models m30k --name quality_m30k --keep-checkpoints 100")
    use_bench_deps()
    try:
        import ctranslate2
    except ImportError:
        sys.exit("ctranslate2 is missing: make bench-deps (or pip install 'tfm[ctranslate2]')")

    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    from concurrent.futures import ThreadPoolExecutor

    import tensorflow_text  # noqa: F401  (the SavedModel's SentencePiece ops)

    from tfm import runs
    from tfm.data.preprocess import preprocess
    from tfm.decoding import Translator
    from tfm.decoding.evaluation import score, split_pairs
    from tfm.serving.saved_model import export_saved_model
    from tfm.serving.ctranslate2 import CTranslate2Translator, export_ctranslate2

    model, tokenizer, info = runs.load_run(args.run)
    data = info["data"]
    sources, references = split_pairs(info, "test", limit=args.sentences)
    method = data.get("preprocess")
    sources = preprocess(sources, data.get("source_lang"), method)
    decoding = dict(beam_size=args.beam_size, alpha=args.alpha)

    workdir = tempfile.mkdtemp(prefix="tfm_vs_ct2_")
    saved_model = export_saved_model((model, tokenizer), os.path.join(workdir, "savedmodel", "1"), **decoding)
    serve = tf.saved_model.load(saved_model).signatures["serving_default"]
    ct2_dir = export_ctranslate2((model, tokenizer), os.path.join(workdir, "ct2"))
    ct2_int8_dir = export_ctranslate2((model, tokenizer), os.path.join(workdir, "ct2_int8"), quantization="int8")
    ct2 = {BASELINE: CTranslate2Translator(ct2_dir, intra_threads=1, inter_threads=args.threads),
           BASELINE + " 1x": CTranslate2Translator(ct2_dir, intra_threads=args.threads, inter_threads=1),
           "CTranslate2 int8": CTranslate2Translator(ct2_int8_dir, intra_threads=1, inter_threads=args.threads)}
    pool = ThreadPoolExecutor(args.threads)

    def saved_model_in_batches(size):
        def request(texts):
            return [t.decode("utf-8") for t in serve(text=tf.constant(texts))["translations"].numpy()]

        def run(texts):  # requests in file order, `--threads` of them in flight
            batches = [texts[start : start + size] for start in range(0, len(texts), size)]
            return [t for answer in pool.map(request, batches) for t in answer]
        return run

    candidates = {"tfm Translator": Translator(model, tokenizer, workers=args.threads, **decoding),
                  "tfm Translator 1x": Translator(model, tokenizer, workers=1, **decoding)}
    if args.xla:
        candidates["tfm jit_compile"] = Translator(model, tokenizer, jit_compile=True, **decoding)
    candidates["SavedModel b32"] = saved_model_in_batches(32)
    candidates["SavedModel b64"] = saved_model_in_batches(64)
    for name, translator in ct2.items():
        candidates[name] = lambda texts, t=translator: t(texts, **decoding)

    outputs, warmup = {}, {}
    for name, translate in candidates.items():  # warm-up: tracing, compilation, thread pools
        start = time.perf_counter()
        translate(sources[:64])
        warmup[name] = time.perf_counter() - start

    def measure(name):
        start = time.perf_counter()
        outputs[name] = candidates[name](sources)
        return len(sources) / (time.perf_counter() - start)

    rates = alternate(list(candidates), args.rounds, measure)
    base = median(rates[BASELINE])
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
                     "bleu_metric": bleu_key, "rounds": [round(r, 1) for r in rates[name]],
                     "warmup_s": round(warmup[name], 1)})

    print(f"{len(sources)} test_2016_flickr sentences, {path_free(args.run)} ({info['model']}, "
          f"{model.config.num_layers}+{model.config.num_layers} layers, d_model {model.config.d_model}, "
          f"vocab {model.config.vocab_size}), beam {args.beam_size}, alpha {args.alpha}, {args.threads} threads, "
          f"medians of {args.rounds} alternating rounds; ctranslate2 {ctranslate2.__version__}")
    header = f"{'decoder (text in, text out)':<26}{'sent/s':>9}{'subwords/s':>12}{'vs CT2 f32':>12}{'BLEU':>8}"
    print(header)
    for r in rows:
        print(f"{r['candidate']:<26}{r['sentences_per_s']:>9}{r['subwords_per_s']:>12}"
              f"{r['vs_ctranslate2_float32']:>11}x{r['bleu']:>8}")
    same = sum(a == b for a, b in zip(outputs["tfm Translator"], outputs["SavedModel b64"]))
    print(f"tfm Translator and SavedModel b64 agree on {same} of {len(sources)} sentences; "
          f"BLEU = {rows[0]['bleu_metric']}")
    save_result(args.name, {
        "command": "python benchmarks/" + os.path.basename(__file__) + " " + " ".join(argv or sys.argv[1:]),
        "run": args.run, "sentences": len(sources), "threads": args.threads, **decoding,
        "ctranslate2": ctranslate2.__version__, "rows": rows,
        "plot_bars": {"labels": [r["candidate"] for r in rows], "values": [r["sentences_per_s"] for r in rows],
                      "xlabel": "sentences/s (median)",
                      "title": f"Decoding {len(sources)} Multi30k sentences, beam {args.beam_size}, "
                               f"{args.threads} threads"},
    })


if __name__ == "__main__":
    main()
