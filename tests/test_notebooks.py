"""The course notebooks: committed without outputs, listed in the index, and run top to bottom.

Every `notebooks/*.ipynb` is executed in a fresh `python3` kernel (the interpreter running
pytest, so the project's `.venv`) with `TFM_FAST=1`, which each notebook reads to pick its
CI-sized setting. A notebook gets `NOTEBOOK_TIMEOUT` seconds in all, not per cell. The
executed copy is written under pytest's tmp dir, and its path is printed on failure.

    TFM_FAST=1 .venv/bin/python -m pytest tests/test_notebooks.py -n 2 --dist loadfile
    .venv/bin/python -m pytest tests/test_notebooks.py -k 05_positional   # one notebook
"""

import os
import pathlib
import sys
import time

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
NOTEBOOK_TIMEOUT = int(os.environ.get("TFM_NOTEBOOK_TIMEOUT", "300"))  # seconds per notebook
KERNEL_STARTUP_TIMEOUT = 120  # two busy cores can make a kernel slow to answer


def _ids(paths):
    return [p.name for p in paths]


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks found in {NOTEBOOK_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_is_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, cell in enumerate(nb.cells)
             if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, (f"{path.name}: code cells {dirty} carry outputs or execution counts; "
                       "clear them with `make clean-notebooks` before committing")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_has_fast_switch(path):
    """CI relies on every notebook reading TFM_FAST."""
    source = "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    assert "TFM_FAST" in source, f"{path.name} never reads TFM_FAST, so CI cannot shorten it"


def test_index_lists_every_notebook():
    index = (NOTEBOOK_DIR / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in NOTEBOOKS if p.name not in index]
    assert not missing, f"notebooks/README.md does not list {missing}"


def _kernel_env():
    env = dict(os.environ)
    env["TFM_FAST"] = "1"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.setdefault("KERAS_BACKEND", "tensorflow")
    # The kernel imports the checkout's `tfm` even when the package is not pip-installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # Python's own bin folder first: the `python3` kernel then runs this interpreter (the venv's).
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    return env


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids(NOTEBOOKS))
def test_notebook_runs(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    deadline = time.monotonic() + NOTEBOOK_TIMEOUT

    def remaining(cell):  # nbclient asks before each cell: what is left of the notebook's budget
        return max(1, int(deadline - time.monotonic()))

    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=NOTEBOOK_TIMEOUT,
        timeout_func=remaining,
        startup_timeout=KERNEL_STARTUP_TIMEOUT,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}},  # notebooks run from notebooks/
    )
    executed = tmp_path / path.name
    start = time.monotonic()
    try:
        client.execute(env=_kernel_env())
    except (nbclient.exceptions.CellExecutionError, nbclient.exceptions.CellTimeoutError) as error:
        pytest.fail(f"{path.name} failed after {time.monotonic() - start:.0f} s (executed copy: {executed}):\n"
                    f"{str(error)[-3000:]}", pytrace=False)
    finally:
        nbformat.write(nb, executed)
    elapsed = time.monotonic() - start
    print(f"{path.name}: {elapsed:.0f} s in fast mode (executed copy: {executed})")
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, f"{path.name}: error outputs {[e.get('ename') for e in errors]}"
