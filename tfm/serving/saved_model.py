"""A SavedModel that translates strings: tokenizer, beam search and detokenizer in one graph.

    tfm export --run runs/m30k --output exported/m30k/1 --beam-size 4
    tfm.export_saved_model("runs/m30k", "exported/m30k/1")             # the same from Python
    tfm.export_saved_model((model, tokenizer), "exported/x/1")

    translator = tf.saved_model.load("exported/m30k/1")          # only tensorflow + tensorflow_text needed
    translator.signatures["serving_default"](text=tf.constant(["A dog runs."]))
    # {"translations": <tf.string (1,)>, "scores": <float32 (1,)>, "truncated": <bool (1,)>}

    tfm.SavedModelTranslator("exported/m30k/1")(["A dog runs."])   # the same graph, Translator's calling convention

The exported `tf.Module` holds the model's variables, the SentencePiece model of
the tokenizer (as a tensorflow-text resource) and one `tf.function`,
`serving_default`: a 1-D `tf.string` tensor `text` in; `translations` (`tf.string`,
same length), `scores` (float32: the length-penalized log-probability of each
translation, `log P(Y | X) / lp(Y)`, whatever the beam size) and `truncated` (bool: True
where the input had more subwords than the model reads, and only its beginning was
translated) out. TensorFlow Serving's REST API
then answers `{"instances": ["A dog runs."]}` (see README).

The graph is built for TensorFlow Serving: no XLA (`jit_compile`) and nothing
but plain TensorFlow ops and the SentencePiece ops that tensorflow-text 2.12.1
already had (the version TF Serving's images link in); `tests/serving/test_saved_model.py`
checks every op of every function against that allow-list.

Beam size and α are fixed in the graph at export time (`tfm_export.json` records them);
`SavedModelTranslator`, the Python wrapper (`tfm.serving.saved_model_translator`), refuses a call that asks for
others rather than answering with the exported ones.

Inputs are checked and bounded, so no input can crash the server or make it run
away; the rule is `tfm.decoding.text_ops`'s (documented there), the one `Translator`, `tfm translate`
and `CTranslate2Translator` apply too:

- not a 1-D batch (a scalar, a matrix): `InvalidArgumentError` saying the signature
  wants a 1-D batch of strings;
- invalid UTF-8 or a NUL byte: `InvalidArgumentError` ("tfm translator: input is not valid
  UTF-8 or holds a NUL byte; indices of the invalid strings: [...]"), checked before
  tokenizing; over REST this comes back as an error with that message, not a crash;
- whitespace only separates words: `"two\\r\\n"`, `" two"` and `"two"` get one answer,
  `"a\\nb"` is translated as `"a b"`;
- empty or whitespace-only strings: `""` with score 0;
- long inputs: the subwords beyond the model's `max_length` (256 for base, 64
  for tiny) are dropped before the encoder, so work and output stay bounded:
  at most `max_length + max_extra_length` output subwords; `truncated` says which;
- characters outside the vocabulary become `[UNK]`; emoji, right-to-left marks
  and other valid Unicode go through the tokenizer like any text.

Loading it needs `import tensorflow_text` first (it registers the SentencePiece
ops); without it `tf.saved_model.load` fails with "Op type not registered
'SentencepieceOp'". TF Serving's images link those ops in.

Example:
    >>> sorted(SIGNATURE_OUTPUTS["serving_default"])   # what every request gets back
    ['scores', 'translations', 'truncated']
"""

import contextlib
import logging
import os

import tensorflow as tf

from tfm.config.run_settings import DecodingConfig
from tfm.config.validation import validate_length_penalty
from tfm.decoding import nbest, text_ops
from tfm.decoding.greedy_or_beam import search
from tfm.decoding.model_adapter import as_decodable
from tfm.decoding.search_steps import validate_beam_size
from tfm.decoding.translator import LENGTH_MULTIPLE
from tfm.models.quantization import quantized_copy, validate_quantize
from tfm.serving.export_folder import atomic_folder, validate_output_folder
from tfm.serving.metadata import METADATA_FILE, resolve_model, write_metadata

# What an export folder holds: TensorFlow's files and tfm's record (nothing else is replaced by --overwrite).
SAVED_MODEL_FILES = {"saved_model.pb", "variables", "assets", "fingerprint.pb", METADATA_FILE}
# Optional signatures beside serving_default, chosen at export time (`tfm.decoding.nbest`).
SIGNATURES = ("nbest", "alignment")
# Every signature also answers `truncated`: True where the input's subwords beyond max_length were dropped.
SIGNATURE_OUTPUTS = {
    "serving_default": {"translations": "tf.string (B,)", "scores": "float32 (B,)", "truncated": "bool (B,)"},
    "nbest": {"translations": "tf.string (B, k)", "scores": "float32 (B, k)", "truncated": "bool (B,)"},
    "alignment": {"translations": "tf.string (B,)", "scores": "float32 (B,)", "source_tokens": "tf.string (B, S)",
                  "target_tokens": "tf.string (B, T)", "alignment": "int32 (B, T)", "attention": "float32 (B, T, S)",
                  "truncated": "bool (B,)"},
}


class ExportedTranslator(tf.Module):
    """The `tf.Module` `export_saved_model` saves: strings in, strings (and scores) out.

    Its `tf.function`s run in Python too (the example), which is how the graph is tried before it is saved.

    Args:
        model: a built `Transformer` or `Seq2Seq` with its weights.
        tokenizer: the run's `SubwordTokenizer` (a `tf.Module`).
        beam_size: int or None. `1` = greedy. None: §6.1's 4 (`tfm.config.DecodingConfig`).
        alpha: float or None. Length penalty, >= 0. None: §6.1's 0.6.
        max_extra_length: int or None. Output limit = source length + this
            (default: the model's `extra_positions`, 50).
        signatures: names from `SIGNATURES` to build beside `serving_default` (see `export_saved_model`).
        alignment_layer: int. The decoder layer the `alignment` signature reads (-1: the last).
        quantize: None, "int8" or "bfloat16": export a copy of the model with smaller weights
            (`tfm.models.quantization.quantized_copy`, see `export_saved_model`).
        jit_compile: bool. Compile the search (not the tokenizer) with XLA, once per padded batch shape
            at serving time; TF Serving runs it only with `--xla_cpu_compilation_enabled=true`.
        early_finish: bool. The beam search stops a sentence once its best finished hypothesis cannot be
            beaten (`tfm.decoding.beam_search`): the same translations and scores in fewer steps
            (`serving_default`, `alignment`; `nbest` searches in full). Defaults to `False`.
        name: str, the module's name.

    Returns:
        the module: `serving_default` (and the `signatures` asked for) as `tf.function`s taking a 1-D
        `tf.string` tensor `text`; `beam_size`, `alpha`, `max_source_length`, `max_extra_length` as decided.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, max_length=8, extra_positions=5)
        >>> module = ExportedTranslator(model, tokenizer, beam_size=1)
        >>> out = module.serving_default(tf.constant(["two", "two\\r\\n", "", "two " * 9]))
        >>> {name: tuple(value.shape) for name, value in out.items()}
        {'translations': (4,), 'scores': (4,), 'truncated': (4,)}
        >>> bool(out["translations"][0] == out["translations"][1]), out["translations"][2].numpy()
        (True, b'')
        >>> out["truncated"].numpy().tolist()   # "two " * 9: 27 subwords, the model reads 8
        [False, False, False, True]
    """

    def __init__(self, model, tokenizer, beam_size=None, alpha=None, max_extra_length=None, signatures=(),
                 alignment_layer=-1, quantize=None, jit_compile=False, early_finish=False, name="translator"):
        super().__init__(name=name)
        self.early_finish = bool(early_finish)
        self.quantize = validate_quantize(quantize)
        if self.quantize is not None:
            model = quantized_copy(model, self.quantize)
        self.jit_compile = bool(jit_compile)
        if self.jit_compile:  # the search alone: XLA has no kernels for the tokenizer's string ops
            self._compiled_search = tf.function(self._search_ids, jit_compile=True, autograph=False)
        self.model = model
        self.tokenizer = tokenizer
        # Listed explicitly so the SavedModel holds every weight whatever the model tracks.
        self.model_variables = list(model.variables)
        self._decodable = as_decodable(model)
        default = DecodingConfig()  # §6.1: beam 4, alpha 0.6
        self.beam_size = validate_beam_size(default.beam_size if beam_size is None else beam_size,
                                            self._decodable.vocab_size)
        self.alpha = validate_length_penalty(default.length_penalty if alpha is None else alpha)
        self.max_extra_length = (self._decodable.default_max_extra_length if max_extra_length is None
                                 else int(max_extra_length))
        self.max_source_length = self._decodable.max_source_length
        unknown = set(signatures) - set(SIGNATURES)
        if unknown:
            raise ValueError(f"signatures={sorted(unknown)}: expected some of {', '.join(SIGNATURES)}")
        self.signature_names = ["serving_default"] + [name for name in SIGNATURES if name in signatures]
        self.alignment_layer = int(alignment_layer)
        if "alignment" in signatures:  # refuse a model or layer with nothing to align now, not at serving time
            nbest.validate_alignment_layer(model, self.alignment_layer)
        spec = [tf.TensorSpec([None], tf.string, name="text")]
        self.serving_default = tf.function(self._translate, input_signature=spec)
        if "nbest" in signatures:
            self.nbest = tf.function(self._nbest, input_signature=spec)
        if "alignment" in signatures:
            self.alignment = tf.function(self._alignment, input_signature=spec)

    def _source(self, text):
        """`text` tf.string `(B,)` -> `(source_ids (B, S), has_source (B,), truncated (B,))`, after the input
        checks."""
        # The signature says (None,), but a served request can still carry a scalar or a matrix. Count the
        # dimensions from the runtime shape's values: Rank/Size of it would be folded to the signature's 1.
        dims = tf.shape(text)
        rank = tf.debugging.Assert(tf.equal(tf.reduce_sum(tf.cast(dims >= 0, tf.int32)), 1), [
            "tfm translator: text must be a 1-D batch of strings, shape (B,), e.g. [\"A dog runs.\"]"])
        with tf.control_dependencies([rank]):
            text = tf.identity(text)  # everything below waits for the rank check
        text = text_ops.assert_valid(text)
        ids, has_source, truncated = text_ops.tokenize_source(self.tokenizer, text,
                                                                self._decodable.max_source_length)
        # (B, S), 0-padded, S >= 1; under XLA a multiple of 8, as the Translator's: fewer shapes to compile
        return text_ops.pad_source(ids, LENGTH_MULTIPLE if self.jit_compile else 1), has_source, truncated

    def _search_ids(self, source_ids, return_all=False):
        return search(self._decodable, source_ids, beam_size=self.beam_size, alpha=self.alpha,
                      max_extra_length=self.max_extra_length, return_all=return_all, early_finish=self.early_finish)

    def _search(self, source_ids, return_all=False):
        if self.jit_compile:
            return self._compiled_search(source_ids, return_all)
        return self._search_ids(source_ids, return_all)

    def _translate(self, text):
        """`text` tf.string `(B,)` -> dict(translations tf.string `(B,)`, scores float32 `(B,)`, truncated bool
        `(B,)`)."""
        source_ids, has_source, truncated = self._source(text)
        result = self._search(source_ids)
        translations, scores = text_ops.finish(self.tokenizer, result.sequences, result.scores, has_source)
        return {"translations": translations, "scores": scores, "truncated": truncated}

    def _nbest(self, text):
        """`text` `(B,)` -> dict(translations tf.string `(B, k)`, scores float32 `(B, k)`, best first; truncated
        bool `(B,)`)."""
        source_ids, has_source, truncated = self._source(text)
        translations, scores = nbest.nbest(self.tokenizer, self._search(source_ids, return_all=True), has_source)
        return {"translations": translations, "scores": scores, "truncated": truncated}

    def _alignment(self, text):
        """`text` `(B,)` -> the best translation, its score, and its alignment (`tfm.decoding.nbest`)."""
        source_ids, has_source, truncated = self._source(text)
        result = self._search(source_ids)
        translations, scores = text_ops.finish(self.tokenizer, result.sequences, result.scores, has_source)
        aligned = nbest.alignments(self._decodable, self.tokenizer, source_ids, result.sequences,
                                     result.lengths, has_source, self.alignment_layer)
        return {"translations": translations, "scores": scores, **aligned, "truncated": truncated}


def validate_saved_model_dir(output_dir, overwrite=False):
    """The output-path rule (`tfm.serving.export_folder.validate_output_folder`) for a SavedModel: checked before any
    work.

    Args:
        output_dir: str, where `export_saved_model` is asked to write.
        overwrite: bool. Accept a previous SavedModel there (it is replaced). Defaults to `False`.

    Returns:
        str: the resolved absolute path to write.

    Raises:
        FileExistsError: `output_dir` holds something other than an export, or a previous export and
            `overwrite` is False.
        NotADirectoryError: it, or a folder above it, is a file, a symbolic link loop or a dangling link.
        ValueError: it is inside one of a run's own files (its checkpoints, tokenizer, ...).
        tfm.runs.WriteError: the folder it goes in cannot be written.

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> validate_saved_model_dir(folder) == os.path.realpath(folder)   # empty: fine
        True
        >>> open(os.path.join(folder, "notes.txt"), "w").close()
        >>> validate_saved_model_dir(folder)
        Traceback (most recent call last):
        FileExistsError: --output '...' exists and is not an exported model (it holds notes.txt); choose a new ...
    """
    return validate_output_folder(os.fspath(output_dir), overwrite=overwrite, marker="saved_model.pb",
                                       entries=SAVED_MODEL_FILES, kind="an exported model")


@contextlib.contextmanager
def _quiet_tensorflow_info():
    """TensorFlow's INFO log lines off for the block (its warnings and errors still show)."""
    tf_logger = tf.get_logger()
    level = tf_logger.level
    tf_logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        tf_logger.setLevel(level)


def export_saved_model(run_or_model, output_dir, *, tokenizer=None, checkpoint=None, beam_size=None, alpha=None,
                       max_extra_length=None, signatures=(), alignment_layer=-1, quantize=None, jit_compile=False,
                       early_finish=False, overwrite=False):
    """Writes a SavedModel whose `serving_default` translates a batch of strings.

    Args:
        run_or_model: a run folder (str; its model, tokenizer and decoding part), a `(model, tokenizer)` pair,
            or a model with `tokenizer=` (`tfm.serving.metadata.resolve_model`).
        output_dir: str or path. The SavedModel folder, new or empty. TensorFlow Serving wants a
            numbered version folder inside the model folder: `exported/m30k/1`. Checked before any
            work (`validate_saved_model_dir`); written into a temporary sibling and renamed into place only
            when complete, so a failed export leaves nothing behind.
        tokenizer: the `SubwordTokenizer` when `run_or_model` is a bare model.
        checkpoint: which weights of a run folder (`tfm.runs.weights_path`; None: "auto").
        beam_size, alpha, max_extra_length: as in `ExportedTranslator` (None: a run's decoding part). Fixed
            in the graph: a server cannot change them per request.
        signatures: names from `SIGNATURES` to add beside `serving_default`: `"nbest"` (the k
            best translations and their scores, `(B, k)`) and `"alignment"` (the best
            translation with its subwords, each output subword's source position and the
            cross-attention of `alignment_layer` averaged over heads). See `tfm.decoding.nbest`.
        alignment_layer: int. The decoder layer the alignment reads (-1: the last).
        quantize: None, "int8" or "bfloat16"; the ops stay ones TF Serving's images have. "bfloat16": every
            weight and product in bfloat16, the softmax, norm statistics and scores in float32: faster where
            the processor has bfloat16 instructions (docs/results.md, "Issue 59": 1.3-1.5x float32), its
            outputs close to float32's, not identical. "int8": int8 kernels in every Dense layer. Smaller, not
            faster: TensorFlow's CPU int8 product is slower than float32 at a beam step's shapes
            (docs/results/decoding_vs_ctranslate2.notes.md: 0.20-0.32x CTranslate2 float32 against float32's
            0.50x); the fast int8 path is the CTranslate2 export
            (`tfm.serving.ctranslate2.export_ctranslate2(..., quantization="int8")`, `tfm export --format
            ctranslate2 --quantize int8`).
        jit_compile: bool. The search compiled with XLA (`ExportedTranslator`). Defaults to `False`.
        early_finish: bool. Stop each sentence's beam once its best translation is decided
            (`ExportedTranslator`): the same outputs, fewer steps. Defaults to `False`.
        overwrite: bool. Replace a previous SavedModel in `output_dir` (only once the new one is
            complete). Defaults to `False`: an existing export is refused.

    Returns:
        str: `output_dir`. A `tfm_export.json` beside `saved_model.pb` records the settings
        (`tfm.serving.metadata`).

    Raises:
        FileExistsError: `output_dir` holds something other than a previous export, or a previous
            export and `overwrite` is False.
        NotADirectoryError, ValueError, tfm.runs.WriteError: a path no export can go to
            (`validate_saved_model_dir`).

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, max_length=8, extra_positions=5)
        >>> path = export_saved_model((model, tokenizer), tempfile.mkdtemp() + "/numbers/1", beam_size=1)
        >>> from tfm.serving.metadata import read_metadata
        >>> read_metadata(path)["beam_size"]
        1
        >>> serve = tf.saved_model.load(path).signatures["serving_default"]
        >>> out = serve(text=tf.constant(["two", " two\\n", "two " * 9]))
        >>> bool(out["translations"][0] == out["translations"][1]), out["truncated"].numpy().tolist()
        (True, [False, False, True])
        >>> export_saved_model((model, tokenizer), path)
        Traceback (most recent call last):
        FileExistsError: --output '...1' already holds an exported model; replace it with --overwrite ...
    """
    output_dir = os.fspath(output_dir)
    target = validate_saved_model_dir(output_dir, overwrite=overwrite)  # before any work
    model, tokenizer, source, decoding = resolve_model(run_or_model, tokenizer=tokenizer, checkpoint=checkpoint)
    module = ExportedTranslator(model, tokenizer, beam_size=decoding.beam_size if beam_size is None else beam_size,
                                alpha=decoding.length_penalty if alpha is None else alpha,
                                max_extra_length=max_extra_length, signatures=signatures,
                                alignment_layer=alignment_layer, quantize=quantize, jit_compile=jit_compile,
                                early_finish=early_finish)
    functions = {name: getattr(module, name).get_concrete_function() for name in module.signature_names}
    config = getattr(model, "config", None)
    with atomic_folder(target, replace=overwrite) as folder:  # renamed into place once complete
        with _quiet_tensorflow_info():  # "INFO:tensorflow:Assets written to: ..." (twice in a notebook)
            tf.saved_model.save(module, folder, signatures=functions)
        _write_record(folder, model, module, config, source)
    return output_dir


def _write_record(folder, model, module, config, source):
    write_metadata(folder, {
        "signature": "serving_default",
        "inputs": {"text": "tf.string (B,)"},
        "outputs": SIGNATURE_OUTPUTS["serving_default"],
        "signatures": {name: SIGNATURE_OUTPUTS[name] for name in module.signature_names},
        "alignment_layer": module.alignment_layer if "alignment" in module.signature_names else None,
        "beam_size": module.beam_size, "alpha": module.alpha,
        "max_source_length": module.max_source_length,
        "max_extra_length": module.max_extra_length,
        "quantize": module.quantize, "jit_compile": module.jit_compile, "early_finish": module.early_finish,
        "model": type(model).__name__,
        "model_config": config.to_dict() if hasattr(config, "to_dict") else None,
        "format": "saved_model",
        **source,
    })
