"""Translation corpora from TensorFlow Datasets, by builder name.

Supported: `wmt14_translate/de-en` (the paper's WMT 2014 En-De, §5.1),
`wmt_t2t_translate/de-en` (the same pairs as tensor2tensor used) and
`ted_hrlr_translate/pt_to_en` (TED talks, small, quick to prepare). Each example is
a dict `{lang: text}`; this module turns it into a `(source, target)` pair.
"""

import re

import tensorflow as tf

from tfm.data.cache import resolve_data_dir
from tfm.data.splits import SPLIT_ALIASES

TFDS_NAMES = ("wmt14_translate/de-en", "wmt_t2t_translate/de-en", "ted_hrlr_translate/pt_to_en")


def config_langs(name):
    """The two languages a builder config names, in order: "de-en" -> ("de", "en"), "pt_to_en" -> ("pt", "en").

    Args:
        name: str. A TFDS builder name with its config, e.g. "wmt14_translate/de-en".

    Example:
        >>> config_langs("wmt14_translate/de-en"), config_langs("ted_hrlr_translate/pt_to_en")
        (('de', 'en'), ('pt', 'en'))
    """
    config = name.split("/", 1)[-1]
    match = re.fullmatch(r"([a-z]+)(?:-|_to_)([a-z]+)", config)
    if not match:
        raise ValueError(f"cannot read the language pair from {name!r}")
    return match.group(1), match.group(2)


def load_tfds_translate(name, split="train", source_lang=None, target_lang=None, data_dir=None, download=True):
    """A TFDS translation builder as `(source, target)` sentence pairs.

    Args:
        name: one of `TFDS_NAMES`.
        split: "train", "validation" (alias "val") or "test", or any TFDS split
            string such as "train[:1%]".
        source_lang, target_lang: languages of the pair. Default to the order in
            the config name (de -> en for "de-en"); pass `source_lang="en"` for the
            paper's En->De direction (the target then defaults to the other side).
        data_dir: TFDS data folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
            Point it at an existing `~/tensorflow_datasets` to reuse prepared data.
        download: bool. Let TFDS download and prepare the data when missing.

    Returns:
        A `tf.data.Dataset` of scalar tf.string pairs.

    Example:
        TFDS' mock data stands in for the real builder here (no download):

        >>> import tensorflow_datasets as tfds
        >>> with tfds.testing.mock_data(num_examples=2):
        ...     pairs = load_tfds_translate("ted_hrlr_translate/pt_to_en", "train", source_lang="en")
        >>> [spec.dtype.name for spec in pairs.element_spec]
        ['string', 'string']
    """
    import tensorflow_datasets as tfds

    if name not in TFDS_NAMES:
        raise ValueError(f"name={name!r}: supported TFDS builders are {list(TFDS_NAMES)}")
    langs = config_langs(name)
    for arg, lang in (("source_lang", source_lang), ("target_lang", target_lang)):
        if lang is not None and lang not in langs:
            raise ValueError(f"{arg}={lang!r}: {name} has languages {list(langs)}")
    if source_lang is None:
        source_lang = langs[0] if target_lang in (None, langs[1]) else langs[1]
    if target_lang is None:
        target_lang = langs[1] if source_lang == langs[0] else langs[0]
    if source_lang == target_lang:
        raise ValueError(f"source_lang and target_lang are both {source_lang!r}")
    split = SPLIT_ALIASES.get(split, split)
    dataset = tfds.load(name, split=split, data_dir=resolve_data_dir(data_dir), download=download)
    return dataset.map(lambda example: (example[source_lang], example[target_lang]),
                       num_parallel_calls=tf.data.AUTOTUNE)
