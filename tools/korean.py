"""The Korean edition (한국어판) of the course, tied to the English one mechanically.

notebooks/ko/NN_*.ipynb is the English notebook with every markdown cell translated: the same cells in the
same order, the code cells byte for byte, and each Korean markdown cell recording the SHA-256 of the English
cell it translates (`metadata.tfm_ko.en_sha256`). An English cell edited later no longer matches its record,
so its translation reads as stale until someone translates it again.

    python tools/korean.py worksheet 05 > /tmp/05.ko.txt   # every markdown cell: English, then Korean
    # ... write the Korean under each `<<<ko>>>` line ...
    python tools/korean.py apply 05 /tmp/05.ko.txt         # -> notebooks/ko/05_positional_encoding.ipynb
    python tools/korean.py check                            # stale, missing or untranslated cells; code drift
    python tools/korean.py build                            # docs/course/ko/: the English executed copies'
                                                            # outputs with the Korean markdown (no execution)

A worksheet of a notebook that has a Korean copy starts from its translations, so after an English edit only
the stale cells (marked `STALE`) need new Korean.
"""

import argparse
import copy
import hashlib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
ENGLISH = ROOT / "notebooks"
KOREAN = ENGLISH / "ko"
COURSE = ROOT / "docs" / "course"
KOREAN_COURSE = COURSE / "ko"
KEY = "tfm_ko"
HANGUL = re.compile("[\uac00-\ud7a3]")
CELL = re.compile(r"^<<<cell (?P<id>\S+)(?P<stale> STALE)?>>>\n(?P<en>.*?)\n<<<ko>>>\n(?P<ko>.*?)\n<<<end>>>$",
                  re.S | re.M)


def text(cell):
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def digest(cell):
    """The SHA-256 of a cell's source text: what a translation records of the English it translates."""
    return hashlib.sha256(text(cell).encode("utf-8")).hexdigest()


def read(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def write(path, notebook):
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(path).write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def english_notebooks():
    return sorted(ENGLISH.glob("[0-9][0-9]_*.ipynb"))


def find(prefix):
    """The English notebook whose name starts with `prefix` ("05" or "05_positional")."""
    found = [path for path in english_notebooks() if path.name.startswith(prefix)]
    if len(found) != 1:
        raise SystemExit(f"{prefix!r} names {len(found)} notebooks in notebooks/: "
                         f"{[p.name for p in english_notebooks()]}")
    return found[0]


def as_source(body):
    """Text -> the list-of-lines form notebooks store."""
    return body.splitlines(keepends=True)


def worksheet(english, korean=None):
    """The worksheet of an English notebook: each markdown cell's English and its Korean (empty when there is
    none yet; marked STALE when the English changed after it was translated)."""
    translated = {}
    if korean is not None:
        translated = {cell.get("id"): cell for cell in korean["cells"] if cell["cell_type"] == "markdown"}
    parts = []
    for cell in english["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        done = translated.get(cell.get("id"))
        ko = text(done) if done is not None else ""
        stale = done is not None and done.get("metadata", {}).get(KEY, {}).get("en_sha256") != digest(cell)
        parts.append(f"<<<cell {cell.get('id')}{' STALE' if stale else ''}>>>\n{text(cell)}\n<<<ko>>>\n{ko}\n<<<end>>>")
    return "\n\n".join(parts) + "\n"


def parse_worksheet(sheet):
    """`{cell id: Korean text}` from a worksheet."""
    return {match["id"]: match["ko"] for match in CELL.finditer(sheet)}


def apply(english, translations):
    """The Korean notebook: `english` with each markdown cell replaced by its translation and its record.

    Raises:
        ValueError: a markdown cell has no translation, or a translation holds no Hangul.
    """
    korean = copy.deepcopy(english)
    missing, no_hangul = [], []
    for cell in korean["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
            continue
        if cell["cell_type"] != "markdown":
            continue
        ko = translations.get(cell.get("id"), "").strip("\n")
        if not ko.strip():
            missing.append(cell.get("id"))
            continue
        if not HANGUL.search(ko):
            no_hangul.append(cell.get("id"))
        en_sha = digest(cell)
        cell["source"] = as_source(ko)
        cell.setdefault("metadata", {})[KEY] = {"en_sha256": en_sha}
    if missing or no_hangul:
        raise ValueError(f"cells without a translation: {missing}; translations without Hangul: {no_hangul}")
    korean.setdefault("metadata", {})[KEY] = {"language": "ko"}
    return korean


def problems(english, korean):
    """What is wrong with a Korean notebook against its English one: a list of sentences, empty when nothing."""
    found = []
    layout = lambda nb: [(cell["cell_type"], cell.get("id")) for cell in nb["cells"]]  # noqa: E731
    if layout(english) != layout(korean):
        return ["its cells are not the English notebook's cells (added, removed or moved): rebuild it with "
                "`worksheet` + `apply`"]
    for index, (en, ko) in enumerate(zip(english["cells"], korean["cells"])):
        if en["cell_type"] == "code":
            if text(en) != text(ko):
                found.append(f"code cell {index} differs from the English")
            continue
        record = ko.get("metadata", {}).get(KEY, {})
        if record.get("en_sha256") is None:
            found.append(f"markdown cell {index} ({ko.get('id')}) records no English cell")
        elif record["en_sha256"] != digest(en):
            found.append(f"markdown cell {index} ({ko.get('id')}) is stale: the English changed after it was "
                         "translated")
        if not HANGUL.search(text(ko)):
            found.append(f"markdown cell {index} ({ko.get('id')}) holds no Hangul")
    return found


def check_all():
    """`{English notebook name: problems}` for every English notebook whose Korean copy is missing or wrong."""
    report = {}
    for path in english_notebooks():
        korean = KOREAN / path.name
        if not korean.exists():
            report[path.name] = ["no Korean copy in notebooks/ko/"]
            continue
        wrong = problems(read(path), read(korean))
        if wrong:
            report[path.name] = wrong
    for path in sorted(KOREAN.glob("*.ipynb")):
        if not (ENGLISH / path.name).exists():
            report[path.name] = ["a Korean copy of no English notebook"]
    return report


GLOSSARY = ROOT / "docs" / "ko" / "glossary.md"
_CODE = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|\]\([^)]*\)|<[^>\n]*>", re.S)


def read_glossary(path=GLOSSARY):
    """`[(english, (korean, *allowed))]` from the glossary's table (docs/ko/glossary.md)."""
    rows = []
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not line.startswith("|") or cells[0] in ("English", "") or set(cells[0]) <= {"-"}:
            continue
        english, korean, others = cells
        rows.append((english, (korean, *[form.strip() for form in others.split(",") if form.strip()])))
    return rows


def prose(markdown):
    """The words of a markdown cell a reader reads as text: no code, no formulas, no link targets, no HTML."""
    return _CODE.sub(" ", markdown)


def term_pattern(english):
    """A regex for an English glossary term in prose: any case, words joined by spaces or hyphens, plurals."""
    words = re.split(r"[\s-]+", english)
    return re.compile(r"\b" + r"[\s-]+".join(map(re.escape, words)) + r"(?:s|es)?\b", re.I)


def form_pattern(form):
    """A regex for a glossary form in a translation: any case, its words joined by spaces, hyphens or nothing."""
    return re.compile(r"[\s-]*".join(map(re.escape, re.split(r"[\s-]+", form))), re.I)


def glossary_problems(english, korean, glossary=None):
    """Where a Korean notebook does not write a glossary term as the glossary says: for every markdown cell whose
    English prose uses a term, its translation must hold the term's Korean form or one of the allowed ones."""
    glossary = read_glossary() if glossary is None else glossary
    patterns = [(term_pattern(en), en, forms, [form_pattern(form) for form in forms]) for en, forms in glossary]
    found = []
    for en_cell, ko_cell in zip(english["cells"], korean["cells"]):
        if en_cell["cell_type"] != "markdown" or ko_cell["cell_type"] != "markdown":
            continue
        words, translation = prose(text(en_cell)), text(ko_cell)
        for pattern, term, forms, accepted in patterns:
            if pattern.search(words) and not any(form.search(translation) for form in accepted):
                found.append(f"cell {en_cell.get('id')}: {term!r} -> one of {list(forms)}")
    return found


def build_copy(executed, korean):
    """The Korean executed copy: the English executed copy's cells and outputs, the Korean markdown.

    Raises:
        ValueError: the two notebooks' cells differ, or a code cell does (the English copy or the Korean
            notebook is behind its source).
    """
    if [c["cell_type"] for c in executed["cells"]] != [c["cell_type"] for c in korean["cells"]]:
        raise ValueError("the executed copy and the Korean notebook have different cells")
    built = copy.deepcopy(executed)
    for index, (cell, ko) in enumerate(zip(built["cells"], korean["cells"])):
        if cell["cell_type"] == "code":
            if text(cell) != text(ko):
                raise ValueError(f"code cell {index} differs between the executed copy and the Korean notebook")
        elif cell["cell_type"] == "markdown":
            cell["source"] = ko["source"]
            cell["metadata"] = copy.deepcopy(ko.get("metadata", {}))
    built["metadata"][KEY] = {"language": "ko"}
    return built


def build(output=KOREAN_COURSE):
    """Writes the Korean executed copies; returns their names. Refuses to build from a stale translation."""
    report = check_all()
    if report:
        raise SystemExit("the Korean notebooks are not current:\n" + "\n".join(
            f"  {name}: {'; '.join(wrong)}" for name, wrong in report.items()))
    written = []
    for path in english_notebooks():
        executed = COURSE / path.name
        if not executed.exists():
            continue
        write(pathlib.Path(output) / path.name, build_copy(read(executed), read(KOREAN / path.name)))
        written.append(path.name)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sheet = commands.add_parser("worksheet", help="print a notebook's worksheet (English and Korean, cell by cell)")
    sheet.add_argument("notebook", help="name prefix, e.g. 05")
    done = commands.add_parser("apply", help="write notebooks/ko/NN from a filled-in worksheet")
    done.add_argument("notebook")
    done.add_argument("worksheet", help="the worksheet file")
    checking = commands.add_parser("check", help="report Korean notebooks that are missing, stale or wrong, and "
                                   "terms not written as docs/ko/glossary.md says")
    checking.add_argument("notebooks", nargs="*", help="name prefixes (default: all)")
    make = commands.add_parser("build", help="write docs/course/ko/ from docs/course/ and notebooks/ko/")
    make.add_argument("--output", default=str(KOREAN_COURSE))
    args = parser.parse_args(argv)
    if args.command == "worksheet":
        path = find(args.notebook)
        korean = KOREAN / path.name
        sys.stdout.write(worksheet(read(path), read(korean) if korean.exists() else None))
    elif args.command == "apply":
        path = find(args.notebook)
        translations = parse_worksheet(pathlib.Path(args.worksheet).read_text(encoding="utf-8"))
        try:
            korean = apply(read(path), translations)
        except ValueError as error:
            raise SystemExit(f"{path.name}: {error}") from None
        write(KOREAN / path.name, korean)
        print(f"wrote notebooks/ko/{path.name}")
    elif args.command == "check":
        report = check_all()
        if args.notebooks:
            report = {name: wrong for name, wrong in report.items() if name.startswith(tuple(args.notebooks))}
        for path in english_notebooks():
            korean = KOREAN / path.name
            if (args.notebooks and not path.name.startswith(tuple(args.notebooks))) or not korean.exists():
                continue
            if not problems(read(path), read(korean)):
                terms = glossary_problems(read(path), read(korean))
                if terms:
                    report[path.name] = terms
        for name, wrong in report.items():
            print(f"{name}:\n  " + "\n  ".join(wrong))
        print("every Korean notebook is current" if not report else f"{len(report)} notebook(s) to fix")
        return 1 if report else 0
    elif args.command == "build":
        for name in build(args.output):
            print(f"wrote {pathlib.Path(args.output).relative_to(ROOT) if pathlib.Path(args.output).is_absolute() else args.output}/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
