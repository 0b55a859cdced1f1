"""Architecture diagrams drawn from a config: the paper's Figures 1 and 2, and Bahdanau's encoder-decoder.

Each function draws with plain matplotlib patches, arrows and text and returns the `Figure`,
like the rest of `tfm.viz` (which exports them). The labels carry the config's numbers
(N, d_model, h, d_k, d_ff), and the Transformer's boxes follow `norm_first`, so the picture
is of the model that `Transformer(config)` builds, not of a fixed drawing.
No TensorFlow here, and no backend is picked: headless runs set `MPLBACKEND=Agg`.

    fig = draw_transformer(TransformerConfig.small(norm_first=True))
    fig.savefig("transformer.png")
"""

from matplotlib.patches import FancyBboxPatch

from tfm.viz.drawing import COLORS, FONTSIZE, arrow, box, finish_axes, new_axes, path, plus

__all__ = ["draw_attention", "draw_transformer"]

# Figure 1 -------------------------------------------------------------------------------------------------

def _stack(config, decoder):
    """The boxes of one layer, bottom to top, as `(kind, label)`, and its residual blocks `(first, add)`.

    A block is one sub-layer with its residual: post-LN `Sublayer -> Add & Norm` (LayerNorm(x + Sublayer(x)),
    §3.1), pre-LN `Norm -> Sublayer -> Add` (x + Sublayer(LayerNorm(x))).
    """
    h, d_k, d_ff, d = config.num_heads, config.head_key_dim, config.d_ff, config.d_model
    attention = f"h = {h}, d_k = {d_k}"
    sublayers = [("self", f"Multi-Head Attention\n{attention}")]
    if decoder:
        sublayers = [("self", f"Masked Multi-Head Attention\n{attention}"),
                     ("cross", f"Multi-Head Attention\n{attention}")]
    sublayers.append(("ffn", f"Feed Forward\n{d} → d_ff = {d_ff} → {d}"))
    boxes, blocks = [], []
    for kind, label in sublayers:
        first = len(boxes)
        if config.norm_first:
            boxes += [("norm", "Layer Norm"), (kind, label), ("add", "Add")]
        else:
            boxes += [(kind, label), ("add", "Add & Norm")]
        blocks.append((first, len(boxes) - 1))
    return boxes, blocks


def draw_transformer(config, ax=None, scale=0.62):
    """The paper's Figure 1 for `config`: encoder and decoder stacks, embeddings, output layer.

    Each sub-layer is a box, and the residual and LayerNorm sit where `config.norm_first` puts them:
    post-LN (the paper) `Sublayer -> Add & Norm`; pre-LN `Layer Norm -> Sublayer -> Add`, with a final
    Layer Norm on top of each stack. The stacks are marked `N×` (`config.num_layers`), the labels carry
    d_model, h, d_k and d_ff, the positional box says sinusoidal or learned, and with
    `config.share_embeddings` a dashed link ties both embeddings to the pre-softmax Linear (§3.4).

    Args:
        config: `tfm.TransformerConfig`.
        ax: matplotlib axes to draw into, or None for a new figure.
        scale: inches per drawing unit of a new figure. Defaults to `0.62` (about 8 x 11 inches).

    Returns:
        `matplotlib.figure.Figure`.

    Example:

    >>> from tfm.config.configs import TransformerConfig
    >>> fig = draw_transformer(TransformerConfig.base())
    >>> labels = [t.get_text() for t in fig.axes[0].texts]
    >>> "6×" in labels and "Add & Norm" in labels
    True
    >>> "Layer Norm" in [t.get_text() for t in draw_transformer(TransformerConfig.base(norm_first=True)).axes[0].texts]
    True
    """
    w, h, gap = 3.3, 0.62, 0.46  # box width, box height, space between boxes
    step = h + gap
    columns = {"encoder": 2.7, "decoder": 8.3}
    res_offset = w / 2 + 0.3  # residual wires run this far from the centre line
    y_emb, y_pos, y0 = 0.9, 2.0, 3.3  # embedding, positional "+", first layer box
    d, v, n = config.d_model, config.vocab_size, config.num_layers
    fig, ax = new_axes(ax, None)

    tops, cross = {}, None
    for name, cx in columns.items():
        decoder = name == "decoder"
        side = 1 if decoder else -1  # residual wires: encoder on the left, decoder on the right (as the paper)
        boxes, blocks = _stack(config, decoder)
        ys = [y0 + i * step for i in range(len(boxes))]

        # The N× frame.
        bottom, top = ys[0] - h / 2 - gap / 2 - 0.2, ys[-1] + h / 2 + 0.2
        left = cx - w / 2 - (0.55 if not decoder else 0.25)
        right = cx + w / 2 + (0.55 if decoder else 0.25)
        ax.add_patch(FancyBboxPatch((left, bottom), right - left, top - bottom,
                                    boxstyle="round,pad=0,rounding_size=0.25", facecolor=COLORS["frame"],
                                    edgecolor="#888888", linewidth=1.0, zorder=0))
        ax.text(right + 0.15 if decoder else left - 0.15, (bottom + top) / 2, f"{n}×",
                ha="left" if decoder else "right", va="center", fontsize=FONTSIZE + 5)

        # Embedding, positional encoding, "+".
        emb = "Output Embedding" if decoder else "Input Embedding"
        box(ax, cx, y_emb, w, h, f"{emb}\nV = {v}, d_model = {d}", COLORS["embedding"], gid=name)
        ax.text(cx, y_emb - h / 2 - 0.55, "Outputs\n(shifted right)" if decoder else "Inputs",
                ha="center", va="center", fontsize=FONTSIZE)
        arrow(ax, (cx, y_emb - h / 2 - 0.3), (cx, y_emb - h / 2))
        plus(ax, cx, y_pos)
        arrow(ax, (cx, y_emb + h / 2), (cx, y_pos - 0.2))
        if config.positional == "learned":
            pos = f"Positional\nEmbedding\n(learned,\n{config.max_length} × {d})"
        else:
            pos = "Positional\nEncoding\n(sinusoidal)"
        px = cx + side * 0.85
        ax.text(px + side * 0.1, y_pos, pos, ha="left" if decoder else "right", va="center", fontsize=FONTSIZE - 1)
        arrow(ax, (px, y_pos), (cx + side * 0.2, y_pos))

        # The layer's boxes, the wires into them, the residuals.
        source = y_pos + 0.2
        for i, (kind, label) in enumerate(boxes):
            color = {"self": "attention", "cross": "attention", "ffn": "ffn"}.get(kind, "norm")
            lo, hi = box(ax, cx, ys[i], w, h, label, COLORS[color], gid=name)
            fork = lo - gap / 2
            if kind == "self":  # Q, K and V are the same input: the wire forks in three
                ax.plot([cx, cx], [source, fork], color="black", linewidth=1.1, zorder=1)
                ax.plot([cx - w / 3, cx + w / 3], [fork, fork], color="black", linewidth=1.1, zorder=1)
                for dx in (-w / 3, 0, w / 3):
                    arrow(ax, (cx + dx, fork), (cx + dx, lo))
            elif kind == "cross":  # Q from below; K and V from the encoder
                arrow(ax, (cx, source), (cx, lo))
                ax.text(cx + 0.08, fork + 0.04, "Q", ha="left", va="bottom", fontsize=FONTSIZE - 1)
                cross = (cx - w / 3, lo, fork)
            else:
                arrow(ax, (cx, source), (cx, lo))
            source = hi
        for first, add in blocks:
            branch = ys[first] - h / 2 - gap / 2
            wire = cx + side * res_offset
            path(ax, [(cx, branch), (wire, branch), (wire, ys[add]), (cx + side * w / 2, ys[add])])

        if config.norm_first:  # pre-LN ends each stack with a LayerNorm
            y_final = top + 0.25 + h / 2
            arrow(ax, (cx, source), (cx, y_final - h / 2))
            source = box(ax, cx, y_final, w, h, "Layer Norm (final)", COLORS["norm"], gid=name)[1]
        tops[name] = source

    # Encoder output -> every decoder layer's cross-attention (K, V).
    enc, dec = columns["encoder"], columns["decoder"]
    x_mid = (enc + w / 2 + dec - w / 2) / 2
    entry_x, entry_lo, entry_y = cross
    y_over = tops["encoder"] + 0.35
    path(ax, [(enc, tops["encoder"]), (enc, y_over), (x_mid, y_over), (x_mid, entry_y), (entry_x, entry_y),
               (entry_x, entry_lo)])
    ax.text(entry_x - 0.08, entry_y + 0.04, "K, V", ha="right", va="bottom", fontsize=FONTSIZE - 1)
    ax.text(x_mid - 0.08, (y_over + entry_y) / 2, "encoder output", rotation=90, ha="right", va="center",
            fontsize=FONTSIZE - 1)

    # Output layer.
    y_lin = tops["decoder"] + 0.5 + h / 2
    arrow(ax, (dec, tops["decoder"]), (dec, y_lin - h / 2))
    box(ax, dec, y_lin, w, h, f"Linear\nd_model = {d} → V = {v}", COLORS["linear"], gid="decoder")
    y_soft = y_lin + step
    arrow(ax, (dec, y_lin + h / 2), (dec, y_soft - h / 2))
    box(ax, dec, y_soft, w, h, "Softmax", COLORS["softmax"], gid="decoder")
    arrow(ax, (dec, y_soft + h / 2), (dec, y_soft + h / 2 + 0.4))
    y_top = y_soft + h / 2 + 0.65
    ax.text(dec, y_top, "Output Probabilities", ha="center", va="center", fontsize=FONTSIZE)

    # Shared weights (§3.4): one V × d_model matrix for both embeddings and the pre-softmax Linear.
    y_bottom = y_emb - h / 2 - 1.0
    x_max = dec + w / 2 + 1.3
    if config.share_embeddings:
        link = dict(color="#b03030", linewidth=1.3, linestyle=(0, (4, 3)), zorder=1)
        ax.plot([enc + w / 2, dec - w / 2], [y_emb, y_emb], **link)
        ax.text(x_mid, y_emb + 0.08, "shared", ha="center", va="bottom", fontsize=FONTSIZE - 1, color="#b03030")
        x_link = x_max - 0.15
        ax.plot([dec + w / 2, x_link, x_link, dec + w / 2], [y_emb, y_emb, y_lin, y_lin], **link)
        y_bottom -= 0.55
        ax.text((enc + dec) / 2, y_bottom + 0.25,
                f"Shared weights (§3.4): both embeddings and the pre-softmax Linear are one {v} × {d} matrix\n"
                "(the embeddings multiply it by √d_model)",
                ha="center", va="center", fontsize=FONTSIZE - 1, color="#b03030")

    norm = "pre-LN (norm_first=True)" if config.norm_first else "post-LN (the paper)"
    ax.set_title(f"Transformer: N = {n}, d_model = {d}, h = {config.num_heads}, d_ff = {config.d_ff}, {norm}",
                 fontsize=FONTSIZE + 2)
    xlim, ylim = (-0.9, x_max + 0.1), (y_bottom, y_top + 0.3)
    finish_axes(ax, xlim, ylim)
    if len(fig.axes) == 1:
        fig.set_size_inches(scale * (xlim[1] - xlim[0]), scale * (ylim[1] - ylim[0]) + 0.4)
    return fig


# Figure 2 -------------------------------------------------------------------------------------------------

def _heads(ax, x, y, w, h, text, color, count, dx=0.13, dy=0.13):
    """`count` copies of a box, stacked back to front like the paper's h parallel layers; returns the front's
    `(bottom, top)`."""
    for k in reversed(range(1, min(count, 3))):
        box(ax, x + k * dx, y + k * dy, w, h, None, color, zorder=2 - 0.1 * k)
    return box(ax, x, y, w, h, text, color, zorder=2)


def draw_attention(config=None, num_heads=None, key_dim=None, scale=0.62):
    """The paper's Figure 2: scaled dot-product attention (left) and multi-head attention (right).

    Args:
        config: `tfm.TransformerConfig` or None. Gives h (`num_heads`), d_k (`head_key_dim`), d_v and
            d_model.
        num_heads: int or None. h; overrides the config's. Defaults to `8` without a config.
        key_dim: int or None. d_k per head; overrides the config's. Defaults to `d_model // h`, or `64`
            without a config.
        scale: inches per drawing unit.

    Returns:
        `matplotlib.figure.Figure` with two axes.

    Example:
        >>> from tfm.config.configs import TransformerConfig
        >>> fig = draw_attention(TransformerConfig.big())
        >>> [ax.get_title() for ax in fig.axes]
        ['Scaled Dot-Product Attention', 'Multi-Head Attention (h = 16)']
        >>> any("d_k = 64" in t.get_text() for ax in fig.axes for t in ax.texts)
        True
    """
    h = num_heads or (config.num_heads if config is not None else 8)
    if config is not None:
        d = config.d_model
        d_k = key_dim or config.key_dim or d // h
        d_v = config.value_dim or d // h
    else:
        d_k = key_dim or 64
        d_v, d = d_k, h * d_k
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(scale * 15.5, scale * 9.6), layout="constrained",
                                      width_ratios=[6.4, 9.0])
    bh = 0.62

    # Left: eq. 1, softmax(Q K^T / sqrt(d_k)) V.
    ax = left
    xq, xk, xv, xc = 1.4, 2.9, 4.3, 2.15
    for x, name in ((xq, "Q"), (xk, "K"), (xv, "V")):
        ax.text(x, 0.35, name, ha="center", va="center", fontsize=FONTSIZE + 3, fontweight="bold")
    ax.text(2.85, -0.35, f"Q, K: d_k = {d_k} per head;  V: d_v = {d_v}", ha="center", va="center",
            fontsize=FONTSIZE - 1)
    steps = [("MatMul", "linear"), (f"Scale  1/√d_k = 1/√{d_k}", "norm"), ("Mask (opt.)", "mask"),
             ("SoftMax", "softmax")]
    y = 1.7
    for x in (xq, xk):
        arrow(ax, (x, 0.65), (x, y - bh / 2))
    for label, color in steps:
        lo, hi = box(ax, xc, y, 2.7, bh, label, COLORS[color])
        y_next = y + 1.15
        arrow(ax, (xc, hi), (xc, y_next - bh / 2))
        y = y_next
    x2 = 3.25
    lo, hi = box(ax, x2, y, 2.7, bh, "MatMul", COLORS["linear"])
    arrow(ax, (xv, 0.65), (xv, lo))
    arrow(ax, (x2, hi), (x2, hi + 0.5))
    ax.text(x2, hi + 0.85, r"$\mathrm{softmax}\left(\frac{QK^{T}}{\sqrt{d_k}}\right)V$", ha="center",
            va="center", fontsize=FONTSIZE + 3)
    ax.set_title("Scaled Dot-Product Attention", fontsize=FONTSIZE + 2)
    finish_axes(ax, (0.0, 6.1), (-0.7, 8.5))

    # Right: h heads, each with its own Q, K, V projections, concatenated and projected by W^O.
    ax = right
    xs = {"V": 1.6, "K": 4.0, "Q": 6.4}
    dims = {"V": d_v, "K": d_k, "Q": d_k}
    for name, x in xs.items():
        ax.text(x, 0.35, name, ha="center", va="center", fontsize=FONTSIZE + 3, fontweight="bold")
        arrow(ax, (x, 0.65), (x, 1.8 - bh / 2))
        lo, hi = _heads(ax, x, 1.8, 1.9, bh, f"Linear\n{d} → {dims[name]}", COLORS["linear"], h)
        arrow(ax, (x, hi), (x, 3.7 - 0.4))
    lo, hi = _heads(ax, 4.0, 3.7, 6.2, 0.8, "Scaled Dot-Product Attention", COLORS["attention"], h)
    ax.text(7.55, 4.0, f"h = {h}\nheads", ha="left", va="center", fontsize=FONTSIZE + 2, fontweight="bold")
    ax.text(2.8, 2.75, f"per head:\nd_k = {d_k}, d_v = {d_v}", ha="center", va="center", fontsize=FONTSIZE - 1)
    arrow(ax, (4.0, hi), (4.0, 5.3 - bh / 2))
    lo, hi = box(ax, 4.0, 5.3, 3.4, bh, f"Concat\nh · d_v = {h} · {d_v} = {h * d_v}", COLORS["norm"])
    arrow(ax, (4.0, hi), (4.0, 6.6 - bh / 2))
    lo, hi = box(ax, 4.0, 6.6, 3.4, bh, f"Linear ($W^O$)\n{h * d_v} → d_model = {d}", COLORS["linear"])
    arrow(ax, (4.0, hi), (4.0, hi + 0.5))
    ax.text(4.0, hi + 0.85, r"$\mathrm{MultiHead}(Q, K, V)$", ha="center", va="center", fontsize=FONTSIZE + 3)
    ax.set_title(f"Multi-Head Attention (h = {h})", fontsize=FONTSIZE + 2)
    finish_axes(ax, (0.2, 8.9), (-0.7, 8.5))
    return fig
