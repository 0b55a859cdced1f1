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
(Table 3 row B).

Decoding follows tfm's rules (`tfm.decoding.search_entry`) where CTranslate2 lets it:

- **Tokens**: `[PAD]` and `[START]` are never written and `[END]` may come first (a blank
  translation), so each step chooses among the tokens tfm's search chooses among, with the same
  renormalized probabilities.
- **Output limit**: tfm stops each sentence at its own limit, source length + `max_extra_length`
  subwords. CTranslate2 takes one `max_decoding_length` per call, so `CTranslate2Translator` runs
  the batch with the longest source's limit, then runs again, with their own limit, the few
  sentences whose output reached theirs (a trained model rarely gets there, so this costs
  nearly nothing; an untrained one often does). Greedy search decides each token from the
  tokens before it, so a greedy output stopped at its own limit is the longer run's up to there:
  greedy outputs equal tfm's token for token. A beam's ranking can depend on the limit, so with
  beams the guarantee is the bound: no output is longer than its sentence's limit.
- **Scores**: CTranslate2 ranks a beam's hypotheses by `log P(Y | X) / |Y|^α`, tfm by GNMT's
  `log P(Y | X) / ((5 + |Y|) / 6)^α` (§6.1), so beams may rank differently. The scores
  `CTranslate2Translator` returns are tfm's for the hypothesis CTranslate2 chose: its
  log-probability, taken back out of CTranslate2's score, divided by GNMT's penalty with `|Y|` =
  subwords + `[END]` (an output stopped at its limit gets tfm's forced `[END]`, log-probability 0).
  For greedy search they equal `Translator`'s and the SavedModel's up to float rounding.
- **Input**: the rule of `tfm.decoding.input_rule` (whitespace only separates words, blank in
  -> blank out, invalid UTF-8 or a NUL byte refused, long inputs cut at `max_length` subwords).
"""

import logging
import numbers
import os

import numpy as np

from tfm.config.rules import validate_length_penalty
from tfm.decoding import input_rule
from tfm.runs.atomic import atomic_folder
from tfm.serving.metadata import METADATA_FILE, check_sentences, read_metadata, resolve_model, write_metadata
from tfm.special_tokens import END, PAD, START, UNK

logger = logging.getLogger(__name__)

SENTENCEPIECE_FILE = "sentencepiece.model"
# What an export folder holds: CTranslate2's files and tfm's (nothing else is replaced by --overwrite).
CTRANSLATE2_FILES = {"model.bin", "config.json", "shared_vocabulary.json", "shared_vocabulary.txt",
                     "source_vocabulary.json", "source_vocabulary.txt", "target_vocabulary.json",
                     "target_vocabulary.txt", "vocabulary.json", "vocabulary.txt", SENTENCEPIECE_FILE, METADATA_FILE}
QUANTIZATIONS = ("int8", "int8_float32", "int16", "float16", "bfloat16", "float32")
# Tokens tfm's search never writes: [PAD] is never a prediction, [START] only begins the decoder's input.
SUPPRESSED = [[PAD], [START]]


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
    """Refuses a model that CTranslate2 cannot run as is: a `Seq2Seq`, or a Transformer with `d_k != d_v`.

    Args:
        model: a tfm model.

    Returns:
        None; raises `ValueError` saying why otherwise.

    Example:
        >>> import tfm
        >>> validate_convertible(tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1))
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


def validate_output_dir(output_dir, overwrite=False):
    """The output-path rule (`tfm.runs.folder.validate_output_folder`) for a CTranslate2 export: checked before
    any work.

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
        >>> validate_output_dir(folder)
        Traceback (most recent call last):
        FileExistsError: --output '...' already holds a CTranslate2 export; replace it with --overwrite ...
    """
    from tfm.runs import folder as runs  # Keras: kept out of CTranslate2Translator's import (no TensorFlow)

    return runs.validate_output_folder(os.fspath(output_dir), overwrite=overwrite, marker="model.bin",
                                       entries=CTRANSLATE2_FILES, kind="a CTranslate2 export")


def export_ctranslate2(run_or_model, output_dir, *, tokenizer=None, checkpoint=None, quantization=None,
                       overwrite=False):
    """Writes a CTranslate2 model folder: `model.bin`, the vocabularies, `sentencepiece.model`, `tfm_export.json`.

    Args:
        run_or_model: a run folder, a `(model, tokenizer)` pair, or a model with `tokenizer=`
            (`tfm.serving.metadata.resolve_model`).
        output_dir: str or path, a new or empty folder. Checked before any work (`validate_output_dir`);
            written into a temporary sibling and renamed into place only when complete.
        tokenizer: the `SubwordTokenizer` when `run_or_model` is a bare model.
        checkpoint: which weights of a run folder (see `tfm.runs.load_run`).
        quantization: None (float32) or one of `QUANTIZATIONS` (CTranslate2's weight types; `int8`
            is the fast one on CPUs).
        overwrite: bool. Replace a previous CTranslate2 export in `output_dir` (only once the new one
            is complete). Defaults to `False`: an existing export is refused.

    Returns:
        str: `output_dir`. Its `tfm_export.json` records the model config's beam size and α as the
        translator's defaults (CTranslate2 chooses both per call), the length limits, the quantization
        and where the weights came from.

    Raises:
        FileExistsError: `output_dir` holds something other than a CTranslate2 export, or one and
            `overwrite` is False.
        NotADirectoryError, tfm.runs.WriteError: a path no export can go to (`validate_output_dir`).
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
        >>> metadata = read_metadata(folder)
        >>> metadata["format"], metadata["quantization"], metadata["beam_size"]
        ('ctranslate2', 'int8', 4)
    """
    ctranslate2 = _require_ctranslate2()
    output_dir = os.fspath(output_dir)
    if quantization is not None and quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization={quantization!r}: expected one of {', '.join(QUANTIZATIONS)}")
    target = validate_output_dir(output_dir, overwrite=overwrite)  # before any work
    model, tokenizer, source = resolve_model(run_or_model, tokenizer=tokenizer, checkpoint=checkpoint)
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
            "quantization": quantization or "float32", "beam_size": int(c.beam_size),
            "alpha": float(c.length_penalty), "max_source_length": int(c.max_length),
            "max_extra_length": int(c.max_extra_length), "model": type(model).__name__, "model_config": c.to_dict(),
            **source})
    return output_dir


def _length_penalty(length, alpha):
    """GNMT's `((5 + |Y|) / 6)^α`, as `tfm.decoding.search_core.length_penalty` (here without TensorFlow)."""
    return ((5.0 + length) / 6.0) ** alpha


class CTranslate2Translator:
    """Sentences in, translations out, with CTranslate2 on an exported folder (no TensorFlow needed).

    The calling convention is `Translator`'s and `SavedModelTranslator`'s: `translate(sentences, *,
    beam_size=None, alpha=None, on_invalid="error")`, `translate_with_scores` with the same arguments,
    `__call__ = translate`. Here beam size and α are chosen per call; None takes the export's (the
    model config's, recorded in `tfm_export.json`). Tokenization is the run's SentencePiece model
    (the `sentencepiece` package) under the input rule of `tfm.decoding.input_rule`, so text goes in
    and comes out as with `Translator` and the exported SavedModel; the module's docstring says
    where CTranslate2's decoding differs from tfm's and what is kept.

    Args:
        model_dir: str or path, a folder written by `export_ctranslate2`.
        device: "cpu" or "cuda".
        compute_type: CTranslate2's ("default": as exported; "int8", "float32", ...).
        inter_threads: batches CTranslate2 translates at the same time. Defaults to `1`.
        intra_threads: threads inside each batch (0: CTranslate2's default).
        batch_size: int. Sentences per batch (CTranslate2 sorts them by length first). Defaults to `64`.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> translator = CTranslate2Translator(export_ctranslate2((model, tokenizer), tempfile.mkdtemp() + "/ct2"))
        >>> translator.beam_size, translator.alpha   # the defaults the export recorded
        (4, 0.6)
        >>> two, also_two, blank = translator(["two", " two\\r\\n", ""], beam_size=1)   # untrained: any words
        >>> two == also_two, blank
        (True, '')
        >>> two == tfm.Translator(model, tokenizer, beam_size=1)(["two"])[0]   # greedy: tfm's output
        True
    """

    def __init__(self, model_dir, device="cpu", compute_type="default", inter_threads=1, intra_threads=0,
                 batch_size=64):
        ctranslate2 = _require_ctranslate2()
        import sentencepiece

        model_dir = os.fspath(model_dir)
        self.metadata = read_metadata(model_dir)
        if self.metadata.get("format") != "ctranslate2":
            raise ValueError(f"{model_dir!r} holds a {self.metadata.get('format', 'saved_model')} export, not a "
                             "CTranslate2 one: load it with SavedModelTranslator")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        self.batch_size = int(batch_size)
        self.beam_size = int(self.metadata["beam_size"])
        self.alpha = float(self.metadata["alpha"])
        self.max_source_length = int(self.metadata["max_source_length"])
        self.max_extra_length = int(self.metadata["max_extra_length"])
        self.translator = ctranslate2.Translator(model_dir, device=device, compute_type=compute_type,
                                                 inter_threads=inter_threads, intra_threads=intra_threads)
        self.sentencepiece = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(model_dir, SENTENCEPIECE_FILE))

    def _decoding(self, beam_size, alpha):
        """`(beam_size, alpha)` for one call: None takes the export's; anything else is checked."""
        beam_size = self.beam_size if beam_size is None else beam_size
        if isinstance(beam_size, bool) or not isinstance(beam_size, numbers.Integral) or beam_size < 1:
            raise ValueError(f"beam_size={beam_size!r}: expected an int >= 1 (1 = greedy)")
        return int(beam_size), validate_length_penalty(self.alpha if alpha is None else alpha)

    def _search(self, sources, beam_size, alpha):
        """`(outputs, scores)`: the best hypothesis of each source (subword lists), each within its own
        output limit, and its score in tfm's convention."""
        options = dict(beam_size=beam_size, length_penalty=alpha, max_batch_size=self.batch_size,
                       max_input_length=0, suppress_sequences=SUPPRESSED, return_scores=True,
                       min_decoding_length=0)  # as tfm: [END] may come first (a blank translation)
        limits = [len(source) + self.max_extra_length for source in sources]
        longest = max(limits)
        results = self.translator.translate_batch(sources, max_decoding_length=longest, **options)
        found = [(result.hypotheses[0], result.scores[0]) for result in results]
        # Reaching its own limit under a longer one, an output either went past it or ended where tfm
        # would have stopped it (then its score counts an [END] that tfm's, forced, does not): again
        # with its own limit.
        again = {}
        for i, (output, _) in enumerate(found):
            if limits[i] < longest and len(output) >= limits[i]:
                again.setdefault(limits[i], []).append(i)
        pending = [(group, self.translator.translate_batch([sources[i] for i in group], max_decoding_length=limit,
                                                           asynchronous=True, **options))
                   for limit, group in again.items()]  # asynchronous: `inter_threads` groups at once
        for group, results in pending:
            for i, result in zip(group, results):
                result = result.result()
                found[i] = result.hypotheses[0], result.scores[0]
        outputs, scores = [], []
        for (output, score), limit in zip(found, limits):
            # CTranslate2's score is log P / |Y|^alpha, |Y| counting [END] when the output has one; an
            # output stopped at its limit has none (tfm's forced [END] adds log-probability 0).
            ct2_length = len(output) if len(output) >= limit else len(output) + 1
            log_prob = float(score) * ct2_length ** alpha
            outputs.append(output)
            scores.append(log_prob / _length_penalty(len(output) + 1, alpha))
        return outputs, scores

    def translate_tokens(self, sources, *, beam_size=None, alpha=None):
        """Lists of subword strings in, lists of subword strings out: the search without the text rules.

        Args:
            sources: list of lists of subword strings (`SentencePieceProcessor.encode(..., out_type=str)`),
                cut to the model's `max_length` here.
            beam_size, alpha: as in `translate`.

        Returns:
            list of lists of subword strings, one per source (`[END]` not included).

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, max_extra_length=5)
            >>> translator = CTranslate2Translator(export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> outputs = translator.translate_tokens([["▁two"], ["▁seven", "▁hundred"]], beam_size=1)
            >>> [len(output) <= limit for output, limit in zip(outputs, [1 + 5, 2 + 5])]   # source length + 5
            [True, True]
        """
        return self.translate_tokens_with_scores(sources, beam_size=beam_size, alpha=alpha)[0]

    def translate_tokens_with_scores(self, sources, *, beam_size=None, alpha=None):
        """`translate_tokens` and tfm's score of each output: `(outputs, scores)`, two lists.

        Args:
            sources, beam_size, alpha: as in `translate_tokens`.

        Returns:
            `(outputs, scores)`: `scores[i]` is `log P(Y | X) / lp(Y)` of `outputs[i]` with GNMT's
            `lp` and `|Y|` = subwords + `[END]` (tfm's convention; see the module's docstring).

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, max_extra_length=5)
            >>> translator = CTranslate2Translator(export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> outputs, scores = translator.translate_tokens_with_scores([["▁two"]], beam_size=1)
            >>> outputs == translator.translate_tokens([["▁two"]], beam_size=1), bool(scores[0] < 0)
            (True, True)
        """
        beam_size, alpha = self._decoding(beam_size, alpha)
        sources = [list(source)[: self.max_source_length] for source in sources]
        return self._search(sources, beam_size, alpha) if sources else ([], [])

    def translate(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> list of str, one translation per sentence (`translate_with_scores` adds the scores).

        Args:
            sentences: list of str (or UTF-8 bytes).
            beam_size: int or None. `1` = greedy. None: the export's (`self.beam_size`).
            alpha: float or None. Length penalty, >= 0 (CTranslate2 ranks beams by `|Y|^α`). None: the
                export's (`self.alpha`).
            on_invalid: "error" (raise `ValueError` naming the inputs the rule refuses: not valid
                UTF-8, or holding a NUL byte) or "empty" (answer them with `""`, translate the others).

        Returns:
            list of str. Whitespace only separates words (`"two\\r\\n"` translates as `"two"`); a blank
            sentence translates to `""`. Inputs longer than the model's `max_length` subwords are
            truncated, with one warning per call.

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
            >>> translator = CTranslate2Translator(export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> translator.translate(["two\\x00"])
            Traceback (most recent call last):
            ValueError: input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [0]
            >>> translator.translate([b"two", "two\\x00"], beam_size=2, on_invalid="empty")[1]
            ''
        """
        return self.translate_with_scores(sentences, beam_size=beam_size, alpha=alpha, on_invalid=on_invalid)[0]

    __call__ = translate

    def translate_with_scores(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> `(translations, scores)`: two lists, as `Translator.translate_with_scores`.

        Args:
            sentences, beam_size, alpha, on_invalid: as in `translate`.

        Returns:
            `(translations, scores)`: `scores[i]` is `log P(Y | X) / lp(Y)` of `translations[i]`
            (tfm's convention, whatever the beam size); 0 for a blank sentence, nan for refused input
            with `on_invalid="empty"`.

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
            >>> translator = CTranslate2Translator(export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> translations, scores = translator.translate_with_scores(["two", "\\n"], beam_size=1)
            >>> bool(scores[0] < 0), (translations[1], scores[1])
            (True, ('', 0.0))
            >>> _, tfm_scores = tfm.Translator(model, tokenizer, beam_size=1).translate_with_scores(["two"])
            >>> bool(abs(scores[0] - tfm_scores[0]) < 1e-4)   # greedy: tfm's score of tfm's output
            True
        """
        beam_size, alpha = self._decoding(beam_size, alpha)
        raw, refused = check_sentences(sentences, on_invalid)
        refused = set(refused)
        pieces = [[] if i in refused else self.sentencepiece.encode(input_rule.normalize(text.decode("utf-8")),
                                                                     out_type=str)
                  for i, text in enumerate(raw)]
        long = [i for i, p in enumerate(pieces) if len(p) > self.max_source_length]
        if long:
            logger.warning("%d input(s) longer than the model's %d subwords were truncated (the first: index %d)",
                           len(long), self.max_source_length, long[0])
        todo = [i for i, p in enumerate(pieces) if p]
        outputs, todo_scores = self.translate_tokens_with_scores([pieces[i] for i in todo], beam_size=beam_size,
                                                                 alpha=alpha)
        translations = [""] * len(raw)
        all_scores = [float("nan") if i in refused else 0.0 for i in range(len(raw))]
        for i, output, score in zip(todo, outputs, todo_scores):
            translations[i] = self.sentencepiece.decode_pieces(output).strip(" \t\n\v\f\r")  # as input_rule_ops.finish
            all_scores[i] = score
        return translations, all_scores
