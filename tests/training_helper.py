"""Runs `tfm.training.train` in a fresh process for tests/test_training.py.

Strategies that must be configured before TensorFlow starts (logical CPU devices,
`MultiWorkerMirroredStrategy` from `TF_CONFIG`) need their own process:

    python tests/training_helper.py '{"logical_cpus": 2, "result": "out.json",
                                      "config": {...TransformerConfig.tiny overrides...},
                                      "train": {...keyword arguments of train...}}'

Writes `{"history": ..., "replicas": ...}` to `result`.
"""

import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(spec):
    import tensorflow as tf

    if spec.get("logical_cpus"):
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * int(spec["logical_cpus"]))

    from tfm.config import TransformerConfig
    from tfm.training import train

    result = train(TransformerConfig.tiny(**spec.get("config", {})), **spec["train"])
    replicas = result.model.distribute_strategy.num_replicas_in_sync
    with open(spec["result"], "w") as f:
        json.dump({"history": result.history, "replicas": replicas}, f)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
