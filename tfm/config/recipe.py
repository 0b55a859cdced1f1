"""A `Recipe`: the four parts of a run (model, data, training, decoding), the presets that name all four, `--set`
routed by a field's name, and a run's config.json (format 2; `upgrade_record` converts format 1).

    recipe = Recipe.preset("m30k_small")                       # model, data, training and decoding of the preset
    recipe = Recipe.preset("tiny", model="bahdanau")           # what `tfm train --preset tiny --model bahdanau` runs
    recipe = recipe.replace(num_layers=3, warmup_steps=800)     # each field to the part that has it
    recipe = apply_overrides(recipe, ["beam_size=5"])          # --set FIELD=VALUE
    recipe.model, recipe.data, recipe.training, recipe.decoding

    RUN/config.json  {"tfm_version", "format": 2, "model_name", "model", "data", "training", "decoding"}

No TensorFlow here.
"""

import dataclasses
import difflib

from tfm.config.configs import DEFAULT_MAX_EXTRA_LENGTH, Seq2SeqConfig, TransformerConfig
from tfm.config.rules import parse_overrides
from tfm.config.run_settings import DataConfig, DecodingConfig, TrainingConfig

MODELS = ("transformer", "seq2seq", "bahdanau", "luong")
RECORD_FORMAT = 2  # config.json's "format"; `upgrade_record` converts format 1
_ATTENTION = {"seq2seq": None, "bahdanau": "bahdanau", "luong": "luong"}
PARTS = ("model", "data", "training", "decoding")


def model_name(config):
    """"transformer", "seq2seq" (no attention), "bahdanau" or "luong", from the config's type.

    Args:
        config: a `TransformerConfig` or a `Seq2SeqConfig`.

    Example:
        >>> model_name(Seq2SeqConfig.tiny(attention=None))
        'seq2seq'
    """
    if isinstance(config, TransformerConfig):
        return "transformer"
    if isinstance(config, Seq2SeqConfig):
        return {None: "seq2seq", "bahdanau": "bahdanau", "luong": "luong"}[config.attention]
    raise TypeError(f"expected a TransformerConfig or a Seq2SeqConfig, got {type(config).__name__}")


def config_class(model="transformer"):
    """The model config class of a model name (`MODELS`).

    Example:
        >>> config_class("luong").__name__
        'Seq2SeqConfig'
    """
    if model not in MODELS:
        raise ValueError(f"model={model!r}: expected one of {list(MODELS)}")
    return TransformerConfig if model == "transformer" else Seq2SeqConfig


def output_room(config):
    """How far beyond its input length a model's output may run (§6.1: input length + 50): a Transformer's
    `extra_positions` (its position table's room beyond `max_length`), else `DEFAULT_MAX_EXTRA_LENGTH` (a model
    without a position table). A `Recipe`'s decoding limit is this unless set lower.

    Example:
        >>> output_room(TransformerConfig.parse()), output_room(Seq2SeqConfig.tiny())
        (300, 50)
    """
    return getattr(config, "extra_positions", DEFAULT_MAX_EXTRA_LENGTH)


# The parts of each Transformer preset besides the model's (the model part is `TransformerConfig.<name>()`, whose
# `extra_positions` is also the decoding's output limit: the parse presets' input length + 300).
_M30K_RATE = round(0.005 * (128 * 2000) ** 0.5, 4)  # Wu et al.'s peak rate 0.005 after 2000 steps, as eq. 3's factor
# The presets named for a corpus train on it: the m30k ones on Multi30k (its default direction, English -> German;
# no languages named, so `--dataset` can swap in a corpus without them), the parse ones on NLTK's Penn Treebank
# sample with each word's leaf written as its POS tag (why tags, not Vinyals et al.'s XX: notebook 13, section 2,
# and docs/results.md, "Parsing"). The others (tiny ... big) keep the generated numbers task, which needs no data.
_M30K_DATA = dict(dataset="multi30k")
_PARSE_DATASET = "ptb_parse_tags"
_PRESET_PARTS = {
    "tiny": (dict(subwords=1000, max_pair_length=64), dict(warmup_steps=400, tokens_per_batch=2048), {}),
    "small": (dict(subwords=8000, max_pair_length=128), dict(warmup_steps=2000, tokens_per_batch=4096), {}),
    "base": (dict(subwords=37000, max_pair_length=256), {}, {}),
    "big": (dict(subwords=37000, max_pair_length=256), {}, dict(checkpoints_to_average=20)),
    "parse": (dict(dataset=_PARSE_DATASET, subwords=16000, max_pair_length=256), {},
              dict(beam_size=21, length_penalty=0.3)),
    "parse_small": (dict(dataset=_PARSE_DATASET, subwords=2000, max_pair_length=256),
                    dict(tokens_per_batch=2048, warmup_steps=500), dict(beam_size=21, length_penalty=0.3)),
    "m30k": (dict(**_M30K_DATA, subwords=10000, max_pair_length=128, preprocess="moses_lc"),
             dict(warmup_steps=2000, learning_rate_scale=_M30K_RATE, tokens_per_batch=4096),
             dict(beam_size=5, length_penalty=1.0, checkpoints_to_average=10)),
    "m30k_small": (dict(**_M30K_DATA, subwords=8000, max_pair_length=128, preprocess="moses_lc"),
                   dict(warmup_steps=1000, tokens_per_batch=2048),
                   dict(checkpoints_to_average=10)),
}
# The RNN baselines train with Adam at a constant rate, clipped (Keras' Adam defaults otherwise); eq. 3's warm-up
# and factor do not apply and keep their defaults (so a format-1 run, which did not record them, reads the same).
_RNN_TRAINING = dict(learning_rate=1e-3, clipnorm=1.0, adam_beta_1=0.9, adam_beta_2=0.999, adam_epsilon=1e-7,
                     label_smoothing=0.1, rdrop_alpha=0.0, warmup_steps=TrainingConfig.warmup_steps,
                     learning_rate_scale=TrainingConfig.learning_rate_scale)
_PAPER_RNN = {"sutskever": "seq2seq", "bahdanau": "bahdanau", "luong": "luong"}  # Seq2SeqConfig preset -> model


@dataclasses.dataclass(frozen=True)
class Recipe:
    """A run's four parts: the model's architecture, the data, the training (§5) and the decoding (§6.1).

    A preset names all four (`Recipe.preset("base")`); each field lives in exactly one part, so
    `replace(**fields)` and `--set FIELD=VALUE` (`apply_overrides`) find the part by the field's name.
    Checked on creation beside each part's own rules: the Transformer takes pairs no longer than its
    `max_length`, and a batch holds the longest pair.

    The output limit (§6.1: input length + 50) is one setting: the decoding's `max_extra_length` is the model's
    room (`output_room`: a Transformer's `extra_positions`), written in where the decoding part leaves it None,
    and it follows a change of that room unless set apart; a limit beyond the room is refused by `replace`
    (`--set extra_positions=N` raises both).

    Args:
        model: `TransformerConfig` or `Seq2SeqConfig`.
        data: `DataConfig`. training: `TrainingConfig`. decoding: `DecodingConfig`.

    Example:
        >>> base = Recipe.preset("base")
        >>> base.model.d_model, base.data.subwords, base.training.warmup_steps, base.decoding.beam_size
        (512, 37000, 4000, 4)
        >>> big = Recipe.preset("big")
        >>> big.model.dropout, big.decoding.checkpoints_to_average, big.training.keep_checkpoints   # None: as many
        (0.3, 20, None)
        >>> Recipe.from_dict(base.to_dict()) == base
        True
        >>> Recipe.preset("tiny").replace(max_pair_length=128)
        Traceback (most recent call last):
        ...
        ValueError: max_pair_length=128 exceeds the model's max_length=64; raise both (--max-length sets both)
        >>> parse = Recipe.preset("parse").replace(extra_positions=400)   # the output limit follows the room
        >>> parse.model.extra_positions, parse.decoding.max_extra_length
        (400, 400)
    """

    model: TransformerConfig | Seq2SeqConfig
    data: DataConfig = DataConfig()
    training: TrainingConfig = TrainingConfig()
    decoding: DecodingConfig = DecodingConfig()

    PRESETS = (*TransformerConfig.PRESETS, *_PAPER_RNN)

    def __post_init__(self):
        model_name(self.model)  # a model config, or TypeError
        for part, cls in (("data", DataConfig), ("training", TrainingConfig), ("decoding", DecodingConfig)):
            if not isinstance(getattr(self, part), cls):
                raise TypeError(f"Recipe {part}={getattr(self, part)!r}: expected a {cls.__name__}")
        pairs = self.data.max_pair_length
        if isinstance(self.model, TransformerConfig) and pairs > self.model.max_length:
            raise ValueError(f"max_pair_length={pairs} exceeds the model's max_length={self.model.max_length}; "
                             "raise both (--max-length sets both)")
        if self.training.tokens_per_batch < pairs:
            raise ValueError(f"tokens_per_batch={self.training.tokens_per_batch} is smaller than max_pair_length="
                             f"{pairs}: the longest pairs would not fit in a batch")
        if self.decoding.max_extra_length is None:  # the output limit is the model's room (§6.1)
            object.__setattr__(self, "decoding", dataclasses.replace(self.decoding,
                                                                     max_extra_length=output_room(self.model)))

    @property
    def model_name(self):
        """"transformer", "seq2seq", "bahdanau" or "luong" (`model_name`)."""
        return model_name(self.model)

    @classmethod
    def preset(cls, name, model="transformer", **fields):
        """The recipe of a preset: what `tfm train --preset NAME --model MODEL` trains.

        The Transformer's parts are the preset's. An RNN baseline (`model` "seq2seq", "bahdanau" or "luong")
        takes the preset's data and decoding, its training at a constant rate of 1e-3 with gradients clipped
        at 1 (Adam's Keras defaults), and the model of the papers for base / big (Sutskever, Bahdanau,
        Luong), else `Seq2SeqConfig.tiny` with `model`'s attention, widened to 256 units unless `tiny`.
        `name` may also be "sutskever", "bahdanau" or "luong": `preset("base", model=...)` of that baseline.

        Args:
            name: str. One of `Recipe.PRESETS`.
            model: str. One of `MODELS`.
            **fields: any part's fields (`replace`).

        Example:
            >>> recipe = Recipe.preset("small", model="bahdanau", dropout=0.3)
            >>> type(recipe.model).__name__, recipe.model.units, recipe.model.dropout, recipe.data.subwords
            ('Seq2SeqConfig', 256, 0.3, 8000)
            >>> recipe.training.learning_rate, Recipe.preset("bahdanau").model.units
            (0.001, 1000)
        """
        if name in _PAPER_RNN:
            name, model = "base", _PAPER_RNN[name]
        if name not in TransformerConfig.PRESETS:
            raise ValueError(f"preset={name!r}: expected one of {sorted(cls.PRESETS)}")
        config_class(model)  # a known model name
        data, training, decoding = _PRESET_PARTS[name]
        transformer = TransformerConfig.preset(name)
        decoding = {**decoding, "max_extra_length": transformer.extra_positions}  # a baseline's limit too
        if model == "transformer":
            recipe = cls(transformer, DataConfig(**data), TrainingConfig(**training), DecodingConfig(**decoding))
        else:
            if name in ("base", "big"):
                paper = {"seq2seq": "sutskever", "bahdanau": "bahdanau", "luong": "luong"}[model]
                config = Seq2SeqConfig.preset(paper, vocab_size=transformer.vocab_size)
            else:
                sizes = {} if name == "tiny" else dict(embedding_dim=256, units=256)
                config = Seq2SeqConfig.tiny(attention=_ATTENTION[model], vocab_size=transformer.vocab_size, **sizes)
            recipe = cls(config, DataConfig(**data), TrainingConfig(**{**training, **_RNN_TRAINING}),
                         DecodingConfig(**decoding))
        return recipe.replace(**fields) if fields else recipe

    @classmethod
    def for_model(cls, config):
        """A recipe for a model config alone: the `tiny` recipe's other parts (CPU-sized), learning
        `config.vocab_size` subwords, pairs up to the model's `max_length` (the tiny recipe's 64 at most), outputs up
        to the model's room (`output_room`).

        Example:
            >>> recipe = Recipe.for_model(TransformerConfig.tiny(num_layers=1, vocab_size=60, extra_positions=8))
            >>> recipe.data.subwords, recipe.training.tokens_per_batch, recipe.model.num_layers
            (60, 2048, 1)
            >>> recipe.decoding.max_extra_length
            8
        """
        tiny = cls.preset("tiny", model=model_name(config))
        pairs = min(tiny.data.max_pair_length, getattr(config, "max_length", tiny.data.max_pair_length))
        data = dataclasses.replace(tiny.data, subwords=config.vocab_size, max_pair_length=pairs)
        return cls(config, data, tiny.training, dataclasses.replace(tiny.decoding, max_extra_length=None))

    def part_of(self, field):
        """The name of the part ("model", "data", "training" or "decoding") that holds `field`.

        Example:
            >>> Recipe.preset("tiny").part_of("warmup_steps")
            'training'
            >>> Recipe.preset("tiny").part_of("max_lenght")
            Traceback (most recent call last):
            ...
            ValueError: no part of the recipe has a field 'max_lenght' (did you mean max_length, max_pair_length, ...
        """
        for part in PARTS:
            if field in {f.name for f in dataclasses.fields(getattr(self, part))}:
                return part
        names = {part: [f.name for f in dataclasses.fields(getattr(self, part))] for part in PARTS}
        close = difflib.get_close_matches(field, [n for part in PARTS for n in names[part]], n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        listing = "; ".join(f"{part}: {', '.join(names[part])}" for part in PARTS)
        raise ValueError(f"no part of the recipe has a field {field!r}{hint}; {listing}")

    def replace(self, **fields):
        """A copy with `fields` changed, each in the part that holds it (then every part is checked again).

        Args:
            **fields: field name -> value, of any part (`model=`, `data=`, ... replace a whole part).

        The decoding's output limit follows a change of the model's room (`extra_positions`) when it was that room
        and is not given; a `max_extra_length` beyond the room is refused (outputs that long would be cut).

        Example:
            >>> recipe = Recipe.preset("tiny").replace(num_layers=1, warmup_steps=100, beam_size=1)
            >>> recipe.model.num_layers, recipe.training.warmup_steps, recipe.decoding.beam_size
            (1, 100, 1)
            >>> Recipe.preset("tiny").replace(max_extra_length=80)
            Traceback (most recent call last):
            ...
            ValueError: max_extra_length=80 exceeds the model's extra_positions=50, the room its position table ...
        """
        changes = {part: fields.pop(part) for part in PARTS if part in fields}
        limit_given = "decoding" in changes or "max_extra_length" in fields
        per_part = {}
        for name, value in fields.items():
            per_part.setdefault(self.part_of(name), {})[name] = value
        for part, values in per_part.items():
            changes[part] = dataclasses.replace(changes.get(part, getattr(self, part)), **values)
        model = changes.get("model", self.model)
        room = output_room(model)
        if not limit_given and self.decoding.max_extra_length == output_room(self.model) != room:
            changes["decoding"] = dataclasses.replace(changes.get("decoding", self.decoding), max_extra_length=None)
        limit = fields.get("max_extra_length")
        if isinstance(model, TransformerConfig) and limit is not None and limit > room:
            raise ValueError(f"max_extra_length={limit} exceeds the model's extra_positions={room}, the room its "
                             f"position table keeps beyond max_length (outputs would be cut there); set "
                             f"extra_positions={limit}, which the output limit follows")
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """`{"model_name", "model", "data", "training", "decoding"}`: the parts as plain dicts.

        Example:
            >>> sorted(Recipe.preset("tiny").to_dict())
            ['data', 'decoding', 'model', 'model_name', 'training']
        """
        return {"model_name": self.model_name, **{part: getattr(self, part).to_dict() for part in PARTS}}

    def summary(self, width=100):
        """The recipe in a few short lines, a part each (`key=value`, wrapped at `width`): what `tfm train` logs
        before training. The full record is the run's config.json (`to_dict`).

        Args:
            width: int. The longest line.

        Returns:
            str.

        Example:
            >>> text = Recipe.preset("tiny").summary()
            >>> print(text.splitlines()[0])
            transformer recipe:
            >>> max(len(line) for line in text.splitlines()) <= 100, [line.split()[0] for line in text.splitlines()
            ...                                                          if not line.startswith("    ")][1:]
            (True, ['model:', 'data:', 'training:', 'decoding:'])
        """
        import textwrap

        lines = [f"{self.model_name} recipe:"]
        for part in PARTS:
            items = " ".join(f"{key}={value}" for key, value in getattr(self, part).to_dict().items())
            lines += textwrap.wrap(items, width=width, initial_indent=f"  {part + ':':<10}",
                                   subsequent_indent=" " * 4, break_long_words=True, break_on_hyphens=False)
        return "\n".join(lines)

    @classmethod
    def from_dict(cls, values, ignore_unknown=False):
        """The recipe `to_dict` wrote; a part it lacks takes its defaults.

        Args:
            values: dict with "model_name" and "model", and optionally "data", "training", "decoding".
            ignore_unknown: bool. Drop fields no part has (files of other versions) instead of raising.

        Example:
            >>> Recipe.from_dict({"model_name": "luong", "model": {"attention": "luong"}}).model.resolved_score
            'general'
        """
        model = config_class(values.get("model_name", "transformer")).from_dict(values["model"], ignore_unknown)
        parts = {part: kind.from_dict(values.get(part) or {}, ignore_unknown)
                 for part, kind in (("data", DataConfig), ("training", TrainingConfig), ("decoding", DecodingConfig))}
        return cls(model, **parts)

    def to_record(self, version):
        """The dict a run's config.json holds: `{"tfm_version", "format": 2, **to_dict()}`.

        Example:
            >>> Recipe.preset("tiny").to_record("0.1.0")["format"]
            2
        """
        return {"tfm_version": version, "format": RECORD_FORMAT, **self.to_dict()}

    @classmethod
    def from_record(cls, record):
        """The recipe of a run's parsed config.json, of format 1 or 2 (`upgrade_record`).

        Example:
            >>> Recipe.from_record(Recipe.preset("tiny").to_record("0.1.0")) == Recipe.preset("tiny")
            True
        """
        return cls.from_dict(upgrade_record(record), ignore_unknown=True)


def apply_overrides(config, assignments):
    """`--set FIELD=VALUE` onto a config dataclass, or onto a `Recipe` (each field to the part that has it).

    Values are typed by the field (`parse_overrides`); the config (every part) validates the result.

    A recipe has one vocabulary setting, the subwords its tokenizer learns: `vocab_size=N` sets `subwords` (as
    `tfm train --vocab-size N` does), since training gives the model the tokenizer's size whatever the model part
    said. On a model config alone, `vocab_size` is the model's.

    Args:
        config: a config dataclass instance or a `Recipe`.
        assignments: iterable of "FIELD=VALUE" strings, or None.

    Example:
        >>> apply_overrides(TransformerConfig.base(), ["num_heads=16", "d_model=1024"]).head_key_dim
        64
        >>> recipe = apply_overrides(Recipe.preset("tiny"), ["dropout=0.2", "rdrop_alpha=5", "beam_size=1"])
        >>> recipe.model.dropout, recipe.training.rdrop_alpha, recipe.decoding.beam_size
        (0.2, 5.0, 1)
        >>> apply_overrides(Recipe.preset("tiny"), ["vocab_size=200"]).data.subwords
        200
    """
    if not isinstance(config, Recipe):
        return dataclasses.replace(config, **parse_overrides(type(config), assignments))
    fields = {}
    for item in assignments or ():
        name = item.split("=", 1)[0].strip() if "=" in item else None
        if name is None:
            raise ValueError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set dropout=0.2")
        if name == "vocab_size":  # the model's is the tokenizer's: what may be asked is the subwords it learns
            name, item = "subwords", "subwords=" + item.split("=", 1)[1]
        try:
            part = config.part_of(name)
        except ValueError as error:
            raise ValueError(f"--set {item!r}: {error}") from None
        fields.update(parse_overrides(type(getattr(config, part)), [item]))
    return config.replace(**fields)


# config.json of format 1 (tfm 0.1.0 before the split): one converting function --------------------------
_OLD_TRAINING = ("warmup_steps", "learning_rate_scale", "adam_beta_1", "adam_beta_2", "adam_epsilon",
                 "label_smoothing", "rdrop_alpha", "tokens_per_batch", "learning_rate", "clipnorm")
_OLD_DECODING = ("beam_size", "length_penalty", "max_extra_length", "checkpoints_to_average")


def upgrade_record(record):
    """A run's parsed config.json in format 2: returned as is, or converted from format 1.

    Format 1 (`{"tfm_version", "format": 1, "model", "model_config", "data", "training"}`) kept the
    optimiser, batches and decoding in `model_config`; they move to `training` and `decoding`, the data's
    `vocab_size` / `max_length` become `subwords` / `max_pair_length`, the Transformer's `max_extra_length`
    also becomes its `extra_positions` (the same position table), and an RNN baseline gets the Adam
    settings it trained with (Keras' defaults). Fields of other versions are dropped.

    Args:
        record: dict. A parsed config.json.

    Returns:
        dict: `{"tfm_version", "format": 2, "model_name", "model", "data", "training", "decoding"}`.

    Raises:
        ValueError: another format, in one line that says which tfm reads it.

    Example:
        >>> old = {"tfm_version": "0.1.0", "format": 1, "model": "transformer",
        ...        "model_config": {"d_model": 64, "warmup_steps": 400, "beam_size": 5, "max_extra_length": 50},
        ...        "data": {"dataset": "numbers", "max_length": 64, "vocab_size": 900, "tokens_per_batch": 2048},
        ...        "training": {"seed": 1, "strategy": "_DefaultDistributionStrategy"}}
        >>> new = upgrade_record(old)
        >>> new["format"], new["model"]["extra_positions"], new["data"]["subwords"], new["training"]["seed"]
        (2, 50, 900, 1)
        >>> new["training"]["warmup_steps"], new["training"]["tokens_per_batch"], new["decoding"]["beam_size"]
        (400, 2048, 5)
        >>> upgrade_record({"format": 7, "tfm_version": "9.0"})
        Traceback (most recent call last):
        ...
        ValueError: its config.json has format 7 (made by tfm 9.0), but this tfm reads formats 1 and 2; ...
    """
    fmt = record.get("format")
    if fmt == RECORD_FORMAT:
        return record
    if fmt != 1:
        raise ValueError(f"its config.json has format {fmt!r} (made by tfm {record.get('tfm_version', '?')}), but "
                         f"this tfm reads formats 1 and 2; use that tfm version or train into a new --output folder")
    name = record["model"]
    old_model, old_data = dict(record["model_config"]), dict(record["data"])
    model_fields = {f.name for f in dataclasses.fields(config_class(name))}
    model = {k: v for k, v in old_model.items() if k in model_fields}
    training = {k: v for k, v in (record.get("training") or {}).items() if k in _fields(TrainingConfig)}
    training.update({k: old_model[k] for k in _OLD_TRAINING if k in old_model})
    if name == "transformer":
        model["extra_positions"] = old_model.get("max_extra_length", TransformerConfig.extra_positions)
    else:  # Adam at a constant rate (Seq2SeqConfig's old defaults), Keras' betas and epsilon
        training = {**_RNN_TRAINING, **training}
    if "tokens_per_batch" in old_data:
        training["tokens_per_batch"] = old_data["tokens_per_batch"]
    data = {k: v for k, v in old_data.items() if k in _fields(DataConfig)}
    data.update({new: old_data[old] for old, new in (("vocab_size", "subwords"), ("max_length", "max_pair_length"))
                 if old in old_data})
    if "preprocess" not in data and old_model.get("preprocess") is not None:
        data["preprocess"] = old_model["preprocess"]
    if data.get("dataset", DataConfig.dataset) != "files":  # never read beside another dataset; dropped
        data.update(source_file=None, target_file=None)
    decoding = {k: old_model[k] for k in _OLD_DECODING if k in old_model}
    return {"tfm_version": record.get("tfm_version"), "format": RECORD_FORMAT, "model_name": name, "model": model,
            "data": data, "training": training, "decoding": decoding}


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}

