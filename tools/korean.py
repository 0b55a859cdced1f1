"""The Korean edition (한국어판) of the course, tied to the English one mechanically.

notebooks/ko/NN_*.ipynb is the English notebook with every markdown cell translated: the same cells in the
same order, the code cells byte for byte, and each Korean markdown cell recording the SHA-256 of the English
cell it translates (`metadata.tfm_ko.en_sha256`). An English cell edited later no longer matches its record,
so its translation reads as stale until someone translates it again.

    python tools/korean.py worksheet 05 > /tmp/05.ko.txt   # every markdown cell: English, then Korean
    # ... write the Korean under each `<<<ko>>>` line ...
    python tools/korean.py apply 05 /tmp/05.ko.txt         # -> notebooks/ko/05_positional_encoding.ipynb
    python tools/korean.py check                            # stale, missing or untranslated cells; code drift;
                                                            # terms not written as docs/ko/glossary.md says;
                                                            # hand-written pages whose English page changed
    python tools/korean.py record-page docs/course/ko/index.md   # after translating a tied page's English edit
    python tools/korean.py renames                          # stale cells whose English only renamed a `name`
    python tools/korean.py build                            # docs/course/ko/: the English executed copies'
                                                            # outputs with the Korean markdown (no execution)

A worksheet of a notebook that has a Korean copy starts from its translations, so after an English edit only
the stale cells (marked `STALE`) need new Korean.

The hand-written pages of `TIED_PAGES` (the course index) are tied the same way, a page at a time: the Korean
page ends with a record of the SHA-256 of the English page it translates (`<!-- tfm_ko: ... -->`), the figures
`tools/docs_site.py --course-index` rewrites in both pages (the run times) left out of the hash. An English edit
marks the Korean page stale (`check` names the commit it was translated from, for `git diff`) until it is
translated and `record-page` records the English page as it now is.
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
    layout = lambda nb: [(cell["cell_type"], cell.get("id")) for cell in nb["cells"]]  # noqa: E731  (two uses below)
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
_CODE = re.compile(r"```.*?```|`[^`\n]*(?:\n[^`\n]*)?`|\$\$.*?\$\$|\$[^$\n]*\$|\]\([^)]*\)|<[^>\n]*>", re.S)
# What a Korean reader does not read as the Korean edition's own words: the English quotations (a blockquote line
# without Hangul, then a "…" / “…” span without Hangul, over line breaks within a paragraph: a quote is wrapped as
# its sentence is) and an English gloss right after a Korean word ("자기회귀(auto-regressive)").
_BLOCKQUOTE = re.compile(r"^>[^\n가-힣]*$", re.M)
_QUOTED = re.compile(r"\"(?:[^\"가-힣\n]|\n(?![ \t]*\n))*\""
                     r"|“(?:[^”가-힣\n]|\n(?![ \t]*\n))*”"
                     r"|(?<=[가-힣*])\([^()가-힣]*\)")
_WORD_START = r"(?<![0-9A-Za-z가-힣_])"
_EXCEPT = re.compile(r"^(?P<form>.+?)\s*\((?P<exceptions>.+)\s+제외\)$")


class Term:
    """One row of the glossary: the English term, the form the Korean edition writes, the other forms it accepts
    beside it (abbreviations), and the variants it never writes (each with the phrases that contain it legitimately).

    An English term with a sense in parentheses ("step (training step)") has other senses that translate otherwise,
    so only its banned variants are checked, not that each English use becomes the Korean form.
    """

    def __init__(self, english, korean, also=(), banned=()):
        self.english, self.korean, self.also = english, korean, tuple(also)
        self.banned = tuple(banned)  # (variant, (exception, ...))

    @property
    def forms(self):
        return (self.korean, *self.also)

    @property
    def sense_only(self):
        return "(" in self.english

    def __repr__(self):
        return f"Term({self.english!r} -> {self.korean!r}, banned {[variant for variant, _ in self.banned]})"


def _forms(cell):
    return [form.strip() for form in cell.split(",") if form.strip() and form.strip() != "—"]


def _banned(cell):
    found = []
    for entry in _forms(cell):
        match = _EXCEPT.match(entry)
        if match:
            found.append((match["form"], tuple(e.strip() for e in match["exceptions"].split("·"))))
        else:
            found.append((entry, ()))
    return found


def read_glossary(path=GLOSSARY):
    """`[Term]` from the glossary's table (docs/ko/glossary.md): English | 한국어 | 함께 쓰는 표기 | 쓰지 않는 표기.

    A banned variant may name the phrases that hold it legitimately: `기계 (기계 번역 제외)`.
    """
    rows = []
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not line.startswith("|") or cells[0] in ("English", "") or set(cells[0]) <= {"-"}:
            continue
        english, korean, also, banned = cells
        rows.append(Term(english, korean, _forms(also), _banned(banned)))
    return rows


def prose(markdown):
    """The words of a markdown cell a reader reads as text: no code, no formulas, no link targets, no HTML."""
    return _CODE.sub(" ", markdown)


def own_prose(markdown):
    """The Korean edition's own words in a markdown text: its prose without the English quotations and glosses."""
    return _QUOTED.sub(" ", _BLOCKQUOTE.sub(" ", prose(markdown)))


def term_pattern(english):
    """A regex for an English glossary term in prose: any case, words joined by spaces or hyphens, plurals."""
    words = re.split(r"[\s-]+", english)
    return re.compile(r"\b" + r"[\s-]+".join(map(re.escape, words)) + r"(?:s|es)?\b", re.I)


def form_pattern(form):
    """A regex for a glossary form in a translation: any case, its words joined by spaces, hyphens or nothing."""
    return re.compile(r"[\s-]*".join(map(re.escape, re.split(r"[\s-]+", form))), re.I)


def variant_pattern(variant):
    """A regex for a banned variant: exactly as written (case too), starting a word ("층" but not "은닉층")."""
    return re.compile(_WORD_START + re.escape(variant))


def glossary_problems(english, korean, glossary=None):
    """Where a Korean notebook does not write a glossary term as the glossary says: for every markdown cell whose
    English prose uses a term, its translation must hold the term's Korean form, another accepted form or the
    English term itself (a gloss); and no cell's own prose may hold a banned variant (see `banned_variants`)."""
    glossary = read_glossary() if glossary is None else glossary
    patterns = [(term_pattern(term.english), term, [form_pattern(form) for form in (*term.forms, term.english)])
                for term in glossary if not term.sense_only]
    found = []
    for en_cell, ko_cell in zip(english["cells"], korean["cells"]):
        if en_cell["cell_type"] != "markdown" or ko_cell["cell_type"] != "markdown":
            continue
        words, translation = prose(text(en_cell)), text(ko_cell)
        for pattern, term, accepted in patterns:
            if pattern.search(words) and not any(form.search(translation) for form in accepted):
                found.append(f"cell {en_cell.get('id')}: {term.english!r} -> one of {list(term.forms)}")
        found += [f"cell {ko_cell.get('id')}: {problem}" for problem in banned_variants(translation, glossary)]
    return found


def banned_variants(markdown, glossary=None):
    """The banned variants a Korean markdown text writes, as sentences: `"'에포크' (epoch -> 에폭): …"`.

    Only the text's own prose counts (`own_prose`: no code, formulas, link targets, HTML, English quotations or
    glosses); a variant counts where it starts a word and is written exactly so (case too), outside the phrases its
    glossary row excepts.
    """
    glossary = read_glossary() if glossary is None else glossary
    words = own_prose(markdown)
    found = []
    for term in glossary:
        for variant, exceptions in term.banned:
            kept = words
            for phrase in exceptions:
                kept = kept.replace(phrase, " ")
            for match in variant_pattern(variant).finditer(kept):
                context = kept[max(0, match.start() - 25):match.end() + 25].replace("\n", " ")
                found.append(f"{variant!r} ({term.english} -> {term.korean}): …{context}…")
    return found


def korean_pages():
    """The Korean edition's own pages (docs/ko/, the Korean course index), the glossary left out: it lists the
    banned variants."""
    pages = sorted(path for path in (ROOT / "docs" / "ko").rglob("*.md") if path != GLOSSARY)
    return pages + [KOREAN_COURSE / "index.md"]


def page_problems(glossary=None):
    """`{page: [banned variant, ...]}` for every Korean page that writes a term as the glossary says not to."""
    glossary = read_glossary() if glossary is None else glossary
    report = {}
    for path in korean_pages():
        if path.exists():
            found = banned_variants(path.read_text(encoding="utf-8"), glossary)
            if found:
                report[str(path.relative_to(ROOT))] = found
    return report


# --- Hand-written pages tied to their English pages ----------------------------------------------------------

# Korean page -> the English page it translates.
TIED_PAGES = {KOREAN_COURSE / "index.md": COURSE / "index.md"}
PAGE_RECORD = re.compile(r"^<!-- tfm_ko: translates (?P<page>\S+) \(en_sha256 (?P<sha>[0-9a-f]{64})\) -->\n?", re.M)
# What tools/docs_site.py --course-index rewrites from the copies' records, in both pages: a row's run time (its
# last cell) and the total ("3 h 25 min in all"; the Korean index's own figures are rewritten by the same tool).
_RUN_TIME_CELL = re.compile(r"^(\| \d\d \|.*\|)[^|\n]*\|[ \t]*$", re.M)
_TOTAL = re.compile(r"\d+ h \d+ min in all")


def page_digest(english):
    """The SHA-256 a Korean page records of the English page's text: the run times left out, so that a re-run
    course (new run times, written into both pages by tools/docs_site.py) leaves the translation current.

    Example:
        >>> a = "| 01 | [Seq2seq](01_seq2seq.ipynb) | Words as vectors. | 22 min |\\nRun: 3 h 25 min in all."
        >>> page_digest(a) == page_digest(a.replace("22 min", "31 min").replace("3 h 25", "3 h 34"))
        True
        >>> page_digest(a) == page_digest(a.replace("Words as vectors.", "Words as points."))
        False
    """
    masked = _TOTAL.sub("… in all", _RUN_TIME_CELL.sub(r"\1 … |", english))
    return hashlib.sha256(masked.encode("utf-8")).hexdigest()


def page_record(korean):
    """`(English page, SHA-256)` a Korean page's text records, or None."""
    match = PAGE_RECORD.search(korean)
    return (match["page"], match["sha"]) if match else None


def with_page_record(korean, english_page, english):
    """The Korean page's text with its record of `english` (the English page's text, at `english_page`, a path
    from the repository's root) as its last line, replacing any record it had."""
    line = f"<!-- tfm_ko: translates {english_page} (en_sha256 {page_digest(english)}) -->\n"
    return PAGE_RECORD.sub("", korean).rstrip("\n") + "\n\n" + line


def translated_from(english_path, sha):
    """The commit (short hash) of the English page's last version in git whose `page_digest` is `sha`, or None."""
    import subprocess

    path = pathlib.Path(english_path).resolve()
    if not path.is_relative_to(ROOT):
        return None
    relative = str(path.relative_to(ROOT))
    log = subprocess.run(["git", "log", "--format=%h", "-n", "100", "--", relative], cwd=ROOT, capture_output=True,
                         text=True).stdout
    for commit in log.split():
        shown = subprocess.run(["git", "show", f"{commit}:{relative}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0 and page_digest(shown.stdout) == sha:
            return commit
    return None


def page_staleness(pages=None):
    """`{Korean page: [problem]}` for every tied page that records no English page, another one, or an English page
    that has changed since (the commit it was translated from named when git has it)."""
    pages = TIED_PAGES if pages is None else pages
    report = {}
    for korean_path, english_path in pages.items():
        where = _relative(korean_path)
        english_page = _relative(english_path)
        if not pathlib.Path(korean_path).exists():
            report[where] = [f"missing: translate {english_page}, then `python tools/korean.py record-page {where}`"]
            continue
        record = page_record(pathlib.Path(korean_path).read_text(encoding="utf-8"))
        if record is None or record[0] != english_page:
            report[where] = [f"records no translation of {english_page}: translate it, then `python tools/korean.py "
                             f"record-page {where}`"]
        elif record[1] != page_digest(pathlib.Path(english_path).read_text(encoding="utf-8")):
            commit = translated_from(english_path, record[1])
            since = f" (`git diff {commit} -- {english_page}` shows what)" if commit else ""
            report[where] = [f"stale: {english_page} changed after it was translated{since}; translate the change, "
                             f"then `python tools/korean.py record-page {where}`"]
    return report


def record_page(korean_path, pages=None):
    """Records in the tied Korean page that it translates its English page as that page now is; returns the English
    page's path."""
    pages = TIED_PAGES if pages is None else pages
    key = {pathlib.Path(k).resolve(): k for k in pages}.get(pathlib.Path(korean_path).resolve())
    if key is None:
        raise SystemExit(f"{korean_path} is not a tied page; the tied pages: {[_relative(k) for k in pages]}")
    english_path = pages[key]
    text = pathlib.Path(key).read_text(encoding="utf-8")
    english = pathlib.Path(english_path).read_text(encoding="utf-8")
    pathlib.Path(key).write_text(with_page_record(text, _relative(english_path), english), encoding="utf-8")
    return _relative(english_path)


def _relative(path):
    path = pathlib.Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


_TICKS = re.compile(r"`[^`\n]*`")


def carry_renames(old_english, new_english, korean):
    """The Korean text with the English edit carried over, when the edit only renamed names in backticks
    (`tfm.decoding.evaluation` -> `tfm.decoding.bleu`); None when the prose changed too (translate it again) or a
    renamed name is not in the Korean. A particle after a renamed name is not adjusted: read the result.

    Example:
        >>> carry_renames("Call `f_old` twice.", "Call `f_new` twice.", "`f_old`를 두 번 호출합니다.")
        '`f_new`를 두 번 호출합니다.'
        >>> carry_renames("Call `f_old` twice.", "Call `f_new` once.", "`f_old`를 두 번 호출합니다.") is None
        True
    """
    if _TICKS.sub("``", old_english) != _TICKS.sub("``", new_english):
        return None
    renamed = {old: new for old, new in zip(_TICKS.findall(old_english), _TICKS.findall(new_english)) if old != new}
    if any(old not in korean for old in renamed):
        return None
    for old, new in renamed.items():
        korean = korean.replace(old, new)
    return korean


def committed_versions(path):
    """`{SHA-256 of a cell's text: text}` over the committed versions of a notebook (`git log`), so the English
    that a stale translation records can be read again."""
    import subprocess

    relative = str(pathlib.Path(path).resolve().relative_to(ROOT))
    found = {}
    log = subprocess.run(["git", "log", "--format=%H", "-n", "50", "--", relative], cwd=ROOT, capture_output=True,
                         text=True).stdout
    for commit in log.split():
        shown = subprocess.run(["git", "show", f"{commit}:{relative}"], cwd=ROOT, capture_output=True, text=True)
        if shown.returncode == 0:
            for cell in json.loads(shown.stdout)["cells"]:
                found[digest(cell)] = text(cell)
    return found


def renames(names=()):
    """Carries names renamed in the English over to the stale Korean cells whose English changed in nothing else,
    and updates their records; returns `(carried, left)`: the cells done and the stale cells to translate again."""
    carried, left = [], []
    for path in english_notebooks():
        korean_path = KOREAN / path.name
        if (names and not path.name.startswith(tuple(names))) or not korean_path.exists():
            continue
        english, korean = read(path), read(korean_path)
        history, changed = None, False
        for index, (en, ko) in enumerate(zip(english["cells"], korean["cells"])):
            record = ko.get("metadata", {}).get(KEY, {}).get("en_sha256")
            if en["cell_type"] != "markdown" or ko["cell_type"] != "markdown" or record in (None, digest(en)):
                continue
            history = committed_versions(path) if history is None else history
            done = carry_renames(history[record], text(en), text(ko)) if record in history else None
            where = f"{path.name} cell {index} ({en.get('id')})"
            if done is None:
                left.append(where)
                continue
            ko["source"], ko["metadata"][KEY]["en_sha256"] = as_source(done), digest(en)
            carried.append(where)
            changed = True
        if changed:
            write(korean_path, korean)
    return carried, left


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
    """Writes the Korean executed copies; returns `(written, behind)`: the names written, and `{name: why}` for the
    copies left as they are because the English executed copy is behind its notebook (its code or cells differ:
    `make course` first). Refuses to build from a stale translation."""
    report = check_all()
    if report:
        raise SystemExit("the Korean notebooks are not current:\n" + "\n".join(
            f"  {name}: {'; '.join(wrong)}" for name, wrong in report.items()))
    written, behind = [], {}
    for path in english_notebooks():
        executed = COURSE / path.name
        if not executed.exists():
            continue
        try:
            built = build_copy(read(executed), read(KOREAN / path.name))
        except ValueError as error:
            behind[path.name] = f"{error} (docs/course/{path.name} is behind notebooks/{path.name}: make course first)"
            continue
        write(pathlib.Path(output) / path.name, built)
        written.append(path.name)
    return written, behind


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sheet = commands.add_parser("worksheet", help="print a notebook's worksheet (English and Korean, cell by cell)")
    sheet.add_argument("notebook", help="name prefix, e.g. 05")
    done = commands.add_parser("apply", help="write notebooks/ko/NN from a filled-in worksheet")
    done.add_argument("notebook")
    done.add_argument("worksheet", help="the worksheet file")
    checking = commands.add_parser("check", help="report Korean notebooks that are missing, stale or wrong, "
                                   "terms (in the notebooks and the Korean pages) not written as "
                                   "docs/ko/glossary.md says, and tied pages (the course index) whose English page "
                                   "changed after they were translated")
    checking.add_argument("notebooks", nargs="*", help="name prefixes (default: all)")
    renaming = commands.add_parser("renames", help="carry names renamed in the English (inside backticks, nothing "
                                   "else changed) over to the stale Korean cells, found by their records in git")
    renaming.add_argument("notebooks", nargs="*", help="name prefixes (default: all)")
    recording = commands.add_parser("record-page", help="record that a tied Korean page (the course index) "
                                    "translates its English page as it now is")
    recording.add_argument("page", help="the Korean page, e.g. docs/course/ko/index.md")
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
        if not args.notebooks:
            report.update(page_problems())
            for page, wrong in page_staleness().items():
                report[page] = report.get(page, []) + wrong
        for name, wrong in report.items():
            print(f"{name}:\n  " + "\n  ".join(wrong))
        print("every Korean notebook is current" if not report else f"{len(report)} notebook(s) or page(s) to fix")
        return 1 if report else 0
    elif args.command == "renames":
        carried, left = renames(args.notebooks)
        for where in carried:
            print(f"carried over: {where}")
        for where in left:
            print(f"translate again (the English prose changed): {where}")
        return 1 if left else 0
    elif args.command == "record-page":
        print(f"recorded: {args.page} translates {record_page(args.page)} as it now is")
    elif args.command == "build":
        output = pathlib.Path(args.output)
        written, behind = build(args.output)
        for name in written:
            print(f"wrote {_relative(output / name)}")
        for name, why in behind.items():
            print(f"left as it is: {name}: {why}")
        return 1 if behind else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
