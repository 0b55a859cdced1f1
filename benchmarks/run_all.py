"""`make bench`: run every benchmark, then regenerate docs/results.md and its PNG plots.

    python benchmarks/run_all.py              # full settings
    python benchmarks/run_all.py --quick      # each script's --quick mode
    python benchmarks/run_all.py --only train_throughput memory
    python benchmarks/run_all.py --render     # only rebuild docs/results.md from docs/results/*

Each script prints its own table and writes docs/results/<name>.json; this runner saves the
printed output as docs/results/<name>.txt, draws plots from the JSON files and writes the page.
A section's hand-written analysis (a diagnosis, a recipe search, with the commands behind it) lives
in docs/results/<name>.notes.md and is placed right after the section's numbers.
"""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(ROOT, "docs", "results")
sys.path.insert(0, HERE)
# path_free: the page and the saved outputs name no folder of this machine.
from common import command_line, path_free  # noqa: E402  (common is found once HERE is on sys.path)

# name -> (script, extra args, what it shows)
# The Transformer parser's recipe, chosen on the validation files (issue 24; docs/results.md, "Parsing"):
# parse_small with these fields changed. The Bahdanau baseline keeps the preset.
PARSING_RECIPE = tuple(f"transformer:{field}" for field in (
    "num_layers=2", "d_model=128", "d_ff=512", "tokens_per_batch=1024", "warmup_steps=250", "dropout=0.1",
    "share_embeddings=False", "checkpoints_to_average=2"))
# The serving table's rows (issue 59): every precision and layout a user can choose, CTranslate2 beside them. The
# XLA rows (0.08-0.12x, issue 42) and the one-batch rows are left to `--candidates`: they took most of the run.
SERVING_ROWS = ("tfm Translator early finish", "tfm Translator bf16", "SavedModel b64", "SavedModel early sorted b64",
                "SavedModel int8 b64", "SavedModel bf16 b64", "SavedModel bf16 early b64",
                "SavedModel bf16 early sorted b64", "SavedModel early sorted b128", "SavedModel bf16 early sorted b128",
                "CTranslate2 float32 b128", "CTranslate2 int8")
BENCHMARKS = {
    "train_throughput": ("train_throughput.py", [],
                         "Training throughput and MFU at the base shape, vs keras-hub and torch"),
    "train_throughput_multi30k": (
        "train_throughput_multi30k.py", ["--xla"],
        "Multi30k: token bucketing vs fixed-length padding, fp32 vs bf16, with and without XLA"),
    "decoding_speed": ("decoding_speed.py", [], "Decoding: cached + compiled vs recomputing the prefix"),
    "decoding_vs_ctranslate2": ("decoding_vs_ctranslate2.py", ["--candidates", *SERVING_ROWS],
                                "Serving speed: tfm (Translator, SavedModel) vs CTranslate2 on the same weights"),
    "memory": ("memory.py", [], "Peak resident memory per preset during training"),
    "quality_at_budget": ("quality_at_budget.py", [], "BLEU on Multi30k test_2016_flickr at a fixed CPU budget"),
    "quality_m30k": ("quality_at_budget.py", ["--models", "m30k", "--budget", "5100", "--keep-checkpoints", "100",
                                              "--name", "quality_m30k"],
                     "Multi30k: the m30k recipe (Wu et al., 2021's small Transformer) within 90 minutes"),
    "quality_m30k_small": ("quality_at_budget.py", ["--models", "m30k_small", "--budget", "5300", "--keep-checkpoints",
                                                    "20", "--name", "quality_m30k_small"],
                           "Multi30k: the 90-minute recipe (m30k_small) and time to quality"),
    "parsing_at_budget": ("parsing_at_budget.py", ["--dataset", "ptb_parse_tags", "--budget", "900",
                                                   *[arg for field in PARSING_RECIPE for arg in ("--set", field)],
                                                   "--learning-curve", "0.25", "0.5"],
                          "Parsing (§6.3, Table 4): EVALB F1 on the Penn Treebank sample at a fixed CPU budget"),
    "gpu_throughput": ("gpu_throughput.py", [], "Base preset on a GPU: mixed precision and XLA"),
    "rdrop_cost": ("rdrop_cost.py", [], "R-Drop and mixed precision: what a training step costs on this CPU"),
    "regulariser_cost": ("rdrop_cost.py", ["--levers", "--steps", "20", "--rounds", "5"],
                         "Issue 27's regularisers: what each costs per training step on this CPU"),
    "epoch_teardown": ("epoch_teardown.py", [], "Between epochs: what tf.data autotuning costs model.fit"),
    "reproducibility": ("reproducibility.py", [], "Reproducibility: the Multi30k recipe trained twice, bit for bit"),
}
# Written by hand, not by a benchmark: appended to docs/results.md as it is.
APPENDIX = os.path.join(RESULTS, "measurements_quoted.md")


def run(name, quick):
    script, extra, _ = BENCHMARKS[name]
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        return f"(missing: benchmarks/{script})"
    cmd = [sys.executable, path, *extra] + (["--quick"] if quick and name != "gpu_throughput" else [])
    print(f"== {shlex.join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)}", flush=True)
    start = time.time()
    noise = ("I0000", "E0000", "W0000", "WARNING: All log messages", "To enable the following", "warnings.warn(",
             "normalizer.cc", "warm-up ")  # SentencePiece's info line; per-candidate progress (the table has it)
    lines = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONUNBUFFERED": "1"}) as proc:
        for line in proc.stdout:  # shown as it comes: the quality run takes an hour and a half
            line = line.rstrip("\n")
            if not line.strip().startswith(noise) and "UserWarning" not in line:
                lines.append(path_free(line))
                print(line, flush=True)
    text = "\n".join(lines[-120:])
    text += f"\n[exit {proc.returncode}, {time.time() - start:.0f} s]"
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"{name}.txt"), "w") as f:
        f.write(text + "\n")
    print(f"[exit {proc.returncode}, {time.time() - start:.0f} s]", flush=True)
    return text


def _load(name):
    path = os.path.join(RESULTS, f"{name}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def plot_bars(name, labels, values, ylabel, title, reference=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, max(3.2, 0.9 + 0.22 * len(labels))))
    bars = ax.barh(labels, values, color="#4878a8")
    for bar, value in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {value:,.0f}", va="center", fontsize=8)
    if reference:
        ax.axvline(reference, color="grey", ls="--", lw=1)
    ax.set_xlabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.invert_yaxis()
    return _save(fig, f"{name}.png")


def _save(fig, filename):
    """Save a figure under docs/results/ and return its path relative to docs/."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    out = os.path.join(RESULTS, filename)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return os.path.relpath(out, os.path.join(ROOT, "docs"))


def _short(value):
    if isinstance(value, list):
        return "[" + ",".join(_short(v) for v in value) + "]"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def plots():
    """Draw what the JSON files support; return {name: relative png path}."""
    images = {}
    data = _load("train_throughput")
    if data and data.get("rows"):
        rows = data["rows"]
        images["train_throughput"] = plot_bars(
            "train_throughput", [r["candidate"] for r in rows], [r["tokens_per_s"] for r in rows],
            "target tokens/s (median)", "Training throughput, base shape, B32 x T32 (2 CPU cores)")
    data = _load("memory")
    if data and data.get("rows"):
        rows = [r for r in data["rows"] if "peak_rss_mib" in r]
        images["memory"] = plot_bars("memory", [r["preset"] for r in rows], [r["peak_rss_mib"] for r in rows],
                                     "peak RSS (MiB)", f"Peak memory while training ({data['tokens']} tokens/batch)")
    for name in ("decoding_speed", "decoding_vs_ctranslate2", "train_throughput_multi30k", "quality_at_budget",
                 "quality_m30k", "quality_m30k_small"):
        data = _load(name)
        if data and data.get("plot_bars"):
            spec = data["plot_bars"]
            images[name] = plot_bars(name, spec["labels"], spec["values"], spec["xlabel"], spec["title"])
        if data and data.get("curves") and name != "quality_m30k_small":  # its curve: the time-to-quality figure
            images[name + "_curves"] = plot_curves(name, data["curves"])
    curves = time_to_quality_curves()
    if curves:
        images["quality_m30k_small_curves"] = plot_time_to_quality(curves)
    candidates = m30k_search()
    if len(candidates) > 1:
        images["quality_m30k_small_search"] = plot_m30k_search(candidates)
    return images


# Issue 27's search: every `benchmarks/quality_at_budget.py --no-test --name m30k_search_*` candidate beside the
# recipe it starts from (quality_m30k_small). 29,000 training pairs per epoch, whatever the recipe.
M30K_PAIRS = 29000
M30K_VOCAB = 8000  # m30k_small's joint subword vocabulary (a candidate may set another: vocab_size=N in its label)
M30K_SEARCH_BASE = ("quality_m30k_small", "Transformer m30k_small (small pre-LN, lowercased Moses text)")


def m30k_search():
    """[{label, file, epochs, train_seconds, curve, choice, test}] for m30k_small and each search candidate with
    a curve (choice and test: `_m30k_choice`)."""
    sources = [M30K_SEARCH_BASE[0]] + sorted(f[:-len(".json")] for f in os.listdir(RESULTS)
                                             if f.startswith("m30k_search_") and f.endswith(".json"))
    out = []
    for name in sources:
        data = _load(name) or {}
        for row in data.get("rows", []):
            curve = (data.get("curves") or {}).get(row["model"])
            if curve and (name != M30K_SEARCH_BASE[0] or row["model"] == M30K_SEARCH_BASE[1]):
                out.append({"label": row["model"].replace(M30K_SEARCH_BASE[1], "m30k_small"), "file": name,
                            "epochs": row["epochs"], "train_seconds": row["train_seconds"], "curve": curve,
                            **_m30k_choice(name, row)})
    return out if out and out[0]["file"] == M30K_SEARCH_BASE[0] else []


def _m30k_choice(name, row):
    """{choice, test}: what a candidate's `benchmarks/m30k_select.py` chose on all of validation (its
    `m30k_select_*.json`; None if not run) and its test_2016_flickr BLEU (None where test was not scored).
    The base recipe was scored on test with its own decoding and has no selection."""
    if name == M30K_SEARCH_BASE[0]:
        return {"choice": None, "test": row.get("bleu_moses_lc")}
    select = _load(name.replace("m30k_search_", "m30k_select_", 1)) or {}
    return {"choice": select.get("chosen"), "test": (select.get("test") or {}).get("bleu_moses_lc")}


def m30k_search_table(candidates, last=10):
    """The search as a Markdown table: training speed and greedy validation BLEU (first 300 sentences).

    Speed is the median epoch (epochs slowed by idle waits do not move it), in pairs and in target (German)
    subwords per second (an epoch's subwords at the candidate's vocabulary size, `_m30k_target_tokens`; the
    batches' padding not counted), and BLEU is shown twice:
    over each run's last `last` epochs, and over the same epochs for all (the last `last` of the shortest
    run), so that a candidate that got fewer epochs in the budget is also compared epoch for epoch. Then
    the full-validation choice of `benchmarks/m30k_select.py` (Moses-tokenized lowercased BLEU on all
    1014 sentences) and test_2016_flickr where it was scored (once per final recipe)."""
    shortest = min(len(c["curve"]) for c in candidates)
    same = range(max(shortest - last, 0), shortest)
    target_tokens = _m30k_target_tokens()
    lines = ["| recipe | epochs | training s | median s per epoch | pairs/s at the median "
             f"| target tokens/s at the median | val BLEU, mean of the last {last} epochs "
             f"| mean of epochs {same.start + 1}-{same.stop} | best epoch (BLEU) "
             "| all of validation: the choice (averaging, beam, α) | test_2016_flickr | results file |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in candidates:
        bleus = [b for _, b in c["curve"]]
        times = [t for t, _ in c["curve"]]
        epoch_seconds = statistics.median([b - a for a, b in zip([0] + times, times)])
        tail = bleus[-last:]
        best = max(range(len(bleus)), key=bleus.__getitem__)
        test = "-" if c.get("test") is None else f"{c['test']:.2f}"
        vocab = re.search(r"vocab_size=(\d+)", c["label"])
        tokens = target_tokens.get(int(vocab.group(1)) if vocab else M30K_VOCAB)
        lines.append(f"| {c['label']} | {c['epochs']} | {c['train_seconds']} | {epoch_seconds:.1f} "
                     f"| {M30K_PAIRS / epoch_seconds:.0f} | {'-' if tokens is None else round(tokens / epoch_seconds)} "
                     f"| {sum(tail) / len(tail):.2f} "
                     f"| {statistics.mean(bleus[i] for i in same):.2f} "
                     f"| {best + 1} ({bleus[best]:.2f}) | {_choice_cell(c.get('choice'))} "
                     f"| {test} | `docs/results/{c['file']}.json` |")
    return lines


def _m30k_target_tokens():
    """{vocabulary size: German subwords in an epoch of the 29,000 training pairs}, from
    `benchmarks/m30k_vocab.py`'s results (docs/results/m30k_vocab.json); {} if it was not run."""
    return {row["vocab_size"]: row["train"]["de"]["subwords"] for row in (_load("m30k_vocab") or {}).get("rows", [])}


def _choice_cell(choice):
    """'41.86 (last 30, 8, 1.0)' from m30k_select.py's `chosen` row; '-' when none was made."""
    if not choice:
        return "-"
    return f"{choice['val_bleu_moses_lc']:.2f} ({choice['averaging']}, {choice['beam_size']}, {choice['alpha']})"


def plot_m30k_search(candidates, window=5):
    """Greedy validation BLEU against minutes of training, each candidate against m30k_small: the points
    (300 sentences, noisy) and their running mean over `window` epochs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for c, color in zip(candidates, plt.rcParams["axes.prop_cycle"].by_key()["color"]):
        xs, ys = zip(*c["curve"])
        minutes = [x / 60 for x in xs]
        mean = [sum(ys[max(0, i - window + 1): i + 1]) / len(ys[max(0, i - window + 1): i + 1]) for i in range(len(ys))]
        ax.plot(minutes, ys, "o", ms=2.5, color=color, alpha=0.35)
        ax.plot(minutes, mean, lw=2.4 if c["file"] == M30K_SEARCH_BASE[0] else 1.6, color=color,
                label=f"{c['label']} ({window}-epoch mean)")
    ax.set_ylim(bottom=max(0, min(min(b for _, b in c["curve"][len(c["curve"]) // 3:]) for c in candidates) - 3))
    _minutes_axes(ax, "validation BLEU (greedy, Moses lc, 300 sentences)",
                  "Issue 27's search: each candidate against m30k_small")
    return _save(fig, "quality_m30k_small_search.png")


def _minutes_axes(ax, ylabel, title):
    """The axes of a BLEU-against-training-minutes figure: the 90-minute budget marked, legend, grid."""
    ax.axvline(90, color="grey", ls="--", lw=1)
    ax.set_xlabel("minutes of training on 2 CPU cores (evaluation not counted)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(alpha=0.3)


# The time-to-quality figure: (results file, curve label in it, label in the figure, BLEU footing).
TIME_TO_QUALITY = (
    ("quality_m30k_small", "Transformer m30k_small (small pre-LN, lowercased Moses text)",
     "m30k_small: small pre-LN on lowercased Moses text (this recipe)", "Moses lc"),
    ("quality_at_budget", "Transformer small, pre-LN", "small pre-LN on cased text (45-min run)", "13a lc"),
    ("quality_at_budget", "Bahdanau seq2seq (small)", "Bahdanau bi-LSTM 256 on cased text (45-min run)", "13a lc"),
    ("quality_m30k", "Transformer m30k (Wu et al. 2021 recipe, pre-LN)", "m30k: the anchor's settings (shared cores)",
     "Moses lc"),
)


def time_to_quality_curves():
    """{figure label: [(seconds, BLEU), ...]} of the recipes in `TIME_TO_QUALITY` whose results exist."""
    out = {}
    for name, label, shown, footing in TIME_TO_QUALITY:
        points = ((_load(name) or {}).get("curves") or {}).get(label)
        if points:
            out[f"{shown} [{footing}]"] = points
    return out if any("this recipe" in label for label in out) else {}


def plot_time_to_quality(curves):
    """Validation BLEU (greedy, first 300 sentences) against minutes of training, one line per recipe."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    for label, points in curves.items():
        xs, ys = zip(*points)
        ax.plot([x / 60 for x in xs], ys, marker="o", ms=2.5, lw=2.2 if "this recipe" in label else 1.2, label=label)
    _minutes_axes(ax, "validation BLEU (greedy, lowercased)",
                  "Multi30k en-de: time to quality (val, first 300 sentences)")
    return _save(fig, "quality_m30k_small_curves.png")


def plot_curves(name, curves):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    for label, points in curves.items():
        xs, ys = zip(*points)
        ax.plot(xs, ys, marker="o", ms=3, label=label)
    ax.set_xlabel("training time (s), evaluation not counted")
    ax.set_ylabel("validation BLEU (greedy, tok lc)")
    ax.set_title("Training curves at a CPU budget", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, f"{name}_curves.png")


def render():
    images = plots()
    with open(os.path.join(ROOT, "docs", "results.md"), "w") as f:
        f.write(page(images))
    print(f"wrote docs/results.md ({len(images)} plots)")


def page(images):
    """docs/results.md's text: each benchmark's printed table (or its JSON's rows), its plots (`images`: plot name ->
    path from docs/, as `plots` returns), its hand-written notes; then the appendix."""
    lines = ["# Benchmark results", "",
             "Generated by `make bench` (`python benchmarks/run_all.py`); every number below was printed by the",
             "script named in its section, measured side by side in one run (medians of alternating rounds).",
             "Machine: 2 CPU cores, 24 GiB, no GPU, unless a section says otherwise.", ""]
    for name, (script, extra, what) in BENCHMARKS.items():
        lines += [f"## {what}", "", f"`{command_line(script, extra)}`", ""]
        txt = os.path.join(RESULTS, f"{name}.txt")
        if os.path.exists(txt):
            with open(txt) as f:
                lines += ["```", f.read().rstrip(), "```", ""]
        elif (data := _load(name)) and data.get("rows"):  # run on its own: no printed table, the JSON's rows
            lines += [f"Rows of `docs/results/{name}.json` (`{data.get('command', script)}`; run on its own, "
                      "so no printed table was saved):", "", "```"]
            lines += ["  ".join(f"{k}={_short(v)}" for k, v in row.items()) for row in data["rows"]]
            lines += ["```", ""]
        else:
            lines += ["(not run yet)", ""]
        for key in (name, name + "_curves"):
            if key in images:
                lines += [f"![{key}]({images[key]})", ""]
        if os.path.exists(os.path.join(RESULTS, f"{name}_learning_curve.png")):  # drawn by the benchmark itself
            lines += [f"![{name}_learning_curve](results/{name}_learning_curve.png)", ""]
        if name == M30K_SEARCH_BASE[0] and len(candidates := m30k_search()) > 1:
            lines += ["### Issue 27's search on validation (every candidate, generated from its results file)", "",
                      *m30k_search_table(candidates), "", f"![{name}_search]({images[name + '_search']})", ""]
        notes = os.path.join(RESULTS, f"{name}.notes.md")  # written by hand beside the numbers: analysis, searches
        if os.path.exists(notes):
            with open(notes) as f:
                lines += [f.read().rstrip(), ""]
    if os.path.exists(APPENDIX):
        with open(APPENDIX) as f:
            lines += [f.read().rstrip(), ""]
    return path_free("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="each script's --quick mode")
    parser.add_argument("--only", nargs="+", choices=list(BENCHMARKS), help="run only these")
    parser.add_argument("--render", action="store_true", help="only rebuild docs/results.md")
    args = parser.parse_args(argv)
    if not args.render:
        for name in args.only or BENCHMARKS:
            run(name, args.quick)
    render()


if __name__ == "__main__":
    main()
