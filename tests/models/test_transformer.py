import keras
import numpy as np
import pytest

import tfm
from tfm.config import Recipe, TransformerConfig
from tfm.data.synthetic import sequence_task_ids
from tfm.models.decoding_state import DecodingState


@pytest.fixture(scope="module")
def tiny():
    keras.utils.set_random_seed(0)
    return tfm.Transformer.from_preset(TransformerConfig.tiny(vocab_size=30, dropout=0.0))


def _ids(b, t, seed, vocab=30):
    ids = np.random.default_rng(seed).integers(4, vocab, size=(b, t)).astype("int32")
    return ids


def test_contract_shapes_and_dtype(tiny):
    logits = tiny((_ids(2, 7, 0), _ids(2, 5, 1)))
    assert logits.shape == (2, 5, 30) and logits.dtype == "float32"
    same = tiny({"source_ids": _ids(2, 7, 0), "target_ids": _ids(2, 5, 1)})
    np.testing.assert_allclose(same, logits, atol=1e-6)


def test_source_padding_does_not_change_logits(tiny):
    src, tgt = _ids(2, 6, 2), _ids(2, 4, 3)
    padded = np.concatenate([src, np.zeros((2, 5), "int32")], axis=1)
    np.testing.assert_allclose(tiny((src, tgt)), tiny((padded, tgt)), atol=1e-5)


def test_decoder_causal_prefix_unchanged_by_later_tokens(tiny):
    src, tgt = _ids(1, 6, 4), _ids(1, 6, 5)
    other = tgt.copy()
    other[:, 4:] = _ids(1, 2, 6)
    a, b = np.asarray(tiny((src, tgt))), np.asarray(tiny((src, other)))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-5)
    assert not np.allclose(a[:, 4:], b[:, 4:])


@pytest.mark.parametrize("max_length", [None, 8], ids=["growing_cache", "fixed_buffer"])
def test_cached_decoding_equals_full_pass(tiny, max_length):
    """`encode` + one `decode_step` per position give the teacher-forced logits, with a cache that grows
    (dynamic shapes) or a fixed buffer (XLA's), the tokens fed as `(B,)` or `(B, 1)`."""
    src, tgt = _ids(3, 6, 7), _ids(3, 5, 8)
    src[1, 4:] = 0
    full = np.asarray(tiny((src, tgt)))
    state = tiny.encode(src, max_length=max_length)
    assert isinstance(state, DecodingState)
    np.testing.assert_array_equal(state.memory_mask, src != 0)
    steps = []
    for i in range(5):
        tokens = tgt[:, i] if i % 2 else tgt[:, i : i + 1]
        logits, state = tiny.decode_step(tokens, i, state)
        steps.append(np.asarray(logits))
    np.testing.assert_allclose(np.stack(steps, 1), full, atol=1e-4)


def test_decode_step_reads_one_memory_for_the_beams_of_a_sentence(tiny):
    """A state whose cache has G rows per memory row (beam search's) gives each beam the logits of its own
    sentence: the memory is read once per sentence, not copied per beam."""
    src, tgt = _ids(2, 6, 13), _ids(2, 3, 14)
    src[1, 3:] = 0
    beams = 3
    state = tiny.encode(src)
    tiled = state._replace(cache=[tuple(np.repeat(t, beams, axis=0) for t in pair) for pair in state.cache])
    for i in range(3):
        logits, state = tiny.decode_step(tgt[:, i], i, state)
        beam_logits, tiled = tiny.decode_step(np.repeat(tgt[:, i], beams), i, tiled)
        np.testing.assert_allclose(beam_logits, np.repeat(logits, beams, axis=0), atol=1e-5)
    assert tuple(tiled.memory[0][0].shape)[0] == 2  # the memory kept one row per sentence


def test_pieces_and_attention_weights(tiny):
    """`encoder_output` + `decode` is the model; `attention_weights` gives every layer's softmax weights of
    that pass: padded source keys at exactly zero, the decoder's self-attention causal."""
    src, tgt = _ids(2, 6, 11), _ids(2, 4, 12)
    src[1, 4:] = 0
    memory, memory_mask = tiny.encoder_output(src)
    np.testing.assert_array_equal(memory_mask, src != 0)
    np.testing.assert_allclose(tiny.decode(tgt, memory, memory_mask), tiny((src, tgt)), atol=1e-6)
    maps = tiny.attention_weights(src, tgt)
    layers, heads = tiny.config.num_layers, tiny.config.num_heads
    assert sorted(maps) == ["cross_attention", "decoder_self_attention", "encoder_self_attention"]
    assert all(len(weights) == layers for weights in maps.values())
    assert maps["encoder_self_attention"][0].shape == (2, heads, 6, 6)
    assert maps["decoder_self_attention"][0].shape == (2, heads, 4, 4)
    assert maps["cross_attention"][-1].shape == (2, heads, 4, 6)
    for name in ("encoder_self_attention", "cross_attention"):
        assert all(np.all(np.asarray(w)[1, :, :, 4:] == 0.0) for w in maps[name]), name
    for name, weights in maps.items():  # weights after the softmax, not scores
        assert all(np.allclose(np.asarray(w).sum(-1), 1.0, atol=1e-5) for w in weights), name
    upper = np.triu(np.ones((4, 4)), k=1)
    assert all(np.all(np.asarray(w) * upper == 0.0) for w in maps["decoder_self_attention"])


def test_weight_tying_and_untied(tiny):
    names = [w.path for w in tiny.weights]
    assert sum("embeddings" in n for n in names) == 1  # one matrix: two embeddings + projection
    untied = tfm.Transformer.from_preset(TransformerConfig.tiny(vocab_size=30, share_embeddings=False))
    assert untied.count_params() - tiny.count_params() == 30 * 64 * 2 + 30


def test_config_dropouts_reach_every_block():
    model = tfm.Transformer.from_preset(
        TransformerConfig.tiny(vocab_size=30, attention_dropout=0.2, activation_dropout=0.3))
    blocks = [*model.encoder.layers, *model.decoder.layers]
    assert [b.ffn.dropout for b in blocks] == [0.3] * len(blocks)
    assert [b.attention_dropout for b in blocks] == [0.2] * len(blocks)


def test_save_load(tmp_path, tiny):
    src, tgt = _ids(2, 5, 9), _ids(2, 4, 10)
    path = tmp_path / "t.keras"
    tiny.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.config == tiny.config
    np.testing.assert_allclose(loaded((src, tgt)), tiny((src, tgt)), atol=1e-5)


@pytest.mark.parametrize("variant", [dict(), dict(norm_first=True, positional="learned", share_embeddings=False)],
                         ids=["post_ln", "pre_ln_learned_untied"])
def test_mixed_bfloat16_computes_the_float32_model(variant):
    """Under mixed_bfloat16 the same weights (kept in float32) give the float32 model's logits, in float32,
    to bfloat16's rounding: within 2^-4 of the largest logit (these models differ by 1-2% of it), where a
    part left out or computed in the wrong dtype would move them by a whole logit."""
    src, tgt = _ids(2, 5, 9), _ids(2, 4, 10)
    config = TransformerConfig.tiny(vocab_size=30, dropout=0.0, **variant)
    reference = tfm.Transformer.from_preset(config)
    keras.config.set_dtype_policy("mixed_bfloat16")
    model = tfm.Transformer.from_preset(config)
    model.set_weights(reference.get_weights())
    expected, logits = np.asarray(reference((src, tgt))), model((src, tgt))
    assert logits.dtype == "float32"
    assert model.encoder.layers[0].self_attention.query_dense.kernel.dtype == "float32"
    assert model.encoder_output(src)[0].dtype == "bfloat16"
    np.testing.assert_allclose(logits, expected, atol=2**-4 * np.abs(expected).max())


def test_tiny_transformer_learns_reversal():
    """>= 95% held-out token accuracy on a generated task within about a minute on 2 cores."""
    keras.utils.set_random_seed(0)
    train_x, train_y = sequence_task_ids(6000, vocab_size=20, max_length=10, seed=0)
    val_x, val_y = sequence_task_ids(500, vocab_size=20, max_length=10, seed=1)
    recipe = Recipe.preset("tiny", vocab_size=20, dropout=0.0, warmup_steps=200)
    model = tfm.Transformer.from_preset(recipe.model)
    model.compile(optimizer=tfm.build_optimizer(recipe), loss=tfm.LabelSmoothedCrossEntropy(0.0),
                  metrics=[tfm.MaskedAccuracy()])
    model.fit(train_x, train_y, batch_size=64, epochs=6, verbose=0)
    result = model.evaluate(val_x, val_y, verbose=0, return_dict=True)
    assert result["accuracy"] >= 0.95, result


def test_token_dropout_changes_a_training_pass_only():
    """`token_dropout` replaces input words by UNK in `call` with training=True; inference and decoding are
    the model without it (same weights)."""
    config = TransformerConfig.tiny(vocab_size=30, dropout=0.0)
    plain = tfm.Transformer.from_preset(config)
    dropping = tfm.Transformer.from_preset(TransformerConfig.tiny(vocab_size=30, dropout=0.0, token_dropout=0.5))
    dropping.set_weights(plain.get_weights())  # no extra weights: the layer has none
    source, target = _ids(4, 9, 1), _ids(4, 7, 2)
    np.testing.assert_allclose(dropping((source, target), training=False), plain((source, target)), atol=1e-6)
    trained = np.asarray(dropping((source, target), training=True))
    assert np.max(np.abs(trained - np.asarray(plain((source, target), training=True)))) > 1e-3
    memory, mask = dropping.encoder_output(source)  # decoding's entry: no token dropout
    np.testing.assert_allclose(memory, plain.encoder_output(source)[0], atol=1e-6)
    keys, _ = dropping.encode(source).memory[0]
    np.testing.assert_allclose(keys, plain.encode(source).memory[0][0], atol=1e-6)


def test_get_config_holds_the_architecture_only():
    """`model.get_config()` rebuilds the layers and says nothing of training (§5) or decoding (§6.1)."""
    model = tfm.Transformer.from_preset("tiny")
    saved = model.get_config()["config"]
    section_5_and_6_1 = {"warmup_steps", "learning_rate_scale", "adam_beta_1", "adam_beta_2", "adam_epsilon",
                         "label_smoothing", "rdrop_alpha", "tokens_per_batch", "beam_size", "length_penalty",
                         "max_extra_length", "checkpoints_to_average", "preprocess", "learning_rate", "clipnorm"}
    assert not set(saved) & section_5_and_6_1
    assert saved == TransformerConfig.tiny().to_dict()
    rebuilt = tfm.Transformer.from_config(model.get_config())
    assert rebuilt.config == model.config and rebuilt.max_decode_steps == 64 + 50 + 1


def test_from_preset_refuses_what_it_cannot_build():
    with pytest.raises(ValueError, match="preset='huge'"):
        tfm.Transformer.from_preset("huge")
    with pytest.raises(TypeError, match="expected a name of"):
        tfm.Transformer.from_preset(3)
    # Another family's recipe: one short line (the recipe's repr ran to 1,113 characters), naming who builds it.
    with pytest.raises(TypeError) as error:
        tfm.Transformer.from_preset(Recipe.preset("bahdanau"))
    assert len(str(error.value)) < 200 and "got a Seq2SeqConfig" in str(error.value) and "model_class" in str(
        error.value)


@pytest.mark.parametrize("model_class", [tfm.Transformer, tfm.Seq2Seq])
def test_from_preset_takes_a_recipe_as_its_model_part(model_class):
    recipe = Recipe.preset("tiny", model="transformer" if model_class is tfm.Transformer else "bahdanau",
                           num_layers=1)
    assert model_class.from_preset(recipe).config == recipe.model


@pytest.mark.parametrize("name", ["afile.txt", "tiny.txt"])
def test_from_preset_says_a_file_is_neither_a_preset_nor_a_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text("three hundred\n")
    for given in (name, tmp_path / name):
        with pytest.raises(NotADirectoryError) as error:
            tfm.Transformer.from_preset(given)
        message = str(error.value)
        assert "a file, not a preset name (tiny, small, base" in message and "or a run folder" in message
        assert "did you mean" not in message and "\n" not in message
