"""Plots for the course and for runs: attention heatmaps, masks, positional encodings, curves.

Every function draws with matplotlib and returns the `Figure` (when given `ax=`, it draws
into that axes and returns its figure), so notebooks can show it, scripts can
`fig.savefig(...)`, and tests can close it. Nothing here picks a backend: notebooks use
the inline one, headless runs set `MPLBACKEND=Agg` (or `matplotlib.use("Agg")`).
Arrays may be NumPy arrays, tensors or nested lists.

    fig = tfm.viz.plot_attention_heads(weights[0], query_labels=tgt, key_labels=src)
    fig.savefig("cross_attention.png")
"""

import math

import numpy as np

__all__ = [
    "figure_axes",
    "plot_attention",
    "plot_attention_heads",
    "plot_beam_attention",
    "plot_curves",
    "plot_history",
    "plot_learning_rate",
    "plot_mask",
    "plot_positional_encoding",
]


def _numpy(x):
    """A NumPy array from a tensor, array or list."""
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x)


def figure_axes(ax=None, figsize=None):
    """Where a plot draws: `ax` and its figure, or a new figure with one axes (constrained layout).

    Every plot here, and those of other modules (`tfm.viz.plot_tree`), starts with it, so all
    take `ax=` alike.

        fig, ax = figure_axes(ax, figsize=(6, 4))

    Args:
        ax: matplotlib axes or None.
        figsize: inches `(width, height)` of a new figure; ignored when `ax` is given.

    Returns:
        `(fig, ax)`: the `matplotlib.figure.Figure` and the axes to draw into.

    Example:
        >>> fig, ax = figure_axes(figsize=(4, 3))
        >>> figure_axes(ax) == (fig, ax)   # given axes are drawn into
        True
    """
    if ax is not None:
        return ax.figure, ax
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def _label_axis(ax, labels, axis, rotate=False):
    if labels is None:
        return
    labels = [str(label) for label in labels]
    ticks = np.arange(len(labels))
    if axis == "x":
        ax.set_xticks(ticks, labels, rotation=90 if rotate else 0)
    else:
        ax.set_yticks(ticks, labels)


def _check_labels(labels, size, what):
    if labels is not None and len(labels) != size:
        raise ValueError(f"{what} has {len(labels)} labels for {size} positions")


def plot_attention(weights, query_labels=None, key_labels=None, ax=None, title=None, cmap="viridis",
                   vmin=0.0, vmax=None, colorbar=True, figsize=(5, 4)):
    """Heatmap of one attention matrix: rows are queries, columns are keys.

    Args:
        weights: float `(T, S)`, each row a distribution over the keys.
        query_labels: list of `T` labels (tokens) for the rows, or None.
        key_labels: list of `S` labels for the columns, or None.
        ax: matplotlib axes to draw into, or None for a new figure.
        title: str or None.
        cmap: matplotlib colormap name. Defaults to `"viridis"`.
        vmin, vmax: colour range. Defaults to `0` and the largest weight.
        colorbar: bool. Draw a colour bar.
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> weights = [[0.9, 0.1, 0.0], [0.2, 0.7, 0.1]]   # (T, S): 2 queries over 3 keys
        >>> fig = plot_attention(weights, query_labels=["a", "dog"], key_labels=["ein", "Hund", "[END]"])
        >>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
        ['ein', 'Hund', '[END]']
    """
    w = _numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"plot_attention takes one (T, S) matrix, got shape {w.shape}; "
                         "use plot_attention_heads for (N, T, S)")
    _check_labels(query_labels, w.shape[0], "query_labels")
    _check_labels(key_labels, w.shape[1], "key_labels")
    fig, ax = figure_axes(ax, figsize)
    image = ax.imshow(w, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    _label_axis(ax, key_labels, "x", rotate=True)
    _label_axis(ax, query_labels, "y")
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def plot_attention_heads(weights, query_labels=None, key_labels=None, ncols=4, title=None, head_titles=None,
                         cmap="viridis", shared_scale=False, panel_size=2.6):
    """One heatmap per head, in a grid.

    Args:
        weights: float `(N, T, S)`, the weights of one example (`weights[b]` of a `(B, N, T, S)` output).
        query_labels, key_labels: lists of `T` and `S` labels, or None.
        ncols: int. Panels per row.
        title: str or None. Title over the grid.
        head_titles: list of `N` str, or None for "head 0", "head 1", ...
        cmap: colormap name.
        shared_scale: bool. One colour range for every head (else each panel uses its own maximum).
        panel_size: float. Inches per panel.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> weights = np.full((3, 2, 4), 0.25)   # (N, T, S): 3 heads, uniform
        >>> fig = plot_attention_heads(weights, ncols=2, title="encoder layer 1")
        >>> [ax.get_title() for ax in fig.axes[:3]]
        ['head 0', 'head 1', 'head 2']
    """
    import matplotlib.pyplot as plt

    w = _numpy(weights)
    if w.ndim != 3:
        raise ValueError(f"plot_attention_heads takes (N, T, S) weights, got shape {w.shape}")
    n = w.shape[0]
    _check_labels(query_labels, w.shape[1], "query_labels")
    _check_labels(key_labels, w.shape[2], "key_labels")
    if head_titles is not None and len(head_titles) != n:
        raise ValueError(f"head_titles has {len(head_titles)} entries for {n} heads")
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size * ncols + 0.6, panel_size * nrows + 0.4),
                             layout="constrained", squeeze=False)
    vmax = float(w.max()) if shared_scale else None
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        plot_attention(w[i], ax=ax, cmap=cmap, vmax=vmax, colorbar=False,
                       title=head_titles[i] if head_titles is not None else f"head {i}")
        _label_axis(ax, key_labels, "x", rotate=True)
        _label_axis(ax, query_labels if i % ncols == 0 else None, "y")
        if i % ncols:
            ax.set_ylabel("")
            if query_labels is not None:
                ax.set_yticks([])
        if i < n - ncols:
            ax.set_xlabel("")
    if title:
        fig.suptitle(title)
    return fig


def plot_beam_attention(hypotheses, ncols=2, title=None, cmap="viridis", panel_size=3.4):
    """One cross-attention heatmap per hypothesis of a beam (rows: its output subwords, columns: the source's).

    Args:
        hypotheses: list of dicts with `attention` `(T, S)`, `target_tokens`, `source_tokens`,
            `translation` and `score`, best first: `Translator.beam_attention(sentence)`.
        ncols: int. Panels per row.
        title: str or None. Title over the grid.
        cmap: colormap name.
        panel_size: float. Inches per panel.

    Returns:
        `matplotlib.figure.Figure`: panel `i` titled "#i  score  translation".

    Example:
        >>> hypotheses = [{"attention": np.eye(2), "target_tokens": ["▁a", "[END]"],
        ...                "source_tokens": ["▁ein", "[END]"], "translation": "a", "score": -0.5}]
        >>> fig = plot_beam_attention(hypotheses)
        >>> fig.axes[0].get_title()
        '#1  -0.50  a'
    """
    import matplotlib.pyplot as plt

    if not hypotheses:
        raise ValueError("plot_beam_attention needs at least one hypothesis (an empty input has none)")
    n = len(hypotheses)
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size * ncols + 0.6, panel_size * nrows + 0.6),
                             layout="constrained", squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= n:
            ax.axis("off")
            continue
        h = hypotheses[i]
        text = h["translation"] if len(h["translation"]) <= 40 else h["translation"][:39] + "…"
        plot_attention(h["attention"], query_labels=h["target_tokens"], key_labels=h["source_tokens"], ax=ax,
                       cmap=cmap, colorbar=False, title=f"#{i + 1}  {h['score']:.2f}  {text}")
        ax.title.set_fontsize(8)
    if title:
        fig.suptitle(title)
    return fig


def plot_mask(mask, query_labels=None, key_labels=None, ax=None, title=None, figsize=(3.2, 3.2)):
    """Draws a boolean attention mask: filled cell = may attend (True), white = masked.

    Args:
        mask: bool `(T, S)` (a `(1, T, S)` or `(T, S)`-broadcastable mask should be
            squeezed or broadcast first).
        query_labels, key_labels: lists of `T` and `S` labels, or None.
        ax: matplotlib axes, or None for a new figure.
        title: str or None.
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> causal = np.tril(np.ones((3, 3), bool))   # query i may attend to keys 0..i
        >>> fig = plot_mask(causal, query_labels=list("abc"), key_labels=list("abc"), title="causal")
        >>> fig.axes[0].get_xlabel()
        'key (attended to)'
    """
    from matplotlib.colors import ListedColormap

    m = _numpy(mask).astype(bool)
    if m.ndim != 2:
        raise ValueError(f"plot_mask takes a (T, S) mask, got shape {m.shape}")
    _check_labels(query_labels, m.shape[0], "query_labels")
    _check_labels(key_labels, m.shape[1], "key_labels")
    fig, ax = figure_axes(ax, figsize)
    ax.imshow(m.astype(float), cmap=ListedColormap(["white", "tab:blue"]), vmin=0, vmax=1,
              interpolation="nearest")
    # Cell borders, so single masked cells stay visible.
    ax.set_xticks(np.arange(m.shape[1] + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(m.shape[0] + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="0.6", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    if key_labels is None:
        ax.set_xticks(np.arange(m.shape[1]))
    if query_labels is None:
        ax.set_yticks(np.arange(m.shape[0]))
    _label_axis(ax, key_labels, "x", rotate=True)
    _label_axis(ax, query_labels, "y")
    ax.set_xlabel("key (attended to)")
    ax.set_ylabel("query")
    if title:
        ax.set_title(title)
    return fig


def plot_positional_encoding(pe, ax=None, title="Positional encoding", cmap="RdBu", figsize=(8, 4)):
    """Heatmap of a positional-encoding table: positions down, model dimensions across.

    Args:
        pe: float `(L, D)`, e.g. `tfm.positional_encoding(L, D)` or a learned
            `PositionalEmbedding` table.
        ax: matplotlib axes, or None for a new figure.
        title: str or None.
        cmap: a diverging colormap (values lie in [-1, 1] for sinusoids).
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> from tfm.layers.positional_encoding import positional_encoding_numpy
        >>> fig = plot_positional_encoding(positional_encoding_numpy(50, 16))   # (L, D)
        >>> fig.axes[0].get_ylabel()
        'position p'
    """
    table = _numpy(pe)
    if table.ndim != 2:
        raise ValueError(f"plot_positional_encoding takes an (L, D) table, got shape {table.shape}")
    fig, ax = figure_axes(ax, figsize)
    limit = float(np.abs(table).max()) or 1.0
    image = ax.imshow(table, cmap=cmap, vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    ax.set_xlabel("dimension")
    ax.set_ylabel("position p")
    if title:
        ax.set_title(title)
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def plot_curves(curves, xlabel=None, ylabel=None, title=None, ax=None, logx=False, logy=False, marker=None,
                linestyles=None, legend=True, figsize=(6, 3.5)):
    """Line plot of several named curves (losses, learning rates, timings, ...).

    Args:
        curves: mapping `label -> y` (plotted against 0, 1, 2, ...) or
            `label -> (x, y)`. Labels are shown in the legend.
        xlabel, ylabel, title: str or None.
        ax: matplotlib axes, or None for a new figure.
        logx, logy: bool. Logarithmic axes (both for a log-log plot).
        marker: matplotlib marker for every curve (`"o"` for measured points), or None.
        linestyles: mapping `label -> linestyle`, or None.
        legend: bool. Draw a legend when there is more than one curve or a label.
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> fig = plot_curves({"train": [3.0, 2.1, 1.7], "validation": ([1, 2, 3], [2.9, 2.3, 2.0])}, ylabel="loss")
        >>> [line.get_label() for line in fig.axes[0].get_lines()]
        ['train', 'validation']
    """
    fig, ax = figure_axes(ax, figsize)
    for label, values in curves.items():
        if isinstance(values, tuple) and len(values) == 2:
            x, y = _numpy(values[0]), _numpy(values[1])
        else:
            y = _numpy(values)
            x = np.arange(len(y))
        if x.shape != y.shape:
            raise ValueError(f"curve {label!r}: x has shape {x.shape} but y has shape {y.shape}")
        style = (linestyles or {}).get(label, "-")
        ax.plot(x, y, linestyle=style, marker=marker, label=str(label))
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if legend and curves:
        ax.legend(fontsize="small")
    return fig


def plot_learning_rate(schedules, num_steps, ax=None, title="Learning rate (eq. 3)", logy=False, figsize=(6, 3.5)):
    """Plots learning-rate schedules against the paper's step number.

    Args:
        schedules: mapping `label -> schedule`, each a callable of Keras' 0-based
            optimizer iteration (a `keras.optimizers.schedules.LearningRateSchedule`
            such as `tfm.TransformerSchedule`). Iteration `i` is drawn at step `i + 1`.
        num_steps: int. Steps to draw.
        ax: matplotlib axes, or None for a new figure.
        title: str or None.
        logy: bool. Logarithmic learning-rate axis.
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> from tfm.training.schedules import TransformerSchedule
        >>> fig = plot_learning_rate({"d_model 512": TransformerSchedule(512, warmup_steps=4000)}, num_steps=20_000)
        >>> len(fig.axes[0].get_lines()[0].get_xdata())
        20000
    """
    if int(num_steps) <= 0:
        raise ValueError(f"num_steps={num_steps} must be positive")
    iterations = np.arange(int(num_steps))
    curves = {label: (iterations + 1, _numpy(schedule(iterations)).reshape(-1))
              for label, schedule in schedules.items()}
    return plot_curves(curves, xlabel="training step", ylabel="learning rate", title=title, ax=ax,
                       logy=logy, figsize=figsize)


def plot_history(histories, metric="loss", validation=True, ax=None, title=None, logy=False, figsize=(6, 3.5)):
    """Training curves from `model.fit`: one line per run (and dashed validation lines).

    Args:
        histories: a `keras.callbacks.History`, a `history.history` dict, or a
            mapping `label -> either of those` to compare runs.
        metric: str. The key to plot (`"loss"`, `"accuracy"`, ...).
        validation: bool. Also plot `"val_" + metric` when present.
        ax: matplotlib axes, or None for a new figure.
        title: str or None (defaults to the metric).
        logy: bool. Logarithmic y axis.
        figsize: size of a new figure.

    Returns:
        `matplotlib.figure.Figure`.

    Example:
        >>> history = {"loss": [3.1, 2.2, 1.9], "val_loss": [2.8, 2.3, 2.1]}   # `model.fit(...).history`
        >>> fig = plot_history({"base": history})
        >>> [line.get_label() for line in fig.axes[0].get_lines()]
        ['base loss', 'base val_loss']
    """
    def as_dict(h):
        return h.history if hasattr(h, "history") else h

    if hasattr(histories, "history") or metric in histories:
        histories = {"": histories}
    curves, styles = {}, {}
    for label, history in histories.items():
        history = as_dict(history)
        if metric not in history:
            raise ValueError(f"run {label!r} has no {metric!r}; it has {sorted(history)}")
        name = f"{label} {metric}".strip()
        y = np.asarray(history[metric], dtype=float)
        curves[name] = (np.arange(1, len(y) + 1), y)
        if validation and f"val_{metric}" in history:
            y = np.asarray(history[f"val_{metric}"], dtype=float)
            curves[f"{label} val_{metric}".strip()] = (np.arange(1, len(y) + 1), y)
            styles[f"{label} val_{metric}".strip()] = "--"
    return plot_curves(curves, xlabel="epoch", ylabel=metric, title=title or metric, ax=ax, logy=logy,
                       linestyles=styles, figsize=figsize)
