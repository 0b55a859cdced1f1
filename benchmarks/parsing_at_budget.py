"""Parsing F1 at a fixed CPU budget (§6.3, Table 4) on NLTK's Penn Treebank sample.

    python benchmarks/parsing_at_budget.py --data-dir DIR                  # 15 min of training per model
    python benchmarks/parsing_at_budget.py --data-dir DIR --budget 3600    # an hour each
    python benchmarks/parsing_at_budget.py --quick                         # 1 min each (smoke run)
    python benchmarks/parsing_at_budget.py --data-dir DIR --precision mixed_bfloat16   # force bfloat16
    python benchmarks/parsing_at_budget.py --data-dir DIR --models transformer --split validation \
        --set dropout=0.2 --name parsing_search_t_dropout02               # a recipe search candidate
    python benchmarks/parsing_at_budget.py --data-dir DIR --learning-curve 0.25 0.5   # + smaller training sets

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
`--split validation` scores the validation files (wsj_0170-0184, 217 sentences) instead: the
recipe search looks only there, as §6.3 tuned on section 22; the test files are scored once per final
recipe. `--set FIELD=VALUE` overrides a field of each model's config, `--set MODEL:FIELD=VALUE` of that
model's only (e.g. `--set transformer:num_layers=2`; the row records what applied to it).
`--learning-curve F ...` also trains each model on the first F of the training sentences (same
budget, same decoding) and scores the test files: the JSON's `learning_curve` is a list of
{"model", "train_sentences", "f1"} (the full set's rows included; `model` the short name, e.g. "Transformer"),
drawn in NAME_learning_curve.png (`tfm.viz.plot_learning_curve`).
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

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, save_result, use_mixed_precision  # use_mixed_precision: the --precision rule

MODELS = {"transformer": "Transformer, parse_small (4 layers, d 256, pre-LN)",
          "bahdanau": "Bahdanau seq2seq (LSTM 256, additive attention)"}
SHORT_NAMES = {"transformer": "Transformer", "bahdanau": "Bahdanau seq2seq"}  # rows with --set: name + changes


def budget_callback(budget, label, points):
    """A `tfm.TrainingBudget` that stops `fit` once `budget` seconds of training have passed and records
    `(seconds, loss)` per epoch in `points`."""
    from tfm.training.callbacks import TrainingBudget

    def on_epoch(epoch, spent, logs):
        points.append((round(spent), round(float(logs.get("loss", float("nan"))), 4)))
        print(f"  {label}: epoch {epoch + 1:3d}  {spent:7.0f} s  loss {points[-1][1]:.3f}", flush=True)

    return TrainingBudget(budget, on_epoch)


def right_branching_row(gold):
    from tfm.parsing import bracket_scores, right_branching_tree

    trees = [right_branching_tree(tree.leaves(), tags=[tag for _, tag in tree.pos()]) for tree in gold]
    scores = bracket_scores(gold, trees)
    return {"model": "right-branching baseline", "epochs": 0, "train_seconds": 0, **_scores(scores)}


def _scores(scores):
    keys = ("f1", "precision", "recall", "exact_match", "repair_rate", "beam_size", "alpha", "seconds")
    return {k: (round(scores[k], 2) if isinstance(scores[k], float) else scores[k]) for k in keys if k in scores}


def model_overrides(assignments, model):
    """The `--set` assignments that apply to `model`: `FIELD=VALUE` (every model) and `MODEL:FIELD=VALUE`
    (that model only, the prefix removed), in the order given.

    Example:
        >>> model_overrides(["dropout=0.1", "transformer:num_layers=2", "bahdanau:units=128"], "transformer")
        ['dropout=0.1', 'num_layers=2']
    """
    chosen = []
    for assignment in assignments:
        field = assignment.split("=", 1)[0]
        if ":" not in field:
            chosen.append(assignment)
            continue
        prefix, rest = assignment.split(":", 1)
        if prefix not in MODELS:
            raise ValueError(f"--set {assignment!r}: {prefix!r} is not a model; expected one of {list(MODELS)}")
        if prefix == model:
            chosen.append(rest)
    return chosen


def run_model(name, args, gold, curves, train_sentences=None):
    from tfm.config import Recipe, apply_overrides
    from tfm.decoding import Translator
    from tfm.decoding.bleu import split_pairs
    from tfm.parsing import DATASET_LEAVES, evaluate_parsing
    from tfm.parsing.treebank import SPLIT_SIZES
    from tfm.runs import epoch_checkpoints, read_run_config
    from tfm.training import train
    from tfm.training.averaging import average_checkpoints

    overrides = model_overrides(args.set, name)
    # With --set the preset's description would be wrong: the label names the changes instead.
    label = MODELS[name] if not overrides else f"{SHORT_NAMES[name]}, parse_small with {' '.join(overrides)}"
    recipe = apply_overrides(Recipe.preset("parse_small", model=name), list(overrides)).replace(
        dataset=args.dataset, data_dir=args.data_dir, seed=0, validation=False, mixed_precision=args.mixed_precision,
        train_sentences=train_sentences)
    run_dir = os.path.join(args.runs, name if train_sentences is None else f"{name}_{train_sentences}")
    shutil.rmtree(run_dir, ignore_errors=True)  # the budget counts from a fresh start
    points = curves[label if train_sentences is None else f"{label}, {train_sentences} sentences"] = []
    result = train(recipe, output=run_dir, epochs=args.max_epochs, verbose=0,
                   callbacks=[budget_callback(args.budget, label, points)])
    last = min(recipe.decoding.checkpoints_to_average, len(epoch_checkpoints(run_dir)))
    if last >= 2:
        average_checkpoints(run_dir, last=last)
    # The run's decoding part: the preset's beam 21 and alpha 0.3 unless --beam-size says otherwise.
    translator = Translator.from_run(run_dir, beam_size=args.beam_size)
    model, tokenizer, info = translator.model, translator.tokenizer, read_run_config(run_dir)
    split = "test" if train_sentences is not None else args.split
    sources, _ = split_pairs(info, split)
    found = {}
    for constrained in ((True,) if train_sentences is not None else (True, False)):
        _, scores = found[constrained] = evaluate_parsing(model, tokenizer, sources, gold[: len(sources)],
                                                          beam_size=translator.beam_size, alpha=translator.alpha,
                                                          constrained=constrained,
                                                          leaves=DATASET_LEAVES[args.dataset])
        print(f"  {label}: {split} F1 {scores['f1']:.2f} ({'constrained' if constrained else 'unconstrained'} "
              f"search, {scores['repaired']} of {scores['sentences']} outputs repaired)", flush=True)
    row = {"model": label, "preset": "parse_small", "dataset": args.dataset, "overrides": overrides, "split": split,
           "train_sentences": int(info["data"].get("train_sentences") or SPLIT_SIZES["train"]),
           "dtype_policy": _dtype_policy(args), "epochs": result.epochs,
           "train_seconds": points[-1][0] if points else 0, "averaged": last, "params": model.count_params(),
           **_scores(found[True][1])}
    if False in found:
        row["unconstrained"] = _scores(found[False][1])
    if args.also_test and split != "test":  # the candidates' test F1, read only after the choice on validation
        test_sources, _ = split_pairs(info, "test")
        _, scores = evaluate_parsing(model, tokenizer, test_sources, args.test_gold, beam_size=translator.beam_size,
                                     alpha=translator.alpha, leaves=DATASET_LEAVES[args.dataset])
        print(f"  {label}: test F1 {scores['f1']:.2f} (constrained search)", flush=True)
        row["test"] = _scores(scores)
    return row


def plot_learning_curve(points, name):
    """docs/results/NAME_learning_curve.png: `tfm.viz.plot_learning_curve` of the run's points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tfm.viz import plot_learning_curve as draw

    fig = draw(points)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "results",
                       f"{name}_learning_curve.png")
    fig.savefig(out, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return out


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
    parser.add_argument("--dataset", choices=["ptb_parse", "ptb_parse_tags"], default="ptb_parse",
                        help="targets with every word written XX (default) or as its POS tag")
    parser.add_argument("--split", choices=["validation", "test"], default="test",
                        help="the files scored: validation for a recipe search, test once per final recipe")
    parser.add_argument("--also-test", action="store_true",
                        help="with --split validation: score the test files too (once per candidate, reported "
                             "beside the validation F1 the choice is made on)")
    parser.add_argument("--set", action="append", default=[], metavar="[MODEL:]FIELD=VALUE",
                        help="override a field of each model's parse_small config, or with MODEL: of that "
                             "model's only (repeatable)")
    parser.add_argument("--learning-curve", type=float, nargs="+", default=[], metavar="FRACTION",
                        help="also train on these fractions of the training sentences (e.g. 0.25 0.5), scored on test")
    parser.add_argument("--name", default="parsing_at_budget", help="results file docs/results/NAME.json")
    parser.add_argument("--quick", action="store_true", help="a 60 s budget (smoke run)")
    parser.add_argument("--precision", choices=["auto", "float32", "mixed_bfloat16"], default="auto",
                        help="auto (default): mixed_bfloat16 where the CPU has hardware bfloat16, else float32 "
                             "(emulated bfloat16 is no faster)")
    args = parser.parse_args(argv)
    if args.quick:
        args.budget = 60
    args.data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")
    from tfm.config import Recipe, apply_overrides
    from tfm.parsing.treebank import SPLIT_SIZES, ptb_parse_trees

    try:
        for name in args.models:  # a config that cannot be built fails here, not after an hour of training
            apply_overrides(Recipe.preset("parse_small", model=name), model_overrides(args.set, name))
    except ValueError as error:
        parser.error(str(error))
    bad = [f for f in args.learning_curve if not 0.0 < f < 1.0]
    if bad:
        parser.error(f"--learning-curve takes fractions between 0 and 1 (the full set is always run); got {bad}")
    try:
        gold = ptb_parse_trees(args.split, data_dir=args.data_dir, download=False)
        test_gold = gold if args.split == "test" else ptb_parse_trees("test", data_dir=args.data_dir, download=False)
        args.test_gold = test_gold
    except FileNotFoundError as error:
        print(f"parsing_at_budget: skipped: {error}")
        return 0
    args.mixed_precision = use_mixed_precision(args.precision)
    rows = [right_branching_row(gold)]
    if args.also_test and args.split != "test":
        rows[0]["test"] = {k: v for k, v in right_branching_row(test_gold).items()
                           if k in ("f1", "precision", "recall")}
    curves = {}
    for name in args.models:
        rows.append(run_model(name, args, gold, curves))
    # The curve names each model by its short name (its recipe is in `rows`): what a plot's legend shows.
    learning_curve = [{"model": SHORT_NAMES[name], "train_sentences": row["train_sentences"],
                       "f1": row["f1"] if row["split"] == "test" else row["test"]["f1"]}
                      for name, row in zip(args.models, rows[1:]) if row["split"] == "test" or "test" in row
                      ] if args.learning_curve else []
    for fraction in sorted(args.learning_curve):
        for name in args.models:
            row = run_model(name, args, test_gold, curves, train_sentences=round(fraction * SPLIT_SIZES["train"]))
            learning_curve.append({"model": SHORT_NAMES[name], "train_sentences": row["train_sentences"],
                                   "f1": row["f1"]})
    command = command_line(__file__, argv)
    result = {"command": command.strip(), "budget_s": args.budget, "dtype_policy": _dtype_policy(args),
              "split": args.split, "rows": rows, "curves": curves, f"{args.split}_sentences": len(gold)}
    if learning_curve:
        result["learning_curve"] = sorted(learning_curve, key=lambda p: (p["model"], p["train_sentences"]))
        plot_learning_curve(result["learning_curve"], args.name)
    path = save_result(args.name, result)
    print(f"F1 on the {args.split} files" + (" (test F1 beside it)" if args.also_test else "") + ":")
    for row in rows:
        free = f"  (unconstrained F1 {row['unconstrained']['f1']:.2f})" if "unconstrained" in row else ""
        free += f"  test F1 {row['test']['f1']:.2f}" if "test" in row else ""
        print(f"{row['model']:<55} F1 {row['f1']:6.2f}  P {row['precision']:6.2f}  R {row['recall']:6.2f}{free}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
