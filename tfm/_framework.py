"""The private Keras and TensorFlow names tfm relies on, each in one function here: why, and what it was checked with.

Where TensorFlow, tf-text or Keras has a public API, tfm uses it; these three have none. Each is checked against
tensorflow 2.21.0, tensorflow-text 2.21.1 and keras 3.15.1 (`CHECKED_WITH`); tests/test_framework.py fails, naming
the function, when an upgrade removes or changes the name it reads.

    in_xla_context()             TensorFlow's `control_flow_util.GraphOrParentsInXlaContext` (tensorflow.python)
    forget_distribute_strategy(model)   Keras' `Model._distribute_strategy`, set to None
    sentencepiece_resource(model, shared_name)   tf-text's generated `sentencepiece_op` (tensorflow_text.python)

TensorFlow is imported inside the functions, so importing this module (as `import tfm` does not) starts nothing.
"""

CHECKED_WITH = {"tensorflow": "2.21.0", "tensorflow-text": "2.21.1", "keras": "3.15.1"}


def in_xla_context():
    """True while tracing inside `tf.function(jit_compile=True)`, where XLA needs static shapes.

    Why private: TensorFlow has no public way to ask whether the graph being traced is compiled by XLA;
    `tensorflow.python.ops.control_flow_util.GraphOrParentsInXlaContext` is what its own `while_loop` asks.
    Checked with tensorflow 2.21.0.

    Returns:
        bool: True inside an XLA-compiled function's trace; False eagerly and in a plain `tf.function`.

    Example:
        >>> import tensorflow as tf
        >>> in_xla_context(), bool(tf.function(lambda: tf.constant(in_xla_context()), jit_compile=True)())
        (False, True)
    """
    import tensorflow as tf
    from tensorflow.python.ops import control_flow_util  # no public equivalent (see the docstring)

    return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))


def forget_distribute_strategy(model):
    """Makes a compiled Keras model forget the `tf.distribute` strategy it was built under, so Keras' TensorFlow
    trainer skips the symbolic build it runs before the first step (which reduces one distributed input batch:
    impossible for a nested int batch under `MultiWorkerMirroredStrategy`, keras-team/keras#20585).

    Why private: `Model.distribute_strategy` is a read-only property over `Model._distribute_strategy`, which
    Keras sets in `__init__` and reads in `_maybe_symbolic_build`; no public setter exists. Checked with
    keras 3.15.1 (`keras/src/backend/tensorflow/trainer.py`).

    Args:
        model: a `keras.Model` (TensorFlow backend).

    Returns:
        the model, which now reads the strategy of the scope it runs in (`model.distribute_strategy`).

    Example:
        >>> import keras, tensorflow as tf
        >>> with tf.distribute.OneDeviceStrategy("/cpu:0").scope():
        ...     model = keras.Sequential([keras.layers.Dense(1)])
        >>> type(forget_distribute_strategy(model).distribute_strategy).__name__   # the default strategy again
        '_DefaultDistributionStrategy'
    """
    model._distribute_strategy = None
    return model


def sentencepiece_resource(model, shared_name):
    """The SentencePiece model resource tf-text's tokenizer ops read, created under `shared_name`.

    Why private: tf-text's public `SentencepieceTokenizer` makes this resource itself with no `shared_name`, so
    `tf.random.set_seed` / `keras.utils.set_random_seed` (which clear the eager kernel cache) delete it under a
    live tokenizer; the generated op that makes it, `sentencepiece_op`, is only in
    `tensorflow_text.python.ops.sentencepiece_tokenizer.gen_sentencepiece_tokenizer`. Checked with
    tensorflow-text 2.21.1.

    Args:
        model: bytes. A serialized SentencePiece model.
        shared_name: str. The resource's name: equal names share one resource.

    Returns:
        A resource handle (scalar `tf.resource` tensor).

    Example:
        Used by `tfm.data.subword_tokenizer` (`_SentencePieceResource._create_resource`); see tests/test_framework.py.
    """
    from tensorflow_text.python.ops import sentencepiece_tokenizer  # no public equivalent (see the docstring)

    return sentencepiece_tokenizer.gen_sentencepiece_tokenizer.sentencepiece_op(model=model, shared_name=shared_name)
