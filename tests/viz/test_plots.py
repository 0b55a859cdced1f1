import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

import tfm
from tfm import viz


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_attention_heatmap_takes_tensors_and_labels(tmp_path):
    q = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    _, weights = tfm.scaled_dot_product_attention(q, q, q)  # (3, 3) tensor
    fig = viz.plot_attention(weights, query_labels=["a", "b", "c"], key_labels=["a", "b", "c"], title="w")
    assert isinstance(fig, matplotlib.figure.Figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    np.testing.assert_allclose(ax.images[0].get_array(), weights.numpy())
    fig.savefig(tmp_path / "w.png")
    assert (tmp_path / "w.png").stat().st_size > 0


def test_attention_heads_grid_has_one_panel_per_head_and_hides_the_rest():
    weights = np.random.default_rng(0).dirichlet(np.ones(5), size=(6, 4))  # (N=6, T=4, S=5)
    fig = viz.plot_attention_heads(weights, ncols=4, key_labels=list("vwxyz"), title="heads")
    visible = [ax for ax in fig.axes if ax.axison]
    assert len(visible) == 6 and len(fig.axes) == 8
    assert [ax.get_title() for ax in visible] == [f"head {i}" for i in range(6)]
    for head, ax in enumerate(visible):
        np.testing.assert_allclose(ax.images[0].get_array(), weights[head])


def test_shape_and_label_errors_name_the_bad_values():
    with pytest.raises(ValueError, match=r"\(T, S\) matrix, got shape \(2, 3, 4\)"):
        viz.plot_attention(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="key_labels has 2 labels for 3 positions"):
        viz.plot_attention(np.zeros((2, 3)), key_labels=["a", "b"])
    with pytest.raises(ValueError, match="curve 'a'"):
        viz.plot_curves({"a": (np.arange(3), np.arange(4))})
    with pytest.raises(ValueError, match="no 'accuracy'"):
        viz.plot_history({"loss": [1.0, 0.5]}, metric="accuracy")


def test_mask_drawing_shows_true_as_filled_cells():
    mask = tfm.layers.masks.causal_mask(4)  # (T, S) bool
    fig = viz.plot_mask(mask, title="look-ahead")
    image = fig.axes[0].images[0].get_array()
    np.testing.assert_array_equal(image, np.tril(np.ones((4, 4))))


def test_given_axes_are_drawn_into():
    fig, axes = plt.subplots(1, 2)
    assert viz.plot_positional_encoding(tfm.positional_encoding(10, 8), ax=axes[0]) is fig
    assert viz.plot_mask(np.eye(3, dtype=bool), ax=axes[1]) is fig


def test_learning_rate_plot_uses_the_papers_step_numbers():
    schedule = tfm.TransformerSchedule(512, warmup_steps=10)
    fig = viz.plot_learning_rate({"base": schedule}, num_steps=30)
    x, y = fig.axes[0].lines[0].get_data()
    assert x[0] == 1 and len(x) == 30
    # Peak at step == warmup: d_model^-0.5 * warmup^-0.5.
    assert int(x[np.argmax(y)]) == 10
    np.testing.assert_allclose(y.max(), 512**-0.5 * 10**-0.5, rtol=1e-6)


def test_history_plot_draws_validation_dashed():
    history = {"loss": [3.0, 2.0, 1.5], "val_loss": [3.1, 2.2, 1.9]}
    fig = viz.plot_history({"post-LN": history, "pre-LN": {"loss": [3.0, 1.0]}}, logy=True)
    lines = fig.axes[0].lines
    assert [line.get_label() for line in lines] == ["post-LN loss", "post-LN val_loss", "pre-LN loss"]
    assert lines[1].get_linestyle() == "--"
    assert fig.axes[0].get_yscale() == "log"


def test_beam_attention_has_one_panel_per_hypothesis():
    rng = np.random.default_rng(0)
    hypotheses = [{"translation": f"hyp {i}", "score": -0.25 - 0.5 * i, "source_tokens": ["a", "b", "c"],
                   "target_tokens": ["x"] * (i + 1), "attention": rng.dirichlet(np.ones(3), size=i + 1)}
                  for i in range(3)]
    fig = viz.plot_beam_attention(hypotheses, ncols=2)
    drawn = [ax for ax in fig.axes if ax.images]
    assert len(drawn) == 3 and len(fig.axes) == 4  # the fourth panel is hidden
    assert drawn[0].get_title().startswith("#1  -0.25  hyp 0") and drawn[2].get_title().startswith("#3  -1.25")
    assert drawn[2].images[0].get_array().shape == (3, 3)
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one hypothesis"):
        viz.plot_beam_attention([])


def test_figure_axes_draws_into_a_given_axes_or_a_new_figure():
    fig, ax = viz.figure_axes(None, figsize=(3, 2))
    assert fig.axes == [ax] and tuple(fig.get_size_inches()) == (3, 2)
    other, (left, right) = plt.subplots(1, 2)
    assert viz.figure_axes(right, figsize=(9, 9)) == (other, right)  # figsize is for new figures only
    assert viz.plot_learning_rate({"base": tfm.TransformerSchedule(64, warmup_steps=10)}, 20, ax=left) is other
