"""Trees as token sequences and back (§6.3; Vinyals et al., 2015, "Grammar as a foreign language").

    linearize((S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .)))
    -> "(S (NP XX XX ) (VP XX (NP XX XX ) ) XX )"
    delinearize("(S (NP XX XX ) (VP XX", "The man saw a dog")   # a cut-off output, repaired
    -> Delinearized(tree=(S (NP (XX The) (XX man)) (VP (XX saw) (XX a) (XX dog))), repaired=True)

- Every part-of-speech tag, punctuation included, is written as `XX` and the words are
  not written at all, as in Vinyals et al., who report that this normalization of POS tags
  gained them about one F1 point. Why: EVALB does not score preterminals, so a parser need
  not predict them; the output vocabulary shrinks to the phrase labels + ")" + "XX" (28
  tokens on NLTK's sample: 26 labels); and every word is exactly one `XX`, so the number of
  leaves to write is known from the input and a wrong count is easy to detect and repair.
  Tags can still be put back from the gold trees (or a tagger) when a tree is rebuilt
  (`delinearize(..., tags=...)`). Targets are 61.6 tokens long on average (573 at most).
- A constituent opens with one token "(LABEL" and closes with an untyped ")" by default.
  Vinyals et al. wrote typed closers ")S"; they repeat information the opener already
  carries and add one more way to be inconsistent, so they are optional
  (`typed_closing=True`). `delinearize` reads both forms.
"""

import collections

import nltk

from tfm.parsing.trees import (
    CLOSE_TOKEN,
    LEAF_STYLES,
    LEAF_TOKEN,
    OPEN_PREFIX,
    REPAIR_ROOT_LABEL,
    UNKNOWN_LABEL,
    XX_LEAVES,
    is_preterminal,
)

Delinearized = collections.namedtuple("Delinearized", ["tree", "repaired"])
Delinearized.__doc__ = """What `delinearize` returns.

Attributes:
    tree: `nltk.Tree`, well formed, one leaf per input word.
    repaired: bool. True when the tokens were not a well-formed linearization (unbalanced
        brackets, a wrong number of leaves, empty constituents, mismatched typed closers,
        several top-level pieces) and had to be repaired.
"""


def linearize(tree, typed_closing=False, leaves=XX_LEAVES):
    """The Vinyals-style token sequence of a (preprocessed) tree.

    Args:
        tree: `nltk.Tree`, e.g. `(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))`.
        typed_closing: bool. Close constituents with ")LABEL" instead of ")". Defaults to `False`.
        leaves: "XX" (default: every word written "XX") or "tags" (every word written as its POS tag,
            `(S (NP DT NN ) (VP VBD ) . )`): a leaf the model can only predict by reading its word, which
            gives the cross-attention a reason to find word k when it writes leaf k (docs/results.md,
            "Parsing": with "XX" a small Transformer's cross-attention stays uniform).

    Returns:
        list of str: "(LABEL" per constituent, "XX" per word (POS tags and words are not written),
        ")" (or ")LABEL") per closing bracket: `["(S", "(NP", "XX", "XX", ")", "(VP", "XX", ")", "XX", ")"]`.

    Example:
        >>> tree = nltk.Tree.fromstring("(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))")
        >>> " ".join(linearize(tree))
        '(S (NP XX XX ) (VP XX ) XX )'
        >>> " ".join(linearize(tree, typed_closing=True, leaves="tags"))
        '(S (NP DT NN )NP (VP VBD )VP . )S'
    """
    tokens = []
    if leaves not in LEAF_STYLES:
        raise ValueError(f"leaves={leaves!r}: expected one of {list(LEAF_STYLES)}")

    def visit(node):
        if is_preterminal(node) or isinstance(node, str):
            if leaves == XX_LEAVES or isinstance(node, str):
                tokens.append(LEAF_TOKEN)
            elif node.label().startswith((OPEN_PREFIX, CLOSE_TOKEN)) or not node.label():
                raise ValueError(f"POS tag {node.label()!r} would read as a bracket; write brackets -LRB- / -RRB-")
            else:
                tokens.append(node.label())
            return
        tokens.append(OPEN_PREFIX + node.label())
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

    Example:
        >>> tree, repaired = delinearize("(S (NP XX XX ) (VP XX", "The man saw a dog")   # cut off: repaired
        >>> " ".join(str(tree).split()), repaired
        ('(S (NP (XX The) (XX man)) (VP (XX saw) (XX a) (XX dog)))', True)
        >>> delinearize("(S (NP XX ) XX )", "Dogs bark", tags=["NNS", "VBP"]).tree.pos()
        [('Dogs', 'NNS'), ('bark', 'VBP')]
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
        if token.startswith(OPEN_PREFIX):
            label = token[len(OPEN_PREFIX):]
            if not label:
                label, repaired = UNKNOWN_LABEL, True
            stack.append([label, []])
        elif token.startswith(CLOSE_TOKEN):
            if not stack:
                repaired = True  # a stray closer
                continue
            label, children = stack.pop()
            if token[len(CLOSE_TOKEN):] and token[len(CLOSE_TOKEN):] != label:
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
        elif top and not isinstance(top[-1], str) and not is_preterminal(top[-1]):
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
    if len(top) == 1 and not is_preterminal(top[0]):
        return Delinearized(top[0], repaired)
    if top:
        repaired = True
    return Delinearized(nltk.Tree(REPAIR_ROOT_LABEL, top), repaired)
