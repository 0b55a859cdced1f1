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
