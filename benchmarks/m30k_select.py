"""Choose a Multi30k recipe's averaging and decoding on validation, then score test once (issue 27).

    python benchmarks/m30k_select.py --run RUN --curves docs/results/m30k_search_rdrop5.json --data-dir DIR
    python benchmarks/m30k_select.py --run RUN --curves ... --data-dir DIR --test     # the final recipe only
    python benchmarks/m30k_select.py --run RUN --sentences 100 --data-dir DIR          # a smoke run

RUN is a run folder trained by `benchmarks/quality_at_budget.py --no-test --keep-checkpoints 20`
(its epoch checkpoints kept); `--curves` is that script's results file, whose per-epoch greedy
BLEU on the first validation sentences ranks the epochs for "best N" averaging. Two stages,
on the full validation set (1014 sentences), Moses-tokenized lowercased BLEU:

1. averaging: the last 1, 5, 10, 20 and 30 epoch checkpoints (those the run kept), and the best 5
   and 10 by the curve, each decoded with beam 4, alpha 0.6 (§6.1);
2. decoding: the best averaging with beam 1; beam 4, alpha 0.6; beam 5, alpha 0.6 and 1.0
   (Wu et al., 2021 decode with beam 5, alpha 1.0); beam 8, alpha 1.0.

The choice is the best validation score. `--test` then decodes test_2016_flickr once with it
(and only with it): the number a recipe is reported with. Everything lands in
docs/results/NAME.json (default m30k_select), test included only when asked for.
"""

import argparse
import json
import os
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, path_free, save_result

AVERAGING = (("last", 1), ("last", 5), ("last", 10), ("last", 20), ("last", 30), ("best", 5), ("best", 10))
DECODING = ((1, 0.0), (4, 0.6), (5, 0.6), (5, 1.0), (8, 1.0))


def epochs_for(kind, count, on_disk, curve):
    """The epochs an averaging candidate takes, or None when the run cannot offer it."""
    if len(on_disk) < count:
        return None
    if kind == "last":
        return on_disk[-count:]
    ranked = sorted((e for e in on_disk if e <= len(curve)), key=lambda e: curve[e - 1], reverse=True)
    return sorted(ranked[:count]) if len(ranked) >= count else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="run folder with its epoch checkpoints")
    parser.add_argument("--curves", default=None,
                        help="quality_at_budget.py's results JSON (per-epoch greedy validation BLEU); "
                             "without it only 'last N' averaging is tried")
    parser.add_argument("--data-dir", default=None, help="folder holding multi30k/ (default $TFM_DATA_DIR)")
    parser.add_argument("--sentences", type=int, default=None, help="validation sentences (default: all 1014)")
    parser.add_argument("--test", action="store_true", help="score test_2016_flickr once with the choice")
    parser.add_argument("--name", default="m30k_select", help="results file docs/results/NAME.json")
    args = parser.parse_args(argv)
    if args.data_dir or os.environ.get("TFM_DATA_DIR"):
        os.environ["TFM_DATA_DIR"] = args.data_dir or os.environ["TFM_DATA_DIR"]

    from tfm.data.preprocess import run_preprocess
    from tfm.decoding import Translator
    from tfm.decoding.bleu import evaluate, split_pairs
    from tfm.runs import epoch_checkpoints, read_run_config
    from tfm.training.averaging import average_checkpoints

    info = read_run_config(args.run)
    on_disk = [epoch for epoch, _ in epoch_checkpoints(args.run)]
    curve = []
    if args.curves:
        with open(args.curves) as f:
            curves = json.load(f)["curves"]
        curve = [bleu for _, bleu in next(iter(curves.values()))]
    method, source_lang, target_lang = run_preprocess(info)
    sources, refs = split_pairs(info, "val", limit=args.sentences)
    rows, scratch = [], tempfile.mkdtemp(prefix="m30k_select_")

    def score(epochs, beam, alpha, split_sources, split_refs):
        weights = os.path.join(scratch, "average.weights.h5")
        average_checkpoints(args.run, epochs=epochs, output=weights)
        loaded = Translator.from_run(args.run, checkpoint=weights)
        model, tokenizer = loaded.model, loaded.tokenizer
        start = time.perf_counter()
        _, scores = evaluate(model, tokenizer, split_sources, split_refs, beam_size=beam, alpha=alpha,
                             preprocess=method, source_lang=source_lang, target_lang=target_lang)
        return scores, time.perf_counter() - start

    def trial(label, epochs, beam, alpha):
        scores, seconds = score(epochs, beam, alpha, sources, refs)
        row = {"averaging": label, "epochs": epochs, "beam_size": beam, "alpha": alpha,
               "val_bleu_moses_lc": round(scores["bleu_moses_lc"], 2), "val_chrf": round(scores["chrf"], 2),
               "decode_seconds": round(seconds, 1)}
        rows.append(row)
        print(f"  {label:8s} beam {beam} alpha {alpha:3.1f}: val BLEU {row['val_bleu_moses_lc']:5.2f} "
              f"({seconds:.0f} s)", flush=True)
        return row

    print(f"{path_free(args.run)}: epochs on disk {on_disk}; {len(sources)} validation sentences", flush=True)
    stage1 = []
    for kind, count in AVERAGING:
        epochs = epochs_for(kind, count, on_disk, curve)
        if epochs is not None:
            stage1.append(trial(f"{kind} {count}", epochs, 4, 0.6))
    best = max(stage1, key=lambda r: r["val_bleu_moses_lc"])
    for beam, alpha in DECODING:
        if (beam, alpha) != (4, 0.6):
            trial(best["averaging"], best["epochs"], beam, alpha)
    chosen = max(rows, key=lambda r: r["val_bleu_moses_lc"])
    print(f"chosen on validation: {chosen['averaging']} (epochs {chosen['epochs']}), beam {chosen['beam_size']}, "
          f"alpha {chosen['alpha']}: {chosen['val_bleu_moses_lc']:.2f}")
    result = {"run": os.path.basename(os.path.normpath(args.run)), "model_config": info["model_config"],
              "validation_sentences": len(sources), "rows": rows, "chosen": chosen,
              "command": command_line(__file__, argv)}
    if args.test:
        test_sources, test_refs = split_pairs(info, "test")
        scores, _ = score(chosen["epochs"], chosen["beam_size"], chosen["alpha"], test_sources, test_refs)
        result["test"] = {k: scores[k] for k in ("bleu_moses_lc", "bleu_tokenized_lc", "bleu", "chrf",
                                                  "bleu_moses_lc_signature")}
        print(f"test_2016_flickr, scored once: Moses-tokenized lowercased BLEU {scores['bleu_moses_lc']:.2f} "
              f"(chrF {scores['chrf']:.1f})")
    save_result(args.name, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
