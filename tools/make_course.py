"""The course, executed: every notebook run in the full setting, copies with outputs in docs/course/.

    make course                                              # every notebook (hours on a 2-core CPU)
    .venv/bin/python tools/make_course.py 05 09              # the notebooks whose names start so
    .venv/bin/python tools/make_course.py --fast --output /tmp/course 05   # TFM_FAST=1: checks the machinery
    .venv/bin/python tools/make_course.py --check            # every copy in docs/course/ matches its source
    .venv/bin/python tools/make_course.py --sync-prose 01    # prose edited since the copy: no re-run needed
    .venv/bin/python tools/make_course.py --sync-code 04 --why "MultiHeadAttention.call_with_scores (issue 22)"
    .venv/bin/python tools/make_course.py --run-added 03     # only the cells added since the copy (exercises)

`notebooks/` stays output-free (diffs stay readable); `docs/course/NN_topic.ipynb` is the
same notebook with its outputs, for reading on GitHub without running anything. Each copy
records in its metadata (`tfm_course`) the SHA-256 of its source's cells (type and text,
outputs ignored), the mode it ran in and how long it took, so `tests/test_course.py` can
tell a copy that drifted from its source (a code cell differs) or went stale (the source
changed after the copy was made) without trusting file times, which git does not keep.

The kernel runs with `TFM_FAST` unset (the full setting) and `TFM_DATA_DIR` pointing at a
data cache: `--data-dir`, else `$TFM_DATA_DIR`, else a temporary folder holding a copy of
`../shared/data/` (Multi30k, NLTK's treebank sample) when that exists; nothing is copied
into the repository. Figures are shown at `--dpi` (default 80) and drawn at twice that (IPython's
"retina" PNG: the image has 2x the pixels and its output records the width to show it at), so they stay
sharp when a reader zooms; `compact_figures` then stores each as a 256-colour palette PNG (lossless for
a figure of at most 256 colours, a mean error well under 1/255 for the rest), which keeps a 2x figure
smaller than the 1x one it replaced (a few MB for the whole course). A figure wider than the course pages'
text column at 1280 px (`COLUMN_WIDTH`) is drawn at the dpi that makes it the column's width (`FIGURE_FIT`), so
the page shows it whole, with no click to enlarge it; the copy's record says so (`figures.column`).

No copy shows the machine that made it: text outputs have the checkout's and the data folder's paths
rewritten (`runs/08_...`, `$TFM_DATA_DIR/...`), and since a figure is an image by then, each figure's
texts (titles, labels, tick labels, legends, annotations) are checked in the kernel as it is drawn; a
notebook whose figure names a machine folder is refused (`FigurePathError`; the copy is not written).

Prose is not executed: when only markdown cells changed since a copy was made (the code cells and
the cell layout are the same), `--sync-prose` writes the source's markdown into the copy, keeps its
outputs and re-stamps it (`prose_synced` in the record), instead of hours of re-execution; it refuses,
saying so, a copy whose code changed. This is how prose is made to match the outputs it describes.

Code edited after a copy was made, in a way that does not change what the cells print (an API renamed,
an import moved to the name's real home), goes in the same way with `--sync-code --why "..."`: the
source's cells are written into the copy, its outputs kept, and the record says so in `code_edited`
(the date, the reason, and each changed code cell's removed and added lines), so the copy does not
claim that its outputs came from the code it now shows. Whether the outputs still hold is the editor's
judgement, stated in `--why`: anything that would change a number needs a run; a printed name that the
edit renamed (the output still showing the old one) is said in `--why`.

Cells added to a notebook after its copy was made that need none of the notebook's state (an
exercise's stub, a figure drawn from a config) go in with `--run-added`: every code cell of the copy
must still be in the source, unchanged and in order; the added ones run, in order, in one fresh kernel
in the full setting, and their outputs join the copy's (`cells_added` in the record). A cell that needs
the notebook's variables fails there: run the notebook again.

Notebooks that keep their runs (08, 12, 13) write them to `runs/NN_*` in the repository, and
`tfm.training.train` resumes a run folder it finds there; a copy must show a run made from
scratch, so before it executes notebook NN this script removes `runs/NN_*` (`--keep-runs`
keeps them: a copy then shows the resumed run).

After notebook 08 runs into docs/course/, its Multi30k run (`runs/08_multi30k_*`) feeds the site's attention
explorer: `tools/attention_explorer.py` writes docs/explorer/attention_data.js from it (`make explorer` alone).

This script does not import `tfm`: it only drives Jupyter. The one exception is `--refresh-shown`: a copy
displays package source with `show(obj)`, and when `tfm/` changes after the copy was made (a rename, a
docstring) those displays go stale (`--check` says so); `--refresh-shown NN` renders them again from the
package as it is, without executing the notebook (`tools/shown_code.py`; `shown_refreshed` in the record).
"""

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tempfile
import time

import shown_code

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
COURSE_DIR = ROOT / "docs" / "course"
SHARED_DATA = ROOT.parent / "shared" / "data"
METADATA_KEY = "tfm_course"
KERNEL_STARTUP_TIMEOUT = 180
# Run before the notebook's own cells (and removed from the copy): PNG figures drawn at twice the resolution they
# are shown at (`FIGURE_SCALE`): the "retina" format records half the drawn width as the width to show, and the
# drawing resolution is set here (a `dpi` in print_figure_kwargs takes precedence over retina's own doubling).
FIGURE_SCALE = 2
SETUP_CELL = ('%config InlineBackend.figure_formats = ["retina"]\n'
              '%config InlineBackend.print_figure_kwargs = {{"bbox_inches": "tight", "dpi": {dpi}}}')

# A machine's folders, as they may appear in a figure's texts: home folders, temporary and work folders, a
# Windows drive. `tidy` rewrites them in text outputs, but a figure is an image by the time it is in the copy,
# so its texts are checked where it is drawn (`FIGURE_CHECK`), and a copy whose figure names one is refused.
MACHINE_PATH = r"/home/|/root/|/work/|/Users/|/tmp/|/var/folders/|[A-Z]:\\Users\\"
# Also run first, in the same kernel: every figure the kernel renders (inline display, `plt.show()`, `savefig`)
# goes through `FigureCanvasBase.print_figure`; after it has drawn, every text of the figure (titles, suptitle,
# axis labels, tick labels, legends, annotations) is matched against `{pattern}`, and a match is recorded with
# the number of the code cell that drew it (1 = the notebook's first). `FIGURE_REPORT`, run last, prints them.
FIGURE_CHECK = """\
import re as _tfm_re
import matplotlib.backend_bases as _tfm_backend_bases
import matplotlib.text as _tfm_text
_tfm_machine_path = _tfm_re.compile({pattern!r})
_tfm_figure_paths = []
_tfm_cell = [0]  # the notebook's code cells run so far: 1 while its first runs
def _tfm_next_cell(*args):
    _tfm_cell[0] += 1
get_ipython().events.register("pre_run_cell", _tfm_next_cell)
_tfm_print_figure = _tfm_backend_bases.FigureCanvasBase.print_figure
def _tfm_checked_print_figure(self, *args, **kwargs):
    drawn = _tfm_print_figure(self, *args, **kwargs)
    for text in self.figure.findobj(_tfm_text.Text):
        shown = text.get_text() or ""
        if _tfm_machine_path.search(shown) and [_tfm_cell[0], shown] not in _tfm_figure_paths:
            _tfm_figure_paths.append([_tfm_cell[0], shown])
    return drawn
_tfm_backend_bases.FigureCanvasBase.print_figure = _tfm_checked_print_figure
"""
FIGURE_REPORT = 'import json as _tfm_json\nprint(_tfm_json.dumps(_tfm_figure_paths))'

# A figure is drawn for the column it is shown in: the course pages' text column is COLUMN_WIDTH CSS px wide in
# Chromium at 1280 px (docs/assets/tfm.css; tests/test_site.py measures it). A figure wider than that at `--dpi`
# (e.g. 14 inches at 80 dpi: 1120 px) is drawn at the dpi that makes it exactly as wide as the column, still at
# FIGURE_SCALE times the pixels: the page shows it whole at the size it was drawn for, with no click to enlarge,
# its text as large as the browser would have shrunk it to. Narrower figures are drawn as before.
COLUMN_WIDTH = 832
# Run second, before `FIGURE_CHECK` (which counts the cells run after it, and checks the texts of what this draws):
# only what the inline backend draws (`dpi` = the setup cell's, `bbox_inches="tight"`) is fitted; a notebook's own
# `savefig` is left alone.
FIGURE_FIT = """\
import io as _tfm_fit_io
import matplotlib as _tfm_matplotlib
import matplotlib.backend_bases as _tfm_fit_bases
_tfm_fit_inner = _tfm_fit_bases.FigureCanvasBase.print_figure
def _tfm_fitted_print_figure(self, *args, **kwargs):
    if kwargs.get("dpi") == {dpi} and kwargs.get("bbox_inches") == "tight":
        self.figure.draw_without_rendering()  # the layout the drawing will have
        pad = kwargs.get("pad_inches", _tfm_matplotlib.rcParams["savefig.pad_inches"])
        pad = pad if isinstance(pad, (int, float)) else 0.1
        shown = (self.figure.get_tightbbox().width + 2 * pad) * {dpi} / {scale}  # CSS px at --dpi
        if shown > {column}:
            kwargs["dpi"] = {dpi} * ({column} - 1) / shown  # the column's width, less one pixel of rounding
            for _ in range(3):  # a layout that changes with the dpi (constrained, bar labels): draw, measure, shrink
                probe = _tfm_fit_io.BytesIO()
                _tfm_fit_inner(self, probe, **{{**kwargs, "format": "png"}})
                drawn = int.from_bytes(probe.getvalue()[16:20], "big") / {scale}  # the PNG's width, in CSS px
                if drawn <= {column}:
                    break
                kwargs["dpi"] *= ({column} - 1) / drawn
    return _tfm_fit_inner(self, *args, **kwargs)
_tfm_fit_bases.FigureCanvasBase.print_figure = _tfm_fitted_print_figure
"""


def figure_pattern(paths=()):
    """The regular expression `FIGURE_CHECK` matches figure texts against: `MACHINE_PATH`, the folders in
    `paths` (the checkout, the data folder) and this user's home folder.

    Example: `re.compile(figure_pattern(["/srv/repo"])).search("loss of /srv/repo/runs/08_x")` matches.
    """
    folders = sorted({os.path.abspath(p).rstrip("/") for p in [*paths, os.path.expanduser("~")] if p}, key=len)
    return "|".join([MACHINE_PATH, *(re.escape(folder) for folder in folders if len(folder) > 1)])


def check_cells(paths, dpi):
    """The code cells run before a notebook's own (setup: figure format, then `FIGURE_FIT`, then `FIGURE_CHECK`)
    and after them (`FIGURE_REPORT`): `(first cells, last cell)` as nbformat cells."""
    import nbformat

    first = [nbformat.v4.new_code_cell(SETUP_CELL.format(dpi=FIGURE_SCALE * int(dpi))),
             nbformat.v4.new_code_cell(figure_fit(dpi)),
             nbformat.v4.new_code_cell(FIGURE_CHECK.format(pattern=figure_pattern(paths)))]
    return first, nbformat.v4.new_code_cell(FIGURE_REPORT)


def figure_fit(dpi):
    """`FIGURE_FIT` for figures shown at `dpi`: the kernel code that draws a figure wider than `COLUMN_WIDTH` at
    the column's width (its record: `figures.column` in the copy's metadata).

    Example: `exec(figure_fit(80))` in a process with matplotlib, then IPython's retina PNG of a 16-inch figure
    is 2 x 831 pixels wide and shown at 831 px (`tests/test_course.py` runs this).
    """
    return FIGURE_FIT.format(dpi=FIGURE_SCALE * int(dpi), scale=FIGURE_SCALE, column=COLUMN_WIDTH)


def figure_paths(report_cell, code_indices):
    """What `FIGURE_REPORT` printed, as sentences naming the cell: `code_indices` lists the indices (in the
    copy) of the code cells that ran, in order. Empty when no figure text named a machine folder."""
    text = "".join(_text(output.get("text", "")) for output in report_cell.get("outputs", [])
                   if output.get("name") == "stdout")
    found = json.loads(text.strip().splitlines()[-1]) if text.strip() else []
    where = lambda n: (  # noqa: E731  (one line, read in the list below)
        code_indices[n - 1] if 0 < n <= len(code_indices) else "?")
    return [f"cell {where(number)}: a figure's text names a machine folder: {shown!r}" for number, shown in found]


class FigurePathError(ValueError):
    """A figure of the copy shows a machine's folder in its texts (the copy is not written)."""


def _text(source):
    """A cell's source as one string (nbformat files may store it as a list of lines)."""
    return "".join(source) if isinstance(source, list) else source


def source_digest(notebook):
    """SHA-256 of a notebook's cells, type and text only: outputs, counts and metadata do not count."""
    cells = [[cell["cell_type"], _text(cell["source"])] for cell in notebook["cells"]]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode("utf-8")).hexdigest()


def code_cells(notebook):
    return [_text(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def compact_figures(notebook, colors=256):
    """Stores every PNG figure of `notebook` (in place) as a palette PNG of at most `colors` colours, when that
    is smaller: exact for a figure drawn in that many colours or fewer (most line plots), median-cut
    quantized (no dithering) otherwise. Pixel size and output metadata (the width to show it at) are kept.

    Example: a 1024x768 plot of 4 lines goes from ~95 kB to ~30 kB.

    Returns:
        `(bytes before, bytes after)` over the figures.
    """
    import base64
    import io

    from PIL import Image

    before = after = 0
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            encoded = output.get("data", {}).get("image/png")
            if not encoded:
                continue
            raw = base64.b64decode(_text(encoded))
            image = Image.open(io.BytesIO(raw)).convert("RGB")
            exact = image.getcolors(colors) is not None
            palette = image.quantize(colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
            if exact and palette.convert("RGB").tobytes() != image.tobytes():  # median cut merged two colours
                palette = image.convert("P", palette=Image.Palette.ADAPTIVE, colors=colors)
            buffer = io.BytesIO()
            palette.save(buffer, format="PNG", optimize=True)
            smaller = buffer.getvalue() if len(buffer.getvalue()) < len(raw) else raw
            output["data"]["image/png"] = base64.b64encode(smaller).decode("ascii") + "\n"
            before, after = before + len(raw), after + len(smaller)
    return before, after


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def stamp(executed, source, source_name, mode, seconds):
    """Records in `executed`'s metadata which source it was made from (its digest), how and when."""
    executed.setdefault("metadata", {})[METADATA_KEY] = {
        "source": f"notebooks/{source_name}",
        "source_sha256": source_digest(source),
        "mode": mode,
        "seconds": round(float(seconds)),
        "executed": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }
    return executed


# What a reader must not see in an executed copy: library warnings (retracing, deprecation, Keras' and Python's
# own), TensorFlow's INFO lines and a machine's folders. tfm's own warnings ("WARNING:tfm...") are the product
# speaking (e.g. the truncation notebook 12 shows on purpose) and are allowed, once per cell.
NOISE = re.compile(r"WARNING:tensorflow|INFO:tensorflow|WARNING:absl|\w*Warning: |warnings\.warn\(|retracing|"
                   r"site-packages|/home/|/root/|/work/|/Users/|/tmp/|[A-Z]:\\")
LOG_LINE = re.compile(r"^(WARNING|INFO|ERROR):")


def output_noise(notebook):
    """The lines of a notebook's text outputs a reader should not see (`NOISE`), and every log line printed
    twice in one cell: a list of `"cell N: line"` strings, empty for a clean copy."""
    found = []
    for index, cell in enumerate(notebook["cells"]):
        seen = set()
        for output in cell.get("outputs", []):
            text = _text(output.get("text", "")) + _text(output.get("data", {}).get("text/plain", ""))
            for line in text.splitlines():
                if NOISE.search(line):
                    found.append(f"cell {index}: {line[:160]}")
                elif LOG_LINE.match(line):
                    if line in seen:
                        found.append(f"cell {index}: printed twice: {line[:160]}")
                    seen.add(line)
    return found


def check_copy(executed, source, require_full=True):
    """What is wrong with an executed copy of `source`: a list of sentences, empty when nothing is.

    Args:
        executed, source: notebooks as dicts (`json.load` of the .ipynb files).
        require_full: bool. A copy made in fast mode (`--fast`) is a problem.
    """
    problems = []
    got, want = code_cells(executed), code_cells(source)
    if len(got) != len(want):
        problems.append(f"{len(got)} code cells in the copy, {len(want)} in the source")
    for index, (a, b) in enumerate(zip(got, want)):
        if a != b:
            problems.append(f"code cell {index} differs from the source's")
    record = executed.get("metadata", {}).get(METADATA_KEY)
    if not record:
        problems.append(f"no '{METADATA_KEY}' record in the copy's metadata: not made by tools/make_course.py")
        return problems
    if record.get("source_sha256") != source_digest(source):
        problems.append("older than its source: the source's cells changed after the copy was made "
                        "(run `make course` for this notebook again)")
    if require_full and record.get("mode") != "full":
        problems.append(f"made in {record.get('mode')!r} mode, not the full setting")
    errors = [output.get("ename") for cell in executed["cells"] if cell["cell_type"] == "code"
              for output in cell.get("outputs", []) if output.get("output_type") == "error"]
    if errors:
        problems.append(f"error outputs: {errors}")
    if not any(cell.get("outputs") for cell in executed["cells"] if cell["cell_type"] == "code"):
        problems.append("no outputs: the copy was not executed")
    old_code = shown_code.stale(executed)
    if old_code:
        problems.append(f"{len(old_code)} code display(s) older than tfm/ (`--refresh-shown`), the first: "
                        f"{old_code[0]}")
    noise = output_noise(executed)
    if noise:
        problems.append(f"{len(noise)} noisy output line(s) (warnings, INFO lines, machine paths, repeats), "
                        f"the first: {noise[0]}")
    return problems


def sync_prose(executed, source):
    """`executed` with `source`'s markdown cells, its outputs kept and its record re-stamped, or raises
    ValueError saying why it cannot be (a code cell or the cell layout changed: run the notebook again).

    Returns:
        `(notebook, changed)`: the synced copy (a new dict) and how many markdown cells changed.
    """
    layout = lambda nb: [cell["cell_type"] for cell in nb["cells"]]  # noqa: E731  (two uses below)
    if layout(executed) != layout(source):
        raise ValueError("cells were added, removed or changed type since the copy was made: run it again")
    if code_cells(executed) != code_cells(source):
        changed = [i for i, (a, b) in enumerate(zip(code_cells(executed), code_cells(source))) if a != b]
        raise ValueError(f"code cells {changed} changed since the copy was made: run it again")
    record = executed.get("metadata", {}).get(METADATA_KEY)
    if not record:
        raise ValueError(f"no '{METADATA_KEY}' record: not made by tools/make_course.py")
    synced = json.loads(json.dumps(executed))
    changed = 0
    for cell, new in zip(synced["cells"], source["cells"]):
        if cell["cell_type"] == "markdown" and _text(cell["source"]) != _text(new["source"]):
            cell["source"] = new["source"]
            changed += 1
    if changed:
        synced["metadata"][METADATA_KEY] = {
            **record, "source_sha256": source_digest(source),
            "prose_synced": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
    return synced, changed


def _line_changes(old, new):
    """`{"old": [...], "new": [...]}`: the lines of `old` that `new` replaced, and their replacements."""
    import difflib

    a, b = old.splitlines(), new.splitlines()
    removed, added = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += a[i1:i2]
            added += b[j1:j2]
    return {"old": removed, "new": added}


def sync_code(executed, source, why):
    """`executed` with `source`'s cells, code included, its outputs kept: for code edited after the copy was
    made that prints the same (an API renamed, an import moved). Raises ValueError when cells were added,
    removed or changed type (run the notebook again), or when nothing in the code changed (`--sync-prose`).

    The record gets a `code_edited` entry (`date`, `why`, and `cells`: code-cell index -> the lines removed
    and added), appended to those of earlier edits, and the source's digest.

    Returns:
        `(notebook, changed)`: the synced copy (a new dict) and the indices of the code cells that changed.
    """
    if not why or not why.strip():
        raise ValueError("say why the outputs still hold for the edited code (--why)")
    layout = lambda nb: [cell["cell_type"] for cell in nb["cells"]]  # noqa: E731  (two uses below)
    if layout(executed) != layout(source):
        raise ValueError("cells were added, removed or changed type since the copy was made: run it again")
    record = executed.get("metadata", {}).get(METADATA_KEY)
    if not record:
        raise ValueError(f"no '{METADATA_KEY}' record: not made by tools/make_course.py")
    old, new = code_cells(executed), code_cells(source)
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    if not changed:
        raise ValueError("no code cell changed: use --sync-prose")
    synced = json.loads(json.dumps(executed))
    for cell, fresh in zip(synced["cells"], source["cells"]):
        cell["source"] = fresh["source"]
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    edit = {"date": today, "why": why.strip(), "cells": {str(i): _line_changes(old[i], new[i]) for i in changed}}
    synced["metadata"][METADATA_KEY] = {**record, "source_sha256": source_digest(source),
                                        "code_edited": [*record.get("code_edited", []), edit]}
    return synced, changed


def merge_added(executed, source):
    """The copy laid out as `source`, for cells added to the source after the copy was made: every code cell
    of the copy must still be in the source, unchanged and in order (else ValueError: run it again).

    Returns:
        `(notebook, added)`: a new dict with the source's cells (markdown as the source has it), the copy's
        outputs and counts on the code cells it had, and `added`, the indices (in the source's cells) of
        the code cells the copy lacks, still without outputs.
    """
    record = executed.get("metadata", {}).get(METADATA_KEY)
    if not record:
        raise ValueError(f"no '{METADATA_KEY}' record: not made by tools/make_course.py")
    old = [cell for cell in executed["cells"] if cell["cell_type"] == "code"]
    merged = json.loads(json.dumps(source))
    added, position = [], 0
    for index, cell in enumerate(merged["cells"]):
        if cell["cell_type"] != "code":
            continue
        if position < len(old) and _text(old[position]["source"]) == _text(cell["source"]):
            cell["outputs"] = old[position].get("outputs", [])
            cell["execution_count"] = old[position].get("execution_count")
            position += 1
        else:
            cell["outputs"], cell["execution_count"] = [], None
            added.append(index)
    if position < len(old):
        raise ValueError(f"code cell {position} of the copy is no longer in the source (changed or removed): "
                         "run it again")
    merged["metadata"] = json.loads(json.dumps(executed["metadata"]))
    return merged, added


def run_added(executed, source, data_dir, timeout=600, dpi=80):
    """`executed` with the cells added to `source` since it was made, those cells executed in one fresh kernel
    (full setting), in order, and nothing else re-run: for self-contained additions (exercise stubs, a
    figure drawn from a config) that need none of the notebook's state. A cell that fails (e.g. it used a
    variable of the notebook) stops it: run the notebook again instead.

    The record gets a `cells_added` entry (`date`, the added cells' indices) and the source's digest;
    the added cells' counts follow the copy's last count.

    Returns:
        `(notebook, added)`: the new copy (a dict) and the indices of the cells that were executed.
    """
    import nbclient
    import nbformat

    merged, added = merge_added(executed, source)
    record = merged["metadata"][METADATA_KEY]
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if not added:  # markdown cells added or edited only: nothing to run
        if record.get("source_sha256") == source_digest(source):
            raise ValueError("nothing was added or changed since the copy was made")
        merged["metadata"][METADATA_KEY] = {**record, "source_sha256": source_digest(source), "prose_synced": today}
        return merged, added
    runner = nbformat.v4.new_notebook()
    first, report = check_cells([ROOT, data_dir], dpi)
    runner.cells = [*first, *(nbformat.v4.new_code_cell(_text(merged["cells"][i]["source"])) for i in added), report]
    client = nbclient.NotebookClient(runner, kernel_name="python3", timeout=int(timeout),
                                     startup_timeout=KERNEL_STARTUP_TIMEOUT,
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    client.execute(env=kernel_env(False, data_dir))
    tidy(runner, {str(ROOT): "", str(data_dir): "$TFM_DATA_DIR"})
    compact_figures(runner)
    ran_cells = runner.cells[len(first):-1]
    problems = figure_paths(runner.cells[-1], added)
    if problems:
        raise FigurePathError(f"{len(problems)} figure text(s) name a machine folder (build titles and labels from "
                              "path-free names): " + "; ".join(problems))
    last = max([cell.get("execution_count") or 0 for cell in merged["cells"] if cell["cell_type"] == "code"])
    for count, (index, ran) in enumerate(zip(added, ran_cells), start=last + 1):
        cell = merged["cells"][index]
        cell["outputs"] = json.loads(json.dumps(ran.outputs))
        for output in cell["outputs"]:
            if "execution_count" in output:
                output["execution_count"] = count
        cell["execution_count"] = count
    merged["metadata"][METADATA_KEY] = {**record, "source_sha256": source_digest(source),
                                        "cells_added": [*record.get("cells_added", []),
                                                        {"date": today, "cells": added}]}
    return merged, added


def data_cache(data_dir=None):
    """`(TFM_DATA_DIR for the kernels, temporary folder to remove or None)`."""
    if data_dir or os.environ.get("TFM_DATA_DIR"):
        return os.path.abspath(data_dir or os.environ["TFM_DATA_DIR"]), None
    tmp = tempfile.mkdtemp(prefix="tfm_course_data_")
    if (SHARED_DATA / "multi30k").is_dir():
        shutil.copytree(SHARED_DATA / "multi30k", os.path.join(tmp, "multi30k"))
    treebank = SHARED_DATA / "nltk_data" / "corpora" / "treebank.zip"
    if treebank.is_file():
        os.makedirs(os.path.join(tmp, "nltk_data", "corpora"))
        shutil.copy(treebank, os.path.join(tmp, "nltk_data", "corpora", "treebank.zip"))
    return tmp, tmp


def kernel_env(fast, data_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("TFM_FAST", "TF_CONFIG")}
    if fast:
        env["TFM_FAST"] = "1"
    env["TFM_DATA_DIR"] = data_dir
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.setdefault("KERAS_BACKEND", "tensorflow")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])  # this venv's kernel
    return env


def execute(path, output_dir, fast=False, data_dir=None, timeout=4 * 3600, dpi=80):
    """Runs one notebook top to bottom and writes its copy, outputs and record included, to `output_dir`.

    Returns:
        `(copy path, seconds)`. Raises nbclient's error when a cell fails (the partial copy
        is written to `output_dir/NAME.failed.ipynb` for reading).
    """
    import nbclient
    import nbformat

    source = read(path)
    notebook = nbformat.read(path, as_version=4)
    first, report = check_cells([ROOT, data_dir], dpi)
    notebook.cells[:0] = first
    notebook.cells.append(report)
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=int(timeout),
                                     startup_timeout=KERNEL_STARTUP_TIMEOUT,
                                     resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    try:
        client.execute(env=kernel_env(fast, data_dir))
    except Exception:
        del notebook.cells[: len(first)]
        notebook.cells.pop()
        nbformat.write(notebook, output_dir / f"{path.stem}.failed.ipynb")
        raise
    seconds = time.monotonic() - start
    del notebook.cells[: len(first)]
    report = notebook.cells.pop()
    for cell in notebook.cells:  # counts from 1, as if the setup cells had not run
        if cell.cell_type == "code" and cell.get("execution_count"):
            cell.execution_count -= len(first)
            for output in cell.get("outputs", []):
                if "execution_count" in output and output["execution_count"]:
                    output["execution_count"] -= len(first)
    tidy(notebook, {str(ROOT): "", str(data_dir): "$TFM_DATA_DIR"} if data_dir else {str(ROOT): ""})
    compact_figures(notebook)
    problems = figure_paths(report, [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"])
    if problems:
        nbformat.write(notebook, output_dir / f"{path.stem}.failed.ipynb")
        raise FigurePathError(f"{path.name}: not written, {len(problems)} figure text(s) name a machine folder "
                              "(build titles and labels from path-free names): " + "; ".join(problems))
    stamp(notebook, source, path.name, "fast" if fast else "full", seconds)
    notebook.metadata[METADATA_KEY]["figures"] = {"dpi": int(dpi), "scale": FIGURE_SCALE, "column": COLUMN_WIDTH}
    target = output_dir / path.name
    nbformat.write(notebook, target)
    return target, seconds


# TensorFlow's C++ start-up lines reach the kernel's stderr before TF_CPP_MIN_LOG_LEVEL is read
# (absl, oneDNN, CUDA probes), as do SentencePiece's normalizer notice and Jupyter's transport
# notice: noise for a reader, dropped from the copies.
LOG_NOISE = ("WARNING: All log messages before absl::InitializeLog()", "I0000 ", "W0000 ", "E0000 ",
             "[IPKernelApp] WARNING | Kernel is running over TCP", "normalizer.cc(51) LOG(INFO) precompiled_charsmap")


def scrub_paths(text, paths):
    """`text` with this machine's folders written as a reader's: `paths` maps an absolute folder to what
    a reader sees instead (the checkout -> nothing, so `runs/08_...`; the data folder -> `$TFM_DATA_DIR`)."""
    for folder, shown in sorted(paths.items(), key=lambda item: -len(item[0])):  # the longest first
        text = text.replace(folder.rstrip("/") + "/", shown + "/" if shown else "").replace(folder.rstrip("/"),
                                                                                              shown or ".")
    # A notebook's own temporary folder (tempfile.mkdtemp(prefix="tfmNN_")): its random part means nothing.
    return re.sub(r"/tmp/(tfm\d\d)_\w+", r"$TMPDIR/\1", text)


def tidy(notebook, paths=None):
    """Drops TensorFlow's start-up log lines from the stderr outputs and writes the machine's own folders
    as `scrub_paths` says in every text output (in place; code cells untouched)."""
    paths = paths or {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = scrub_paths(_text(output["text"]), paths)
            if "text/plain" in output.get("data", {}):
                output["data"]["text/plain"] = scrub_paths(_text(output["data"]["text/plain"]), paths)
        outputs = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                lines = [line for line in _text(output["text"]).splitlines(keepends=True)
                         if not line.startswith(LOG_NOISE)]
                if not "".join(lines).strip():
                    continue
                output["text"] = "".join(lines)
            outputs.append(output)
        if cell.get("cell_type") == "code":
            cell["outputs"] = outputs
    return notebook


def clear_runs(path, runs_dir=None):
    """Removes the run folders notebook `path` left in `runs/` (`runs/NN_*` for notebook NN_...): list of
    the removed paths."""
    runs_dir = pathlib.Path(runs_dir or ROOT / "runs")
    number = path.name.split("_")[0]
    removed = sorted(p for p in runs_dir.glob(f"{number}_*") if p.is_dir()) if runs_dir.is_dir() else []
    for folder in removed:
        shutil.rmtree(folder)
    return removed


EXPLORER_RUNS = "08_multi30k_*"  # notebook 08's run on Multi30k: the attention explorer's model (docs/explorer.md)


def write_explorer(data_dir, runs_dir=None):
    """The attention explorer's data (docs/explorer/attention_data.js, by tools/attention_explorer.py in its own
    process) from notebook 08's Multi30k run, when `runs/08_multi30k_*` exists (fast mode trains on the numbers
    task: no explorer). Returns the run folder used, or None; a failure raises `subprocess.CalledProcessError`."""
    import subprocess

    runs_dir = pathlib.Path(runs_dir or ROOT / "runs")
    found = sorted(p for p in runs_dir.glob(EXPLORER_RUNS) if p.is_dir()) if runs_dir.is_dir() else []
    if not found:
        return None
    subprocess.run([sys.executable, str(ROOT / "tools" / "attention_explorer.py"), str(found[-1]),
                    "--data-dir", str(data_dir)], cwd=ROOT, check=True)
    return found[-1]


def select(prefixes):
    notebooks = sorted(NOTEBOOK_DIR.glob("[0-9]*.ipynb"))
    if not prefixes:
        return notebooks
    chosen = [p for p in notebooks if any(p.name.startswith(prefix) for prefix in prefixes)]
    unknown = [prefix for prefix in prefixes if not any(p.name.startswith(prefix) for p in notebooks)]
    if unknown:
        raise SystemExit(f"no notebook in {NOTEBOOK_DIR} starts with {unknown}")
    return chosen


def check_all(course_dir=COURSE_DIR):
    """Problems of every copy in `course_dir`, as `{copy name: [problems]}` (only copies that have some)."""
    found = {}
    for copy in sorted(pathlib.Path(course_dir).glob("*.ipynb")):
        source = NOTEBOOK_DIR / copy.name
        if not source.is_file():
            found[copy.name] = [f"no source notebook {source.relative_to(ROOT)}"]
            continue
        problems = check_copy(read(copy), read(source))
        if problems:
            found[copy.name] = problems
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="name prefixes (e.g. 05 09_scaling); default: all")
    parser.add_argument("--output", default=str(COURSE_DIR), help="folder for the copies (default docs/course)")
    parser.add_argument("--fast", action="store_true", help="TFM_FAST=1 (checks the machinery; not for docs/)")
    parser.add_argument("--data-dir", help="TFM_DATA_DIR for the kernels (default: $TFM_DATA_DIR, else a "
                                           "temporary copy of ../shared/data)")
    parser.add_argument("--timeout", type=int, default=4 * 3600, help="seconds per cell (default 4 h)")
    parser.add_argument("--dpi", type=int, default=80,
                        help=f"figures' resolution as shown (default 80); drawn at {FIGURE_SCALE}x that")
    parser.add_argument("--check", action="store_true", help="only check the copies in --output")
    parser.add_argument("--sync-prose", action="store_true",
                        help="copy the sources' markdown into the copies in --output whose code is unchanged "
                             "(no execution); refuse those whose code changed")
    parser.add_argument("--sync-code", action="store_true",
                        help="copy the sources' cells into the copies in --output whose code was edited in a way "
                             "that prints the same (outputs kept; the record lists the edit and --why)")
    parser.add_argument("--run-added", action="store_true",
                        help="execute only the code cells added to the sources since their copies in --output were "
                             "made, in one fresh kernel each (self-contained cells: exercises, figures); the "
                             "copies' other outputs are kept and their markdown updated")
    parser.add_argument("--refresh-shown", action="store_true",
                        help="render the package source the copies in --output display (`show(obj)`) again from "
                             "tfm/ as it is now, where it changed since the copy was made (no execution)")
    parser.add_argument("--why", help="with --sync-code: why the copy's outputs still hold for the edited code")
    parser.add_argument("--keep-runs", action="store_true",
                        help="keep runs/NN_* (default: remove them first, so each notebook trains from scratch)")
    args = parser.parse_args(argv)
    if args.check:
        found = check_all(args.output)
        for name, problems in found.items():
            print(f"{name}: " + "; ".join(problems))
        print("every copy matches its source" if not found else f"{len(found)} copies need `make course`")
        return 1 if found else 0
    if args.sync_prose:
        import nbformat

        refused = []
        for path in select(args.notebooks):
            target = pathlib.Path(args.output) / path.name
            if not target.is_file():
                continue
            try:
                synced, changed = sync_prose(read(target), read(path))
            except ValueError as error:
                refused.append(path.name)
                print(f"{path.name}: not synced: {error}")
                continue
            if changed:
                nbformat.write(nbformat.from_dict(synced), target)
            print(f"{path.name}: {changed} markdown cell(s) synced" if changed else f"{path.name}: prose up to date")
        return 1 if refused else 0
    if args.sync_code:
        import nbformat

        if not args.notebooks:
            parser.error("--sync-code takes the notebooks to sync by name, e.g. --sync-code 04 --why '...'")
        refused = []
        for path in select(args.notebooks):
            target = pathlib.Path(args.output) / path.name
            try:
                synced, changed = sync_code(read(target), read(path), args.why)
            except (ValueError, FileNotFoundError) as error:
                refused.append(path.name)
                print(f"{path.name}: not synced: {error}")
                continue
            nbformat.write(nbformat.from_dict(synced), target)
            print(f"{path.name}: code cells {changed} synced, outputs kept")
        return 1 if refused else 0
    if args.refresh_shown:
        import nbformat

        refused = []
        for path in select(args.notebooks):
            target = pathlib.Path(args.output) / path.name
            executed = read(target)
            try:
                refreshed = shown_code.refresh(executed)
            except ValueError as error:
                refused.append(path.name)
                print(f"{path.name}: not refreshed: {error}")
                continue
            if refreshed:
                executed["metadata"][METADATA_KEY]["shown_refreshed"] = {
                    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "cells": refreshed}
                nbformat.write(nbformat.from_dict(executed), target)
            print(f"{path.name}: " + (f"refreshed {', '.join(refreshed)}" if refreshed else "displays up to date"))
        return 1 if refused else 0
    if args.run_added:
        import nbformat

        data_dir, tmp = data_cache(args.data_dir)
        refused = []
        try:
            for path in select(args.notebooks):
                target = pathlib.Path(args.output) / path.name
                try:
                    merged, added = run_added(read(target), read(path), data_dir, args.timeout, args.dpi)
                except Exception as error:  # a refusal or a failing cell: report, go on
                    refused.append(path.name)
                    print(f"{path.name}: not updated: {str(error)[-1500:]}", flush=True)
                    continue
                nbformat.write(nbformat.from_dict(merged), target)
                print(f"{path.name}: " + (f"added cells {added} executed, other outputs kept" if added
                                          else "markdown synced (no code cell added)"), flush=True)
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        return 1 if refused else 0
    if args.fast and pathlib.Path(args.output).resolve() == COURSE_DIR.resolve():
        raise SystemExit("--fast copies do not belong in docs/course/; give --output another folder")
    data_dir, tmp = data_cache(args.data_dir)
    print(f"TFM_DATA_DIR={data_dir} ({'fast' if args.fast else 'full'} setting)", flush=True)
    failed = []
    try:
        for path in select(args.notebooks):
            print(f"{path.name} ...", flush=True)
            if not (args.fast or args.keep_runs):
                for folder in clear_runs(path):
                    print(f"  removed {folder.relative_to(ROOT)} (a run an earlier execution left)", flush=True)
            try:
                target, seconds = execute(path, args.output, args.fast, data_dir, args.timeout, args.dpi)
            except Exception as error:  # report, and go on with the next notebook
                failed.append(path.name)
                print(f"{path.name} FAILED: {str(error)[-2000:]}", flush=True)
                continue
            print(f"{path.name}: {seconds / 60:.1f} min, {target.stat().st_size / 1e6:.2f} MB -> {target}", flush=True)
            if path.name.startswith("08_") and pathlib.Path(args.output).resolve() == COURSE_DIR.resolve():
                try:
                    run = write_explorer(data_dir)
                except Exception as error:  # report, and go on with the next notebook
                    failed.append("the attention explorer's data")
                    print(f"attention explorer FAILED: {str(error)[-2000:]}", flush=True)
                else:
                    print(f"attention explorer: docs/explorer/attention_data.js from {run.relative_to(ROOT)}"
                          if run else "attention explorer: no runs/08_multi30k_* (data left as it was)", flush=True)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        print(f"failed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
