"""Helpers shared by the benchmark scripts: timing rounds, medians, JSON results, optional deps."""

import json
import os
import re
import shlex
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS_DIR = os.path.join(ROOT, "docs", "results")
# An absolute path of two parts or more, not inside a word, a URL or a relative path (`tok/s`, `a / b`,
# `https://...`, `runs/x` are not).
ABSOLUTE_PATH = re.compile(r"(?<![\w.~$:/\\-])/[\w.+@%=-]+(?:/[\w.+@%=-]*)+")
DEPS_DIR = os.path.join(HERE, ".deps")  # keras-hub and torch, installed by `make bench-deps` only


def use_bench_deps():
    """Put the benchmark-only packages (keras-hub, torch) on sys.path when installed."""
    if os.path.isdir(DEPS_DIR) and DEPS_DIR not in sys.path:
        sys.path.append(DEPS_DIR)


def median(values):
    return statistics.median(values)


def alternate(candidates, rounds, measure):
    """Measure each candidate once per round, alternating A, B, C, ... so drift hits all alike.

    Args:
        candidates: list of names.
        rounds: int.
        measure: callable(name) -> float (a rate, higher is better).

    Returns:
        dict name -> list of per-round values.
    """
    results = {name: [] for name in candidates}
    for r in range(rounds):
        order = candidates if r % 2 == 0 else list(reversed(candidates))
        for name in order:
            results[name].append(measure(name))
    return results


def timed(fn, repeats):
    """Seconds per call of `fn` over `repeats` calls."""
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def machine_folders():
    """`{absolute folder: what the results say instead}`: the checkout (its files relative to it) and the data
    folder (`$TFM_DATA_DIR`, when set)."""
    folders = {ROOT: ""}
    if os.environ.get("TFM_DATA_DIR"):
        folders[os.path.abspath(os.environ["TFM_DATA_DIR"])] = "$TFM_DATA_DIR"
    return folders


def path_free(text, folders=None):
    """`text` with no folder of the machine that ran the benchmark: a path in the checkout relative to it
    (`benchmarks/x.py`), one in the data folder from `$TFM_DATA_DIR`, a run folder from its `runs/` part on,
    any other absolute path as its last part. The results files and docs/results.md are published.

    Args:
        text: str.
        folders: `{absolute folder: shown instead}` (default `machine_folders()`).

    Example:
        >>> path_free("--runs /tmp/q/runs; wrote /srv/repo/benchmarks/../docs/results/x.json; /scratch/a/b.gz",
        ...           {"/srv/repo": ""})
        '--runs runs; wrote docs/results/x.json; b.gz'
    """
    folders = machine_folders() if folders is None else folders

    def shorten(match):
        path = os.path.normpath(match.group(0))
        for folder, shown in sorted(folders.items(), key=lambda item: -len(item[0])):  # the longest first
            folder = folder.rstrip("/")
            if path == folder or path.startswith(folder + "/"):
                rest = path[len(folder) + 1:]
                return "/".join(part for part in (shown, rest) if part) or "."
        parts = path.strip("/").split("/")
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("runs"):]) if "runs" in parts else parts[-1]

    return ABSOLUTE_PATH.sub(shorten, text)


def path_free_tree(value, folders=None):
    """`path_free` on every string of a JSON-like value (dicts, lists), keys included."""
    if isinstance(value, str):
        return path_free(value, folders)
    if isinstance(value, dict):
        return {path_free_tree(k, folders): path_free_tree(v, folders) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [path_free_tree(v, folders) for v in value]
    return value


def machine(cpuinfo="/proc/cpuinfo"):
    """What a measurement ran on, beside its numbers (sessions' machines differ 2-3x): the CPU's model name, whether
    it computes bfloat16 in hardware (`tfm.models.quantization.cpu_has_native_bfloat16`), and
    `TF_ENABLE_ONEDNN_OPTS` as set (None: TensorFlow's default, oneDNN on only with AVX512-VNNI, BF16 or AMX)."""
    from tfm.models.quantization import cpu_has_native_bfloat16

    model = None
    try:
        with open(cpuinfo) as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.lower().startswith("model name")), None)
    except OSError:
        pass
    return {"cpu": model, "hardware_bfloat16": cpu_has_native_bfloat16(cpuinfo),
            "TF_ENABLE_ONEDNN_OPTS": os.environ.get("TF_ENABLE_ONEDNN_OPTS")}


def command_line(script, argv=None):
    """The command that ran a benchmark, as a reader would type it again: `python benchmarks/<script>` and its
    arguments (`argv`, default `sys.argv[1:]`), each quoted where the shell needs it (`--candidates "SavedModel
    b64"` stays one argument).

    Example:
        >>> command_line("/srv/repo/benchmarks/x.py", ["--candidates", "SavedModel b64", "--rounds", "3"])
        "python benchmarks/x.py --candidates 'SavedModel b64' --rounds 3"
    """
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["python", "benchmarks/" + os.path.basename(script), shlex.join(args)]).rstrip()


def save_result(name, payload):
    """Write docs/results/<name>.json (read by run_all.py to regenerate docs/results.md), every path in it
    written path-free (`path_free`), with the machine it ran on (`machine`). Returns the file's path relative to
    the checkout, for printing."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    payload = {"benchmark": name, "python": sys.version.split()[0], "cpus": os.cpu_count(), "machine": machine(),
               **payload}
    path = os.path.join(RESULTS_DIR, f"{name}.json")
    with open(path, "w") as f:
        json.dump(path_free_tree(payload), f, indent=2)
    return os.path.relpath(path, ROOT)


def use_mixed_precision(precision):
    """`--precision`: auto = mixed_bfloat16 where it is computed in hardware
    (`tfm.training.distribute.native_mixed_precision`)."""
    if precision != "auto":
        return precision == "mixed_bfloat16"
    from tfm.training.distribute import native_mixed_precision

    return native_mixed_precision()
