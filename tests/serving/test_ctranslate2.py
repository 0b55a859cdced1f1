"""tfm's Transformer in CTranslate2 (an independent C++ implementation): same tokens, same log-probabilities."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from model_variants import build_variant

import tfm
from tfm.config import TransformerConfig
from tfm.decoding import Translator
from tfm.special_tokens import END_ID, START_ID

ctranslate2 = pytest.importorskip("ctranslate2", reason="the CTranslate2 export is an optional extra")

from tfm.serving.ctranslate2 import ctranslate2_spec, export_ctranslate2  # noqa: E402  (after importorskip)
from tfm.serving.ctranslate2_translator import CTranslate2Translator  # noqa: E402  (after importorskip)

MAX_LENGTH, EXTRA = 16, 5


def _padded(rows, width=None):
    width = width or max(len(r) for r in rows)
    out = np.zeros((len(rows), width), np.int32)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


@pytest.fixture(scope="module")
def trained(number_tokenizer, number_pairs):
    """A tiny post-LN Transformer (the paper's layout) trained for a few seconds on number words."""
    tokenizer, (sources, targets) = number_tokenizer, number_pairs
    keras.utils.set_random_seed(0)
    config = TransformerConfig.tiny(vocab_size=tokenizer.vocab_size, num_layers=2, d_model=64, num_heads=4, d_ff=128,
                                    dropout=0.0, max_length=MAX_LENGTH, extra_positions=EXTRA)
    model = tfm.Transformer.from_preset(config)
    src = [list(r) for r in tokenizer.tokenize(tf.constant(sources)).numpy()]
    tgt = [list(r) for r in tokenizer.tokenize(tf.constant(targets), add_start_end=True).numpy()]
    x, y = _padded(src, MAX_LENGTH), _padded(tgt, MAX_LENGTH + 2)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0))
    model.fit((x, y[:, :-1]), y[:, 1:], batch_size=64, epochs=3, verbose=0)
    return model


def _vocabulary_index(tokenizer):
    vocabulary = tokenizer.vocabulary()
    return vocabulary, {token: i for i, token in enumerate(vocabulary)}


def test_greedy_outputs_equal_tfms_token_for_token(trained, number_tokenizer, tmp_path):
    from tfm.data import number_words_pairs

    tokenizer = number_tokenizer
    sentences, _ = number_words_pairs("test", max_number=2000)
    sentences = sentences[:300]
    path = export_ctranslate2((trained, tokenizer), tmp_path / "ct2")
    translator = Translator(trained, tokenizer, beam_size=1)
    rows = translator.encode(sentences)
    result = translator.search_ids(_padded(rows))
    ours = [list(result.sequences[i, : result.lengths[i]]) for i in range(len(rows))]
    assert sum(len(o) for o in ours) > 3 * len(ours)  # real outputs, not empty ones

    vocabulary, index = _vocabulary_index(tokenizer)
    theirs = CTranslate2Translator(path).translate_tokens([[vocabulary[t] for t in r] for r in rows], beam_size=1)
    theirs = [[index[t] for t in output] for output in theirs]
    differ = [i for i in range(len(rows)) if ours[i] != theirs[i]]
    assert not differ, f"{len(differ)} of {len(rows)} differ, e.g. {sentences[differ[0]]!r}"
    # Text in, text out (SentencePiece in Python on their side) gives tfm's translations too, and tfm's scores.
    # Some of these outputs stop at their own sentence's limit (source length + max_extra_length), in a batch whose
    # longest source allows more.
    limits = [len(r) + EXTRA for r in rows]
    assert any(len(o) == limit < max(limits) for o, limit in zip(ours, limits))
    texts, scores = CTranslate2Translator(path).translate_with_scores(sentences, beam_size=1, alpha=0.6)
    expected, expected_scores = translator.translate_with_scores(sentences)
    assert texts == expected
    np.testing.assert_allclose(scores, expected_scores, atol=1e-4)


@pytest.mark.parametrize("variant", ["post_ln", "pre_ln_learned_untied"])
def test_log_probabilities_equal_tfms(variant, number_tokenizer, number_pairs, tmp_path):
    """Every flag of the mapping (post/pre-LN, sinusoids/learned table, tied/untied projection):
    CTranslate2's per-token log-probabilities of given targets equal tfm's teacher-forced ones."""
    tokenizer, (sources, targets) = number_tokenizer, number_pairs
    model = build_variant(variant, tokenizer.vocab_size, max_length=MAX_LENGTH, max_extra_length=EXTRA, seed=3)
    spec = ctranslate2_spec(model, tokenizer.vocabulary())
    spec.validate()
    spec.optimize()
    spec.save(str(tmp_path))
    engine = ctranslate2.Translator(str(tmp_path))

    src = [list(r) for r in tokenizer.tokenize(tf.constant(sources[:8])).numpy()]
    tgt = [list(r) for r in tokenizer.tokenize(tf.constant(targets[:8])).numpy()]
    vocabulary, _ = _vocabulary_index(tokenizer)
    scored = engine.score_batch([[vocabulary[t] for t in s] for s in src], [[vocabulary[t] for t in t_] for t_ in tgt])
    decoder_in = _padded([[START_ID] + t for t in tgt])
    log_probs = np.asarray(tf.nn.log_softmax(model((_padded(src), decoder_in)), axis=-1))  # (B, T + 1, V)
    for i, (target, result) in enumerate(zip(tgt, scored)):
        expected = [log_probs[i, t, token] for t, token in enumerate(target + [END_ID])]
        np.testing.assert_allclose(result.log_probs, expected, atol=2e-4, err_msg=f"{variant} sentence {i}")


def test_refuses_what_ctranslate2_cannot_run(tiny_transformer, number_tokenizer, tmp_path):
    from tfm.config import Seq2SeqConfig
    from tfm.models import Seq2Seq

    model, tokenizer = tiny_transformer, number_tokenizer
    with pytest.raises(ValueError, match="Seq2Seq"):
        ctranslate2_spec(Seq2Seq.from_preset(Seq2SeqConfig.tiny(vocab_size=tokenizer.vocab_size)),
                         tokenizer.vocabulary())
    config = TransformerConfig.tiny(vocab_size=tokenizer.vocab_size, num_layers=1, key_dim=8, value_dim=24)
    with pytest.raises(ValueError, match="d_k == d_v"):
        ctranslate2_spec(tfm.Transformer.from_preset(config), tokenizer.vocabulary())
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="not a CTranslate2 export"):
        export_ctranslate2((model, tokenizer), tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"  # nothing lost
    with pytest.raises(ValueError, match="quantization='int4'"):
        export_ctranslate2((model, tokenizer), tmp_path / "q", quantization="int4")


def test_int8_export_records_its_settings(trained, number_tokenizer, tmp_path):
    path = export_ctranslate2((trained, number_tokenizer), tmp_path / "int8", quantization="int8")
    with open(os.path.join(path, "tfm_export.json")) as f:
        metadata = json.load(f)
    assert metadata["quantization"] == "int8" and metadata["max_extra_length"] == EXTRA
    assert metadata["model_config"]["num_layers"] == 2
    out = CTranslate2Translator(path)(["three hundred twenty one", ""], beam_size=2)
    assert out[1] == "" and out[0]


def test_translate_tokens_has_one_return_type(trained, number_tokenizer, tmp_path):
    """`translate_tokens` answers a list, `translate_tokens_with_scores` a pair of lists (as `translate` /
    `translate_with_scores`), even for no sources."""
    translator = CTranslate2Translator(export_ctranslate2((trained, number_tokenizer), tmp_path / "ct2"))
    pieces = [translator.sentencepiece.encode(s, out_type=str) for s in ["seven", "three hundred twenty one"]]
    outputs = translator.translate_tokens(pieces, beam_size=2)
    scored = translator.translate_tokens_with_scores(pieces, beam_size=2)
    assert type(outputs) is list and type(scored) is tuple and len(scored) == 2
    assert scored[0] == outputs and all(output for output in outputs)
    assert type(scored[1]) is list and len(scored[1]) == 2 and all(score < 0 for score in scored[1])
    assert translator.translate_tokens([]) == [] and translator.translate_tokens_with_scores([]) == ([], [])
