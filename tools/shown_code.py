"""The package source an executed copy displays (`show(obj)` cells), checked against `tfm/` and refreshed.

A notebook's `show(tfm.RNNEncoder.call)` displays `inspect.getsource` of the package as it was when the copy
was made. When the package changes later (a rename, a docstring), the copy goes on showing the old code
beside prose that describes the new. `stale(notebook)` finds such displays by text alone (no import:
every displayed excerpt must appear verbatim in a file of `tfm/`); `refresh(notebook)` renders them again
from the package as it is, which is exactly what re-running those `show` calls displays, and leaves every
other output alone.

    python tools/make_course.py --refresh-shown 01 02    # what `make course` uses
"""

import ast
import inspect
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHOW = re.compile(r"^show\((?P<expr>[^\n]+)\)[ \t]*(#.*)?$", re.M)


def display_calls(source):
    """The cell's top-level `show(expr)` and `show_part(expr, "first", "last")` calls, in order, as
    `(expr, markers)` pairs (`markers` None for `show`); a cell that is not plain Python gives the `show`
    lines alone."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [(match["expr"], None) for match in SHOW.finditer(source)]
    calls = []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        if call.func.id == "show" and len(call.args) == 1:
            calls.append((ast.unparse(call.args[0]), None))
        elif call.func.id == "show_part" and len(call.args) == 3:
            calls.append((ast.unparse(call.args[0]), tuple(ast.literal_eval(arg) for arg in call.args[1:])))
    return calls


def excerpt(obj, markers):
    """What `show(obj)` (markers None) or notebook 08's `show_part(obj, first, last)` displays."""
    source = inspect.getsource(obj)
    if markers is None:
        return source
    first, last = markers
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if first in line), None)
    end = None if start is None else next((i for i in range(start, len(lines)) if last in lines[i]), None)
    if end is None:
        missing = repr(first) if start is None else f"{last!r} after {first!r}"
        raise ValueError(f"show_part: no line with {missing} in the source of {getattr(obj, '__qualname__', obj)}")
    return "\n".join(lines[start : end + 1])


def _text(source):
    return "".join(source) if isinstance(source, list) else source


def package_text(root=ROOT):
    """Every `tfm/**/*.py` file's text, joined: what a displayed excerpt must be part of."""
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted((root / "tfm").rglob("*.py")))


def code_displays(cell):
    """The outputs of a code cell that display source code (IPython's `Code`: HTML with a highlight block),
    as `(output_index, text)` pairs."""
    found = []
    for index, output in enumerate(cell.get("outputs", [])):
        data = output.get("data", {})
        if "highlight" in _text(data.get("text/html", "")) and "text/plain" in data:
            found.append((index, _text(data["text/plain"])))
    return found


def stale(notebook, source_text=None):
    """`"cell N: first line"` for every code display whose text is not in the package's source today."""
    source_text = package_text() if source_text is None else source_text
    found = []
    for number, cell in enumerate(notebook["cells"]):
        for _, text in code_displays(cell):
            if text not in source_text:
                first = next((line.strip() for line in text.splitlines() if line.strip()), "")
                found.append(f"cell {number}: {first[:100]}")
    return found


def refresh(notebook):
    """Re-renders the stale `show(expr)` displays of `notebook` (in place) from the package as it is now.

    Each display is matched to the `show(...)` line that made it, in order; `expr` is evaluated with the
    notebook's own `import tfm...` / `from tfm... import ...` lines. A cell whose displays cannot be matched
    one to one with its `show(...)` / `show_part(...)` lines (e.g. a display made in a loop) is refused.

    Returns:
        list of `"cell N: expr"` strings, the refreshed displays.

    Raises:
        ValueError: a stale display this function cannot re-render (the cell named: run the notebook again).
    """
    from IPython.core.formatters import DisplayFormatter
    from IPython.display import Code

    namespace = {}
    imports = [line for cell in notebook["cells"] if cell["cell_type"] == "code"
               for line in _text(cell["source"]).splitlines()
               if re.match(r"(import tfm|from tfm[\w.]* import |import importlib$)", line)]
    exec("\n".join(imports), namespace)  # the notebook's own import lines
    formatter = DisplayFormatter()
    source_text = package_text()
    refreshed = []
    for number, cell in enumerate(notebook["cells"]):
        displays = code_displays(cell)
        if not any(text not in source_text for _, text in displays):
            continue
        calls = display_calls(_text(cell["source"]))
        if len(calls) != len(displays):
            raise ValueError(f"cell {number}: {len(displays)} code displays but {len(calls)} `show(...)` / "
                             "`show_part(...)` lines: run the notebook again")
        for (index, text), (expr, markers) in zip(displays, calls):
            if text in source_text:
                continue
            shown = excerpt(eval(expr, namespace), markers)
            data, _ = formatter.format(Code(shown, language="python"))
            output = cell["outputs"][index]
            output["data"] = {key: data[key] for key in output["data"] if key in data}
            refreshed.append(f"cell {number}: {expr}")
    return refreshed
