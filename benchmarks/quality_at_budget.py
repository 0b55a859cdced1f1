"""Quality at a CPU budget: the small Transformer vs the Bahdanau seq2seq on Multi30k en->de.

    python benchmarks/quality_at_budget.py --data-dir DIR                 # 30 min of training each
    python benchmarks/quality_at_budget.py --data-dir DIR --budget 7200   # 2 hours each
    python benchmarks/quality_at_budget.py --quick                        # 3 min each (smoke run)

Each model trains epoch by epoch (`tfm.training.train`, resuming its run folder) until its
training wall time passes `--budget` seconds; after each epoch a greedy BLEU on the first
`--curve-sentences` validation sentences gives the training curve (not counted as training
time). At the end the last checkpoints are averaged (§6.1) and test_2016_flickr is scored with
beam 4, alpha 0.6: sacreBLEU (cased, 13a), tokenized lowercased BLEU (13a + lowercase, how the
literature reports Multi30k; ~38 for text-only NMT baselines) and chrF.
Multi30k comes from --data-dir or $TFM_DATA_DIR (files <dir>/multi30k/*.gz); without it the
script says so and exits.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import save_result  # noqa: E402

GOAL = 38.0  # tokenized lowercased BLEU of published text-only NMT baselines on test_2016_flickr


def run_model(label, config, args, curves):
    from tfm.evaluation import evaluate, split_pairs
    from tfm.training import average_checkpoints, epoch_checkpoints, load_run, train

    run_dir = os.path.join(args.runs, label.split()[0].lower())
    spent, epoch, points = 0.0, 0, []
    val_sources = val_refs = None
    while spent < args.budget and epoch < args.max_epochs:
        epoch += 1
        start = time.perf_counter()
        result = train(config, "multi30k", output=run_dir, epochs=epoch, source_lang="en", target_lang="de",
                       data_dir=args.data_dir, validation=False, verbose=0, seed=0)
        spent += time.perf_counter() - start
        if val_sources is None:
            _, _, info = load_run(run_dir)
            val_sources, val_refs = split_pairs(info, "val", limit=args.curve_sentences)
        _, scores = evaluate(result.model, result.tokenizer, val_sources, val_refs, beam_size=1)
        points.append((round(spent), round(scores["bleu_tokenized_lc"], 2)))
        print(f"  {label}: epoch {epoch:3d}  {spent:7.0f} s  val BLEU (greedy, tok lc) "
              f"{scores['bleu_tokenized_lc']:5.2f}", flush=True)
    curves[label] = points
    last = min(5, len(epoch_checkpoints(run_dir)))
    if last >= 2:
        average_checkpoints(run_dir, last=last)
    model, tokenizer, info = load_run(run_dir)
    sources, refs = split_pairs(info, "test", limit=args.test_sentences)
    _, scores = evaluate(model, tokenizer, sources, refs, beam_size=4, alpha=0.6)
    return {"model": label, "epochs": epoch, "train_seconds": round(spent), "averaged": last,
            "params": model.count_params(), **{k: scores[k] for k in (
                "bleu", "bleu_tokenized_lc", "chrf", "bleu_signature", "bleu_tokenized_lc_signature")}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="folder holding multi30k/ (default $TFM_DATA_DIR)")
    parser.add_argument("--budget", type=float, default=1800, help="training seconds per model (default 1800)")
    parser.add_argument("--max-epochs", type=int, default=200)
    parser.add_argument("--curve-sentences", type=int, default=300)
    parser.add_argument("--test-sentences", type=int, default=None, help="default: all 1000")
    parser.add_argument("--runs", default="runs/bench_quality", help="run folders (resumed if present)")
    parser.add_argument("--models", nargs="+", default=["transformer", "bahdanau"], choices=["transformer", "bahdanau"])
    parser.add_argument("--quick", action="store_true", help="180 s per model, 200 test sentences")
    args = parser.parse_args(argv)
    if args.quick:
        args.budget, args.test_sentences = 180, args.test_sentences or 200
        args.runs = args.runs + "_quick"
    args.data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")
    if not args.data_dir or not os.path.exists(os.path.join(args.data_dir, "multi30k", "train.en.gz")):
        print("skipped: Multi30k not found; pass --data-dir DIR (or set TFM_DATA_DIR) with DIR/multi30k/"
              "{train,val,test_2016_flickr}.{en,de}.gz (see data/README.md)")
        return 0

    from tfm.training import make_config

    configs = {"transformer": ("Transformer small", make_config("small", "transformer")),
               "bahdanau": ("Bahdanau seq2seq (small)", make_config("small", "bahdanau"))}
    rows, curves = [], {}
    for name in args.models:
        label, config = configs[name]
        print(f"{label}: training for {args.budget:.0f} s of wall time on {os.cpu_count()} CPUs", flush=True)
        rows.append(run_model(label, config, args, curves))
    print(f"\ntest_2016_flickr, beam 4, alpha 0.6 ({args.test_sentences or 1000} sentences):")
    print(f"{'model':28s} {'epochs':>6s} {'train s':>8s} {'BLEU':>6s} {'tok lc':>7s} {'chrF':>6s}")
    for r in rows:
        print(f"{r['model']:28s} {r['epochs']:6d} {r['train_seconds']:8d} {r['bleu']:6.2f} "
              f"{r['bleu_tokenized_lc']:7.2f} {r['chrf']:6.2f}")
    if rows:
        print(f"signatures: {rows[0]['bleu_signature']} | {rows[0]['bleu_tokenized_lc_signature']}")
        print(f"goal for the Transformer: >= {GOAL} tokenized lowercased BLEU")
    save_result("quality_at_budget", {
        "rows": rows, "curves": curves, "budget_s": args.budget,
        "command": "python benchmarks/quality_at_budget.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "plot_bars": {"labels": [r["model"] for r in rows], "values": [r["bleu_tokenized_lc"] for r in rows],
                      "xlabel": "tokenized lowercased BLEU, test_2016_flickr", "title": "Quality at a CPU budget"},
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
