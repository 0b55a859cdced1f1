"""A trained Transformer in CTranslate2's format, for CPUs that need more speed or int8 (optional).

    pip install "tfm[ctranslate2]"
    tfm export --run runs/m30k --output exported/m30k-ct2 --format ctranslate2 [--quantization int8]

    from tfm.serving.ctranslate2 import CTranslate2Translator
    translator = CTranslate2Translator("exported/m30k-ct2")        # needs ctranslate2 + sentencepiece only
    translator(["A dog runs in the snow."], beam_size=4)

CTranslate2 (the C++ engine behind OpenNMT's production translators) runs the same
weights: `tests/serving/test_ctranslate2.py` checks that its greedy outputs equal tfm's,
token for token — a standing cross-check of tfm's Transformer against an independent
implementation. The mapping (`ctranslate2_spec`):

- **Embeddings**: the source and target tables; CTranslate2 multiplies them by
  `sqrt(d_model)` as tfm does (§3.4). Tied embeddings (tfm's default, §3.4) are written
  as the encoder's and the decoder's table and as the output projection (no bias);
  untied models write each table and the projection with its bias.
- **Positions**: tfm's sinusoids interleave sin and cos (§3.5: `PE[p, 2i]` sin,
  `PE[p, 2i+1]` cos); CTranslate2's built-in ones are concatenated, so the table itself
  is written (`position_encodings.encodings`: `max_length + max_extra_length + 1`
  positions). Learned positions are written the same way.
- **Layers**: queries, keys and values fused in one projection (keys and values for
  cross-attention); Keras kernels `(in, out)` transposed to `(out, in)`; LayerNorm
  gamma/beta; the feed-forward's two projections with ReLU. Post-LN (the paper, §3.1)
  maps to `pre_norm=False`; pre-LN to `pre_norm=True` with the final LayerNorm of each
  stack. The LayerNorm epsilon is the model's.
- **Special tokens**: the vocabulary is the SentencePiece model's, ids 0-3 being
  `[PAD] [UNK] [START] [END]`: `[START]` is CTranslate2's BOS and decoder start token,
  `[END]` its EOS, `[UNK]` its unknown token; sources get neither BOS nor EOS (as in
  tfm). tfm never generates `[PAD]` or `[START]`, so `CTranslate2Translator` suppresses them.

Not representable (refused with a message): `Seq2Seq` models, and `d_k != d_v`
(Table 3 row B). Decoding rules: tfm stops each sentence at its own limit (source
length + `max_extra_length`); CTranslate2 takes one `max_decoding_length` per batch,
which `CTranslate2Translator` sets from the longest source (`exact_limits=True` batches
sentences of equal length to give every sentence its own). CTranslate2's length
penalty divides by `|Y|^α`, GNMT's (§6.1, tfm) by `((5 + |Y|) / 6)^α`, so beams may rank
differently; greedy outputs are equal.
"""

import json
import logging
import os
import shutil

import numpy as np

from tfm.decoding import input_rule
from tfm.special_tokens import END, PAD, START, UNK

logger = logging.getLogger("tfm.serving.ctranslate2")
ON_INVALID = ("error", "empty")

METADATA_FILE = "tfm_export.json"  # both exports' record (tfm.serving.saved_model reads it from here: no TensorFlow)
SENTENCEPIECE_FILE = "sentencepiece.model"


def _require_ctranslate2():
    try:
        import ctranslate2
    except ImportError as error:
        raise ImportError("the CTranslate2 export needs the ctranslate2 package: pip install \"tfm[ctranslate2]\" "
                          "(or pip install ctranslate2)") from error
    return ctranslate2


def _numpy(variable):
    return np.asarray(variable.numpy() if hasattr(variable, "numpy") else variable, dtype="float32")


def _dense(spec, *layers):
    """`spec.weight (out, in)`, `spec.bias (out,)` from Keras Dense layers, fused along `out`."""
    spec.weight = np.concatenate([_numpy(layer.kernel).T for layer in layers], axis=0)
    if all(layer.bias is not None for layer in layers):
        spec.bias = np.concatenate([_numpy(layer.bias) for layer in layers], axis=0)


def _norm(spec, layer):
    spec.gamma = _numpy(layer.gamma)
    spec.beta = _numpy(layer.beta)


def _attention(spec, attention, self_attention):
    if self_attention:
        _dense(spec.linear[0], attention.query_dense, attention.key_dense, attention.value_dense)
        _dense(spec.linear[1], attention.output_dense)
    else:
        _dense(spec.linear[0], attention.query_dense)
        _dense(spec.linear[1], attention.key_dense, attention.value_dense)
        _dense(spec.linear[2], attention.output_dense)


def _feed_forward(spec, layer):
    _dense(spec.linear_0, layer.ffn.inner)
    _dense(spec.linear_1, layer.ffn.outer)
    _norm(spec.layer_norm, layer.ffn_norm)


def _position_table(layer):
    if hasattr(layer, "table"):  # PositionalEncoding: the fixed sinusoids
        return np.asarray(layer.table, dtype="float32")
    return _numpy(layer.position_embeddings)  # PositionalEmbedding: learned


def validate_convertible(model):
    """Raises ValueError when `model` is not a Transformer CTranslate2 can run as is."""
    from tfm.models.transformer import Transformer

    if not isinstance(model, Transformer):
        raise ValueError(f"the CTranslate2 export takes a tfm Transformer, got {type(model).__name__} "
                         "(the RNN seq2seq models have no CTranslate2 equivalent)")
    c = model.config
    if c.head_key_dim != c.head_value_dim:
        raise ValueError(f"CTranslate2 needs d_k == d_v; this model has d_k={c.head_key_dim}, d_v={c.head_value_dim}")


def ctranslate2_spec(model, vocabulary):
    """The `ctranslate2.specs.TransformerSpec` holding `model`'s weights.

    Args:
        model: a built tfm `Transformer`.
        vocabulary: list of str, the tokenizer's tokens in id order (`SubwordTokenizer.vocabulary()`).

    Returns:
        a `TransformerSpec` with vocabularies and special tokens registered.
    """
    ctranslate2 = _require_ctranslate2()
    from ctranslate2.specs import transformer_spec

    validate_convertible(model)
    c = model.config
    if len(vocabulary) != c.vocab_size:
        raise ValueError(f"the vocabulary has {len(vocabulary)} tokens, the model {c.vocab_size}")
    spec = transformer_spec.TransformerSpec.from_config(
        (len(model.encoder.layers), len(model.decoder.layers)), c.num_heads, pre_norm=bool(c.norm_first),
        activation=ctranslate2.specs.Activation.RELU)
    encoder, decoder = spec.encoder, spec.decoder
    encoder.embeddings[0].weight = _numpy(model.source_embedding.embeddings)
    decoder.embeddings.weight = _numpy(model.target_embedding.embeddings)
    encoder.position_encodings.encodings = _position_table(model.source_positions)
    decoder.position_encodings.encodings = _position_table(model.target_positions)
    for layer_spec, layer in zip(encoder.layer, model.encoder.layers):
        _attention(layer_spec.self_attention, layer.self_attention, self_attention=True)
        _norm(layer_spec.self_attention.layer_norm, layer.attention_norm)
        _feed_forward(layer_spec.ffn, layer)
    for layer_spec, layer in zip(decoder.layer, model.decoder.layers):
        _attention(layer_spec.self_attention, layer.self_attention, self_attention=True)
        _norm(layer_spec.self_attention.layer_norm, layer.self_attention_norm)
        _attention(layer_spec.attention, layer.cross_attention, self_attention=False)
        _norm(layer_spec.attention.layer_norm, layer.cross_attention_norm)
        _feed_forward(layer_spec.ffn, layer)
    if c.norm_first:  # pre-LN: each stack ends with a LayerNorm
        _norm(encoder.layer_norm, model.encoder.final_norm)
        _norm(decoder.layer_norm, model.decoder.final_norm)
    if model.output_projection is None:  # tied: logits = h E^T
        decoder.projection.weight = _numpy(model.target_embedding.embeddings)
    else:
        _dense(decoder.projection, model.output_projection)
    spec.config.unk_token, spec.config.bos_token, spec.config.eos_token = UNK, START, END
    spec.config.decoder_start_token = START
    spec.config.layer_norm_epsilon = float(c.layer_norm_epsilon)
    spec.register_source_vocabulary(list(vocabulary))
    spec.register_target_vocabulary(list(vocabulary))
    return spec


QUANTIZATIONS = ("int8", "int8_float32", "int16", "float16", "bfloat16", "float32")


def export_ctranslate2(run_or_model, output_dir, tokenizer=None, quantization=None, checkpoint=None):
    """Writes a CTranslate2 model folder: `model.bin`, the vocabularies, `sentencepiece.model`, `tfm_export.json`.

    Args:
        run_or_model: a run folder, a `(model, tokenizer)` pair, or a model with `tokenizer=`.
        output_dir: str, a new folder (or one this function wrote before, replaced).
        quantization: None (float32) or one of `QUANTIZATIONS` (CTranslate2's weight types; `int8`
            is the fast one on CPUs).
        checkpoint: which weights of a run folder (see `tfm.runs.load_run`).

    Returns:
        str: `output_dir`.
    """
    from tfm.serving.saved_model import _load

    ctranslate2 = _require_ctranslate2()
    output_dir = os.fspath(output_dir)
    if quantization is not None and quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization={quantization!r}: expected one of {', '.join(QUANTIZATIONS)}")
    if os.path.exists(output_dir) and os.listdir(output_dir):
        if not os.path.exists(os.path.join(output_dir, "model.bin")):
            raise FileExistsError(f"--output {output_dir!r} exists and is not a CTranslate2 export; "
                                  "choose a new or empty folder")
    model, tokenizer, source = _load(run_or_model, tokenizer, checkpoint)
    spec = ctranslate2_spec(model, tokenizer.vocabulary())
    spec.validate()
    spec.optimize(quantization=quantization)
    if os.path.exists(output_dir):
        shutil.rmtree(output_dir)
    os.makedirs(output_dir)
    spec.save(output_dir)
    with open(os.path.join(output_dir, SENTENCEPIECE_FILE), "wb") as f:
        f.write(tokenizer.model_proto)
    c = model.config
    metadata = {"format": "ctranslate2", "ctranslate2_version": ctranslate2.__version__,
                "quantization": quantization or "float32", "beam_size": int(c.beam_size),
                "alpha": float(c.length_penalty), "max_source_length": int(c.max_length),
                "max_extra_length": int(c.max_extra_length), "model_config": c.to_dict(), **source}
    with open(os.path.join(output_dir, METADATA_FILE), "w") as f:
        json.dump(metadata, f, indent=2)
        f.write("\n")
    return output_dir


class CTranslate2Translator:
    """Sentences in, translations out, with CTranslate2 on an exported folder (no TensorFlow needed).

    Args:
        model_dir: a folder written by `export_ctranslate2`.
        device: "cpu" or "cuda".
        compute_type: CTranslate2's ("default": as exported; "int8", "float32", ...).
        inter_threads, intra_threads: CTranslate2's thread counts (0: its default).

    Tokenization is the run's SentencePiece model (the `sentencepiece` package), and the input
    rule is `tfm.decoding.input_rule_ops`'s (its plain-Python twin `tfm.decoding.input_rule`), so text goes in and
    comes out as with `tfm.decoding.Translator` and the exported SavedModel.
    """

    def __init__(self, model_dir, device="cpu", compute_type="default", inter_threads=1, intra_threads=0):
        ctranslate2 = _require_ctranslate2()
        import sentencepiece

        with open(os.path.join(model_dir, METADATA_FILE)) as f:
            self.metadata = json.load(f)
        self.translator = ctranslate2.Translator(model_dir, device=device, compute_type=compute_type,
                                                 inter_threads=inter_threads, intra_threads=intra_threads)
        self.sentencepiece = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(model_dir, SENTENCEPIECE_FILE))
        self.max_source_length = int(self.metadata["max_source_length"])
        self.max_extra_length = int(self.metadata["max_extra_length"])

    def translate_tokens(self, sources, beam_size=None, alpha=None, batch_size=64, exact_limits=False):
        """Lists of subword strings in, lists of subword strings out (sources truncated to the model's maximum).

        `exact_limits`: batch sentences of one length together, so each stops at its own
        source length + `max_extra_length` as in tfm; otherwise one call (CTranslate2 sorts and
        batches, `inter_threads` batches at once) with the longest source's limit for all.
        `translate_tokens_with_scores` adds CTranslate2's scores.
        """
        return self.translate_tokens_with_scores(sources, beam_size=beam_size, alpha=alpha, batch_size=batch_size,
                                                 exact_limits=exact_limits)[0]

    def translate_tokens_with_scores(self, sources, beam_size=None, alpha=None, batch_size=64, exact_limits=False):
        """`translate_tokens` -> `(outputs, scores)`: two lists, the subwords and CTranslate2's score of each
        (`log P(Y | X) / |Y|^alpha`: its length penalty, not GNMT's; see the module's notes)."""
        beam_size = int(self.metadata["beam_size"] if beam_size is None else beam_size)
        alpha = float(self.metadata["alpha"] if alpha is None else alpha)
        sources = [list(s)[: self.max_source_length] for s in sources]
        if not sources:
            return [], []
        options = dict(beam_size=beam_size, length_penalty=alpha, max_input_length=0,
                       suppress_sequences=[[PAD], [START]], return_scores=True)
        if not exact_limits:  # one call: CTranslate2 sorts, splits and runs `inter_threads` batches at once
            limit = max(len(s) for s in sources) + self.max_extra_length
            results = self.translator.translate_batch(sources, max_batch_size=batch_size,
                                                      max_decoding_length=limit, **options)
            return [r.hypotheses[0] for r in results], [float(r.scores[0]) for r in results]
        order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
        batches, current = [], []
        for i in order:
            if current and (len(current) == batch_size or len(sources[i]) != len(sources[current[0]])):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        outputs, scores = [None] * len(sources), [0.0] * len(sources)
        for batch in batches:
            tokens = [sources[i] for i in batch]
            limit = max(len(t) for t in tokens) + self.max_extra_length
            results = self.translator.translate_batch(tokens, max_decoding_length=limit, **options)
            for i, result in zip(batch, results):
                outputs[i] = result.hypotheses[0]
                scores[i] = float(result.scores[0])
        return outputs, scores

    def translate(self, sentences, beam_size=None, alpha=None, batch_size=64, exact_limits=False, on_invalid="error"):
        """list of str (or UTF-8 bytes) -> list of str, by `tfm.decoding.input_rule_ops`'s rule as `Translator.translate`.

        Whitespace only separates words (`"two\\r\\n"` translates as `"two"`); a blank sentence
        translates to `""`; one the rule refuses (not valid UTF-8, a NUL byte) raises `ValueError`
        naming the indices, or, with `on_invalid="empty"`, gets `""`. Inputs longer than the
        model's `max_length` subwords are truncated, with one warning per call. `exact_limits`: as in
        `translate_tokens` (each sentence stops at its own limit, as in tfm).
        """
        if isinstance(sentences, (str, bytes)):
            raise TypeError("translate takes a list of sentences; wrap a single one in a list")
        if on_invalid not in ON_INVALID:
            raise ValueError(f"on_invalid={on_invalid!r}: expected one of {ON_INVALID}")
        raw = [input_rule.as_bytes(s) for s in sentences]
        bad = [i for i, r in enumerate(raw) if input_rule.problem(r)]
        if bad and on_invalid == "error":
            raise ValueError(f"{input_rule.INVALID} {bad}")
        pieces = [[] if i in bad else self.sentencepiece.encode(input_rule.normalize(r.decode("utf-8")), out_type=str)
                  for i, r in enumerate(raw)]
        long = [i for i, p in enumerate(pieces) if len(p) > self.max_source_length]
        if long:
            logger.warning("%d input(s) longer than the model's %d subwords were truncated (the first: index %d)",
                           len(long), self.max_source_length, long[0])
        todo = [i for i, p in enumerate(pieces) if p]
        outputs = self.translate_tokens([pieces[i] for i in todo], beam_size=beam_size, alpha=alpha,
                                        batch_size=batch_size, exact_limits=exact_limits)
        translations = [""] * len(raw)
        for i, output in zip(todo, outputs):
            translations[i] = self.sentencepiece.decode_pieces(output).strip(" \t\n\v\f\r")  # as `finish`
        return translations

    __call__ = translate
