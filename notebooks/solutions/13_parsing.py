"""Reference solution, notebook 13. Check: `tfm.exercises.check_linearize_tree(linearize_tree)`."""


def linearize_tree(tree):
    """nltk.Tree -> ["(S", "(NP", "XX", "XX", ")", ...]: "(LABEL" opens, ")" closes, "XX" per tagged word."""
    tokens = []

    def visit(node):
        if isinstance(node, str) or (len(node) == 1 and isinstance(node[0], str)):  # a word or (TAG word)
            tokens.append("XX")
            return
        tokens.append("(" + node.label())
        for child in node:
            visit(child)
        tokens.append(")")

    visit(tree)
    return tokens
