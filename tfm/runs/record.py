"""config.json, a run's record of its settings: read and checked (`read_run_config`), turned back into the
model and data configs (`model_config_from_info`, `data_config_from_info`), written (`run_record`) and
compared with the settings a resume asks for (`config_differences`).

    RUN/config.json    {"tfm_version", "format": 1, "model", "model_config", "data", "training"}

A damaged file is refused in one line that names it and says what to do: not JSON, a JSON value of another
type than an object, or settings of the wrong type or value. `tfm.runs.folder` re-exports these names.

Example:
    >>> import os, tempfile
    >>> from tfm.runs.example import write_example_run
    >>> run = write_example_run(os.path.join(tempfile.mkdtemp(), "run"))
    >>> info = read_run_config(run)
    >>> info["model"], model_config_from_info(info).d_model, data_config_from_info(info).dataset
    ('transformer', 16, 'numbers')
"""

import json
import os

from tfm import __version__
from tfm.config.configs import DataConfig
from tfm.models.registry import config_class
from tfm.runs.layout import CONFIG_FILE, FORMAT, NOT_COMPARED
from tfm.runs.paths import validate_output_path


def read_run_config(run_dir):
    """The parsed `RUN/config.json`, checked to be a run folder of this format.

    Args:
        run_dir: str. The run folder.

    Returns:
        dict: the parsed config.json.

    Raises:
        FileNotFoundError: no such folder, or no config.json.
        NotADirectoryError: `run_dir` is a file; a symbolic link loop or dangling link is named too.
        ValueError: another format version, or a damaged file (not JSON, a JSON value of another type than an
            object, settings missing or of the wrong type or value), named with what to do.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> info = read_run_config(run)
        >>> info["format"], info["model"], info["model_config"]["d_model"]
        (1, 'transformer', 16)
        >>> read_run_config(tmp.name)
        Traceback (most recent call last):
        ...
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
    fmt = info["format"]
    if fmt != FORMAT:
        raise ValueError(
            f"{run_dir!r} is a run folder of format {fmt!r} (made by tfm {info.get('tfm_version', '?')}), but tfm "
            f"{__version__} reads format {FORMAT}; use that tfm version or train into a new --output folder")
    missing = [key for key in ("model", "model_config", "data") if key not in info]
    if missing:
        raise ValueError(f"{path} lacks {missing}: it was edited or damaged; {restore}")
    for key in ("model_config", "data"):
        if not isinstance(info[key], dict):
            raise ValueError(f"{path}: \"{key}\" holds a JSON {_json_kind(info[key])} ({_preview(info[key])}), not "
                             f"an object of settings: it was edited or damaged; {restore}")
    for what, read in (("model_config", model_config_from_info), ("data", data_config_from_info)):
        try:
            read(info)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path}: {what} {error}: it was edited or damaged; {restore}, or put back the value "
                             f"tfm train wrote") from None
    return info


def _json_kind(value):
    for kind, name in ((bool, "boolean"), ((int, float), "number"), (str, "string"), (list, "array"),
                       (dict, "object")):
        if isinstance(value, kind):
            return name
    return "null"


def _preview(value, width=60):
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def model_config_from_info(info):
    """The model config dataclass stored in a parsed config.json.

    Runs written before the RNN configs carried their data settings store
    `max_length` / `tokens_per_batch` only under `data`; they are taken from there.

    Args:
        info: dict. A parsed config.json (`read_run_config`).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> model_config_from_info(read_run_config(run)).num_layers
        1
    """
    values = dict(info["model_config"])
    for key in ("max_length", "tokens_per_batch"):
        if key not in values and key in info.get("data", {}):
            values[key] = info["data"][key]
    return config_class(info["model"]).from_dict(values, ignore_unknown=True)


def data_config_from_info(info):
    """The `DataConfig` stored in a parsed config.json.

    Runs written before tfm refused `--source-file` / `--target-file` beside another `--dataset` may hold
    them; they were never read, and are dropped.

    Args:
        info: dict. A parsed config.json (`read_run_config`).

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> data_config_from_info(read_run_config(run)).dataset
        'numbers'
    """
    values = dict(info["data"])
    if values.get("dataset", DataConfig.dataset) != "files":
        values.update(source_file=None, target_file=None)
    return DataConfig.from_dict(values, ignore_unknown=True)


def run_record(model, model_config, data, training):
    """The dict config.json holds (JSON types only).

    Args:
        model: str. "transformer" or an RNN baseline's name (`tfm.models.registry.model_name`).
        model_config: the model config dataclass.
        data: `DataConfig`.
        training: `TrainingConfig`.

    Example:
        >>> from tfm.config import TrainingConfig, TransformerConfig
        >>> record = run_record("transformer", TransformerConfig.tiny(), DataConfig(), TrainingConfig())
        >>> sorted(record)
        ['data', 'format', 'model', 'model_config', 'tfm_version', 'training']
    """
    return json.loads(json.dumps({"tfm_version": __version__, "format": FORMAT, "model": model,
                                  "model_config": model_config.to_dict(), "data": data.to_dict(),
                                  "training": training.to_dict()}))


def _flatten(tree, prefix=""):
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def config_differences(stored, requested):
    """`["model_config.d_model: run has 64, now 128", ...]`: what a resume would change (empty = same run).

    Args:
        stored: dict. The run's parsed config.json.
        requested: dict. `run_record` of the settings asked for now.

    Example:
        >>> import os, tempfile
        >>> from tfm.runs.example import write_example_run
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run = write_example_run(os.path.join(tmp.name, "run"))
        >>> import dataclasses
        >>> from tfm.config import TrainingConfig
        >>> stored = read_run_config(run)
        >>> config = model_config_from_info(stored)
        >>> wider = dataclasses.replace(config, d_model=32)
        >>> requested = run_record("transformer", wider, data_config_from_info(stored), TrainingConfig())
        >>> config_differences(stored, requested)
        ['model_config.d_model: run has 16, now 32']
    """
    if stored.get("model") != requested.get("model"):
        return [f"model: run has {stored.get('model')!r}, now {requested.get('model')!r}"]
    normalised = {"model": stored["model"], "model_config": model_config_from_info(stored).to_dict(),
                  "data": data_config_from_info(stored).to_dict()}
    a = _flatten(json.loads(json.dumps(normalised)))
    b = _flatten({k: requested.get(k) for k in ("model", "model_config", "data")})
    return [f"{key}: run has {a.get(key)!r}, now {b.get(key)!r}"
            for key in sorted(set(a) | set(b)) if key not in NOT_COMPARED and a.get(key) != b.get(key)]
