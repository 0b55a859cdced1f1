"""The run folder that `tfm train` writes and every later command reads; it builds no model. Names are imported on
first use (PEP 562): `import tfm.runs` starts no TensorFlow.

    files.py        file names, writes that land whole or not at all, the output-path rule, the lock
    record.py       config.json (the run's settings), tokenizer/, history.csv
    checkpoints.py  weights files written, checked and loaded; which weights a run gives (`weights_path`)
    resume.py       where an interrupted run stands, and its backup

Example:
    >>> import tfm.runs
    >>> tfm.runs.CONFIG_FILE, tfm.runs.HISTORY_FILE
    ('config.json', 'history.csv')
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

_EXPORTS = {
    **dict.fromkeys(("AVERAGED", "AVERAGING_RECORD", "BACKUP_DIR", "CHECKPOINT_DIR", "CONFIG_FILE", "EPOCH_CHECKPOINT",
                     "HISTORY_FILE", "HYPS_DIR", "LOCK_FILE", "LOG_DIR", "TEMPORARY", "TOKENIZER_DIR",
                     "WORKERS_DIR", "RunInUseError", "WriteError", "cause", "describe_run_file", "fsync_path",
                     "is_run_folder", "is_running", "lock_run", "make_folder", "refuse_run_file", "remove_entry",
                     "remove_leftovers", "remove_temporaries", "validate_fresh_folder", "validate_output_file",
                     "validate_output_path", "validate_writable", "write_atomic", "write_json_atomic"),
                    "tfm.runs.files"),
    **dict.fromkeys(("HISTORY_COLUMNS", "NOT_COMPARED", "RESUMABLE", "config_differences", "format_history",
                     "history_problem", "load_tokenizer", "read_history", "read_rows", "read_run_config", "run_record",
                     "write_rows"), "tfm.runs.record"),
    **dict.fromkeys(("averaging_record", "epoch_checkpoints", "file_digest", "latest_checkpoint", "load_weights",
                     "save_weights", "verify_weights", "weights_path", "weights_problem", "weights_record"),
                    "tfm.runs.checkpoints"),
    **dict.fromkeys(("BACKUP_METADATA", "BACKUP_WEIGHTS", "Standing", "epochs_on_disk", "verify_backup",
                     "verify_history", "where_run_stands"), "tfm.runs.resume"),
}
_SUBMODULES = ("checkpoints", "files", "record", "resume")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
