"""A notebook's run beside its published copy's (`tfm.exercises.course_runs`): the summary line printed by one run is
the one the next run reads back, and copies that cannot hold it (missing, damaged, older) say so instead of failing.

Moved from tests/runs/test_published.py (the helper left the run-folder package). `course_runs` itself starts no
TensorFlow.
"""

import json
import sys

import pytest

from tfm.exercises.course_runs import (
    SUMMARY_PREFIX,
    format_beside,
    machine_description,
    print_beside_published,
    published_summary,
)

CELL = "nb08-yours"


def write_copy(path, outputs, cell_id=CELL, executed="2026-11-27"):
    """An executed notebook with one code cell `cell_id` whose outputs are `outputs` (a list of texts)."""
    cells = [{"cell_type": "markdown", "id": "intro", "source": ["# 08"]},
             {"cell_type": "code", "id": cell_id, "source": [],
              "outputs": [{"output_type": "stream", "name": "stdout", "text": text.splitlines(keepends=True)}
                          for text in outputs]}]
    metadata = {"tfm_course": {"executed": executed}} if executed else {}
    path.write_text(json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4}), encoding="utf-8")
    return path


def test_a_printed_summary_is_read_back_by_the_next_run(tmp_path, capsys):
    """Round trip: what print_beside_published prints in a cell, the same cell's next run reads as the published
    copy's values, unicode and floats intact."""
    summary = {"machine": "Ünïcode CPU, 2 cores", "epochs": 24, "seconds_per_epoch": 77.5, "bleu beam 4": 39.04}
    print_beside_published(summary, tmp_path / "none.ipynb", CELL)
    printed = capsys.readouterr().out
    copy = write_copy(tmp_path / "08.ipynb", [printed])
    assert published_summary(copy, CELL) == (summary, "2026-11-27")

    yours = {"machine": "Other CPU, 8 cores", "epochs": 12, "bleu beam 4": 32.58, "precision": "float32"}
    assert print_beside_published(yours, copy, CELL) == (summary, "2026-11-27")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == SUMMARY_PREFIX + json.dumps(yours, ensure_ascii=False)
    table = {line.split()[0]: line for line in lines[3:]}
    assert lines[2].split() == ["this", "run", "published", "copy", "(2026-11-27)"]
    # keys in order of first appearance: this run's, then the published copy's others
    assert [line.split()[0] for line in lines[3:]] == ["machine", "epochs", "bleu", "precision", "seconds_per_epoch"]
    assert table["epochs"].split() == ["epochs", "12", "24"]
    assert table["precision"].split() == ["precision", "float32", "-"]
    assert table["seconds_per_epoch"].split() == ["seconds_per_epoch", "-", "77.5"]
    # columns line up: every value of a column ends at the same character
    ends = {len(line) for line in lines[2:]}
    assert len(ends) == 1


def test_the_summary_line_is_found_among_other_output(tmp_path):
    copy = write_copy(tmp_path / "13.ipynb", ["training...\n", 'noise\nthis run: {"epochs": 53}\nmore\n'],
                      cell_id="nb13-yours", executed="")
    assert published_summary(copy, "nb13-yours") == ({"epochs": 53}, "")
    assert published_summary(copy, CELL) is None  # another cell's id


@pytest.mark.parametrize("content", [
    None,                                                       # missing
    "not json {",                                               # damaged
    json.dumps({"cells": "no list"}),                           # not a notebook
    json.dumps({"metadata": {}}),                               # no cells
])
def test_copies_without_a_summary_give_none(tmp_path, content):
    path = tmp_path / "copy.ipynb"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert published_summary(path, CELL) is None


@pytest.mark.parametrize("outputs", [
    [],                                  # the cell never ran
    ["epochs 24\n"],                     # an older copy: the cell printed no summary line
    ["this run: {not json\n"],           # a damaged line
    ["this run: [24, 39.04]\n"],         # JSON but not a summary
])
def test_cells_without_a_summary_give_none(tmp_path, outputs):
    assert published_summary(write_copy(tmp_path / "08.ipynb", outputs), CELL) is None


def test_no_published_copy_is_said_in_one_sentence(tmp_path, capsys):
    assert print_beside_published({"epochs": 1}, tmp_path / "none.ipynb", CELL) is None
    out = capsys.readouterr().out.splitlines()
    assert out == [f'{SUMMARY_PREFIX}{{"epochs": 1}}', "", format_beside({}, None)]
    assert out[2].startswith("No published copy to compare with")


def test_bad_summaries_are_refused_naming_the_problem(tmp_path, capsys):
    with pytest.raises(TypeError, match="must be a dict.*list"):
        print_beside_published([1, 2], tmp_path / "none.ipynb", CELL)
    with pytest.raises(TypeError, match="JSON-serializable.*set"):
        print_beside_published({"epochs": {1, 2}}, tmp_path / "none.ipynb", CELL)
    assert capsys.readouterr().out == ""  # nothing half printed


def test_machine_description_reads_the_model_name_and_counts_cores(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: Example\nmodel name\t: Example CPU 9000 @ 2.0GHz\n"
                       "processor\t: 1\nmodel name\t: Example CPU 9000 @ 2.0GHz\n")
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert machine_description(str(cpuinfo)) == "Example CPU 9000 @ 2.0GHz, 6 cores"
    monkeypatch.setattr("platform.processor", lambda: "fallback-arch")
    assert machine_description(str(tmp_path / "missing")) == "fallback-arch, 6 cores"
    assert "tensorflow" not in sys.modules  # describing the machine started no TensorFlow


def test_machine_description_counts_the_gpus_tensorflow_sees(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("model name : Example CPU\n")
    monkeypatch.setattr("os.cpu_count", lambda: 16)

    class Config:
        @staticmethod
        def list_physical_devices(kind):
            return ["/gpu:0"] if kind == "GPU" else []

    class FakeTensorFlow:
        config = Config

    monkeypatch.setitem(sys.modules, "tensorflow", FakeTensorFlow)
    assert machine_description(str(cpuinfo)) == "Example CPU, 16 cores, 1 GPU"
