"""benchmarks/run_all.py's page for issue 27's search: the table reads each candidate's results file right."""

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import run_all  # noqa: E402

BASE = run_all.M30K_SEARCH_BASE[1]


def _results(folder, name, label, epochs, seconds, bleus):
    curve = [[seconds * (i + 1) / epochs, b] for i, b in enumerate(bleus)]
    rows = [{"model": label, "epochs": epochs, "train_seconds": seconds}]
    (folder / f"{name}.json").write_text(json.dumps({"rows": rows, "curves": {label: curve}}))


def test_the_search_table_gives_speed_and_validation_bleu_of_every_candidate(tmp_path, monkeypatch):
    monkeypatch.setattr(run_all, "RESULTS", str(tmp_path))
    assert run_all.m30k_search() == []  # no base recipe: no table
    _results(tmp_path, "m30k_search_attdrop", BASE + " + attention_dropout=0.1", 4, 400, [10.0, 30.0, 20.0, 26.0])
    assert run_all.m30k_search() == []
    _results(tmp_path, "quality_m30k_small", BASE, 5, 290, [12.0, 20.0, 25.0, 24.0, 27.0])
    candidates = run_all.m30k_search()
    assert [c["label"] for c in candidates] == ["m30k_small", "m30k_small + attention_dropout=0.1"]
    header, rule, base, attdrop = run_all.m30k_search_table(candidates, last=2)
    assert header.count("|") == rule.count("|") == base.count("|") == 9
    # 290 s / 5 epochs = 58.0 s; 29,000 pairs x 5 / 290 s = 500 pairs/s; last 2: (24 + 27) / 2; best: epoch 5
    assert [cell.strip() for cell in base.split("|")[1:-1]] == [
        "m30k_small", "5", "290", "58.0", "500", "25.50", "5 (27.00)", "`docs/results/quality_m30k_small.json`"]
    assert [cell.strip() for cell in attdrop.split("|")[2:7]] == ["4", "400", "100.0", "290", "23.00"]
    assert "2 (30.00)" in attdrop


@pytest.mark.parametrize("window", [1, 5])
def test_the_search_figure_is_drawn(tmp_path, monkeypatch, window):
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(run_all, "RESULTS", str(tmp_path))
    monkeypatch.setattr(run_all, "ROOT", str(tmp_path.parent))
    _results(tmp_path, "quality_m30k_small", BASE, 3, 300, [5.0, 9.0, 11.0])
    _results(tmp_path, "m30k_search_x", BASE + " + x=1", 3, 310, [6.0, 8.0, 12.0])
    path = run_all.plot_m30k_search(run_all.m30k_search(), window=window)
    assert (tmp_path / "quality_m30k_small_search.png").stat().st_size > 1000 and path.endswith("_search.png")
