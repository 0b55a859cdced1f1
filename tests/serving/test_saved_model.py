import argparse
import json
import os
import re
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf
from model_variants import build_variant, is_bf16

import tfm
from tfm.decoding import Translator
from tfm.serving import saved_model as tfm_export
from tfm.serving.metadata import METADATA_FILE, read_metadata

BIN = os.path.dirname(sys.executable)
BEAM = 2
EXTRA = 4  # max_extra_length of the models built here (conftest's tiny_transformer has 4 too)


@pytest.fixture(scope="module")
def exported(tmp_path_factory, tiny_transformer, number_tokenizer):
    path = str(tmp_path_factory.mktemp("export") / "translator" / "1")
    tfm_export.export_saved_model((tiny_transformer, number_tokenizer), path, beam_size=BEAM)
    return path


@pytest.fixture(scope="module")
def serve(exported):
    return tf.saved_model.load(exported).signatures["serving_default"]


def _translate(serve, texts):
    out = serve(text=tf.constant(texts, tf.string))
    return [t.decode("utf-8") for t in out["translations"].numpy()], out["scores"].numpy()


SENTENCES = ["three hundred twenty one", "seven", "one thousand two hundred five", "ninety nine"]


def test_exported_equals_eager(serve, tiny_transformer, number_tokenizer):
    translations, scores = _translate(serve, SENTENCES)
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM)
    eager, eager_scores = translator.translate_with_scores(SENTENCES)
    assert translations == eager
    np.testing.assert_allclose(scores, eager_scores, atol=1e-4)


# The other variants of tests/model_variants.py (post_ln, beam 2, is the `model` above). One export
# each, greedy or beam, so float32 and bf16 both meet both searches: the search code is the same
# function in both routes; what an export can lose is a variant's weights or dtypes.
VARIANT_BEAM = {"pre_ln_learned_untied": 1, "pre_ln_bf16": 3, "post_ln_learned_untied_bf16": 1}
VARIANT_MAX_LENGTH = 16  # a multiple of Translator's LENGTH_MULTIPLE: see test_variant_exported_equals_eager
# Ascending subword lengths (Translator's sorting keeps the order), the last cut at VARIANT_MAX_LENGTH.
VARIANT_SENTENCES = ["seven", "ninety nine", "three hundred twenty one", "one thousand two hundred five",
                     " ".join(["seven hundred"] * 20)]


@pytest.fixture(scope="module", params=list(VARIANT_BEAM))
def exported_variant(request, tmp_path_factory, number_tokenizer):
    """`(name, model, serve)`: a variant, built and exported once for this module."""
    name = request.param
    model = build_variant(name, number_tokenizer.vocab_size, max_length=VARIANT_MAX_LENGTH,
                          max_extra_length=EXTRA)
    path = str(tmp_path_factory.mktemp("variant") / name / "1")
    tfm_export.export_saved_model((model, number_tokenizer), path, beam_size=VARIANT_BEAM[name])
    return name, model, tf.saved_model.load(path).signatures["serving_default"]


def test_variant_exported_equals_eager(exported_variant, number_tokenizer):
    """Pre-LN, learned positions, untied embeddings and mixed_bfloat16 survive the export.

    Equal, not close, also under bf16: the sentences are in the order Translator sorts them
    into and the longest is cut at max_length = 16, a multiple of 8, so both routes pad to the
    same (5, 16) batch and run the same ops on it. (Batches padded to different widths give a
    softmax over more masked keys, which under bf16 can round an ulp apart and flip a near-tie.)
    """
    name, model, serve = exported_variant
    subwords = number_tokenizer.tokenize(VARIANT_SENTENCES).row_lengths().numpy()
    lengths = [min(n, VARIANT_MAX_LENGTH) for n in subwords]
    assert lengths == sorted(lengths) and lengths[-1] == VARIANT_MAX_LENGTH  # the premise above
    translations, scores = _translate(serve, VARIANT_SENTENCES)
    translator = Translator(model, number_tokenizer, beam_size=VARIANT_BEAM[name])
    eager, eager_scores = translator.translate_with_scores(VARIANT_SENTENCES)
    assert translations == eager
    np.testing.assert_allclose(scores, eager_scores, rtol=1e-6, atol=1e-6)
    assert model.compute_dtype == ("bfloat16" if is_bf16(name) else "float32")


def _used_ops(saved_model_dir):
    """Every op type in saved_model.pb: the graph and every function of its library."""
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    with open(os.path.join(saved_model_dir, "saved_model.pb"), "rb") as f:
        saved.ParseFromString(f.read())
    used = set()
    for meta_graph in saved.meta_graphs:
        used |= {node.op for node in meta_graph.graph_def.node}
        for function in meta_graph.graph_def.library.function:  # while bodies, conditions, ... too
            used |= {node.op for node in function.node_def}
    return used


def test_serving_ops_are_in_the_tf_serving_allow_list(exported, serving_ops):
    used = _used_ops(exported)
    assert {"While", "TopKV2", "SentencepieceTokenizeOp", "SentencepieceDetokenizeOp"} <= used
    assert not used - serving_ops, f"ops TF Serving (tf-text 2.12.1) lacks: {sorted(used - serving_ops)}"
    assert "XlaLaunch" not in used and "_XlaCompile" not in used  # no jit_compile in the export
    # Xla* ops are registered but run only through XLA's on-demand compiler, which a serving
    # binary may lack: the cache write is a select, not XlaDynamicUpdateSlice.
    assert not {op for op in used if op.startswith("Xla")}, sorted(op for op in used if op.startswith("Xla"))


def test_seq2seq_export(tmp_path, number_tokenizer, serving_ops):
    from tfm.config import Seq2SeqConfig
    from tfm.models import Seq2Seq

    keras.utils.set_random_seed(0)
    model = Seq2Seq.from_preset(Seq2SeqConfig.tiny(vocab_size=number_tokenizer.vocab_size, embedding_dim=16, units=16))
    path = str(tmp_path / "seq2seq" / "1")
    tfm_export.export_saved_model((model, number_tokenizer), path, beam_size=BEAM, max_extra_length=EXTRA)
    assert not _used_ops(path) - serving_ops
    serve = tf.saved_model.load(path).signatures["serving_default"]
    eager = Translator(model, number_tokenizer, beam_size=BEAM, max_extra_length=EXTRA)(SENTENCES[:2] + [""])
    assert _translate(serve, SENTENCES[:2] + [""])[0] == eager


def test_loads_with_only_tensorflow_and_tensorflow_text(exported, tiny_transformer, number_tokenizer):
    code = textwrap.dedent(f"""
        import json, sys
        import tensorflow as tf
        import tensorflow_text  # registers the SentencePiece ops
        translator = tf.saved_model.load({exported!r})
        out = translator.signatures["serving_default"](text=tf.constant(["seven", ""]))
        assert not any(m == "tfm" or m.startswith("tfm.") for m in sys.modules), "tfm was imported"
        print(json.dumps([[t.decode() for t in out["translations"].numpy()], out["scores"].numpy().tolist()]))
    """)
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": ""}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/",
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    translations, scores = json.loads(done.stdout.strip().splitlines()[-1])
    eager, eager_scores = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM).translate_with_scores(
        ["seven", ""])
    assert translations == eager and eager[1] == ""
    np.testing.assert_allclose(scores, eager_scores, atol=1e-4)


def test_saved_model_cli_lists_the_signature(exported):
    cli = os.path.join(BIN, "saved_model_cli")
    if not os.path.exists(cli):
        pytest.skip(f"saved_model_cli not found next to {sys.executable}")
    done = subprocess.run([cli, "show", "--dir", exported, "--all"], capture_output=True, text=True,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "signature_def['serving_default']" in out
    assert "inputs['text']" in out and "DT_STRING" in out
    assert "outputs['translations']" in out and "outputs['scores']" in out
    assert "outputs['truncated']" in out and "DT_BOOL" in out


def test_metadata_file(exported, tiny_transformer):
    with open(os.path.join(exported, METADATA_FILE)) as f:
        meta = json.load(f)
    assert meta["beam_size"] == BEAM and meta["max_source_length"] == tiny_transformer.config.max_length == 12
    assert meta["max_extra_length"] == EXTRA and meta["signature"] == "serving_default"


# ---------------------------------------------------------------------------
# Hostile input: one text-in/text-out policy (tfm.decoding.text_ops) for the SavedModel and Translator.
# ---------------------------------------------------------------------------
def _bound(model, tokenizer):
    """Longest possible output in characters: (max_length + extra) subwords of the longest piece."""
    longest_piece = max(len(piece) for piece in tokenizer.vocabulary())
    return (model.config.max_length + model.config.extra_positions) * (longest_piece + 1)


HOSTILE = [
    "",
    "  \t ",  # whitespace only
    " ".join(["seven hundred"] * 1500),  # 3,000 words: cut to max_length subwords
    "🙂🐕",  # emoji only: outside the vocabulary
    "שלום עולם",  # right-to-left: Hebrew
    "مرحبا بالعالم",  # and Arabic
    "seven 🙂 three \u200f\u202eשלום\u202c hundred",  # mixed, with right-to-left marks
    "日本語 ☃ zzzz qqq",  # characters the vocabulary has never seen -> [UNK]
    "\x01 control \x7f",  # control characters (a NUL is refused on every path: tests/decoding/test_input_rule.py)
    "three hundred twenty one",
]


def test_hostile_inputs_get_the_same_answer_from_both_routes(serve, tiny_transformer, number_tokenizer, caplog):
    translations, scores = _translate(serve, HOSTILE)
    with caplog.at_level("WARNING", logger="tfm.decoding"):
        translator = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM)
        eager, eager_scores = translator.translate_with_scores(HOSTILE)
    assert translations == eager
    np.testing.assert_allclose(scores, eager_scores, atol=1e-4)
    assert translations[:2] == ["", ""] and list(scores[:2]) == [0.0, 0.0]  # nothing in, nothing out
    assert caplog.text.count("truncated") == 1 and "index 2" in caplog.text  # the over-long input, said once
    assert all(len(t) <= _bound(tiny_transformer, number_tokenizer) for t in translations)
    assert np.all(np.isfinite(scores))


def _indices(message):
    """The indices after INVALID_UTF8 in either route's message: "...strings:] [1 3]" or "...strings: [1, 3]"."""
    found = re.search(r"indices of the invalid strings:\]?\s*\[([\d ,]*)\]", message)
    assert found, message
    return [int(i) for i in re.split(r"[ ,]+", found.group(1).strip())]


def test_invalid_utf8_is_refused_alike_or_answered_empty(serve, tiny_transformer, number_tokenizer):
    batch = [b"seven", b"\xff\xfe", "three hundred", b"broken \xc3(", "ninety nine"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not valid UTF-8") as exported_error:
        serve(text=tf.constant(batch))
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM)
    with pytest.raises(ValueError, match="not valid UTF-8") as eager_error:
        translator(batch)
    assert _indices(exported_error.value.message) == _indices(str(eager_error.value)) == [1, 3]
    # on_invalid="empty": "" (score nan) for those, the others as in a batch without them.
    outputs, scores = translator.translate_with_scores(batch, on_invalid="empty")
    valid = [batch[i] for i in (0, 2, 4)]
    alone, alone_scores = translator.translate_with_scores(valid)
    assert [outputs[i] for i in (1, 3)] == ["", ""] and np.isnan([scores[1], scores[3]]).all()
    assert [outputs[i] for i in (0, 2, 4)] == alone == _translate(serve, valid)[0]
    np.testing.assert_allclose([scores[i] for i in (0, 2, 4)], alone_scores, atol=1e-6)


def test_empty_batch(serve):
    translations, scores = _translate(serve, np.zeros([0], dtype=object))
    assert translations == [] and scores.shape == (0,)


def test_batch_of_256(serve, tiny_transformer, number_tokenizer):
    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(["one", "two", "hundred", "thousand", "ninety", "x"], size=n))
             for n in rng.integers(0, 20, size=256)]
    translations, scores = _translate(serve, texts)
    assert len(translations) == 256 and scores.shape == (256,)
    assert all(len(t) <= _bound(tiny_transformer, number_tokenizer) for t in translations)
    # Every sentence is translated as if its batch-mates were others: Translator sorts by length
    # into batches of 64, the SavedModel takes all 256 at once.
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM, batch_size=64)
    eager, eager_scores = translator.translate_with_scores(texts)
    assert translations == eager
    np.testing.assert_allclose(scores, eager_scores, atol=1e-4)


def test_export_command(tmp_path, finished_run):
    import tfm.runs
    from tfm.cli import commands as cli

    out = str(tmp_path / "m" / "1")
    args = argparse.Namespace(run=finished_run, output=out, beam_size=1, alpha=0.6, checkpoint=None,
                              format="savedmodel", quantization=None, xla=False, early_finish=False, signatures=[],
                              alignment_layer=-1, overwrite=False)
    assert cli.export_command(args) == 0
    serve = tf.saved_model.load(out).signatures["serving_default"]
    eager = Translator.from_run(finished_run, beam_size=1)  # the same checkpoint rule ("auto")
    assert _translate(serve, ["seven", "twelve"])[0] == eager(["seven", "twelve"])
    with open(os.path.join(out, METADATA_FILE)) as f:
        metadata = json.load(f)
    assert metadata["beam_size"] == 1
    # where it came from: the run, and the weights the checkpoint rule chose
    assert (metadata["run"], metadata["checkpoint"]) == (finished_run, tfm.runs.weights_path(finished_run))


def test_export_needs_a_tokenizer(tmp_path, tiny_transformer):
    with pytest.raises(ValueError, match="tokenizer"):
        tfm_export.export_saved_model(tiny_transformer, str(tmp_path / "x"))


# Optional signatures (chosen at export time): the k best, and alignments. -------------------
@pytest.fixture(scope="module")
def extras(tmp_path_factory, tiny_transformer, number_tokenizer):
    path = str(tmp_path_factory.mktemp("extras") / "translator" / "1")
    tfm_export.export_saved_model((tiny_transformer, number_tokenizer), path, beam_size=3,
                                  signatures=("nbest", "alignment"))
    return path, tf.saved_model.load(path).signatures


def test_default_signature_is_unchanged_by_the_extras(extras, serving_ops):
    path, signatures = extras
    assert set(signatures) == {"serving_default", "nbest", "alignment"}
    default = signatures["serving_default"]
    assert set(default.structured_outputs) == {"translations", "scores", "truncated"}
    assert list(default.structured_input_signature[1]) == ["text"]
    with open(os.path.join(path, METADATA_FILE)) as f:
        metadata = json.load(f)
    assert metadata["outputs"] == {"translations": "tf.string (B,)", "scores": "float32 (B,)",
                                   "truncated": "bool (B,)"}
    assert set(metadata["signatures"]) == {"serving_default", "nbest", "alignment"}
    assert not _used_ops(path) - serving_ops


def test_every_signature_says_which_inputs_were_truncated(extras):
    """An input longer than max_length is translated from its first max_length subwords; Translator and
    `tfm translate` warn, and every signature answers `truncated`, one bool per input."""
    long_input = " ".join(["seven hundred"] * 20)  # far beyond the model's 12 subwords
    for name, signature in extras[1].items():
        out = signature(text=tf.constant(["seven", long_input, "", "\n"]))
        assert out["truncated"].dtype == tf.bool, name
        assert out["truncated"].numpy().tolist() == [False, True, False, False], name


def test_nbest_exported_equals_eager(extras, tiny_transformer, number_tokenizer):
    sentences = SENTENCES + [""]
    out = extras[1]["nbest"](text=tf.constant(sentences))
    texts = [[t.decode("utf-8") for t in row] for row in out["translations"].numpy()]
    scores = out["scores"].numpy()
    assert scores.shape == (5, 3)
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=3)
    eager = translator.nbest(sentences)
    for i, hypotheses in enumerate(eager):
        assert texts[i] == [t for t, _ in hypotheses]
        np.testing.assert_allclose(scores[i], [s for _, s in hypotheses], atol=1e-4)
    assert np.all(np.diff(scores[:4], axis=1) <= 1e-6)  # best first
    assert texts[4] == ["", "", ""] and scores[4, 0] == 0.0 and np.all(np.isneginf(scores[4, 1:]))
    # The first of the k is what serving_default answers.
    best, best_scores = _translate(extras[1]["serving_default"], sentences)
    assert [row[0] for row in texts] == best
    np.testing.assert_allclose(scores[:, 0], best_scores, atol=1e-5)


def test_alignment_exported_equals_eager(extras, tiny_transformer, number_tokenizer):
    sentences = SENTENCES + [" "]
    out = {k: v.numpy() for k, v in extras[1]["alignment"](text=tf.constant(sentences)).items()}
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=3)
    eager = translator.align(sentences)
    assert [t.decode("utf-8") for t in out["translations"]] == [e["translation"] for e in eager]
    for i, e in enumerate(eager):
        n, s = len(e["target_tokens"]), len(e["source_tokens"])
        assert [t.decode("utf-8") for t in out["target_tokens"][i] if t] == e["target_tokens"]
        assert [t.decode("utf-8") for t in out["source_tokens"][i] if t] == e["source_tokens"]
        assert list(out["alignment"][i, :n]) == e["alignment"] and np.all(out["alignment"][i, n:] == -1)
        np.testing.assert_allclose(out["attention"][i, :n, :s], e["attention"], atol=1e-5)
        if n:  # rows are distributions over the real source subwords; each alignment is its row's argmax
            np.testing.assert_allclose(e["attention"].sum(axis=1), 1.0, atol=1e-5)
            assert e["alignment"] == list(np.argmax(e["attention"], axis=1))
    assert eager[4]["target_tokens"] == [] and eager[4]["translation"] == ""
    # The head average of the last layer is what attention_maps gives for the chosen outputs.
    source = np.array(translator.encode(SENTENCES[:1]), np.int32)
    result = translator.search_ids(source)
    maps = tfm.decoding.attention_maps(tiny_transformer, source, result.sequences[:, : result.lengths[0]])
    expected = maps["cross_attention"][-1][0].mean(axis=0)[:-1]  # (N, T + 1, S) -> (T, S)
    np.testing.assert_allclose(eager[0]["attention"], expected, atol=1e-5)


def test_extra_signatures_refuse_bad_requests(tiny_transformer, number_tokenizer, tmp_path):
    from tfm.config import Seq2SeqConfig
    from tfm.models import Seq2Seq

    with pytest.raises(ValueError, match="signatures=\\['scores'\\]"):
        tfm_export.export_saved_model((tiny_transformer, number_tokenizer), str(tmp_path / "a"),
                                      signatures=("scores",))
    with pytest.raises(ValueError, match="alignment layer=3: the decoder has 1 layer"):
        tfm_export.export_saved_model((tiny_transformer, number_tokenizer), str(tmp_path / "b"),
                                      signatures=("alignment",), alignment_layer=3)
    plain = Seq2Seq.from_preset(Seq2SeqConfig.tiny(vocab_size=number_tokenizer.vocab_size, attention=None))
    with pytest.raises(ValueError, match="no attention to align with"):
        tfm_export.export_saved_model((plain, number_tokenizer), str(tmp_path / "c"), signatures=("alignment",))
    assert not any((tmp_path / name).exists() for name in "abc")  # nothing written


@pytest.mark.parametrize("options", [dict(quantize="int8"), dict(quantize="bfloat16"), dict(jit_compile=True)],
                         ids=["int8", "bfloat16", "xla"])
def test_int8_bfloat16_and_xla_exports_equal_their_translator(options, tmp_path, tiny_transformer, number_tokenizer,
                                                              serving_ops):
    """`quantize="int8"` / `"bfloat16"` serve what `Translator(quantize=...)` gives, with int8 kernels / bfloat16
    weights and only ops TF Serving has; `jit_compile=True` serves what the float Translator gives (XLA changes no
    output here)."""
    path = str(tmp_path / "options" / "1")
    tfm_export.export_saved_model((tiny_transformer, number_tokenizer), path, beam_size=BEAM, **options)
    record = read_metadata(path)
    assert (record["quantize"], record["jit_compile"]) == (options.get("quantize"), options.get("jit_compile", False))
    assert not _used_ops(path) - serving_ops
    loaded = tf.saved_model.load(path)
    assert any(v.dtype == tf.int8 for v in loaded.model_variables) == (options.get("quantize") == "int8")
    assert any(v.dtype == tf.bfloat16 for v in loaded.model_variables) == (options.get("quantize") == "bfloat16")
    translations, scores = _translate(loaded.signatures["serving_default"], SENTENCES)
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM, quantize=options.get("quantize"))
    eager, eager_scores = translator.translate_with_scores(SENTENCES)
    assert translations == eager
    np.testing.assert_allclose(scores, eager_scores, atol=1e-4)
    assert tiny_transformer.dtype_policy.quantization_mode is None  # the model given is left in float



def test_early_finish_export_serves_the_same_translations_and_scores(exported, tmp_path, tiny_transformer,
                                                                     number_tokenizer):
    """`early_finish=True`: recorded, and `serving_default` answers what the plain export answers (the best
    hypothesis is decided when the search stops); `nbest` searches in full, so its k best are the plain ones too."""
    path = str(tmp_path / "early" / "1")
    tfm_export.export_saved_model((tiny_transformer, number_tokenizer), path, beam_size=BEAM, early_finish=True,
                                  signatures=("nbest",))
    assert read_metadata(path)["early_finish"] is True and read_metadata(exported)["early_finish"] is False
    loaded = tf.saved_model.load(path)
    translations, scores = _translate(loaded.signatures["serving_default"], SENTENCES)
    plain, plain_scores = _translate(tf.saved_model.load(exported).signatures["serving_default"], SENTENCES)
    assert translations == plain
    np.testing.assert_allclose(scores, plain_scores, atol=1e-5)
    full = Translator(tiny_transformer, number_tokenizer, beam_size=BEAM).nbest(SENTENCES)
    served = loaded.signatures["nbest"](text=tf.constant(SENTENCES))["translations"].numpy()
    assert [[t.decode() for t in row] for row in served] == [[t for t, _ in row] for row in full]

def test_bfloat16_copy_rounds_the_weights_and_keeps_float32_where_the_search_ranks(tiny_transformer):
    """`quantized_copy(model, "bfloat16")`: each weight is the float32 one rounded to bfloat16 (relative error at
    most 2^-8), the logits come out float32 and close to the float model's, and the model given stays float32."""
    from tfm.models.quantization import quantized_copy

    bf16 = quantized_copy(tiny_transformer, "bfloat16")
    assert bf16.dtype_policy.name == "bfloat16" and tiny_transformer.dtype_policy.name == "float32"
    for original, rounded in zip(tiny_transformer.weights, bf16.weights, strict=True):
        assert (original.path, rounded.dtype) == (rounded.path, "bfloat16")
        value, copy = np.asarray(original.numpy()), np.asarray(rounded.numpy()).astype("float32")
        np.testing.assert_allclose(copy, value, rtol=2.0 ** -8, atol=0)
    ids = np.array([[5, 6, 7, 8, 0], [9, 10, 0, 0, 0]])
    logits, reference = bf16((ids, ids[:, :4])), tiny_transformer((ids, ids[:, :4]))
    assert logits.dtype == "float32"
    assert float(np.max(np.abs(logits - reference))) < 0.05 * float(np.max(np.abs(reference)))
    with pytest.raises(ValueError, match="already bfloat16"):
        quantized_copy(bf16, "bfloat16")
