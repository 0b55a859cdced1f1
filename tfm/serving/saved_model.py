"""A SavedModel that translates strings: tokenizer, beam search and detokenizer in one graph.

    tfm export --run runs/m30k --output exported/m30k/1 --beam-size 4
    tfm.export_saved_model("runs/m30k", "exported/m30k/1")             # the same from Python
    tfm.export_saved_model((model, tokenizer), "exported/x/1")

    translator = tf.saved_model.load("exported/m30k/1")          # only tensorflow + tensorflow_text needed
    translator.signatures["serving_default"](text=tf.constant(["A dog runs."]))
    # {"translations": <tf.string (1,)>, "scores": <float32 (1,)>, "truncated": <bool (1,)>}

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

Inputs are checked and bounded, so no input can crash the server or make it run
away; the rule is `tfm.decoding.input_rule_ops`'s (documented there), the one `Translator`, `tfm translate`
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
"""

import contextlib
import json
import logging
import os
import tempfile

import tensorflow as tf

from tfm.runs import folder as runs
from tfm.config.rules import validate_length_penalty
from tfm.decoding import nbest
from tfm.decoding import input_rule_ops
from tfm.decoding.decodable import as_decodable
from tfm.decoding.search import validate_beam_size, search
from tfm.serving.ctranslate2 import METADATA_FILE  # defined there: CTranslate2Translator reads it without TF

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
    """The module `export` saves: strings in, strings (and scores) out.

    Args:
        model: a built `Transformer` or `Seq2Seq` with its weights.
        tokenizer: the run's `SubwordTokenizer` (a `tf.Module`).
        beam_size: int or None. `1` = greedy. None: the model config's (4, §6.1).
        alpha: float or None. Length penalty, >= 0. None: the model config's (0.6, §6.1).
        max_extra_length: int or None. Output limit = source length + this
            (default: the model config's, 50).
        signatures: names from `SIGNATURES` to build beside `serving_default` (see `export`).
        alignment_layer: int. The decoder layer the `alignment` signature reads (-1: the last).

    Example:
        >>> from tfm import TransformerConfig, build_transformer
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = build_transformer(TransformerConfig.tiny(vocab_size=70, num_layers=1, max_length=8,
        ...                                                  max_extra_length=5))
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
                 alignment_layer=-1, name="translator"):
        super().__init__(name=name)
        config = getattr(model, "config", None)
        self.model = model
        self.tokenizer = tokenizer
        # Listed explicitly so the SavedModel holds every weight whatever the model tracks.
        self.model_variables = list(model.variables)
        self._decodable = as_decodable(model)
        self.beam_size = validate_beam_size(getattr(config, "beam_size", 4) if beam_size is None else beam_size,
                                         self._decodable.vocab_size)
        self.alpha = validate_length_penalty(getattr(config, "length_penalty", 0.6) if alpha is None else alpha)
        self.max_extra_length = (self._decodable.default_max_extra_length if max_extra_length is None
                                 else int(max_extra_length))
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
        text = input_rule_ops.assert_valid(text)
        ids, has_source, truncated = input_rule_ops.tokenize_source(self.tokenizer, text,
                                                                self._decodable.max_source_length)
        return input_rule_ops.pad_source(ids), has_source, truncated  # (B, S), 0-padded, S >= 1

    def _search(self, source_ids, **kwargs):
        return search(self._decodable, source_ids, beam_size=self.beam_size, alpha=self.alpha,
                      max_extra_length=self.max_extra_length, **kwargs)

    def _translate(self, text):
        """`text` tf.string `(B,)` -> dict(translations tf.string `(B,)`, scores float32 `(B,)`, truncated bool
        `(B,)`)."""
        source_ids, has_source, truncated = self._source(text)
        result = self._search(source_ids)
        translations, scores = input_rule_ops.finish(self.tokenizer, result.sequences, result.scores, has_source)
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
        translations, scores = input_rule_ops.finish(self.tokenizer, result.sequences, result.scores, has_source)
        aligned = nbest.alignments(self._decodable, self.tokenizer, source_ids, result.sequences,
                                     result.lengths, has_source, self.alignment_layer)
        return {"translations": translations, "scores": scores, **aligned, "truncated": truncated}


def _load(run_or_model, tokenizer, checkpoint):
    if isinstance(run_or_model, (str, os.PathLike)):
        model, tokenizer, info = runs.load_run(os.fspath(run_or_model), checkpoint=checkpoint)
        return model, tokenizer, {"run": info["run_dir"], "checkpoint": info.get("checkpoint")}
    if isinstance(run_or_model, (tuple, list)):
        model, tokenizer = run_or_model
    else:
        model = run_or_model
    if tokenizer is None:
        raise ValueError("export needs a tokenizer: pass (model, tokenizer), tokenizer=..., or a run folder")
    return model, tokenizer, {}


def validate_output_dir(output_dir):
    """Refuses a folder that holds anything but a previous SavedModel (which is replaced).

    Raises:
        FileExistsError: `output_dir` is a file, or a folder with other things in it.

    Example:
        >>> folder = tempfile.mkdtemp()
        >>> validate_output_dir(folder)   # empty: fine
        >>> open(os.path.join(folder, "notes.txt"), "w").close()
        >>> validate_output_dir(folder)
        Traceback (most recent call last):
        FileExistsError: --output '...' exists and is not an exported model (it holds notes.txt); choose a new ...
    """
    if not os.path.exists(output_dir):
        return
    if not os.path.isdir(output_dir):
        raise FileExistsError(f"--output {output_dir!r} exists and is not a folder")
    entries = set(os.listdir(output_dir))
    ours = {"saved_model.pb", "variables", "assets", "fingerprint.pb", METADATA_FILE}
    if entries and not ("saved_model.pb" in entries and entries <= ours):
        raise FileExistsError(
            f"--output {output_dir!r} exists and is not an exported model (it holds "
            f"{', '.join(sorted(entries)[:5])}{' ...' if len(entries) > 5 else ''}); choose a new or empty folder, "
            "e.g. exported/NAME/1")


@contextlib.contextmanager
def _quiet_tensorflow_info():
    """TensorFlow's INFO log lines off for the block (its warnings and errors still show)."""
    logger = tf.get_logger()
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def export_saved_model(run_or_model, output_dir, beam_size=None, alpha=None, tokenizer=None, max_extra_length=None,
           checkpoint=None, signatures=(), alignment_layer=-1):
    """Writes a SavedModel whose `serving_default` translates a batch of strings.

    Args:
        run_or_model: a run folder (str; loaded with `tfm.runs.load_run`), a
            `(model, tokenizer)` pair, or a model with `tokenizer=`.
        output_dir: str. The SavedModel folder. TensorFlow Serving wants a numbered
            version folder inside the model folder: `exported/m30k/1`.
        beam_size, alpha, max_extra_length: as in `ExportedTranslator` (None: the run's config).
        tokenizer: the `SubwordTokenizer` when `run_or_model` is a model.
        checkpoint: which weights of a run folder (see `load_run`).
        signatures: names from `SIGNATURES` to add beside `serving_default`: `"nbest"` (the k
            best translations and their scores, `(B, k)`) and `"alignment"` (the best
            translation with its subwords, each output subword's source position and the
            cross-attention of `alignment_layer` averaged over heads). See `tfm.decoding.nbest`.
        alignment_layer: int. The decoder layer the alignment reads (-1: the last).

    Returns:
        str: `output_dir`. A `tfm_export.json` beside `saved_model.pb` records the settings.

    Raises:
        FileExistsError: `output_dir` holds something other than a previous export.

    Example:
        >>> path = export_saved_model((model, tokenizer), tempfile.mkdtemp() + "/numbers/1", beam_size=1)  # `ExportedTranslator`'s
        >>> serve = tf.saved_model.load(path).signatures["serving_default"]
        >>> out = serve(text=tf.constant(["two", " two\\n", "two " * 9]))
        >>> bool(out["translations"][0] == out["translations"][1]), out["truncated"].numpy().tolist()
        (True, [False, False, True])
    """
    output_dir = os.fspath(output_dir)
    validate_output_dir(output_dir)
    model, tokenizer, source = _load(run_or_model, tokenizer, checkpoint)
    module = ExportedTranslator(model, tokenizer, beam_size=beam_size, alpha=alpha,
                                max_extra_length=max_extra_length, signatures=signatures,
                                alignment_layer=alignment_layer)
    functions = {name: getattr(module, name).get_concrete_function() for name in module.signature_names}
    with _quiet_tensorflow_info():  # "INFO:tensorflow:Assets written to: ..." (twice in a notebook)
        tf.saved_model.save(module, output_dir, signatures=functions)
    config = getattr(model, "config", None)
    metadata = {
        "signature": "serving_default",
        "inputs": {"text": "tf.string (B,)"},
        "outputs": SIGNATURE_OUTPUTS["serving_default"],
        "signatures": {name: SIGNATURE_OUTPUTS[name] for name in module.signature_names},
        "alignment_layer": module.alignment_layer if "alignment" in module.signature_names else None,
        "beam_size": module.beam_size, "alpha": module.alpha,
        "max_source_length": module._decodable.max_source_length,
        "max_extra_length": module.max_extra_length,
        "model": type(model).__name__,
        "model_config": config.to_dict() if hasattr(config, "to_dict") else None,
        **source,
    }
    with open(os.path.join(output_dir, METADATA_FILE), "w") as f:
        json.dump(metadata, f, indent=2)
        f.write("\n")
    return output_dir
