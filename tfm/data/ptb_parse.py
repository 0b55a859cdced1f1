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

Preprocessing, as parsers do (`preprocess_tree`):
    - empty elements (`-NONE-` traces and null words) are deleted, and so is every
      constituent left without words;
    - function tags and indices are stripped: NP-SBJ-1 -> NP, S-TPC-2 -> S, NP=2 -> NP,
      while tags that start with '-' (-LRB-, -RRB-) stay intact; the few ambiguous
      labels such as ADVP|PRT keep their first alternative (ADVP);
    - the outer empty root bracket is removed: "( (S ...) )" -> "(S ...)".

Linearization (`linearize`), Vinyals-style:
    (S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))
    -> "(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )"
    - Every part-of-speech tag, punctuation included, is written as `XX` and the words are
      not written at all, as in Vinyals et al., who report that this normalization of POS tags
      gained them about one F1 point. Why: EVALB does not score preterminals, so a parser need
      not predict them; the output vocabulary shrinks to the phrase labels + ")" + "XX" (28
      tokens on this sample: 26 labels); and every word is exactly one `XX`, so the number of
      leaves to write is known from the input and a wrong count is easy to detect and repair.
      Tags can still be put back from the gold trees (or a tagger) when a tree is rebuilt
      (`delinearize(..., tags=...)`). Targets are 61.6 tokens long on average (573 at most).
    - A constituent opens with one token "(LABEL" and closes with an untyped ")" by default.
      Vinyals et al. wrote typed closers ")S"; they repeat information the opener already
      carries and add one more way to be inconsistent, so they are optional
      (`typed_closing=True`). `delinearize` reads both forms.

Splits, fixed by file (sentence counts measured on the NLTK sample, after preprocessing,
which never drops a sentence):
    train       wsj_0001 .. wsj_0169   3,501 sentences (89.4%)
    validation  wsj_0170 .. wsj_0184     217 sentences ( 5.6%)
    test        wsj_0185 .. wsj_0199     196 sentences ( 5.0%)
(The paper trains on WSJ sections 2-21, about 40K sentences, and tests on section 23; this
sample is about a tenth of that, so its numbers are not comparable to Table 4.)
"""

import collections
import contextlib
import os
import re

import nltk
import tensorflow as tf
from nltk.corpus.reader import BracketParseCorpusReader

from tfm.data.cache import resolve_data_dir
from tfm.data.splits import canonical_split

NLTK_SUBDIR = "nltk_data"
TREEBANK_ZIP = os.path.join("corpora", "treebank.zip")
TREEBANK_FOLDER = os.path.join("corpora", "treebank")
# First and last file number (inclusive) of each split: wsj_0001.mrg .. wsj_0199.mrg.
SPLIT_FILE_RANGES = {"train": (1, 169), "validation": (170, 184), "test": (185, 199)}
SPLIT_SIZES = {"train": 3501, "validation": 217, "test": 196}

LEAF_TOKEN = "XX"
CLOSE_TOKEN = ")"
EMPTY_ELEMENT_TAG = "-NONE-"
# Labels of wrapper nodes above the sentence: "( (S ...) )" and "(TOP (S ...))" / "(ROOT (S ...))".
ROOT_WRAPPER_LABELS = ("", "TOP", "ROOT")
# Label of the node that `delinearize` puts above several top-level pieces (never scored by EVALB).
REPAIR_ROOT_LABEL = "TOP"
# Label `delinearize` gives a bare "(" token.
UNKNOWN_LABEL = "X"

Delinearized = collections.namedtuple("Delinearized", ["tree", "repaired"])
Delinearized.__doc__ = """What `delinearize` returns.

Attributes:
    tree: `nltk.Tree`, well formed, one leaf per input word.
    repaired: bool. True when the tokens were not a well-formed linearization (unbalanced
        brackets, a wrong number of leaves, empty constituents, mismatched typed closers,
        several top-level pieces) and had to be repaired.
"""


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


def split_fileids(split):
    """The treebank files of one split.

    Args:
        split: "train", "validation" (alias "val", "dev") or "test".

    Returns:
        list of str: e.g. `["wsj_0170.mrg", ..., "wsj_0184.mrg"]` for "validation".
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


def strip_function_tags(label):
    """A treebank label without its function tags and indices.

    Args:
        label: str, e.g. "NP-SBJ-1", "S-TPC-2", "NP=2", "PP-LOC", "-LRB-", "ADVP|PRT".

    Returns:
        str: the part before the first '-' or '=' ("NP", "S", "NP", "PP"); a label that starts
        with '-' (-LRB-, -RRB-, -NONE-) is returned unchanged; of alternatives joined by '|'
        the first is kept ("ADVP|PRT" -> "ADVP").
    """
    if label.startswith("-"):
        return label
    base = re.split(r"[-=]", label, maxsplit=1)[0]
    return base.split("|", 1)[0] or label


def _is_preterminal(tree):
    return isinstance(tree, nltk.Tree) and len(tree) == 1 and isinstance(tree[0], str)


def preprocess_tree(tree):
    """A treebank tree as parsers train and are scored on it.

    Deletes `-NONE-` empty elements and every constituent left without words, strips function
    tags and indices from phrase labels (`strip_function_tags`; POS tags are kept as they are),
    and removes root wrappers ("( (S ...) )" -> "(S ...)"; an empty root over several pieces
    becomes "TOP").

    Args:
        tree: `nltk.Tree` (or its bracketed string).

    Returns:
        `nltk.Tree`: a new tree; the input is not changed.

    Raises:
        ValueError: when nothing but empty elements is left (the tree is named).
    """
    if isinstance(tree, str):
        tree = nltk.Tree.fromstring(tree)
    cleaned = _clean(tree)
    if cleaned is None:
        raise ValueError(f"tree {tree.pformat(margin=10**6)!r} has no words once empty elements are deleted")
    while (not _is_preterminal(cleaned) and cleaned.label() in ROOT_WRAPPER_LABELS and len(cleaned) == 1
           and not _is_preterminal(cleaned[0])):
        cleaned = cleaned[0]
    if cleaned.label() == "":  # an empty root over several pieces: give it a name linearize can write
        cleaned.set_label(REPAIR_ROOT_LABEL)
    return cleaned


def _clean(tree):
    """`tree` without empty elements and function tags, or None when no word is left."""
    if isinstance(tree, str):
        return tree
    if _is_preterminal(tree):
        return None if tree.label() == EMPTY_ELEMENT_TAG else nltk.Tree(tree.label(), [tree[0]])
    children = [child for child in (_clean(child) for child in tree) if child is not None]
    if not children:
        return None
    return nltk.Tree(strip_function_tags(tree.label()), children)


def linearize(tree, typed_closing=False):
    """The Vinyals-style token sequence of a (preprocessed) tree.

    Args:
        tree: `nltk.Tree`, e.g. `(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))`.
        typed_closing: bool. Close constituents with ")LABEL" instead of ")". Defaults to `False`.

    Returns:
        list of str: "(LABEL" per constituent, "XX" per word (POS tags and words are not written),
        ")" (or ")LABEL") per closing bracket: `["(S", "(NP", "XX", "XX", ")", "(VP", "XX", ")", "XX", ")"]`.
    """
    tokens = []

    def visit(node):
        if _is_preterminal(node) or isinstance(node, str):
            tokens.append(LEAF_TOKEN)
            return
        tokens.append("(" + node.label())
        for child in node:
            visit(child)
        tokens.append(CLOSE_TOKEN + node.label() if typed_closing else CLOSE_TOKEN)

    visit(tree)
    return tokens


def delinearize(tokens, words, tags=None):
    """Rebuilds a tree from linearized tokens, repairing what is ill formed.

    The result always has exactly one leaf per word, in order, each under its own preterminal.
    Repairs: an unknown closer with nothing open is dropped; brackets still open at the end are
    closed; a constituent with no words is dropped; leaf tokens beyond the number of words are
    dropped, and missing ones are added at the end of the innermost constituent still open when
    the tokens end (a cut-off output), else at the end of the root; several top-level pieces (or
    a bare leaf) are put under one "TOP" node, which EVALB does not score. A typed closer ")NP"
    closes the innermost open constituent whatever its label (a mismatch counts as a repair);
    a bare "(" opens an "X".

    Args:
        tokens: list of str or a space-separated str: "(LABEL", ")" or ")LABEL", anything else is
            a leaf (normally "XX").
        words: list of str or a space-separated str: the sentence.
        tags: optional list of POS tags, one per word (e.g. the gold tags): the preterminal labels.
            Without it each preterminal is labelled with its leaf token ("XX"), or "XX" for an
            added leaf. EVALB scores neither, but its punctuation rule reads them (see
            `tfm.parsing.bracket_scores`).

    Returns:
        `Delinearized(tree, repaired)`: the `nltk.Tree` and whether anything was repaired.

    Raises:
        ValueError: when `tags` and `words` differ in length.
    """
    tokens = tokens.split() if isinstance(tokens, str) else list(tokens)
    words = words.split() if isinstance(words, str) else list(words)
    if tags is not None and len(tags) != len(words):
        raise ValueError(f"got {len(tags)} tags for {len(words)} words")
    repaired = False
    leaves = []  # leaf tokens kept, one per word at most

    def leaf(token):
        index = len(leaves)
        leaves.append(token)
        return nltk.Tree(tags[index] if tags is not None else token, [words[index]])

    top = []  # finished top-level pieces
    stack = []  # open constituents: [label, children]
    for token in tokens:
        if token.startswith("("):
            label = token[1:]
            if not label:
                label, repaired = UNKNOWN_LABEL, True
            stack.append([label, []])
        elif token.startswith(CLOSE_TOKEN):
            if not stack:
                repaired = True  # a stray closer
                continue
            label, children = stack.pop()
            if token[1:] and token[1:] != label:
                repaired = True
            if not children:
                repaired = True  # an empty constituent
                continue
            (stack[-1][1] if stack else top).append(nltk.Tree(label, children))
        elif len(leaves) < len(words):
            (stack[-1][1] if stack else top).append(leaf(token))
        else:
            repaired = True  # more leaves than words
    if len(leaves) < len(words):
        repaired = True
        if stack:
            target = stack[-1][1]
        elif top and isinstance(top[-1], nltk.Tree) and not _is_preterminal(top[-1]):
            target = top[-1]
        else:
            target = top
        while len(leaves) < len(words):
            target.append(leaf(LEAF_TOKEN))
    while stack:
        repaired = True  # unclosed brackets
        label, children = stack.pop()
        if children:
            (stack[-1][1] if stack else top).append(nltk.Tree(label, children))
    if len(top) == 1 and not _is_preterminal(top[0]):
        return Delinearized(top[0], repaired)
    if top:
        repaired = True
    return Delinearized(nltk.Tree(REPAIR_ROOT_LABEL, top), repaired)


def tree_tokens(targets):
    """The sorted set of tokens in linearized trees (`linearize`'s output joined by spaces):
    "(LABEL" openers, closers and the leaf token. The tokenizer keeps each one a single subword
    (`tfm.data.datasets.whole_tokens`), so a target is as many subwords as tokens (61.6 on average)
    instead of 1.3 times as many (2,000-subword BPE, which spells "(NP" as "▁(" + "NP").

    Args:
        targets: iterable of str, e.g. ["(S (NP XX ) XX )"].

    Returns:
        sorted list of str, e.g. ["(NP", "(S", ")", "XX"].
    """
    return sorted({token for target in targets for token in target.split()})


def ptb_parse_trees(split, data_dir=None, download=True):
    """The preprocessed gold trees of one split (for scoring and for tags).

    Args:
        split: "train", "validation" (alias "val", "dev") or "test"; see the module docstring.
        data_dir: tfm cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch the corpus when it is missing (see `treebank_dir`).

    Returns:
        list of `nltk.Tree` (real POS tags kept), in file order.
    """
    return [preprocess_tree(tree) for tree in read_treebank(split_fileids(split), data_dir, download)]


def ptb_parse_pairs(split, data_dir=None, download=True, typed_closing=False):
    """One split as plain-Python `(sources, targets)` lists of strings.

    Args:
        split, data_dir, download: as in `ptb_parse_trees`.
        typed_closing: bool. Close constituents with ")LABEL" (see `linearize`).

    Returns:
        tuple `(sources, targets)`: each source is the sentence's treebank tokens joined by
        spaces (-LRB-, `` and '' as the treebank writes them), each target its linearized tree
        joined by spaces.
    """
    trees = ptb_parse_trees(split, data_dir, download)
    sources = [" ".join(tree.leaves()) for tree in trees]
    targets = [" ".join(linearize(tree, typed_closing)) for tree in trees]
    return sources, targets


def load_ptb_parse(split="train", data_dir=None, download=True, typed_closing=False):
    """Constituency parsing as translation: sentence -> linearized tree.

    Args:
        split: "train", "validation" (alias "val", "dev") or "test"; see the module docstring.
        data_dir: tfm cache folder; defaults to `$TFM_DATA_DIR`, else `data/cache`.
        download: bool. Fetch the corpus with `nltk.download` when it is missing.
        typed_closing: bool. Close constituents with ")LABEL" (see `linearize`).

    Returns:
        A `tf.data.Dataset` of scalar tf.string `(source, target)` pairs in file order, e.g.
        ("Pierre Vinken , 61 years old , will join ...", "(S (NP (NP XX XX ) XX (ADJP ...").
    """
    sources, targets = ptb_parse_pairs(split, data_dir, download, typed_closing)
    return tf.data.Dataset.from_tensor_slices((tf.constant(sources, tf.string), tf.constant(targets, tf.string)))
