"""Parsing F1 at a fixed CPU budget (§6.3, Table 4) on NLTK's Penn Treebank sample.

    python benchmarks/parsing_at_budget.py --data-dir DIR                  # 15 min of training per model
    python benchmarks/parsing_at_budget.py --data-dir DIR --budget 3600    # an hour each
    python benchmarks/parsing_at_budget.py --quick                         # 1 min each (smoke run)
    python benchmarks/parsing_at_budget.py --data-dir DIR --precision mixed_bfloat16   # force bfloat16

DIR holds `nltk_data/corpora/treebank.zip` (a copy of ../shared/data/nltk_data, or what
`nltk.download("treebank")` fetches); `$TFM_DATA_DIR` works too. Without it the script says
so and exits.

Rows, all scored the EVALB way (COLLINS.prm) on the held-out test files wsj_0185-0199
(196 sentences), beside the paper's Table 4:
- a right-branching baseline (no learning);
- the Transformer, `parse_small` preset (4 layers, d_model 256, pre-LN), trained from
  scratch in one `model.fit` until its training time passes `--budget` seconds (mixed_bfloat16
  where the CPU computes bfloat16 in hardware, else float32: `--precision`), the last
  checkpoints averaged, decoded with the preset's beam 21, alpha 0.3, input + 300;
- the Bahdanau seq2seq of the same preset (same data, same budget, same decoding).
Each model is decoded twice: with the tree constraint (`tfm.parsing.TreeConstraint`: only
well-formed trees with one leaf per word are searched; the row's F1) and without it (any
output, repaired into a tree afterwards, as Vinyals et al. 2015; `unconstrained` in the
JSON). The repair rate of both is reported. The paper's 91.3 is for the full WSJ (~40K
sentences, sections 2-21); the sample has 3,501 training sentences, so these numbers show
what a tenth of the data does on a CPU, not a reproduction of Table 4.
"""

import argparse
import os
import shutil
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import save_result  # noqa: E402
from common import use_mixed_precision  # noqa: E402  the --precision rule

MODELS = {"transformer": "Transformer, parse_small (4 layers, d 256, pre-LN)",
          "bahdanau": "Bahdanau seq2seq (LSTM 256, additive attention)"}


def budget_callback(budget, label, points):
    """Stops `fit` once `budget` seconds of training have passed; records `(seconds, loss)` per epoch."""
    import keras

    class Budget(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.spent = 0.0

        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.spent += time.perf_counter() - self.start
            points.append((round(self.spent), round(float(logs.get("loss", float("nan"))), 4)))
            print(f"  {label}: epoch {epoch + 1:3d}  {self.spent:7.0f} s  loss {points[-1][1]:.3f}", flush=True)
            if self.spent >= budget:
                self.model.stop_training = True

    return Budget()


def right_branching_row(gold):
    from tfm.parsing import bracket_scores, right_branching_tree

    trees = [right_branching_tree(tree.leaves(), tags=[tag for _, tag in tree.pos()]) for tree in gold]
    scores = bracket_scores(gold, trees)
    return {"model": "right-branching baseline", "epochs": 0, "train_seconds": 0, **_scores(scores)}


def _scores(scores):
    keys = ("f1", "precision", "recall", "exact_match", "repair_rate", "beam_size", "alpha", "seconds")
    return {k: (round(scores[k], 2) if isinstance(scores[k], float) else scores[k]) for k in keys if k in scores}


def run_model(name, args, gold, curves):
    from tfm.checkpoints import average_checkpoints
    from tfm.evaluation import split_pairs
    from tfm.models.registry import make_config
    from tfm.parsing import evaluate_parsing
    from tfm.runs import epoch_checkpoints, load_run
    from tfm.training import train

    label = MODELS[name]
    config = make_config("parse_small", name)
    run_dir = os.path.join(args.runs, name)
    shutil.rmtree(run_dir, ignore_errors=True)  # the budget counts from a fresh start
    points = curves[label] = []
    result = train(config, "ptb_parse", output=run_dir, epochs=args.max_epochs, data_dir=args.data_dir, seed=0,
                   validation=False, verbose=0, mixed_precision=args.mixed_precision,
                   callbacks=[budget_callback(args.budget, label, points)])
    last = min(config.checkpoints_to_average, len(epoch_checkpoints(run_dir)))
    if last >= 2:
        average_checkpoints(run_dir, last=last)
    model, tokenizer, info = load_run(run_dir)
    sources, _ = split_pairs(info, "test")
    found = {}
    for constrained in (True, False):
        _, scores = found[constrained] = evaluate_parsing(model, tokenizer, sources, gold[: len(sources)],
                                                          beam_size=args.beam_size, constrained=constrained)
        print(f"  {label}: test F1 {scores['f1']:.2f} ({'constrained' if constrained else 'unconstrained'} "
              f"search, {scores['repaired']} of {scores['sentences']} outputs repaired)", flush=True)
    return {"model": label, "preset": "parse_small", "dtype_policy": _dtype_policy(args), "epochs": result.epochs,
            "train_seconds": points[-1][0] if points else 0, "averaged": last, "params": model.count_params(),
            **_scores(found[True][1]), "unconstrained": _scores(found[False][1])}


def _dtype_policy(args):
    return "mixed_bfloat16" if args.mixed_precision else "float32"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="cache folder with nltk_data/corpora/treebank.zip "
                                                         "(default: $TFM_DATA_DIR)")
    parser.add_argument("--budget", type=int, default=900, help="training seconds per model (default: 900)")
    parser.add_argument("--max-epochs", type=int, default=500, help="upper bound on epochs (default: 500)")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument("--beam-size", type=int, default=None, help="override the preset's beam 21")
    parser.add_argument("--runs", default=os.path.join("runs", "parsing_at_budget"), help="run folders")
    parser.add_argument("--quick", action="store_true", help="a 60 s budget (smoke run)")
    parser.add_argument("--precision", choices=["auto", "float32", "mixed_bfloat16"], default="auto",
                        help="auto (default): mixed_bfloat16 where the CPU has hardware bfloat16, else float32 "
                             "(emulated bfloat16 is no faster)")
    args = parser.parse_args(argv)
    if args.quick:
        args.budget = 60
    args.data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")
    from tfm.data.ptb_parse import ptb_parse_trees

    try:
        gold = ptb_parse_trees("test", data_dir=args.data_dir, download=False)
    except FileNotFoundError as error:
        print(f"parsing_at_budget: skipped: {error}")
        return 0
    args.mixed_precision = use_mixed_precision(args.precision)
    rows = [right_branching_row(gold)]
    curves = {}
    for name in args.models:
        rows.append(run_model(name, args, gold, curves))
    command = "python benchmarks/parsing_at_budget.py " + " ".join(argv if argv is not None else sys.argv[1:])
    path = save_result("parsing_at_budget", {"command": command.strip(), "budget_s": args.budget,
                                             "dtype_policy": _dtype_policy(args), "rows": rows, "curves": curves,
                                             "test_sentences": len(gold)})
    for row in rows:
        free = f"  (unconstrained F1 {row['unconstrained']['f1']:.2f})" if "unconstrained" in row else ""
        print(f"{row['model']:<55} F1 {row['f1']:6.2f}  P {row['precision']:6.2f}  R {row['recall']:6.2f}{free}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
