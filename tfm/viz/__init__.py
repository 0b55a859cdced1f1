"""Pictures: plots (attention, positional encoding, masks, schedules, curves), the architecture figures drawn
from a config, and parse trees.

    plots.py            `plot_attention`, `plot_attention_heads`, `plot_beam_attention`, `plot_mask`,
                        `plot_positional_encoding`, `plot_learning_rate`, `plot_curves`, `plot_history`
    drawing.py          the figures' shared vocabulary: boxes, arrows, colours
    diagrams.py         `draw_transformer(config)` (Figure 1), `draw_attention(config)` (Figure 2)
    seq2seq_diagram.py  `draw_seq2seq`: the RNN encoder-decoder with attention
    tree_plots.py       `plot_tree` (wrong constituents in red), `plot_learning_curve` (F1 against sentences)

Names are imported on first use (PEP 562): `import tfm.viz` starts neither matplotlib nor TensorFlow.

Example:
    >>> import tfm
    >>> fig = tfm.viz.draw_transformer(tfm.TransformerConfig.tiny())
    >>> type(fig).__name__
    'Figure'
"""

from tfm._lazy import lazy_attributes as _lazy_attributes

_EXPORTS = {
    **dict.fromkeys(("figure_axes", "plot_attention", "plot_attention_heads", "plot_beam_attention", "plot_curves",
                     "plot_history", "plot_learning_rate", "plot_mask", "plot_positional_encoding"),
                    "tfm.viz.plots"),
    **dict.fromkeys(("draw_attention", "draw_transformer"), "tfm.viz.diagrams"),
    **dict.fromkeys(("draw_seq2seq",), "tfm.viz.seq2seq_diagram"),
    **dict.fromkeys(("plot_learning_curve", "plot_tree", "tree_layout"), "tfm.viz.tree_plots"),
}
_SUBMODULES = ("diagrams", "drawing", "plots", "seq2seq_diagram", "tree_plots")

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = _lazy_attributes(__name__, _EXPORTS, _SUBMODULES)
