"""Parse trees drawn (`tfm.viz.tree_plots`): the layout, and the constituents marked in red."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import nltk
import pytest

import tfm.viz
from tfm import parsing


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_plot_tree_puts_words_on_the_bottom_row_and_marks_the_highlighted_span():
    tree = nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VP (VBZ runs)))")
    fig = tfm.viz.plot_tree(tree, highlight={("VP", 2, 3)})
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
    fig = tfm.viz.plot_tree(gold, highlight=missed)
    red = [(t.get_text(), t.get_position()[1]) for t in fig.axes[0].texts if t.get_color() == "crimson"]
    assert red == [("NP", -1)]  # the outer NP, at depth 1
    assert sum(t.get_text() == "NP" and t.get_color() == "navy" for t in fig.axes[0].texts) == 2


def test_tree_layout_centres_each_label_over_its_children():
    nodes, edges = tfm.viz.tree_layout(nltk.Tree.fromstring("(S (NP (DT the) (NN dog)) (VBZ runs))"))
    labels = {text: (x, depth) for x, depth, text, is_word in nodes if not is_word}
    assert labels == {"DT": (0.0, 2), "NN": (1.0, 2), "NP": (0.5, 1), "VBZ": (2.0, 1), "S": (1.25, 0)}
    assert len(edges) == len(nodes) - 1  # a tree
    words = [(x, depth) for x, depth, _, is_word in nodes if is_word]
    assert words == [(0.0, 3), (1.0, 3), (2.0, 3)]


CURVE = [{"model": "LSTM", "train_sentences": 1000, "f1": 20.0},
         {"model": "LSTM", "train_sentences": 2000, "f1": 25.0},
         {"model": "LSTM", "train_sentences": 4000, "f1": 28.0},
         {"model": "Transformer", "train_sentences": 1000, "f1": 10.0},
         {"model": "Transformer", "train_sentences": 4000, "f1": 16.0}]


def test_the_trend_is_the_least_squares_line_in_log_sentences():
    # By hand, LSTM: log2 sizes are c-1, c, c+1 around c = log2(2000); F1 20, 25, 28 (mean 24.333), so
    # slope = (4.333 + 3.667) / 2 = 4.0 per doubling, and 8000 sentences (c+2) give 24.333 + 8 = 32.33.
    # Transformer: two points, 6 F1 over two doublings = 3.0 per doubling, 8000 gives 16 + 3 = 19.
    trend = parsing.learning_curve_trend(CURVE, at=8000)
    assert trend == {"LSTM": {"per_doubling": 4.0, "at": 32.33}, "Transformer": {"per_doubling": 3.0, "at": 19.0}}


def test_a_trend_needs_two_training_sizes():
    with pytest.raises(ValueError, match="'LSTM'.*two training sizes"):
        parsing.learning_curve_trend([{"model": "LSTM", "train_sentences": 3501, "f1": 40.0}] * 2)


def test_the_learning_curve_plots_each_model_its_trend_and_table_4():
    fig = tfm.viz.plot_learning_curve(CURVE)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["LSTM"].get_xdata()) == [1000, 2000, 4000] and list(lines["LSTM"].get_ydata()) == [20, 25, 28]
    dashed = lines["LSTM: its trend (+4.0 F1 per doubling)"]
    trend = parsing.learning_curve_trend(CURVE)["LSTM"]
    assert list(dashed.get_xdata()) == [1000, parsing.WSJ_TRAIN_SENTENCES]
    assert dashed.get_ydata()[1] == trend["at"]
    assert abs(dashed.get_ydata()[0] - 20.333) < 0.01  # the fitted line at the first size: 24.333 - 4.0
    [star] = ax.collections
    assert star.get_offsets().tolist() == [[parsing.WSJ_TRAIN_SENTENCES, 91.3]]
    assert "Transformer, WSJ only (91.3)" in star.get_label()
