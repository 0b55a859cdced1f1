"""tfm/_framework.py: the private Keras and TensorFlow names tfm reads, each still there and still meaning what it
did in the versions the module names. A failure here means an upgrade moved one: find the new way (or a public API
that now exists) before anything else, and update `CHECKED_WITH`."""

import inspect
import re

import keras
import tensorflow as tf

from tfm import _framework

UPGRADED = f"checked with {_framework.CHECKED_WITH}; now tensorflow {tf.__version__}, keras {keras.__version__}"


def test_the_xla_question_is_still_answered():
    from tensorflow.python.ops import control_flow_util

    assert callable(getattr(control_flow_util, "GraphOrParentsInXlaContext", None)), \
        f"tensorflow.python.ops.control_flow_util.GraphOrParentsInXlaContext is gone ({UPGRADED}): in_xla_context"
    assert _framework.in_xla_context() is False
    inside = tf.function(lambda: tf.constant(_framework.in_xla_context()))
    compiled = tf.function(lambda: tf.constant(_framework.in_xla_context()), jit_compile=True)
    assert (bool(inside()), bool(compiled())) == (False, True), f"in_xla_context answers wrongly ({UPGRADED})"


def test_keras_still_keeps_the_strategy_where_forget_distribute_strategy_clears_it():
    from keras.src.backend.tensorflow.trainer import TensorFlowTrainer

    # Keras reads the attribute before the first step; were it renamed, setting ours would do nothing.
    source = inspect.getsource(TensorFlowTrainer._maybe_symbolic_build)
    reads = re.findall(r"self\._distribute_strategy is None", source)
    assert reads, f"Keras' _maybe_symbolic_build no longer reads _distribute_strategy ({UPGRADED})"
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    assert model._distribute_strategy is strategy, f"Keras no longer records the build's strategy there ({UPGRADED})"
    assert _framework.forget_distribute_strategy(model) is model and model._distribute_strategy is None
    assert model.distribute_strategy is tf.distribute.get_strategy()  # the scope it runs in


def test_tf_text_still_makes_the_sentencepiece_resource_under_a_shared_name():
    from tensorflow_text.python.ops import sentencepiece_tokenizer

    from tfm.data.subword_tokenizer import train_tokenizer

    op = getattr(getattr(sentencepiece_tokenizer, "gen_sentencepiece_tokenizer", None), "sentencepiece_op", None)
    assert callable(op), f"tf-text's gen_sentencepiece_tokenizer.sentencepiece_op is gone ({UPGRADED})"
    tokenizer = train_tokenizer(["a b c d", "b c d e", "c d e f"] * 20, vocab_size=12, seed=0)
    handle = _framework.sentencepiece_resource(tokenizer.model_proto, "tfm_test_framework")
    assert handle.dtype == tf.resource
    ids = tokenizer.tokenize(["a b c"])
    keras.utils.set_random_seed(0)  # clears the eager kernel cache: the shared resource must survive it
    np_ids = tokenizer.tokenize(["a b c"])
    assert ids.to_list() == np_ids.to_list(), f"the tokenizer's resource did not survive set_random_seed ({UPGRADED})"
