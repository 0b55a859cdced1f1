"""Reference solution, notebook 13. Check: `tfm.exercises.check_linearize_tree(linearize_tree)`."""


def linearize_tree(tree):
    """nltk.Tree -> ["(S", "(NP", "DT", "NN", ")", ...]: "(LABEL" opens, ")" closes, a word's POS tag per word."""
    tokens = []

    def visit(node):
        if len(node) == 1 and isinstance(node[0], str):  # (TAG word): the tag, not the word
            tokens.append(node.label())
            return
        tokens.append("(" + node.label())
        for child in node:
            visit(child)
        tokens.append(")")

    visit(tree)
    return tokens
