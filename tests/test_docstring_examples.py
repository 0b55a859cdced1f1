"""The `Example:` blocks of the layers, models, schedule, losses and metric run as written (doctest).

Each module's examples run in that module's namespace (what a reader of its page in the API reference
has imported by writing `from tfm.layers.encoder import Encoder` and friends: the module's own names,
`keras`, `ops`); anything else an example uses, it imports itself. Every public name of `tfm.layers` and
every class and builder of the modules below has an example. The decoding and export examples are
tests/decoding/test_decoding_examples.py's.

    .venv/bin/python -m pytest -q tests/test_docstring_examples.py
"""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import tfm.layers

LAYER_MODULES = sorted(f"tfm.layers.{m.name}" for m in pkgutil.iter_modules(tfm.layers.__path__))
MODULES = LAYER_MODULES + ["tfm.models.transformer", "tfm.models.seq2seq", "tfm.training.schedules", "tfm.training.losses",
                           "tfm.training.metrics"]
# Helpers these modules share with one another, not API: no example needed.
HELPERS = {"validate_score", "validate_rnn_args", "states_per_layer", "resolve_attention_args", "ensure_built",
           "residual_block", "positional_encoding_numpy", "TransformerBlock", "TransformerStack"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _own_public(module):
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ == module.__name__}


@pytest.mark.parametrize("name", MODULES)
def test_examples_run_as_written(name):
    module = importlib.import_module(name)
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False, optionflags=FLAGS)  # not -v's
    report = []
    for test in finder.find(module):
        test.globs = dict(vars(module))
        runner.run(test, out=report.append)
    assert not report, "".join(report)


@pytest.mark.parametrize("name", MODULES)
def test_every_public_class_and_function_has_an_example(name):
    module = importlib.import_module(name)
    missing = [n for n, obj in _own_public(module).items()
               if n not in HELPERS and ">>> " not in (inspect.getdoc(obj) or "")]
    assert not missing, f"{name}: no Example: block in {missing}"


def test_the_layers_api_is_covered():
    """Every class and function `tfm.layers` exports is defined in one of the modules checked above."""
    exported = {n for n, obj in vars(tfm.layers).items()
                if not n.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj))}
    checked = set()
    for name in LAYER_MODULES:
        checked |= set(_own_public(importlib.import_module(name)))
    assert exported and exported <= checked - HELPERS, exported - (checked - HELPERS)
