"""The executed course in docs/course/: each copy equals its source notebook and is no older than it.

`make course` (tools/make_course.py) writes the copies and records in each the SHA-256 of its
source's cells; here every copy present is checked against `notebooks/`, and the checking
function itself is tried on made-up notebooks (so it is tested even before any copy exists).

    .venv/bin/python -m pytest -q tests/test_course.py
"""

import base64
import copy
import importlib.util
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
COURSE_DIR = ROOT / "docs" / "course"
COPIES = sorted(COURSE_DIR.glob("*.ipynb"))
MAX_COURSE_MB = 8

_spec = importlib.util.spec_from_file_location("make_course", ROOT / "tools" / "make_course.py")
make_course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_course)
_spec = importlib.util.spec_from_file_location("docs_site", ROOT / "tools" / "docs_site.py")
docs_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(docs_site)


def notebook(*cells):
    """A minimal nbformat-4 notebook from `("markdown" | "code", source)` pairs."""
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
            "cells": [{"cell_type": kind, "metadata": {}, "source": source,
                       **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                      for kind, source in cells]}


@pytest.fixture
def source_and_copy(tmp_path):
    """A source notebook, and its copy as make_course leaves it (outputs, counts, the record), both on disk."""
    source = notebook(("markdown", "# 99 · A test\n"), ("code", ["import os\n", "FAST = os.environ.get('TFM_FAST')"]),
                      ("markdown", "Loss 1.23 in the full run."), ("code", "print(2 + 2)"))
    executed = copy.deepcopy(source)
    for count, cell in enumerate((c for c in executed["cells"] if c["cell_type"] == "code"), start=1):
        cell["execution_count"] = count
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "4\n"}]
    make_course.stamp(executed, source, "99_test.ipynb", "full", 12.3)
    paths = tmp_path / "source.ipynb", tmp_path / "copy.ipynb"
    for path, nb in zip(paths, (source, executed)):
        path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
    return paths


def check(paths):
    source_path, copy_path = paths
    return make_course.check_copy(make_course.read(copy_path), make_course.read(source_path))


def rewrite(path, change):
    nb = make_course.read(path)
    change(nb)
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def test_a_faithful_copy_passes(source_and_copy):
    assert check(source_and_copy) == []
    record = make_course.read(source_and_copy[1])["metadata"]["tfm_course"]
    assert record["source"] == "notebooks/99_test.ipynb" and record["mode"] == "full" and record["seconds"] == 12


def test_a_tampered_code_cell_fails(source_and_copy):
    rewrite(source_and_copy[1], lambda nb: nb["cells"][3].update(source="print(2 + 3)"))
    assert any("code cell 1 differs" in problem for problem in check(source_and_copy))


def test_a_copy_missing_a_code_cell_fails(source_and_copy):
    rewrite(source_and_copy[1], lambda nb: nb["cells"].pop(3))
    assert any("1 code cells in the copy, 2 in the source" in problem for problem in check(source_and_copy))


def test_a_source_changed_after_the_copy_makes_it_stale(source_and_copy):
    # Prose only: the code cells still agree, but the copy's numbers may no longer match the text.
    rewrite(source_and_copy[0], lambda nb: nb["cells"][2].update(source="Loss 0.98 in the full run."))
    problems = check(source_and_copy)
    assert len(problems) == 1 and "older than its source" in problems[0]


def test_outputs_and_counts_do_not_change_the_digest(source_and_copy):
    source_path, copy_path = source_and_copy
    assert make_course.source_digest(make_course.read(copy_path)) == make_course.source_digest(
        make_course.read(source_path))


@pytest.mark.parametrize("noise", [
    "WARNING:tensorflow:5 out of the last 5 calls to <function f at 0x7f> triggered tf.function retracing.",
    ".venv/lib/python3.11/site-packages/keras/src/ops/nn.py:959: UserWarning: You are using a softmax",
    "INFO:tensorflow:Assets written to: exported/1/assets",
    "DeprecationWarning: `np.bool` is deprecated",
    "wrote /home/someone/tfm/runs/08_multi30k/history.csv",
    "loaded /tmp/tfm08_x1y2/vocab.txt",
], ids=["retracing", "keras-warning", "tf-info", "deprecation", "home-path", "tmp-path"])
def test_a_noisy_output_fails(source_and_copy, noise):
    source_path, copy_path = source_and_copy
    rewrite(copy_path, lambda nb: nb["cells"][3]["outputs"].append(
        {"output_type": "stream", "name": "stderr", "text": f"{noise}\n"}))
    problems = check(source_and_copy)
    assert len(problems) == 1 and "noisy output" in problems[0] and noise[:40] in problems[0], problems


def test_a_log_line_printed_twice_fails_and_tfms_own_warning_once_passes(source_and_copy):
    source_path, copy_path = source_and_copy
    once = "WARNING:tfm.decoding:1 input(s) longer than the model's 64 subwords were truncated (the first: index 9)\n"
    rewrite(copy_path, lambda nb: nb["cells"][3]["outputs"].append(
        {"output_type": "stream", "name": "stderr", "text": once}))
    assert check(source_and_copy) == []
    rewrite(copy_path, lambda nb: nb["cells"][3]["outputs"].append(
        {"output_type": "stream", "name": "stderr", "text": once}))
    problems = check(source_and_copy)
    assert len(problems) == 1 and "printed twice" in problems[0], problems


def test_copies_not_made_by_make_course_or_in_fast_mode_or_failing_are_refused(source_and_copy):
    source_path, copy_path = source_and_copy
    executed = make_course.read(copy_path)
    unstamped = copy.deepcopy(executed)
    del unstamped["metadata"]["tfm_course"]
    source = make_course.read(source_path)
    assert any("not made by tools/make_course.py" in p for p in make_course.check_copy(unstamped, source))
    fast = copy.deepcopy(executed)
    fast["metadata"]["tfm_course"]["mode"] = "fast"
    assert any("'fast' mode" in p for p in make_course.check_copy(fast, source))
    failing = copy.deepcopy(executed)
    failing["cells"][1]["outputs"] = [{"output_type": "error", "ename": "ValueError", "evalue": "", "traceback": []}]
    assert any("ValueError" in p for p in make_course.check_copy(failing, source))
    never_run = make_course.stamp(copy.deepcopy(source), source, "99_test.ipynb", "full", 1)
    assert any("not executed" in p for p in make_course.check_copy(never_run, source))


def test_check_all_reports_a_drifted_copy_and_an_orphan(source_and_copy, tmp_path, monkeypatch):
    course = tmp_path / "course"
    course.mkdir()
    sources = tmp_path / "notebooks"
    sources.mkdir()
    source_path, copy_path = source_and_copy
    (sources / "99_test.ipynb").write_text(source_path.read_text())
    (course / "99_test.ipynb").write_text(copy_path.read_text())
    (course / "98_gone.ipynb").write_text(copy_path.read_text())
    monkeypatch.setattr(make_course, "NOTEBOOK_DIR", sources)
    monkeypatch.setattr(make_course, "ROOT", tmp_path)
    assert list(make_course.check_all(course)) == ["98_gone.ipynb"]
    rewrite(course / "99_test.ipynb", lambda nb: nb["cells"][1].update(source="import sys"))
    assert make_course.check_all(course)["99_test.ipynb"] == ["code cell 0 differs from the source's"]
    assert make_course.main(["--check", "--output", str(course)]) == 1


@pytest.mark.parametrize("path", COPIES, ids=[p.name for p in COPIES])
def test_executed_copy_matches_its_source(path):
    source = ROOT / "notebooks" / path.name
    assert source.is_file(), f"docs/course/{path.name} has no source notebook in notebooks/"
    problems = make_course.check_copy(make_course.read(path), make_course.read(source))
    assert not problems, f"docs/course/{path.name}: " + "; ".join(problems)


def test_the_course_stays_small():
    total = sum(path.stat().st_size for path in COPIES) / 1e6
    assert total <= MAX_COURSE_MB, f"docs/course/ holds {total:.1f} MB; lower make_course's --dpi"


def test_the_course_index_gives_every_copy_and_its_run_time():
    """docs/course/index.md, the website's course page, links each copy beside the run time in its record."""
    lines = (COURSE_DIR / "index.md").read_text(encoding="utf-8").splitlines()
    missing = []
    for path in COPIES:
        run_time = docs_site.run_time(make_course.read(path)["metadata"][make_course.METADATA_KEY]["seconds"])
        row = next((line for line in lines if f"]({path.name})" in line), "")
        if f"| {run_time} |" not in row:
            missing.append(f"{path.name} ({run_time})")
    assert not missing, (f"docs/course/index.md does not list {missing}; "
                         f"`.venv/bin/python tools/docs_site.py --course-index` rewrites its table")


def test_tidy_drops_tensorflows_start_up_lines_only():
    notebook = {"cells": [{"cell_type": "code", "source": "x = 1", "outputs": [
        {"output_type": "stream", "name": "stderr",
         "text": "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n"
                 "I0000 00:00:1.0 port.cc:153] oneDNN custom operations are on.\n"},
        {"output_type": "stream", "name": "stderr",
         "text": "E0000 00:00:2.0 cuda_platform.cc:52] failed call to cuInit\nUserWarning: keep me\n"},
        {"output_type": "stream", "name": "stdout", "text": "I0000 stdout is the notebook's own\n"}]}]}
    outputs = make_course.tidy(notebook)["cells"][0]["outputs"]
    assert [o["text"] for o in outputs] == ["UserWarning: keep me\n", "I0000 stdout is the notebook's own\n"]
    assert notebook["cells"][0]["source"] == "x = 1"


def test_clear_runs_removes_only_the_notebooks_own_run_folders(tmp_path):
    """Before a notebook runs, the runs it left last time go (train() would resume them); others stay."""
    for name in ("08_multi30k_d64", "08_other", "12_numbers", "080_not_ours", "parsing_at_budget"):
        (tmp_path / name).mkdir()
    (tmp_path / "08_a_file.txt").write_text("not a run folder")
    removed = make_course.clear_runs(pathlib.Path("notebooks/08_translate_multi30k.ipynb"), tmp_path)
    assert [p.name for p in removed] == ["08_multi30k_d64", "08_other"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["080_not_ours", "08_a_file.txt", "12_numbers",
                                                           "parsing_at_budget"]
    assert make_course.clear_runs(pathlib.Path("notebooks/05_x.ipynb"), tmp_path / "missing") == []


def test_sync_prose_updates_markdown_keeps_outputs_and_refuses_code_changes(source_and_copy):
    """Prose edited after the copy was made is synced without execution; a code change still needs a run."""
    source_path, copy_path = source_and_copy
    rewrite(source_path, lambda nb: nb["cells"][2].update(source="Loss 1.19 in the full run (measured)."))
    assert any("older than its source" in p for p in check(source_and_copy))
    synced, changed = make_course.sync_prose(make_course.read(copy_path), make_course.read(source_path))
    assert changed == 1 and synced["cells"][2]["source"] == "Loss 1.19 in the full run (measured)."
    assert synced["cells"][3]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "4\n"}]
    record = synced["metadata"]["tfm_course"]
    assert record["mode"] == "full" and record["seconds"] == 12 and "prose_synced" in record
    assert make_course.check_copy(synced, make_course.read(source_path)) == []
    # Nothing to do the second time.
    assert make_course.sync_prose(synced, make_course.read(source_path))[1] == 0

    rewrite(source_path, lambda nb: nb["cells"][3].update(source="print(2 + 3)"))
    with pytest.raises(ValueError, match=r"code cells \[1\] changed"):
        make_course.sync_prose(synced, make_course.read(source_path))
    rewrite(source_path, lambda nb: nb["cells"].insert(1, {"cell_type": "markdown", "metadata": {}, "source": "x"}))
    with pytest.raises(ValueError, match="cells were added, removed or changed type"):
        make_course.sync_prose(synced, make_course.read(source_path))


def test_sync_code_keeps_outputs_and_records_the_edit(source_and_copy):
    """Code edited after the copy was made, printing the same (a rename): the copy takes the source's cells,
    keeps its outputs, and its record lists the edit (why, and each changed cell's old and new lines)."""
    source_path, copy_path = source_and_copy
    rewrite(source_path, lambda nb: nb["cells"][3].update(source="print(sum([2, 2]))"))
    rewrite(source_path, lambda nb: nb["cells"][2].update(source="Loss 1.23 in the full run (measured)."))
    assert check(source_and_copy) == ["code cell 1 differs from the source's", "older than its source: the "
                                      "source's cells changed after the copy was made (run `make course` for "
                                      "this notebook again)"]
    source = make_course.read(source_path)
    synced, changed = make_course.sync_code(make_course.read(copy_path), source, "the same sum, spelled with sum()")
    assert changed == [1] and make_course.check_copy(synced, source) == []
    assert [c["source"] for c in synced["cells"]] == [c["source"] for c in source["cells"]]  # prose too
    assert synced["cells"][3]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "4\n"}]
    record = synced["metadata"]["tfm_course"]
    assert record["mode"] == "full" and record["seconds"] == 12
    [edit] = record["code_edited"]
    assert edit["why"] == "the same sum, spelled with sum()"
    assert edit["cells"] == {"1": {"old": ["print(2 + 2)"], "new": ["print(sum([2, 2]))"]}}
    # A second edit is appended; refused: no code change, a changed layout, no reason given.
    rewrite(source_path, lambda nb: nb["cells"][1].update(source="import os\nFAST = bool(os.environ.get('TFM_FAST'))"))
    again, changed = make_course.sync_code(synced, make_course.read(source_path), "a flag, read the same way")
    assert changed == [0] and len(again["metadata"]["tfm_course"]["code_edited"]) == 2
    assert again["metadata"]["tfm_course"]["code_edited"][1]["cells"]["0"] == {
        "old": ["FAST = os.environ.get('TFM_FAST')"], "new": ["FAST = bool(os.environ.get('TFM_FAST'))"]}
    with pytest.raises(ValueError, match="no code cell changed"):
        make_course.sync_code(again, make_course.read(source_path), "nothing")
    with pytest.raises(ValueError, match="--why"):
        make_course.sync_code(synced, make_course.read(source_path), " ")
    rewrite(source_path, lambda nb: nb["cells"].append({"cell_type": "code", "metadata": {}, "source": "1",
                                                        "outputs": [], "execution_count": None}))
    with pytest.raises(ValueError, match="cells were added, removed or changed type"):
        make_course.sync_code(again, make_course.read(source_path), "a new cell")


def test_tidy_writes_the_machines_folders_as_a_reader_sees_them():
    import nbformat

    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(run)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                           text="RUN = /srv/repo/runs/08_x\ndata from /srv/data/multi30k\n"),
                    nbformat.v4.new_output("execute_result", data={"text/plain": "'/srv/repo'"}, execution_count=1)]
    nb.cells = [cell]
    make_course.tidy(nb, {"/srv/repo": "", "/srv/data": "$TFM_DATA_DIR"})
    assert cell.outputs[0]["text"] == "RUN = runs/08_x\ndata from $TFM_DATA_DIR/multi30k\n"
    assert cell.outputs[1]["data"]["text/plain"] == "'.'"
    assert make_course.scrub_paths("exported to /tmp/tfm12_1gprnc6k/exported/1", {}) == \
        "exported to $TMPDIR/tfm12/exported/1"
    # a data folder inside the checkout: the longer path wins
    assert make_course.scrub_paths("/srv/repo/data/cache/multi30k /srv/repo/runs",
                                   {"/srv/repo": "", "/srv/repo/data/cache": "$TFM_DATA_DIR"}) == \
        "$TFM_DATA_DIR/multi30k runs"


def test_the_copies_print_no_machine_paths():
    """What a reader sees names no folder of the machine that ran it (tools/make_course.py scrubs them)."""
    machine = re.compile(r"/(?:work|root|home|Users)/|/tmp/tfm\w*_\w+")
    for path in sorted(COURSE_DIR.glob("*.ipynb")):
        for number, cell in enumerate(make_course.read(path)["cells"]):
            for output in cell.get("outputs", []):
                text = make_course._text(output.get("text", "")) + make_course._text(
                    output.get("data", {}).get("text/plain", ""))
                found = machine.search(text)
                assert found is None, f"{path.name} cell {number} prints {found.group(0)!r}"


def test_the_figure_pattern_names_machine_folders_and_leaves_figure_text_alone():
    """The pattern figures are checked against: the usual machine folders, and the folders make_course is given
    (the checkout, the data folder); ordinary titles, labels and TeX are not paths."""
    pattern = re.compile(make_course.figure_pattern(["/srv/repo", "/data/cache/"]))
    for text in ("loss of /srv/repo/runs/08_x", "/data/cache/multi30k test", "/home/ana/data", "/root/.cache",
                 "/tmp/tfm07_abc/run", "/work/main", "/Users/ana/x", "C:\\Users\\ana\\data"):
        assert pattern.search(text), text
    for text in ("d = 64", r"$\sqrt{d_k}$", "U: 64", "loss / token", "tokens/s", "en→de: 25,000-token batches",
                 "cross-attention, decoder layer 3 of 3", r"$\mathrm{PE}: \sin$", "multi30k test, 1000 sentences"):
        assert not pattern.search(text), text


def test_a_figure_naming_a_machine_folder_is_refused_before_its_copy_is_written(tmp_path):
    """make_course checks each figure's texts in the kernel as it is drawn (a title, a tick label shown with
    plt.show(), a legend): a copy whose figure names a machine folder is not written, and the error names the
    cell and the text; the same notebook with path-free texts gives a copy, with no trace of the check."""
    pytest.importorskip("nbclient")
    import nbformat

    def figure_notebook(title, tick, legend):
        made = notebook(("code", "import matplotlib.pyplot as plt\n%matplotlib inline"), ("markdown", "# 99"),
                        ("code", f"fig, ax = plt.subplots()\nax.plot([1, 2])\nax.set_title({title!r})"),
                        ("code", "fig, ax = plt.subplots()\nax.plot([1, 2])\n"
                                 f"ax.set_xticks([1], [{tick!r}])\nplt.show()"),
                        ("code", f"fig, ax = plt.subplots()\nax.plot([1, 2], label={legend!r})\nax.legend();"))
        for number, cell in enumerate(made["cells"]):
            cell["id"] = f"cell-{number}"
        return made

    source = tmp_path / "99_figures.ipynb"
    data = tmp_path / "data"
    data.mkdir()
    nbformat.write(nbformat.from_dict(figure_notebook("loss of /tmp/tfm07_x/run", "multi30k", f"{data}/multi30k")),
                   source)
    with pytest.raises(make_course.FigurePathError) as error:
        make_course.execute(source, tmp_path / "out", fast=True, data_dir=str(data))
    message = str(error.value)
    assert "2 figure text(s)" in message and "cell 2: " in message and "'loss of /tmp/tfm07_x/run'" in message
    assert f"cell 4: a figure's text names a machine folder: '{data}/multi30k'" in message
    assert not (tmp_path / "out" / source.name).exists()
    nbformat.write(nbformat.from_dict(figure_notebook("loss", "/home/ana/x", "multi30k")), source)
    with pytest.raises(make_course.FigurePathError, match="cell 3: .*'/home/ana/x'"):
        make_course.execute(source, tmp_path / "out", fast=True, data_dir=str(data))
    nbformat.write(nbformat.from_dict(figure_notebook("loss", "multi30k", "train")), source)
    target, _ = make_course.execute(source, tmp_path / "out", fast=True, data_dir=str(data))
    executed = make_course.read(target)
    assert [c["execution_count"] for c in executed["cells"] if c["cell_type"] == "code"] == [1, 2, 3, 4]
    assert "_tfm" not in json.dumps(executed) and len(executed["cells"]) == 5
    figures = [o for c in executed["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(figures) == 3 and executed["metadata"]["tfm_course"]["figures"] == {
        "dpi": 80, "scale": 2, "column": make_course.COLUMN_WIDTH}
    for figure in figures:  # drawn at 2x, shown at the 80-dpi width its metadata gives, stored with a palette
        width, height = png_size(figure)
        shown = figure["metadata"]["image/png"]
        assert width in (2 * shown["width"], 2 * shown["width"] + 1) and height // 2 == shown["height"]
        assert png_mode(figure) == "P"


def png_image(output):
    import base64
    import io

    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(make_course._text(output["data"]["image/png"]))))


def png_size(output):
    return png_image(output).size


def png_mode(output):
    return png_image(output).mode


def test_compact_figures_stores_palette_pngs_exactly_when_they_have_few_colours():
    """A figure of <= 256 colours comes back pixel for pixel; one of many colours (a smooth heatmap) within a
    small mean error; both smaller, metadata kept; text outputs untouched."""
    import base64
    import io

    import numpy as np
    from PIL import Image

    def png_output(pixels):
        buffer = io.BytesIO()
        Image.fromarray(pixels.astype(np.uint8), "RGB").save(buffer, format="PNG")
        return {"output_type": "display_data", "metadata": {"image/png": {"width": 50, "height": 40}},
                "data": {"image/png": base64.b64encode(buffer.getvalue()).decode(), "text/plain": "<Figure>"}}

    rng = np.random.default_rng(0)
    few = rng.choice(np.arange(200), size=(80, 100))  # 200 colours, noise: compresses badly as RGB
    few = np.stack([few, 255 - few, (few * 7) % 256], axis=-1)
    ramp = np.linspace(0, 1, 100)[None, :] * np.linspace(0.2, 1, 80)[:, None]
    many = np.stack([255 * ramp, 255 * ramp ** 2, 255 * (1 - ramp)], axis=-1)  # thousands of colours
    made = notebook(("code", "plot()"))
    made["cells"][0]["outputs"] = [png_output(few), png_output(many), {"output_type": "stream", "name": "stdout",
                                                                      "text": "done\n"}]
    before, after = make_course.compact_figures(made)
    outputs = made["cells"][0]["outputs"]
    assert after < before and outputs[2]["text"] == "done\n"
    assert np.array_equal(np.asarray(png_image(outputs[0]).convert("RGB")), few)
    error = np.abs(np.asarray(png_image(outputs[1]).convert("RGB"), float) - many.astype(np.uint8))
    assert png_size(outputs[1]) == (100, 80) and error.mean() < 1.0 and error.max() <= 16
    assert outputs[0]["metadata"] == {"image/png": {"width": 50, "height": 40}}


@pytest.mark.parametrize("path", COPIES, ids=[p.name for p in COPIES])
def test_copies_made_at_2x_show_each_figure_at_half_its_pixels(path):
    """A copy whose record says its figures were drawn at a scale (make_course since issue 40) has every PNG at
    that many times the width its output metadata shows it at."""
    executed = make_course.read(path)
    scale = executed["metadata"][make_course.METADATA_KEY].get("figures", {}).get("scale")
    if not scale:
        pytest.skip(f"{path.name} was made before figures were drawn at 2x")
    figures = [o for c in executed["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    wrong = [(index, png_size(o), o.get("metadata", {}).get("image/png")) for index, o in enumerate(figures)
             if png_size(o)[0] // scale != o.get("metadata", {}).get("image/png", {}).get("width")]
    assert figures and not wrong, wrong


def test_a_figure_wider_than_the_column_is_drawn_at_the_columns_width(monkeypatch):
    """`FIGURE_FIT` in the kernel: IPython's retina PNG of a figure wider than `COLUMN_WIDTH` at 80 dpi is drawn at
    the dpi that makes it the column's width (2x pixels, shown at <= the column); a narrower one is unchanged."""
    import matplotlib.backend_bases
    import matplotlib.pyplot as plt
    from IPython.core.pylabtools import retina_figure

    canvas = matplotlib.backend_bases.FigureCanvasBase
    monkeypatch.setattr(canvas, "print_figure", canvas.print_figure)  # restored after the test

    def drawn(inches):
        """(pixel width, the width the output shows it at) of a figure `inches` wide, as the course draws it."""
        figure, axes = plt.subplots(figsize=(inches, 2.5))
        axes.plot([1, 2, 3])
        axes.set_title("a title of ordinary size")
        png, metadata = retina_figure(figure, bbox_inches="tight", dpi=make_course.FIGURE_SCALE * 80)
        plt.close(figure)
        return png_image({"data": {"image/png": base64.b64encode(png).decode()}}).size[0], metadata["width"]

    sizes = (6, 10, 12, 16, 24)
    before = {inches: drawn(inches) for inches in sizes}
    exec(make_course.figure_fit(80), {})
    after = {inches: drawn(inches) for inches in sizes}
    column = make_course.COLUMN_WIDTH
    for inches in sizes:
        pixels, shown = after[inches]
        assert pixels in (2 * shown, 2 * shown + 1), (inches, after[inches])
        if before[inches][1] <= column:
            assert after[inches] == before[inches], inches  # fits already: drawn as before
        else:
            assert column - 3 <= shown <= column, (inches, before[inches], after[inches])
    assert before[6][1] < column < before[16][1]  # both kinds were tried


def test_a_figure_whose_layout_changes_with_the_dpi_still_fits_the_column(monkeypatch):
    """`FIGURE_FIT` measures what it drew: a figure with a part sized in pixels (here a note offset by 400 pixels;
    in notebook 09, a constrained layout with bar labels) is wider at the lowered dpi than estimated at the first
    one, so one estimate came out a few pixels wider than the column (09: 839 px); the fit draws, measures and
    shrinks again until the figure is at most the column's width."""
    import matplotlib.backend_bases
    import matplotlib.pyplot as plt
    from IPython.core.pylabtools import retina_figure

    canvas = matplotlib.backend_bases.FigureCanvasBase
    monkeypatch.setattr(canvas, "print_figure", canvas.print_figure)  # restored after the test
    exec(make_course.figure_fit(80), {})
    figure, axes = plt.subplots(figsize=(14, 2.5))
    axes.plot([1, 2, 3])
    axes.annotate("a note placed in pixels", (1, 0.5), xycoords="axes fraction", xytext=(400, 0),
                  textcoords="offset pixels")
    _, metadata = retina_figure(figure, bbox_inches="tight", dpi=make_course.FIGURE_SCALE * 80)
    plt.close(figure)
    assert 0.95 * make_course.COLUMN_WIDTH <= metadata["width"] <= make_course.COLUMN_WIDTH, metadata


@pytest.mark.parametrize("path", COPIES, ids=[p.name for p in COPIES])
def test_copies_made_for_the_column_show_no_figure_wider_than_it(path):
    """A copy whose record names the column its figures were drawn for (make_course since issue 50) shows every
    figure at most that wide, so the page never shrinks one (tests/test_site.py checks it in Chromium)."""
    executed = make_course.read(path)
    column = executed["metadata"][make_course.METADATA_KEY].get("figures", {}).get("column")
    if not column:
        pytest.skip(f"{path.name} was made before figures were drawn for the column (make course draws them so)")
    figures = [o for c in executed["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    wide = [(index, o["metadata"]["image/png"]["width"]) for index, o in enumerate(figures)
            if o.get("metadata", {}).get("image/png", {}).get("width", png_size(o)[0]) > column]
    assert not wide, wide


def test_merge_added_keeps_the_copys_outputs_and_finds_the_new_cells(source_and_copy):
    """Cells added to the source (in the middle and at the end) are found; the copy's code cells keep their
    outputs; the markdown is the source's; a changed or removed code cell is refused."""
    source_path, copy_path = source_and_copy
    new_cell = lambda text: {  # noqa: E731  (one line, for the cells added below)
        "cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}

    def add(nb):
        nb["cells"].insert(2, new_cell("print('figure')"))
        nb["cells"][3]["source"] = "Loss 1.23 in the full run (and a figure above)."
        nb["cells"] += [{"cell_type": "markdown", "metadata": {}, "source": "## Exercises"}, new_cell("print(6 * 7)")]

    rewrite(source_path, add)
    source, executed = make_course.read(source_path), make_course.read(copy_path)
    merged, added = make_course.merge_added(executed, source)
    assert added == [2, 6]
    assert [c["source"] for c in merged["cells"]] == [c["source"] for c in source["cells"]]
    assert [c.get("outputs") for c in merged["cells"] if c["cell_type"] == "code"] == [
        [{"output_type": "stream", "name": "stdout", "text": "4\n"}], [],
        [{"output_type": "stream", "name": "stdout", "text": "4\n"}], []]
    assert merged["metadata"]["tfm_course"] == executed["metadata"]["tfm_course"]
    rewrite(source_path, lambda nb: nb["cells"][4].update(source="print(2 + 3)"))
    with pytest.raises(ValueError, match="code cell 1 of the copy is no longer in the source"):
        make_course.merge_added(executed, make_course.read(source_path))


def test_run_added_executes_only_the_new_cells_in_a_fresh_kernel(source_and_copy, tmp_path):
    """The added cell runs (its output is the kernel's), the old outputs stay as they were (the old cells are
    not re-run: `print(2 + 2)` keeps its recorded '4'), counts follow the copy's, and the record says so; the
    copy then passes the check. A cell that needs the notebook's variables fails in the fresh kernel."""
    pytest.importorskip("nbclient")
    source_path, copy_path = source_and_copy
    rewrite(source_path, lambda nb: nb["cells"].append(
        {"cell_type": "code", "metadata": {}, "source": "print(6 * 7)", "outputs": [], "execution_count": None}))
    source = make_course.read(source_path)
    executed = make_course.read(copy_path)
    executed["cells"][3]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "recorded\n"}]
    merged, added = make_course.run_added(executed, source, str(tmp_path))
    assert added == [4]
    assert merged["cells"][3]["outputs"][0]["text"] == "recorded\n"
    assert merged["cells"][4]["execution_count"] == 3
    assert [o.get("text") for o in merged["cells"][4]["outputs"]] == ["42\n"]
    record = merged["metadata"]["tfm_course"]
    assert record["cells_added"][0]["cells"] == [4] and record["seconds"] == 12
    assert make_course.check_copy(merged, source) == []
    with pytest.raises(ValueError, match="nothing was added or changed"):
        make_course.run_added(merged, source, str(tmp_path))
    # A markdown cell added (no code): synced without a kernel, the outputs as they were.
    prose = json.loads(json.dumps(source))
    prose["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "## Exercises\n1. Why?"})
    synced, none = make_course.run_added(merged, prose, str(tmp_path))
    assert none == [] and synced["cells"][-1]["source"].startswith("## Exercises")
    assert synced["cells"][4]["outputs"] == merged["cells"][4]["outputs"]
    assert make_course.check_copy(synced, prose) == []
    rewrite(source_path, lambda nb: nb["cells"].append(
        {"cell_type": "code", "metadata": {}, "source": "print(FAST)", "outputs": [], "execution_count": None}))
    with pytest.raises(Exception, match="NameError"):
        make_course.run_added(merged, make_course.read(source_path), str(tmp_path))


SOURCES = sorted((ROOT / "notebooks").glob("[0-9]*.ipynb"))


def _free_names(code):
    """Names a cell reads but neither defines, imports nor gets from Python's builtins."""
    import ast
    import builtins

    tree = ast.parse(code)
    bound, read = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound


def _exercises(path):
    """The cells of a notebook's closing "## Exercises" section (from its heading to the end)."""
    cells = make_course.read(path)["cells"]
    starts = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
              and make_course._text(c["source"]).lstrip().startswith("## Exercises")]
    return cells[starts[-1]:] if starts else []


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_notebook_ends_with_exercises_whose_stubs_stand_alone(path):
    """Each notebook closes with an Exercises section of 2-5 numbered exercises (questions, an experiment and
    at least one checked coding exercise, issue 40); its code cells are self-contained (they run in a fresh
    kernel: `make_course --run-added`) and call a checker that exists."""
    section = _exercises(path)
    assert section, f"{path.name} has no '## Exercises' section"
    numbered = re.findall(r"^\s*(\d+)\. ", "".join(make_course._text(c["source"]) for c in section
                                                   if c["cell_type"] == "markdown"), flags=re.M)
    assert 2 <= len(numbered) <= 5, f"{path.name}: {len(numbered)} exercises"
    code_cells = [make_course._text(c["source"]) for c in section if c["cell_type"] == "code"]
    assert any(re.search(r"\bcheck_\w+\(", code) for code in code_cells), f"{path.name} has no checked coding exercise"
    checkers = {name for module in (ROOT / "tfm" / "exercises").glob("*.py")
                for name in re.findall(r"^def (check_\w+)", module.read_text(), flags=re.M)}
    for cell in section:
        if cell["cell_type"] != "code":
            continue
        code = make_course._text(cell["source"])
        assert not _free_names(code), f"{path.name}: an exercise cell reads {_free_names(code)} from the notebook"
        assert set(re.findall(r"\b(check_\w+)\(", code)) <= checkers


def test_the_course_has_at_least_eighteen_checked_coding_exercises_one_per_checker():
    """Every checker of tfm.exercises is called by an exercise cell of some notebook (>= 18 in all)."""
    checkers = {name for module in (ROOT / "tfm" / "exercises").glob("*.py")
                for name in re.findall(r"^def (check_\w+)", module.read_text(), flags=re.M)}
    used = {name for path in SOURCES for cell in _exercises(path) if cell["cell_type"] == "code"
            for name in re.findall(r"\b(check_\w+)\(", make_course._text(cell["source"]))}
    assert len(checkers) >= 18 and used == checkers, sorted(checkers - used)


def code_display(text):
    """A display_data output as IPython's `Code` leaves it in a copy (HTML with a highlight block, plain text)."""
    return {"output_type": "display_data", "metadata": {},
            "data": {"text/html": '<div class="highlight"><pre>...</pre></div>', "text/plain": text}}


def test_a_code_display_older_than_the_package_fails_and_refresh_renders_it_again(source_and_copy):
    """`show(obj)` displays the package's source; once `tfm/` changes the copy's display is stale: `check_copy`
    says so, and `--refresh-shown` renders exactly `inspect.getsource` again, leaving other outputs alone."""
    import inspect

    import tfm

    source_path, copy_path = source_and_copy
    current = inspect.getsource(tfm.layers.masks.padding_mask)
    old = current.replace("def padding_mask(", "def padding_mask_of_an_older_tfm(")
    for path in source_and_copy:
        rewrite(path, lambda nb: nb["cells"].append(
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": "import tfm\n\nshow(tfm.layers.masks.padding_mask)\nprint(1)"}))
    make_course.stamp(executed := make_course.read(copy_path), make_course.read(source_path), "99_test.ipynb",
                      "full", 1.0)
    executed["cells"][-1]["outputs"] = [code_display(old), {"output_type": "stream", "name": "stdout", "text": "1\n"}]
    problems = make_course.check_copy(executed, make_course.read(source_path))
    assert len(problems) == 1 and "older than tfm/" in problems[0] and "padding_mask_of_an_older_tfm" in problems[0]

    refreshed = make_course.shown_code.refresh(executed)
    assert refreshed == ["cell 4: tfm.layers.masks.padding_mask"]
    outputs = executed["cells"][-1]["outputs"]
    assert outputs[0]["data"]["text/plain"] == current.rstrip("\n") and "highlight" in outputs[0]["data"]["text/html"]
    assert outputs[1]["text"] == "1\n"
    assert make_course.check_copy(executed, make_course.read(source_path)) == []
    assert make_course.shown_code.refresh(executed) == []  # nothing left to refresh


def test_show_part_excerpts_from_its_first_marker_to_its_last_and_names_a_missing_one():
    """`--refresh-shown` renders `show_part(obj, first, last)` (notebook 08) as the source's lines from the first
    line holding `first` to the next holding `last`; a marker the source no longer has is named, not a bare
    StopIteration."""
    import inspect

    import tfm

    shown_code = make_course.shown_code
    function = tfm.layers.masks.padding_mask
    lines = inspect.getsource(function).splitlines()
    excerpt = shown_code.excerpt(function, ("def padding_mask(", "return"))
    start = next(i for i, line in enumerate(lines) if "def padding_mask(" in line)
    end = next(i for i in range(start, len(lines)) if "return" in lines[i])
    assert excerpt.splitlines() == lines[start : end + 1] and end > start
    assert shown_code.excerpt(function, None) == inspect.getsource(function)
    with pytest.raises(ValueError, match="no line with 'not in the source'"):
        shown_code.excerpt(function, ("not in the source", "return"))
    with pytest.raises(ValueError, match="'no such end' after 'def padding_mask\\('"):
        shown_code.excerpt(function, ("def padding_mask(", "no such end"))
    assert shown_code.display_calls('show(tfm.x)\nshow_part(tfm.y, "a", "b")\nprint(1)') == [
        ("tfm.x", None), ("tfm.y", ("a", "b"))]
