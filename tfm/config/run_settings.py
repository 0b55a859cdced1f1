"""A recipe's parts besides its model: `DataConfig` (which corpus, how it is prepared), `TrainingConfig` (§5: how a
run trains) and `DecodingConfig` (§6.1: how it translates). A `tfm.config.Recipe` holds them with the model's config;
a run's config.json stores them as its `data`, `training` and `decoding` sections. No TensorFlow here.
"""

import dataclasses

from tfm.config.rules import ConfigIO
from tfm.config.validation import (
    INT32_MAX,
    PREPROCESSORS,
    validate_field_types,
    validate_fraction,
    validate_length_penalty,
    validate_positive_int,
    validate_positive_ints,
    validate_positive_number,
    validate_rdrop_alpha,
    validate_seed,
)


@dataclasses.dataclass(frozen=True)
class DataConfig(ConfigIO):
    """Which corpus a run trains on and how its text is prepared (a run's config.json `data`).

    Args:
        dataset: a name of `tfm.data.load_dataset` ("numbers", "multi30k", "files", ...).
        source_lang, target_lang: the direction; None = the corpus' default.
        data_dir: download and cache folder; None = `$TFM_DATA_DIR`, else `data/cache`.
        source_file, target_file: the two files of dataset "files".
        preprocess: None or "moses_lc" (`tfm.data.preprocess`).
        subwords: int. Subwords to learn (capped at what the text allows; the model's `vocab_size` is then the
            tokenizer's).
        max_pair_length: int. Pairs with more subwords on either side (START / END counted) are dropped.
        train_sentences: int or None. Train on the first N pairs only (learning curves).

    Example:
        >>> data = DataConfig(dataset="multi30k", source_lang="en", target_lang="de", subwords=8000)
        >>> DataConfig.from_dict(data.to_dict()) == data
        True
        >>> DataConfig(max_pair_length=1)
        Traceback (most recent call last):
        ...
        ValueError: max_pair_length=1: need at least 2 (one subword + START/END); use --max-length 2 or more
    """

    dataset: str = "numbers"  # a name of tfm.data.load_dataset
    source_lang: str | None = None  # e.g. "en"; None = the corpus' default direction
    target_lang: str | None = None  # e.g. "de"
    data_dir: str | None = None  # download/cache folder (absolute), None = $TFM_DATA_DIR or data/cache
    source_file: str | None = None  # dataset "files": source side (absolute path)
    target_file: str | None = None  # dataset "files": target side (absolute path)
    preprocess: str | None = None  # "moses_lc": lowercase + Moses-tokenize both sides first (tfm.data.preprocess)
    subwords: int = 1000  # subwords to learn (§5.1: ~37000 for WMT EN-DE; capped at what the text allows)
    max_pair_length: int = 64  # pairs longer than this many subwords (either side) are dropped
    train_sentences: int | None = None  # the first N training pairs only (learning curves); None = all

    def __post_init__(self):
        validate_field_types(self)
        if self.preprocess is not None and self.preprocess not in PREPROCESSORS:
            raise ValueError(f"preprocess={self.preprocess!r}: expected None or one of {list(PREPROCESSORS)}")
        validate_positive_ints(self, ("max_pair_length", "subwords"))
        if self.subwords < 5:
            raise ValueError(f"subwords={self.subwords} leaves no room beyond the 4 reserved ids")
        if self.train_sentences is not None and self.train_sentences < 1:
            raise ValueError(f"train_sentences={self.train_sentences!r}: expected a positive number of training "
                             "pairs, or None for all of them")
        if self.max_pair_length < 2:
            raise ValueError(f"max_pair_length={self.max_pair_length}: need at least 2 (one subword + START/END); "
                             "use --max-length 2 or more")
        if self.dataset == "files" and not (self.source_file and self.target_file):
            raise ValueError("dataset='files' needs source_file and target_file (--source-file, --target-file)")
        if self.dataset != "files" and (self.source_file or self.target_file):
            given = [flag for flag, path in (("--source-file", self.source_file), ("--target-file", self.target_file))
                     if path]
            raise ValueError(f"{'/'.join(given)} {'is' if len(given) == 1 else 'are'} read only with --dataset files "
                             f"(dataset='files'), but the dataset is {self.dataset!r}, which brings its own data: "
                             f"drop {'/'.join(given)}, or train on the files with --dataset files")


@dataclasses.dataclass(frozen=True)
class TrainingConfig(ConfigIO):
    """How a run trains (§5; a run's config.json `training`). The defaults are the paper's base recipe.

    Args:
        seed: int. Weights, dropout and shuffling; a resumed run derives its streams from it and its epoch.
        warmup_steps, learning_rate_scale: eq. 3's warm-up and a factor on its rate (§5.3).
        learning_rate: None (eq. 3's schedule) or a constant rate (the RNN baselines' Adam at 1e-3).
        adam_beta_1, adam_beta_2, adam_epsilon: Adam (§5.3).
        clipnorm: None or the gradients' largest global norm (the RNN baselines clip at 1).
        label_smoothing: eps_ls (§5.4). rdrop_alpha: R-Drop's KL weight (0 = off; not in the paper).
        tokens_per_batch: int. Token budget per side of a batch, padding included (§5.1).
        keep_checkpoints: int or None. Epoch checkpoints kept (for averaging, §6.1); None = as many as the
            recipe averages (`DecodingConfig.checkpoints_to_average`), set when `train` starts.
        mixed_precision: bool. mixed_bfloat16 on CPU, mixed_float16 on GPU. xla: bool. Compile the train step.
        steps_per_epoch: int or None. Batches per epoch; None = one pass over the training split.
        validation: bool. Evaluate on the validation split after each epoch (not for "files", which has none).

    Example:
        >>> TrainingConfig(seed=1, steps_per_epoch=100).to_dict()["steps_per_epoch"]
        100
        >>> TrainingConfig().warmup_steps, TrainingConfig().tokens_per_batch   # §5.1, §5.3
        (4000, 25000)
        >>> TrainingConfig(keep_checkpoints=0)
        Traceback (most recent call last):
        ...
        ValueError: keep_checkpoints=0: keep at least 1 checkpoint
    """

    seed: int = 0  # weights, dropout, shuffling; a resumed run derives its streams from it and its epoch
    warmup_steps: int = 4000  # eq. 3
    learning_rate_scale: float = 1.0  # multiplies eq. 3 (1.0 = the paper)
    learning_rate: float | None = None  # None = eq. 3's schedule; a number = Adam at that constant rate
    adam_beta_1: float = 0.9  # §5.3
    adam_beta_2: float = 0.98  # §5.3
    adam_epsilon: float = 1e-9  # §5.3
    clipnorm: float | None = None  # gradient clipping by global norm (the RNN baselines need it); None = none
    label_smoothing: float = 0.1  # eps_ls (§5.4)
    rdrop_alpha: float = 0.0  # R-Drop's KL weight (Liang et al., 2021; not in the paper): 0 = off
    tokens_per_batch: int = 25000  # source (and target) tokens per batch (§5.1)
    keep_checkpoints: int | None = None  # epoch checkpoints kept; None = as many as the recipe averages (§6.1)
    mixed_precision: bool = False  # mixed_bfloat16 on CPU, mixed_float16 on GPU
    xla: bool = False  # jit_compile the train step
    steps_per_epoch: int | None = None  # None = one pass over the training split
    validation: bool = True  # evaluate on the validation split after each epoch

    def __post_init__(self):
        validate_field_types(self)
        if self.keep_checkpoints is not None and self.keep_checkpoints < 1:
            raise ValueError(f"keep_checkpoints={self.keep_checkpoints!r}: keep at least 1 checkpoint")
        if self.steps_per_epoch is not None and self.steps_per_epoch < 1:
            raise ValueError(f"steps_per_epoch={self.steps_per_epoch!r}: expected a positive number or None")
        for name in ("keep_checkpoints", "steps_per_epoch", "warmup_steps", "tokens_per_batch"):
            if getattr(self, name) is not None:
                validate_positive_int(name, getattr(self, name))
        validate_seed(self.seed)
        for name in ("label_smoothing", "adam_beta_1", "adam_beta_2"):
            validate_fraction(name, getattr(self, name))
        validate_rdrop_alpha(self.rdrop_alpha)
        validate_positive_number("learning_rate_scale", self.learning_rate_scale,
                                 hint="(it multiplies eq. 3's rate; 1.0 = the paper; a rate <= 0 does not descend)")
        validate_positive_number("adam_epsilon", self.adam_epsilon)
        if self.learning_rate is not None:
            validate_positive_number("learning_rate", self.learning_rate, hint="(or None: eq. 3's schedule)")
        if self.clipnorm is not None:
            validate_positive_number("clipnorm", self.clipnorm, hint="(or None: no clipping)")


@dataclasses.dataclass(frozen=True)
class DecodingConfig(ConfigIO):
    """How a run translates (§6.1; a run's config.json `decoding`). The defaults are the paper's.

    Args:
        beam_size: int. Hypotheses kept per sentence (1 = greedy).
        length_penalty: float. GNMT's α in `((5 + |Y|) / 6)^α`, in [0, 10].
        max_extra_length: int >= 0 or None. Outputs stop at input length + this; None = the model's room (a
            Transformer's `extra_positions`, else `DEFAULT_MAX_EXTRA_LENGTH`, 50: §6.1), which a `Recipe` writes in.
        checkpoints_to_average: int. The last N epoch checkpoints `tfm average` averages (base 5, big 20).

    Example:
        >>> DecodingConfig().beam_size, DecodingConfig().length_penalty, DecodingConfig().max_extra_length
        (4, 0.6, None)
        >>> DecodingConfig(max_extra_length=-1)
        Traceback (most recent call last):
        ...
        ValueError: max_extra_length=-1 must be an int >= 0
    """

    beam_size: int = 4  # §6.1
    length_penalty: float = 0.6  # alpha (§6.1)
    max_extra_length: int | None = None  # decode up to input length + this; None = the model's room (§6.1: + 50)
    checkpoints_to_average: int = 5  # last 5 (base) or 20 (big) checkpoints (§6.1)

    def __post_init__(self):
        validate_field_types(self)
        validate_positive_ints(self, ("beam_size", "checkpoints_to_average"))
        if self.max_extra_length is not None and not 0 <= self.max_extra_length <= INT32_MAX:
            raise ValueError(f"max_extra_length={self.max_extra_length!r} must be an int >= 0")
        validate_length_penalty(self.length_penalty)
