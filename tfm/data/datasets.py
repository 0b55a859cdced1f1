"""One entry point for every corpus: `load_dataset(name, split, ...)`.

Names:
    "reverse", "copy"    generated word sequences (`tfm.data.synthetic`), no languages
    "numbers"            generated number words, en <-> de (the offline default of `make demo`)
    "multi30k"           Multi30k en / de / fr, downloaded into the cache folder
    TFDS builders        "wmt14_translate/de-en", "wmt_t2t_translate/de-en", "ted_hrlr_translate/pt_to_en"
    "files"              two local line-aligned files: `source_path=`, `target_path=`
    "ptb_parse"          Penn Treebank sample (WSJ 0001-0199) as sentence -> linearized tree (§6.3, Table 4),
                         every word written "XX": "(S (NP XX XX ) (VP XX ) XX )"
    "ptb_parse_tags"     the same trees with every word written as its POS tag: "(S (NP DT NN ) (VP VBD ) . )"

The treebank's reader belongs to `tfm.parsing` (data never imports parsing): `tfm.parsing.treebank` registers
its two names here when it is imported (`register_dataset`), as `tfm.train` and `tfm evaluate` do.

Example:
    >>> pairs = load_dataset("reverse", "train", num_examples=2, max_length=4)
    >>> [(source.decode(), target.decode()) for source, target in pairs.take(1).as_numpy_iterator()]
    [('mike kilo foxtrot golf', 'golf foxtrot kilo mike')]
"""

from tfm.data.multi30k import load_multi30k
from tfm.data.synthetic import number_words_dataset, sequence_task_dataset
from tfm.data.text_files import load_parallel_files
from tfm.data.tfds_translate import TFDS_NAMES, load_tfds_translate

GENERATED_TASKS = ("reverse", "copy", "numbers")
PARSING_TASKS = ("ptb_parse", "ptb_parse_tags")  # their leaf styles: tfm.parsing.DATASET_LEAVES
DATASET_NAMES = GENERATED_TASKS + ("multi30k",) + TFDS_NAMES + ("files",) + PARSING_TASKS


# Loaders registered by the packages that own their corpora: name -> `loader(split, data_dir=..., **kwargs)`.
_REGISTERED = {}


def register_dataset(name, loader):
    """Makes `load_dataset(name, split, data_dir=..., **kwargs)` call `loader(split, data_dir=..., **kwargs)`.

    For corpora whose reader lives in a package that data must not import (the treebank: `tfm.parsing`).

    Args:
        name: str. One of `DATASET_NAMES` that has no loader here.
        loader: callable `(split, data_dir=None, **kwargs) -> tf.data.Dataset`.

    Example:
        >>> import tfm.parsing.treebank   # registers "ptb_parse" and "ptb_parse_tags" (NLTK's sample; offline)
        >>> sorted(name for name in _REGISTERED)
        ['ptb_parse', 'ptb_parse_tags']
        >>> register_dataset("my_corpus", lambda split, data_dir=None: None)
        Traceback (most recent call last):
        ...
        ValueError: name='my_corpus': only ['ptb_parse', 'ptb_parse_tags'] are registered from outside tfm.data
    """
    if name not in PARSING_TASKS:
        raise ValueError(f"name={name!r}: only {list(PARSING_TASKS)} are registered from outside tfm.data")
    _REGISTERED[name] = loader


def load_dataset(name, split="train", source_lang=None, target_lang=None, data_dir=None, **kwargs):
    """A translation corpus as a `tf.data.Dataset` of scalar `(source, target)` tf.string pairs.

    Args:
        name: str. One of `DATASET_NAMES` (see the module docstring).
        split: "train", "validation" (alias "val") or "test"; TFDS also takes its
            own split strings ("train[:1%]"). Ignored by "files".
        source_lang, target_lang: languages, where the corpus has several
            ("numbers": en / de; "multi30k": en / de / fr; TFDS: the config's two).
            Generated reverse / copy tasks take none.
        data_dir: cache folder for downloads; defaults to `$TFM_DATA_DIR`, else
            `data/cache`.
        **kwargs: passed to the loader: `num_examples`, `seed`, ... for generated
            tasks; `source_path`, `target_path`, `strict` for "files"; `download`
            for Multi30k and TFDS.

    Returns:
        `tf.data.Dataset`.

    Raises:
        ValueError: for an unknown name (the valid ones are listed) or arguments the
            corpus does not take.

    Example:
        >>> pairs = load_dataset("numbers", "validation", source_lang="de", max_number=999, num_validation=3,
        ...                      num_test=3)
        >>> [(s.decode(), t.decode()) for s, t in pairs.take(1).as_numpy_iterator()]
        [('einhundert dreiundsechzig', 'one hundred sixty three')]
        >>> load_dataset("wmt99")
        Traceback (most recent call last):
        ...
        ValueError: unknown dataset name='wmt99'; valid names: [...]
    """
    if name in ("reverse", "copy"):
        if source_lang is not None or target_lang is not None:
            raise ValueError(f"the generated {name!r} task has no languages; got source_lang={source_lang!r}, "
                             f"target_lang={target_lang!r}")
        return sequence_task_dataset(split, task=name, **kwargs)
    if name == "numbers":
        return number_words_dataset(split, source_lang=source_lang or ("de" if target_lang == "en" else "en"),
                                    target_lang=target_lang or ("en" if source_lang == "de" else "de"), **kwargs)
    if name == "multi30k":
        return load_multi30k(split, source_lang=source_lang or ("de" if target_lang == "en" else "en"),
                             target_lang=target_lang or ("en" if source_lang == "de" else "de"),
                             data_dir=data_dir, **kwargs)
    if name in TFDS_NAMES:
        return load_tfds_translate(name, split, source_lang=source_lang, target_lang=target_lang,
                                   data_dir=data_dir, **kwargs)
    if name in PARSING_TASKS:
        if source_lang is not None or target_lang is not None:
            raise ValueError(f"{name} maps sentences to trees and has no languages; got "
                             f"source_lang={source_lang!r}, target_lang={target_lang!r}")
        if name not in _REGISTERED:
            raise ValueError(f"{name!r} is read by tfm.parsing: `import tfm.parsing.treebank` first (it registers "
                             "the treebank's names here; tfm.train and tfm evaluate do)")
        return _REGISTERED[name](split, data_dir=data_dir, **kwargs)
    if name == "files":
        missing = [key for key in ("source_path", "target_path") if key not in kwargs]
        if missing:
            raise ValueError(f"load_dataset('files') needs source_path= and target_path=; missing {missing}")
        return load_parallel_files(**kwargs)
    raise ValueError(f"unknown dataset name={name!r}; valid names: {list(DATASET_NAMES)}")
