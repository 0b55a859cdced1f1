"""What a run records: its settings (config.json: the run's `tfm.config.Recipe`, one section per part), its
vocabulary (tokenizer/) and its log (history.csv: one row per finished epoch). A damaged file is refused in one
line that names it and says what to do.
"""

import contextlib
import csv
import io
import json
import logging
import os

from tfm import __version__
from tfm.config import Recipe, upgrade_record
from tfm.config.recipe import RECORD_FORMAT
from tfm.runs.files import CONFIG_FILE, HISTORY_FILE, TOKENIZER_DIR, validate_output_path, write_atomic

logger = logging.getLogger("tfm.runs")

# Fields not compared when a RUN is reused: a cache location, the vocabulary's size (asked and learned: a format-1
# record holds the learned one only), and what a session may change (`config_differences`).
RESUMABLE = ("seed", "mixed_precision", "xla", "steps_per_epoch", "keep_checkpoints", "validation")
NOT_COMPARED = {"data.data_dir", "data.subwords", "model.vocab_size", *(f"training.{name}" for name in RESUMABLE)}


def read_run_config(run_dir):
    """`RUN/config.json` read and checked, as a format-2 dict (`{"tfm_version", "format": 2, "model_name", "model",
    "data", "training", "decoding"}`, which `Recipe.from_record` takes; format 1 is converted by `upgrade_record`).

    A missing folder or config.json is `FileNotFoundError`, a file or a bad link given as the folder
    `NotADirectoryError`, another format or a damaged file (not JSON, not an object, settings missing or of the
    wrong type or value) `ValueError`, each naming the file and what to do.

    Example:
        >>> read_run_config(tempfile.mkdtemp())
        Traceback (most recent call last):
        FileNotFoundError: '...' is not a tfm run folder: config.json not found (make one with tfm train)
    """
    path = os.path.join(run_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        validate_output_path(run_dir, "run folder")
        if not os.path.exists(run_dir):
            raise FileNotFoundError(f"run folder {run_dir!r} does not exist (make one with tfm train)")
        raise FileNotFoundError(
            f"{run_dir!r} is not a tfm run folder: {CONFIG_FILE} not found (make one with tfm train)")
    restore = f"restore {CONFIG_FILE} from a copy of the run folder"
    with open(path, "rb") as f:
        data = f.read()
    try:
        info = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not text (byte {data[error.start]:#04x} at offset {error.start} is not UTF-8): "
                         f"it was overwritten or damaged; {restore}") from None
    except json.JSONDecodeError as error:
        what = "is empty (0 bytes)" if not data.strip() else f"is not valid JSON ({error})"
        raise ValueError(f"{path} {what}: it was cut short, overwritten or damaged; {restore}") from None
    if not isinstance(info, dict):
        raise ValueError(f"{path} holds a JSON {_json_kind(info)} ({_preview(info)}), not the object of settings tfm "
                         f"train writes: it was overwritten or damaged; {restore}")
    if "format" not in info:
        raise ValueError(f"{path} is not a tfm run's settings (no \"format\"; it holds {_preview(sorted(info))}): it "
                         f"was overwritten or damaged; {restore}")
    sections = ("model", "model_config", "data") if info["format"] == 1 else ("model_name", "model", "data")
    missing = [key for key in sections if key not in info]
    if info["format"] in (1, RECORD_FORMAT) and missing:
        raise ValueError(f"{path} lacks {missing}: it was edited or damaged; {restore}")
    for key in sections[1:] + ("training", "decoding"):
        if key in info and not isinstance(info[key], dict):
            raise ValueError(f"{path}: \"{key}\" holds a JSON {_json_kind(info[key])} ({_preview(info[key])}), not "
                             f"an object of settings: it was edited or damaged; {restore}")
    try:
        upgraded = upgrade_record(info)
    except ValueError as error:  # another format, said in one line
        raise ValueError(f"{run_dir!r}: {error}") from None
    if upgraded["data"].get("dataset", "numbers") != "files":  # corpus files beside another dataset: never read
        upgraded = {**upgraded, "data": {**upgraded["data"], "source_file": None, "target_file": None}}
    try:
        Recipe.from_record(upgraded)
    except (ValueError, TypeError) as error:
        raise ValueError(f"{path}: {error}: it was edited or damaged; {restore}, or put back the value tfm train "
                         "wrote") from None
    if info["format"] != RECORD_FORMAT:
        logger.info("%s: format 1 (tfm %s), read as format %d", path, info.get("tfm_version", "?"), RECORD_FORMAT)
    return upgraded


def _json_kind(value):
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "null")


def _preview(value, width=60):
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def run_record(recipe):
    """The dict config.json holds for a `tfm.config.Recipe` (JSON types only).

    Example:
        >>> sorted(run_record(Recipe.preset("tiny")))
        ['data', 'decoding', 'format', 'model', 'model_name', 'tfm_version', 'training']
    """
    return json.loads(json.dumps(recipe.to_record(__version__)))


def config_differences(stored, requested):
    """What a resume would change (empty: the same run), from the run's `stored` config.json and the `run_record`
    `requested` now: the model, the data and the training recipe (§5) but for what a session may change
    (`RESUMABLE`); not the decoding part (read when decoding).

    Example:
        >>> config_differences(run_record(Recipe.preset("tiny", d_model=16)),
        ...                    run_record(Recipe.preset("tiny", d_model=32, seed=3, beam_size=1)))
        ['model.d_model: run has 16, now 32']
    """
    if stored.get("model_name") != requested.get("model_name"):
        return [f"model: run has {stored.get('model_name')!r}, now {requested.get('model_name')!r}"]
    a = _flatten(run_record(Recipe.from_record(stored)))
    b = _flatten(requested)
    return [f"{key}: run has {a.get(key)!r}, now {b.get(key)!r}" for key in sorted(set(a) | set(b))
            if key.split(".")[0] in ("model", "data", "training") and key not in NOT_COMPARED
            and a.get(key) != b.get(key)]


def _flatten(tree, prefix=""):
    flat = {}
    for key, value in tree.items():
        flat.update(_flatten(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return flat


def load_tokenizer(run_dir, config):
    """The run's `SubwordTokenizer`; `ValueError` when it is empty or does not fit the vocabulary size of `config`,
    the run's model config. Damaged readable copies beside `sentencepiece.model` (vocab.txt, tokenizer.json, which
    tfm does not read) are said in one warning each.

    Example:
        load_tokenizer("runs/m30k", Recipe.from_record(read_run_config("runs/m30k")).model).vocab_size
    """
    folder = os.path.join(run_dir, TOKENIZER_DIR)
    from tfm.data.subword_tokenizer import MODEL_FILE, SubwordTokenizer  # TensorFlow: only when a tokenizer is read

    path = os.path.join(folder, MODEL_FILE)
    if os.path.isfile(path) and os.path.getsize(path) == 0:
        raise ValueError(f"cannot read the tokenizer {path}: the file is empty (0 bytes), cut short when it was "
                         f"written or copied; restore it from a copy of the run folder — a run cannot be used with "
                         f"another tokenizer")
    tokenizer = SubwordTokenizer.load(folder)
    if tokenizer.vocab_size != config.vocab_size:
        raise ValueError(f"{run_dir}: the tokenizer has {tokenizer.vocab_size} ids but the model "
                         f"{config.vocab_size}; the run folder is damaged")
    for problem in tokenizer.copies_problems(folder):
        logger.warning("%s; it is a readable copy that tfm does not read (the model uses %s, which is whole): "
                       "restore it from a copy of the run folder, or write it again with "
                       "tfm.data.SubwordTokenizer.load(%r).save(%r)", problem, MODEL_FILE, folder, folder)
    return tokenizer


def history_problem(path):
    """Why `path` is not a readable history.csv ("is not text (...)"), or None; a missing file has none.

    Example:
        >>> path = os.path.join(tempfile.mkdtemp(), HISTORY_FILE)
        >>> write_atomic(path, b"\\x1f\\x8b\\x08 compressed")
        >>> history_problem(path)
        'is not text (byte 0x8b at offset 1 is not UTF-8: a compressed or binary file?)'
    """
    return _parse(path)[1] if os.path.isfile(path) else None


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


def read_rows(path):
    """The rows of a history.csv (dicts of str; a missing file has none) that have an integer epoch; a file that is
    not a history.csv (`history_problem`) is `ValueError`, naming it and what to do.

    Example:
        >>> path = os.path.join(tempfile.mkdtemp(), HISTORY_FILE)
        >>> write_rows(path, [{"epoch": 0, "loss": 2.5}, {"epoch": "?", "loss": 9}]), read_rows(path)
        (None, [{'epoch': '0', 'loss': '2.5'}])
    """
    if not os.path.isfile(path):
        return []
    rows, problem = _parse(path)
    if problem is not None:
        raise ValueError(f"{path} {problem}: it was overwritten or damaged; restore it from a copy of the run folder "
                         f"(the next tfm train of the run keeps it aside and rebuilds it)")
    good = []
    for row in rows:
        with contextlib.suppress(TypeError, ValueError):
            int(row.get("epoch", ""))
            good.append(row)
    return good


def write_rows(path, rows):
    """Rewrites a history.csv whole or not at all from `rows` (dicts, column -> value; a column a row lacks is
    empty); columns in order of first appearance, `\\n` line ends.

    Example:
        >>> path = os.path.join(tempfile.mkdtemp(), HISTORY_FILE)
        >>> write_rows(path, [{"epoch": 0, "loss": 2.5}, {"epoch": 1, "val_loss": 2.0}])
        >>> open(path).read()
        'epoch,loss,val_loss\\n0,2.5,\\n1,,2.0\\n'
    """
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=_columns(rows), restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())


def _columns(rows):
    columns = ["epoch"]
    for row in rows:
        columns += [key for key in row if key not in columns]
    return columns


def read_history(run_dir):
    """`RUN/history.csv` as `{column: [value per finished epoch]}` (epoch as int, the rest float; missing: nan; no
    file: empty).

    Example:
        >>> run = tempfile.mkdtemp()
        >>> write_rows(os.path.join(run, HISTORY_FILE), [{"epoch": 0, "loss": 2.5}, {"epoch": 1, "val_loss": 2.0}])
        >>> read_history(run)
        {'epoch': [0, 1], 'loss': [2.5, nan], 'val_loss': [nan, 2.0]}
    """
    rows = read_rows(os.path.join(run_dir, HISTORY_FILE))
    if not rows:
        return {}
    return {column: [int(row["epoch"]) for row in rows] if column == "epoch" else
            [float(row[column]) if row.get(column) not in (None, "") else float("nan") for row in rows]
            for column in _columns(rows)}


HISTORY_COLUMNS = ("epoch", "loss", "accuracy", "val_loss", "val_accuracy", "learning_rate")


def format_history(history, columns=HISTORY_COLUMNS, every=1):
    """A training log as a text table (12 characters a column): the first epoch, every `every`-th and the last, of
    `read_history(run)` or any `{column: [value per epoch]}` with an "epoch" column (Keras' 0-based index: the table
    counts epochs finished, from 1); `columns` are shown in order, those the history has.

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
