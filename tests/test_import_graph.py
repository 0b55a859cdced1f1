"""tfm's imports run one way: no circle between files, none between packages, and a package imports only the
packages before it in `ORDER` (the order docs/api/index.md documents).

The graph is read from the source (ast), so imports inside functions count: they hide a circle from
`import tfm` but not from a reader. `from tfm.pkg import name` is an edge to `tfm.pkg.name` when that is a
module, else to `tfm.pkg` (its `__init__`).
"""

import ast
import pathlib

import pytest

TFM = pathlib.Path(__file__).resolve().parent.parent / "tfm"
# A package may import the root modules and the packages to its left, never one to its right.
ORDER = ("config", "data", "runs", "layers", "models", "decoding", "parsing", "training", "serving", "viz",
         "exercises", "cli")
ROOT_MODULES = ("tfm", "tfm._framework", "tfm._lazy", "tfm.special_tokens")
MAX_ROOT_MODULES = 4


def module_name(path):
    parts = path.relative_to(TFM.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    return {module_name(path): path for path in sorted(TFM.rglob("*.py"))}


def imports(path, known):
    """The tfm modules `path` imports, anywhere in its body."""
    name = module_name(path) if TFM in path.parents else path.stem
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "tfm"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "tfm":
                continue
            for alias in node.names:
                found.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source)
    return found - {name}


def graph():
    known = modules()
    return {name: {target for target in imports(path, known) if target in known} for name, path in known.items()}


def package_of(name):
    parts = name.split(".")
    return None if name in ROOT_MODULES or len(parts) < 2 else parts[1]


def find_cycle(edges):
    """One circle of `edges` (a list of names, first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_root_holds_few_modules_and_every_package_is_in_the_order():
    root = sorted(p.name for p in TFM.glob("*.py") if p.name != "__init__.py")
    assert len(root) <= MAX_ROOT_MODULES, root
    packages = sorted(p.name for p in TFM.iterdir() if (p / "__init__.py").exists())
    assert packages == sorted(ORDER)
    assert {module_name(TFM / name) for name in root} | {"tfm"} == set(ROOT_MODULES)


def test_no_circle_between_files():
    assert find_cycle(graph()) is None


def test_no_circle_between_packages_and_imports_follow_the_order():
    against = []
    for source, targets in graph().items():
        for target in targets:
            a, b = package_of(source), package_of(target)
            if b is None or a == b:
                continue
            if a is None:
                against.append(f"{source} -> {target} (a root module imports a package)")
            elif ORDER.index(b) > ORDER.index(a):
                against.append(f"{source} -> {target} ({a} comes before {b})")
    assert not against, "\n".join(sorted(against))


def test_the_order_is_the_documented_one():
    index = (TFM.parent / "docs" / "api" / "index.md").read_text()
    assert " → ".join(ORDER) in index


@pytest.mark.parametrize("edges, cycle", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, None),
    ({"a": {"a"}}, ["a", "a"]),
])
def test_the_cycle_finder_finds_what_it_should(edges, cycle):
    assert find_cycle(edges) == cycle


def test_imports_inside_functions_and_from_imports_of_modules_are_edges(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from tfm.decoding import search\n    import tfm.runs.folder\n"
                      "from tfm.data import load_dataset\n")
    known = {"tfm.decoding", "tfm.decoding.search", "tfm.runs", "tfm.runs.folder", "tfm.data"}
    assert imports(source, known) == {"tfm.decoding.search", "tfm.runs.folder", "tfm.data"}
