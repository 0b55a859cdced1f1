import numpy as np
import pytest
from keras import ops
from layer_testing import run_layer_test

from tfm.layers.rnn_encoder import RNNEncoder

V, E, U = 11, 6, 5
SOURCE = np.array([[4, 5, 6, 0], [7, 8, 9, 10]], "int32")  # (B=2, S=4), 0 = padding


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


@pytest.mark.parametrize(
    "kwargs, width, n_states",
    [
        (dict(cell="lstm", bidirectional=True, num_layers=2, dropout=0.1), 2 * U, 4),
        (dict(cell="gru"), U, 1),
    ],
)
def test_shapes_and_padding(kwargs, width, n_states):
    encoder = RNNEncoder(V, E, U, **kwargs)
    outputs, state = encoder(SOURCE)
    assert tuple(outputs.shape) == (2, 4, width)
    assert len(state) == n_states and all(tuple(s.shape) == (2, width) for s in state)
    # Extra padding changes neither the real positions' outputs nor the final state, in either direction.
    padded = np.pad(SOURCE, ((0, 0), (0, 3)))
    outputs2, state2 = encoder(padded)
    np.testing.assert_allclose(_np(outputs2)[:, :4][SOURCE > 0], _np(outputs)[SOURCE > 0], atol=1e-6)
    for s, s2 in zip(state, state2):
        np.testing.assert_allclose(_np(s2), _np(s), atol=1e-6)
    # An explicit mask gives the same as the one derived from the ids.
    outputs3, _ = encoder(SOURCE, padding_mask=SOURCE > 0)
    np.testing.assert_allclose(_np(outputs3), _np(outputs), atol=1e-6)


def test_final_state_is_state_after_last_real_token():
    encoder = RNNEncoder(V, E, U, cell="gru")
    outputs, (h,) = encoder(SOURCE)
    np.testing.assert_allclose(_np(h)[0], _np(outputs)[0, 2], atol=1e-6)  # row 0 ends at position 2
    np.testing.assert_allclose(_np(h)[1], _np(outputs)[1, 3], atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="cell='rnn'"):
        RNNEncoder(V, E, U, cell="rnn")
    with pytest.raises(ValueError, match="num_layers=0"):
        RNNEncoder(V, E, U, num_layers=0)
    with pytest.raises(ValueError, match="dropout=1.5"):
        RNNEncoder(V, E, U, dropout=1.5)


def test_layer(tmp_path):
    run_layer_test(
        RNNEncoder, dict(vocab_size=V, embedding_dim=E, units=U, bidirectional=True), {"source_ids": SOURCE},
        output_index=0, expected_output_shape=(2, 4, 2 * U),
        expected_num_trainable_weights=1 + 2 * 3,  # the embedding; per direction kernel, recurrent kernel, bias
        tmp_path=tmp_path,
    )
