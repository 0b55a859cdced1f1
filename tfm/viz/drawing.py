"""The architecture figures' shared vocabulary: the paper's palette, boxes, arrows, paths and the residual's
`+`, for `tfm.viz.diagrams` (Figures 1 and 2) and `tfm.viz.seq2seq_diagram`.

Example:
    >>> fig, ax = new_axes(None, (3, 2))
    >>> box(ax, 1.0, 1.0, 1.6, 0.6, "Feed Forward", COLORS["ffn"])
    (0.7, 1.3)
    >>> finish_axes(ax, (0, 2), (0, 2))
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
    """`(figure, axes)`: `ax`'s own, or a new constrained-layout figure of `figsize`.

    Args:
        ax: matplotlib axes to draw into, or None for a new figure.
        figsize: `(width, height)` in inches of a new figure.

    Example:
        >>> fig, ax = new_axes(None, (3, 2))
        >>> new_axes(ax, (9, 9)) == (fig, ax)   # given axes are kept
        True
    """
    if ax is not None:
        return ax.figure, ax
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def finish_axes(ax, xlim, ylim):
    """Fixes the limits and the aspect, and hides the axes: a drawing, not a plot.

    Args:
        ax: matplotlib axes.
        xlim, ylim: `(low, high)` data limits.

    Example:
        >>> fig, ax = new_axes(None, (3, 2))
        >>> finish_axes(ax, (0, 3), (0, 2))
        >>> tuple(float(x) for x in ax.get_xlim()), ax.axison
        ((0.0, 3.0), False)
    """
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")


def box(ax, x, y, w, h, text, color, gid=None, fontsize=FONTSIZE, zorder=2, **text_kw):
    """A rounded box centred at `(x, y)` with `text` in it; returns `(bottom, top)`.

    Args:
        ax: matplotlib axes.
        x, y: the centre (data coordinates).
        w, h: width and height.
        text: str or None. The label.
        color: face colour, e.g. `COLORS["attention"]`.
        gid: str or None. The label's group id (tests and SVG find boxes by it).
        fontsize: label size in points.
        zorder: drawing order of the box; its label goes one above.
        **text_kw: passed to `ax.text`.

    Example:
        >>> fig, ax = new_axes(None, (3, 2))
        >>> box(ax, 1.0, 1.0, 1.6, 0.6, "Feed Forward", COLORS["ffn"])
        (0.7, 1.3)
    """
    ax.add_patch(FancyBboxPatch((x - w / 2, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.1",
                                facecolor=color, edgecolor="black", linewidth=1.0, zorder=zorder))
    if text:
        label = ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=zorder + 1, **text_kw)
        label.set_gid(gid)
    return y - h / 2, y + h / 2


def arrow(ax, start, end, style="-|>", color="black", linewidth=1.1, linestyle="-", zorder=1, **kw):
    """An arrow from `start` to `end` (data coordinates).

    Args:
        ax: matplotlib axes.
        start, end: `(x, y)` points.
        style: matplotlib arrow style; `"-"` draws a plain line.
        color, linewidth, linestyle, zorder: as in matplotlib.
        **kw: passed to `FancyArrowPatch`.

    Example:
        >>> fig, ax = new_axes(None, (3, 2))
        >>> arrow(ax, (0, 0), (0, 1))
        >>> len(ax.patches)
        1
    """
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=11, color=color,
                                 linewidth=linewidth, linestyle=linestyle, shrinkA=0, shrinkB=0,
                                 zorder=zorder, **kw))


def path(ax, points, head=True, color="black", linewidth=1.1, linestyle="-", zorder=1):
    """A polyline through `points`, with an arrow head on its last segment.

    Args:
        ax: matplotlib axes.
        points: two or more `(x, y)` points.
        head: bool. End in an arrow head; `False` draws a plain line.
        color, linewidth, linestyle, zorder: as in matplotlib.

    Example:
        >>> fig, ax = new_axes(None, (3, 2))
        >>> path(ax, [(0, 0), (1, 0), (1, 1)])   # a residual wire: right, then up into the box above
        >>> len(ax.lines), len(ax.patches)
        (1, 1)
    """
    xs, ys = zip(*points[:-1])
    ax.plot(xs, ys, color=color, linewidth=linewidth, linestyle=linestyle, zorder=zorder,
            solid_capstyle="butt")
    arrow(ax, points[-2], points[-1], style="-|>" if head else "-", color=color, linewidth=linewidth,
          linestyle=linestyle, zorder=zorder)


def plus(ax, x, y, r=0.2, text="+"):
    """The residual's circled `+` (or another sign) centred at `(x, y)`.

    Args:
        ax: matplotlib axes.
        x, y: the centre.
        r: the circle's radius.
        text: the sign, `"+"` by default.

    Example:
        >>> fig, ax = new_axes(None, (3, 2))
        >>> plus(ax, 1.0, 1.0)
        >>> ax.texts[0].get_text()
        '+'
    """
    ax.add_patch(Circle((x, y), r, facecolor="white", edgecolor="black", linewidth=1.0, zorder=2))
    ax.text(x, y, text, ha="center", va="center", fontsize=FONTSIZE + 3, zorder=3)
