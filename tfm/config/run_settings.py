"""A run's settings besides its model: `DataConfig` (which corpus, how it is batched) and `TrainingConfig` (how
it trains), saved as `data` and `training` in the run's config.json. Re-exported by `tfm.config` and
`tfm.config.configs`. No TensorFlow here.
"""

import dataclasses

from tfm.config.rules import (
    PREPROCESSORS,
    ConfigIO,
    validate_field_types,
    validate_fraction,
    validate_positive_int,
    validate_positive_ints,
    validate_rdrop_alpha,
    validate_seed,
)


@dataclasses.dataclass(frozen=True)
class DataConfig(ConfigIO):
    """Which corpus a run trains on and how it is batched (a run's config.json `data`).

    `train` fills the sizes from the model config unless given: `max_length` and
    `tokens_per_batch` (§5.1), `vocab_size` (the subword vocabulary to learn).

    Args:
        dataset: a name of `tfm.data.load_dataset` ("numbers", "multi30k", "files", ...).
        source_lang, target_lang: the direction; None = the corpus' default.
        data_dir: download and cache folder; None = `$TFM_DATA_DIR`, else `data/cache`.
        source_file, target_file: the two files of dataset "files".
        max_length: int. Pairs with more subwords on either side (START / END counted) are dropped.
        tokens_per_batch: int. Token budget per side of a batch (§5.1).
        vocab_size: int. Subwords to learn (capped at what the text allows).
        preprocess: None or "moses_lc" (`tfm.data.preprocess`).
        train_sentences: int or None. Train on the first N pairs only (learning curves).

    Example:
        >>> data = DataConfig(dataset="multi30k", source_lang="en", target_lang="de", vocab_size=8000)
        >>> DataConfig.from_dict(data.to_dict()) == data
        True
        >>> DataConfig(max_length=128, tokens_per_batch=64)
        Traceback (most recent call last):
        ...
        ValueError: tokens_per_batch=64 is smaller than max_length=128: the longest pairs would not fit in a batch
    """

    dataset: str = "numbers"  # a name of tfm.data.load_dataset
    source_lang: str | None = None  # e.g. "en"; None = the corpus' default direction
    target_lang: str | None = None  # e.g. "de"
    data_dir: str | None = None  # download/cache folder (absolute), None = $TFM_DATA_DIR or data/cache
    source_file: str | None = None  # dataset "files": source side (absolute path)
    target_file: str | None = None  # dataset "files": target side (absolute path)
    max_length: int = 64  # pairs longer than this many subwords (either side) are dropped
    tokens_per_batch: int = 2048  # token budget per side per batch (§5.1: ~25000 for base)
    vocab_size: int = 1000  # subwords to learn (capped at what the text allows)
    preprocess: str | None = None  # "moses_lc": lowercase + Moses-tokenize both sides first (tfm.data.preprocess)
    train_sentences: int | None = None  # the first N training pairs only (learning curves); None = all

    def __post_init__(self):
        validate_field_types(self)
        if self.preprocess is not None and self.preprocess not in PREPROCESSORS:
            raise ValueError(f"preprocess={self.preprocess!r}: expected None or one of {list(PREPROCESSORS)}")
        validate_positive_ints(self, ("max_length", "tokens_per_batch", "vocab_size"))
        if self.train_sentences is not None and self.train_sentences < 1:
            raise ValueError(f"train_sentences={self.train_sentences!r}: expected a positive number of training "
                             "pairs, or None for all of them")
        if self.max_length < 2:
            raise ValueError(f"max_length={self.max_length}: need at least 2 (one subword + START/END); "
                             "use --max-length 2 or more")
        if self.tokens_per_batch < self.max_length:
            raise ValueError(f"tokens_per_batch={self.tokens_per_batch} is smaller than max_length={self.max_length}: "
                             "the longest pairs would not fit in a batch")
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
    """How a run trains (a run's config.json `training`); may change when a run is resumed.

    Args:
        seed: int. Weights, dropout and shuffling; a resumed run derives its streams from it and its epoch.
        keep_checkpoints: int. Epoch checkpoints kept for averaging (§6.1).
        label_smoothing: float. eps_ls (§5.4), copied from the model config by `train`.
        rdrop_alpha: float. R-Drop's KL weight, copied from the model config (0 = off).
        strategy: str. The `tf.distribute` strategy ("auto", or the class name once resolved).
        mixed_precision: bool. mixed_bfloat16 on CPU, mixed_float16 on GPU.
        xla: bool. Compile the train step with XLA.
        steps_per_epoch: int or None. Batches per epoch; None = one pass over the training split.

    Example:
        >>> TrainingConfig(seed=1, steps_per_epoch=100).to_dict()["steps_per_epoch"]
        100
        >>> TrainingConfig(keep_checkpoints=0)
        Traceback (most recent call last):
        ...
        ValueError: keep_checkpoints=0: keep at least 1 checkpoint
    """

    seed: int = 0  # weights, dropout, shuffling; a resumed run derives its streams from it and its epoch
    keep_checkpoints: int = 5  # epoch checkpoints kept (default: the model config's checkpoints_to_average)
    label_smoothing: float = 0.1  # eps_ls (§5.4), from the model config
    rdrop_alpha: float = 0.0  # R-Drop's KL weight, from the model config (0 = off; batches hold each pair twice)
    strategy: str = "auto"  # tf.distribute strategy used (class name once resolved)
    mixed_precision: bool = False  # mixed_bfloat16 on CPU, mixed_float16 on GPU
    xla: bool = False  # jit_compile the train step
    steps_per_epoch: int | None = None  # None = one pass over the training split

    def __post_init__(self):
        validate_field_types(self)
        if self.keep_checkpoints < 1:
            raise ValueError(f"keep_checkpoints={self.keep_checkpoints!r}: keep at least 1 checkpoint")
        if self.steps_per_epoch is not None and self.steps_per_epoch < 1:
            raise ValueError(f"steps_per_epoch={self.steps_per_epoch!r}: expected a positive number or None")
        for name in ("keep_checkpoints", "steps_per_epoch"):
            if getattr(self, name) is not None:
                validate_positive_int(name, getattr(self, name))
        validate_seed(self.seed)
        validate_fraction("label_smoothing", self.label_smoothing)
        validate_rdrop_alpha(self.rdrop_alpha)


# The RNN baselines' config -------------------------------------------------------
