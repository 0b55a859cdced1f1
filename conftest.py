"""What every `Example:` of tfm may use without importing it (`pytest --doctest-modules tfm`, which `make test`
runs): `tf`, `np`, `keras`, `ops`, `tempfile`, `os`. Anything else an example imports itself, so a reader can
paste it."""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest


@pytest.fixture(autouse=True)
def _doctest_globals(request):
    """The names above, and each example starting in float32 with a fixed seed (as the tests do)."""
    if not isinstance(request.node, pytest.DoctestItem):
        yield
        return
    import tempfile

    import keras
    import numpy as np
    import tensorflow as tf
    from keras import ops

    # The exercises' examples print English; a reader's TFM_LANG=ko (tfm.exercises) must not change them.
    request.getfixturevalue("monkeypatch").delenv("TFM_LANG", raising=False)
    namespace = request.getfixturevalue("doctest_namespace")
    namespace.update(tf=tf, np=np, keras=keras, ops=ops, tempfile=tempfile, os=os)
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(0)
    yield
    keras.config.set_dtype_policy("float32")
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # an example's figure is shown, not kept: one worker runs every viz example
        pyplot.close("all")
