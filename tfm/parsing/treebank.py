"""English constituency parsing as translation: the Penn Treebank sample as linearized trees (§6.3).

Vaswani et al. (2017, §6.3, Table 4) parse the WSJ part of the Penn Treebank with a 4-layer
Transformer that reads a sentence and writes its tree as a token sequence, following Vinyals,
Kaiser et al. (2015), "Grammar as a foreign language". This module provides that task on the
free 10% sample of the WSJ treebank that NLTK distributes (`nltk.download("treebank")`):
files wsj_0001.mrg .. wsj_0199.mrg, 3,914 parsed sentences.

Data: `<data_dir>/nltk_data/corpora/treebank.zip` (or the unzipped `corpora/treebank/`), the
layout `nltk.download("treebank", download_dir=<data_dir>/nltk_data)` writes; `data_dir` is the
tfm cache folder (`tfm.data.cache.resolve_data_dir`). The corpus is read with NLTK's
`BracketParseCorpusReader` from that folder only: the folder is put on `nltk.data.path` just
while the files are read (newer NLTK refuses to open files outside that path), so neither a
global `nltk.data.path` nor `$NLTK_DATA` set elsewhere is needed or used.

Each tree is preprocessed as parsers do (`tfm.parsing.preprocess_tree`: no -NONE- empty elements,
no function tags, no root wrapper) and written as a Vinyals-style token sequence
(`tfm.parsing.linearize`):
    (S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))
    -> "(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )"
Everything about trees lives in `tfm.parsing`; this module reads the treebank and makes the data set.

Splits, fixed by file (sentence counts measured on the NLTK sample, after preprocessing,
which never drops a sentence):
    train       wsj_0001 .. wsj_0169   3,501 sentences (89.4%)
    validation  wsj_0170 .. wsj_0184     217 sentences ( 5.6%)
    test        wsj_0185 .. wsj_0199     196 sentences ( 5.0%)
(The paper trains on WSJ sections 2-21, about 40K sentences, and tests on section 23; this
sample is about a tenth of that, so its numbers are not comparable to Table 4.)
"""

import contextlib
import functools
import os

import nltk
import tensorflow as tf
from nltk.corpus.reader import BracketParseCorpusReader

from tfm.data.cache import resolve_data_dir
from tfm.data.datasets import register_dataset
from tfm.data.splits import canonical_split
from tfm.parsing.linearization import linearize
from tfm.parsing.preprocessing import preprocess_tree
from tfm.parsing.trees import DATASET_LEAVES, XX_LEAVES, tree_tokens

NLTK_SUBDIR = "nltk_data"
TREEBANK_ZIP = os.path.join("corpora", "treebank.zip")
TREEBANK_FOLDER = os.path.join("corpora", "treebank")
# First and last file number (inclusive) of each split: wsj_0001.mrg .. wsj_0199.mrg.
SPLIT_FILE_RANGES = {"train": (1, 169), "validation": (170, 184), "test": (185, 199)}
SPLIT_SIZES = {"train": 3501, "validation": 217, "test": 196}


def treebank_dir(data_dir=None, download=True):
    """The `nltk_data` folder that holds the Penn Treebank sample, fetching it if needed.

    Args:
        data_dir: tfm cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. When the corpus is missing, fetch it with
            `nltk.download("treebank", download_dir=<data_dir>/nltk_data, quiet=True)`.

    Returns:
        str: `<data_dir>/nltk_data`, which holds `corpora/treebank.zip` or `corpora/treebank/`.

    Raises:
        FileNotFoundError: the corpus is missing and `download=False`, or the download did not
            bring it (offline); the message says where to put `treebank.zip`.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> data_dir = write_example_treebank(tmp.name)   # every file holds "The man saw a dog ."
        >>> os.path.relpath(treebank_dir(data_dir, download=False), data_dir)
        'nltk_data'
        >>> treebank_dir(os.path.join(tmp.name, "empty"), download=False)
        Traceback (most recent call last):
        ...
        FileNotFoundError: the Penn Treebank sample is missing: expected '...treebank.zip' (or the folder ...
    """
    root = os.path.join(resolve_data_dir(data_dir), NLTK_SUBDIR)
    if _has_treebank(root):
        return root
    reason = "download=False"
    if download:
        try:
            os.makedirs(root, exist_ok=True)
            ok = nltk.download("treebank", download_dir=root, quiet=True)
            reason = "nltk.download('treebank') did not fetch it" + ("" if ok else " (no network?)")
        except Exception as error:  # the downloader raises many kinds of errors (network, permissions)
            reason = f"nltk.download('treebank') failed: {error}"
        if _has_treebank(root):
            return root
    raise FileNotFoundError(
        f"the Penn Treebank sample is missing: expected {os.path.join(root, TREEBANK_ZIP)!r} "
        f"(or the folder {os.path.join(root, TREEBANK_FOLDER)!r}); {reason}. Offline, copy treebank.zip "
        f"from any nltk_data folder (made by `python -m nltk.downloader -d <folder> treebank`) into "
        f"{os.path.join(root, 'corpora')!r}"
    )


def _has_treebank(root):
    return (os.path.isfile(os.path.join(root, TREEBANK_ZIP))
            or os.path.isdir(os.path.join(root, TREEBANK_FOLDER, "combined")))


@contextlib.contextmanager
def _on_nltk_data_path(root):
    """Puts `root` first on `nltk.data.path` for the duration (NLTK >= 3.9 opens files only under it)."""
    added = root not in nltk.data.path
    if added:
        nltk.data.path.insert(0, root)
    try:
        yield
    finally:
        if added and root in nltk.data.path:
            nltk.data.path.remove(root)


EXAMPLE_TREE = "( (S (NP-SBJ (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .)) )"  # as wsj_*.mrg write them


def write_example_treebank(folder, trees=(EXAMPLE_TREE,)):
    """Writes a stand-in for the treebank sample under `folder`, to pass as `data_dir`: every file wsj_0001.mrg ..
    wsj_0199.mrg holds `trees`. For examples and tests that must not need the real corpus.

    Args:
        folder: str. The cache folder to write `nltk_data/corpora/treebank/combined/` into.
        trees: iterable of str. Bracketed trees as the treebank writes them (function tags, root wrapper).

    Returns:
        str: `folder`.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> len(read_treebank(data_dir=write_example_treebank(tmp.name), download=False))   # one tree per file
        199
    """
    combined = os.path.join(folder, NLTK_SUBDIR, TREEBANK_FOLDER, "combined")
    os.makedirs(combined, exist_ok=True)
    for number in range(1, 200):
        with open(os.path.join(combined, f"wsj_{number:04d}.mrg"), "w", encoding="ascii") as f:
            f.write("\n".join(trees) + "\n")
    return folder


def split_fileids(split):
    """The treebank files of one split.

    Args:
        split: "train", "validation" (alias "val", "dev") or "test".

    Returns:
        list of str: e.g. `["wsj_0170.mrg", ..., "wsj_0184.mrg"]` for "validation".

    Example:
        >>> files = split_fileids("val")
        >>> len(files), files[0], files[-1]
        (15, 'wsj_0170.mrg', 'wsj_0184.mrg')
    """
    first, last = SPLIT_FILE_RANGES[canonical_split(split)]
    return [f"wsj_{number:04d}.mrg" for number in range(first, last + 1)]


def read_treebank(fileids=None, data_dir=None, download=True):
    """Raw trees of the Penn Treebank sample, as NLTK reads them (not preprocessed).

    Args:
        fileids: list of file names ("wsj_0001.mrg"); defaults to all 199 files.
        data_dir: tfm cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch the corpus when it is missing (see `treebank_dir`).

    Returns:
        list of `nltk.Tree`, file by file in the order of `fileids`.

    Raises:
        FileNotFoundError: the corpus, or one of the files, is missing.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> data_dir = write_example_treebank(tmp.name)   # every file holds "The man saw a dog ."
        >>> tree = read_treebank(["wsj_0001.mrg"], data_dir=data_dir, download=False)[0]
        >>> tree.label(), tree[0].label()                   # as the file has it: function tags kept
        ('S', 'NP-SBJ')
    """
    root = treebank_dir(data_dir, download)
    with _on_nltk_data_path(root):
        try:
            corpus_root = nltk.data.find("corpora/treebank/combined/", paths=[root])
        except LookupError as error:  # present but refused, e.g. a folder writable by others
            raise FileNotFoundError(f"NLTK could not open the treebank under {root!r}: {error}") from error
        reader = BracketParseCorpusReader(corpus_root, r"wsj_\d{4}\.mrg", tagset="wsj", encoding="ascii")
        available = set(reader.fileids())
        fileids = sorted(available) if fileids is None else list(fileids)
        missing = [fileid for fileid in fileids if fileid not in available]
        if missing:
            raise FileNotFoundError(f"treebank files {missing[:5]}{' ...' if len(missing) > 5 else ''} are not in "
                                    f"{str(corpus_root)!r} ({len(available)} files there)")
        # Materialized here: NLTK's corpus views open the files lazily, which must happen on the path.
        return [tree for fileid in fileids for tree in reader.parsed_sents(fileid)]


def ptb_parse_trees(split, data_dir=None, download=True):
    """The preprocessed gold trees of one split (for scoring and for tags).

    Args:
        split: "train", "validation" (alias "val", "dev") or "test"; see the module docstring.
        data_dir: tfm cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch the corpus when it is missing (see `treebank_dir`).

    Returns:
        list of `nltk.Tree` (real POS tags kept), in file order.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> data_dir = write_example_treebank(tmp.name)   # every file holds "The man saw a dog ."
        >>> trees = ptb_parse_trees("test", data_dir=data_dir, download=False)
        >>> len(trees), " ".join(str(trees[0]).split())                    # one tree per file, -SBJ stripped
        (15, '(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))')
    """
    return [preprocess_tree(tree) for tree in read_treebank(split_fileids(split), data_dir, download)]


def ptb_parse_pairs(split, data_dir=None, download=True, typed_closing=False, leaves=XX_LEAVES):
    """One split as plain-Python `(sources, targets)` lists of strings.

    Args:
        split, data_dir, download: as in `ptb_parse_trees`.
        typed_closing: bool. Close constituents with ")LABEL" (see `linearize`).
        leaves: "XX" (every word written "XX") or "tags" (its POS tag); see `linearize`.

    Returns:
        tuple `(sources, targets)`: each source is the sentence's treebank tokens joined by
        spaces (-LRB-, `` and '' as the treebank writes them), each target its linearized tree
        joined by spaces.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> data_dir = write_example_treebank(tmp.name)   # every file holds "The man saw a dog ."
        >>> sources, targets = ptb_parse_pairs("test", data_dir=data_dir, download=False)
        >>> sources[0], targets[0]
        ('The man saw a dog .', '(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )')
        >>> ptb_parse_pairs("test", data_dir=data_dir, download=False, leaves="tags")[1][0]
        '(S (NP DT NN ) (VP VBD (NP DT NN ) ) . )'
    """
    trees = ptb_parse_trees(split, data_dir, download)
    sources = [" ".join(tree.leaves()) for tree in trees]
    targets = [" ".join(linearize(tree, typed_closing, leaves)) for tree in trees]
    return sources, targets


def load_ptb_parse(split="train", data_dir=None, download=True, typed_closing=False, leaves=XX_LEAVES):
    """Constituency parsing as translation: sentence -> linearized tree.

    Args:
        split: "train", "validation" (alias "val", "dev") or "test"; see the module docstring.
        data_dir: tfm cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch the corpus with `nltk.download` when it is missing.
        typed_closing: bool. Close constituents with ")LABEL" (see `linearize`).
        leaves: "XX" (default) or "tags": what stands for a word (see `linearize`); the dataset
            names "ptb_parse" and "ptb_parse_tags" of `tfm.data.load_dataset`.

    Returns:
        A `tf.data.Dataset` of scalar tf.string `(source, target)` pairs in file order, e.g.
        ("Pierre Vinken , 61 years old , will join ...", "(S (NP (NP XX XX ) XX (ADJP ...").

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> data_dir = write_example_treebank(tmp.name)   # every file holds "The man saw a dog ."
        >>> pairs = load_ptb_parse("validation", data_dir=data_dir, download=False)
        >>> int(pairs.cardinality()), [t.decode() for _, t in pairs.take(1).as_numpy_iterator()]
        (15, ['(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )'])
    """
    sources, targets = ptb_parse_pairs(split, data_dir, download, typed_closing, leaves)
    return tf.data.Dataset.from_tensor_slices((tf.constant(sources, tf.string), tf.constant(targets, tf.string)))


def tree_whole_tokens(pairs):
    """The target tokens a parsing run keeps as one subword each (`train_tokenizer`'s `whole_tokens`): every
    label, bracket and leaf token of the training trees (`tfm.parsing.tree_tokens`).

    Args:
        pairs: the training split's `(source, target)` pairs (a `tf.data.Dataset`).

    Returns:
        sorted list of str.

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> data_dir = write_example_treebank(tmp.name)   # every file holds "The man saw a dog ."
        >>> tree_whole_tokens(load_ptb_parse("train", data_dir=data_dir, download=False))
        ['(NP', '(S', '(VP', ')', 'XX']
    """
    return tree_tokens(target.decode("utf-8") for _, target in pairs.as_numpy_iterator())


for _name, _leaves in DATASET_LEAVES.items():  # `tfm.data.load_dataset("ptb_parse", ...)` reads the treebank here
    register_dataset(_name, functools.partial(load_ptb_parse, leaves=_leaves))
