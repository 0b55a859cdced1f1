"""How close the package is to the paper: every preset and default beside Vaswani et al. (2017), §3–§6.

    python -m tfm.config.fidelity                              # print the table (markdown)
    python -m tfm.config.fidelity --write docs/paper_fidelity.md
    python -m tfm.config.fidelity --check docs/paper_fidelity.md  # exit 1 if the file is stale or a difference
                                                                  # is unexplained

The paper's values are written once, in `tfm.config.paper_settings` (`PAPER_MODEL`, `PAPER_TRAINING`, ...), as
the reference. The
package's values are read from the live code every time: `Recipe.preset("base")` / `("big")` and the
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

from tfm.config.configs import TransformerConfig
from tfm.config.paper_settings import (
    DIFFERENCES,
    NOT_IN_PAPER,
    NOTES,
    PAPER_CONVENTIONS,
    PAPER_FUNCTION_DEFAULTS,
    PAPER_MODEL,
    PAPER_TRAINING,
)
from tfm.config.recipe import Recipe
from tfm.config.run_settings import DataConfig, DecodingConfig, TrainingConfig

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tfm/: source_defaults' paths start here


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
    presets = {"base": Recipe.preset("base"), "big": Recipe.preset("big")}
    required = [f.name for cls in (TransformerConfig, DecodingConfig, TrainingConfig) for f in dataclasses.fields(cls)]
    missing = sorted(set(required) - set(PAPER_MODEL) - set(PAPER_TRAINING))
    if missing:
        raise ValueError(f"Recipe fields {missing} have no entry in tfm.config.paper_settings.PAPER_MODEL: "
                         "add the paper's value (or NOT_IN_PAPER) and the section")
    order = [f.name for cls in (TransformerConfig, DataConfig, TrainingConfig, DecodingConfig)
             for f in dataclasses.fields(cls)]
    for field in sorted(PAPER_MODEL, key=order.index):
        section, base, big = PAPER_MODEL[field]
        for preset, paper in (("base", base), ("big", big)):
            part = presets[preset].part_of(field)
            code = _config_value(getattr(presets[preset], part), field)
            out.append(Row("model", field, section, paper, code, f"Recipe.preset({preset!r}).{part}.{field}",
                           preset=preset, reason=_reason("model", f"{preset}.{field}", code),
                           note=NOTES.get(("model", field))))

    training = TrainingConfig()
    fields = [f.name for f in dataclasses.fields(TrainingConfig) if f.name not in PAPER_MODEL]
    missing = sorted(set(fields) - set(PAPER_TRAINING))
    if missing:
        raise ValueError(f"TrainingConfig fields {missing} have no entry in tfm.config.paper_settings.PAPER_TRAINING")
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
        "Generated by `python -m tfm.config.fidelity --write docs/paper_fidelity.md` "
        "from the live code (the recipes",
        "`Recipe.preset(\"base\")` / `(\"big\")`, the `TrainingConfig` defaults, "
        "the defaults of the search, the loss and",
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
    lines += ["", "## Model and recipe: the base and big presets (§3, §5, §6.1, Table 3)", "",
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
              "in tfm.config.paper_settings.DIFFERENCES", file=sys.stderr)
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
