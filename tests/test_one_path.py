"""One name, one place (issue 49 and CONTRIBUTING.md), read from the source with `ast`: no module but a package's
`__init__.py` re-exports a name and a package's `__init__.py` hands out its own names only, no `noqa: F401`
outside one, no private name taken from another module, modules named for what they hold, one object per public
name, each name once in the API reference, the retired builders gone, the run-folder package small, `tfm.train`
short, and the rules CONTRIBUTING.md states about names true of the code. Each failure lists the offending
`file:line`s. Nothing is imported: a check runs in seconds, without TensorFlow.
"""

import ast
import json
import pathlib
import re
from collections import defaultdict

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TFM = ROOT / "tfm"
# Module names the package had for their place, not their content (issue 49, item 6).
RETIRED_MODULE_NAMES = ("evaluation", "search_entry", "search_core", "decodable", "input_rule_ops")
# The builders `Transformer(config)` / `X.from_preset(...)` replaced (issue 49, item 3).
RETIRED_BUILDERS = ("build_transformer", "build_seq2seq", "build_float32_model", "build_model", "make_config")
# ... and what loaded a run beside them: `Translator.from_run(run)` / `X.from_preset(run)` (one checkpoint rule).
RETIRED_CALLS = (*RETIRED_BUILDERS, "load_run")
RUNS_MAX_MODULES, RUNS_MAX_LINES = 5, 1400
TRAIN_MAX_PARAMETERS = 10
# Names every module may have its own of: its logger, its script entry point.
PER_MODULE_NAMES = {"logger", "main"}
# namedtuple's public API starts with "_" so that it cannot clash with a field name.
NAMEDTUPLE_API = {"_asdict", "_replace", "_fields", "_make", "_field_defaults"}


def sources():
    return sorted(TFM.rglob("*.py"))


def where(path, node_or_line):
    line = node_or_line if isinstance(node_or_line, int) else node_or_line.lineno
    return f"{path.relative_to(ROOT) if ROOT in path.parents else path.name}:{line}"


def parse(path):
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(path, node):
    """The module an `ImportFrom` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    package = module_name(path).split(".")
    package = package if path.name == "__init__.py" else package[:-1]
    return ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))


def is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def module_level_statements(tree):
    """The statements that run at import time: the body, and the bodies of its `if` / `try` blocks."""
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        yield node
        if isinstance(node, ast.If):
            pending += node.body + node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]


def used_names(tree):
    """Every name read in the module (the roots of attribute chains included), `__all__`'s strings not."""
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)}
    # Names read in string annotations ("tf.Tensor") count as uses.
    for node in ast.walk(tree):
        if isinstance(node, (ast.arg, ast.AnnAssign, ast.FunctionDef)):
            annotation = getattr(node, "annotation", None) or getattr(node, "returns", None)
            if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
                used |= {n.id for n in ast.walk(ast.parse(annotation.value, mode="eval")) if isinstance(n, ast.Name)}
    return used


def all_names(tree):
    """The strings of a module-level `__all__ = [...]` / `(...)`, with their line."""
    for node in module_level_statements(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                for element in ast.walk(node.value):
                    if isinstance(element, ast.Constant) and isinstance(element.value, str):
                        yield element.value, node.lineno


def re_exports(path):
    """`file:line: name` for each name a module imports at import time and never uses, or lists in `__all__`
    without defining it: the module hands out a name it does not own."""
    tree = parse(path)
    used = used_names(tree)
    imported = {}
    for node in module_level_statements(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                imported[bound] = node
    found = [f"{where(path, node)}: imports {name!r} and never uses it" for name, node in imported.items()
             if name not in used]
    found += [f"{where(path, line)}: lists the imported {name!r} in __all__" for name, line in all_names(tree)
              if name in imported]
    return found


def modules_of_tfm():
    """Names bound to a tfm module in a file, by `import tfm.x as m` or `from tfm.x import module`."""
    known = {module_name(path) for path in sources()}

    def bound(path, tree):
        names = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update({alias.asname: alias.name for alias in node.names
                              if alias.asname and alias.name in known})
            elif isinstance(node, ast.ImportFrom):
                source = absolute(path, node)
                names.update({alias.asname or alias.name: f"{source}.{alias.name}" for alias in node.names
                              if f"{source}.{alias.name}" in known})
        return names

    return bound


def private_definitions():
    """module -> the private names it defines: functions, classes, module globals, `self._x = ...` attributes."""
    defined = {}
    for path in sources():
        names = set()
        for node in ast.walk(parse(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split(".")[0])
        defined[path] = {name for name in names if is_private(name)}
    return defined


def private_uses(path, tree, bound_modules, defined_here, defined_in_tfm):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and absolute(path, node).split(".")[0] == "tfm":
            found += [f"{where(path, node)}: imports the private {alias.name!r} from {absolute(path, node)}"
                      for alias in node.names if is_private(alias.name)]
        elif isinstance(node, ast.Attribute) and is_private(node.attr) and node.attr not in NAMEDTUPLE_API:
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in bound_modules:
                found.append(f"{where(path, node)}: reads {owner.id}.{node.attr}, private to {bound_modules[owner.id]}")
            elif not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")) \
                    and node.attr not in defined_here and node.attr in defined_in_tfm:
                found.append(f"{where(path, node)}: reads .{node.attr} of an object another tfm module owns "
                             f"(defined in {', '.join(sorted(defined_in_tfm[node.attr]))})")
    return found


# ---------------------------------------------------------------------------------------------------------------


def test_no_module_but_a_package_init_re_exports_a_name():
    found = [line for path in sources() if path.name != "__init__.py" for line in re_exports(path)]
    assert not found, "a name has one import path, where it is defined:\n" + "\n".join(found)


def test_a_package_facade_hands_out_its_own_names_only():
    """A package's `__init__.py` is its own names' facade: `tfm.data.PAD_ID` (`tfm.special_tokens`') and
    `tfm.decoding.DecodingState` (`tfm.models`') were second paths. `tfm/__init__.py` is every package's."""
    found = []
    for path in sorted(TFM.glob("*/__init__.py")):
        package = f"tfm.{path.parent.name}"
        for node in ast.walk(parse(path)):
            source = absolute(path, node) if isinstance(node, ast.ImportFrom) else (
                node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None)
            if source and re.fullmatch(r"tfm(\.\w+)+", source) and source != "tfm._lazy" \
                    and not (source == package or source.startswith(package + ".")):
                found.append(f"{where(path, node)}: hands out a name of {source}")
    assert not found, "\n".join(found)


def test_no_noqa_f401_outside_a_package_init():
    found = [where(path, number) for path in sources() if path.name != "__init__.py"
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"noqa:[^#\n]*\bF401\b", line)]
    assert not found, "an unused import is a re-export or a leftover:\n" + "\n".join(found)


def test_no_private_name_is_taken_from_another_module():
    """`from tfm.a import _x`, `a._x` on a tfm module, and `obj._x` where `_x` is private to another tfm module
    (the attribute is defined there and not in the module reading it)."""
    defined = private_definitions()
    defined_in_tfm = defaultdict(set)
    for path, names in defined.items():
        for name in names:
            defined_in_tfm[name].add(module_name(path))
    bound = modules_of_tfm()
    found = []
    for path in sources():
        tree = parse(path)
        found += private_uses(path, tree, bound(path, tree), defined[path], defined_in_tfm)
    assert not found, "a helper two modules use is public where it is defined:\n" + "\n".join(found)


def test_modules_are_named_for_what_they_hold():
    """No module named for its place (`search_core`, `search_entry`, ...), and outside `exercises/` (whose
    checkers are named for the notebook topic they check) no two modules share a file name."""
    found = [f"{path.relative_to(ROOT)}: a module named {path.stem!r}" for path in sources()
             if path.stem in RETIRED_MODULE_NAMES]
    by_name = defaultdict(list)
    for path in sources():
        if path.name not in ("__init__.py", "__main__.py") and path.parent.name != "exercises":
            by_name[path.name].append(str(path.relative_to(ROOT)))
    found += [f"{' and '.join(paths)}: two modules named {name}" for name, paths in by_name.items() if len(paths) > 1]
    assert not found, "\n".join(found)


def public_definitions(path):
    """(name, line) of what a module defines at import time: functions, classes, and assigned names (aliases
    such as `PAD_ID = special_tokens.PAD_ID` included: an alias is a second place for the name)."""
    for node in module_level_statements(parse(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        yield from ((name, node.lineno) for name in names if not name.startswith("_"))


def test_one_object_per_public_name():
    """A public name is defined in one module (its facades, the `__init__.py`s, only point to it): no second
    `DecodingState`, `PAD_ID`, `Seq2SeqConfig`, `learning_curve_trend`, `validate_output_dir`, `normalize`."""
    places = defaultdict(dict)
    for path in sources():
        if path.name != "__init__.py":
            for name, line in public_definitions(path):
                places[name].setdefault(path, where(path, line))
    places = {name: list(found.values()) for name, found in places.items() if name not in PER_MODULE_NAMES}
    twice = {name: found for name, found in places.items() if len(found) > 1}
    assert not twice, "\n".join(f"{name}: {', '.join(found)}" for name, found in sorted(twice.items()))


def test_the_retired_builders_are_not_defined():
    found = [f"{where(path, node)}: defines {node.name}" for path in sources() for node in ast.walk(parse(path))
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
             and node.name in RETIRED_BUILDERS]
    assert not found, "\n".join(found)


def test_the_run_folder_package_is_small_and_calls_public_keras_only():
    runs = sorted((TFM / "runs").glob("*.py"))
    modules = [path.name for path in runs if path.name != "__init__.py"]
    lines = sum(len(path.read_text(encoding="utf-8").splitlines()) for path in runs)
    found = [f"tfm/runs/ has {len(modules)} modules besides __init__.py, at most {RUNS_MAX_MODULES}: {modules}"
             ] if len(modules) > RUNS_MAX_MODULES else []
    found += [f"tfm/runs/ has {lines} lines (__init__.py included), at most {RUNS_MAX_LINES}"
              ] if lines > RUNS_MAX_LINES else []
    found += [where(path, number) + ": a private Keras function (saving_lib._...)" for path in sources()
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              if "saving_lib._" in line]
    assert not found, "\n".join(found)


def test_train_takes_at_most_ten_parameters():
    path = TFM / "training" / "trainer.py"
    train = next(node for node in parse(path).body if isinstance(node, ast.FunctionDef) and node.name == "train")
    arguments = train.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    names += [f"*{a.arg}" for a in (arguments.vararg,) if a] + [f"**{a.arg}" for a in (arguments.kwarg,) if a]
    assert len(names) <= TRAIN_MAX_PARAMETERS, f"{where(path, train)}: train takes {len(names)}: {names}"


def notebook_code(path):
    for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "code":
            yield number, "".join(cell["source"])


def test_no_notebook_benchmark_or_tool_calls_a_retired_builder():
    """The course, the benchmarks and the tools build with `X(config)` / `X.from_preset(...)` (the executed
    copies in docs/course hold the notebooks' code, tests/test_course.py; tfm itself cannot call what it does
    not define)."""
    pattern = re.compile(r"\b(" + "|".join(RETIRED_CALLS) + r")\b")
    found = [f"{path.relative_to(ROOT)} cell {number}: {match.group(1)}"
             for path in sorted((ROOT / "notebooks").rglob("*.ipynb")) for number, code in notebook_code(path)
             for match in pattern.finditer(code)]
    found += [f"{where(path, number)}: {match.group(1)}"
              for folder in ("benchmarks", "tools") for path in sorted((ROOT / folder).rglob("*.py"))
              for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
              for match in pattern.finditer(line)]
    assert not found, "\n".join(found)


# --- the API reference ------------------------------------------------------------------------------------------


def api_targets():
    """(page, module) for every `::: module` line of docs/api/*.md."""
    return [(page.name, match.group(1)) for page in sorted((ROOT / "docs" / "api").glob("*.md"))
            for match in re.finditer(r"^:::[ \t]*([\w.]+)", page.read_text(encoding="utf-8"), re.M)]


def module_path(name):
    path = ROOT.joinpath(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def rendered_names(path):
    """What mkdocstrings shows of a module (mkdocs.yml: no `_` names, nothing without a docstring): its public
    functions and classes with a docstring."""
    return [(node.name, node.lineno) for node in parse(path).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not node.name.startswith("_") and ast.get_docstring(node)]


def test_each_api_name_is_documented_once_and_every_module_somewhere():
    """One entry per name in the API reference (the decoding page showed `as_bytes` and `normalize` twice: two
    functions of one name), each module on one page, and no module of tfm left off every page."""
    targets = api_targets()
    found = [f"docs/api/{page}: ::: {name} is not a module of tfm" for page, name in targets
             if not module_path(name).exists()]
    pages = defaultdict(list)
    for page, name in targets:
        pages[name].append(page)
    found += [f"{name} is documented {len(where)} times: {where}" for name, where in pages.items() if len(where) > 1]
    entries = defaultdict(list)
    for page, name in targets:
        if module_path(name).exists() and module_path(name).name != "__init__.py":
            for member, line in rendered_names(module_path(name)):
                entries[member].append(f"docs/api/{page} ({where(module_path(name), line)})")
    found += [f"{member} has {len(where)} entries: {', '.join(where)}" for member, where in sorted(entries.items())
              if len(where) > 1]
    lost = [module_name(path) for path in sources() if path.name not in ("__init__.py", "__main__.py")
            and not path.stem.startswith("_") and module_name(path) not in pages]
    found += [f"{name} is on no page of docs/api" for name in lost]
    assert not found, "\n".join(found)


# --- CONTRIBUTING.md, claim by claim --------------------------------------------------------------------------


def contributing():
    return (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_contributing_lists_the_packages_there_are():
    table = set(re.findall(r"^\| `(\w+)/` \|", contributing(), re.M))
    packages = {path.name for path in TFM.iterdir() if (path / "__init__.py").exists()}
    assert table == packages


def test_the_tests_are_laid_out_like_the_package():
    """CONTRIBUTING.md: tests mirror the packages (`tfm/layers/masks.py` -> `tests/layers/test_masks.py`): every
    folder of tests/ that holds tests is named after a package."""
    packages = {path.name for path in TFM.iterdir() if (path / "__init__.py").exists()}
    folders = {path.name for path in (ROOT / "tests").iterdir() if path.is_dir() and any(path.glob("test_*.py"))}
    assert folders <= packages, sorted(folders - packages)


def test_contributing_states_the_tested_import_order():
    from tests.test_import_graph import ORDER

    assert " → ".join(ORDER) in contributing()


def functions(name_pattern):
    for path in sources():
        for node in ast.walk(parse(path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and re.fullmatch(name_pattern, node.name):
                yield path, node


def returns_a_value(function):
    """Every `return` gives a value and the body does not end without one (a `raise` ends it too)."""
    returns = [node for node in ast.walk(function) if isinstance(node, ast.Return)
               and not any(node in ast.walk(inner) for inner in function.body
                           if isinstance(inner, (ast.FunctionDef, ast.Lambda)))]
    if not returns or any(r.value is None or (isinstance(r.value, ast.Constant) and r.value.value is None)
                          for r in returns):
        return False
    return isinstance(function.body[-1], (ast.Return, ast.Raise, ast.If, ast.Try, ast.With, ast.For))


def test_validate_functions_return_their_value():
    """CONTRIBUTING.md: `validate_*` checks a value and returns it (or raises a ValueError naming it)."""
    found = [f"{where(path, node)}: {node.name} returns nothing" for path, node in functions(r"validate_\w+")
             if not returns_a_value(node)]
    assert not found, "\n".join(found)


def test_check_functions_are_the_exercises_only():
    """CONTRIBUTING.md: `check_<name>(fn)` is only the exercises' grading."""
    found = [f"{where(path, node)}: {node.name}" for path, node in functions(r"check_\w+")
             if path.parent.name != "exercises"]
    assert not found, "\n".join(found)


def test_every_layer_is_serializable_exported_and_tested():
    """CONTRIBUTING.md's "How to add a layer": registered with package "tfm", exported from tfm.layers, and
    each layer module has its tests/layers/test_<module>.py."""
    exported = (TFM / "layers" / "__init__.py").read_text(encoding="utf-8")
    paths = [path for path in sorted((TFM / "layers").glob("*.py")) if path.name != "__init__.py"]
    classes = {path: [node for node in parse(path).body if isinstance(node, ast.ClassDef)] for path in paths}
    # A base that other layers extend (TransformerBlock) is not a layer of its own.
    bases = {ast.unparse(base).split(".")[-1] for found in classes.values() for node in found for base in node.bases}
    found = []
    for path in paths:
        layers = [node for node in classes[path] if node.name not in bases
                  and any("Layer" in ast.unparse(base) or "Attention" in ast.unparse(base) for base in node.bases)]
        for layer in layers:
            decorators = " ".join(ast.unparse(d) for d in layer.decorator_list)
            if "register_keras_serializable" not in decorators or "'tfm'" not in decorators:
                found.append(f"{where(path, layer)}: {layer.name} is not registered with package='tfm'")
            if not re.search(rf"\b{layer.name}\b", exported):
                found.append(f"{where(path, layer)}: {layer.name} is not exported from tfm/layers/__init__.py")
        if layers and not (ROOT / "tests" / "layers" / f"test_{path.stem}.py").exists():
            found.append(f"{path.relative_to(ROOT)}: no tests/layers/test_{path.stem}.py")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("method", ["translate", "translate_with_scores"])
def test_every_translator_takes_the_same_options(method):
    """CONTRIBUTING.md: one calling convention for everything that translates, options named alike."""
    classes = {"Translator": TFM / "decoding" / "translator.py",
               "SavedModelTranslator": TFM / "serving" / "saved_model_translator.py",
               "CTranslate2Translator": TFM / "serving" / "ctranslate2_translator.py"}
    signatures = {}
    for name, path in classes.items():
        cls = next(node for node in parse(path).body if isinstance(node, ast.ClassDef) and node.name == name)
        function = next(node for node in cls.body if isinstance(node, ast.FunctionDef) and node.name == method)
        arguments = function.args
        signatures[name] = [a.arg for a in arguments.args + arguments.kwonlyargs][1:]
    assert len({tuple(s) for s in signatures.values()}) == 1, signatures


# --- the checks check ------------------------------------------------------------------------------------------


def test_the_re_export_finder_finds_what_it_should(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom tfm.a import b, c\nfrom tfm.d import e\n__all__ = ['e']\n"
                      "def f():\n    import json\n    return c(e)\n")
    assert [line.split(": ", 1)[1] for line in re_exports(module)] == [
        "imports 'os' and never uses it", "imports 'b' and never uses it", "lists the imported 'e' in __all__"]


def test_the_private_use_finder_finds_what_it_should(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from tfm.a import _x, y\nimport tfm.b as b\nclass C:\n    def f(self, t):\n"
                      "        self._own = t._other, b._z, t._own, t._asdict(), self._inherited\n")
    tree = ast.parse(module.read_text())
    found = private_uses(module, tree, {"b": "tfm.b"}, {"_own"}, {"_other": {"tfm.c"}, "_own": {"m"}})
    assert [line.split(": ", 1)[1] for line in found] == [
        "imports the private '_x' from tfm.a",
        "reads ._other of an object another tfm module owns (defined in tfm.c)",
        "reads b._z, private to tfm.b"]


def test_the_return_finder_finds_what_it_should():
    cases = {"def validate_a(x):\n    if x < 0:\n        raise ValueError(x)\n    return x\n": True,
             "def validate_b(x):\n    if x < 0:\n        raise ValueError(x)\n": False,
             "def validate_c(x):\n    if x:\n        return\n    return x\n": False}
    assert {source: returns_a_value(ast.parse(source).body[0]) for source in cases} == cases
