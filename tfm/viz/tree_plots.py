"""Parse trees and parsers' learning curves drawn for the course (§6.3, Table 4; notebook 13).

    wrong = tfm.parsing.labeled_spans(predicted) - tfm.parsing.labeled_spans(gold)
    fig = tfm.viz.plot_tree(predicted, highlight=wrong)       # an nltk.Tree, constituents to mark in red
    fig = tfm.viz.plot_learning_curve(points)                 # F1 against training sentences, Table 4 beside
"""

import numpy as np

from tfm.parsing.evalb import TABLE4_WSJ23_F1, WSJ_TRAIN_SENTENCES, learning_curve_trend
from tfm.parsing.trees import constituents
from tfm.viz.plots import figure_axes


def tree_layout(tree):
    """Positions for drawing a constituency tree: leaves at x = 0, 1, 2, ... on the bottom row,
    each constituent centred over its children, one row per depth.

    Args:
        tree: an `nltk.Tree` (anything with `.label()` and list children; leaves are str).

    Returns:
        `(nodes, edges)`: `nodes` a list of `(x, depth, text, is_word)`, `edges` a list of
        `(parent index, child index)` into `nodes`.

    Example:
        >>> import nltk
        >>> nodes, edges = tree_layout(nltk.Tree.fromstring("(S (NP a dog) (VP runs))"))
        >>> [(x, depth, text) for x, depth, text, is_word in nodes]
        [(0.0, 2, 'a'), (1.0, 2, 'dog'), (0.5, 1, 'NP'), (2.0, 2, 'runs'), (2.0, 1, 'VP'), (1.25, 0, 'S')]
        >>> edges[:2]
        [(2, 0), (2, 1)]
    """
    nodes, edges = [], []
    height = _tree_height(tree)
    next_leaf = [0]

    def place(node, depth):
        if isinstance(node, str):
            nodes.append((float(next_leaf[0]), height, node, True))
            next_leaf[0] += 1
            return len(nodes) - 1
        children = [place(child, depth + 1) for child in node]
        x = float(np.mean([nodes[c][0] for c in children])) if children else float(next_leaf[0])
        nodes.append((x, depth, str(node.label()), False))
        edges.extend((len(nodes) - 1, c) for c in children)
        return len(nodes) - 1

    place(tree, 0)
    return nodes, edges


def _tree_height(node):
    if isinstance(node, str):
        return 0
    return 1 + max((_tree_height(child) for child in node), default=0)


def plot_tree(tree, ax=None, title=None, highlight=(), figsize=None):
    """Draws a constituency tree (labels above, words on the bottom row).

    Args:
        tree: an `nltk.Tree`.
        ax: matplotlib axes or None.
        title: str or None.
        highlight: constituents to draw in red, e.g. brackets a parser got wrong: a set of
            `(label, first word index, end word index)` spans (`tfm.parsing.labeled_spans`).
        figsize: inches; defaults to the tree's size.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> import nltk
        >>> tree = nltk.Tree.fromstring("(S (NP (DT a) (NN dog)) (VP (VBZ runs)))")
        >>> fig = plot_tree(tree, highlight={("VP", 2, 3)}, title="one wrong bracket")
        >>> fig.axes[0].get_title()
        'one wrong bracket'
    """
    nodes, edges = tree_layout(tree)
    words = sum(1 for node in nodes if node[3])
    depth = max(node[1] for node in nodes)
    fig, ax = figure_axes(ax, figsize or (max(4.0, 0.75 * words), max(2.5, 0.45 * depth + 0.8)))
    # tree_layout places the nodes in post-order, as `constituents` lists them: the k-th label is the k-th span.
    spans = iter(constituents(tree))
    highlight = set(highlight)
    for parent, child in edges:
        ax.plot([nodes[parent][0], nodes[child][0]], [-nodes[parent][1], -nodes[child][1]], color="0.6", lw=0.8,
                zorder=1)
    for x, y, text, is_word in nodes:
        red = not is_word and next(spans)[:3] in highlight  # (label, start, end)
        ax.text(x, -y, text, ha="center", va="center", fontsize=9, zorder=2,
                color="crimson" if red else ("0.1" if is_word else "navy"),
                fontweight="normal" if is_word else "bold",
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
    ax.set_xlim(-0.7, words - 0.3)
    ax.set_ylim(-depth - 0.6, 0.6)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def plot_learning_curve(points, ax=None, figsize=(6.4, 4.2), trend=True):
    """Parsing F1 against training sentences (log scale), one line per model, Table 4's WSJ-only
    Transformer (91.3 after 39,832 sentences, §6.3) as a star.

    Args:
        points: `[{"model", "train_sentences", "f1"}]` (`benchmarks/parsing_at_budget.py
            --learning-curve` writes them in its results file as `learning_curve`).
        ax: matplotlib axes or None (a new figure).
        figsize: inches of a new figure.
        trend: also draw each model's `learning_curve_trend`, dashed, out to the WSJ's size.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> fig = plot_learning_curve([{"model": "LSTM", "train_sentences": 875, "f1": 20.0},
        ...                            {"model": "LSTM", "train_sentences": 3501, "f1": 40.0}])
    """
    fig, ax = figure_axes(ax, figsize)
    trends = learning_curve_trend(points) if trend else {}
    for model in sorted({p["model"] for p in points}):
        mine = sorted((p["train_sentences"], p["f1"]) for p in points if p["model"] == model)
        line, = ax.plot(*zip(*mine), marker="o", label=model)
        if model in trends:
            slope, far = trends[model]["per_doubling"], trends[model]["at"]  # the fitted line, first size to WSJ
            ax.plot([mine[0][0], WSJ_TRAIN_SENTENCES], [far - slope * np.log2(WSJ_TRAIN_SENTENCES / mine[0][0]), far],
                    "--", color=line.get_color(), alpha=0.6,
                    label=f"{model}: its trend ({trends[model]['per_doubling']:+.1f} F1 per doubling)")
    [paper] = [f1 for parser, training, f1 in TABLE4_WSJ23_F1
               if parser.startswith("Transformer") and training.startswith("WSJ only")]
    ax.scatter([WSJ_TRAIN_SENTENCES], [paper], marker="*", s=140, color="black", zorder=3,
               label=f"Table 4: Transformer, WSJ only ({paper})")
    ax.set_xscale("log")
    ax.set(xlabel="training sentences (log scale)", ylabel="F1 (EVALB)", ylim=(0, 100),
           title="Parsing F1 against training data, same time budget")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig
