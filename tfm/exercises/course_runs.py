"""Your run beside the published copy's: what a notebook prints when its numbers depend on the machine.

A notebook that trains on a time budget (08: 30 minutes, 13: 900 s per model) fits as many epochs as the machine
allows, so its epochs, seconds per epoch and scores are the machine's, not the recipe's. Its prose quotes the
published copy (`docs/course/`), and one code cell prints the reader's run beside it:

    this run: {"machine": "Intel Xeon 8480C, 2 cores", "epochs": 12}     <- one JSON line, read back later

                               this run  published copy (2026-11-27)
    machine  Intel Xeon 8480C, 2 cores       AMD EPYC 7B13, 2 cores
    epochs                          12                           24

`print_beside_published(summary, copy, cell_id)` prints both; the published copy's values are the `this run:` line
that the same cell (found by its id) printed when the copy was executed, so nothing else has to be stored.

Example:
    >>> import json, pathlib, tempfile
    >>> copy = pathlib.Path(tempfile.mkdtemp()) / "08.ipynb"
    >>> cell = {"cell_type": "code", "id": "nb08-yours", "outputs": [
    ...     {"output_type": "stream", "name": "stdout", "text": ['this run: {"epochs": 24, "BLEU": 39.04}\\n']}]}
    >>> _ = copy.write_text(json.dumps({"cells": [cell], "metadata": {"tfm_course": {"executed": "2026-11-27"}}}))
    >>> _ = print_beside_published({"epochs": 12, "BLEU": 32.58}, copy, "nb08-yours")
    this run: {"epochs": 12, "BLEU": 32.58}
    <BLANKLINE>
            this run  published copy (2026-11-27)
    epochs        12                           24
    BLEU       32.58                        39.04
"""

import json
import os
import platform
import sys

SUMMARY_PREFIX = "this run: "


def machine_description(cpuinfo="/proc/cpuinfo"):
    """The processor, its cores and any GPU TensorFlow sees, in words (`"AMD EPYC 7B13, 2 cores"`).

    Args:
        cpuinfo: str. The file naming the processor (Linux); elsewhere `platform.processor()` names it.

    Returns:
        str: the processor's model name, the number of cores (`os.cpu_count()`) and, where TensorFlow is already
        imported and sees one, the number of GPUs. TensorFlow is never imported here.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "cpuinfo")
        >>> _ = open(path, "w").write("processor : 0\\nmodel name : Example CPU 9000\\n")
        >>> machine_description(path).startswith("Example CPU 9000, ")
        True
    """
    name = platform.processor() or platform.machine() or "unknown processor"
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            name = next(line.split(":", 1)[1].strip() for line in f if line.lower().startswith("model name"))
    except (OSError, StopIteration):
        pass
    description = f"{name}, {os.cpu_count()} cores"
    tf = sys.modules.get("tensorflow")  # only if the caller imported it: describing a machine starts no TensorFlow
    gpus = tf.config.list_physical_devices("GPU") if tf is not None else []
    return description + (f", {len(gpus)} GPU" if gpus else "")


def published_summary(copy, cell_id):
    """The summary the published copy printed in cell `cell_id`, and the date the copy was executed.

    Args:
        copy: str or path-like. An executed notebook (`docs/course/NN_name.ipynb`).
        cell_id: str. The id of the code cell that printed `this run: {json}`.

    Returns:
        `(dict, str)`: the summary and the copy's `metadata.tfm_course.executed` date ("" when it has none); None
        when the copy is missing, is not a notebook, has no such cell or the cell printed no summary line
        (a copy made before the cell existed).

    Example:
        >>> published_summary("no/such/copy.ipynb", "nb08-yours") is None
        True
    """
    try:
        with open(copy, encoding="utf-8") as f:
            notebook = json.load(f)
        cell = next(c for c in notebook["cells"] if c.get("id") == cell_id)
        text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        line = next(line for line in text.splitlines() if line.startswith(SUMMARY_PREFIX))
        summary = json.loads(line[len(SUMMARY_PREFIX):])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, StopIteration):
        return None
    if not isinstance(summary, dict):
        return None
    return summary, str(notebook.get("metadata", {}).get("tfm_course", {}).get("executed", ""))


def format_beside(summary, published):
    """A text table: one row per key of either summary, this run's value beside the published copy's.

    Args:
        summary: dict. This run's values (JSON-serializable).
        published: `(dict, str)` as `published_summary` returns it, or None.

    Returns:
        str: the table (keys in order of first appearance, "-" where a run lacks one; each column as wide as
        its longest entry), or one sentence saying there is no published copy to compare with.

    Example:
        >>> print(format_beside({"epochs": 3}, ({"epochs": 5, "F1": 24.1}, "2026-11-27")))
                this run  published copy (2026-11-27)
        epochs         3                            5
        F1             -                         24.1
    """
    if published is None:
        return "No published copy to compare with (docs/course/ has no copy that printed this cell's summary)."
    theirs, date = published
    keys = list(dict.fromkeys([*summary, *theirs]))
    rows = [(str(key), str(summary.get(key, "-")), str(theirs.get(key, "-"))) for key in keys]
    rows.insert(0, ("", "this run", "published copy" + (f" ({date})" if date else "")))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    return "\n".join(f"{key:{widths[0]}s}  {ours:>{widths[1]}s}  {published:>{widths[2]}s}".rstrip()
                     for key, ours, published in rows)


def print_beside_published(summary, copy, cell_id):
    """Print this run's summary as one JSON line, then the table of `format_beside` against the published copy.

    The JSON line is what a later run reads back from this cell's output (`published_summary`), so call this in
    the cell whose id is `cell_id`.

    Args:
        summary: dict. This run's values: JSON-serializable, the machine-dependent ones (`machine_description()`,
            epochs, seconds per epoch, scores).
        copy: str or path-like. The published copy of the notebook.
        cell_id: str. The id of the calling cell.

    Returns:
        `(dict, str)` or None: the published summary, as `published_summary` returns it.

    Raises:
        TypeError: `summary` is not a dict, or a value is not JSON-serializable (the message names it).

    Example:
        >>> _ = print_beside_published({"epochs": 3}, "no/such/copy.ipynb", "nb13-yours")
        this run: {"epochs": 3}
        <BLANKLINE>
        No published copy to compare with (docs/course/ has no copy that printed this cell's summary).
    """
    if not isinstance(summary, dict):
        raise TypeError(f"summary must be a dict of this run's values, got {type(summary).__name__}")
    try:
        line = json.dumps(summary, ensure_ascii=False)
    except TypeError as error:
        raise TypeError(f"summary values must be JSON-serializable (str, int, float, bool, None): {error}") from None
    print(SUMMARY_PREFIX + line)
    published = published_summary(copy, cell_id)
    print()
    print(format_beside(summary, published))
    return published
