"""Helpers shared by the benchmark scripts: timing rounds, medians, JSON results, optional deps."""

import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "..", "docs", "results")
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


def save_result(name, payload):
    """Write docs/results/<name>.json (read by run_all.py to regenerate docs/results.md)."""
    os.makedirs(RESULTS_DIR, exist_ok=True)
    payload = {"benchmark": name, "python": sys.version.split()[0], "cpus": os.cpu_count(), **payload}
    path = os.path.join(RESULTS_DIR, f"{name}.json")
    with open(path, "w") as f:
        json.dump(payload, f, indent=2)
    return path


def use_mixed_precision(precision):
    """`--precision`: auto = mixed_bfloat16 where it is computed in hardware (`tfm.training.distribute.native_mixed_precision`)."""
    if precision != "auto":
        return precision == "mixed_bfloat16"
    from tfm.training.distribute import native_mixed_precision

    return native_mixed_precision()
