"""The architecture figures' shared vocabulary: the paper's palette, boxes, arrows, paths and the residual's
`+`, for `tfm.viz.diagrams` (Figures 1 and 2) and `tfm.viz.seq2seq_diagram`.

Example:
    >>> fig, ax = new_axes(None, (3, 2))
    >>> box(ax, 1.0, 1.0, 1.6, 0.6, "Feed Forward", COLORS["ffn"])
    (0.7, 1.3)
    >>> finish(ax, (0, 2), (0, 2))
"""

from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch

# The paper's palette (Figures 1 and 2).
COLORS = {
    "attention": "#fcdcb0",  # orange: (masked) multi-head attention
    "ffn": "#c6e6f5",  # blue: feed forward
    "norm": "#f2f3c2",  # yellow: Add & Norm, Layer Norm
    "embedding": "#f7cccc",  # pink: embeddings
    "linear": "#dcdcf2",  # lavender: Linear, MatMul
    "softmax": "#cfeccb",  # green: Softmax
    "mask": "#f3c6e4",  # magenta: Mask
    "rnn": "#dbe9d5",  # green-grey: RNN states
    "frame": "#eeeeee",  # grey: the N× stack
}
FONTSIZE = 9


def new_axes(ax, figsize):
    """`(figure, axes)`: `ax`'s own, or a new constrained-layout figure of `figsize`."""
    if ax is not None:
        return ax.figure, ax
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def finish(ax, xlim, ylim):
    """Fixes the limits and the aspect, and hides the axes: a drawing, not a plot."""
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")


def box(ax, x, y, w, h, text, color, gid=None, fontsize=FONTSIZE, zorder=2, **text_kw):
    """A rounded box centred at `(x, y)` with `text` in it; returns `(bottom, top)`."""
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.1",
                                facecolor=color, edgecolor="black", linewidth=1.0, zorder=zorder))
    if text:
        label = ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=zorder + 1, **text_kw)
        label.set_gid(gid)
    return y - h / 2, y + h / 2


def arrow(ax, start, end, style="-|>", color="black", linewidth=1.1, linestyle="-", zorder=1, **kw):
    """An arrow from `start` to `end` (data coordinates)."""
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=11, color=color,
                                 linewidth=linewidth, linestyle=linestyle, shrinkA=0, shrinkB=0,
                                 zorder=zorder, **kw))


def path(ax, points, arrow=True, color="black", linewidth=1.1, linestyle="-", zorder=1):
    """A polyline through `points`, with an arrow head on its last segment."""
    xs, ys = zip(*points[:-1])
    ax.plot(xs, ys, color=color, linewidth=linewidth, linestyle=linestyle, zorder=zorder,
            solid_capstyle="butt")
    arrow(ax, points[-2], points[-1], style="-|>" if arrow else "-", color=color, linewidth=linewidth,
           linestyle=linestyle, zorder=zorder)


def plus(ax, x, y, r=0.2, text="+"):
    """The residual's circled `+` (or another sign) centred at `(x, y)`."""
    ax.add_patch(Circle((x, y), r, facecolor="white", edgecolor="black", linewidth=1.0, zorder=2))
    ax.text(x, y, text, ha="center", va="center", fontsize=FONTSIZE + 3, zorder=3)
