"""The `Example:` blocks of tfm.decoding, tfm.decoding.input_rule, tfm.serving.saved_model and tfm.decoding.evaluation run as written (doctest).

A module's examples run top to bottom in one namespace, as a reader reads its page of the API
reference: a later example may use what an earlier one built (the `Translator` example's
`translator` in `translate_with_scores`'), and says so.
"""

import doctest
import importlib

import pytest

MODULES = ["tfm.decoding.input_rule", "tfm.decoding.input_rule_ops", "tfm.decoding.search", "tfm.decoding.search_core",
           "tfm.decoding.greedy", "tfm.decoding.beam", "tfm.decoding.translator", "tfm.serving.saved_model", "tfm.decoding.evaluation"]


def run_examples(name):
    """`(examples run, report of the failures)` for the module `name`."""
    module = importlib.import_module(name)
    tests = sorted((t for t in doctest.DocTestFinder().find(module) if t.examples), key=lambda t: t.lineno or 0)
    namespace = dict(vars(module))
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    for test in tests:
        test.globs = namespace
        runner.run(test, out=report.append, clear_globs=False)
    return runner.tries, "".join(report)


@pytest.mark.parametrize("name", MODULES)
def test_examples_run_as_written(name):
    tries, report = run_examples(name)
    assert tries > 0, f"{name} has no examples"
    assert not report, report
