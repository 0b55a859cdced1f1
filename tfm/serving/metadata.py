"""What the SavedModel export and the CTranslate2 export share, in plain Python.

    METADATA_FILE     "tfm_export.json", the record every export folder holds beside its model
    resolve_model     a run folder, a (model, tokenizer) pair or a model + tokenizer -> model, tokenizer, source,
                      decoding
    write_metadata    the record, written as JSON
    read_metadata     the record, read back (what `SavedModelTranslator` and `CTranslate2Translator` start from)

No TensorFlow is imported here: `CTranslate2Translator` reads an export with only `ctranslate2` and
`sentencepiece` installed, and it reads the record through this module. `resolve_model` loads a run folder
(`from_preset(run)`), which needs TensorFlow, only when it is given one.

The record says what the exported model answers and where it came from: `format` ("saved_model" or
"ctranslate2"), `beam_size` and `alpha` (fixed in a SavedModel's graph; CTranslate2's defaults),
`max_source_length` (longer inputs are cut) and `max_extra_length` (output limit = source length + this),
the model's class and config, and `run` / `checkpoint` when the weights came from a run folder.

Example:
    >>> folder = write_metadata(tempfile.mkdtemp(), {"format": "saved_model", "beam_size": 4, "alpha": 0.6})
    >>> read_metadata(folder)["beam_size"]
    4
"""

import json
import os

METADATA_FILE = "tfm_export.json"


def resolve_model(run_or_model, tokenizer=None, checkpoint=None):
    """The model and tokenizer an export writes, and where they came from.

    Args:
        run_or_model: a run folder (str or path; its model `from_preset(run)`, its tokenizer and decoding part), a
            `(model, tokenizer)` pair, or a model (then `tokenizer=` is needed).
        tokenizer: the `SubwordTokenizer` of a bare model; refused with a run folder or a pair,
            which carry their own.
        checkpoint: which weights of a run folder (`tfm.runs.weights_path`; None: "auto"); refused with a model,
            whose weights are the ones it holds.

    Returns:
        `(model, tokenizer, source, decoding)`: `source` is the part of the export's record that says where the
        weights came from: `{"run": ..., "checkpoint": ...}` for a run folder, `{}` for a model; `decoding` the
        run's `DecodingConfig` (§6.1: beam size, alpha, output limit), the paper's defaults for a model.

    Raises:
        ValueError: no tokenizer, or a `tokenizer=` / `checkpoint=` that the first argument makes meaningless.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> resolve_model((model, tokenizer))[2:]   # no run: no source, the paper's decoding (limit: the model's room)
        ({}, DecodingConfig(beam_size=4, length_penalty=0.6, max_extra_length=None, checkpoints_to_average=5))
        >>> resolve_model(model)
        Traceback (most recent call last):
        ValueError: the export needs a tokenizer: pass (model, tokenizer), tokenizer=..., or a run folder
    """
    if isinstance(run_or_model, (str, os.PathLike)):
        if tokenizer is not None:
            raise ValueError("tokenizer= is for a bare model: a run folder exports with its own tokenizer")
        from tfm import runs
        from tfm.config import Recipe
        from tfm.models.families import model_class

        run_dir = os.fspath(run_or_model)
        recipe = Recipe.from_record(runs.read_run_config(run_dir))
        weights = runs.weights_path(run_dir, checkpoint or "auto")
        model = model_class(recipe.model).from_preset(run_dir, checkpoint=weights)
        return model, runs.load_tokenizer(run_dir, recipe.model), {"run": run_dir, "checkpoint": weights}, \
            recipe.decoding
    if checkpoint is not None:
        raise ValueError("checkpoint= picks the weights of a run folder; a model exports the weights it holds")
    if isinstance(run_or_model, (tuple, list)):
        if tokenizer is not None:
            raise ValueError("tokenizer= is for a bare model: pass (model, tokenizer) or model with tokenizer=")
        model, tokenizer = run_or_model
    else:
        model = run_or_model
    if tokenizer is None:
        raise ValueError("the export needs a tokenizer: pass (model, tokenizer), tokenizer=..., or a run folder")
    from tfm.config import DecodingConfig

    return model, tokenizer, {}, DecodingConfig()


def write_metadata(export_dir, metadata):
    """Writes `metadata` as `export_dir/tfm_export.json` (indented JSON, so a person can read it too).

    Args:
        export_dir: str or path, an existing folder: the export's.
        metadata: a dict of JSON values.

    Returns:
        str: `export_dir`.

    Example:
        >>> folder = write_metadata(tempfile.mkdtemp(), {"format": "ctranslate2", "beam_size": 4})
        >>> print(open(os.path.join(folder, METADATA_FILE)).read().strip())
        {
          "format": "ctranslate2",
          "beam_size": 4
        }
    """
    export_dir = os.fspath(export_dir)
    with open(os.path.join(export_dir, METADATA_FILE), "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return export_dir


def read_metadata(export_dir):
    """The record an export wrote beside its model (`write_metadata`).

    Args:
        export_dir: str or path, a folder written by `export_saved_model` or `export_ctranslate2`.

    Returns:
        dict: the record (see the module's docstring for its keys).

    Raises:
        FileNotFoundError: the folder holds no `tfm_export.json`, so it is not a tfm export.

    Example:
        >>> folder = write_metadata(tempfile.mkdtemp(), {"format": "saved_model", "alpha": 0.6})
        >>> read_metadata(folder)
        {'format': 'saved_model', 'alpha': 0.6}
        >>> read_metadata(tempfile.mkdtemp())
        Traceback (most recent call last):
        FileNotFoundError: '...' is not a tfm export: it has no tfm_export.json (write one with tfm export, ...)
    """
    path = os.path.join(os.fspath(export_dir), METADATA_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{os.fspath(export_dir)!r} is not a tfm export: it has no {METADATA_FILE} "
                                "(write one with tfm export, tfm.export_saved_model or tfm.export_ctranslate2)")
    with open(path, encoding="utf-8") as f:
        return json.load(f)

