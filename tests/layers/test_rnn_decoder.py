import keras
import numpy as np
import pytest
from keras import ops
from layer_testing import run_layer_test

from tfm.layers.rnn_decoder import RNNDecoder

V, E, U, DV = 13, 6, 8, 10
TARGET = np.array([[2, 4, 5, 6], [2, 7, 0, 0]], "int32")  # (B=2, T=4), START first, 0 = padding
MEMORY_MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)  # (B=2, S=5)

VARIANTS = {
    "none": dict(attention=None),
    "bahdanau": dict(attention="bahdanau"),
    "bahdanau_2layer_gru": dict(attention="bahdanau", cell="gru", num_layers=2, dropout=0.2),
    "luong": dict(attention="luong"),
    "luong_feeding_2layer": dict(attention="luong", input_feeding=True, num_layers=2, dropout=0.2),
    "luong_dot": dict(attention="luong", score="scaled_dot", cell="gru"),
}


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


def _inputs(seed=0, value_dim=DV):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(2, 5, value_dim)).astype("float32")


@pytest.mark.parametrize("name", list(VARIANTS))
def test_step_equals_teacher_forcing(name):
    kwargs = VARIANTS[name]
    value_dim = U if kwargs.get("score") == "scaled_dot" else DV
    encoder_outputs = _inputs(value_dim=value_dim)
    decoder = RNNDecoder(V, E, U, **kwargs)
    rng = np.random.default_rng(1)
    n_cell_states = decoder.num_layers * (2 if decoder.cell == "lstm" else 1)
    assert len(decoder.state_size) == n_cell_states + decoder.input_feeding
    initial = [rng.normal(size=(2, U)).astype("float32") for _ in range(n_cell_states)]
    logits = decoder(TARGET, encoder_outputs, initial, MEMORY_MASK)
    assert tuple(logits.shape) == (2, 4, V) and keras.backend.standardize_dtype(logits.dtype) == "float32"
    weights = None
    if decoder.attention is not None:
        same, weights = decoder.call_with_scores(TARGET, encoder_outputs, initial, MEMORY_MASK)
        np.testing.assert_allclose(_np(same), _np(logits), atol=1e-6)
    else:
        with pytest.raises(ValueError, match="no attention"):
            decoder.call_with_scores(TARGET, encoder_outputs, initial, MEMORY_MASK)
    state = decoder.start_state(initial)
    for t in range(TARGET.shape[1]):
        step_logits, state, step_weights = decoder.step(TARGET[:, t], state, encoder_outputs, MEMORY_MASK)
        assert [tuple(s.shape) for s in state] == [(2, w) for w in decoder.state_size]
        np.testing.assert_allclose(_np(step_logits), _np(logits)[:, t], atol=1e-5)
        if weights is None:
            assert step_weights is None
        else:
            np.testing.assert_allclose(_np(step_weights), _np(weights)[:, t], atol=1e-6)
    if weights is not None:
        weights = _np(weights)
        assert weights.shape == (2, 4, 5) and np.all(weights[0, :, 3:] == 0.0)
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)


def test_no_attention_ignores_the_encoder_outputs():
    decoder = RNNDecoder(V, E, U)
    a = decoder(TARGET, _inputs(0), None, MEMORY_MASK)
    b = decoder(TARGET, _inputs(1), None, MEMORY_MASK)
    np.testing.assert_allclose(_np(a), _np(b))


def test_causal():
    decoder = RNNDecoder(V, E, U, attention="luong", input_feeding=True)
    changed = TARGET.copy()
    changed[:, 2:] = 9
    a = _np(decoder(TARGET, _inputs(), None, MEMORY_MASK))
    b = _np(decoder(changed, _inputs(), None, MEMORY_MASK))
    np.testing.assert_allclose(a[:, :2], b[:, :2], atol=1e-6)


def test_dropout_only_in_training():
    decoder = RNNDecoder(V, E, U, attention="bahdanau", num_layers=2, dropout=0.5)
    a = _np(decoder(TARGET, _inputs(), None, MEMORY_MASK, training=True))
    b = _np(decoder(TARGET, _inputs(), None, MEMORY_MASK))
    c = _np(decoder(TARGET, _inputs(), None, MEMORY_MASK))
    assert not np.allclose(a, b)
    np.testing.assert_allclose(b, c)


def test_errors():
    with pytest.raises(ValueError, match="attention='transformer'"):
        RNNDecoder(V, E, U, attention="transformer")
    with pytest.raises(ValueError, match="input_feeding=True needs attention='luong'"):
        RNNDecoder(V, E, U, attention="bahdanau", input_feeding=True)
    with pytest.raises(ValueError, match="attention=None"):
        RNNDecoder(V, E, U, score="dot")
    with pytest.raises(ValueError, match="score='bilinear'"):
        RNNDecoder(V, E, U, attention="luong", score="bilinear")
    with pytest.raises(ValueError, match="needs encoder_outputs"):
        RNNDecoder(V, E, U, attention="luong")(TARGET)
    with pytest.raises(ValueError, match="Dq=8 != key width Dk=10"):
        RNNDecoder(V, E, U, attention="luong", score="dot")(TARGET, _inputs(), None, MEMORY_MASK)
    with pytest.raises(ValueError, match="initial_state has 1 tensors"):
        RNNDecoder(V, E, U)(TARGET, initial_state=[np.zeros((2, U), "float32")])


# Weights: the embedding (1), each LSTM layer's kernel, recurrent kernel and bias (3), the output projection
# with bias (2); Bahdanau's W_1, W_2, v (3); Luong's general W and the attentional layer W_c (2).
@pytest.mark.parametrize("name, num_weights", [("bahdanau", 1 + 3 + 3 + 2), ("luong_feeding_2layer", 1 + 6 + 2 + 2),
                                               ("none", 1 + 3 + 2)])
def test_layer(name, num_weights, tmp_path):
    data = {"target_ids": TARGET, "encoder_outputs": _inputs(), "memory_mask": MEMORY_MASK}
    run_layer_test(
        RNNDecoder, dict(vocab_size=V, embedding_dim=E, units=U, **VARIANTS[name]), data,
        expected_output_shape=(2, 4, V), expected_num_trainable_weights=num_weights, mixed_dtype="float32",
        tmp_path=tmp_path,
    )
