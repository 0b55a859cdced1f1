"""`TransformerConfig`: every size and training constant of the model in one frozen dataclass.

Presets `base()` and `big()` are the paper's §5 settings (Vaswani et al., 2017,
Table 3 rows "base" and "big"); `tiny()` and `small()` train on 2 CPU cores.
Table 3 variants are `dataclasses.replace(TransformerConfig.base(), num_heads=1, key_dim=512, ...)`.
"""

import dataclasses
import json


class ConfigIO:
    """Presets by name and dict/JSON round trips, shared by the config dataclasses.

    A subclass lists its preset classmethods in `PRESETS`.
    """

    PRESETS = ()

    @classmethod
    def preset(cls, name, **overrides):
        """A preset by name, e.g. `TransformerConfig.preset("base")`."""
        if name not in cls.PRESETS:
            raise ValueError(f"preset={name!r}: expected one of {sorted(cls.PRESETS)}")
        return getattr(cls, name)(**overrides)

    def to_dict(self):
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values):
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown {cls.__name__} fields {unknown}; known: {sorted(known)}")
        return cls(**values)

    def to_json(self, path=None):
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True)
        if path is not None:
            with open(path, "w") as f:
                f.write(text + "\n")
        return text

    @classmethod
    def from_json(cls, path):
        with open(path) as f:
            return cls.from_dict(json.load(f))


@dataclasses.dataclass(frozen=True)
class TransformerConfig(ConfigIO):
    num_layers: int = 6  # N: identical layers in the encoder and in the decoder
    d_model: int = 512  # width of every sub-layer output and of the embeddings
    num_heads: int = 8  # h: parallel attention heads
    d_ff: int = 2048  # inner width of the position-wise feed-forward network
    key_dim: int | None = None  # d_k per head; None = d_model / num_heads
    value_dim: int | None = None  # d_v per head; None = d_model / num_heads
    dropout: float = 0.1  # P_drop on sub-layer outputs and embedding sums (§5.4)
    attention_dropout: float = 0.0  # dropout on attention weights (not in the paper)
    label_smoothing: float = 0.1  # eps_ls (§5.4)
    vocab_size: int = 37000  # shared source/target subword vocabulary (§5.1, BPE ~37000)
    share_embeddings: bool = True  # one matrix for both embeddings and the pre-softmax projection (§3.4)
    norm_first: bool = False  # pre-LN instead of the paper's post-LN LayerNorm(x + Sublayer(x))
    positional: str = "sinusoidal"  # "sinusoidal" (§3.5) or "learned" (Table 3 row E)
    max_length: int = 256  # longest sequence the model accepts (learned positions' table size)
    warmup_steps: int = 4000  # eq. 3
    learning_rate_scale: float = 1.0  # multiplies eq. 3 (1.0 = the paper)
    adam_beta_1: float = 0.9  # §5.3
    adam_beta_2: float = 0.98  # §5.3
    adam_epsilon: float = 1e-9  # §5.3
    layer_norm_epsilon: float = 1e-6  # LayerNorm epsilon (tensor2tensor's value)
    tokens_per_batch: int = 25000  # source (and target) tokens per batch (§5.1)
    beam_size: int = 4  # §6.1
    length_penalty: float = 0.6  # alpha (§6.1)
    max_extra_length: int = 50  # decode up to input length + 50 (§6.1)
    checkpoints_to_average: int = 5  # last 5 (base) or 20 (big) checkpoints (§6.1)

    PRESETS = ("tiny", "small", "base", "big")

    def __post_init__(self):
        positive = ("num_layers", "d_model", "num_heads", "d_ff", "vocab_size", "max_length",
                    "warmup_steps", "tokens_per_batch", "beam_size", "checkpoints_to_average")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name}={value!r} must be a positive int")
        for name in ("key_dim", "value_dim"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value <= 0):
                raise ValueError(f"{name}={value!r} must be a positive int or None")
        if (self.key_dim is None or self.value_dim is None) and self.d_model % self.num_heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}; "
                "choose sizes that divide or set key_dim and value_dim explicitly"
            )
        for name in ("dropout", "attention_dropout", "label_smoothing"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{name}={value} must be in [0, 1)")
        if self.positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional={self.positional!r}: expected 'sinusoidal' or 'learned'")
        if not (0.0 <= self.adam_beta_1 < 1.0 and 0.0 <= self.adam_beta_2 < 1.0):
            raise ValueError(f"adam betas ({self.adam_beta_1}, {self.adam_beta_2}) must be in [0, 1)")
        if self.adam_epsilon <= 0:
            raise ValueError(f"adam_epsilon={self.adam_epsilon} must be positive")
        if self.vocab_size < 5:
            raise ValueError(f"vocab_size={self.vocab_size} leaves no room beyond the 4 reserved ids")

    @property
    def head_key_dim(self):
        """d_k actually used."""
        return self.key_dim or self.d_model // self.num_heads

    @property
    def head_value_dim(self):
        """d_v actually used."""
        return self.value_dim or self.d_model // self.num_heads

    # Presets ------------------------------------------------------------
    @classmethod
    def base(cls, **overrides):
        """Transformer (base model), §5 and Table 3 row "base": 65M parameters."""
        return cls(**overrides)

    @classmethod
    def big(cls, **overrides):
        """Transformer (big), Table 3 row "big": 213M parameters."""
        values = dict(d_model=1024, d_ff=4096, num_heads=16, dropout=0.3, checkpoints_to_average=20)
        values.update(overrides)
        return cls(**values)

    @classmethod
    def small(cls, **overrides):
        """A 3+3-layer, 256-wide model that trains on Multi30k on a CPU."""
        values = dict(num_layers=3, d_model=256, num_heads=4, d_ff=1024, vocab_size=8000,
                      max_length=128, warmup_steps=2000, tokens_per_batch=4096)
        values.update(overrides)
        return cls(**values)

    @classmethod
    def tiny(cls, **overrides):
        """A 2+2-layer, 64-wide model for tests, notebooks in fast mode and `make demo`."""
        values = dict(num_layers=2, d_model=64, num_heads=4, d_ff=256, vocab_size=1000,
                      max_length=64, warmup_steps=400, tokens_per_batch=2048, dropout=0.1)
        values.update(overrides)
        return cls(**values)
