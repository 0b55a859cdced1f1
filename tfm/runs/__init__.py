"""The run folder: what `tfm train` writes and every later command reads, shared by training and inference
(so inference never imports training).

    folder.py       the files of a run (config.json, tokenizer/, checkpoints/, history.csv) and `load_run`: a run's
                    model, tokenizer and record, ready to translate (it re-exports the names of the modules below)
    record.py       config.json, the run's settings: read and checked, turned back into configs, compared
    checkpoints.py  the epoch checkpoints and the averaged weights: listed, and what --checkpoint names
    lifecycle.py    a new run's folder checked, cleaned of what a killed session left, made, and locked
    layout.py       the names of its files and folders, written once
    paths.py        the one rule for every path tfm writes: checked before any work, never a run's own file
    weights.py      weights files: what is wrong with one, said in one line; `load_weights`, which checks first
    atomic.py       writes that land whole or not at all (temporary sibling, fsync, rename), and their errors
    history.csv     `history.py`: one row per epoch, read and written here
    resume.py       where an interrupted run stands, and its backup
    example.py      `write_example_run`: a small run folder made without training, for examples and tests
    published.py    a notebook's run beside its published copy's (machine, epochs, scores): what a budgeted run prints

Names are imported on first use (PEP 562): `import tfm.runs` starts no TensorFlow.

Example:
    >>> import tfm.runs
    >>> tfm.runs.CONFIG_FILE, tfm.runs.HISTORY_FILE
    ('config.json', 'history.csv')
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

_EXPORTS = {
    **dict.fromkeys(("AVERAGED", "CONFIG_FILE", "CHECKPOINT_DIR", "TOKENIZER_DIR", "load_run", "load_tokenizer",
                     "load_weights", "verify_weights", "weights_problem", "weights_record"),
                    "tfm.runs.folder"),
    **dict.fromkeys(("config_differences", "data_config_from_info", "read_run_config", "run_record"),
                    "tfm.runs.record"),
    **dict.fromkeys(("epoch_checkpoints", "latest_checkpoint", "resolve_checkpoint"), "tfm.runs.checkpoints"),
    **dict.fromkeys(("RunInUseError", "lock_run"), "tfm.runs.lifecycle"),
    **dict.fromkeys(("HISTORY_COLUMNS", "HISTORY_FILE", "format_history", "history_problem", "read_history"),
                    "tfm.runs.history"),
    **dict.fromkeys(("WriteError", "cause", "model_record", "save_weights", "write_atomic", "write_json_atomic"),
                    "tfm.runs.atomic"),
    **dict.fromkeys(("machine_description", "print_beside_published", "published_summary"), "tfm.runs.published"),
}
_SUBMODULES = ("atomic", "checkpoints", "example", "folder", "history", "layout", "lifecycle", "paths", "published",
               "record", "resume", "weights")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
