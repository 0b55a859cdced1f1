"""The checker of the parsing exercise (notebook 13): a tree as a token sequence (§6.3)."""

from tfm.exercises.checking import (
    Mismatch,
    call_checked,
    function_name,
    run_checker,
)
from tfm.exercises.messages import Messages, validate_language

# ---------------------------------------------------------------------------
# 11. Tree linearization (notebook 13)
# ---------------------------------------------------------------------------
_TREES = [
    "(S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))",
    "(S (NN Yes))",
    "(S (VP (VB Go) (ADVP (RB home))) (. !))",
    "(S (NP (NP (DT the) (NN end)) (PP (IN of) (NP (DT the) (NN day)))) (VP (VBZ counts)))",
]


_LINEARIZE_TREE = Messages(
    en={
        "tree": "tree {tree}",
        "not_list": "on {label}, expected a list of str tokens, got {type}",
        "wrong_token": "on {label}, token {i} is wrong: expected {expected}, got {got}",
        "count": "on {label}, expected {expected} tokens, got {got}{detail}",
        "extra": " (the extra ones start with {token})",
        "missing": " (missing from {token} on)",
        "correct": "correct: {fn} matches tfm.parsing.linearize on {n} trees",
    },
    ko={
        "tree": "트리 {tree}",
        "not_list": "{label}에서 str 토큰의 리스트를 돌려주어야 하는데 받은 값은 {type}입니다",
        "wrong_token": "{label}에서 {i}번 토큰이 틀렸습니다: {expected}이어야 하는데 {got}입니다",
        "count": "{label}에서 토큰 {expected}개가 나와야 하는데 {got}개입니다{detail}",
        "extra": " (남는 토큰은 {token}부터입니다)",
        "missing": " ({token}부터 빠졌습니다)",
        "correct": "정답입니다: {fn} 함수가 트리 {n}개 모두에서 tfm.parsing.linearize 결과와 일치합니다",
    },
)


def check_linearize_tree(fn, *, lang=None):
    """A parse tree as the token sequence a sequence model writes (§6.3; Vinyals et al., 2015).

    Contract: `fn(tree) -> tokens`
        tree: `nltk.Tree`, e.g. `(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))`.
        Returns a list of str: "(LABEL" when a constituent opens, ")" when it closes (untyped), and
        for each word its part-of-speech tag, the word itself not written (the "tag leaves" notebook 13
        trains on; Vinyals et al. write "XX" instead): `["(S", "(NP", "DT", "NN", ")", "(VP", "VBD", ")",
        ".", ")"]`.

    Checked against `tfm.parsing.linearize(tree, leaves=TAG_LEAVES)` on a sentence, a one-word tree,
    unary chains and deep nesting.

    Args:
        fn: the reader's function, as the contract above says.
        lang: "en", "ko" or None (`$TFM_LANG`, else English): the language of the sentence.

    Returns:
        bool: whether every input matched; one sentence is printed either way.

    Raises:
        ValueError: `lang` is not "en", "ko" or None.

    Example:
        >>> from tfm.parsing import linearize
        >>> from tfm.parsing.trees import TAG_LEAVES
        >>> check_linearize_tree(lambda tree: list(linearize(tree, leaves=TAG_LEAVES)))
        correct: <lambda> matches tfm.parsing.linearize on 4 trees.
        True
        >>> check_linearize_tree(lambda tree: list(linearize(tree)))     # Vinyals et al.'s XX leaves
        On tree (S (NP (DT The) (NN man)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .)), token 2 is wrong:
        expected 'DT', got 'XX'.
        False
    """
    lang = validate_language(lang)
    say = _LINEARIZE_TREE.sentences(lang)

    def body():
        import nltk

        from tfm.parsing import linearize
        from tfm.parsing.trees import TAG_LEAVES

        for text in _TREES:
            label = say("tree", tree=text)
            tree = nltk.Tree.fromstring(text)
            got = call_checked(fn, label, tree.copy(deep=True))
            expected = list(linearize(tree, leaves=TAG_LEAVES))
            try:
                got = [str(token) for token in got]
            except TypeError:
                raise Mismatch(say("not_list", label=label, type=type(got).__name__)) from None
            for i, (want, have) in enumerate(zip(expected, got)):
                if want != have:
                    raise Mismatch(say("wrong_token", label=label, i=i, expected=repr(want), got=repr(have)))
            if len(got) != len(expected):
                detail = (say("extra", token=repr(got[len(expected)])) if len(got) > len(expected)
                          else say("missing", token=repr(expected[len(got)])))
                raise Mismatch(say("count", label=label, expected=len(expected), got=len(got), detail=detail))
        return say("correct", fn=function_name(fn), n=len(_TREES))

    return run_checker("check_linearize_tree", fn, body, lang)
