"""Parse trees drawn (`tfm.parsing.tree_plots`): the layout, and the constituents marked in red."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nltk  # noqa: E402
import pytest  # noqa: E402

from tfm import parsing  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_tree_puts_words_on_the_bottom_row_and_marks_the_highlighted_span():
    tree = nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ runs)))")
    fig = parsing.plot_tree(tree, highlight={("VP", 2, 3)})
    texts = {t.get_text(): t for t in fig.axes[0].texts}
    assert {"the", "dog", "runs", "S", "NP", "VP"} <= set(texts)
    bottom = min(t.get_position()[1] for t in texts.values())
    assert all(texts[w].get_position()[1] == bottom for w in ("the", "dog", "runs"))
    assert texts["VP"].get_color() == "crimson" and texts["NP"].get_color() == "navy"


def test_the_red_labels_are_the_missed_brackets():
    """Three NPs: only the one whose span is highlighted (the bracket the flat parse missed) turns red."""
    gold = nltk.Tree.fromstring("(S (NP (NP (DT a) (NN dog)) (PP (IN with) (NP (NN fleas)))) (VP (VBZ bites)))")
    flat = nltk.Tree.fromstring("(S (NP (DT a) (NN dog)) (PP (IN with) (NP (NN fleas))) (VP (VBZ bites)))")
    missed = parsing.labeled_spans(gold) - parsing.labeled_spans(flat)
    assert missed == {("NP", 0, 4)}
    fig = parsing.plot_tree(gold, highlight=missed)
    red = [(t.get_text(), t.get_position()[1]) for t in fig.axes[0].texts if t.get_color() == "crimson"]
    assert red == [("NP", -1)]  # the outer NP, at depth 1
    assert sum(t.get_text() == "NP" and t.get_color() == "navy" for t in fig.axes[0].texts) == 2


def test_tree_layout_centres_each_label_over_its_children():
    nodes, edges = parsing.tree_layout(nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VBZ runs))"))
    labels = {text: (x, depth) for x, depth, text, is_word in nodes if not is_word}
    assert labels == {"DT": (0.0, 2), "NN": (1.0, 2), "NP": (0.5, 1), "VBZ": (2.0, 1), "S": (1.25, 0)}
    assert len(edges) == len(nodes) - 1  # a tree
    words = [(x, depth) for x, depth, _, is_word in nodes if is_word]
    assert words == [(0.0, 3), (1.0, 3), (2.0, 3)]
