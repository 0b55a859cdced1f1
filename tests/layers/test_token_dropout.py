import numpy as np
import pytest
import tensorflow as tf
from layer_testing import run_layer_test

from tfm.layers import TokenDropout
from tfm.special_tokens import RESERVED_TOKENS, UNK_ID


def _ids(seed=0, shape=(64, 200)):
    rng = np.random.default_rng(seed)
    ids = rng.integers(len(RESERVED_TOKENS), 100, size=shape)
    ids[:, 0], ids[:, -1], ids[:, -30:-1] = 2, 3, 0  # START ... END, then padding before it: reserved ids
    ids[:, 10] = UNK_ID
    return ids.astype("int32")


def test_layer_checks(tmp_path):
    run_layer_test(TokenDropout, dict(rate=0.3, seed=1), {"ids": _ids(shape=(2, 40))}, expected_output_shape=(2, 40),
                   expected_num_trainable_weights=0, run_fit=False, mixed_dtype="int32", tmp_path=tmp_path)


@pytest.mark.parametrize("graph", [False, True])
def test_a_rate_of_words_becomes_unk_in_training_and_nothing_reserved_changes(graph):
    ids = _ids()
    layer = TokenDropout(0.3, seed=7)
    call = tf.function(lambda x: layer(x, training=True)) if graph else (lambda x: layer(x, training=True))
    out = np.asarray(call(ids))
    reserved = ids < len(RESERVED_TOKENS)
    assert np.array_equal(out[reserved], ids[reserved])  # PAD, UNK, START, END untouched: masks unchanged
    changed = out != ids
    assert np.all(out[changed] == UNK_ID)
    rate = changed.sum() / (~reserved).sum()  # ~10,000 words: standard error ~0.005
    assert abs(rate - 0.3) < 0.02, rate
    assert not np.array_equal(np.asarray(call(ids)), out)  # a new draw each call
    np.testing.assert_array_equal(layer(ids, training=False), ids)
    np.testing.assert_array_equal(TokenDropout(0.0)(ids, training=True), ids)


@pytest.mark.parametrize("rate", [1.0, -0.1, 1.5])
def test_a_rate_outside_0_1_is_named(rate):
    with pytest.raises(ValueError, match=f"rate={rate}"):
        TokenDropout(rate)
