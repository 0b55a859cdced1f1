"""A trained Transformer in CTranslate2's format, for CPUs that need more speed or int8 (optional).

    pip install "tfm[ctranslate2]"
    tfm export --run runs/m30k --output exported/m30k-ct2 --format ctranslate2 [--quantization int8]
    tfm.export_ctranslate2("runs/m30k", "exported/m30k-ct2")            # the same from Python

    translator = tfm.CTranslate2Translator("exported/m30k-ct2")         # needs ctranslate2 + sentencepiece only
    translator(["A dog runs in the snow."], beam_size=4)
    translator.translate_with_scores(sentences)                          # -> (translations, scores)

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
  is written (`position_encodings.encodings`: `max_length + extra_positions + 1`
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
(Table 3 row B).

The translator, `CTranslate2Translator`, lives in `tfm.serving.ctranslate2_translator` (no TensorFlow: it
needs only `ctranslate2` and `sentencepiece`), whose docstring says how its decoding follows tfm's rules
(tokens, output limit, scores, input). Here: the spec (`ctranslate2_spec`, `validate_convertible`) and
the export (`export_ctranslate2`, `validate_ctranslate2_dir`, `QUANTIZATIONS`).

Example:
    >>> QUANTIZATIONS   # CTranslate2's weight types an export may write (None: float32)
    ('int8', 'int8_float32', 'int16', 'float16', 'bfloat16', 'float32')
"""

import os

import numpy as np

from tfm.serving.ctranslate2_translator import SENTENCEPIECE_FILE, import_ctranslate2
from tfm.serving.export_folder import atomic_folder, validate_output_folder
from tfm.serving.metadata import METADATA_FILE, resolve_model, write_metadata
from tfm.special_tokens import END, START, UNK

# What an export folder holds: CTranslate2's files and tfm's (nothing else is replaced by --overwrite).
CTRANSLATE2_FILES = {"model.bin", "config.json", "shared_vocabulary.json", "shared_vocabulary.txt",
                     "source_vocabulary.json", "source_vocabulary.txt", "target_vocabulary.json",
                     "target_vocabulary.txt", "vocabulary.json", "vocabulary.txt", SENTENCEPIECE_FILE, METADATA_FILE}
QUANTIZATIONS = ("int8", "int8_float32", "int16", "float16", "bfloat16", "float32")


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
    """Refuses a model that CTranslate2 cannot run as is: a `Seq2Seq`, or a Transformer with `d_k != d_v`.

    Args:
        model: a tfm model.

    Returns:
        the model; raises `ValueError` saying why otherwise.

    Example:
        >>> import tfm
        >>> type(validate_convertible(tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1))).__name__
        'Transformer'
        >>> validate_convertible(tfm.Seq2Seq.from_preset("tiny", vocab_size=70))
        Traceback (most recent call last):
        ValueError: the CTranslate2 export takes a tfm Transformer, got Seq2Seq (the RNN seq2seq models have ...)
    """
    from tfm.models.transformer import Transformer

    if not isinstance(model, Transformer):
        raise ValueError(f"the CTranslate2 export takes a tfm Transformer, got {type(model).__name__} "
                         "(the RNN seq2seq models have no CTranslate2 equivalent)")
    c = model.config
    if c.head_key_dim != c.head_value_dim:
        raise ValueError(f"CTranslate2 needs d_k == d_v; this model has d_k={c.head_key_dim}, d_v={c.head_value_dim}")
    return model


def ctranslate2_spec(model, vocabulary):
    """The `ctranslate2.specs.TransformerSpec` holding `model`'s weights.

    Args:
        model: a built tfm `Transformer`.
        vocabulary: list of str, the tokenizer's tokens in id order (`SubwordTokenizer.vocabulary()`).

    Returns:
        a `TransformerSpec` with vocabularies and special tokens registered (`export_ctranslate2` validates,
        optimizes and saves it).

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> spec = ctranslate2_spec(model, tokenizer.vocabulary())
        >>> spec.encoder.embeddings[0].weight.shape, spec.config.eos_token
        ((70, 64), '[END]')
    """
    ctranslate2 = import_ctranslate2()
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


def validate_ctranslate2_dir(output_dir, overwrite=False):
    """The output-path rule (`tfm.serving.export_folder.validate_output_folder`) for a CTranslate2 export:
    checked before any work.

    Args:
        output_dir: str, where `export_ctranslate2` is asked to write.
        overwrite: bool. Accept a previous CTranslate2 export there (it is replaced). Defaults to `False`.

    Returns:
        str: the resolved absolute path to write.

    Raises:
        FileExistsError: `output_dir` holds something other than a CTranslate2 export, or one and
            `overwrite` is False.
        NotADirectoryError: it, or a folder above it, is a file, a symbolic link loop or a dangling link.
        ValueError: it is inside one of a run's own files (its checkpoints, tokenizer, ...).
        tfm.runs.WriteError: the folder it goes in cannot be written.

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> open(os.path.join(folder, "model.bin"), "w").close()
        >>> validate_ctranslate2_dir(folder)
        Traceback (most recent call last):
        FileExistsError: --output '...' already holds a CTranslate2 export; replace it with --overwrite ...
    """
    return validate_output_folder(os.fspath(output_dir), overwrite=overwrite, marker="model.bin",
                                       entries=CTRANSLATE2_FILES, kind="a CTranslate2 export")


def export_ctranslate2(run_or_model, output_dir, *, tokenizer=None, checkpoint=None, quantization=None,
                       overwrite=False):
    """Writes a CTranslate2 model folder: `model.bin`, the vocabularies, `sentencepiece.model`, `tfm_export.json`.

    Args:
        run_or_model: a run folder, a `(model, tokenizer)` pair, or a model with `tokenizer=`
            (`tfm.serving.metadata.resolve_model`).
        output_dir: str or path, a new or empty folder. Checked before any work (`validate_ctranslate2_dir`);
            written into a temporary sibling and renamed into place only when complete.
        tokenizer: the `SubwordTokenizer` when `run_or_model` is a bare model.
        checkpoint: which weights of a run folder (`tfm.runs.weights_path`; None: "auto").
        quantization: None (float32) or one of `QUANTIZATIONS` (CTranslate2's weight types; `int8`
            is the fast one on CPUs).
        overwrite: bool. Replace a previous CTranslate2 export in `output_dir` (only once the new one
            is complete). Defaults to `False`: an existing export is refused.

    Returns:
        str: `output_dir`. Its `tfm_export.json` records the run's beam size and α (§6.1's for a model) as the
        translator's defaults (CTranslate2 chooses both per call), the length limits, the quantization
        and where the weights came from.

    Raises:
        FileExistsError: `output_dir` holds something other than a CTranslate2 export, or one and
            `overwrite` is False.
        NotADirectoryError, tfm.runs.WriteError: a path no export can go to (`validate_ctranslate2_dir`).
        ValueError: a model CTranslate2 cannot run (`validate_convertible`), an unknown quantization, or
            `output_dir` inside one of a run's own files.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> folder = export_ctranslate2((model, tokenizer), tempfile.mkdtemp() + "/numbers-ct2", quantization="int8")
        >>> sorted(os.listdir(folder))
        ['config.json', 'model.bin', 'sentencepiece.model', 'shared_vocabulary.json', 'tfm_export.json']
        >>> from tfm.serving.metadata import read_metadata
        >>> metadata = read_metadata(folder)
        >>> metadata["format"], metadata["quantization"], metadata["beam_size"]
        ('ctranslate2', 'int8', 4)
    """
    ctranslate2 = import_ctranslate2()
    output_dir = os.fspath(output_dir)
    if quantization is not None and quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization={quantization!r}: expected one of {', '.join(QUANTIZATIONS)}")
    target = validate_ctranslate2_dir(output_dir, overwrite=overwrite)  # before any work
    model, tokenizer, source, decoding = resolve_model(run_or_model, tokenizer=tokenizer, checkpoint=checkpoint)
    spec = ctranslate2_spec(model, tokenizer.vocabulary())
    spec.validate()
    spec.optimize(quantization=quantization)
    c = model.config
    with atomic_folder(target, replace=overwrite) as folder:  # renamed into place once complete
        spec.save(folder)
        with open(os.path.join(folder, SENTENCEPIECE_FILE), "wb") as f:
            f.write(tokenizer.model_proto)
        write_metadata(folder, {
            "format": "ctranslate2", "ctranslate2_version": ctranslate2.__version__,
            "quantization": quantization or "float32", "beam_size": decoding.beam_size,
            "alpha": decoding.length_penalty, "max_source_length": int(c.max_length),
            "max_extra_length": int(c.extra_positions), "model": type(model).__name__, "model_config": c.to_dict(),
            **source})
    return output_dir
