"""Faults met while a run folder is written, as a careless user meets them (issue 23).

Each case ends in one line naming the file or folder and the cause, exit status 1 (130 / 143 for
Ctrl-C / SIGTERM); nothing half-written is left where a later session would trust it; and the
same command then resumes with a continuous history. A file-size limit is real (`RLIMIT_FSIZE` in a
child process); a full disk and a read-only folder are simulated (the tests run as root, whom
`chmod` does not stop) at the lowest call that meets them: `os.fsync`, `open`, `os.open`.
"""

import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import keras
import pytest
from training_helper import ROOT, child_env, copy_run, fail_fsync, free_ports, train_argv

from tfm import runs
from tfm.cli import commands as cli
from tfm.cli.exits import EXIT_INTERRUPTED, EXIT_TERMINATED
from tfm.runs import files

CHILD_TIMEOUT = 300


def temporaries(run_dir):
    return [os.path.join(folder, name) for folder, dirs, files in os.walk(run_dir) for name in dirs + files
            if runs.TEMPORARY.search(name)]


def checkpoint_epochs(run_dir):
    return [epoch for epoch, _ in runs.epoch_checkpoints(run_dir)]


# 1, 5: writes that fail ------------------------------------------------------------
def test_a_file_size_limit_stops_the_backup_write_and_the_run_resumes(finished_run, tmp_path):
    """ulimit -f between the size of an epoch checkpoint and of the backup (weights + Adam's moments): once a
    traceback, a segfault, and a truncated backup/latest.weights.h5 that every later session loaded and died on."""
    run_dir = str(tmp_path / "run")
    checkpoint = os.path.getsize(runs.latest_checkpoint(finished_run))
    backup = os.path.getsize(os.path.join(finished_run, runs.BACKUP_DIR, "latest.weights.h5"))
    limit = (checkpoint + backup) // 2
    assert checkpoint < limit < backup

    # `ulimit -f` then exec (not preexec_fn: this process runs TensorFlow's threads, unsafe to fork into Python).
    limited = (f"import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
               "os.execv(sys.executable, [sys.executable, '-m', 'tfm.cli', *sys.argv[1:]])")
    done = subprocess.run([sys.executable, "-c", limited, *train_argv(run_dir, 2)], cwd=ROOT, env=child_env(),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 1, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == (f"tfm train: error: cannot write {run_dir}/backup/latest.weights.h5: the file would exceed the "
                    f"file-size limit set by ulimit -f (EFBIG)")
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    assert temporaries(run_dir) == [] and os.listdir(os.path.join(run_dir, runs.BACKUP_DIR)) == []
    assert checkpoint_epochs(run_dir) == [1]

    assert cli.main(train_argv(run_dir, 2)) == 0  # the limit lifted: resumed from epoch_001
    history = runs.read_history(run_dir)
    assert history["epoch"] == [0, 1] and history["iterations"] == [2, 4]
    assert checkpoint_epochs(run_dir) == [1, 2]


@pytest.mark.parametrize("name", ["epoch_003.weights.h5", "backup/", "history.csv"])
def test_a_full_disk_during_an_epochs_files_loses_that_epoch_only(finished_run, tmp_path, monkeypatch, capsys, name):
    run_dir = copy_run(finished_run, tmp_path)
    before = runs.read_history(run_dir)
    fail_fsync(monkeypatch, errno.ENOSPC, name)
    assert cli.main(train_argv(run_dir, 3)) == 1
    err = capsys.readouterr().err
    assert err.strip().startswith(f"tfm train: error: cannot write {run_dir}/") and name.rstrip("/") in err
    assert err.strip().endswith(": the disk is full (ENOSPC)") and len(err.strip().splitlines()) == 1
    assert temporaries(run_dir) == []
    assert runs.read_history(run_dir)["epoch"][:2] == [0, 1]

    monkeypatch.undo()
    assert cli.main(train_argv(run_dir, 3)) == 0  # space again: epoch 3 (trained again if need be)
    history = runs.read_history(run_dir)
    assert history["epoch"] == [0, 1, 2] and history["iterations"] == [2, 4, 6]
    assert history["loss"][:2] == before["loss"]
    assert checkpoint_epochs(run_dir) == [1, 2, 3]


def test_stale_temporary_files_are_removed_at_start(finished_run, tmp_path):
    run_dir = copy_run(finished_run, tmp_path)
    dead = 2**22 + 4321  # above the default pid_max: no such process
    stale = [os.path.join(run_dir, runs.CHECKPOINT_DIR, f".tmp{dead}.epoch_003.weights.h5"),
             os.path.join(run_dir, runs.BACKUP_DIR, f".tmp{dead}.latest.weights.h5")]
    for path in stale:
        with open(path, "wb") as f:
            f.write(b"\x89HDF\r\n\x1a\n")  # the start of an HDF5 file
    assert cli.main(train_argv(run_dir, 2)) == 0  # nothing to train, but the folder is cleaned
    assert temporaries(run_dir) == []


# 6: a read-only folder --------------------------------------------------------------------
def read_only(monkeypatch, folder):
    """Writing under `folder` fails with EROFS, as on a file system mounted read-only (for tfm's writers)."""
    folder = os.path.abspath(folder)

    def refuse(path):
        if os.path.abspath(os.fspath(path)).startswith(folder):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))

    real_open, real_os_open, real_makedirs = open, os.open, os.makedirs

    def guarded_open(path, mode="r", *args, **kwargs):
        if any(flag in mode for flag in "wax+"):
            refuse(path)
        return real_open(path, mode, *args, **kwargs)

    def guarded_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    def guarded_makedirs(path, *args, **kwargs):
        if not os.path.isdir(path):
            refuse(path)
        return real_makedirs(path, *args, **kwargs)

    monkeypatch.setattr(files, "open", guarded_open, raising=False)  # tfm's writer of whole-or-nothing files
    monkeypatch.setattr(os, "open", guarded_os_open)
    monkeypatch.setattr(os, "makedirs", guarded_makedirs)


def listing(folder):
    return sorted((os.path.relpath(os.path.join(d, f), folder), os.path.getmtime(os.path.join(d, f)))
                  for d, _, files in os.walk(folder) for f in files)


def test_a_read_only_run_folder_is_named_by_every_command(finished_run, tmp_path, monkeypatch, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    before = listing(run_dir)
    read_only(monkeypatch, tmp_path)
    lock = os.path.join(run_dir, runs.LOCK_FILE)
    cases = [(train_argv(run_dir, 3), f"cannot write {lock}"),  # resume
             (train_argv(str(empty), 1), f"cannot write {empty / runs.LOCK_FILE}"),  # a new run
             (["average", "--run", run_dir], f"cannot write {run_dir}/checkpoints/averaged.weights.h5")]
    for argv, message in cases:
        assert cli.main(argv) == 1, argv
        err = capsys.readouterr().err.strip()
        assert err == f"tfm {argv[0]}: error: {message}: the file system is read-only (EROFS)"
    assert listing(run_dir) == before and os.listdir(empty) == []


def test_evaluate_prints_the_scores_before_saying_the_hypotheses_cannot_be_written(finished_run, tmp_path,
                                                                                    monkeypatch, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    read_only(monkeypatch, run_dir)
    assert cli.main(["evaluate", "--run", run_dir, "--split", "val", "--limit", "3", "--beam-size", "1"]) == 1
    captured = capsys.readouterr()
    assert "BLEU" in captured.out and "chrF" in captured.out  # the scores, decoded once, are not lost
    assert captured.err.strip() == (f"tfm evaluate: error: the scores above are not saved, nor the hypotheses: "
                                    f"cannot write {run_dir}/hyps: the file system is read-only (EROFS); fix that "
                                    f"and run the same command again to save both")


def test_an_export_into_a_read_only_folder_is_one_line(finished_run, tmp_path, monkeypatch, capsys):
    import tensorflow as tf

    target = str(tmp_path / "exported" / "1")

    def refuse(*args, **kwargs):  # what tf.saved_model.save raises on a read-only mount
        raise tf.errors.PermissionDeniedError(None, None, f"{target}; Read-only file system")

    monkeypatch.setattr(tf.saved_model, "save", refuse)
    assert cli.main(["export", "--run", finished_run, "--output", target]) == 1
    assert capsys.readouterr().err.strip() == f"tfm export: error: cannot write {target}: Read-only file system"


# 2: two writers ----------------------------------------------------------------------------
def test_a_second_training_of_the_same_folder_is_refused_with_the_first_ones_pid(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    before = listing(run_dir)
    with runs.lock_run(run_dir):  # a `tfm train` at work (flock: any other open file description is refused)
        assert cli.main(train_argv(run_dir, 3)) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tfm train: error: {run_dir} is in use by PID {os.getpid()} (started ")
    assert err.endswith("; wait for it to finish or pick another --output")
    assert [entry for entry in listing(run_dir) if entry[0] != runs.LOCK_FILE] == \
        [entry for entry in before if entry[0] != runs.LOCK_FILE]
    assert cli.main(train_argv(run_dir, 2)) == 0  # released


# 7: SIGTERM ---------------------------------------------------------------------------------
def test_sigterm_stops_training_like_ctrl_c_and_the_run_resumes(finished_run, tmp_path, monkeypatch, capsys):
    import tfm.training

    class Terminate(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            os.kill(os.getpid(), signal.SIGTERM)  # what `timeout`, `kill` or a scheduler sends

    real_train = tfm.training.train
    monkeypatch.setattr(tfm.training.trainer, "train", lambda *a, **k: real_train(*a, callbacks=[Terminate()], **k))
    run_dir = copy_run(finished_run, tmp_path)
    handler = signal.getsignal(signal.SIGTERM)
    assert cli.main(train_argv(run_dir, 3)) == EXIT_TERMINATED
    err = capsys.readouterr().err
    assert "tfm train: stopped by SIGTERM" in err and "keeps 2 finished epochs" in err and "resume" in err
    assert signal.getsignal(signal.SIGTERM) is handler  # given back
    monkeypatch.setattr(tfm.training.trainer, "train", real_train)
    assert cli.main(train_argv(run_dir, 3)) == 0
    assert runs.read_history(run_dir)["epoch"] == [0, 1, 2]


# 4: a multi-worker cluster that never assembles -----------------------------------------------
def _as_in_a_terminal():
    """The child starts with Ctrl-C's default action, as a command typed in a terminal does. A suite started in
    the background (`make test &` from a script) runs with SIGINT ignored; an ignored signal stays ignored across
    exec, and Python then installs no KeyboardInterrupt handler, so the Ctrl-C case would test the launcher."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def waiting_worker(tmp_path, timeout):
    """`tfm train --strategy multiworker` as worker 0 of two, as `(process, peer)`; worker 1 never starts.

    Worker 1's port stays bound here, not listening, until the process is killed: connections to it are refused,
    and no other process (a test running beside this one) can take that port and answer for worker 1.
    """
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        ports = [free_ports(1)[0], held.getsockname()[1]]
        tf_config = json.dumps({"cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
                                "task": {"type": "worker", "index": 0}})
        argv = train_argv(tmp_path / "run", 1, "--worker-timeout", str(timeout))
        argv[argv.index("--strategy") + 1] = "multiworker"
        process = subprocess.Popen([sys.executable, "-m", "tfm.cli", *argv], cwd=ROOT,
                                   env=child_env(TF_CONFIG=tf_config), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, preexec_fn=_as_in_a_terminal)
        try:
            yield process, f"worker 1 at 127.0.0.1:{ports[1]}"
        finally:
            process.kill()
            process.communicate()


def test_a_multi_worker_cluster_that_never_assembles_gives_up_naming_the_missing_worker(tmp_path):
    with waiting_worker(tmp_path, timeout=2) as (process, peer):
        _, err = process.communicate(timeout=CHILD_TIMEOUT)
    assert process.returncode == 1, err[-3000:]
    assert f"waits for {peer}" in err
    assert err.strip().splitlines()[-1].startswith(
        f"tfm train: error: the cluster of TF_CONFIG did not assemble within 2 s: no answer from {peer}.")
    assert "Traceback" not in err


@pytest.mark.parametrize("sig, status, said", [(signal.SIGTERM, EXIT_TERMINATED, "stopped by SIGTERM"),
                                               (signal.SIGINT, EXIT_INTERRUPTED, "interrupted")])
def test_waiting_for_the_cluster_honours_sigterm_and_ctrl_c(tmp_path, sig, status, said):
    with waiting_worker(tmp_path, timeout=600) as (process, peer):
        waited = ""
        while f"waits for {peer}" not in waited:  # the first line it writes once TensorFlow has started
            line = process.stderr.readline()
            assert line, f"exited before waiting: {process.poll()}"
            waited += line
        start = time.monotonic()
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
    assert process.returncode == status and time.monotonic() - start < 30, err[-3000:]
    assert f"tfm train: {said}" in err and "Traceback" not in err


# 8: messages that once misled -------------------------------------------------------------------
def test_invalid_tf_config_is_named(tmp_path, monkeypatch, capsys):
    argv = train_argv(tmp_path / "run", 1)
    argv[argv.index("--strategy") + 1] = "multiworker"
    for value, message in [('{"cluster": {"worker": ["a:1"]}', "the TF_CONFIG environment variable is not valid JSON"),
                           ('{"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}',
                            "TF_CONFIG's \"task\" must name a job of its cluster (worker) and an index in it"),
                           ('{"cluster": {"worker": ["nohost"]}, "task": {"type": "worker", "index": 0}}',
                            "TF_CONFIG needs a \"cluster\" of chief or worker tasks")]:
        monkeypatch.setenv("TF_CONFIG", value)
        assert cli.main(argv) == 1
        assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_deleted_checkpoints_are_not_called_an_unfinished_run(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    shutil.rmtree(os.path.join(run_dir, runs.CHECKPOINT_DIR))
    assert cli.main(["translate", "--run", run_dir, "seven"]) == 1
    err = capsys.readouterr().err
    assert "is missing, yet history.csv records 2 finished epochs: the checkpoints were deleted or moved" in err
    assert "has not finished an epoch" not in err


def test_a_deleted_config_is_named_with_what_the_run_holds(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    os.remove(os.path.join(run_dir, runs.CONFIG_FILE))
    os.makedirs(os.path.join(run_dir, runs.HYPS_DIR))
    assert cli.main(train_argv(run_dir, 3)) == 1
    assert ("holds a tfm run (backup/, checkpoints/, history.csv, hyps/) but its config.json is missing (deleted "
            "or moved)") in capsys.readouterr().err
    assert checkpoint_epochs(run_dir) == [1, 2]  # nothing trained over it


def test_paths_that_are_not_run_folders_are_named(finished_run, tmp_path, capsys):
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    assert cli.main(train_argv(loop, 1)) == 1
    assert "is a symbolic link loop" in capsys.readouterr().err
    assert cli.main(["translate", "--run", str(loop), "seven"]) == 1
    assert "is a symbolic link loop" in capsys.readouterr().err
    config = os.path.join(finished_run, runs.CONFIG_FILE)
    assert cli.main(["translate", "--run", config, "seven"]) == 1
    assert f"run folder {config!r} is a file, not a folder" in capsys.readouterr().err


def test_an_empty_tokenizer_file_says_so(finished_run, tmp_path, capsys):
    run_dir = copy_run(finished_run, tmp_path)
    open(os.path.join(run_dir, runs.TOKENIZER_DIR, "sentencepiece.model"), "wb").close()
    assert cli.main(["translate", "--run", run_dir, "seven"]) == 1
    err = capsys.readouterr().err
    assert "sentencepiece.model: the file is empty (0 bytes)" in err and "got bytes" not in err


def test_an_offline_multi30k_download_is_one_line(tmp_path, monkeypatch, capsys):
    def offline(*args, **kwargs):
        raise Exception("URL fetch failure on https://...: None -- [Errno -2] Name or service not known")

    monkeypatch.setattr(keras.utils, "get_file", offline)
    assert cli.main(["train", "--dataset", "multi30k", "--data-dir", str(tmp_path / "data"),
                     "--output", str(tmp_path / "run"), "--epochs", "1"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("tfm train: error: could not download") and "copy the Multi30k raw .gz files" in err
    assert len(err.splitlines()) == 1


# 9: small ones ----------------------------------------------------------------------------------
def test_history_csv_has_no_carriage_returns(finished_run):
    with open(os.path.join(finished_run, runs.HISTORY_FILE), "rb") as f:
        assert b"\r" not in f.read()
