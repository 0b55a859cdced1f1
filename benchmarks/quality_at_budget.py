"""Quality at a CPU budget on Multi30k en->de: the small Transformer (post-LN, pre-LN) vs Bahdanau.

    python benchmarks/quality_at_budget.py --data-dir DIR                 # 45 min of training each
    python benchmarks/quality_at_budget.py --data-dir DIR --budget 7200   # 2 hours each
    python benchmarks/quality_at_budget.py --quick                        # 3 min each (smoke run)
    python benchmarks/quality_at_budget.py --data-dir DIR --models prenorm --epochs 24   # a row's epochs, any machine
    python benchmarks/quality_at_budget.py --data-dir DIR --models m30k_small --set rdrop_alpha=5 --no-test \
        --keep-checkpoints 20 --name m30k_search_rdrop5   # a search candidate: trained, never scored on test

Each model trains from scratch in one `model.fit` (`tfm.training.train`; mixed_bfloat16 where the CPU computes it
in hardware, `--precision`; the recipe in RECIPES) until its training time passes `--budget` seconds (or for exactly
`--epochs` epochs: how a row is reproduced on a machine of another speed, the budget having set its epochs here);
after each epoch a callback scores a greedy BLEU on the first `--curve-sentences` validation sentences with that
epoch's checkpoint (the training curve; not counted as training time). At the end the config's
`checkpoints_to_average` (5, or 10 for pre-LN) are averaged (§6.1) and test_2016_flickr is scored with beam 4,
alpha 0.6: sacreBLEU (cased, 13a), tokenized lowercased BLEU (13a + lowercase, how the literature reports
Multi30k; ~38 for text-only NMT baselines) and chrF.
Multi30k comes from --data-dir or $TFM_DATA_DIR (files <dir>/multi30k/*.gz); without it the
script says so and exits.
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import RESULTS_DIR, command_line, save_result, use_mixed_precision

GOAL = 38.0  # tokenized lowercased BLEU of published text-only NMT baselines on test_2016_flickr


# The Multi30k recipes (29k training pairs, ~250 batches of 2048 tokens per epoch). The paper's
# settings are for 4.5M pairs: on Multi30k its 4000-step warm-up would last ~16 epochs and dropout 0.1
# overfits, so every model gets dropout 0.3. The small preset (post-LN, as the paper): a 1000-step
# warm-up at 0.7x eq. 3 (peak learning rate 1.4e-3). Pre-LN: the same preset with the LayerNorm before
# each sub-layer (and after each stack), which trains stably at a higher rate (1.0x eq. 3, peak 2e-3)
# and suits small data (Nguyen & Salazar, 2019); its last 10 checkpoints are averaged.
# Bahdanau's encoder is bidirectional, as in RNNsearch.
# name: (label, model, `--set` overrides of the small preset)
RECIPES = {
    "transformer": ("Transformer small", "transformer",
                    ("dropout=0.3", "warmup_steps=1000", "learning_rate_scale=0.7")),
    "prenorm": ("Transformer small, pre-LN", "transformer",
                ("norm_first=true", "dropout=0.3", "warmup_steps=1000", "learning_rate_scale=1.0",
                 "checkpoints_to_average=10")),
    "bahdanau": ("Bahdanau seq2seq (small)", "bahdanau", ("dropout=0.3", "bidirectional=true")),
    # The m30k preset as it is (Wu et al., 2021's text-only Transformer, pre-LN; tfm.config.TransformerConfig.m30k):
    # lowercased, Moses-tokenized text, 4096-token batches, beam 5, its curve and test score in bleu_moses_lc.
    "m30k": ("Transformer m30k (Wu et al. 2021 recipe, pre-LN)", "transformer", ()),
    # The 90-minute recipe (TransformerConfig.m30k_small): "prenorm" above on m30k's lowercased Moses-tokenized text.
    "m30k_small": ("Transformer m30k_small (small pre-LN, lowercased Moses text)", "transformer", ()),
}
TOKENS_PER_BATCH = 2048
# Recipes on another preset than small: name -> (preset, tokens per batch); they decode the test set with
# their preset's beam size and length penalty instead of beam 4, alpha 0.6.
OWN_PRESET = {"m30k": ("m30k", 4096), "m30k_small": ("m30k_small", 2048)}


def budget_callback(run_dir, budget, curve_sentences, label, points):
    """A `tfm.TrainingBudget`: times each epoch (training only), scores a greedy BLEU on the first
    `curve_sentences` validation pairs with the epoch's weights (not counted as training
    time) and stops once `budget` seconds of training have passed (None: never). Appends
    `(seconds, BLEU)` to `points`."""
    from tfm.data.preprocess import preprocess, run_preprocess
    from tfm.decoding import Translator
    from tfm.decoding.bleu import score, split_pairs
    from tfm.runs import read_run_config
    from tfm.training.callbacks import TrainingBudget

    state = {}

    def on_epoch(epoch, spent, logs):
        if not state:  # one float32 copy and one traced search for the whole run
            loaded = Translator.from_run(run_dir)
            model, tokenizer, info = loaded.model, loaded.tokenizer, read_run_config(run_dir)
            sources, state["refs"] = split_pairs(info, "val", limit=curve_sentences)
            state["method"], source_lang, state["lang"] = run_preprocess(info)
            state["sources"] = preprocess(sources, source_lang, state["method"])
            state["translator"] = Translator(model, tokenizer, beam_size=1)
        state["translator"].model.set_weights(budget_stop.model.get_weights())
        scores = score(state["translator"](state["sources"]), state["refs"], lang=state["lang"],
                       preprocess=state["method"])
        # Runs on preprocessed text: the anchor's footing (Moses-tokenized lowercased BLEU).
        method = state["method"]
        bleu = round(scores["bleu_moses_lc" if method else "bleu_tokenized_lc"], 2)
        points.append((round(spent), bleu))
        print(f"  {label}: epoch {epoch + 1:3d}  {spent:7.0f} s  loss {logs.get('loss', float('nan')):.3f}"
              f"  val BLEU (greedy, {'Moses' if method else 'tok'} lc, {len(state['sources'])} sentences)"
              f" {bleu:5.2f}", flush=True)

    budget_stop = TrainingBudget(float("inf") if budget is None else budget, on_epoch)
    return budget_stop


def run_model(name, args, curves):
    import shutil

    from tfm.config import Recipe, apply_overrides
    from tfm.data.preprocess import run_preprocess
    from tfm.decoding import Translator
    from tfm.decoding.bleu import evaluate, split_pairs
    from tfm.runs import epoch_checkpoints, read_run_config
    from tfm.training import train
    from tfm.training.averaging import average_checkpoints

    label, model, overrides = RECIPES[name]
    if args.set:  # a search candidate: the recipe with more overrides, labelled by them
        overrides = (*overrides, *args.set)
        label = f"{label} + {', '.join(args.set)}"
    preset, tokens = OWN_PRESET.get(name, ("small", TOKENS_PER_BATCH))
    # As `tfm train --preset small --set ... --tokens-per-batch 2048`, so the CLI can resume the run.
    mixed = use_mixed_precision(args.precision)
    recipe = apply_overrides(Recipe.preset(preset, model=model), list(overrides)).replace(
        tokens_per_batch=tokens, dataset="multi30k", source_lang="en", target_lang="de", data_dir=args.data_dir,
        seed=0, mixed_precision=mixed, keep_checkpoints=args.keep_checkpoints, validation=False)
    run_dir = os.path.join(args.runs, name)
    shutil.rmtree(run_dir, ignore_errors=True)  # the budget counts from a fresh start
    points = curves[label] = []
    start = time.perf_counter()
    budget = None if args.epochs else args.budget
    timer = budget_callback(run_dir, budget, args.curve_sentences, label, points)
    result = train(recipe, output=run_dir, epochs=args.epochs or args.max_epochs, verbose=0, callbacks=[timer])
    wall = time.perf_counter() - start
    stalled = timer.stalled_epochs()
    if stalled:
        print(f"  {label}: the process sat idle in epochs {', '.join(str(i + 1) for i in stalled)} (it got under "
              "3/4 of its best epoch's CPU share there); the budget counted their wall time", flush=True)
    row = {"model": label,
           "recipe": [preset, *overrides, f"tokens_per_batch={tokens}", "mixed_bfloat16" if mixed else "float32"],
           "run_dir": run_dir, "epochs": result.epochs, "train_seconds": points[-1][0] if points else 0,
           "wall_seconds": round(wall),
           # (wall, CPU) seconds of each epoch: idle waits show as a low CPU share (TrainingBudget)
           "epoch_seconds": [[round(w, 1), round(c, 1)] for w, c in timer.epoch_seconds],
           "stalled_epochs": [i + 1 for i in stalled]}
    if args.no_test:  # the search scores validation only (benchmarks/m30k_select.py); test once at the end
        return row
    average = recipe.decoding.checkpoints_to_average
    last = min(average, len(epoch_checkpoints(run_dir)))
    if last >= 2:
        average_checkpoints(run_dir, last=last)
    loaded = Translator.from_run(run_dir)  # the averaged weights
    model, tokenizer, info = loaded.model, loaded.tokenizer, read_run_config(run_dir)
    sources, refs = split_pairs(info, "test", limit=args.test_sentences)
    method, source_lang, target_lang = run_preprocess(info)
    beam, alpha = (recipe.decoding.beam_size, recipe.decoding.length_penalty) if name in OWN_PRESET else (4, 0.6)
    _, scores = evaluate(model, tokenizer, sources, refs, beam_size=beam, alpha=alpha, preprocess=method,
                         source_lang=source_lang, target_lang=target_lang)
    return {**row, "beam_size": beam, "alpha": alpha, "averaged": last, "params": model.count_params(),
            "decode_seconds": round(scores["seconds"], 1),
            **{k: scores[k] for k in ("bleu", "bleu_tokenized_lc", "bleu_moses_lc", "chrf", "bleu_signature",
                                      "bleu_tokenized_lc_signature", "bleu_moses_lc_signature")}}


def save(rows, curves, args, argv):
    """docs/results/quality_at_budget.json; rows of models not run this time are kept
    when they were trained for the same budget (`--models bahdanau` after `--models transformer`)."""
    command = command_line(__file__, argv)
    commands = [command]
    previous = os.path.join(RESULTS_DIR, f"{args.name}.json")
    if os.path.exists(previous):
        with open(previous) as f:
            old = json.load(f)
        if old.get("budget_s") == (None if args.epochs else args.budget) and old.get("epochs") == args.epochs:
            labels = {r["model"] for r in rows}
            kept = [r for r in old.get("rows", []) if r["model"] not in labels]
            rows = kept + rows
            curves = {**{k: v for k, v in old.get("curves", {}).items() if k not in labels}, **curves}
            if kept:
                commands = [c for c in old.get("commands", [old.get("command")]) if c and c != command] + commands
    order = [RECIPES[name][0] for name in RECIPES]
    rows = sorted(rows, key=lambda r: order.index(r["model"]) if r["model"] in order else len(order))
    save_result(args.name, {
        "rows": rows, "curves": curves, "budget_s": None if args.epochs else args.budget, "epochs": args.epochs,
        "commands": commands,
        "plot_bars": {"labels": [r["model"] for r in rows], "values": [r.get("bleu_tokenized_lc", 0) for r in rows],
                      "xlabel": "tokenized lowercased BLEU, test_2016_flickr", "title": "Quality at a CPU budget"},
    })
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="folder holding multi30k/ (default $TFM_DATA_DIR)")
    parser.add_argument("--budget", type=float, default=2700, help="training seconds per model (default 2700)")
    parser.add_argument("--max-epochs", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=None,
                        help="train exactly this many epochs, ignoring --budget (reproduces a row's epochs)")
    parser.add_argument("--curve-sentences", type=int, default=300)
    parser.add_argument("--test-sentences", type=int, default=None, help="default: all 1000")
    parser.add_argument("--runs", default="runs/bench_quality",
                        help="run folders (replaced: the budget counts from scratch)")
    parser.add_argument("--models", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--quick", action="store_true", help="180 s per model, 200 test sentences")
    parser.add_argument("--keep-checkpoints", type=int, default=None,
                        help="epoch checkpoints kept (default: the recipe's checkpoints_to_average)")
    parser.add_argument("--precision", choices=["auto", "float32", "mixed_bfloat16"], default="auto",
                        help="auto (default): mixed_bfloat16 where the CPU has hardware bfloat16, else float32 "
                             "(emulated bfloat16 is no faster)")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of the recipe, any part, by its name (repeatable), e.g. rdrop_alpha=5")
    parser.add_argument("--no-test", action="store_true",
                        help="train and draw the validation curve only; test_2016_flickr is not decoded "
                             "(a search candidate: benchmarks/m30k_select.py chooses on validation)")
    parser.add_argument("--name", default="quality_at_budget",
                        help="results file docs/results/NAME.json (default: quality_at_budget)")
    args = parser.parse_args(argv)
    if args.quick:
        args.budget, args.test_sentences = 180, args.test_sentences or 200
        args.runs = args.runs + "_quick"
    args.data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")
    if not args.data_dir or not os.path.exists(os.path.join(args.data_dir, "multi30k", "train.en.gz")):
        print("skipped: Multi30k not found; pass --data-dir DIR (or set TFM_DATA_DIR) with DIR/multi30k/"
              "{train,val,test_2016_flickr}.{en,de}.gz (see data/README.md)")
        return 0

    rows, curves = [], {}
    for name in args.models:
        how_long = f"{args.epochs} epochs" if args.epochs else f"{args.budget:.0f} s"
        print(f"{RECIPES[name][0]}: training for {how_long} on {os.cpu_count()} CPUs", flush=True)
        rows.append(run_model(name, args, curves))
        table = save(rows, curves, args, argv)  # after each model, so a later failure keeps this one
    if args.no_test:
        for r in table:
            print(f"{r['model']}: {r['epochs']} epochs in {r['train_seconds']} s of training; test not decoded")
        return 0
    print(f"\ntest_2016_flickr, beam 4, alpha 0.6 ({args.test_sentences or 1000} sentences):")
    print(f"{'model':28s} {'epochs':>6s} {'train s':>8s} {'BLEU':>6s} {'tok lc':>7s} {'chrF':>6s}")
    for r in table:
        print(f"{r['model']:28s} {r['epochs']:6d} {r['train_seconds']:8d} {r['bleu']:6.2f} "
              f"{r['bleu_tokenized_lc']:7.2f} {r['chrf']:6.2f}")
    if rows:
        print(f"signatures: {rows[0]['bleu_signature']} | {rows[0]['bleu_tokenized_lc_signature']}")
        for r in rows:
            print(f"{r['model']}: Moses-tokenized lowercased BLEU {r['bleu_moses_lc']:.2f} "
                  f"({r['bleu_moses_lc_signature']})")
        print(f"goal for the Transformer: >= {GOAL} tokenized lowercased BLEU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
