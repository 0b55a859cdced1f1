"""Serving: a run exported for TF Serving (SavedModel, `serving_default`: string in, string out) or for
CTranslate2, and one Python calling convention over both, `Translator`'s:
`translate(sentences, *, beam_size=None, alpha=None, on_invalid="error") -> list[str]`,
`translate_with_scores(...) -> (list[str], list[float])`, `__call__ = translate`.

    saved_model.py              `export_saved_model(run, folder)`, `ExportedTranslator` (the saved module)
    saved_model_translator.py   `SavedModelTranslator` (the wrapper over an exported folder)
    ctranslate2.py              `export_ctranslate2(run, folder)`: the model as CTranslate2's spec, written
    ctranslate2_translator.py   `CTranslate2Translator` (runs an exported folder; no TensorFlow)
    metadata.py                 what both exports share: the record beside the model (tfm_export.json), the
                                model, tokenizer and decoding settings an export writes; no TensorFlow
    export_folder.py            an export's folder: checked before any work, written whole or not at all

Names are imported on first use (PEP 562).

Example:
    >>> import tfm.serving
    >>> tfm.serving.METADATA_FILE
    'tfm_export.json'
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

_EXPORTS = {
    **dict.fromkeys(("ExportedTranslator", "SIGNATURES", "export_saved_model"), "tfm.serving.saved_model"),
    "SavedModelTranslator": "tfm.serving.saved_model_translator",
    **dict.fromkeys(("QUANTIZATIONS", "export_ctranslate2"), "tfm.serving.ctranslate2"),
    "CTranslate2Translator": "tfm.serving.ctranslate2_translator",
    **dict.fromkeys(("METADATA_FILE", "read_metadata", "resolve_model", "write_metadata"), "tfm.serving.metadata"),
}
_SUBMODULES = ("ctranslate2", "ctranslate2_translator", "export_folder", "metadata", "saved_model",
               "saved_model_translator")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
