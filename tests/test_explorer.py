"""The attention explorer (issues 51, 58 and 56): tools/attention_explorer.py's data, and the page that draws it.

- the data, on a tiny trained run (the shared `finished_run`: 2 epochs of the numbers task) with the tool's own code:
  the file holds, rounded to its decimals and nothing else, what `Translator.attention` returns for each sentence
  (tokens, translation, every layer and head of the three kinds); every row sums to 1 within 0.01; the decoder's
  self-attention is causal in the file too; no machine path; the size budget is enforced;
- what the tool refuses, in one line on stderr with exit status 2: a path that is no run (missing, a file, a folder
  without a run's config.json), and a run of a corpus or direction the page's notes do not describe (the numbers
  task, Multi30k into French) before anything is loaded or written;
- the committed data (docs/explorer/attention_data.js, from notebook 08's run): at least 8 sentences with their
  reasons, every layer and head of the three kinds, rows summing to 1, no machine path, within 1.5 MB; the notes
  explain the `▁` subword marker in both languages;
- in Chromium (skipped, saying so, without Chromium or playwright), on the site built once for this module
  (tests/test_site.py's fixtures): the English and Korean pages open with no console error and no request outside
  the site, over http and from the disk (file://); the root element and the five controls (sentence, kind, view,
  layer, head); at least 8 sentences; for every sentence, kind, layer and head, and every panel of the model view,
  each query's drawn weights sum to 1 and equal the file's; changing the layer or the head changes the drawing; the
  model view has one panel per layer x head, and choosing one opens it in the head view; the legend's head toggles
  hide and show a head's lines; hover or keyboard focus keeps one row and gives its numbers (the weight, the two
  tokens); the redraw's invariants (one element per weight, styles Chromium can share, a hover that touches rows not
  weights: the redraw time itself is measured by hand, not asserted); at 390 px nothing but a drawing's own box
  scrolls sideways, the controls are on screen, and Korean breaks between words.

    .venv/bin/python -m pytest -q tests/test_explorer.py
"""

import importlib.util
import json
import pathlib
import re

import numpy as np
import pytest
from test_site import browser, site  # noqa: F401  (the site built once, one Chromium per module)

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("attention_explorer", ROOT / "tools" / "attention_explorer.py")
explorer = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(explorer)

DATA_FILE = ROOT / "docs" / "explorer" / "attention_data.js"
PAGES = ("explorer.html", "ko/explorer.html")
SENTENCES = ["three hundred twenty one", "seven thousand three hundred forty two", "five"]
MACHINE_PATH = re.compile(r"(?:/home/|/root/|/tmp/|/work/|/Users/|[A-Za-z]:\\\\)")


# --- The data -----------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(finished_run, tmp_path_factory):
    """`(data, the file written, the run)`: the tool run on the tiny trained run (its last epoch's weights)."""
    path = tmp_path_factory.mktemp("explorer") / "attention_data.js"
    data = explorer.build(finished_run, path, SENTENCES, checkpoint="latest")
    return data, path, finished_run


def test_the_file_holds_what_translator_attention_returns(tiny):
    from tfm.decoding import Translator

    data, path, run = tiny
    stored = explorer.from_script(path.read_text(encoding="utf-8"))
    assert stored == data
    translator = Translator.from_run(run, checkpoint="latest")
    scale = stored["scale"]
    assert scale == 10 ** stored["decimals"]
    for item, sentence in zip(stored["sentences"], SENTENCES, strict=True):
        maps = translator.attention(sentence)
        assert item["source"] == sentence and item["translation"] == maps["translation"]
        assert item["tokens"]["source"] == list(maps["source_tokens"])
        assert item["tokens"]["output"] == list(maps["target_tokens"]) and item["tokens"]["output"][-1] == "[END]"
        assert item["tokens"]["decoder_input"] == ["[START]"] + item["tokens"]["output"][:-1]
        assert sorted(item["attention"]) == sorted(explorer.KINDS)
        for kind in explorer.KINDS:
            assert len(item["attention"][kind]) == len(maps[kind]), kind
            for layer, weights in enumerate(maps[kind]):
                kept = np.array(item["attention"][kind][layer], dtype=np.int64)
                assert kept.shape == weights.shape, (kind, layer)
                # Rounding only: every stored weight is the model's to half a unit of the last decimal kept.
                np.testing.assert_array_equal(kept, np.rint(np.asarray(weights, np.float64) * scale).astype(np.int64))
                assert np.abs(kept / scale - weights).max() <= 0.5 / scale + 1e-7
    assert data["layers"] == {"encoder": 1, "decoder": 1} and data["heads"] == 2  # tests/training_helper.py's SMALL


def test_every_row_sums_to_one_and_the_decoder_is_causal(tiny):
    data, _, _ = tiny
    assert explorer.row_sum_problems(data) == []
    for item in data["sentences"]:
        for kind, layers in item["attention"].items():
            sums = np.array(layers).sum(axis=-1) / data["scale"]  # (layers, heads, queries)
            np.testing.assert_allclose(sums, 1.0, atol=0.01, err_msg=kind)
        for layer in item["attention"]["decoder_self_attention"]:
            above = np.triu(np.array(layer), k=1)  # (heads, T, T): step i sees decoder inputs 0..i only
            assert not above.any()


def test_provenance_names_the_run_by_its_folder_and_no_machine_path(tiny):
    data, path, run = tiny
    text = path.read_text(encoding="utf-8")
    assert text.startswith("window.TFM_ATTENTION_DATA = {") and text.endswith("};\n")
    provenance = data["provenance"]
    assert provenance["run"] == pathlib.Path(run).name and provenance["epochs"] == 2
    assert provenance["weights"] == "epoch_002.weights.h5" and provenance["beam_size"] == 4
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", provenance["date"]) and provenance["tfm_version"]
    assert str(pathlib.Path(run).parent) not in text and not MACHINE_PATH.search(text)


def test_the_tool_refuses_a_file_over_budget_or_naming_a_machine_path(tiny, tmp_path):
    data, _, _ = tiny
    target = tmp_path / "data.js"
    size = len(explorer.to_script(data).encode("utf-8"))
    with pytest.raises(ValueError, match=f"over the budget of {size - 1:,}"):
        explorer.write(data, target, max_bytes=size - 1)
    with pytest.raises(ValueError, match="machine path"):
        explorer.write(data, target, forbidden=[data["sentences"][0]["source"]])
    broken = json.loads(json.dumps(data))
    broken["sentences"][0]["attention"]["cross_attention"][0][0][0][0] += 200  # + 0.02 on one weight
    with pytest.raises(ValueError, match="do not sum to 1"):
        explorer.write(broken, target)
    assert not target.exists()
    assert explorer.write(data, target, max_bytes=size) == size


def test_the_tools_examples_run():
    import doctest

    result = doctest.testmod(explorer, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8 and result.failed == 0, result


def test_make_course_writes_the_data_only_from_notebook_08s_multi30k_run(tmp_path, monkeypatch):
    """tools/make_course.py runs the tool after notebook 08 on `runs/08_multi30k_*`, and on nothing else (fast mode
    trains `runs/08_numbers_*`, which would make an explorer of number words)."""
    import subprocess
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    spec = importlib.util.spec_from_file_location("make_course", ROOT / "tools" / "make_course.py")
    make_course = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_course)
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda argv, **kwargs: calls.append(argv))
    (tmp_path / "08_numbers_d64").mkdir()
    assert make_course.write_explorer("/data", runs_dir=tmp_path) is None and calls == []
    (tmp_path / "08_multi30k_d256").mkdir()
    assert make_course.write_explorer("/data", runs_dir=tmp_path) == tmp_path / "08_multi30k_d256"
    assert calls == [[sys.executable, str(ROOT / "tools" / "attention_explorer.py"), str(tmp_path / "08_multi30k_d256"),
                      "--data-dir", "/data"]]


# --- What the tool refuses (issue 56) -----------------------------------------------------------------------------

def _run_tool(*argv):
    """The tool as a command: `(exit status, stdout, stderr)`."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}  # its own quiet import is tested
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "attention_explorer.py"), *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    return done.returncode, done.stdout, done.stderr


def test_a_path_that_is_no_run_gets_one_line_and_status_2(tmp_path):
    """A missing path, a plain file, a folder without config.json, a folder whose config.json is not a run's: one
    line on stderr that names the path and the problem, exit status 2, no traceback, nothing written."""
    (tmp_path / "afile.txt").write_text("not a run\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "config.json").write_text('{"name": "a web project"}\n')
    output = tmp_path / "data.js"
    cases = {"missing": "does not exist", "afile.txt": "is a file, not a folder", "empty": "is not a tfm run folder",
             "project": "config.json"}
    for name, problem in cases.items():
        status, out, err = _run_tool(str(tmp_path / name), "--output", str(output))
        lines = err.strip().splitlines()
        assert status == 2 and out == "", (name, status, out, err[-2000:])
        assert len(lines) == 1 and lines[0].startswith("attention_explorer.py: error: "), (name, err[-2000:])
        assert str(tmp_path / name) in lines[0] and problem in lines[0], (name, lines[0])
    assert not output.exists()


def test_a_run_of_another_corpus_is_refused_before_anything_is_written(finished_run, tmp_path, monkeypatch, capsys):
    """A run of the numbers task would put number words under notes written for Multi30k: refused, in one line and
    with status 2, before the model is loaded, whether the tool writes the page's own file (the default, here
    redirected to a temporary one) or another file with the default (Multi30k) sentences."""
    from tfm.decoding import Translator

    page_file = tmp_path / "docs" / "explorer" / "attention_data.js"
    monkeypatch.setattr(explorer, "OUTPUT", page_file)
    loaded = []
    monkeypatch.setattr(Translator, "from_run", classmethod(lambda cls, *a, **k: loaded.append(a) or 1 / 0))
    for argv in ([finished_run], [finished_run, "--sentence", "five"],
                 [finished_run, "--output", str(tmp_path / "other.js")]):
        assert explorer.main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "was trained on numbers" in err[0] and "multi30k (en -> de)" in err[0], err
    assert loaded == [] and not page_file.exists() and not (tmp_path / "other.js").exists()
    assert not page_file.parent.exists()


def test_only_a_multi30k_english_to_german_run_may_write_the_pages_file(finished_run, tmp_path):
    """What the notes describe is a corpus and a direction: Multi30k English -> German, whether the run's config
    names the languages or leaves them to the corpus' default. Another direction is refused like another corpus."""
    import json
    import shutil

    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    record = json.loads((run / "config.json").read_text(encoding="utf-8"))

    def with_data(**data):
        (run / "config.json").write_text(json.dumps({**record, "data": {**record["data"], **data}}), encoding="utf-8")
        return run

    assert explorer.check_run(with_data(dataset="multi30k", source_lang=None, target_lang=None)).data.dataset == \
        "multi30k"
    assert explorer.check_run(with_data(dataset="multi30k", source_lang="en", target_lang="de"))
    with pytest.raises(explorer.Refused, match=r"trained on multi30k \(en -> fr\)"):
        explorer.check_run(with_data(dataset="multi30k", source_lang="en", target_lang="fr"))
    with pytest.raises(explorer.Refused, match=r"trained on multi30k \(de -> en\)"):
        explorer.check_run(with_data(dataset="multi30k", source_lang="de", target_lang=None))
    # Any run may be looked at in another file, with sentences of its own.
    assert explorer.check_run(with_data(dataset="numbers"), tmp_path / "other.js", ["five"]).data.dataset == "numbers"


# --- The committed data -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def committed():
    assert DATA_FILE.is_file(), (f"no {DATA_FILE.relative_to(ROOT)}: write it from notebook 08's run with "
                                 "`make explorer RUN=runs/08_multi30k_d256`")
    return DATA_FILE.read_text(encoding="utf-8")


def test_the_committed_data_is_complete_small_and_has_no_machine_path(committed):
    assert len(committed.encode("utf-8")) <= explorer.MAX_BYTES
    assert not MACHINE_PATH.search(committed)
    data = explorer.from_script(committed)
    assert data["format"] == explorer.FORMAT and data["scale"] == 10 ** data["decimals"]
    assert {"run", "preset", "epochs", "weights", "date", "tfm_version"} <= set(data["provenance"])
    assert len(data["sentences"]) >= 8
    layers, heads = data["layers"], data["heads"]
    for item in data["sentences"]:
        assert item["why"] and item["why_ko"] and item["reference"] and item["translation"], item["source"]
        s, t = len(item["tokens"]["source"]), len(item["tokens"]["output"])
        shapes = {"encoder_self_attention": (layers["encoder"], heads, s, s),
                  "decoder_self_attention": (layers["decoder"], heads, t, t),
                  "cross_attention": (layers["decoder"], heads, t, s)}
        for kind, shape in shapes.items():
            assert np.array(item["attention"][kind]).shape == shape, (item["source"], kind)
    assert explorer.row_sum_problems(data) == []
    chosen = [(item["index"], item["why"], item["why_ko"]) for item in data["sentences"]]
    assert chosen == list(explorer.DEFAULT_SENTENCES), "the data's sentences are not DEFAULT_SENTENCES: run the tool"


# --- The notes ----------------------------------------------------------------------------------------------------

def test_the_notes_explain_the_subword_marker_in_both_languages():
    """The tokens the page draws start with `▁` or not; each page says what that means, in one sentence."""
    english = (ROOT / "docs" / "explorer.md").read_text(encoding="utf-8")
    korean = (ROOT / "docs" / "ko" / "explorer.md").read_text(encoding="utf-8")
    assert re.search(r"A token that starts with `▁` begins a word [^.]*space[^.]*continues the word before it\.",
                     english)
    assert re.search(r"`▁`로 시작하는 토큰은 새 단어의 시작이고[^.]*공백[^.]*앞 토큰의 단어에 이어집니다\.", korean)


# --- In Chromium --------------------------------------------------------------------------------------------------

CONTROLS = ["sentence", "kind", "view", "layer", "head"]
_SET = """([name, value]) => { const s = document.querySelector(`[data-attention-explorer] select[name=${name}]`);
    s.value = String(value); s.dispatchEvent(new Event('change', {bubbles: true})) }"""


def _open(page_maker, url, site_prefix):
    """Opens `url` in a new tab: `(tab, problems)`, problems being console errors, page errors, failed requests and
    requests outside `site_prefix`, as they come."""
    tab = page_maker()
    problems = []
    tab.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    tab.on("requestfailed", lambda r: problems.append(f"failed: {r.url} {r.failure}"))
    tab.on("request", lambda r: r.url.startswith(site_prefix) or r.url.startswith("data:")
           or problems.append(f"outside the site: {r.url}"))
    tab.goto(url, wait_until="networkidle")
    return tab, problems


def test_the_pages_open_over_http_and_from_the_disk_without_errors_or_outside_requests(
        site, browser):  # noqa: F811  (test_site's fixtures)
    page, base = browser
    new_tab = page.context.browser.new_page
    disk = site.as_uri() + "/"
    found = {}
    for name in PAGES:
        for prefix in (base, disk):
            tab, problems = _open(new_tab, prefix + name, prefix)
            state = tab.evaluate("""() => { const root = document.querySelector('[data-attention-explorer]');
                return root && {selects: Array.from(root.querySelectorAll('select')).map(s => s.name),
                                views: Array.from(root.querySelectorAll('select[name=view] option')).map(o => o.value),
                                sentences: root.querySelector('select[name=sentence]').options.length,
                                weights: root.querySelectorAll('[data-weight]').length,
                                lang: root.closest('[lang]').getAttribute('lang')} }""")
            if state is not None:  # the model view opens from the disk too
                tab.evaluate(_SET, ["view", "model"])
                state["panels"] = tab.evaluate(
                    "() => document.querySelectorAll('button[data-layer][data-head]').length")
            tab.close()
            found[prefix.split(":")[0] + " " + name] = (state, problems)
    for where, (state, problems) in found.items():
        assert not problems, (where, problems)
        assert state is not None, f"{where}: no element with data-attention-explorer"
        assert state["selects"] == CONTROLS and state["views"] == ["head", "model"], (where, state)
        assert state["sentences"] >= 8 and state["weights"] > 0 and state["panels"] >= 4, (where, state)
    assert found[f"http {PAGES[1]}"][0]["lang"] == "ko"


# Every sentence, kind and layer with all heads drawn (each head's weights, in both views of the head view), then one
# head at a time for one layer of each kind, then every kind in the model view (one panel per layer and head): per
# view, panel and head, each query's drawn weights must be the file's numbers and sum to 1. Returns the problems and
# how many drawings were checked.
_EVERY_DRAWING = """() => {
    const root = document.querySelector('[data-attention-explorer]'), data = window.TFM_ATTENTION_DATA;
    const set = (name, value) => { const s = root.querySelector(`select[name=${name}]`); s.value = String(value);
                                   s.dispatchEvent(new Event('change', {bubbles: true})) };
    const problems = [];
    let checked = 0;
    // `drawn` (elements with data-weight) against layer `layer` of `item`'s `kind` for `heads`.
    const compare = (where, drawn, item, kind, layer, heads) => {
        const sums = {}, rows = item.attention[kind][layer][0].length, keys = item.attention[kind][layer][0][0].length;
        if (drawn.length !== heads.length * rows * keys) problems.push(`${where}: ${drawn.length} drawn`);
        for (const e of drawn) {
            const h = +e.dataset.head, i = +e.dataset.from, j = +e.dataset.to, w = +e.dataset.weight;
            if (!heads.includes(h) || w !== item.attention[kind][layer][h][i][j] / data.scale)
                problems.push(`${where} head ${h} (${i}, ${j}): ${w}`);
            sums[h + ' ' + i] = (sums[h + ' ' + i] || 0) + w;
        }
        for (const [row, sum] of Object.entries(sums))
            if (Math.abs(sum - 1) > 0.01) problems.push(`${where} head/query ${row}: ${sum}`);
        if (Object.keys(sums).length !== heads.length * rows) problems.push(`${where}: rows missing`);
    };
    const every = [...Array(data.heads).keys()];
    data.sentences.forEach((item, sentence) => {
        set('sentence', sentence);
        for (const kind of ['encoder_self_attention', 'decoder_self_attention', 'cross_attention']) {
            set('kind', kind);
            const layers = item.attention[kind].length;
            if (root.querySelector('select[name=layer]').options.length !== layers) problems.push(`${kind}: layers`);
            for (let layer = 0; layer < layers; layer++) {
                set('layer', layer + 1);  // the options number the layers from 1
                const single = sentence === 0 && layer === layers - 1 ? every : [];
                for (const head of [...single, 'all']) {
                    set('head', head);
                    checked++;
                    for (const view of ['lines', 'matrix'])
                        compare(`${sentence} ${kind} ${layer} ${head} ${view}`,
                                root.querySelectorAll(`[data-view=${view}] [data-weight]`), item, kind, layer,
                                head === 'all' ? every : [head]);
                }
            }
            set('view', 'model');
            const panels = root.querySelectorAll('[data-view=model] button[data-layer][data-head]');
            if (panels.length !== layers * data.heads)
                problems.push(`${sentence} ${kind} model: ${panels.length} panels`);
            for (const panel of panels) {
                checked++;
                compare(`${sentence} ${kind} model panel ${panel.dataset.layer} ${panel.dataset.head}`,
                        panel.querySelectorAll('[data-weight]'), item, kind, +panel.dataset.layer - 1,
                        [+panel.dataset.head]);
            }
            const inPanels = root.querySelectorAll('[data-view=model] [data-weight]').length;
            if (inPanels !== root.querySelectorAll('[data-weight]').length)
                problems.push(`${sentence} ${kind} model: weights drawn outside the panels`);
            set('view', 'head');
        }
    });
    const layers = data.layers.encoder + 2 * data.layers.decoder;
    return {problems: problems.slice(0, 20), checked: checked,
            expected: data.sentences.length * layers * (1 + data.heads) + 3 * data.heads};
}"""


def test_every_drawing_shows_the_files_weights_and_each_query_sums_to_one(browser):  # noqa: F811  (test_site's fixture)
    page, base = browser
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(base + PAGES[0], wait_until="load")
    result = page.evaluate(_EVERY_DRAWING)
    assert not result["problems"], result["problems"]
    assert result["checked"] == result["expected"] and result["checked"] >= 8 * 3 * 5, result


def test_changing_the_layer_or_the_head_changes_the_drawing(browser):  # noqa: F811  (test_site's fixture)
    page, base = browser
    page.goto(base + PAGES[0], wait_until="load")
    drawn = """() => Array.from(document.querySelectorAll('[data-attention-explorer] [data-weight]'))
        .map(e => [e.dataset.head, e.dataset.from, e.dataset.to, e.dataset.weight].join(' ')).join('|')"""
    caption = "() => document.querySelector('[data-caption]').textContent"
    before, words = page.evaluate(drawn), page.evaluate(caption)
    page.select_option("[data-attention-explorer] select[name=head]", value="1")
    one_head = page.evaluate(drawn)
    assert one_head != before and "head 1 of" in page.evaluate(caption) and "head₂" in page.evaluate(caption)
    page.select_option("[data-attention-explorer] select[name=head]", value="0")
    assert page.evaluate(drawn) != one_head
    page.select_option("[data-attention-explorer] select[name=layer]", value="2")  # layers are numbered from 1
    assert page.evaluate(drawn) not in (before, one_head) and "layer 2 of" in page.evaluate(caption)
    assert words != page.evaluate(caption)


@pytest.mark.parametrize("name", PAGES)
def test_the_model_view_draws_every_layer_and_head_and_a_panel_opens_in_the_head_view(
        browser, name):  # noqa: F811  (test_site's fixture)
    """bertviz's model view: one panel per layer x head of the chosen kind, each `button[data-layer][data-head]`
    (the values the layer and head controls take); choosing one, by a click or the keyboard, opens that layer and
    head in the head view."""
    page, base = browser
    page.goto(base + name, wait_until="load")
    data = page.evaluate("() => ({layers: TFM_ATTENTION_DATA.layers, heads: TFM_ATTENTION_DATA.heads})")
    state = """() => { const root = document.querySelector('[data-attention-explorer]'), value = n =>
        root.querySelector(`select[name=${n}]`).value;
        return {view: value('view'), layer: value('layer'), head: value('head'), kind: value('kind'),
                panels: Array.from(root.querySelectorAll('[data-view=model] button[data-layer][data-head]'))
                    .filter(b => b.getBoundingClientRect().width > 0).map(b => b.dataset.layer + ' ' + b.dataset.head),
                lines: root.querySelector('[data-view=lines]').getBoundingClientRect().height,
                legend: root.querySelectorAll('.tfm-x-legend button[data-head]').length,
                heads: Array.from(new Set(Array.from(root.querySelectorAll('[data-view=lines] [data-weight]'))
                    .map(e => e.dataset.head)))} }"""
    for kind, layers in (("encoder_self_attention", data["layers"]["encoder"]), ("cross_attention",
                                                                                 data["layers"]["decoder"])):
        page.select_option("[data-attention-explorer] select[name=kind]", value=kind)
        page.select_option("[data-attention-explorer] select[name=view]", value="model")
        shown = page.evaluate(state)
        assert shown["panels"] == [f"{layer} {head}" for layer in range(1, layers + 1)
                                   for head in range(data["heads"])], shown["panels"]
        assert shown["lines"] == 0 and shown["legend"] == 0, shown
    page.click("[data-view=model] button[data-layer='2'][data-head='1']")
    opened = page.evaluate(state)
    assert (opened["view"], opened["layer"], opened["head"], opened["kind"]) == ("head", "2", "1", "cross_attention")
    assert opened["heads"] == ["1"] and opened["panels"] == [] and opened["lines"] > 0, opened
    page.select_option("[data-attention-explorer] select[name=view]", value="model")
    page.focus(f"[data-view=model] button[data-layer='{data['layers']['decoder']}'][data-head='0']")
    page.keyboard.press("Enter")
    opened = page.evaluate(state)
    assert (opened["view"], opened["layer"], opened["head"]) == ("head", str(data["layers"]["decoder"]), "0"), opened


def test_a_head_toggle_hides_and_shows_that_heads_lines(browser):  # noqa: F811  (test_site's fixture)
    """With all heads drawn, the legend has one `button[data-head][aria-pressed]` per head: pressing one hides that
    head's lines and matrix (and nothing else), pressing it again shows them; every drawn weight carries data-head."""
    page, base = browser
    page.goto(base + PAGES[0], wait_until="load")
    seen = """() => { const root = document.querySelector('[data-attention-explorer]'), heads = {};
        root.querySelectorAll('[data-view=lines] [data-weight], [data-view=matrix] [data-weight]').forEach(e => {
            const key = e.closest('[data-view]').dataset.view + ' ' + e.dataset.head;
            heads[key] = heads[key] || e.checkVisibility({visibilityProperty: true}) }) ;
        return {visible: Object.keys(heads).filter(k => heads[k]).sort(),
                pressed: Array.from(root.querySelectorAll('button[data-head][aria-pressed]'))
                    .filter(b => !b.hasAttribute('data-layer'))
                    .map(b => b.dataset.head + ' ' + b.getAttribute('aria-pressed')),
                unlabelled: root.querySelectorAll('[data-weight]:not([data-head])').length} }"""
    heads = page.evaluate("() => TFM_ATTENTION_DATA.heads")
    every = sorted(f"{view} {h}" for view in ("lines", "matrix") for h in range(heads))
    before = page.evaluate(seen)
    assert before["visible"] == every and before["unlabelled"] == 0
    assert before["pressed"] == [f"{h} true" for h in range(heads)]
    page.click(".tfm-x-legend button[data-head='1']")
    hidden = page.evaluate(seen)
    assert hidden["visible"] == [key for key in every if not key.endswith(" 1")], hidden
    assert hidden["pressed"] == [f"{h} {'false' if h == 1 else 'true'}" for h in range(heads)]
    hidden_lines = page.evaluate("""() => Array.from(document.querySelectorAll('[data-view=lines] [data-head="1"]'))
        .every(e => getComputedStyle(e).visibility === 'hidden')""")
    assert hidden_lines
    page.click(".tfm-x-legend button[data-head='1']")
    assert page.evaluate(seen) == before


def test_hover_or_keyboard_focus_keeps_only_one_querys_row_and_gives_its_numbers(
        browser):  # noqa: F811  (test_site's fixture)
    page, base = browser
    page.goto(base + PAGES[0], wait_until="load")
    shown = """() => { const seen = new Set();
        document.querySelectorAll('[data-view=lines] line[data-from]').forEach(e => {
            if (getComputedStyle(e).visibility !== 'hidden') seen.add(e.dataset.from) });
        return Array.from(seen).sort() }"""
    readout = "() => document.querySelector('[data-readout]').textContent"
    item = page.evaluate("""() => { const d = TFM_ATTENTION_DATA, s = d.sentences[0];
        return {keys: s.tokens.source, queries: s.tokens.output, heads: d.heads, scale: d.scale,
                weights: s.attention.cross_attention[0]} }""")

    def weight(head, i, j):
        return f"{item['weights'][head][i][j] / item['scale']:.4f}"

    assert len(page.evaluate(shown)) > 1
    page.locator(f".tfm-x-legend button[data-head='{item['heads'] - 1}']").focus()
    page.keyboard.press("Tab")  # from the legend's last button to the first query token
    assert page.evaluate("() => document.activeElement.dataset.query") == "0" and page.evaluate(shown) == ["0"]
    # The numbers on keyboard focus: the query, and each head's largest weight with its key.
    text = page.evaluate(readout)
    assert f"“{item['queries'][0]}”" in text, text
    for head in range(item["heads"]):
        j = max(range(len(item["keys"])), key=lambda k: item["weights"][head][0][k])
        assert f"head {head} “{item['keys'][j]}” {weight(head, 0, j)}" in text, (head, text)
    page.keyboard.press("ArrowRight")  # the first key: its weight in every head
    text = page.evaluate(readout)
    assert f"→ “{item['keys'][0]}”" in text and all(f"head {h} {weight(h, 0, 0)}" in text for h in range(item["heads"]))
    page.keyboard.press("ArrowRight")
    assert f"→ “{item['keys'][1]}”" in page.evaluate(readout)
    page.locator("[data-view=lines] [data-query='2']").focus()
    assert page.evaluate(shown) == ["2"]
    page.keyboard.press("ArrowDown")
    assert page.evaluate("() => document.activeElement.dataset.query") == "3" and page.evaluate(shown) == ["3"]
    page.locator("select[name=sentence]").focus()
    assert len(page.evaluate(shown)) > 1
    page.locator("[data-view=matrix] [data-query='1']").first.hover()
    assert page.evaluate(shown) == ["1"]
    # The numbers on hover: one cell of head 2's matrix, its weight and its two tokens.
    page.locator("[data-view=matrix] [data-head='2'][data-from='1'][data-to='0']").hover()
    assert page.evaluate(readout) == f"head 2 · “{item['queries'][1]}” → “{item['keys'][0]}”: {weight(2, 1, 0)}"
    # One head drawn: each key's weight is written beside it.
    page.select_option("[data-attention-explorer] select[name=head]", value="2")
    page.locator("[data-view=lines] [data-query='1']").focus()
    beside = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-view=lines] .tfm-x-num')).map(e => e.textContent)")
    assert beside == [f"{item['weights'][2][1][j] / item['scale']:.2f}" for j in range(len(item["keys"]))]


def test_the_redraw_shares_styles_and_a_hover_touches_rows_not_weights(browser):  # noqa: F811  (test_site's fixture)
    """What made the longest sentence's redraw take seconds, asserted as invariants rather than timings: each drawn
    weight is one element (no child, no tooltip element of its own); the drawings do not inherit Material's
    `box-sizing: inherit` (which kept Chromium from sharing computed styles); drawn opacities take few distinct
    values (rounded to 3 decimals); and keeping a query's row changes a handful of elements, not one per weight."""
    page, base = browser
    page.goto(base + PAGES[0], wait_until="load")
    longest = page.evaluate("""() => { const s = TFM_ATTENTION_DATA.sentences; let best = 0;
        s.forEach((item, i) => { if (item.tokens.source.length > s[best].tokens.source.length) best = i });
        return best }""")
    page.evaluate(_SET, ["sentence", longest])
    page.evaluate(_SET, ["kind", "encoder_self_attention"])
    facts = page.evaluate("""async () => {
        const root = document.querySelector('[data-attention-explorer]');
        const drawn = root.querySelectorAll('[data-weight]'), svg = root.querySelector('[data-view=lines] svg');
        const opacities = new Set(Array.from(drawn)
            .map(e => e.getAttribute('stroke-opacity') || e.getAttribute('fill-opacity')));
        const changed = [];
        const watch = new MutationObserver(records => records.forEach(r => changed.push(r)));
        watch.observe(root, {attributes: true, childList: true, subtree: true});
        const query = svg.querySelector('[data-query="5"]');
        query.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
        await new Promise(r => setTimeout(r, 0));
        const kept = changed.length;
        query.dispatchEvent(new MouseEvent('mouseout', {bubbles: true}));
        await new Promise(r => setTimeout(r, 0));
        watch.disconnect();
        return {weights: drawn.length, withChildren: Array.from(drawn).filter(e => e.children.length).length,
                lineElements: svg.querySelectorAll('*').length,
                lineWeights: svg.querySelectorAll('[data-weight]').length,
                tokens: svg.querySelectorAll('text').length, groups: svg.querySelectorAll('g').length,
                boxSizing: getComputedStyle(drawn[0]).boxSizing, rootBoxSizing: getComputedStyle(root).boxSizing,
                opacities: opacities.size, kept: kept, changed: changed.length,
                heads: TFM_ATTENTION_DATA.heads, rows: svg.querySelectorAll('[data-query]').length} }""")
    assert facts["weights"] > 4000 and facts["withChildren"] == 0, facts
    # The lines view: its weights, one <g> per head and per head and query, the tokens and their tooltips, two labels.
    assert facts["groups"] <= 2 + facts["heads"] * (1 + facts["rows"]), facts
    assert facts["lineElements"] <= facts["lineWeights"] + facts["groups"] + 2 * facts["tokens"], facts
    assert facts["rootBoxSizing"] == "border-box" and facts["boxSizing"] == "content-box", facts
    assert facts["opacities"] <= 1001, facts
    # Keeping a row: the root's class and attribute, a class on that row's groups (one per head and view) and labels.
    assert 0 < facts["kept"] <= 4 * facts["heads"] + 12 and facts["changed"] < facts["weights"] / 50, facts


@pytest.mark.parametrize("name", PAGES)
def test_at_390_px_only_the_drawing_scrolls_sideways_and_the_controls_are_on_screen(
        browser, name):  # noqa: F811  (test_site's fixture)
    page, base = browser
    page.set_viewport_size({"width": 390, "height": 844})
    layout = """() => {
        const root = document.querySelector('[data-attention-explorer]');
        const out = Array.from(root.querySelectorAll('*')).filter(e => !e.closest('.tfm-x-matrix, .tfm-x-scroll'))
            .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).map(e => e.tagName);
        const lines = root.querySelector('[data-view=lines] svg');
        return {page: document.documentElement.scrollWidth, width: window.innerWidth, out: out.slice(0, 5),
                controls: Array.from(root.querySelectorAll('select, .tfm-x-legend button')).filter(s => s.offsetParent)
                    .map(s => { const r = s.getBoundingClientRect();
                                return r.width > 20 && r.left >= 0 && r.right <= window.innerWidth }),
                lines: lines ? lines.getBoundingClientRect().width : null,
                panels: root.querySelectorAll('[data-view=model] button[data-layer]').length,
                breaks: [root, root.closest('.md-typeset').querySelector('p')]
                    .map(e => getComputedStyle(e).wordBreak)} }"""
    try:
        page.goto(base + name, wait_until="load")
        longest = page.evaluate("() => TFM_ATTENTION_DATA.sentences.length - 1")
        head_view = page.evaluate(layout)
        page.evaluate(_SET, ["sentence", longest])
        page.evaluate(_SET, ["kind", "encoder_self_attention"])
        long_head_view = page.evaluate(layout)
        page.evaluate(_SET, ["view", "model"])
        model_view = page.evaluate(layout)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})
    for layout in (head_view, long_head_view, model_view):
        assert layout["page"] <= layout["width"] and not layout["out"], layout
        assert all(layout["controls"]) and len(layout["controls"]) >= 5, layout
    assert 200 < head_view["lines"] <= 390 and 200 < long_head_view["lines"] <= 390, head_view
    assert model_view["panels"] >= 4
    # Korean breaks between words, on the explorer and in the notes around it; English as usual.
    assert head_view["breaks"] == (["keep-all"] * 2 if name.startswith("ko/") else ["normal"] * 2), head_view
