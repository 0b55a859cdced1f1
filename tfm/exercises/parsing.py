"""The checker of the parsing exercise (notebook 13): a tree as a token sequence (§6.3)."""

from tfm.exercises.checking import Mismatch, call_checked, function_name, run_checker

# ---------------------------------------------------------------------------
# 11. Tree linearization (notebook 13)
# ---------------------------------------------------------------------------
_TREES = [
    "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))",
    "(S (NN Yes))",
    "(S (VP (VB Go) (ADVP (RB home))) (. !))",
    "(S (NP (NP (DT the) (NN end)) (PP (IN of) (NP (DT the) (NN day)))) (VP (VBZ counts)))",
]


def check_linearize_tree(fn):
    """A parse tree as the token sequence a sequence model writes (§6.3; Vinyals et al., 2015).

    Contract: `fn(tree) -> tokens`
        tree: `nltk.Tree`, e.g. `(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))`.
        Returns a list of str: "(LABEL" when a constituent opens, ")" when it closes (untyped), and
        "XX" for each word with its part-of-speech tag (neither the word nor the tag is written):
        `["(S", "(NP", "XX", "XX", ")", "(VP", "XX", ")", "XX", ")"]`.

    Checked against `tfm.parsing.linearize` on a sentence, a one-word tree, unary chains and deep nesting.

    Args:
        fn: the reader's function, as the contract above says.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Example:
        >>> from tfm.parsing import linearize
        >>> check_linearize_tree(lambda tree: list(linearize(tree)))
        correct: <lambda> matches tfm.parsing.linearize on 4 trees.
        True
    """
    def body():
        import nltk

        from tfm.parsing import linearize

        for text in _TREES:
            label = f"tree {text}"
            tree = nltk.Tree.fromstring(text)
            got = call_checked(fn, label, tree.copy(deep=True))
            expected = list(linearize(tree))
            try:
                got = [str(token) for token in got]
            except TypeError:
                raise Mismatch(f"on {label}, expected a list of str tokens, got {type(got).__name__}") from None
            for i, (want, have) in enumerate(zip(expected, got)):
                if want != have:
                    raise Mismatch(f"on {label}, token {i} is wrong: expected {want!r}, got {have!r}")
            if len(got) != len(expected):
                raise Mismatch(f"on {label}, expected {len(expected)} tokens, got {len(got)}"
                               + (f" (the extra ones start with {got[len(expected)]!r})" if len(got) > len(expected)
                                  else f" (missing from {expected[len(got)]!r} on)"))
        return f"correct: {function_name(fn)} matches tfm.parsing.linearize on {len(_TREES)} trees"

    return run_checker("check_linearize_tree", fn, body)
