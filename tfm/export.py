"""A SavedModel that translates strings: tokenizer, beam search and detokenizer in one graph.

    tfm export --run runs/m30k --output exported/m30k/1 --beam-size 4
    tfm.export.export("runs/m30k", "exported/m30k/1")             # the same from Python
    tfm.export.export((model, tokenizer), "exported/x/1")

    translator = tf.saved_model.load("exported/m30k/1")          # only tensorflow + tensorflow_text needed
    translator.signatures["serving_default"](text=tf.constant(["A dog runs."]))
    # {"translations": <tf.string (1,)>, "scores": <float32 (1,)>}

The exported `tf.Module` holds the model's variables, the SentencePiece model of
the tokenizer (as a tensorflow-text resource) and one `tf.function`,
`serving_default`: a 1-D `tf.string` tensor `text` in; `translations` (`tf.string`,
same length) and `scores` (float32: the length-penalized log-probability of each
translation, `log P(Y | X)` with beam size 1) out. TensorFlow Serving's REST API
then answers `{"instances": ["A dog runs."]}` (see README).

The graph is built for TensorFlow Serving: no XLA (`jit_compile`) and nothing
but plain TensorFlow ops and the SentencePiece ops that tensorflow-text 2.12.1
already had (the version TF Serving's images link in); `tests/test_export.py`
checks every op of every function against that allow-list.

Inputs are checked and bounded, so no input can crash the server or make it run
away:

- invalid UTF-8: `InvalidArgumentError` ("tfm translator: input is not valid
  UTF-8; indices of the invalid strings: [...]"), checked before tokenizing;
  over REST this comes back as an error with that message, not a crash;
- empty or whitespace-only strings: `""` with score 0;
- long inputs: the subwords beyond the model's `max_length` (256 for base, 64
  for tiny) are dropped before the encoder, so work and output stay bounded:
  at most `max_length + max_extra_length` output subwords;
- characters outside the vocabulary become `[UNK]`; emoji, right-to-left marks
  and other valid Unicode go through the tokenizer like any text.
"""

import json
import os

import tensorflow as tf

from tfm import decoding

METADATA_FILE = "tfm_export.json"


class ExportedTranslator(tf.Module):
    """The module `export` saves: strings in, strings (and scores) out.

    Args:
        model: a built `Transformer` or `Seq2Seq` with its weights.
        tokenizer: the run's `SubwordTokenizer` (a `tf.Module`).
        beam_size: int. `1` = greedy. Defaults to `4`.
        alpha: float. Length penalty. Defaults to `0.6`.
        max_extra_length: int or None. Output limit = source length + this
            (default: the model config's, 50).
    """

    def __init__(self, model, tokenizer, beam_size=4, alpha=0.6, max_extra_length=None, name="translator"):
        super().__init__(name=name)
        if int(beam_size) < 1:
            raise ValueError(f"beam_size={beam_size} must be >= 1")
        self.model = model
        self.tokenizer = tokenizer
        # Listed explicitly so the SavedModel holds every weight whatever the model tracks.
        self.model_variables = list(model.variables)
        self.beam_size = int(beam_size)
        self.alpha = float(alpha)
        self.max_extra_length = max_extra_length
        self._decodable = decoding.as_decodable(model)
        self.serving_default = tf.function(
            self._translate, input_signature=[tf.TensorSpec([None], tf.string, name="text")])

    def _translate(self, text):
        """`text` tf.string `(B,)` -> dict(translations tf.string `(B,)`, scores float32 `(B,)`)."""
        # Reject invalid UTF-8 up front with a clear InvalidArgumentError: a valid string is
        # unchanged by transcoding with replacement, an invalid one is not.
        valid = tf.equal(tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace"), text)  # (B,)
        check = tf.debugging.Assert(tf.reduce_all(valid), [
            "tfm translator: input is not valid UTF-8; indices of the invalid strings:",
            tf.reshape(tf.where(tf.logical_not(valid)), [-1])], summarize=10)
        with tf.control_dependencies([check]):
            text = tf.identity(text)
        ids = self.tokenizer.tokenize(text)  # (B,) -> ragged (B, None)
        limit = self._decodable.max_source_length
        if limit is not None:
            ids = ids[:, :limit]  # long inputs are truncated to what the model accepts
        source_ids = ids.to_tensor(default_value=0)  # (B, S), 0-padded
        # At least one (padding) column, so an all-empty batch still has a shape the encoder takes.
        missing = tf.maximum(1 - tf.shape(source_ids)[1], 0)
        source_ids = tf.pad(source_ids, [[0, 0], [0, missing]])
        result = decoding.search(self._decodable, source_ids, beam_size=self.beam_size, alpha=self.alpha,
                                 max_extra_length=self.max_extra_length)
        translations = tf.strings.strip(self.tokenizer.detokenize(result["sequences"]))  # (B,)
        # Nothing to translate (empty or whitespace only): nothing out, not whatever the model invents.
        has_source = tf.logical_and(tf.strings.length(tf.strings.strip(text)) > 0, ids.row_lengths() > 0)  # (B,)
        translations = tf.where(has_source, translations, "")
        scores = tf.where(has_source, result["scores"], 0.0)
        return {"translations": translations, "scores": scores}


def _load(run_or_model, tokenizer, checkpoint):
    if isinstance(run_or_model, (str, os.PathLike)):
        from tfm.training import load_run

        model, tokenizer, info = load_run(os.fspath(run_or_model), checkpoint=checkpoint)
        return model, tokenizer, {"run": info["run_dir"], "checkpoint": info.get("checkpoint")}
    if isinstance(run_or_model, (tuple, list)):
        model, tokenizer = run_or_model
    else:
        model = run_or_model
    if tokenizer is None:
        raise ValueError("export needs a tokenizer: pass (model, tokenizer), tokenizer=..., or a run folder")
    return model, tokenizer, {}


def export(run_or_model, output_dir, beam_size=4, alpha=0.6, tokenizer=None, max_extra_length=None,
           checkpoint=None):
    """Writes a SavedModel whose `serving_default` translates a batch of strings.

    Args:
        run_or_model: a run folder (str; loaded with `tfm.training.load_run`), a
            `(model, tokenizer)` pair, or a model with `tokenizer=`.
        output_dir: str. The SavedModel folder. TensorFlow Serving wants a numbered
            version folder inside the model folder: `exported/m30k/1`.
        beam_size, alpha, max_extra_length: as in `ExportedTranslator`.
        tokenizer: the `SubwordTokenizer` when `run_or_model` is a model.
        checkpoint: which weights of a run folder (see `load_run`).

    Returns:
        str: `output_dir`. A `tfm_export.json` beside `saved_model.pb` records the settings.
    """
    model, tokenizer, source = _load(run_or_model, tokenizer, checkpoint)
    module = ExportedTranslator(model, tokenizer, beam_size=beam_size, alpha=alpha,
                                max_extra_length=max_extra_length)
    signature = module.serving_default.get_concrete_function()
    output_dir = os.fspath(output_dir)
    tf.saved_model.save(module, output_dir, signatures={"serving_default": signature})
    config = getattr(model, "config", None)
    metadata = {
        "signature": "serving_default",
        "inputs": {"text": "tf.string (B,)"},
        "outputs": {"translations": "tf.string (B,)", "scores": "float32 (B,)"},
        "beam_size": int(beam_size), "alpha": float(alpha),
        "max_source_length": module._decodable.max_source_length,
        "max_extra_length": max_extra_length if max_extra_length is not None
        else module._decodable.default_max_extra_length,
        "model": type(model).__name__,
        "model_config": config.to_dict() if hasattr(config, "to_dict") else None,
        **source,
    }
    with open(os.path.join(output_dir, METADATA_FILE), "w") as f:
        json.dump(metadata, f, indent=2)
        f.write("\n")
    return output_dir


def export_command(args):
    """`tfm export --run RUN --output DIR [--beam-size 4] [--alpha 0.6] [--checkpoint C]`."""
    path = export(args.run, args.output, beam_size=args.beam_size, alpha=args.alpha,
                  checkpoint=getattr(args, "checkpoint", None))
    print(f"exported {args.run} to {path} (serving_default: tf.string text (B,) -> translations, scores; "
          f"beam {args.beam_size}, alpha {args.alpha})")
    print(f"check it: saved_model_cli show --dir {path} --all")
    return 0
