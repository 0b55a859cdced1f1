"""Text preprocessing applied before the subword vocabulary is learned, as most Multi30k papers do.

    preprocess(["A man's dog."], "en", "moses_lc")   # -> ["a man 's dog ."]
    detokenize(["ein hund ."], "de", "moses_lc")     # -> ["ein hund."]

`"moses_lc"`: lowercase, Moses punctuation normalisation and Moses tokenization (the
`sacremoses` port of `lowercase.perl | normalize-punctuation.perl -l L | tokenizer.perl -l L`),
without XML escaping (`&apos;` stays `'`: token boundaries, hence BLEU, are the same). The
Multi30k literature trains and scores on such text (WMT16 multimodal task 1; Wu et al., 2021).
A run stores the setting (`DataConfig.preprocess`); training, `tfm evaluate` and `tfm translate`
apply it to the source side with the same function, and evaluation to the references.
A model trained this way writes lowercased, tokenized text; `detokenize` gives readable text
(still lowercased).
"""

import functools

from tfm.config.validation import PREPROCESSORS


def validate_preprocess(method):
    """`method` if it is None or a name in `PREPROCESSORS`, else ValueError naming them.

    Args:
        method: None or a name in `PREPROCESSORS`.

    Example:
        >>> validate_preprocess("moses_lc"), validate_preprocess(None)
        ('moses_lc', None)
    """
    if method is not None and method not in PREPROCESSORS:
        raise ValueError(f"preprocess={method!r}: expected None or one of {list(PREPROCESSORS)}")
    return method


@functools.cache
def _moses(lang):
    from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

    lang = lang or "en"
    return MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


def moses_lc(text, lang):
    """One sentence lowercased, punctuation-normalised and Moses-tokenized (tokens joined by spaces).

    Args:
        text: str. One sentence.
        lang: str or None. Its language ("en", "de", ...; None = "en").

    Example:
        >>> moses_lc("A man's Dog, running.", "en")
        "a man 's dog , running ."
    """
    normalizer, tokenizer, _ = _moses(lang)
    return tokenizer.tokenize(normalizer.normalize(text.lower()), escape=False, return_str=True).strip()


def preprocess(texts, lang, method):
    """`texts` (list of str) as `method` prepares them; `method=None` returns them unchanged.

    Args:
        texts: iterable of str.
        lang: str or None. Their language.
        method: None or "moses_lc".

    Returns:
        list of str.

    Example:
        >>> preprocess(["Zwei Männer, draußen."], "de", "moses_lc")
        ['zwei männer , draußen .']
    """
    if validate_preprocess(method) is None:
        return list(texts)
    return [moses_lc(text, lang) for text in texts]


def detokenize(texts, lang, method):
    """Model outputs of a `method` run back to untokenized text (Moses detokenizer; case stays lower).

    Args:
        texts: iterable of str, a model's output.
        lang: str or None. Their language.
        method: None or "moses_lc": what the run was trained on.

    Returns:
        list of str.

    Example:
        >>> detokenize(["ein hund , der rennt ."], "de", "moses_lc")
        ['ein hund, der rennt.']
    """
    if validate_preprocess(method) is None:
        return list(texts)
    _, _, detokenizer = _moses(lang)
    return [detokenizer.detokenize(text.split()) for text in texts]


def signature(lang, method="moses_lc"):
    """What `method` did, for score signatures: `moses-lc:de|sacremoses:0.2.0|escape:no`.

    Args:
        lang: str or None. The language preprocessed.
        method: "moses_lc".

    Example:
        >>> signature("de").split("|")[0]
        'moses-lc:de'
    """
    from importlib.metadata import version

    validate_preprocess(method)
    return f"moses-lc:{lang or 'en'}|sacremoses:{version('sacremoses')}|escape:no"


def run_preprocess(run_info):
    """`(method, source_lang, target_lang)` of a run's config.json `data` (method None for older runs).

    Args:
        run_info: dict. A run's parsed config.json (`tfm.runs.read_run_config`).

    Example:
        >>> run_preprocess({"data": {"preprocess": "moses_lc", "source_lang": "en", "target_lang": "de"}})
        ('moses_lc', 'en', 'de')
        >>> run_preprocess({"data": {}})   # a run from before the setting existed
        (None, None, None)
    """
    data = run_info.get("data", {})
    return data.get("preprocess"), data.get("source_lang"), data.get("target_lang")
