"""Serving: a run exported for TF Serving (SavedModel, `serving_default`: string in, string out) or for
CTranslate2, and one Python calling convention over both.

    saved_model.py   `export_saved_model(run, folder)`, `ExportedTranslator`, `SavedModelTranslator`
    ctranslate2.py   `export_ctranslate2(run, folder)`, `CTranslate2Translator`
    metadata.py      what both exports record beside the model (tfm_export.json), read without TensorFlow

Names are imported on first use (PEP 562).

Example:
    >>> import tfm.serving
    >>> tfm.serving.METADATA_FILE
    'tfm_export.json'
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

_EXPORTS = {
    **dict.fromkeys(("ExportedTranslator", "SIGNATURES", "SavedModelTranslator", "export_saved_model"),
                    "tfm.serving.saved_model"),
    **dict.fromkeys(("CTranslate2Translator", "QUANTIZATIONS", "export_ctranslate2"), "tfm.serving.ctranslate2"),
    **dict.fromkeys(("METADATA_FILE", "read_metadata"), "tfm.serving.metadata"),
}
_SUBMODULES = ("ctranslate2", "metadata", "saved_model")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
