"""Bahdanau et al.'s (2015) RNN encoder-decoder drawn (their Figure 1), with attention or with the bottleneck.

The drawing helpers and palette are `tfm.viz.drawing`'s, shared with `tfm.viz.diagrams`.

    fig = draw_seq2seq(bidirectional=True, attention="bahdanau")
"""

from matplotlib.patches import Circle

from tfm.viz.drawing import COLORS, FONTSIZE, arrow, box, finish_axes, new_axes, path, plus


def draw_seq2seq(bidirectional=True, attention="bahdanau", ax=None, figsize=(8.8, 6.4)):
    """The RNN encoder-decoder, with Bahdanau et al.'s (2015) attention or with the fixed-size bottleneck.

    Source tokens x_j feed an RNN encoder (both directions when `bidirectional`: h_j = [→h_j; ←h_j]).
    With attention, the decoder state s_{i-1} scores every h_j with the alignment model
    e_ij = a(s_{i-1}, h_j), the softmax over j gives the weights α_ij, and the context
    c_i = Σ_j α_ij h_j feeds the next state s_i and the output y_i. With `attention=None`, the
    plain seq2seq: one context, the last encoder state, for every target word.

    Args:
        bidirectional: bool. A bidirectional encoder (RNNsearch) instead of a forward one. Defaults to `True`.
        attention: `"bahdanau"` or None. Defaults to `"bahdanau"`.
        ax: matplotlib axes to draw into, or None for a new figure.
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:

    >>> fig = draw_seq2seq()
    >>> any(r"\\alpha" in t.get_text() for t in fig.axes[0].texts)
    True
    >>> any(r"\\alpha" in t.get_text() for t in draw_seq2seq(attention=None).axes[0].texts)
    False
    """
    if attention not in ("bahdanau", None):
        raise ValueError(f"attention={attention!r}: expected 'bahdanau' or None")
    fig, ax = new_axes(ax, figsize)
    xs = [1.0, 2.6, 4.2, 5.8]
    subscripts = ["1", "2", "3", "T"]
    bw, bh = 0.8, 0.6
    fs = FONTSIZE + 2

    # Encoder.
    for x, j in zip(xs, subscripts):
        ax.text(x, 0.3, f"$x_{j}$", ha="center", va="center", fontsize=fs)
    if bidirectional:
        rows = [(1.5, r"\overrightarrow{h}", 1), (2.6, r"\overleftarrow{h}", -1)]
    else:
        rows = [(2.0, "h", 1)]
    for y, symbol, direction in rows:
        for x, j in zip(xs, subscripts):
            box(ax, x, y, bw, bh, f"${symbol}_{j}$", COLORS["rnn"], gid="encoder", fontsize=fs)
        for a, b in zip(xs, xs[1:]):
            start, end = (a + bw / 2, b - bw / 2) if direction > 0 else (b - bw / 2, a + bw / 2)
            arrow(ax, (start, y), (end, y))
    for x in xs:
        arrow(ax, (x, 0.55), (x, rows[0][0] - bh / 2))
        if bidirectional:  # the token feeds the backward row too
            between = (rows[0][0] + rows[1][0]) / 2
            path(ax, [(x, 0.8), (x + 0.55, 0.8), (x + 0.55, between), (x + 0.2, between),
                       (x + 0.2, rows[1][0] - bh / 2)], color="#555555", linewidth=0.9)
    enc_top = rows[-1][0] + bh / 2
    if bidirectional:
        ax.text(6.75, 2.05, r"$h_j = [\overrightarrow{h}_j\,;\,\overleftarrow{h}_j]$", ha="left", va="center",
                fontsize=fs)
        encoder = "bidirectional RNN encoder"
    else:
        encoder = "RNN encoder"
    ax.text(0.3, 2.05, encoder, ha="center", va="center", rotation=90, fontsize=FONTSIZE)

    # Decoder: s_{i-1} -> s_i, outputs above.
    xd0, xd1, yd = 6.4, 8.4, 6.6
    box(ax, xd0, yd, 1.2, 0.7, r"$s_{i-1}$", COLORS["rnn"], gid="decoder", fontsize=fs)
    box(ax, xd1, yd, 1.2, 0.7, r"$s_i$", COLORS["rnn"], gid="decoder", fontsize=fs)
    arrow(ax, (xd0 + 0.6, yd), (xd1 - 0.6, yd))
    for x, label in ((xd0, r"$y_{i-1}$"), (xd1, r"$y_i$")):
        arrow(ax, (x, yd + 0.35), (x, 7.75))
        ax.text(x, 8.0, label, ha="center", va="center", fontsize=fs)
    path(ax, [(xd0 + 0.3, 7.85), (xd0 + 1.0, 7.85), (xd1 - 0.45, yd + 0.35)], color="#555555",
          linewidth=0.9, linestyle=(0, (3, 2)))
    context = "c_i" if attention else "c"  # one context per target word, or one for all
    ax.text(xd1 + 0.75, yd, rf"$s_i = f(s_{{i-1}}, y_{{i-1}}, {context})$", ha="left", va="center",
            fontsize=FONTSIZE + 1)
    ax.text(xd1 + 0.35, 8.0, rf"$p(y_i) = g(y_{{i-1}}, s_i, {context})$", ha="left", va="center",
            fontsize=FONTSIZE + 1)
    ax.text(xd0 - 0.6, 8.0, "RNN decoder", ha="right", va="center", fontsize=FONTSIZE)

    yc = 5.0
    if attention == "bahdanau":
        plus(ax, xd1, yc, r=0.22)
        arrow(ax, (xd1, yc + 0.22), (xd1, yd - 0.35))
        ax.text(xd1 + 0.35, yc, r"$c_i = \sum_j \alpha_{ij} h_j$", ha="left", va="center", fontsize=fs)
        for k, (x, j) in enumerate(zip(xs, subscripts)):  # weighted annotations flow into the context
            start, end = (x, enc_top), (xd1 - 0.2, yc - 0.08)
            arrow(ax, start, end, color="#c06000", linewidth=1.0)
            t = 0.45 + 0.05 * k
            ax.text(start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1]),
                    rf"$\alpha_{{i{j}}}$", ha="center", va="center", fontsize=FONTSIZE + 1,
                    bbox=dict(facecolor="white", edgecolor="none", pad=0.5), zorder=4)
        # The alignment model scores every h_j against the previous decoder state.
        lo, hi = box(ax, 2.5, yd, 4.4, 1.0,
                      "alignment model\n" + r"$e_{ij} = a(s_{i-1}, h_j) = v_a^T \tanh(W_a s_{i-1} + U_a h_j)$",
                      COLORS["attention"], gid="attention", fontsize=FONTSIZE)
        arrow(ax, (xd0 - 0.6, yd), (2.5 + 2.2, yd))
        arrow(ax, (2.5, lo), (2.5, 4.55))
        ax.text(2.5, 4.35, r"$\alpha_{ij} = \mathrm{softmax}_j(e_{ij})$", ha="center", va="top", fontsize=fs)
        title = ("RNNsearch (Bahdanau et al., 2015): attention over every encoder state" if bidirectional
                 else "Bahdanau et al.'s (2015) attention over a forward RNN encoder")
    else:
        last = r"[\overrightarrow{h}_T\,;\,\overleftarrow{h}_1]" if bidirectional else "h_T"
        ax.add_patch(Circle((xd1, yc), 0.28, facecolor="#fde3c8", edgecolor="black", linewidth=1.0, zorder=2))
        ax.text(xd1, yc, "$c$", ha="center", va="center", fontsize=fs, zorder=3)
        arrow(ax, (xd1, yc + 0.28), (xd1, yd - 0.35))
        arrow(ax, (xd1 - 0.28, yc), (xd0, yd - 0.35))
        if bidirectional:  # the forward RNN's last state and the backward RNN's first
            arrow(ax, (xs[-1] + bw / 2, rows[0][0]), (xd1 - 0.2, yc - 0.2))
            arrow(ax, (xs[0], enc_top), (xd1 - 0.28, yc - 0.05))
        else:
            arrow(ax, (xs[-1], enc_top), (xd1 - 0.22, yc - 0.18))
        ax.text(xd1 + 0.4, yc, rf"$c = {last}$" + "\none fixed-size vector\nfor every $y_i$", ha="left",
                va="center", fontsize=FONTSIZE + 1)
        title = "Encoder-decoder without attention: the fixed-size bottleneck"
    ax.set_title(title, fontsize=FONTSIZE + 2)
    finish_axes(ax, (0.0, 11.3), (-0.1, 8.5))
    return fig
