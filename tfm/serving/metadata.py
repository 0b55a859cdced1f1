"""What the SavedModel export and the CTranslate2 export share, in plain Python.

    METADATA_FILE     "tfm_export.json", the record every export folder holds beside its model
    resolve_model     a run folder, a (model, tokenizer) pair or a model + tokenizer -> (model, tokenizer, source)
    write_metadata    the record, written as JSON
    read_metadata     the record, read back (what `SavedModelTranslator` and `CTranslate2Translator` start from)
    check_sentences   the input rule on a batch: what `translate` and `translate_with_scores` refuse

No TensorFlow is imported here: `CTranslate2Translator` reads an export with only `ctranslate2` and
`sentencepiece` installed, and it reads the record through this module. `resolve_model` loads a run folder
with `tfm.runs.load_run`, which needs TensorFlow, only when it is given one.

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

from tfm.decoding import input_rule

METADATA_FILE = "tfm_export.json"
ON_INVALID = ("error", "empty")  # what translate(on_invalid=...) does with input the rule refuses


def resolve_model(run_or_model, tokenizer=None, checkpoint=None):
    """The model and tokenizer an export writes, and where they came from.

    Args:
        run_or_model: a run folder (str or path; loaded with `tfm.runs.load_run`), a
            `(model, tokenizer)` pair, or a model (then `tokenizer=` is needed).
        tokenizer: the `SubwordTokenizer` of a bare model; refused with a run folder or a pair,
            which carry their own.
        checkpoint: which weights of a run folder (see `tfm.runs.load_run`); refused with a model,
            whose weights are the ones it holds.

    Returns:
        `(model, tokenizer, source)`: `source` is the part of the export's record that says where the
        weights came from: `{"run": ..., "checkpoint": ...}` for a run folder, `{}` for a model.

    Raises:
        ValueError: no tokenizer, or a `tokenizer=` / `checkpoint=` that the first argument makes meaningless.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> resolve_model((model, tokenizer)) == (model, tokenizer, {})
        True
        >>> resolve_model(model)
        Traceback (most recent call last):
        ValueError: the export needs a tokenizer: pass (model, tokenizer), tokenizer=..., or a run folder
    """
    if isinstance(run_or_model, (str, os.PathLike)):
        if tokenizer is not None:
            raise ValueError("tokenizer= is for a bare model: a run folder exports with its own tokenizer")
        from tfm.runs import folder

        model, tokenizer, info = folder.load_run(os.fspath(run_or_model), checkpoint=checkpoint)
        return model, tokenizer, {"run": info["run_dir"], "checkpoint": info.get("checkpoint")}
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
    return model, tokenizer, {}


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


def check_sentences(sentences, on_invalid="error"):
    """A batch under the input rule (`tfm.decoding.input_rule`), as every translator's `translate` takes it.

    `Translator`, `SavedModelTranslator` and `CTranslate2Translator` answer alike because they screen their
    input alike: a list of str (or UTF-8 bytes), in which a string that is not valid UTF-8 or holds a NUL
    byte is refused, naming every such index, or (`on_invalid="empty"`) answered with `""`.

    Args:
        sentences: a list (or other sequence) of str or bytes; a single str is refused, so that it is not
            translated character by character.
        on_invalid: "error" or "empty".

    Returns:
        `(raw, refused)`: `raw` the sentences as bytes (a str read with `errors="surrogateescape"` turns
        back into its original bytes), `refused` the sorted indices to answer with `""` (always empty
        with `on_invalid="error"`).

    Raises:
        TypeError: one str or bytes instead of a list, or an item that is neither.
        ValueError: `on_invalid` is not one of `ON_INVALID`, or (with "error") some input is refused:
            "input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [...]".

    Example:
        >>> check_sentences(["two", b"three"])
        ([b'two', b'three'], [])
        >>> check_sentences(["two", b"\\xff", "a\\x00b"], on_invalid="empty")
        ([b'two', b'\\xff', b'a\\x00b'], [1, 2])
        >>> check_sentences(["two", b"\\xff"])
        Traceback (most recent call last):
        ValueError: input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [1]
    """
    if isinstance(sentences, (str, bytes)):
        raise TypeError("translate takes a list of sentences; wrap a single one in a list")
    if on_invalid not in ON_INVALID:
        raise ValueError(f"on_invalid={on_invalid!r}: expected one of {ON_INVALID}")
    raw = []
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, (str, bytes)):
            raise TypeError(f"sentences[{i}] is a {type(sentence).__name__}, expected str")
        raw.append(input_rule.as_bytes(sentence))
    refused = [i for i, text in enumerate(raw) if input_rule.problem(text)]
    if refused and on_invalid == "error":
        raise ValueError(f"{input_rule.INVALID} {refused}")
    return raw, refused
