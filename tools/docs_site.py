"""The documentation website's hooks (mkdocs.yml `hooks:`) and the course index's table.

    make docs                                         # .venv/bin/mkdocs build -> site/
    .venv/bin/python tools/docs_site.py --course-index   # docs/course/index.md's table, ko/index.md's run times

MkDocs finds the guides, results and API pages in docs/ by itself; these hooks add what lies
outside it or needs the course's records:

- the front page is README.md, its links into docs/ made relative to the site (`docs/x.md` -> `x.md`);
- each executed notebook (docs/course/NN_*.ipynb, rendered as it is by mkdocs-jupyter, never run)
  gets a bar above and below: its place in the course (previous / next), its full-mode run time
  from the copy's `tfm_course` record (tools/make_course.py), and "Open the source notebook", a
  link to the output-free notebooks/NN_*.ipynb, copied into the site beside it;
- MathJax 2.7 (the notebooks' formulas) is copied from the jupyter-server-mathjax package into
  site/assets/mathjax/, so no page loads anything from the network;
- a notebook page's <body> gets the class `tfm-notebook` (its wider column, docs/assets/tfm.css), its contents
  entries keep the headings' inline code, and its permalinks are Material's (left out of search titles);
- a notebook page's first code cell (the setup: imports, settings, the `show` helper) is folded into a closed
  <details> whose summary says so ("Setup: imports and settings (click to show)"); the cell inside is unchanged;
- the search index's titles are plain text (no "¶", TeX written out; an API entry by its name, without its
  signature), before the offline plugin copies the index into search/search_index.js for pages opened
  from the disk;
- a benchmark's notes page (docs/results/NAME.notes.md) gets a title; the Results summary links each.

The docstring tools' warnings (griffe's on a docstring it cannot parse, which drops what it could not
read, and autorefs' on a reference it cannot resolve) stay warnings, so the strict build fails on them
as on a broken link; tools/griffe_extensions.py documents each object once, where it is defined.

The course index's table (docs/course/index.md, between the `course-table` markers) is written
from the copies' records and notebooks/README.md's one-line summaries by `--course-index`;
tests/test_course.py fails when it no longer matches the copies.

This module does not import `tfm`, and imports MkDocs only inside the hooks.
"""

import argparse
import html
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COURSE_DIR = DOCS / "course"
NOTEBOOK_DIR = ROOT / "notebooks"
COURSE_INDEX = COURSE_DIR / "index.md"
KOREAN_COURSE_INDEX = COURSE_DIR / "ko" / "index.md"
SOURCE_DIR = "course/source"  # where the source notebooks go in the site
# The Korean edition (tools/korean.py): its executed copies in docs/course/ko/, its notebooks in notebooks/ko/.
KOREAN_COURSE = "course/ko"
KOREAN_SOURCE_DIR = "course/ko/source"
MATHJAX_DIR = "assets/mathjax"
MATHJAX_CONFIG = "assets/mathjax-config.js"
TABLE_START, TABLE_END = "<!-- course-table: written by tools/docs_site.py --course-index -->", "<!-- /course-table -->"
NOTEBOOK_NAME = re.compile(r"^\d\d_\w+\.ipynb$")
# A markdown link or image target: `](target)` or `](target "title")`.
LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")


# --- The course's records -----------------------------------------------------------------------------

def copies(course_dir=COURSE_DIR):
    """The executed notebooks, in course order."""
    return sorted(p for p in course_dir.glob("*.ipynb") if NOTEBOOK_NAME.match(p.name))


def read_notebook(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def title(notebook):
    """The notebook's first heading without its `#` and number:
    '01 · Sequence to sequence' -> 'Sequence to sequence'."""
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for line in text.splitlines():
                if line.startswith("# "):
                    return re.sub(r"^\d+\s*·\s*", "", line[2:].strip())
    return ""


def run_time(seconds):
    """A full-mode run time as the course index prints it: '22 s', '6.5 min', '26 min'."""
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    minutes = seconds / 60
    return f"{minutes:.1f} min" if minutes < 10 else f"{round(minutes)} min"


def record(notebook):
    """The copy's `tfm_course` record (tools/make_course.py), or {}."""
    return notebook.get("metadata", {}).get("tfm_course", {})


def summaries(readme=NOTEBOOK_DIR / "README.md"):
    """notebooks/README.md's 'What it shows' column, by notebook file name."""
    found = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        match = re.search(r"\((\d\d_\w+\.ipynb)\)", cells[1]) if len(cells) >= 3 else None
        if match:
            found[match.group(1)] = "|".join(cells[2:]).strip()
    return found


def course_table(course_dir=COURSE_DIR):
    """The markdown table of the course index: number, notebook, what it shows, full-mode run time."""
    shows = summaries()
    rows = ["| # | Notebook | What it shows | Run time |", "|---|---|---|---|"]
    total = 0
    for path in copies(course_dir):
        notebook = read_notebook(path)
        seconds = record(notebook).get("seconds")
        total += seconds or 0
        rows.append(f"| {path.name[:2]} | [{title(notebook)}]({path.name}) | {shows.get(path.name, '')} | "
                    f"{run_time(seconds) if seconds is not None else 'not run'} |")
    hours, minutes = divmod(round(total / 60), 60)
    rows.append("")
    rows.append(f"Run times: each copy's full-mode run on one of this project's 2-core CPU machines, from its "
                f"record; {hours} h {minutes:02d} min in all. The machines differ (the same code has taken twice "
                f"as long on one as on another), so compare a run with its neighbours in the same copy, not "
                f"across copies.")
    return "\n".join(rows)


def write_course_index(path=COURSE_INDEX):
    text = path.read_text(encoding="utf-8")
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    new = text[:start] + "\n" + course_table(path.parent) + "\n" + text[end:]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def korean_run_time(seconds):
    """`run_time` as the Korean index writes it: '22초', '6.5분', '26분'."""
    return run_time(seconds).replace(" min", "분").replace(" s", "초")


def write_korean_course_index(path=KOREAN_COURSE_INDEX, course_dir=COURSE_DIR):
    """The Korean course index's run times (its rows' last cell and the total) from the English copies'
    records: the Korean copies carry the English run's outputs. Its prose is translated by hand, so only
    these figures are rewritten. Returns whether the file changed."""
    text = path.read_text(encoding="utf-8")
    seconds = {p.name[:2]: record(read_notebook(p)).get("seconds") for p in copies(course_dir)}
    lines = []
    for line in text.splitlines(keepends=True):
        cells = line.split("|")
        number = cells[1].strip() if line.startswith("| ") and len(cells) > 5 else None
        if number in seconds and seconds[number] is not None:
            cells[-2] = f" {korean_run_time(seconds[number])} "
            line = "|".join(cells)
        lines.append(line)
    new = "".join(lines)
    hours, minutes = divmod(round(sum(s or 0 for s in seconds.values()) / 60), 60)
    new = re.sub(r"합쳐 \d+시간 \d+분", f"합쳐 {hours}시간 {minutes}분", new)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


# --- The front page -------------------------------------------------------------------------------------

def readme_for_site(text):
    """README.md as the site's index.md: links into docs/ lose their `docs/` (the site's root is docs/)."""
    def relink(match):
        target = match.group(2)
        if target.startswith("docs/"):
            target = target[len("docs/"):]
        return match.group(1) + target + match.group(3)
    return LINK.sub(relink, text)


# --- MkDocs hooks ---------------------------------------------------------------------------------------

def _mathjax_root():
    import jupyter_server_mathjax

    return pathlib.Path(jupyter_server_mathjax.__file__).parent / "static"


def on_files(files, config):
    from mkdocs.structure.files import File

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=readme_for_site(readme)))
    for path in copies(DOCS / "course"):
        source = NOTEBOOK_DIR / path.name
        if source.is_file():
            files.append(File.generated(config, f"{SOURCE_DIR}/{path.name}", abs_src_path=str(source)))
    for path in copies(DOCS / KOREAN_COURSE):
        source = NOTEBOOK_DIR / "ko" / path.name
        if source.is_file():
            files.append(File.generated(config, f"{KOREAN_SOURCE_DIR}/{path.name}", abs_src_path=str(source)))
    root = _mathjax_root()
    for path in sorted(root.rglob("*")):
        # The English messages only: MathJax asks for no other localization unless the reader's is set.
        if path.is_file() and path.relative_to(root).parts[0] != "localization":
            files.append(File.generated(config, f"{MATHJAX_DIR}/{path.relative_to(root).as_posix()}",
                                        abs_src_path=str(path)))
    return files


# The bar's words in each edition.
_BAR_WORDS = {
    "en": {"course": "Course: notebook {n} of {total}", "run": "run time {time} (full setting, 2 CPU cores)",
           "source": "Open the source notebook", "run_it": "outputs cleared; run it with",
           "other": "한국어", "other_folder": KOREAN_COURSE},
    "ko": {"course": "강의: {total}개 중 {n}번째 노트북", "run": "실행 시간 {time} (전체 설정, CPU 2코어)",
           "source": "원본 노트북 열기", "run_it": "출력은 지워져 있습니다. 실행:",
           "other": "English", "other_folder": "course"},
}


def _edition(src_uri):
    """`(language, course folder)` of a notebook page: its edition."""
    folder = str(pathlib.PurePosixPath(src_uri).parent)
    return ("ko", KOREAN_COURSE) if folder == KOREAN_COURSE else ("en", "course")


def _course_bar(page, files, where):
    """Previous / next, the run time, the source link and the other edition's page of a notebook page, as HTML."""
    language, folder = _edition(page.file.src_uri)
    words = _BAR_WORDS[language]
    names = [p.name for p in copies(DOCS / folder)]
    name = pathlib.PurePosixPath(page.file.src_uri).name
    index = names.index(name)

    def link(src_uri, text, hreflang=None):
        target = files.get_file_from_path(src_uri)
        lang = f' hreflang="{hreflang}"' if hreflang else ""
        return f'<a href="{html.escape(target.url_relative_to(page.file))}"{lang}>{text}</a>'

    parts = []
    if index > 0:
        parts.append(link(f"{folder}/{names[index - 1]}", f"← {html.escape(names[index - 1][:-6])}"))
    parts.append(link(f"{folder}/index.md", words["course"].format(n=index + 1, total=len(names))))
    if index + 1 < len(names):
        parts.append(link(f"{folder}/{names[index + 1]}", f"{html.escape(names[index + 1][:-6])} →"))
    if where == "top":
        seconds = record(read_notebook(page.file.abs_src_path)).get("seconds")
        if seconds is not None:
            parts.append(words["run"].format(time=run_time(seconds)))
        source_dir, notebook_dir = (SOURCE_DIR, "notebooks") if language == "en" else (KOREAN_SOURCE_DIR,
                                                                                        "notebooks/ko")
        parts.append(link(f"{source_dir}/{name}", words["source"])
                     + f" ({words['run_it']} <code>jupyter lab {notebook_dir}/{html.escape(name)}</code>)")
        other = f"{words['other_folder']}/{name}"
        if files.get_file_from_path(other) is not None:
            parts.append(link(other, words["other"], hreflang="en" if language == "ko" else "ko"))
    return f'<nav class="tfm-course-bar tfm-course-{where}" lang="{language}">' + " · ".join(parts) + "</nav>"


def _toc_to_heading_ids(toc, content):
    """Points the table of contents at the headings' real ids.

    mkdocs-jupyter slugs the contents from the markdown and nbconvert the headings from their HTML; they
    differ where a heading holds code or a formula (`## 2. Training with `model.fit``), which left the
    contents' links dangling. Entries and headings come in the same order, level by level. The entries'
    titles are the headings' too, inline code kept (mkdocs-jupyter's drop it: "3." for "3. `saved_model_cli`").
    """
    headings = [(int(level), html.unescape(ident), _toc_title(inner)) for level, _, ident, _, inner in
                _HEADING.findall(content) if ident]
    position = 0

    def walk(items):
        nonlocal position
        for item in items:
            for index in range(position, len(headings)):
                if headings[index][0] == item.level:
                    item.id, item.title = headings[index][1], headings[index][2] or item.title
                    position = index + 1
                    break
            walk(item.children)

    walk(toc)


_HEADING = re.compile(r'<h([1-6])([^>]*?)\sid="([^"]*)"([^>]*)>(.*?)</h\1>', re.DOTALL)
_PERMALINK = re.compile(r'<a class="(?:anchor-link|headerlink)"[^>]*>.*?</a>', re.DOTALL)


def _toc_title(inner):
    """A heading's HTML as a contents entry: its text and inline `<code>`, without the permalink or other tags."""
    inner = _PERMALINK.sub("", inner)
    return re.sub(r"<(?!/?code\b)[^>]+>", "", inner).strip()


def _permalinks_for_search(content):
    """nbconvert's heading permalinks ("¶") get Material's class, so that the search leaves them out of its titles
    (and they look like the other pages' permalinks)."""
    return content.replace('<a class="anchor-link" href="#', '<a class="headerlink" href="#')


def _fill_heading_ids(content):
    """Gives every heading of a notebook page a non-empty id of its own.

    nbconvert makes a heading's id from its ASCII letters only, so a Korean heading ("## 요약") gets `id=""`
    and the contents' entry for it points nowhere. Such headings get a Unicode slug of their text (as MkDocs'
    own pages would), numbered when it repeats; ids that were fine are kept, so links into a page still work.
    """
    from markdown.extensions.toc import slugify_unicode

    seen = set(re.findall(r'\sid="([^"]+)"', content))

    def fill(match):
        level, before, ident, after, inner = match.groups()
        if ident:
            return match.group(0)
        words = re.sub(r"<[^>]+>", "", inner).replace("¶", "").strip()
        base = slugify_unicode(words, "-") or f"section-{level}"
        ident, number = base, 1
        while ident in seen:
            number += 1
            ident = f"{base}-{number}"
        seen.add(ident)
        inner = inner.replace('class="anchor-link" href="#"', f'class="anchor-link" href="#{ident}"')
        return f'<h{level}{before} id="{ident}"{after}>{inner}</h{level}>'

    return _HEADING.sub(fill, content)


_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script>", re.DOTALL)


def _without_remote_scripts(content):
    """Drops inline scripts that would import code from the network: nbconvert's Mermaid loader (from a
    CDN, and only for Mermaid diagrams, which the course has none of)."""
    return _SCRIPT.sub(lambda m: "" if re.search(r"import\(\s*[\"']https?://", m.group(0)) else m.group(0), content)


# The summary of a notebook's folded setup cell, in each edition.
SETUP_SUMMARY = {"en": "Setup: imports and settings (click to show)", "ko": "설정: import와 설정 (눌러서 보기)"}
SETUP_CLASS = "tfm-setup"
_CODE_CELL = re.compile(r'<div class="jp-Cell jp-CodeCell\b[^"]*"[^>]*>')
_DIV = re.compile(r"<div\b[^>]*>|</div\s*>")


def _fold_setup_cell(content, language):
    """Puts a notebook page's first code cell (its setup cell, the first code cell of every notebook) in a closed
    `<details>` whose summary names it, so the reader need not scroll past ~30 lines of imports on every page.

    The cell is nbconvert's `<div class="jp-Cell jp-CodeCell ...">` (mkdocs-jupyter wraps it in a second one of
    the same class) up to its matching `</div>`, input and output, moved inside as it is. The cell's code is
    escaped text (`&lt;div`), so the divs counted are the page's own. A page without code cells is returned as
    it is.
    """
    start = _CODE_CELL.search(content)
    if start is None:
        return content
    depth = 0
    for tag in _DIV.finditer(content, start.start()):
        depth += -1 if tag.group(0).startswith("</") else 1
        if depth == 0:
            end = tag.end()
            break
    else:
        raise ValueError("a notebook page's first code cell has no closing </div>")
    summary = html.escape(SETUP_SUMMARY[language])
    return (content[:start.start()] + f'<details class="{SETUP_CLASS}"><summary>{summary}</summary>'
            + content[start.start():end] + "</details>" + content[end:])


def _is_notebook_page(src):
    """Whether `src` (a page's source path in docs/) is one of the course's notebooks, in either edition."""
    return src.startswith("course/") and bool(NOTEBOOK_NAME.match(pathlib.PurePosixPath(src).name)) \
        and str(pathlib.PurePosixPath(src).parent) in ("course", KOREAN_COURSE)


NOTES = re.compile(r"^results/(\w+)\.notes\.md$")


def on_page_markdown(markdown, page, config, files):
    """A benchmark's notes (docs/results/NAME.notes.md, which benchmarks/run_all.py also places in "Benchmarks in
    full") get a title as a page of their own; the Results summary lists them."""
    match = NOTES.match(page.file.src_uri)
    if match:
        name = match.group(1)
        return (f"# Notes on `{name}`\n\nThe notes written beside the numbers of `benchmarks/{name}.py`; "
                f"[Benchmarks in full](../results.md) shows them after those numbers.\n\n" + markdown)
    return markdown


def on_page_content(content, page, config, files):
    src = page.file.src_uri
    if _is_notebook_page(src):
        content = _permalinks_for_search(_fill_heading_ids(content))
        _toc_to_heading_ids(page.toc, content)
        content = _fold_setup_cell(_without_remote_scripts(content), _edition(src)[0])
        if src.startswith(f"{KOREAN_COURSE}/"):  # one folder deeper than mkdocs-jupyter's MathJax URL assumes
            content = content.replace('src="../assets/mathjax/', 'src="../../assets/mathjax/')
        return _course_bar(page, files, "top") + content + _course_bar(page, files, "bottom")
    return content


# Material's language switch asks for the edition's sitemap.xml on every page (an XMLHttpRequest); Chromium refuses
# it to a page opened from the disk, with a console error each time, and the switch then links each language to its
# edition's front page. Opened from file://, the request is given an empty sitemap instead: the same links, no error.
FILE_SITEMAP = ('<script>if (location.protocol === "file:") { const open = XMLHttpRequest.prototype.open; '
                'XMLHttpRequest.prototype.open = function (method, url, ...rest) { '
                'if (/sitemap\\.xml$/.test(String(url))) url = "data:application/xml,%3Curlset%2F%3E"; '
                'return open.call(this, method, url, ...rest); }; }</script>')


def on_post_page(output, page, config):
    """MathJax's configuration goes in every page's head, before any MathJax.js (a notebook loads its own);
    before the theme's script, `FILE_SITEMAP`."""
    from mkdocs.utils import get_relative_url

    script = f'<script src="{get_relative_url(MATHJAX_CONFIG, page.url)}"></script>'
    output = output.replace("</head>", FILE_SITEMAP + "\n" + script + "\n</head>", 1)
    if _is_notebook_page(page.file.src_uri):  # the course's pages get a wider column (docs/assets/tfm.css)
        output = re.sub(r"<body\b", '<body class="tfm-notebook"', output, count=1)
    if page.file.src_uri.startswith(("ko/", f"{KOREAN_COURSE}/")):  # the Korean edition's pages are Korean
        output = re.sub(r'<html lang="[^"]*"', '<html lang="ko"', output, count=1)
    return output


_TEX_WORDS = {"sqrt": "√", "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "approx": "≈",
              "to": "→", "rightarrow": "→", "infty": "∞", "log": "log", "exp": "exp", "sum": "∑", "in": "∈",
              "alpha": "α", "beta": "β", "gamma": "γ", "epsilon": "ε", "varepsilon": "ε", "theta": "θ",
              "lambda": "λ", "mu": "μ", "pi": "π", "sigma": "σ", "tau": "τ", "ell": "ℓ", "quad": " ", ",": " "}


def search_title(title):
    """A search result's title as plain text: no "¶", and TeX (`$\\sqrt{d_k}$`, `\\(...\\)`) written out
    (`√d_k`), since the search shows titles as they are, untypeset."""
    def plain(match):
        tex = match.group(1) or match.group(2)
        tex = re.sub(r"\\(?:mathrm|text|textrm|mathbf|mathit|operatorname)\s*\{([^{}]*)\}", r"\1", tex)
        tex = re.sub(r"\\([A-Za-z]+|,)", lambda m: _TEX_WORDS.get(m.group(1), m.group(1)), tex)
        return re.sub(r"\s+", " ", tex.replace("{", "").replace("}", "")).strip()
    title = re.sub(r"\$([^$]+)\$|\\\((.+?)\\\)", plain, title)
    return title.replace("¶", "").strip()


_SIGNATURE = re.compile(r"^<code>([\w.]+)\(.*?\)</code>")


def api_search_title(title):
    """An API entry's search title with its name only: `beam_search(model, source_ids, ...)` -> `beam_search()`.

    A title is weighed far above the text, so a signature's parameter names (`beam_size=4`) would rank
    a function above the one the words name: searching "beam search" found `search_ids(..., beam_size=None)`
    before `beam_search`. The page still shows the signature.
    """
    return _SIGNATURE.sub(r"<code>\1()</code>", title)


def on_post_build(config):
    """The Korean edition's sitemap: the header's language switch reads `<edition>/sitemap.xml` to find the same
    page in the other language; the edition shares the site's own. And the search index's titles as plain text
    (`search_title`; the API's by name, `api_search_title`), before the offline plugin copies the index into
    search/search_index.js."""
    site = pathlib.Path(config["site_dir"])
    (site / "ko").mkdir(exist_ok=True)
    (site / "ko" / "sitemap.xml").write_bytes((site / "sitemap.xml").read_bytes())
    index = site / "search" / "search_index.json"
    if index.is_file():
        data = json.loads(index.read_text(encoding="utf-8"))
        for doc in data["docs"]:
            doc["title"] = search_title(doc["title"])
            if doc["location"].startswith("api/"):
                doc["title"] = api_search_title(doc["title"])
        index.write_text(json.dumps(data, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")


on_post_build.mkdocs_priority = -50  # after the search plugin writes its index (0), before offline copies it (-100)


def on_post_template(output, template_name, config):
    """The same for the pages made from a template alone (404.html), whose links start at the site's root."""
    if template_name == "404.html":
        return output.replace("</head>", f'<script src="/{MATHJAX_CONFIG}"></script>\n</head>', 1)
    return output


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course-index", action="store_true",
                        help="rewrite the table of docs/course/index.md, and the run times of "
                             "docs/course/ko/index.md, from the copies' records")
    args = parser.parse_args(argv)
    if args.course_index:
        for index, write in ((COURSE_INDEX, write_course_index), (KOREAN_COURSE_INDEX, write_korean_course_index)):
            print(f"{index.relative_to(ROOT)}: {'rewritten' if write() else 'already up to date'}")
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
