"""tfm.training.distribute: the precision policy (its warning where bfloat16 is emulated; which CPUs compute it in
hardware is tests/models/test_quantization.py), and who answers a worker waiting for its cluster."""

import logging

import pytest

from tfm.training import distribute


def test_mixed_precision_on_an_emulating_cpu_warns(monkeypatch, caplog):
    monkeypatch.setattr(distribute.tf.config, "list_logical_devices", lambda kind=None: [])
    monkeypatch.setattr(distribute, "cpu_has_native_bfloat16", lambda: False)
    with caplog.at_level(logging.WARNING, logger="tfm.training.distribute"):
        assert distribute.precision_policy(True) == "mixed_bfloat16"
    assert "no hardware bfloat16" in caplog.text
    caplog.clear()
    monkeypatch.setattr(distribute, "cpu_has_native_bfloat16", lambda: True)
    with caplog.at_level(logging.WARNING, logger="tfm.training.distribute"):
        assert distribute.precision_policy(True) == "mixed_bfloat16"
        assert distribute.precision_policy(False) == "float32"
    assert caplog.text == ""


def test_native_mixed_precision_on_a_gpu_or_a_bfloat16_cpu_only(monkeypatch):
    """The `--precision auto` rule: a GPU, or a CPU whose flags say bfloat16 is computed in hardware; an
    emulating CPU and one whose flags cannot be read train in float32."""
    for gpus, native, expected in (([], True, True), ([], False, False), ([], None, False), (["GPU:0"], False, True),
                                   (["GPU:0"], None, True)):
        monkeypatch.setattr(distribute.tf.config, "list_logical_devices", lambda kind=None, gpus=gpus: gpus)
        monkeypatch.setattr(distribute, "cpu_has_native_bfloat16", lambda native=native: native)
        assert distribute.native_mixed_precision() is expected, (gpus, native)


def test_a_connection_that_reached_itself_is_no_answer_from_a_missing_local_task(monkeypatch):
    import socket

    from training_helper import free_ports

    own, missing = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{own}", f"127.0.0.1:{missing}"]}

    def self_connect(address, timeout=None):  # what TCP may do when nothing listens on a local port
        connection = socket.socket()
        connection.bind(address)
        connection.connect(address)
        return connection

    monkeypatch.setattr(socket, "create_connection", self_connect)
    assert distribute._answers(f"127.0.0.1:{missing}", 1) is False
    with pytest.raises(TimeoutError, match=f"no answer from worker 1 at 127.0.0.1:{missing}"):
        distribute.wait_for_cluster(cluster, "worker", 0, timeout=0.2, poll=0.05)
    monkeypatch.undo()

    listener = socket.create_server(("127.0.0.1", 0))  # a task that listens does answer
    present = listener.getsockname()[1]
    try:
        assert distribute._answers(f"127.0.0.1:{present}", 1) is True
        distribute.wait_for_cluster({"worker": [f"127.0.0.1:{own}", f"127.0.0.1:{present}"]}, "worker", 0,
                                    timeout=5, poll=0.05)
    finally:
        listener.close()
