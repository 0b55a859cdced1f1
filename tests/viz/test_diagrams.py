"""The architecture diagrams say what the config says (labels and their order), and render under Agg."""

import io
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from tfm.config import TransformerConfig
from tfm.viz.diagrams import draw_attention, draw_transformer
from tfm.viz.seq2seq_diagram import draw_seq2seq


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def labels(fig):
    """Every text the figure shows: texts on its axes and their titles."""
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title() for ax in fig.axes]


def column(fig, name):
    """First lines of the boxes of one column ("encoder" or "decoder"), bottom to top."""
    texts = [t for t in fig.axes[0].texts if t.get_gid() == name]
    return [t.get_text().split("\n")[0] for t in sorted(texts, key=lambda t: t.get_position()[1])]


def test_transformer_labels_carry_the_configs_numbers():
    base = labels(draw_transformer(TransformerConfig.base()))
    assert base.count("6×") == 2  # one N× per stack
    text = "\n".join(base)
    for needle in ("d_model = 512", "d_ff = 2048", "h = 8, d_k = 64", "V = 37000"):
        assert needle in text

    two = labels(draw_transformer(TransformerConfig.base(num_layers=2)))
    assert two.count("2×") == 2 and "6×" not in two
    big = "\n".join(labels(draw_transformer(TransformerConfig.big())))
    assert "d_model = 1024" in big and "d_ff = 4096" in big and "h = 16, d_k = 64" in big


def test_post_ln_puts_add_and_norm_after_each_sublayer():
    fig = draw_transformer(TransformerConfig.base())
    assert column(fig, "encoder") == ["Input Embedding", "Multi-Head Attention", "Add & Norm", "Feed Forward",
                                      "Add & Norm"]
    assert column(fig, "decoder") == ["Output Embedding", "Masked Multi-Head Attention", "Add & Norm",
                                      "Multi-Head Attention", "Add & Norm", "Feed Forward", "Add & Norm",
                                      "Linear", "Softmax"]
    assert "Layer Norm" not in "\n".join(labels(fig))
    assert "post-LN" in fig.axes[0].get_title()


def test_pre_ln_puts_the_norm_before_each_sublayer_and_a_final_norm_on_each_stack():
    fig = draw_transformer(TransformerConfig.base(norm_first=True))
    block = lambda sublayer: ["Layer Norm", sublayer, "Add"]  # noqa: E731  (one line, read in the columns below)
    assert column(fig, "encoder") == ["Input Embedding", *block("Multi-Head Attention"), *block("Feed Forward"),
                                      "Layer Norm (final)"]
    assert column(fig, "decoder") == ["Output Embedding", *block("Masked Multi-Head Attention"),
                                      *block("Multi-Head Attention"), *block("Feed Forward"),
                                      "Layer Norm (final)", "Linear", "Softmax"]
    assert "Add & Norm" not in labels(fig)
    assert "pre-LN" in fig.axes[0].get_title()


def test_shared_embedding_note_iff_tied():
    shared = "\n".join(labels(draw_transformer(TransformerConfig.base())))
    assert "Shared weights" in shared and "37000 × 512" in shared
    untied = "\n".join(labels(draw_transformer(TransformerConfig.base(share_embeddings=False))))
    assert "Shared" not in untied and "shared" not in untied


def test_positional_label_follows_the_config():
    sinusoidal = "\n".join(labels(draw_transformer(TransformerConfig.base())))
    learned = "\n".join(labels(draw_transformer(TransformerConfig.base(positional="learned", max_length=128))))
    assert "sinusoidal" in sinusoidal and "learned" not in sinusoidal
    assert "learned" in learned and "128 × 512" in learned and "sinusoidal" not in learned


@pytest.mark.parametrize("config, heads, d_k, d_model", [
    (TransformerConfig.base(), 8, 64, 512),
    (TransformerConfig.big(), 16, 64, 1024),
    (TransformerConfig.base(num_heads=1, key_dim=512, value_dim=512), 1, 512, 512),  # Table 3 row (A)
])
def test_attention_figure_has_h_and_d_k_from_the_config(config, heads, d_k, d_model):
    fig = draw_attention(config)
    assert [ax.get_title() for ax in fig.axes] == ["Scaled Dot-Product Attention",
                                                   f"Multi-Head Attention (h = {heads})"]
    text = "\n".join(labels(fig))
    for needle in ("MatMul", "SoftMax", "Mask (opt.)", "Concat", "Scaled Dot-Product Attention",
                   f"1/√d_k = 1/√{d_k}", f"d_k = {d_k}", f"h = {heads}\nheads", f"{d_model} → {d_k}"):
        assert needle in text
    # Eq. 1 reads bottom to top: MatMul, Scale, Mask, SoftMax, MatMul.
    left = sorted(fig.axes[0].texts, key=lambda t: t.get_position()[1])
    order = [t.get_text().split(" ")[0] for t in left if t.get_text().split(" ")[0] in
             ("MatMul", "Scale", "Mask", "SoftMax")]
    assert order == ["MatMul", "Scale", "Mask", "SoftMax", "MatMul"]


def test_attention_overrides_and_defaults():
    text = "\n".join(labels(draw_attention(num_heads=4, key_dim=32)))
    assert "h = 4\nheads" in text and "d_k = 32" in text and "4 · 32 = 128" in text
    assert "h = 8\nheads" in "\n".join(labels(draw_attention()))


def test_seq2seq_labels_attention_only_when_it_has_it():
    with_attention = "\n".join(labels(draw_seq2seq()))
    for needle in (r"\alpha_{i1}", r"c_i = \sum_j \alpha_{ij} h_j", "a(s_{i-1}, h_j)", "softmax", "s_{i-1}",
                   r"\overleftarrow{h}", "y_i"):
        assert needle in with_attention
    plain = "\n".join(labels(draw_seq2seq(bidirectional=False, attention=None)))
    assert r"\alpha" not in plain and "c_i" not in plain and r"\overleftarrow" not in plain
    assert "$c = h_T$" in plain and "bottleneck" in plain
    with pytest.raises(ValueError, match="attention='luong'"):
        draw_seq2seq(attention="luong")


@pytest.mark.parametrize("draw", [
    lambda: draw_transformer(TransformerConfig.base()),
    lambda: draw_transformer(TransformerConfig.tiny(norm_first=True, share_embeddings=False)),
    lambda: draw_attention(TransformerConfig.base()),
    lambda: draw_seq2seq(),
    lambda: draw_seq2seq(bidirectional=True, attention=None),
])
def test_renders_under_agg(draw):
    fig = draw()
    fig.canvas.draw()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    assert buffer.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_draws_into_a_given_axes():
    fig, (a, b) = plt.subplots(1, 2)
    assert draw_transformer(TransformerConfig.tiny(), ax=a) is fig
    assert draw_seq2seq(ax=b) is fig
    assert "Add & Norm" in [t.get_text() for t in a.texts]


def test_imports_no_tensorflow():
    code = "import sys, tfm.viz.diagrams; assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
