"""The vocabulary of trees, defined once: the linearization's tokens, the treebank's special labels, the
preterminal test and the one walker that gives every constituent its span of words.

Every other module of `tfm.parsing` (and `tfm.parsing.treebank`) reads these names from here. Nothing here
imports NLTK or TensorFlow: a tree is anything with `.label()` and list children whose leaves are str,
as `nltk.Tree` is.

    constituents(Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ runs)))"))
    -> [Constituent("DT", 0, 1, True), Constituent("NN", 1, 2, True), Constituent("NP", 0, 2, False),
        Constituent("VBZ", 2, 3, True), Constituent("VP", 2, 3, False), Constituent("S", 0, 3, False)]
"""

import collections

# The linearization (Vinyals et al., 2015; `tfm.parsing.linearization`): "(S (NP XX XX ) XX )".
LEAF_TOKEN = "XX"  # one per word: POS tags and words are not written
OPEN_PREFIX = "("  # "(LABEL" opens a constituent
CLOSE_TOKEN = ")"  # closes one; ")LABEL" is the typed closer
UNKNOWN_LABEL = "X"  # what a bare "(" opens when a tree is rebuilt
# What stands for a word in a linearized tree: "XX" for every word (Vinyals et al.), or the word's POS tag.
XX_LEAVES, TAG_LEAVES = LEAF_TOKEN, "tags"
LEAF_STYLES = (XX_LEAVES, TAG_LEAVES)
# The parsing datasets of `tfm.data.load_dataset` (`tfm.data.PARSING_TASKS`) and the leaf style of each one's targets.
DATASET_LEAVES = {"ptb_parse": XX_LEAVES, "ptb_parse_tags": TAG_LEAVES}
# Punctuation tags: EVALB (COLLINS.prm, DELETE_LABEL) deletes the words they tag before it counts spans.
PUNCTUATION_TAGS = frozenset({"``", "''", ".", ":", ","})
# The Penn Treebank's 45 part-of-speech tags (Marcus et al., 1993), punctuation included: the leaves of the
# "tags" style (every one occurs in NLTK's sample). Brackets are -LRB- / -RRB-, so no tag reads as "(" or ")".
POS_TAGS = PUNCTUATION_TAGS | frozenset({
    "#", "$", "-LRB-", "-RRB-", "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS",
    "LS", "MD", "NN", "NNP", "NNPS", "NNS", "PDT", "POS", "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO",
    "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP", "WP$", "WRB"})

# The Penn Treebank's labels.
EMPTY_ELEMENT_TAG = "-NONE-"  # traces and null words: deleted before training and before scoring
# Wrapper nodes above the sentence: "( (S ...) )", "(TOP (S ...))", "(ROOT (S ...))"; EVALB never scores them.
ROOT_LABELS = frozenset({"", "TOP", "ROOT"})
REPAIR_ROOT_LABEL = "TOP"  # the root put above several top-level pieces (preprocessing, repairs)

Constituent = collections.namedtuple("Constituent", ["label", "start", "end", "preterminal"])
Constituent.__doc__ = """One node of a tree and the words it covers (what `constituents` yields).

Attributes:
    label: str. The node's label (`str(node.label())`).
    start, end: int. Its first word and one past its last, counting the tree's leaves from 0.
    preterminal: bool. The node is a POS tag over one word (`is_preterminal`).
"""


def leaf_tokens(leaves=XX_LEAVES):
    """The tokens that stand for a word in a linearization of style `leaves` ("XX" or "tags").

    Args:
        leaves: "XX" or "tags".

    Returns:
        tuple of str.

    Raises:
        ValueError: for another style (the valid ones named).

    Example:
        >>> leaf_tokens("XX"), len(leaf_tokens("tags"))   # the 45 Penn Treebank tags
        (('XX',), 45)
    """
    if leaves not in LEAF_STYLES:
        raise ValueError(f"leaves={leaves!r}: expected one of {list(LEAF_STYLES)}")
    return (LEAF_TOKEN,) if leaves == XX_LEAVES else tuple(sorted(POS_TAGS))


def is_preterminal(node):
    """Whether `node` is a preterminal: a tree node (not a word) with exactly one child, a word.

    Args:
        node: a tree node (`nltk.Tree`) or a leaf (str).

    Returns:
        bool: True for `(NN dog)`, False for `(NP (NN dog))`, a word, or an empty node.

    Example:
        >>> import nltk
        >>> tree = nltk.Tree.fromstring("(NP (NN dog))")
        >>> is_preterminal(tree), is_preterminal(tree[0]), is_preterminal("dog")
        (False, True, False)
    """
    return not isinstance(node, str) and len(node) == 1 and isinstance(node[0], str)


def constituents(tree):
    """Every node of `tree` with its span of words, children before their parent (post-order).

    The one walker over spans: EVALB's brackets (`tfm.parsing.evalb`), `labeled_spans` and the red
    constituents of `tfm.viz.plot_tree` all read it.

    Args:
        tree: `nltk.Tree`. A word directly under a phrase (not treebank style) counts as a word;
            an empty node gets an empty span.

    Returns:
        list of `Constituent(label, start, end, preterminal)`, `end` exclusive, over all leaves
        (punctuation and -NONE- included).

    Example:
        >>> import nltk
        >>> spans = constituents(nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ runs)))"))
        >>> spans[2]
        Constituent(label='NP', start=0, end=2, preterminal=False)
        >>> [(c.label, c.start, c.end) for c in spans]   # children before their parent
        [('DT', 0, 1), ('NN', 1, 2), ('NP', 0, 2), ('VBZ', 2, 3), ('VP', 2, 3), ('S', 0, 3)]
    """
    found = []

    def walk(node, start):
        if isinstance(node, str):
            return start + 1
        end = start
        for child in node:
            end = walk(child, end)
        found.append(Constituent(str(node.label()), start, end, is_preterminal(node)))
        return end

    walk(tree, 0)
    return found


def labeled_spans(tree):
    """`{(label, start, end)}` of every constituent above the preterminals, over all word positions
    (punctuation kept, unlike EVALB's counting): what `tfm.viz.plot_tree(highlight=...)` takes.

    Args:
        tree: `nltk.Tree`.

    Returns:
        set of `(label, start, end)`, `end` exclusive.

    Example:
        >>> import nltk
        >>> sorted(labeled_spans(nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ runs)))")))
        [('NP', 0, 2), ('S', 0, 3), ('VP', 2, 3)]
    """
    return {(c.label, c.start, c.end) for c in constituents(tree) if not c.preterminal}


def base_label(label):
    """A label without function tags and indices: everything from the first '-' or '=' is cut.

    Args:
        label: str, e.g. "NP-SBJ-1", "PP-LOC=2", "NP=2", "-LRB-".

    Returns:
        str: "NP", "PP", "NP"; a label that would be cut to nothing (it starts with '-': -LRB-,
        -RRB-, -NONE-) is kept whole.

    Example:
        >>> base_label("NP-SBJ-1"), base_label("PP-LOC=2"), base_label("-LRB-")
        ('NP', 'PP', '-LRB-')
    """
    for i, char in enumerate(label):
        if char in "-=":
            return label[:i] or label
    return label


def tree_tokens(targets):
    """The sorted set of tokens in linearized trees (`linearize`'s output joined by spaces):
    "(LABEL" openers, closers and the leaf token. The tokenizer keeps each one a single subword
    (`tfm.parsing.treebank.tree_whole_tokens`), so a target is as many subwords as tokens (61.6 on average)
    instead of 1.3 times as many (2,000-subword BPE, which spells "(NP" as "▁(" + "NP").

    Args:
        targets: iterable of str, e.g. ["(S (NP XX ) XX )"].

    Returns:
        sorted list of str, e.g. ["(NP", "(S", ")", "XX"].

    Example:
        >>> tree_tokens(["(S (NP XX ) XX )", "(S (VP XX ) )"])
        ['(NP', '(S', '(VP', ')', 'XX']
    """
    return sorted({token for target in targets for token in target.split()})
