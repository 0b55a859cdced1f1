"""Multi30k (WMT16 multimodal task 1): Flickr30k image captions in en, de and fr.

Elliott et al., 2016, "Multi30K: Multilingual English-German Image Descriptions".
29,000 train, 1,014 validation and 1,000 test (test_2016_flickr) sentence pairs.
The raw gzip files come from the multi30k/dataset GitHub repository through
`keras.utils.get_file` into `<data_dir>/multi30k/`; when they are already there
nothing touches the network.
"""

import os

import keras

from tfm.data.cache import resolve_data_dir
from tfm.data.splits import canonical_split
from tfm.data.text_files import load_parallel_files_with_summary

URL = "https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/{file}"
LANGS = ("en", "de", "fr")
# Our split names -> the file stems of the dataset repository.
SPLIT_FILES = {"train": "train", "validation": "val", "test": "test_2016_flickr"}
SUBDIR = "multi30k"


class DownloadError(ConnectionError, RuntimeError):
    """A Multi30k file could not be downloaded.

    A `ConnectionError`, so the CLI prints its one-line message without a traceback; a `RuntimeError`,
    so callers that catch the errors of `keras.utils.get_file` that way catch it too.

    Args:
        message: str. What failed and how to place the files by hand.

    Example:
        >>> isinstance(DownloadError("offline"), (ConnectionError, RuntimeError))
        True
    """


def multi30k_file(split, lang, data_dir=None, download=True):
    """The local path of one Multi30k file, downloading it if needed.

    Args:
        split: "train", "validation" (alias "val") or "test".
        lang: "en", "de" or "fr".
        data_dir: cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch a missing file; when `False` a missing file raises.

    Returns:
        str: `<data_dir>/multi30k/<split file>.<lang>.gz`.

    Example:
        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> os.makedirs(os.path.join(tmp.name, "multi30k"))
        >>> open(os.path.join(tmp.name, "multi30k", "val.de.gz"), "wb").close()  # as if downloaded
        >>> os.path.relpath(multi30k_file("val", "de", data_dir=tmp.name, download=False), tmp.name)
        'multi30k/val.de.gz'
    """
    split = canonical_split(split)
    if lang not in LANGS:
        raise ValueError(f"lang={lang!r}: Multi30k has {list(LANGS)}")
    data_dir = resolve_data_dir(data_dir)
    fname = f"{SPLIT_FILES[split]}.{lang}.gz"
    path = os.path.join(data_dir, SUBDIR, fname)
    if os.path.isfile(path) and not os.access(data_dir, os.W_OK):
        return path  # a read-only mirror: get_file would fall back to /tmp/.keras and download again
    if not os.path.isfile(path) and not download:
        raise FileNotFoundError(
            f"Multi30k file {path!r} is missing and download=False; copy the raw .gz files of "
            f"https://github.com/multi30k/dataset (data/task1/raw) into {os.path.dirname(path)!r}"
        )
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)  # get_file also needs data_dir to exist
    except OSError as error:
        raise PermissionError(f"cannot create the Multi30k cache folder {os.path.dirname(path)!r}: {error}") from error
    if not os.access(data_dir, os.W_OK):
        raise PermissionError(f"cannot download Multi30k into {data_dir!r}: folder not writable")
    # get_file returns at once when the file exists (no hash given, so no re-download).
    url = URL.format(file=fname)
    try:
        got = keras.utils.get_file(fname=fname, origin=url, cache_dir=data_dir, cache_subdir=SUBDIR)
    except Exception as error:  # get_file raises a bare Exception on URL / HTTP errors
        raise DownloadError(
            f"could not download {url} to {path!r} ({error}); offline, copy the Multi30k raw .gz files "
            f"into {os.path.dirname(path)!r} (see data/README.md)"
        ) from None  # the message says it all; `tfm train` prints it alone
    if os.path.abspath(got) != path:
        raise RuntimeError(f"keras.utils.get_file stored {fname!r} at {got!r} instead of {path!r}")
    return path


def download_multi30k(data_dir=None, langs=LANGS):
    """Makes sure every split of the given languages is in the cache.

    Args:
        data_dir: cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        langs: iterable of "en", "de", "fr". Defaults to all three.

    Returns:
        dict: `{(split, lang): path}`.

    Example:
        A one-off download (about 5 MB; nothing is fetched for files already in the cache):

            paths = download_multi30k(langs=("en", "de"))
            paths["test", "de"]   # '.../data/cache/multi30k/test_2016_flickr.de.gz'
    """
    return {(split, lang): multi30k_file(split, lang, data_dir) for split in SPLIT_FILES for lang in langs}


def _example_cache(folder, lines):
    """Writes `lines` (`{lang: [sentence, ...]}`) as Multi30k's validation files under `folder` (examples)."""
    import gzip

    os.makedirs(os.path.join(folder, SUBDIR), exist_ok=True)
    for lang, sentences in lines.items():
        with gzip.open(os.path.join(folder, SUBDIR, f"{SPLIT_FILES['validation']}.{lang}.gz"), "wt") as f:
            f.write("".join(sentence + "\n" for sentence in sentences))
    return folder


def load_multi30k(split="train", source_lang="en", target_lang="de", data_dir=None, download=True, strict=False):
    """One Multi30k split as `(source, target)` sentence pairs.

    What was skipped is logged; `load_multi30k_with_summary` also returns it.

    Args:
        split: "train", "validation" (alias "val") or "test" (= test_2016_flickr).
        source_lang, target_lang: two different languages of "en", "de", "fr".
            Defaults to en -> de, the paper's direction.
        data_dir: cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch missing files with `keras.utils.get_file`.
        strict: bool. Refuse blank or invalid UTF-8 lines instead of skipping them
            (as in `load_parallel_files`).

    Returns:
        A `tf.data.Dataset` of scalar `(source, target)` tf.string pairs.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> cache = _example_cache(tmp.name, {"en": ["A dog runs."], "de": ["Ein Hund rennt."]})
        >>> pairs = load_multi30k("validation", "de", "en", data_dir=cache, download=False)
        >>> [(s.decode(), t.decode()) for s, t in pairs.as_numpy_iterator()]
        [('Ein Hund rennt.', 'A dog runs.')]
    """
    return load_multi30k_with_summary(split, source_lang, target_lang, data_dir, download, strict)[0]


def load_multi30k_with_summary(split="train", source_lang="en", target_lang="de", data_dir=None, download=True,
                               strict=False):
    """`load_multi30k`, and the `CorpusSummary` of what reading the two files kept and skipped.

    Args:
        split, source_lang, target_lang, data_dir, download, strict: as in `load_multi30k`.

    Returns:
        `(dataset, summary)`: the scalar tf.string pairs and a `CorpusSummary`.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> cache = _example_cache(tmp.name, {"en": ["A dog.", " "], "de": ["Ein Hund.", "Eine Katze."]})
        >>> pairs, summary = load_multi30k_with_summary("val", "en", "de", data_dir=cache, download=False)
        >>> summary.num_lines, summary.num_pairs, summary.blank
        (2, 1, 1)
    """
    if source_lang == target_lang:
        raise ValueError(f"source_lang and target_lang are both {source_lang!r}")
    source_path = multi30k_file(split, source_lang, data_dir, download)
    target_path = multi30k_file(split, target_lang, data_dir, download)
    return load_parallel_files_with_summary(source_path, target_path, strict=strict)
