"""benchmarks/run_all.py's page for issue 27's search: the table reads each candidate's results file right; the
published results name no folder of the machine that measured them."""

import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
import common
import run_all

BASE = run_all.M30K_SEARCH_BASE[1]


def _results(folder, name, label, epochs, seconds, bleus, times=None, **row):
    """A results file as quality_at_budget.py writes it; the curve's points are (seconds, BLEU) per epoch."""
    times = times or [seconds * (i + 1) / epochs for i in range(len(bleus))]
    rows = [{"model": label, "epochs": epochs, "train_seconds": seconds, **row}]
    curves = {label: [list(p) for p in zip(times, bleus)]}
    (folder / f"{name}.json").write_text(json.dumps({"rows": rows, "curves": curves}))


def test_the_search_table_gives_speed_and_validation_bleu_of_every_candidate(tmp_path, monkeypatch):
    monkeypatch.setattr(run_all, "RESULTS", str(tmp_path))
    # benchmarks/m30k_vocab.py's German subwords per epoch: 8000 (the recipe's) and 10000
    vocab = {"rows": [{"vocab_size": size, "train": {"de": {"subwords": n}}} for size, n in ((8000, 29000 * 15),
                                                                                               (10000, 29000 * 14))]}
    (tmp_path / "m30k_vocab.json").write_text(json.dumps(vocab))
    assert run_all.m30k_search() == []  # no base recipe: no table
    # Epoch 3 stalled (150 s instead of 90): the median epoch does not see it.
    _results(tmp_path, "m30k_search_attdrop", BASE + " + attention_dropout=0.1", 4, 420, [10.0, 30.0, 20.0, 26.0],
             times=[90, 180, 330, 420])
    assert run_all.m30k_search() == []
    _results(tmp_path, "quality_m30k_small", BASE, 5, 290, [12.0, 20.0, 25.0, 24.0, 27.0], bleu_moses_lc=39.331)
    candidates = run_all.m30k_search()
    assert [c["label"] for c in candidates] == ["m30k_small", "m30k_small + attention_dropout=0.1"]
    header, rule, base, attdrop = run_all.m30k_search_table(candidates, last=2)
    assert header.count("|") == rule.count("|") == base.count("|") == 13
    assert "mean of epochs 3-4" in header  # the last 2 epochs of the shortest run, for every run
    # median epoch 58.0 s; 29,000 pairs / 58 s = 500 pairs/s, 15 times as many subwords; last 2: (24 + 27) / 2;
    # epochs 3-4: (25 + 24) / 2; the base recipe has no selection on validation, and its test score is its row's
    assert [cell.strip() for cell in base.split("|")[1:-1]] == [
        "m30k_small", "5", "290", "58.0", "500", "7500", "25.50", "24.50", "5 (27.00)", "-", "39.33",
        "`docs/results/quality_m30k_small.json`"]
    # median of 90, 90, 150, 90 = 90.0 s; 29,000 / 90 = 322 pairs/s; epochs 3-4 are its last 2: (20 + 26) / 2;
    # not selected on all of validation yet, so no test either
    assert [cell.strip() for cell in attdrop.split("|")[2:12]] == [
        "4", "420", "90.0", "322", "4833", "23.00", "23.00", "2 (30.00)", "-", "-"]
    # m30k_select.py's file gives the choice on all of validation, and test where it was scored
    chosen = {"averaging": "last 20", "beam_size": 8, "alpha": 1.0, "val_bleu_moses_lc": 41.48}
    select = {"chosen": chosen, "test": {"bleu_moses_lc": 39.989}}
    (tmp_path / "m30k_select_attdrop.json").write_text(json.dumps(select))
    attdrop = run_all.m30k_search_table(run_all.m30k_search(), last=2)[3]
    assert [cell.strip() for cell in attdrop.split("|")[10:12]] == ["41.48 (last 20, 8, 1.0)", "39.99"]
    # A candidate with another vocabulary: its own subwords per epoch; one not measured: no tokens/s
    for size, tokens in ((10000, "4511"), (12000, "-")):
        _results(tmp_path, "m30k_search_vocab", BASE + f" + vocab_size={size}", 4, 360, [1.0, 2.0, 3.0, 4.0])
        row = run_all.m30k_search_table(run_all.m30k_search(), last=2)[-1]
        assert row.split("|")[6].strip() == tokens  # 29,000 * 14 / 90 s at the median; 12k not in the file


@pytest.mark.parametrize("window", [1, 5])
def test_the_search_figure_is_drawn(tmp_path, monkeypatch, window):
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(run_all, "RESULTS", str(tmp_path))
    monkeypatch.setattr(run_all, "ROOT", str(tmp_path.parent))
    _results(tmp_path, "quality_m30k_small", BASE, 3, 300, [5.0, 9.0, 11.0])
    _results(tmp_path, "m30k_search_x", BASE + " + x=1", 3, 310, [6.0, 8.0, 12.0])
    path = run_all.plot_m30k_search(run_all.m30k_search(), window=window)
    assert (tmp_path / "quality_m30k_small_search.png").stat().st_size > 1000 and path.endswith("_search.png")


RESULTS_FILES = [run_all.ROOT + "/docs/results.md",
                 *sorted(str(p) for p in pathlib.Path(run_all.RESULTS).iterdir()
                         if p.suffix in (".json", ".txt", ".md"))]


@pytest.mark.parametrize("path", RESULTS_FILES, ids=[pathlib.Path(p).name for p in RESULTS_FILES])
def test_the_published_results_name_no_folder_of_the_benchmark_machine(path):
    """docs/results.md and docs/results/* are published: no absolute path (a home, /tmp/, /work/, the checkout,
    the data folder) in them; the scripts write path-free names (common.path_free)."""
    for number, line in enumerate(pathlib.Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        found = common.ABSOLUTE_PATH.search(line)
        assert found is None, f"{pathlib.Path(path).name} line {number}: {found.group(0)!r}"


def test_results_are_written_path_free(tmp_path, monkeypatch):
    """save_result writes every string of the payload path-free (the checkout -> relative, the data folder ->
    $TFM_DATA_DIR, a run folder from runs/ on, anything else its last part) and returns a relative path."""
    monkeypatch.setattr(common, "RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("TFM_DATA_DIR", "/srv/cache")
    payload = {"command": "python benchmarks/x.py --runs /tmp/q/runs --data-dir /srv/cache",
               "rows": [{"run_dir": "/home/ana/runs/m30k/m30k_small", "log": f"{common.ROOT}/benchmarks/x.py",
                         "data": "/srv/cache/multi30k/test.en.gz", "other": "/scratch/x/hyps.txt",
                         "kept": "tok/s, a / b, https://example.org/a/b, runs/x, wmt14_translate/de-en"}]}
    shown = common.save_result("x", payload)
    assert not pathlib.Path(shown).is_absolute()
    written = json.loads((tmp_path / "results" / "x.json").read_text())
    assert written["command"] == "python benchmarks/x.py --runs runs --data-dir $TFM_DATA_DIR"
    assert written["rows"] == [{"run_dir": "runs/m30k/m30k_small", "log": "benchmarks/x.py",
                                "data": "$TFM_DATA_DIR/multi30k/test.en.gz", "other": "hyps.txt",
                                "kept": payload["rows"][0]["kept"]}]
    assert set(written["machine"]) == {"cpu", "hardware_bfloat16", "TF_ENABLE_ONEDNN_OPTS"}


def test_a_results_command_is_the_one_that_ran(monkeypatch):
    """The `command` of a result splits back into the arguments that ran it (a multi-word argument stays one), from
    `argv` or, when none is given, from the command line; an empty `argv` is no arguments."""
    import shlex

    argv = ["--candidates", "SavedModel b64", "tfm Translator", "--run", "runs/m30k", "--name", "it's"]
    command = common.command_line("/srv/repo/benchmarks/decoding_vs_ctranslate2.py", argv)
    assert shlex.split(command) == ["python", "benchmarks/decoding_vs_ctranslate2.py", *argv]
    monkeypatch.setattr(sys, "argv", ["/elsewhere/benchmarks/memory.py", "--quick", "a b"])
    assert common.command_line("benchmarks/memory.py") == "python benchmarks/memory.py --quick 'a b'"
    assert common.command_line("benchmarks/memory.py", []) == "python benchmarks/memory.py"


def test_a_result_names_the_machine_it_ran_on(tmp_path, monkeypatch):
    """The CPU's model, hardware bfloat16 from its flags, and the oneDNN switch as set (None when unset)."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Test CPU 9000\nflags\t\t: fpu avx2 avx512_bf16\n")
    monkeypatch.setenv("TF_ENABLE_ONEDNN_OPTS", "1")
    assert common.machine(str(cpuinfo)) == {"cpu": "Test CPU 9000", "hardware_bfloat16": True,
                                            "TF_ENABLE_ONEDNN_OPTS": "1"}
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2\n")
    monkeypatch.delenv("TF_ENABLE_ONEDNN_OPTS")
    assert common.machine(str(cpuinfo)) == {"cpu": None, "hardware_bfloat16": False, "TF_ENABLE_ONEDNN_OPTS": None}
    assert common.machine(str(tmp_path / "absent")) == {"cpu": None, "hardware_bfloat16": None,
                                                        "TF_ENABLE_ONEDNN_OPTS": None}


def test_the_published_page_is_what_render_writes():
    """docs/results.md is generated: a section written into the page alone is lost at the next `run_all.py --render`
    (issue 59's serving sections were, until they moved into decoding_vs_ctranslate2.notes.md). The plots are the
    PNG files beside the results, as `plots` names them."""
    folder = pathlib.Path(run_all.RESULTS)
    images = {png.stem: f"results/{png.name}" for png in folder.glob("*.png")}
    published = (folder.parent / "results.md").read_text()
    assert run_all.page(images) == published, (
        "docs/results.md differs from what benchmarks/run_all.py --render writes: put hand-written text in "
        "docs/results/<benchmark>.notes.md (or measurements_quoted.md), then run "
        "`python benchmarks/run_all.py --render`")


def test_the_savedmodel_rows_requests_come_back_in_file_order():
    """benchmarks/decoding_vs_ctranslate2.py's `SavedModel ... b64` rows: requests of `size` in file order, or (the
    `sorted` row) cut from the sentences sorted by length, the answers put back in the order of the sentences."""
    from concurrent.futures import ThreadPoolExecutor

    import decoding_vs_ctranslate2 as bench

    texts = ["a b c", "a", "a b c d e", "a b", "", "a b c d"]
    sent = []

    def request(batch):
        sent.append(list(batch))
        return [text.upper() + "!" for text in batch]

    with ThreadPoolExecutor(2) as pool:
        assert bench.in_requests(texts, 4, request, pool) == [t.upper() + "!" for t in texts]
        assert sent == [texts[:4], texts[4:]]
        sent.clear()
        assert bench.in_requests(texts, 4, request, pool, by_length=True) == [t.upper() + "!" for t in texts]
    assert sent == [["", "a", "a b", "a b c"], ["a b c d", "a b c d e"]]
