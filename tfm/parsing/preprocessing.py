"""Treebank trees as parsers train and are scored on them (§6.3; Vinyals et al., 2015).

    preprocess_tree("( (S (NP-SBJ-1 (-NONE- *)) (VP (VBD left)) (. .)) )")  ->  (S (VP (VBD left)) (. .))

- empty elements (`-NONE-` traces and null words) are deleted, and so is every constituent left
  without words;
- function tags and indices are stripped: NP-SBJ-1 -> NP, S-TPC-2 -> S, NP=2 -> NP, while tags that
  start with '-' (-LRB-, -RRB-) stay intact; the few ambiguous labels such as ADVP|PRT keep their
  first alternative (ADVP);
- the outer empty root bracket is removed: "( (S ...) )" -> "(S ...)".
"""

import nltk

from tfm.parsing.trees import EMPTY_ELEMENT_TAG, REPAIR_ROOT_LABEL, ROOT_LABELS, base_label, is_preterminal


def strip_function_tags(label):
    """A treebank label without its function tags and indices.

    Args:
        label: str, e.g. "NP-SBJ-1", "S-TPC-2", "NP=2", "PP-LOC", "-LRB-", "ADVP|PRT".

    Returns:
        str: the part before the first '-' or '=' ("NP", "S", "NP", "PP"); a label that starts
        with '-' (-LRB-, -RRB-, -NONE-) is returned unchanged; of alternatives joined by '|'
        the first is kept ("ADVP|PRT" -> "ADVP").

    Example:
        >>> [strip_function_tags(label) for label in ("NP-SBJ-1", "S-TPC-2", "NP=2", "-LRB-", "ADVP|PRT")]
        ['NP', 'S', 'NP', '-LRB-', 'ADVP']
    """
    return base_label(label).split("|", 1)[0] or label


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

    Example:
        >>> preprocess_tree("( (S (NP-SBJ-1 (-NONE- *)) (VP (VBD left)) (. .)) )")
        Tree('S', [Tree('VP', [Tree('VBD', ['left'])]), Tree('.', ['.'])])
    """
    if isinstance(tree, str):
        tree = nltk.Tree.fromstring(tree)
    cleaned = _clean(tree)
    if cleaned is None:
        raise ValueError(f"tree {tree.pformat(margin=10**6)!r} has no words once empty elements are deleted")
    while (not is_preterminal(cleaned) and cleaned.label() in ROOT_LABELS and len(cleaned) == 1
           and not is_preterminal(cleaned[0])):
        cleaned = cleaned[0]
    if cleaned.label() == "":  # an empty root over several pieces: give it a name linearize can write
        cleaned.set_label(REPAIR_ROOT_LABEL)
    return cleaned


def _clean(tree):
    """`tree` without empty elements and function tags, or None when no word is left."""
    if isinstance(tree, str):
        return tree
    if is_preterminal(tree):
        return None if tree.label() == EMPTY_ELEMENT_TAG else nltk.Tree(tree.label(), [tree[0]])
    children = [child for child in (_clean(child) for child in tree) if child is not None]
    if not children:
        return None
    return nltk.Tree(strip_function_tags(tree.label()), children)
