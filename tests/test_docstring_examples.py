"""Docs that run: the `Example:` blocks of every module of tfm are collected as doctests (`--doctest-modules`
and `testpaths = ["tests", "tfm"]` in pyproject.toml, the namespace in conftest.py), so `make test` and
`pytest --doctest-modules tfm` run them all. This file checks what that collection cannot: that it finds every
module and enough examples, and that the paper's building blocks each have one.

    .venv/bin/python -m pytest -q tfm            # the examples alone
"""

import doctest
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest
import tomllib

import tfm
import tfm.layers

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(m.name for m in pkgutil.walk_packages(tfm.__path__, "tfm.") if not m.name.endswith("__main__"))
# Where every public class and function must show itself in an example: the paper's building blocks.
STRICT = sorted(m for m in MODULES if m.startswith(("tfm.layers.", "tfm.models.")) or m in (
    "tfm.training.schedules", "tfm.training.losses", "tfm.training.metrics"))
# Helpers those modules share with one another, not API: no example needed.
HELPERS = {"states_per_layer", "ensure_built", "positional_encoding_numpy", "TransformerBlock",
           "TransformerStack", "PresetMixin"}
MIN_EXAMPLES = 60


def examples(name):
    module = importlib.import_module(name)
    return sum(len(test.examples) for test in doctest.DocTestFinder().find(module))


def test_the_suite_collects_the_doctests_of_every_module():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "tfm" in options["testpaths"] and "--doctest-modules" in options["addopts"]


def test_there_are_enough_examples():
    counts = {name: examples(name) for name in MODULES}
    with_examples = sum(1 for n in counts.values() if n)
    docstrings_with_examples = sum(
        sum(1 for test in doctest.DocTestFinder().find(importlib.import_module(name)) if test.examples)
        for name in MODULES)
    assert docstrings_with_examples >= MIN_EXAMPLES, (docstrings_with_examples, counts)
    assert with_examples >= len(MODULES) // 2, counts


def _own_public(module):
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ == module.__name__}


@pytest.mark.parametrize("name", STRICT)
def test_every_public_class_and_function_has_an_example(name):
    module = importlib.import_module(name)
    missing = [n for n, obj in _own_public(module).items()
               if n not in HELPERS and ">>> " not in (inspect.getdoc(obj) or "")]
    assert not missing, f"{name}: no Example: block in {missing}"


def test_the_layers_api_is_covered():
    """Every class and function `tfm.layers` exports is defined in one of the strict modules."""
    exported = {n for n, obj in vars(tfm.layers).items()
                if not n.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))}
    checked = set()
    for name in STRICT:
        checked |= set(_own_public(importlib.import_module(name)))
    assert exported and exported <= checked - HELPERS, exported - (checked - HELPERS)
