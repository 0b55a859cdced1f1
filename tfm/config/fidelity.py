"""How close the package is to the paper: every preset and default beside Vaswani et al. (2017), §3–§6.

    python -m tfm.config.fidelity                              # print the table (markdown)
    python -m tfm.config.fidelity --write docs/paper_fidelity.md
    python -m tfm.config.fidelity --check docs/paper_fidelity.md  # exit 1 if the file is stale or a difference is unexplained

The paper's values are written once, here (`PAPER_MODEL`, `PAPER_TRAINING`, ...), as the reference. The
package's values are read from the live code every time: `TransformerConfig.base()` / `.big()` and the
`TrainingConfig` defaults from `tfm.config`, and the defaults of a few functions (beam search, the tokenizer
trainer, the loss) from their source with `ast`, so this module needs no TensorFlow.

Every row is one of
- **same**: the package's value equals the paper's;
- **differs**: it does not, and `DIFFERENCES` says why (keyed by the value it explains, so a preset that drifts
  to another value is unexplained again);
- **not in paper**: the paper does not give the setting; the package's choice and its source are noted.

`undocumented(rows())` lists differences without a reason; `tests/config/test_fidelity.py` fails on any.
"""

import argparse
import ast
import dataclasses
import os
import sys

from tfm.config.configs import TrainingConfig, TransformerConfig

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tfm/: source_defaults' paths start here


class _NotInPaper:
    def __repr__(self):
        return "NOT_IN_PAPER"


NOT_IN_PAPER = _NotInPaper()  # the paper value of a setting the paper does not give

# The paper's values (the reference) ---------------------------------------------------------------
# TransformerConfig field -> (section, base, big). head_key_dim / head_value_dim are the d_k / d_v in use.
PAPER_MODEL = {
    "num_layers": ("§3.1, Table 3", 6, 6),
    "d_model": ("§3.1, Table 3", 512, 1024),
    "num_heads": ("§3.2.2, Table 3", 8, 16),
    "d_ff": ("§3.3, Table 3", 2048, 4096),
    "key_dim": ("§3.2.2, Table 3", 64, 64),  # d_k = d_model / h in base; Table 3 big: d_k = 64
    "value_dim": ("§3.2.2, Table 3", 64, 64),
    "dropout": ("§5.4, Table 3", 0.1, 0.3),
    "attention_dropout": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "activation_dropout": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "token_dropout": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "label_smoothing": ("§5.4, Table 3", 0.1, 0.1),
    "rdrop_alpha": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "vocab_size": ("§5.1", 37000, 37000),  # EN-DE: "a shared source-target vocabulary of about 37000 tokens"
    "share_embeddings": ("§3.4", True, True),
    "norm_first": ("§3.1", False, False),  # LayerNorm(x + Sublayer(x)): post-LN
    "positional": ("§3.5, Table 3 (E)", "sinusoidal", "sinusoidal"),
    "max_length": ("§5.1", NOT_IN_PAPER, NOT_IN_PAPER),
    "warmup_steps": ("§5.3, eq. 3", 4000, 4000),
    "learning_rate_scale": ("§5.3, eq. 3", 1.0, 1.0),  # eq. 3 as written, no extra factor
    "adam_beta_1": ("§5.3", 0.9, 0.9),
    "adam_beta_2": ("§5.3", 0.98, 0.98),
    "adam_epsilon": ("§5.3", 1e-9, 1e-9),
    "layer_norm_epsilon": ("§3.1", NOT_IN_PAPER, NOT_IN_PAPER),
    "tokens_per_batch": ("§5.1", 25000, 25000),  # "approximately 25000 source tokens and 25000 target tokens"
    "beam_size": ("§6.1", 4, 4),
    "length_penalty": ("§6.1", 0.6, 0.6),  # alpha
    "max_extra_length": ("§6.1", 50, 50),  # "maximum output length during inference to input length + 50"
    "checkpoints_to_average": ("§6.1", 5, 20),  # "averaging the last 5 checkpoints" / "the last 20"
    "preprocess": ("§5.1", NOT_IN_PAPER, NOT_IN_PAPER),
}

# TrainingConfig field -> (section, paper value).
PAPER_TRAINING = {
    "seed": ("§5", NOT_IN_PAPER),
    "keep_checkpoints": ("§6.1", 5),  # base averages the last 5 (big: 20, from the model config when training)
    "label_smoothing": ("§5.4", 0.1),
    "rdrop_alpha": ("§5.4", NOT_IN_PAPER),
    "strategy": ("§5.2", "synchronous data parallel, 8 GPUs"),
    "mixed_precision": ("§5.2", NOT_IN_PAPER),
    "xla": ("§5.2", NOT_IN_PAPER),
    "steps_per_epoch": ("§6.1", "a checkpoint every 10 minutes"),
}

# (module file, function) -> {argument: (setting, section, paper value)}: defaults read from the source.
PAPER_FUNCTION_DEFAULTS = {
    ("decoding/beam.py", "beam_search"): {
        "beam_size": ("beam size", "§6.1", 4),
        "alpha": ("length penalty α (a run decodes with its config's `beam_size` and `length_penalty`)",
                  "§6.1", 0.6),
    },
    ("training/losses.py", "LabelSmoothedCrossEntropy.__init__"): {
        "label_smoothing": ("ε_ls", "§5.4", 0.1),
        "exclude_pad_from_smoothing": ("smoothing mass on the padding id", "§5.4", NOT_IN_PAPER),
        "rdrop_alpha": ("R-Drop's KL weight (Liang et al., 2021)", "§5.4", NOT_IN_PAPER),
    },
    ("data/subword_tokenizer.py", "train_tokenizer"): {
        "model_type": ("subword algorithm", "§5.1", "bpe"),
        "max_sentences": ("sentences the vocabulary is learned from", "§5.1", NOT_IN_PAPER),
    },
}

# Conventions that are not one number: what the paper does, what the package does (checked by tests).
PAPER_CONVENTIONS = [
    # (group, setting, section, paper, package)
    ("training", "label-smoothing target", "§5.4 (Szegedy et al. 2016)",
     "q'(k) = (1-ε) δ(k,y) + ε/K: ε spread over all K ids, the reference included",
     "1-ε on the reference, ε/(V-1) on each other id"),
    ("decoding", "length penalty", "§6.1 (Wu et al. 2016)",
     "lp(Y) = ((5+|Y|)/6)^α, score = log P(Y|X) / lp(Y)", "lp(Y) = ((5+|Y|)/6)^α, score = log P(Y|X) / lp(Y)"),
    ("data", "subword vocabulary", "§5.1",
     "EN-DE: byte-pair encoding, shared, about 37000 tokens; EN-FR: word-piece, 32000",
     "SentencePiece BPE learned on the training text, shared, `vocab_size` of the preset"),
    ("evaluation", "BLEU", "§6.1, Table 2",
     "tokenized BLEU (EN-DE with compound splitting), newstest2014",
     "sacreBLEU on detokenized text (13a, cased; also lowercased and Moses-tokenized lowercased), "
     "with its signature"),
    ("training", "training length", "§5.2",
     "base 100k steps (12 h on 8 P100), big 300k steps (3.5 days)",
     "`--epochs` × `--steps-per-epoch` (notebook 09's commands: 100 × 1000 and 300 × 1000)"),
]

# Why the package differs: (group, setting) -> (package value this explains, reason).
DIFFERENCES = {
    ("training", "label-smoothing target"): (
        "1-ε on the reference, ε/(V-1) on each other id",
        "tensor2tensor, the paper's own code, smooths this way (`smoothing_cross_entropy`: "
        "`low_confidence = (1 - confidence) / (vocab_size - 1)`), so the reference gets exactly 1-ε. The two "
        "targets differ by ε/K on the reference and ε/(K(K-1)) on every other id: 2.7e-6 and 7.3e-11 at "
        "K = 37000 (notebook 07 computes both)."),
    ("data", "subword vocabulary"): (
        "SentencePiece BPE learned on the training text, shared, `vocab_size` of the preset",
        "the paper's BPE and word-piece models are not published; SentencePiece learns a BPE vocabulary of the "
        "preset's size from the raw training text (no separate tokenizer). EN-FR would need "
        "`vocab_size=32000` (the paper used word-pieces there). Parameter counts depend on V: notebook 06 shows "
        "that 37000 gives 63.1M for base where the paper prints 65M."),
    ("evaluation", "BLEU"): (
        "sacreBLEU on detokenized text (13a, cased; also lowercased and Moses-tokenized lowercased), "
        "with its signature",
        "tokenized BLEU depends on the tokenizer and on compound splitting, and its numbers cannot be "
        "reproduced from the paper; sacreBLEU's signature names everything that affects the score (Post, 2018). "
        "Detokenized sacreBLEU usually comes out lower than the paper's tokenized, compound-split BLEU for the "
        "same output (up to about a point on EN-DE)."),
    ("training", "training length"): (
        "`--epochs` × `--steps-per-epoch` (notebook 09's commands: 100 × 1000 and 300 × 1000)",
        "a run is measured in epochs (one checkpoint each); the paper's step counts are reached with "
        "`--steps-per-epoch 1000` and 100 (base) or 300 (big) epochs."),
    ("training", "steps_per_epoch"): (
        None,
        "a checkpoint is written per epoch (one pass over the data, or `--steps-per-epoch` steps), not per "
        "10 minutes of wall-clock time, so that the averaged checkpoints do not depend on the hardware's speed. "
        "Notebook 09's commands use 1000 steps (the paper's 10 minutes were about 1500 base steps)."),
    ("training", "strategy"): (
        "auto",
        "`auto` is MirroredStrategy (synchronous data parallel over every GPU, as in the paper) when more than "
        "one GPU is visible, else the default strategy; `tokens_per_batch` is the global budget, split "
        "between the replicas."),
}

# Notes on rows that are the same or that the paper does not give: (group, setting) -> note.
NOTES = {
    ("model", "key_dim"): "None in the config = d_model / h, i.e. 64 in both presets.",
    ("model", "value_dim"): "None in the config = d_model / h, i.e. 64 in both presets.",
    ("model", "dropout"): "Big on EN-FR used P_drop = 0.1 instead of 0.3 (§6.1): `TransformerConfig.big(dropout=0.1)`.",
    ("model", "attention_dropout"): "Dropout on the attention weights; §5.4 names only residual dropout "
                                    "(sub-layer outputs and embedding sums).",
    ("model", "activation_dropout"): "Dropout on the feed-forward network's inner activations (tensor2tensor's "
                                     "relu_dropout, fairseq's activation_dropout); §5.4 names only residual dropout.",
    ("model", "token_dropout"): "Word dropout (Sennrich et al., 2016): source and target input tokens replaced by "
                                "UNK while training, the labels kept; a regulariser from after the paper.",
    ("model", "rdrop_alpha"): "R-Drop (Liang et al., 2021), a regulariser from after the paper, for small "
                              "corpora: each batch twice, a KL term between the two dropout passes. 0 = off.",
    ("training", "rdrop_alpha"): "Copied from the model config; above 0 every training batch holds each pair "
                                 "twice (twice the compute per step).",
    ("model", "vocab_size"): "EN-DE; \"about\" 37000. EN-FR used a 32000 word-piece vocabulary.",
    ("model", "max_length"): "Longest sequence the model takes (positions); training drops longer pairs. "
                             "The paper gives no limit.",
    ("model", "learning_rate_scale"): "A factor on eq. 3 for the small recipes (m30k); 1.0 is eq. 3 as written.",
    ("model", "layer_norm_epsilon"): "tensor2tensor's value (Keras' default is 1e-3).",
    ("model", "adam_epsilon"): "Keras adds ε to sqrt(v) after the bias correction folded into the step size "
                               "(Kingma and Ba's ε-hat), as tf.train.AdamOptimizer did in tensor2tensor.",
    ("model", "tokens_per_batch"): "A budget per side and batch, padding included: each length bucket gets "
                                   "floor(budget / bucket length) pairs, so a batch holds at most 25000 "
                                   "tokens per side.",
    ("model", "preprocess"): "Raw text goes to SentencePiece; `moses_lc` (lowercase + Moses tokens) is for "
                             "the Multi30k recipe.",
    ("model", "checkpoints_to_average"): "`tfm average --last N`; training keeps this many by default.",
    ("training", "seed"): "Weights, dropout and shuffling; resumed runs derive new streams from it.",
    ("training", "keep_checkpoints"): "Base's 5; a run takes the model config's `checkpoints_to_average` "
                                      "(20 for big).",
    ("training", "mixed_precision"): "`--mixed-precision`: mixed_float16 on GPUs, mixed_bfloat16 on CPUs.",
    ("training", "xla"): "`--xla` compiles the train step.",
    ("training", "exclude_pad_from_smoothing"): "False: the padding id gets its ε/(V-1) share of the target "
                                             "like every other id (the loss of padding positions is ignored).",
    ("data", "max_sentences"): "SentencePiece samples at most this many sentences of the training text "
                               "(WMT14 EN-DE has 4.5M pairs = 9M sentences).",
}


@dataclasses.dataclass(frozen=True)
class Row:
    """One setting: the paper's value beside the package's.

    `preset` is "base" / "big" for model settings, else None. `paper` None = the paper does not say.

    Args:
        group, setting, section, paper, code, where, preset, reason, note: the attributes below.

    Example:
        >>> Row("model", "d_model", "§3.1", 512, 512, "TransformerConfig.base().d_model", preset="base").status
        'same'
        >>> Row("training", "seed", "§5", NOT_IN_PAPER, 0, "TrainingConfig().seed").status
        'not in paper'
    """

    group: str  # "model", "training", "decoding", "evaluation", "data"
    setting: str  # field or setting name
    section: str  # where the paper gives it
    paper: object
    code: object
    where: str  # where the package's value lives
    preset: str | None = None
    reason: str | None = None  # why the package differs
    note: str | None = None

    @property
    def status(self):
        if self.paper is NOT_IN_PAPER:
            return "not in paper"
        return "same" if _same(self.paper, self.code) else "differs"


def _same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-30)
    return a == b


def _reason(group, setting, code):
    documented = DIFFERENCES.get((group, setting))
    if documented is None:
        return None
    value, reason = documented
    return reason if _same(value, code) else None


def source_defaults(relative_path, qualname):
    """Keyword defaults of a function in the package, read from its source (no import, no TensorFlow).

    Args:
        relative_path: path under `tfm/`, e.g. "decoding/beam.py".
        qualname: "function" or "Class.method".

    Returns:
        dict: argument name -> default value, for the defaults that are literals.

    Example:
        >>> source_defaults("decoding/beam.py", "beam_search")["beam_size"]
        4
    """
    with open(os.path.join(PACKAGE_DIR, relative_path), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    body = tree.body
    *owners, name = qualname.split(".")
    for owner in owners:
        body = next(n.body for n in body if isinstance(n, ast.ClassDef) and n.name == owner)
    function = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if function is None:
        raise ValueError(f"no function {qualname} in tfm/{relative_path}")
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))
    pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    defaults = {}
    for argument, node in pairs:
        try:
            defaults[argument.arg] = ast.literal_eval(node)
        except ValueError:  # a name such as PAD_ID: not a literal, not read
            pass
    return defaults


def _config_value(config, field):
    if field == "key_dim":
        return config.head_key_dim
    if field == "value_dim":
        return config.head_value_dim
    return getattr(config, field)


def rows():
    """Every row, read from the live configs and sources now.

    Takes no arguments.

    Returns:
        list of `Row`: the model rows (base and big, in field order), then training, the function defaults
        and the conventions.

    Example:
        >>> table = rows()
        >>> next(r for r in table if r.setting == "d_model" and r.preset == "big").code
        1024
    """
    out = []
    presets = {"base": TransformerConfig.base(), "big": TransformerConfig.big()}
    fields = [f.name for f in dataclasses.fields(TransformerConfig)]
    missing = sorted(set(fields) - set(PAPER_MODEL))
    if missing:
        raise ValueError(f"TransformerConfig fields {missing} have no entry in tfm.config.fidelity.PAPER_MODEL: "
                         "add the paper's value (or NOT_IN_PAPER) and the section")
    for field in fields:
        section, base, big = PAPER_MODEL[field]
        for preset, paper in (("base", base), ("big", big)):
            code = _config_value(presets[preset], field)
            out.append(Row("model", field, section, paper, code, f"TransformerConfig.{preset}().{field}",
                           preset=preset, reason=_reason("model", f"{preset}.{field}", code),
                           note=NOTES.get(("model", field))))

    training = TrainingConfig()
    fields = [f.name for f in dataclasses.fields(TrainingConfig)]
    missing = sorted(set(fields) - set(PAPER_TRAINING))
    if missing:
        raise ValueError(f"TrainingConfig fields {missing} have no entry in tfm.config.fidelity.PAPER_TRAINING")
    for field in fields:
        section, paper = PAPER_TRAINING[field]
        code = getattr(training, field)
        out.append(Row("training", field, section, paper, code, f"TrainingConfig().{field}",
                       reason=_reason("training", field, code), note=NOTES.get(("training", field))))

    for (path, function), arguments in PAPER_FUNCTION_DEFAULTS.items():
        defaults = source_defaults(path, function)
        group = path.split("/")[0]  # decoding/, training/ or data/: the row's group
        for argument, (setting, section, paper) in arguments.items():
            code = defaults[argument]
            note = "; ".join(filter(None, [setting, NOTES.get((group, argument))]))
            out.append(Row(group, f"{function}({argument})", section, paper, code, f"tfm/{path}",
                           reason=_reason(group, argument, code), note=note))

    for group, setting, section, paper, code in PAPER_CONVENTIONS:
        out.append(Row(group, setting, section, paper, code, "convention",
                       reason=_reason(group, setting, code)))
    return out


def undocumented(table=None):
    """Rows whose value differs from the paper's with no reason in `DIFFERENCES`.

    Args:
        table: list of `Row`, or None for `rows()`.

    Example:
        >>> undocumented([Row("model", "dropout", "§5.4", 0.1, 0.2, "somewhere")])[0].setting
        'dropout'
        >>> undocumented()   # every difference of the package has its reason
        []
    """
    return [row for row in (rows() if table is None else table) if row.status == "differs" and not row.reason]


def _fmt(value):
    if value is NOT_IN_PAPER:
        return "—"
    if value is None:
        return "`None`"
    if isinstance(value, float) and (abs(value) < 1e-3 and value):
        return f"{value:.0e}".replace("e-0", "e-")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 10000:
        return f"{value:,}"
    return f"`{value}`" if isinstance(value, (bool, int, float)) else str(value)


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


STATUS_MARK = {"same": "same", "differs": "**differs**", "not in paper": "not in paper"}


def render_markdown(table=None):
    """The table as markdown (what `docs/paper_fidelity.md` holds).

    Args:
        table: list of `Row`, or None for `rows()`.

    Example:
        >>> render_markdown().splitlines()[0]
        '# Paper fidelity: tfm beside Vaswani et al. (2017)'
    """
    table = rows() if table is None else table
    lines = [
        "# Paper fidelity: tfm beside Vaswani et al. (2017)",
        "",
        "Generated by `python -m tfm.config.fidelity --write docs/paper_fidelity.md` from the live code (the presets",
        "`TransformerConfig.base()` / `.big()`, the `TrainingConfig` defaults, the defaults of the search, the loss and",
        "the tokenizer trainer) and the paper's values written once in `tfm/config/fidelity.py`. Do not edit by hand:",
        "`tests/config/test_fidelity.py` fails when this file is stale, and when a setting differs from the paper",
        "without a reason.",
        "",
        "*same*: equal to the paper's value. **differs**: not equal, with the reason. *not in paper*: the paper",
        "does not give it; the note says where the value comes from. Sections are the paper's.",
        "",
    ]
    problems = undocumented(table)
    counts = {s: sum(r.status == s for r in table) for s in STATUS_MARK}
    lines.append(f"{len(table)} rows: {counts['same']} same, {counts['differs']} differ (each with its reason), "
                 f"{counts['not in paper']} not in the paper."
                 + (f" **{len(problems)} differences have no reason.**" if problems else ""))
    lines += ["", "## Model: the base and big presets (§3, §5, §6.1, Table 3)", "",
              "| setting | § | paper base | tfm base | paper big | tfm big | status | note |",
              "|---|---|---|---|---|---|---|---|"]
    model = [r for r in table if r.group == "model"]
    for base, big in zip(model[0::2], model[1::2]):
        statuses = {base.status, big.status}
        status = "differs" if "differs" in statuses else ("same" if statuses == {"same"} else "not in paper")
        note = " ".join(filter(None, [base.reason and f"base: {base.reason}", big.reason and f"big: {big.reason}",
                                      base.note]))
        lines.append(f"| `{base.setting}` | {base.section} | {_fmt(base.paper)} | {_fmt(base.code)} | "
                     f"{_fmt(big.paper)} | {_fmt(big.code)} | {STATUS_MARK[status]} | {_cell(note)} |")
    titles = {"training": "Training (§5, `TrainingConfig` defaults, the loss)",
              "decoding": "Decoding (§6.1, `tfm.decoding` defaults)",
              "data": "Data and vocabulary (§5.1)", "evaluation": "Evaluation (§6.1, Table 2)"}
    for group, title in titles.items():
        lines += ["", f"## {title}", "", "| setting | § | paper | tfm | status | reason or note |",
                  "|---|---|---|---|---|---|"]
        for row in (r for r in table if r.group == group):
            name = f"`{row.setting}`" if row.where != "convention" else row.setting
            text = row.reason or row.note or ""
            lines.append(f"| {name} | {row.section} | {_cell(_fmt(row.paper))} | {_cell(_fmt(row.code))} | "
                         f"{STATUS_MARK[row.status]} | {_cell(text)} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """The command line: print the table, `--write PATH` it, or `--check PATH` that the file is current.

    Args:
        argv: list of str, or None for `sys.argv[1:]`.

    Returns:
        int: 0, or 1 when a difference has no reason or (`--check`) the file is stale.

    Example:
        >>> import contextlib, io
        >>> with contextlib.redirect_stdout(io.StringIO()) as out:
        ...     status = main([])
        >>> status, out.getvalue().startswith("# Paper fidelity")
        (0, True)
    """
    parser = argparse.ArgumentParser(prog="python -m tfm.config.fidelity", description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", metavar="PATH", help="write the markdown table to PATH")
    action.add_argument("--check", metavar="PATH", help="exit 1 if PATH differs from the generated table or a "
                                                       "difference has no reason")
    args = parser.parse_args(argv)
    problems = undocumented()
    for row in problems:
        print(f"{row.where}: {row.code!r} differs from the paper's {row.paper!r} ({row.section}) with no reason "
              "in tfm.config.fidelity.DIFFERENCES", file=sys.stderr)
    text = render_markdown()
    if args.write:
        with open(args.write, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.write}")
    elif args.check:
        with open(args.check, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{args.check} is stale: python -m tfm.config.fidelity --write {args.check}", file=sys.stderr)
                return 1
    else:
        sys.stdout.write(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
