import dataclasses

import pytest

import tfm
from tfm.config import MODELS, ON_TRAINED_MODEL, Recipe, TransformerConfig, config_class


def test_base_and_big_are_the_paper():
    base = Recipe.preset("base")
    b, t, d = base.model, base.training, base.decoding
    assert (b.num_layers, b.d_model, b.d_ff, b.num_heads, b.head_key_dim, b.head_value_dim) == (6, 512, 2048, 8, 64, 64)
    assert (b.dropout, t.label_smoothing, t.warmup_steps, d.beam_size, d.length_penalty) == (0.1, 0.1, 4000, 4, 0.6)
    assert ((t.adam_beta_1, t.adam_beta_2, t.adam_epsilon, b.norm_first, b.share_embeddings)
            == (0.9, 0.98, 1e-9, False, True))
    big = Recipe.preset("big")
    g = big.model
    assert (g.d_model, g.d_ff, g.num_heads, g.dropout, big.decoding.checkpoints_to_average) == (1024, 4096, 16, 0.3, 20)


def test_invalid_configs_name_the_bad_values():
    with pytest.raises(ValueError, match="d_model=100 is not divisible by num_heads=3"):
        TransformerConfig(d_model=100, num_heads=3)
    with pytest.raises(ValueError, match="dropout=1.2"):
        TransformerConfig(dropout=1.2)
    with pytest.raises(ValueError, match="activation_dropout=-0.1"):
        TransformerConfig(activation_dropout=-0.1)
    with pytest.raises(ValueError, match="positional='rotary'"):
        TransformerConfig(positional="rotary")
    with pytest.raises(ValueError, match="num_layers=0"):
        TransformerConfig(num_layers=0)
    with pytest.raises(ValueError, match="preset='huge'"):
        TransformerConfig.preset("huge")
    with pytest.raises(ValueError, match="unknown TransformerConfig fields"):
        TransformerConfig.from_dict({"d_modle": 3})
    # Explicit key_dim/value_dim lift the divisibility rule (Table 3 row B).
    assert TransformerConfig(d_model=100, num_heads=3, key_dim=16, value_dim=16).head_key_dim == 16


def test_every_model_config_field_says_whether_a_trained_model_may_change_it():
    """Declared with the field (`fixed` or `free`), so a new field cannot be left out of the rule that
    `architecture()` (a checkpoint's check) follows; the free ones are the regularisers and the lengths."""
    undeclared = [f"{cls.__name__}.{f.name}" for cls in {config_class(name) for name in MODELS}
                  for f in dataclasses.fields(cls) if f.metadata.get(ON_TRAINED_MODEL) not in ("fixed", "free")]
    assert not undeclared, f"declare each with fixed(...) or free(...) (tfm.config.rules): {undeclared}"
    assert set(TransformerConfig.free_fields()) == {"dropout", "attention_dropout", "activation_dropout",
                                                    "token_dropout", "max_length", "extra_positions"}
    tiny = TransformerConfig.tiny()
    assert dataclasses.replace(tiny, dropout=0.3, max_length=32).architecture() == tiny.architecture()
    assert dataclasses.replace(tiny, norm_first=True).architecture() != tiny.architecture()


def test_json_round_trip(tmp_path):
    c = TransformerConfig.small(dropout=0.2)
    c.to_json(tmp_path / "config.json")
    assert TransformerConfig.from_json(tmp_path / "config.json") == c


def implied_parameter_count(c):
    """Parameters implied by the structure, worked out by hand (biases included)."""
    d, f, h = c.d_model, c.d_ff, c.num_heads
    dk, dv = c.head_key_dim, c.head_value_dim
    attn = 2 * (d * h * dk + h * dk) + (d * h * dv + h * dv) + (h * dv * d + d)
    ffn = d * f + f + f * d + d
    ln = 2 * d
    enc = attn + ffn + 2 * ln
    dec = 2 * attn + ffn + 3 * ln
    emb = c.vocab_size * d * (1 if c.share_embeddings else 2)
    out = 0 if c.share_embeddings else d * c.vocab_size + c.vocab_size
    pos = 0 if c.positional == "sinusoidal" else 2 * (c.max_length + c.extra_positions + 1) * d
    final_ln = 2 * ln if c.norm_first else 0
    return c.num_layers * (enc + dec) + emb + out + pos + final_ln


# Table 3 rows (params x 10^6 from the paper), vocab 37000 shared.
TABLE3 = {
    "base": ({}, 65),
    "A: h=1, dk=dv=512": (dict(num_heads=1, key_dim=512, value_dim=512), 65),
    "A: h=4, dk=dv=128": (dict(num_heads=4, key_dim=128, value_dim=128), 65),
    "A: h=16, dk=dv=32": (dict(num_heads=16, key_dim=32, value_dim=32), 65),
    "B: dk=16": (dict(key_dim=16), 58),
    "C: N=2": (dict(num_layers=2), 36),
    "C: N=4": (dict(num_layers=4), 50),
    "C: N=8": (dict(num_layers=8), 80),
    "C: d_model=256, dk=dv=32": (dict(d_model=256, key_dim=32, value_dim=32), 28),
    "C: d_model=1024, dk=dv=128": (dict(d_model=1024, key_dim=128, value_dim=128), 168),
    "C: d_ff=1024": (dict(d_ff=1024), 53),
    "C: d_ff=4096": (dict(d_ff=4096), 90),
    "big": (dict(d_model=1024, d_ff=4096, num_heads=16, dropout=0.3), 213),
}


@pytest.mark.parametrize("row", list(TABLE3))
def test_table3_parameter_counts(row):
    overrides, paper_millions = TABLE3[row]
    c = dataclasses.replace(TransformerConfig.base(vocab_size=37000), **overrides)
    model = tfm.Transformer.from_preset(c)
    count = model.count_params()
    assert count == implied_parameter_count(c)
    # Printed beside the paper's column: the paper's exact vocabulary is not published
    # (~37000 BPE), so a few million of difference is expected, never fudged.
    print(f"{row:28s} built {count / 1e6:7.2f}M   paper {paper_millions}M")
    assert abs(count / 1e6 - paper_millions) / paper_millions < 0.12
