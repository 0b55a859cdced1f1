import numpy as np
from layer_testing import run_layer_test

from tfm.layers import FeedForward


def test_layer_checks_and_numpy_reference(tmp_path):
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    run_layer_test(FeedForward, dict(d_ff=16), {"x": x}, expected_output_shape=(2, 3, 4),
                   expected_num_trainable_weights=4, tmp_path=tmp_path)  # W_1, b_1, W_2, b_2
    layer = FeedForward(16)
    out = layer(x).numpy()
    w1, b1, w2, b2 = [w.numpy() for w in layer.weights]
    np.testing.assert_allclose(out, np.maximum(0, x @ w1 + b1) @ w2 + b2, atol=1e-5)
    # Position-wise: each position alone gives the same result.
    np.testing.assert_allclose(layer(x[:, 1:2]).numpy(), out[:, 1:2], atol=1e-6)


def test_position_wise_is_the_layer_and_a_decoding_step_has_no_run_time_shape_arithmetic(tiny_transformer):
    """`position_wise(dense, x)` equals `dense(x)` exactly, for a static and a dynamic position axis; and the
    Transformer's traced decoding step does its projections as 2-D products: no `tensordot` shape ops (`Prod`,
    the `Tensordot` scope) around them, which the 3-D products put around every one (issue 59's profile)."""
    import keras
    import tensorflow as tf

    from tfm.layers.feed_forward import position_wise

    dense = keras.layers.Dense(5)
    x = np.random.default_rng(1).normal(size=(3, 4, 6)).astype("float32")
    np.testing.assert_array_equal(position_wise(dense, x).numpy(), dense(x).numpy())  # static T = 4
    dynamic = tf.function(lambda v: position_wise(dense, v),
                          input_signature=[tf.TensorSpec([None, None, 6], tf.float32)])
    np.testing.assert_array_equal(dynamic(x).numpy(), dense(x).numpy())

    model = tiny_transformer
    state = model.encode(tf.constant([[5, 6, 7, 0]]))
    step = tf.function(lambda token, index, state: model.decode_step(token, index, state))
    token = tf.TensorSpec([None], tf.int32)
    graph = step.get_concrete_function(token, tf.TensorSpec([], tf.int32), state).graph
    ops = graph.get_operations()
    products = [op for op in ops if op.type in ("MatMul", "BatchMatMulV2")]
    assert len(products) >= 2 * len(model.decoder.layers), [op.name for op in products]
    assert not [op.name for op in ops if "Tensordot" in op.name or op.type == "Prod"]
