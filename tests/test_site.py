"""The documentation website (`make docs`), built from what is committed and checked twice.

A module fixture builds the site once with MkDocs (strict: a broken link in a page fails the build)
into a temporary folder. Then:

- always, in Python: every internal link, anchor, image, script and stylesheet of every page
  resolves to a file of the site; nothing is loaded from the network (no CDN font, script or
  stylesheet); every notebook page has its place in the course (previous / next), its run time, an
  "Open the source notebook" link and every figure of its executed copy; the search index holds
  notebook 07's label smoothing; and every link of README.md resolves in the repository;
- when a Chromium is installed (`apt-get install chromium`; otherwise these skip, saying so): headless
  Chromium, driven by Playwright, opens every page from an http server on 127.0.0.1: no console
  error or failed request, every image loaded (natural width > 0), every internal link and anchor
  resolves, and searching "label smoothing" finds notebook 07 and lands on it;
- readable at 1280 px (issue 40): no course code cell with lines of <= 100 characters scrolls sideways, every
  figure is shown at >= 80% of its width or (wider than its column) at the column's width with click-to-enlarge,
  outputs wrap between words, the search works from site/index.html opened from the disk (file://), the page
  contents keep their inline code, the search titles are plain text, every indexed page is linked from another,
  and the header has the dark-theme toggle;
- the setup cell folded (issue 40): every course page's first code cell, and no other, is in a closed <details> whose
  summary names it ("Setup: imports and settings (click to show)"; Korean pages in Korean), the cell's input and
  output inside as the notebook has them; in Chromium at 1280 px its code shows only once the summary is clicked,
  and the summary is legible in the light and the dark scheme;
- the API reference: a docstring the docstring tool (griffe) cannot read fails the strict build; every class on
  the layers page lists all its arguments; each object is documented once, in its own module; the API's search
  titles are names, and searching "beam search" shows beam_search first.

    .venv/bin/python -m pytest -q tests/test_site.py
"""

import contextlib
import functools
import html
import html.parser
import http.server
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("docs_site", ROOT / "tools" / "docs_site.py")
docs_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_site)

COPIES = docs_site.copies()
INSTALL_CHROMIUM = "apt-get install chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
MAX_BUILD_SECONDS = 300


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built site's folder (`mkdocs build` into a temporary folder, as `make docs` does into site/)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("the site tests need the docs extra: pip install -e '.[dev,docs]' (make test installs it)")
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(out)], cwd=ROOT,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True, text=True,
                            timeout=MAX_BUILD_SECONDS)
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stderr[-4000:]}"
    return out


def pages(site):
    return sorted(site.rglob("*.html"))


class _Page(html.parser.HTMLParser):
    """The ids and the outgoing references of one HTML page: (tag, attribute, value)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.refs, self.scripts, self._in_script = set(), [], [], False

    def handle_endtag(self, tag):
        self._in_script = self._in_script and tag != "script"

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in_script = tag == "script"
        for key in ("id", "name") if tag == "a" else ("id",):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) is not None and tag in ("a", "img", "script", "link", "iframe", "source"):
                self.refs.append((tag, key, attrs[key], attrs.get("rel")))


@functools.cache
def parse(path):
    page = _Page()
    page.feed(pathlib.Path(path).read_text(encoding="utf-8"))
    return page


def is_external(url):
    """A URL that leaves the site (the network); `data:`, `mailto:` and the like are neither here nor there."""
    return urllib.parse.urlsplit(url).scheme in ("http", "https") or url.startswith("//")


def is_internal(url):
    return not urllib.parse.urlsplit(url).scheme and not url.startswith("//")


def test_every_internal_link_anchor_and_asset_resolves(site):
    broken = []
    for path in pages(site):
        for tag, _, url, _ in parse(path).refs:
            if not is_internal(url) or url == "#":
                continue
            parts = urllib.parse.urlsplit(url)
            target = path if not parts.path else (
                site / parts.path.lstrip("/") if parts.path.startswith("/") else path.parent / parts.path)
            target = pathlib.Path(os.path.normpath(urllib.parse.unquote(str(target))))
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(site)}: <{tag}> {url}"
            if not target.is_file() or site not in target.parents:
                broken.append(f"{where} (no such file)")
            elif parts.fragment and target.suffix == ".html" and (
                    urllib.parse.unquote(parts.fragment) not in parse(target).ids):
                broken.append(f"{where} (no anchor #{parts.fragment})")
    assert not broken, f"{len(broken)} broken: " + "; ".join(broken[:20])


def test_nothing_is_loaded_from_the_network(site):
    """No CDN: scripts, stylesheets, fonts and images come from the site itself; plain links may leave it."""
    remote = [f"{path.relative_to(site)}: <{tag}> {url}" for path in pages(site)
              for tag, _, url, _ in parse(path).refs if tag != "a" and is_external(url)]
    assert not remote, "; ".join(remote[:10])
    inline = [f"{path.relative_to(site)}: {match.group(0)}" for path in pages(site) for script in parse(path).scripts
              for match in re.finditer(r"https?://[^\s\"')]+", script)]
    assert not inline, f"an inline script names a remote URL: {inline[:5]}"
    fetched = re.compile(r"""(@import\s+(url\()?\s*['"]?|url\(\s*['"]?)(https?:)?//""")
    in_css = [str(path.relative_to(site)) for path in list(site.rglob("*.css")) + pages(site)
              if fetched.search(path.read_text(encoding="utf-8", errors="replace"))]
    assert not in_css, f"remote url() or @import in {in_css}"


def test_the_front_page_is_the_readme_and_every_readme_link_resolves(site):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150, "README.md is the front page: at most about 150 lines"
    assert "## Changes" in readme
    missing = []
    for target in docs_site.LINK.findall(readme):
        url = target[1]
        if not is_internal(url):
            continue
        path = urllib.parse.urlsplit(url).path
        if not (ROOT / path).exists():
            missing.append(url)
        elif not path.startswith("docs/"):
            missing.append(f"{url} (outside docs/: not on the website)")
    assert not missing, f"README.md links {missing}"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "The two commands" in index and "Quick start" in index


@pytest.mark.parametrize("path", COPIES, ids=[p.name for p in COPIES])
def test_each_notebook_page_has_its_place_run_time_source_and_figures(site, path):
    page = site / "course" / (path.stem + ".html")
    assert page.is_file(), f"no page for docs/course/{path.name}"
    text = page.read_text(encoding="utf-8")
    notebook = docs_site.read_notebook(path)
    seconds = docs_site.record(notebook)["seconds"]
    assert "Open the source notebook" in text and f"run time {docs_site.run_time(seconds)}" in text
    assert (site / docs_site.SOURCE_DIR / path.name).read_bytes() == (ROOT / "notebooks" / path.name).read_bytes()
    position = [p.name for p in COPIES].index(path.name)
    hrefs = {url for _, _, url, _ in parse(page).refs}
    if position > 0:
        assert COPIES[position - 1].stem + ".html" in hrefs, "no link to the previous notebook"
    if position + 1 < len(COPIES):
        assert COPIES[position + 1].stem + ".html" in hrefs, "no link to the next notebook"
    figures = sum("image/png" in output.get("data", {}) for cell in notebook["cells"]
                  for output in cell.get("outputs", []))
    shown = text.count('src="data:image/png;base64,')
    assert shown == figures, f"{figures} PNG outputs in the copy, {shown} on the page"


def test_the_search_index_has_notebook_07s_label_smoothing(site):
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    hits = [d["location"] for d in docs if "label smoothing" in (d["title"] + " " + d["text"]).lower()]
    assert any(location.startswith("course/07_training_recipe.html") for location in hits), hits[:10]


def test_the_course_index_table_is_written_from_the_records(tmp_path):
    """`tools/docs_site.py --course-index` fills the table between the markers, and only there."""
    index = tmp_path / "index.md"
    index.write_text(f"# Course\n\nBefore.\n\n{docs_site.TABLE_START}\nold\n{docs_site.TABLE_END}\n\nAfter.\n")
    assert docs_site.write_course_index(index) is True
    text = index.read_text()
    assert "old" not in text and text.startswith("# Course\n\nBefore.") and text.endswith("\n\nAfter.\n")
    assert docs_site.write_course_index(index) is False
    assert [docs_site.run_time(s) for s in (22, 89, 90, 391, 599, 600, 2024)] == [
        "22 s", "89 s", "1.5 min", "6.5 min", "10.0 min", "10 min", "34 min"]


# --- In a browser ---------------------------------------------------------------------------------------

def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextlib.contextmanager
def serve(folder):
    """An http server for `folder` on 127.0.0.1 (a free port), in a thread; yields its base URL."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(site):
    """(a Playwright page in headless Chromium, the site's base URL)."""
    executable = chromium()
    if executable is None:
        pytest.skip(f"no Chromium installed for the browser test: {INSTALL_CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the docs extra installs playwright")
    with serve(site) as base, sync_api.sync_playwright() as playwright:
        chrome = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        page = chrome.new_page(viewport={"width": 1280, "height": 900})
        yield page, base
        chrome.close()


def test_every_page_loads_in_chromium_without_errors_and_its_links_resolve(site, browser):
    page, base = browser
    problems, anchors, links = [], {}, set()
    current = {}
    page.on("console", lambda m: m.type == "error" and problems.append(f"{current['url']}: console: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{current['url']}: page error: {e}"))
    aborted = []  # (page, url): cut short by the next navigation (e.g. the favicon), fetched again below
    page.on("requestfailed", lambda r: (aborted if "ERR_ABORTED" in str(r.failure) else problems).append(
        (current["url"], r.url) if "ERR_ABORTED" in str(r.failure)
        else f"{current['url']}: failed: {r.url} {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{current['url']}: {r.status} {r.url}"))
    for path in pages(site):
        url = base + path.relative_to(site).as_posix()
        current["url"] = path.relative_to(site).as_posix()
        page.goto(url, wait_until="networkidle")
        # MathJax typesets after the load and fetches its font files as it goes: wait for it to finish.
        page.evaluate("""() => new Promise(done => window.MathJax && MathJax.Hub && MathJax.Hub.Queue
            ? MathJax.Hub.Queue(done) : done())""")
        page.wait_for_load_state("networkidle")
        unloaded = page.evaluate("""() => Array.from(document.images)
            .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 80))""")
        problems += [f"{current['url']}: image not loaded: {src}" for src in unloaded]
        anchors[url] = set(page.evaluate("""() => Array.from(document.querySelectorAll('[id], a[name]'))
            .map(e => e.id || e.getAttribute('name'))"""))
        links.update((current["url"], href) for href in page.evaluate(
            "() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href)") if href.startswith(base))
    for source, url in aborted:
        try:
            urllib.request.urlopen(url, timeout=10).close()
        except urllib.error.URLError as error:
            problems.append(f"{source}: failed: {url} {error}")
    for source, href in sorted(links):
        target, _, fragment = href.partition("#")
        if target not in anchors:  # not a page visited above: a file (a notebook, a figure) or a folder
            try:
                urllib.request.urlopen(target, timeout=10).close()
            except urllib.error.URLError as error:
                problems.append(f"{source}: link {href}: {error}")
            continue
        if fragment and urllib.parse.unquote(fragment) not in anchors[target]:
            problems.append(f"{source}: link {href}: no such anchor")
    assert not problems, f"{len(problems)} problems: " + "; ".join(problems[:20])


def test_searching_label_smoothing_lands_on_notebook_07(browser):
    page, base = browser
    page.goto(base + "index.html", wait_until="networkidle")
    # The search index (about 1 MB) is built in a web worker at each page load: wait until it is ready.
    page.wait_for_function("""() => { const meta = document.querySelector('.md-search-result__meta');
        return meta && meta.textContent && !/initializing/i.test(meta.textContent) }""", timeout=120_000)
    page.focus("input.md-search__input")  # opens the search panel
    page.locator("input.md-search__input").press_sequentially("label smoothing")  # key events, as typed
    result = page.locator("a.md-search-result__link[href*='/course/07_training_recipe']").first  # not ko/
    result.wait_for(timeout=30_000)
    result.click()
    page.wait_for_url(re.compile(r".*/course/07_training_recipe\.html.*"), timeout=20_000)
    assert "label smoothing" in page.inner_text("article").lower()


# --- The Korean edition (한국어판) ------------------------------------------------------------------------

KOREAN_COPIES = docs_site.copies(ROOT / "docs" / docs_site.KOREAN_COURSE)


@pytest.mark.parametrize("path", KOREAN_COPIES, ids=[p.name for p in KOREAN_COPIES])
def test_each_korean_notebook_page_is_korean_and_links_its_english_page(site, path):
    page = site / docs_site.KOREAN_COURSE / (path.stem + ".html")
    assert page.is_file(), f"no page for docs/course/ko/{path.name}"
    text = page.read_text(encoding="utf-8")
    assert '<html lang="ko"' in text and "원본 노트북 열기" in text
    assert (site / docs_site.KOREAN_SOURCE_DIR / path.name).read_bytes() == \
        (ROOT / "notebooks" / "ko" / path.name).read_bytes()
    hrefs = {url for _, _, url, _ in parse(page).refs}
    assert f"../{path.stem}.html" in hrefs, "no link to the English page"
    english = site / "course" / (path.stem + ".html")
    assert f"ko/{path.stem}.html" in {url for _, _, url, _ in parse(english).refs}, "no link to the Korean page"


def test_every_page_has_the_language_switch(site):
    missing = [str(p.relative_to(site)) for p in pages(site)
               if p.name != "404.html" and 'hreflang="ko"' not in p.read_text(encoding="utf-8")]
    assert not missing, missing[:10]


def test_the_search_index_holds_the_korean_pages(site):
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "ko" in docs["config"]["lang"]
    korean = [d["location"] for d in docs["docs"] if re.search("[\uac00-\ud7a3]", d["title"] + d["text"])]
    assert any(location.startswith("course/ko/") for location in korean)
    assert any(location.startswith("ko/glossary.html") for location in korean)


def test_a_hangul_search_lands_on_a_korean_course_page(browser):
    page, base = browser
    page.goto(base + "ko/index.html", wait_until="networkidle")
    page.wait_for_function("""() => { const meta = document.querySelector('.md-search-result__meta');
        return meta && meta.textContent && !/initializing/i.test(meta.textContent) }""", timeout=120_000)
    page.focus("input.md-search__input")
    # Hangul arrives through the input method, whose composition ends in a key event: fill, then a key.
    page.fill("input.md-search__input", "인코더")
    page.press("input.md-search__input", "End")
    result = page.locator("a.md-search-result__link[href*='course/ko/']").first
    result.wait_for(timeout=30_000)
    result.click()
    page.wait_for_url(re.compile(r".*/course/ko/\d\d_\w+\.html.*"), timeout=20_000)
    assert "인코더" in page.inner_text("article")


# --- Readable at 1280 px (issue 40) ---------------------------------------------------------------------

NOTEBOOK_PAGES = [f"course/{p.stem}.html" for p in COPIES] + \
    [f"{docs_site.KOREAN_COURSE}/{p.stem}.html" for p in KOREAN_COPIES]
MAX_LINE = 100  # characters a code cell's line may have and still show whole at 1280 px


def test_contents_entries_keep_their_inline_code(site):
    """A heading with `code` ("3. `saved_model_cli`") keeps it in the page contents, not "3."."""
    lost = []
    for name in NOTEBOOK_PAGES:
        text = (site / name).read_text(encoding="utf-8")
        nav = text[text.index('class="md-nav md-nav--secondary"'):]
        for ident, inner in re.findall(r'<h[2-6][^>]*\sid="([^"]+)"[^>]*>(.*?)</h[2-6]>', text, re.DOTALL):
            for code in re.findall(r"<code>(.*?)</code>", inner):
                entry = re.search(rf'href="#{re.escape(ident)}"[^>]*>(.*?)</a>', nav, re.DOTALL)
                if entry and f"<code>{code}</code>" not in entry.group(1):
                    lost.append(f"{name}#{ident}: {code}")
    assert not lost, lost[:10]
    page = (site / "course" / "12_export_and_serve.html").read_text(encoding="utf-8")
    assert re.search(r'href="#3-saved_model_cli"[^>]*>\s*<span class="md-ellipsis">\s*3\. <code>saved_model_cli</code>',
                     page), "notebook 12's contents lost `saved_model_cli`"


def test_search_titles_are_plain_text(site):
    """No permalink "¶" and no raw TeX (`$\\sqrt{d_k}$`) in the search results' titles."""
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    raw = [d["title"] for d in docs if "¶" in d["title"] or "$" in d["title"] or "\\(" in d["title"]]
    assert not raw, raw[:10]
    titles = {d["title"] for d in docs}
    assert "Why divide by √d_k?" in titles
    assert docs_site.search_title(r"Why divide by $\sqrt{d_k}$?¶") == "Why divide by √d_k?"
    assert docs_site.search_title(r"a \(\mathrm{softmax}(x)\) b") == "a softmax(x) b"


def test_every_page_in_the_search_index_is_linked_from_another_page(site):
    """No page found by the search but reachable from no page (the results' notes pages were)."""
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    linked = set()
    for path in pages(site):
        for tag, _, url, _ in parse(path).refs:
            link = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
            target = pathlib.Path(os.path.normpath(path.parent / link))
            if tag == "a" and is_internal(url) and link and not link.startswith("/") and target != path \
                    and site in target.parents:
                linked.add(target.relative_to(site).as_posix())
    indexed = {d["location"].partition("#")[0] or "index.html" for d in docs}
    assert {"results/epoch_teardown.notes.html", "results/measurements_quoted.html"} <= indexed
    assert not sorted(indexed - linked), sorted(indexed - linked)


def test_every_page_has_the_dark_theme_toggle(site):
    text = (site / "index.html").read_text(encoding="utf-8")
    assert 'data-md-color-scheme="default"' in text and 'data-md-color-scheme="slate"' in text
    assert text.count('class="md-header__button md-icon" title="Switch to the') == 2



# --- The setup cell, folded (issue 40) --------------------------------------------------------------------

CODE_CELL_ID = re.compile(r'<div class="jp-Cell jp-CodeCell[^"]*" id="cell-id=([^"]+)"')
SETUP_DETAILS = re.compile(r"<details\b([^>]*)>\s*<summary>(.*?)</summary>(.*?)</details>", re.DOTALL)


def _source(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_folding_the_setup_cell_moves_the_first_code_cell_and_nothing_else():
    """`_fold_setup_cell` wraps the first code cell, nested divs and all, and leaves every character in place."""
    cell = ('<div class="jp-Cell jp-CodeCell jp-Notebook-cell">\n<div class="jp-Cell jp-CodeCell jp-Notebook-cell" '
            'id="cell-id=a"><div class="jp-InputArea"><pre>x = "&lt;div&gt;"</pre></div>\n'
            '<div class="jp-Cell-outputWrapper"><div><pre>out</pre></div></div></div>\n</div>')
    second = '<div class="jp-Cell jp-CodeCell jp-Notebook-cell" id="cell-id=b"><pre>y</pre></div>'
    before = '<div class="jp-Cell jp-MarkdownCell"><p>Intro</p></div>'
    folded = docs_site._fold_setup_cell(before + cell + second, "en")
    assert folded == (before + '<details class="tfm-setup"><summary>Setup: imports and settings (click to show)'
                      "</summary>" + cell + "</details>" + second)
    assert "설정: import와 설정 (눌러서 보기)" in docs_site._fold_setup_cell(cell, "ko")
    assert docs_site._fold_setup_cell(before, "en") == before  # no code cell: nothing to fold


@pytest.mark.parametrize("path", COPIES + KOREAN_COPIES,
                         ids=[p.name for p in COPIES] + [f"ko/{p.name}" for p in KOREAN_COPIES])
def test_the_setup_cell_alone_is_folded_under_its_summary(site, path):
    """The page's first code cell (the notebook's setup cell) is in a closed <details> whose summary names it, its
    input and output unchanged; every other code cell is outside any <details>."""
    language = "ko" if path.parent.name == "ko" else "en"
    text = (site / path.relative_to(ROOT / "docs").with_suffix(".html")).read_text(encoding="utf-8")
    code_cells = [cell for cell in docs_site.read_notebook(path)["cells"] if cell["cell_type"] == "code"]
    folded = list(SETUP_DETAILS.finditer(text))
    assert len(folded) == 1 and text.count("<details") == 1, f"{len(folded)} setup <details>, " \
        f"{text.count('<details')} <details> in all"
    attributes, summary, body = folded[0].groups()
    assert attributes.strip() == f'class="{docs_site.SETUP_CLASS}"', f"not closed, or not the setup's: {attributes}"
    assert summary == {"en": "Setup: imports and settings (click to show)",
                       "ko": "설정: import와 설정 (눌러서 보기)"}[language]
    assert CODE_CELL_ID.findall(body) == [code_cells[0]["id"]], "the <details> holds another cell than the first"
    assert not CODE_CELL_ID.findall(text[:folded[0].start()]), "a code cell comes before the folded one"
    assert CODE_CELL_ID.findall(text[folded[0].end():]) == [cell["id"] for cell in code_cells[1:]]
    copied = re.search(r'<div class="clipboard-copy-txt"[^>]*>(.*?)</div>', body, re.DOTALL)
    assert copied and html.unescape(copied.group(1)) == _source(code_cells[0]), "the setup cell's input changed"
    outputs = "".join(_source({"source": output.get("text", "")}) for output in code_cells[0].get("outputs", []))
    assert html.escape(outputs, quote=False) in body, "the setup cell's output is not inside the <details>"


def test_the_setup_cell_shows_its_code_only_when_its_summary_is_clicked(browser):
    """At 1280 px, on every course page, the setup cell's code is hidden until its summary is clicked, and shown
    after; its summary is legible (contrast >= 4.5) in the light and in the dark scheme."""
    page, base = browser
    page.set_viewport_size({"width": 1280, "height": 900})
    problems = []
    for name in NOTEBOOK_PAGES:
        page.goto(base + name, wait_until="load")
        details = page.locator("details.tfm-setup")
        code = details.locator(".jp-InputArea pre").first
        summary = details.locator("summary")
        if details.count() != 1 or not summary.is_visible() or code.is_visible():
            problems.append(f"{name}: {details.count()} setup <details>, code visible before the click")
            continue
        summary.click()
        # the <details> opens on the click's event; on a loaded machine the layout can lag the click
        code.wait_for(state="visible", timeout=10_000)
        box = code.bounding_box()
        if not (code.is_visible() and box and box["height"] > 100 and box["width"] > 500):
            problems.append(f"{name}: after the click the code is not shown ({box})")
        if page.evaluate("() => document.querySelectorAll('.jp-CodeCell .jp-InputArea pre').length") < 2:
            problems.append(f"{name}: fewer than two code cells")
    assert not problems, problems[:10]
    contrast = """summary => {
        const rgba = s => { const v = s.match(/[\\d.]+/g).map(Number); return v.length === 4 ? v : [...v, 1] };
        const layers = [];
        for (let e = summary; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor); layers.push(c); if (c[3] === 1) break }
        let bg = [255, 255, 255];
        for (const [r, g, b, a] of layers.reverse()) bg = [r * a + bg[0] * (1 - a), g * a + bg[1] * (1 - a),
                                                          b * a + bg[2] * (1 - a)];
        const [r, g, b, a] = rgba(getComputedStyle(summary).color);
        const fg = [r * a + bg[0] * (1 - a), g * a + bg[1] * (1 - a), b * a + bg[2] * (1 - a)];
        const lum = c => c.map(v => v / 255).map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
            .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
        const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
        return (hi + 0.05) / (lo + 0.05) }"""
    page.goto(base + "course/01_seq2seq.html", wait_until="load")
    ratios = {"default": page.locator("details.tfm-setup > summary").evaluate(contrast)}
    page.locator("label[title='Switch to the dark theme']").first.click()
    try:
        page.wait_for_function("() => document.body.getAttribute('data-md-color-scheme') === 'slate'")
        ratios["slate"] = page.locator("details.tfm-setup > summary").evaluate(contrast)
        summary = page.locator("details.tfm-setup > summary")
        assert not page.locator("details.tfm-setup .jp-InputArea pre").first.is_visible()
        summary.click()
        assert page.locator("details.tfm-setup .jp-InputArea pre").first.is_visible()
    finally:  # the scheme is remembered: the other tests see the light one
        page.locator("label[title='Switch to the light theme']").first.click()
    assert min(ratios.values()) >= 4.5, ratios


def test_course_code_cells_show_lines_up_to_100_characters_without_scrolling(browser):
    """At 1280 px no code cell whose lines have at most 100 characters scrolls sideways (English and Korean)."""
    page, base = browser
    page.set_viewport_size({"width": 1280, "height": 900})
    overflowing, checked = [], 0
    for name in NOTEBOOK_PAGES:
        page.goto(base + name, wait_until="load")
        page.evaluate("() => document.querySelectorAll('details.tfm-setup').forEach(d => { d.open = true })")
        cells = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputArea pre'))
            .map(pre => ({longest: Math.max(...pre.textContent.split('\\n').map(line => line.length)),
                          scroll: pre.scrollWidth, client: pre.clientWidth}))""")
        for index, cell in enumerate(cells):
            if cell["longest"] <= MAX_LINE:
                checked += 1
                if cell["scroll"] > cell["client"] + 1:
                    overflowing.append(f"{name} code cell {index}: {cell['longest']} characters, "
                                       f"{cell['scroll']} px in {cell['client']} px")
    assert checked >= 60, f"only {checked} code cells checked"
    assert not overflowing, overflowing[:10]


def test_course_figures_are_shown_at_their_width_or_enlarge_on_click(browser):
    """At 1280 px a figure is shown at >= 80% of its drawn width (a 2x figure's `width` attribute, else its pixel
    width); one wider than its column is shown at the column's width and opens at full size on a click
    (docs/assets/tfm.js)."""
    page, base = browser
    page.set_viewport_size({"width": 1280, "height": 900})
    small, seen, sharp = [], 0, 0
    for name in NOTEBOOK_PAGES:
        page.goto(base + name, wait_until="load")
        figures = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-OutputArea-output img'))
            .map(img => ({natural: parseFloat(img.getAttribute('width')) || img.naturalWidth,
                          pixels: img.naturalWidth, shown: img.getBoundingClientRect().width,
                          column: img.parentElement.clientWidth, zoom: img.classList.contains('tfm-zoomable')}))""")
        for index, figure in enumerate(figures):
            seen += 1
            sharp += figure["pixels"] >= 2 * figure["natural"]  # a 2x figure (tools/make_course.py)
            if figure["shown"] >= 0.8 * figure["natural"]:
                continue
            if not (figure["natural"] > figure["column"] and figure["shown"] >= figure["column"] - 1
                    and figure["zoom"]):
                small.append(f"{name} figure {index}: {figure}")
    assert seen >= 50 and not small, small[:10]
    assert sharp >= 10, f"only {sharp} figures drawn at 2x: the pages lost the output's width attribute"
    # In a narrow window (a phone, a side-by-side window) a figure drawn for the 1280 px column is wider than
    # its column: it is shown at the column's width and a click opens it at full size.
    page.set_viewport_size({"width": 700, "height": 900})
    page.goto(base + "course/07_training_recipe.html", wait_until="load")
    figure = page.locator("img.tfm-zoomable").first
    figure.scroll_into_view_if_needed()
    figure.click()
    shown = page.evaluate("""() => { const img = document.querySelector('.tfm-zoom img');
        const source = document.querySelector('img.tfm-zoomable');
        return img && [parseFloat(source.getAttribute('width')) || img.naturalWidth,
                       img.getBoundingClientRect().width] }""")
    assert shown and abs(shown[0] - shown[1]) <= 1, shown
    page.keyboard.press("Escape")
    assert page.locator(".tfm-zoom").count() == 0
    page.set_viewport_size({"width": 1280, "height": 900})  # as the other tests expect it


_make_course_spec = importlib.util.spec_from_file_location("make_course", ROOT / "tools" / "make_course.py")
make_course = importlib.util.module_from_spec(_make_course_spec)
_make_course_spec.loader.exec_module(make_course)


def test_figures_drawn_for_the_column_are_shown_whole_at_1280_px(browser):
    """Issue 50: at 1280 px the course pages' figure column is `make_course.COLUMN_WIDTH` px wide (the width
    make_course draws a wide figure for), and every figure of a copy whose record says it was drawn for that
    column (`figures.column`, make_course since issue 50) is shown at >= 80% of its drawn width: none needs
    the click that enlarges it. Copies made before keep their wide figures until `make course` redraws them."""
    page, base = browser
    page.set_viewport_size({"width": 1280, "height": 900})
    columns, small, checked = set(), [], 0
    for path, name in [(p, f"course/{p.stem}.html") for p in COPIES] + \
            [(p, f"{docs_site.KOREAN_COURSE}/{p.stem}.html") for p in KOREAN_COPIES]:
        record = json.loads(path.read_text(encoding="utf-8"))["metadata"].get(make_course.METADATA_KEY, {})
        drawn_for_column = record.get("figures", {}).get("column")
        page.goto(base + name, wait_until="load")
        figures = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-OutputArea-output img'))
            .map(img => ({drawn: parseFloat(img.getAttribute('width')) || img.naturalWidth,
                          shown: img.getBoundingClientRect().width, column: img.parentElement.clientWidth}))""")
        for index, figure in enumerate(figures):
            columns.add(figure["column"])
            if drawn_for_column:
                checked += 1
                if figure["shown"] < 0.8 * figure["drawn"]:
                    small.append(f"{name} figure {index}: {figure}")
    assert columns == {make_course.COLUMN_WIDTH}, f"the figure column at 1280 px: {sorted(columns)} px"
    assert not small, f"{len(small)} of {checked} figures shown under 80% of their width: {small[:10]}"


def test_outputs_wrap_between_words(browser):
    page, base = browser
    page.goto(base + "course/07_training_recipe.html", wait_until="load")
    styles = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-OutputArea-output pre'))
        .map(pre => getComputedStyle(pre)).map(s => s.whiteSpace + ' ' + s.wordBreak)""")
    assert styles and set(styles) == {"pre-wrap normal"}, set(styles)


def test_searching_from_the_disk_finds_label_smoothing(site, browser):
    """site/index.html opened from the disk (file://), as the README says: the offline plugin's search."""
    page, _ = browser
    page.goto((site / "index.html").as_uri(), wait_until="load")
    page.focus("input.md-search__input")  # from the disk the search starts when its panel opens
    page.wait_for_function("""() => { const meta = document.querySelector('.md-search-result__meta');
        return meta && meta.textContent && !/initializing/i.test(meta.textContent) }""", timeout=120_000)
    page.locator("input.md-search__input").press_sequentially("label smoothing")
    result = page.locator("a.md-search-result__link[href*='course/07_training_recipe']").first
    result.wait_for(timeout=30_000)
    assert result.get_attribute("href").startswith("file://")
    result.click()
    page.wait_for_url(re.compile(r"file://.*/course/07_training_recipe\.html.*"), timeout=20_000)
    assert "label smoothing" in page.inner_text("article").lower()


# --- The API reference (issue 40) -------------------------------------------------------------------------

API_HEADING = re.compile(r'<h[1-6] id="(tfm[\w.]*)" class="doc doc-heading')


def _api_sections(page):
    """`(object path, its HTML up to the next object's heading)` of an API page, in page order."""
    text = page.read_text(encoding="utf-8")
    heads = [(m.start(), m.group(1)) for m in API_HEADING.finditer(text)]
    return [(path, text[start:heads[n + 1][0] if n + 1 < len(heads) else len(text)])
            for n, (start, path) in enumerate(heads)]


@pytest.fixture(scope="module")
def package():
    """tfm as griffe (the docstring tool) reads it, without importing it."""
    griffe = pytest.importorskip("griffe", reason="the docs extra installs griffe")
    return griffe.load("tfm", search_paths=[str(ROOT)], resolve_aliases=False)


def _target(package, path):
    obj = package[path.removeprefix("tfm.")] if path != "tfm" else package
    return obj.final_target if obj.is_alias else obj


def _has_docstring(alias):
    """Whether what `alias` names has a docstring (is documented at all); griffe sees no object for the names of
    a tuple assignment (`PAD_ID, UNK_ID = 0, 1`), which have none either."""
    import griffe

    try:
        return bool(alias.final_target.docstring)
    except griffe.AliasResolutionError:
        return False


def test_a_docstring_the_docstring_tool_cannot_read_fails_the_strict_build(tmp_path):
    """griffe's warning on an `Args:` entry it cannot read (it drops the entry: Encoder's num_heads, d_ff, ...
    were lost so) fails the strict build, hooks and all; the same docstring written readably builds."""
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    mkdocstrings = next(p["mkdocstrings"] for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p)
    python = mkdocstrings["handlers"]["python"]
    python["paths"] = [str(tmp_path)]
    python["options"]["extensions"] = [str(ROOT / e) for e in python["options"]["extensions"]]
    quiet = {"not_found": "info", "absolute_links": "info"}  # the README's links into docs/ lead nowhere here
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump({
        "site_name": "demo", "docs_dir": "docs", "strict": True, "hooks": [str(ROOT / "tools" / "docs_site.py")],
        "validation": {"nav": {**quiet, "omitted_files": "info"},
                       "links": {**quiet, "anchors": "info", "unrecognized_links": "info"}},
        "plugins": [{"mkdocstrings": mkdocstrings}]}))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "api.md").write_text("# API\n\n::: demo\n")
    for names, fails in (("num_heads,\n        d_ff", True), ("num_heads, d_ff", False)):
        (tmp_path / "demo.py").write_text(f'"""A module."""\n\n\ndef stack(num_layers, num_heads, d_ff):\n'
                                          f'    """A stack.\n\n    Args:\n        num_layers: int.\n'
                                          f'        {names}: as in `layer`.\n    """\n')
        result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(tmp_path / "site")],
                                cwd=tmp_path, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, capture_output=True,
                                text=True, timeout=MAX_BUILD_SECONDS)
        warned = ("WARNING -  griffe: demo.py" in result.stderr
                  and "Failed to get 'name: description' pair" in result.stderr)
        assert (result.returncode != 0, warned) == (fails, fails), result.stderr[-2000:]


def test_the_layers_page_lists_every_parameter_of_its_classes(site, package):
    """Every argument of every class on the layers page is in its Parameters list (Encoder's and Decoder's
    num_heads, d_ff, key_dim, value_dim, dropout, attention_dropout were not)."""
    lost, lists = {}, set()
    for path, section in _api_sections(site / "api" / "layers.html"):
        cls = _target(package, path)
        if not cls.is_class:
            continue
        wanted = {p.name for p in cls.parameters if p.name != "self" and p.kind.value not in (
            "variadic positional", "variadic keyword")}
        found = re.search(r'doc-section-title">Parameters:</span></p>\s*<ul>(.*?)</ul>', section, re.S)
        listed = set()
        for code in re.findall(r"<b><code>(.*?)</code></b>", found.group(1) if found else ""):
            listed.update(name.strip() for name in html.unescape(code).split(","))
        if found:
            lists.add(cls.name)
        if wanted - listed:
            lost[path] = sorted(wanted - listed)
    assert {"Encoder", "Decoder", "EncoderLayer", "DecoderLayer"} <= lists, sorted(lists)
    assert not lost, lost


def test_each_object_is_documented_once_where_it_is_defined(site, package):
    """No object twice in the API reference (a module re-exporting names in `__all__` documented them again:
    decoding's beam_search, greedy_search, length_penalty, validate_beam_size, SearchResult; config's and
    exercises' whole packages), and none lost: every re-exported object is documented in its own module."""
    documented, modules = {}, []
    for page in sorted((site / "api").glob("*.html")):
        for path, _ in _api_sections(page):
            obj = _target(package, path)
            documented.setdefault(obj.path, []).append(f"{page.name}#{path}")
            modules += [obj] if obj.is_module else []
    assert len(documented) > 400, len(documented)
    twice = {path: where for path, where in documented.items() if len(where) > 1}
    assert not twice, twice
    lost = [f"{module.path}.{name} -> {alias.target_path}" for module in modules
            for name, alias in module.members.items()
            if alias.is_alias and alias.is_exported and alias.target_path.startswith("tfm.")
            and _has_docstring(alias) and alias.final_target.path not in documented]
    assert not lost, lost
    decoding = [path for path, _ in _api_sections(site / "api" / "decoding.html")]
    for name in ("beam_search", "greedy_search", "length_penalty", "validate_beam_size", "SearchResult", "search"):
        assert sum(path.endswith(f".{name}") for path in decoding) == 1, (name, decoding)
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    assert [d["location"] for d in docs if d["location"].endswith(".beam_search")] == [
        "api/decoding.html#tfm.decoding.beam.beam_search"]


def test_api_search_titles_are_names(site):
    """An API entry's search title is its name, not its signature (whose `beam_size=...` outranked the name)."""
    assert docs_site.api_search_title("<code>beam_search(model, beam_size=4, pair=(1, 2))</code>") == \
        "<code>beam_search()</code>"
    assert docs_site.api_search_title("<code>Encoder</code>") == "<code>Encoder</code>"
    docs = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    titles = {d["location"]: d["title"] for d in docs}
    assert titles["api/decoding.html#tfm.decoding.beam.beam_search"] == "<code>beam_search()</code>"


def test_searching_beam_search_finds_beam_search_first(browser):
    """The first entry the search shows for "beam search" is the function beam_search (it was a copy)."""
    page, base = browser
    page.goto(base + "index.html", wait_until="networkidle")
    page.wait_for_function("""() => { const meta = document.querySelector('.md-search-result__meta');
        return meta && meta.textContent && !/initializing/i.test(meta.textContent) }""", timeout=120_000)
    page.focus("input.md-search__input")
    page.locator("input.md-search__input").press_sequentially("beam search")
    # The results of the whole query, not of a prefix typed so far ("beam se"): each link carries its query.
    page.locator("a.md-search-result__link[href*='h=beam+search#']").first.wait_for(timeout=30_000)
    first = page.locator("a.md-search-result__link[href*='#']").first.get_attribute("href")
    assert first.endswith("api/decoding.html?h=beam+search#tfm.decoding.beam.beam_search"), first
