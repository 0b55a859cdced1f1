"""The run folder's layout: its file and folder names, written once (`tfm.runs.folder`, `tfm.runs.record`,
`tfm.runs.checkpoints`, `tfm.runs.lifecycle`, `tfm.runs.paths` and `tfm.runs.weights` read them here).

Example:
    >>> CONFIG_FILE, CHECKPOINT_DIR, bool(EPOCH_CHECKPOINT.match("epoch_003.weights.h5"))
    ('config.json', 'checkpoints', True)
"""

import re

from tfm.runs.history import HISTORY_FILE

FORMAT = 1  # version of the run folder layout (config.json "format")
CONFIG_FILE = "config.json"
TOKENIZER_DIR = "tokenizer"
CHECKPOINT_DIR = "checkpoints"
BACKUP_DIR = "backup"
LOG_DIR = "logs"
WORKERS_DIR = "workers"  # non-chief workers of a multi-worker run keep their backups here
HYPS_DIR = "hyps"  # tfm evaluate's outputs
LOCK_FILE = ".lock"
AVERAGED = "averaged.weights.h5"
AVERAGING_RECORD = ".averaging.json"  # tfm average's record of the epochs averaged: `<weights file>.averaging.json`
EPOCH_CHECKPOINT = re.compile(r"^epoch_(\d+)\.weights\.h5$")
RUN_ENTRIES = {CONFIG_FILE, HISTORY_FILE, TOKENIZER_DIR, CHECKPOINT_DIR, BACKUP_DIR, LOG_DIR, WORKERS_DIR, HYPS_DIR,
               LOCK_FILE}
# What a run has made; found without config.json, they say it was deleted (a first session killed before
# config.json was written leaves only tokenizer/, logs/ or temporary files).
RUN_PRODUCTS = (HISTORY_FILE, CHECKPOINT_DIR, BACKUP_DIR, HYPS_DIR)
TEMPORARY = re.compile(r"^\.tmp(\d+)|\.tmp(\d+)$")  # `.tmpPID.name` (and `name.tmpPID` of earlier versions)
# Fields compared when a RUN is reused; the rest (a cache location, the learned vocabulary size) may move.
NOT_COMPARED = {"data.data_dir", "data.vocab_size", "model_config.vocab_size"}
