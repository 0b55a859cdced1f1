import dataclasses
import os

import keras
import numpy as np
import pytest
from keras import ops

from tfm.config import Seq2SeqConfig
from tfm.data.synthetic import sequence_task_ids
from tfm.models.decoding_state import DecodingState
from tfm.models.seq2seq import Seq2Seq
from tfm.training.losses import LabelSmoothedCrossEntropy
from tfm.training.metrics import MaskedAccuracy

V = 12
SMALL = dict(vocab_size=V, embedding_dim=8, units=12)
VARIANTS = {
    "sutskever": dict(attention=None, num_layers=2),
    "bahdanau": dict(attention="bahdanau", bidirectional=True, cell="gru"),
    "luong": dict(attention="luong", input_feeding=True, num_layers=2, dropout=0.1),
}


def _np(x):
    return np.asarray(ops.convert_to_numpy(x))


@pytest.fixture(scope="module")
def batch():
    (source, target_in), target_out = sequence_task_ids(3, vocab_size=V, min_length=2, max_length=5, seed=0)
    return source, target_in, target_out


# Config -----------------------------------------------------------------------
def test_config_defaults_are_resolved():
    assert Seq2SeqConfig(vocab_size=100).resolved_score == "additive"
    assert Seq2SeqConfig(vocab_size=100).resolved_attention_units == 256
    assert Seq2SeqConfig(vocab_size=100, attention="luong").resolved_score == "general"
    assert Seq2SeqConfig(vocab_size=100, attention="luong").resolved_attention_units is None
    # What was built is what a saved config says, and it loads back to the same model settings.
    saved = Seq2SeqConfig(vocab_size=100, units=32).to_dict()
    assert (saved["score"], saved["attention_units"]) == ("additive", 32)
    loaded = Seq2SeqConfig.from_dict(saved)
    assert (loaded.resolved_score, loaded.resolved_attention_units) == ("additive", 32)
    assert Seq2SeqConfig(vocab_size=100, attention=None).resolved_score is None


def test_config_presets_and_json(tmp_path):
    b = Seq2SeqConfig.bahdanau(vocab_size=30000)
    assert (b.cell, b.bidirectional, b.units, b.embedding_dim, b.attention_units) == ("gru", True, 1000, 620, 1000)
    lu = Seq2SeqConfig.preset("luong", vocab_size=50000)
    assert (lu.num_layers, lu.units, lu.dropout, lu.score, lu.input_feeding) == (4, 1000, 0.2, "general", True)
    assert Seq2SeqConfig.sutskever().attention is None
    path = tmp_path / "config.json"
    lu.to_json(path)
    assert Seq2SeqConfig.from_json(path) == lu
    with pytest.raises(ValueError, match="dropout=1.5"):  # variants made with replace are validated too
        dataclasses.replace(lu, dropout=1.5)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(vocab_size=4), "vocab_size=4"),
        (dict(units=0), "units=0"),
        (dict(cell="rnn"), "cell='rnn'"),
        (dict(num_layers=0), "num_layers=0"),
        (dict(dropout=1.0), "dropout=1.0"),
        (dict(attention="self"), "attention='self'"),
        (dict(attention="luong", score="bilinear"), "score='bilinear'"),
        (dict(attention=None, score="dot"), "attention=None"),
        (dict(attention="bahdanau", input_feeding=True), "input_feeding=True"),
        (dict(attention="luong", score="dot", bidirectional=True), "2 \\* units = 24"),
        (dict(attention="luong", attention_units=5), "units=5"),
    ],
)
def test_config_errors_name_bad_values(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Seq2SeqConfig(**{**SMALL, **kwargs})


def test_preset_unknown():
    with pytest.raises(ValueError, match="preset='rnnsearch'"):
        Seq2SeqConfig.preset("rnnsearch")


# Model ------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(VARIANTS))
def test_decode_step_equals_call_and_padding_invariance(name, batch):
    source, target_in, _ = batch
    model = Seq2Seq.from_preset(Seq2SeqConfig(**SMALL, **VARIANTS[name]))
    logits = model((source, target_in))
    assert tuple(logits.shape) == (3, target_in.shape[1], V)
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    logits = _np(logits)
    maps = model.attention_weights(source, target_in)["cross_attention"]
    assert len(maps) == (1 if model.config.attention else 0)
    for weights in maps:
        w = _np(weights)  # (B, T, S)
        assert w.shape == (3, target_in.shape[1], source.shape[1])
        assert np.all(w.transpose(0, 2, 1)[source == 0] == 0.0)  # padded source: exactly zero weight
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)

    # Extra source padding changes nothing.
    padded = np.pad(source, ((0, 0), (0, 4)))
    np.testing.assert_allclose(_np(model((padded, target_in))), logits, atol=1e-5)

    # Incremental decoding reproduces teacher forcing, the tokens fed as (B,) or (B, 1).
    state = model.encode(source)
    assert isinstance(state, DecodingState)
    assert tuple(state.memory.shape)[:2] == source.shape and tuple(state.memory_mask.shape) == source.shape
    structure = [tuple(s.shape) for s in state.cache]
    for t in range(target_in.shape[1]):
        tokens = target_in[:, t] if t % 2 else target_in[:, t : t + 1]
        step_logits, state = model.decode_step(tokens, t, state)
        assert [tuple(s.shape) for s in state.cache] == structure
        np.testing.assert_allclose(_np(step_logits), logits[:, t], atol=1e-5)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_state_is_beam_friendly(name, batch):
    """The cache tiled per beam (as beam search does) with the memory left one row per sentence gives each
    beam its sentence's logits, step after step."""
    source, target_in, _ = batch
    model = Seq2Seq.from_preset(Seq2SeqConfig(**SMALL, **VARIANTS[name]))
    state = model.encode(source)
    if name == "luong":  # (h, c) x 2 layers, then h~
        assert len(state.cache) == 2 * 2 + 1
    assert keras.backend.standardize_dtype(state.memory_mask.dtype) == "bool"
    beams = 2
    beam = state._replace(cache=[ops.repeat(s, beams, axis=0) for s in state.cache])
    for t in range(3):
        ref, state = model.decode_step(target_in[:, t], t, state)
        logits, beam = model.decode_step(np.repeat(target_in[:, t], beams), t, beam)
        np.testing.assert_allclose(_np(logits), np.repeat(_np(ref), beams, axis=0), atol=1e-5)
    assert tuple(beam.memory.shape)[0] == source.shape[0]  # one memory row per sentence throughout


def test_save_load_and_config_round_trip(batch, tmp_path):
    source, target_in, _ = batch
    model = Seq2Seq.from_preset(Seq2SeqConfig(**SMALL, **VARIANTS["bahdanau"]))
    ref = _np(model((source, target_in)))
    clone = Seq2Seq.from_config(model.get_config())
    assert clone.config == model.config
    path = os.path.join(str(tmp_path), "seq2seq.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded, Seq2Seq) and loaded.config == model.config
    np.testing.assert_allclose(_np(loaded((source, target_in))), ref, atol=1e-6)
    np.testing.assert_allclose(_np(loaded({"source_ids": source, "target_ids": target_in})), ref, atol=1e-6)


def test_mixed_bfloat16(batch):
    """The float32 model's weights give its logits under mixed_bfloat16, to bfloat16's rounding (2^-4 of the
    largest logit; this model differs by 3% of it), in float32."""
    source, target_in, target_out = batch
    config = Seq2SeqConfig(**SMALL, **VARIANTS["luong"])
    reference = Seq2Seq.from_preset(config)
    model = Seq2Seq(config, dtype="mixed_bfloat16")
    model((source, target_in))  # builds its weights
    model.set_weights(reference.get_weights())
    logits, expected = model((source, target_in)), _np(reference((source, target_in)))
    assert keras.backend.standardize_dtype(logits.dtype) == "float32"
    assert keras.backend.standardize_dtype(model.encode(source).memory.dtype) == "bfloat16"
    np.testing.assert_allclose(_np(logits), expected, atol=2**-4 * np.abs(expected).max())
    # Every weight gets a finite gradient through the bfloat16 recurrence and attention.
    import tensorflow as tf

    with tf.GradientTape() as tape:
        loss = LabelSmoothedCrossEntropy()(target_out, model((source, target_in), training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    assert all(g is not None and np.all(np.isfinite(_np(ops.convert_to_tensor(g)))) for g in grads)


def test_decoder_opts_out_of_xla():
    # Keras' jit_compile="auto" must not pick XLA: the scan's gradient needs a static trip count.
    model = Seq2Seq.from_preset(Seq2SeqConfig(**SMALL))
    assert not model.decoder.supports_jit


# Learning ---------------------------------------------------------------------
def test_bahdanau_seq2seq_learns_to_reverse():
    keras.utils.set_random_seed(1)
    x, y = sequence_task_ids(2000, vocab_size=V, min_length=2, max_length=6, task="reverse", seed=1)
    x_test, y_test = sequence_task_ids(300, vocab_size=V, min_length=2, max_length=6, task="reverse", seed=2)
    model = Seq2Seq.from_preset(Seq2SeqConfig(vocab_size=V, embedding_dim=16, units=32, attention="bahdanau"))
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2), loss=LabelSmoothedCrossEntropy(0.1), metrics=[MaskedAccuracy()]
    )
    model.fit(x, y, batch_size=64, epochs=3, verbose=0)
    logits = _np(model.predict(x_test, batch_size=300, verbose=0))
    real = y_test != 0
    accuracy = float(np.mean(logits.argmax(-1)[real] == y_test[real]))
    assert accuracy >= 0.95, accuracy
    assert model.evaluate(x_test, y_test, verbose=0, return_dict=True)["accuracy"] == pytest.approx(accuracy, abs=1e-6)
