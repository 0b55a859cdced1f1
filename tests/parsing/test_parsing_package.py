"""`tfm.parsing` as one package: reachable from `import tfm`, light to import, every public name resolves, and
the layers below it (decoding, the export) know nothing of trees: exporting a model never imports NLTK."""

import ast
import pathlib
import subprocess
import sys

import pytest

import tfm
from tfm import parsing

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = ("evalb", "linearization", "parse_and_score", "preprocessing", "tree_constraint", "treebank", "trees")


def _run(probe, timeout=120):
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split("\n")[-2]  # the probe's last line


def test_the_package_is_reached_from_import_tfm_and_imports_nothing_heavy():
    probe = ("import sys, tfm\nassert 'tfm.parsing' not in sys.modules\nparsing = tfm.parsing\n"
             "print(parsing.__name__, sorted(m for m in ('nltk', 'tensorflow', 'keras', 'matplotlib') "
             "if m in sys.modules))")
    assert _run(probe) == "tfm.parsing []"
    assert "parsing" in dir(tfm)


def test_every_public_name_resolves_to_its_module():
    assert set(parsing._SUBMODULES) == set(MODULES)
    for name in parsing.__all__:
        value = getattr(parsing, name)
        home = f"tfm.parsing.{parsing._EXPORTS[name]}"
        assert getattr(sys.modules[home], name) is value, name
    assert set(dir(parsing)) >= set(parsing.__all__) | set(MODULES)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        parsing.not_a_name  # noqa: B018  (the lookup is the test: it must raise)


def test_the_tree_constraint_is_a_search_constraint():
    from tfm.decoding import Constraint

    assert issubclass(parsing.TreeConstraint, Constraint)


def _imported_modules(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", ["decoding", "layers", "models"])
def test_the_layers_below_know_nothing_of_trees(layer):
    imports = {path.name: sorted(name for name in _imported_modules(path)
                                 if name.startswith(("tfm.parsing", "tfm.parsing.treebank", "nltk")))
               for path in (ROOT / "tfm" / layer).rglob("*.py")}
    assert not any(imports.values()), imports


def test_the_export_does_not_import_nltk():
    """`import tfm.serving.saved_model` and exporting a tiny model: neither NLTK nor any parsing module is imported (the
    search's constraint protocol lives in tfm.decoding; the treebank is read only when asked for)."""
    probe = """
import os, sys, tempfile
import tfm.serving.saved_model
imported = lambda: sorted(m for m in sys.modules
                          if m == "nltk" or m.startswith(("tfm.parsing", "tfm.parsing.treebank")))
assert imported() == [], imported()
import tfm
from tfm.data import number_words_pairs, train_tokenizer
tokenizer = train_tokenizer(list(zip(*number_words_pairs("train", max_number=1100))), vocab_size=40)
config = tfm.TransformerConfig.tiny(vocab_size=tokenizer.vocab_size, num_layers=1, max_length=8, extra_positions=2)
path = tfm.export_saved_model((tfm.Transformer.from_preset(config), tokenizer), os.path.join(tempfile.mkdtemp(), "1"),
                              beam_size=1)
assert os.path.isfile(os.path.join(path, "saved_model.pb"))
print(imported())
"""
    assert _run(probe, timeout=300) == "[]"
