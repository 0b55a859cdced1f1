"""history.csv, a run's training log: one row per finished epoch, written whole or not at all.

    RUN/history.csv    epoch (0-based, as Keras counts), loss, accuracy, val_*, learning_rate, iterations,
                       epoch_seconds; columns in order of first appearance, `\\n` line ends

`tfm.training.callbacks.HistoryCSV` writes it while training (a resumed run rewrites it up to the epoch it
resumes from, after `tfm.runs.resume.verify_history` has made sure it holds every finished epoch);
`read_history` gives it to plots and notebooks, `format_history` as a text table. A file that is not a
history (not text, no `epoch` column) is refused in one line naming it.
The rest of the run-folder contract is `tfm.runs`, which re-exports these names.
"""

import csv
import io
import os

from tfm.runs.atomic import write_atomic

HISTORY_FILE = "history.csv"


def _parse(path):
    """`(rows, problem)`: the rows of the CSV file `path` (dicts of str), or why it is not a history.csv."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = list(reader)
    except UnicodeDecodeError as error:
        return [], (f"is not text (byte {data[error.start]:#04x} at offset {error.start} is not UTF-8: a compressed "
                    f"or binary file?)")
    except csv.Error as error:
        return [], f"is not CSV ({error})"
    if not text.strip():
        return [], f"is empty ({len(data)} bytes)"
    if "epoch" not in (reader.fieldnames or ()):
        return [], f"has no epoch column (its first line is {text.splitlines()[0][:60]!r})"
    return rows, None


def history_problem(path):
    """Why `path` is not a readable history.csv ("is not text (...)"), or None; a missing file has none.

    Args:
        path: str. A history.csv.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, HISTORY_FILE)
        >>> write_atomic(path, b"\\x1f\\x8b\\x08 compressed")
        >>> history_problem(path)
        'is not text (byte 0x8b at offset 1 is not UTF-8: a compressed or binary file?)'
    """
    return _parse(path)[1] if os.path.isfile(path) else None


def read_rows(path):
    """The rows of a history.csv (dicts of str); rows without an integer epoch are skipped.

    Args:
        path: str. A history.csv; a missing file has no rows.

    Returns:
        list of dict: column -> str, one per epoch row.

    Raises:
        ValueError: the file is not a history.csv (`history_problem`: empty, not UTF-8 text, not CSV, no `epoch`
            column), named with what to do.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, HISTORY_FILE)
        >>> write_rows(path, [{"epoch": 0, "loss": 2.5}, {"epoch": "?", "loss": 9}])
        >>> read_rows(path)
        [{'epoch': '0', 'loss': '2.5'}]
    """
    if not os.path.isfile(path):
        return []
    rows, problem = _parse(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}: it was overwritten or damaged; restore it from a copy of the run folder "
                         f"(the next tfm train of the run keeps it aside and rebuilds it)")
    good = []
    for row in rows:
        try:
            int(row.get("epoch", ""))
        except (TypeError, ValueError):
            continue
        good.append(row)
    return good


def write_rows(path, rows):
    """Rewrites a history.csv whole or not at all; columns in order of first appearance, `\\n` line ends.

    Args:
        path: str. The history.csv to write.
        rows: list of dicts, column -> value; a row without a column leaves it empty.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, HISTORY_FILE)
        >>> write_rows(path, [{"epoch": 0, "loss": 2.5}, {"epoch": 1, "loss": 1.9, "val_loss": 2.0}])
        >>> print(open(path).read(), end="")
        epoch,loss,val_loss
        0,2.5,
        1,1.9,2.0
    """
    columns = ["epoch"]
    for row in rows:
        columns += [key for key in row if key not in columns]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())


def read_history(run_dir):
    """`RUN/history.csv` as `{column: [value per epoch]}` (epoch as int, the rest float; missing = nan).

    Args:
        run_dir: str. A run folder.

    Returns:
        dict: column -> list with one value per finished epoch (empty without a history.csv).

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> write_rows(os.path.join(tmp.name, HISTORY_FILE), [{"epoch": 0, "loss": 2.5}, {"epoch": 1, "loss": 1.9,
        ...                                                                             "val_loss": 2.0}])
        >>> read_history(tmp.name)
        {'epoch': [0, 1], 'loss': [2.5, 1.9], 'val_loss': [nan, 2.0]}
    """
    rows = read_rows(os.path.join(run_dir, HISTORY_FILE))
    columns = []
    for row in rows:
        columns += [key for key in row if key not in columns]
    history = {}
    for column in columns:
        if column == "epoch":
            history[column] = [int(row["epoch"]) for row in rows]
        else:
            history[column] = [float(row[column]) if row.get(column) not in (None, "") else float("nan")
                               for row in rows]
    return history


HISTORY_COLUMNS = ("epoch", "loss", "accuracy", "val_loss", "val_accuracy", "learning_rate")


def format_history(history, columns=HISTORY_COLUMNS, every=1):
    """A training log as a text table: the first epoch, every `every`-th and the last.

    Args:
        history: `read_history(run)`, or any `{column: [value per epoch]}` with an "epoch" column
            (Keras' 0-based epoch index; the table counts epochs finished, from 1).
        columns: the columns to show, in order; those the history lacks are left out.
        every: show every `every`-th epoch (plus the first and the last), for long runs.

    Returns:
        The table as one string, a header line and one line per shown epoch (12 characters per column).

    Example:
        >>> history = {"epoch": [0, 1, 2, 3], "loss": [4.1, 3.0, 2.45, 2.2], "val_loss": [3.9, 3.1, 2.8, 2.7]}
        >>> print(format_history(history, every=2))
               epoch          loss      val_loss
                   1           4.1           3.9
                   2             3           3.1
                   4           2.2           2.7
    """
    if every < 1:
        raise ValueError(f"every={every!r}: expected a whole number >= 1")
    shown = [c for c in columns if c in history]
    count = len(history.get("epoch", []))
    lines = ["  ".join(f"{c:>12s}" for c in shown)]
    for i in range(count):
        if i == 0 or i == count - 1 or i % every == every - 1:
            values = [history[c][i] + 1 if c == "epoch" else history[c][i] for c in shown]
            lines.append("  ".join(f"{v:12d}" if c == "epoch" else f"{v:12.4g}" for c, v in zip(shown, values)))
    return "\n".join(lines)
