"""The `tfm` command's arguments: each subcommand's flags, their help, the types that refuse bad values, and
`train_recipe`, the one place `tfm train`'s flags become a `Recipe`.

`tfm.cli` builds its parser from these (`COMMANDS` pairs each handler with its `add_*`). Standard library
only, plus `tfm.config`, so `tfm --help` starts no TensorFlow.
"""

import argparse
import dataclasses
import os

from tfm.config import MODELS, Recipe, TransformerConfig, apply_overrides, validation


# Argument types: a bad value is refused by argparse, with the flag named, by the rule the configs and the library
# apply to the same value (tfm.config.validation), so a flag, --set and the Python API accept the same values.
def _checked(text, convert, kind, validate):
    """`validate(convert(text))`, or argparse's error: "'x' is not KIND" when it does not convert, the rule's
    message when the value breaks it."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
    try:
        return validate(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).split("=", 1)[-1]) from None


def positive_int(text):
    """A flag's whole number in [1, 2^31 - 1] (`tfm.config.validation.validate_positive_int`), for argparse's
    `type=`.

    Args:
        text: str. The flag's value.

    Example:
        >>> positive_int("3")
        3
        >>> positive_int("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: 0 must be a positive int
    """
    return _checked(text, int, "a whole number", lambda value: validation.validate_positive_int("value", value))


def alpha_value(text):
    """A flag's length penalty alpha (`tfm.config.validation.validate_length_penalty`: finite, in [0, 10]).

    Args:
        text: str. The flag's value.

    Example:
        >>> alpha_value("0.6")
        0.6
        >>> alpha_value("1e308")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: '1e308': the length penalty must be a finite number in [0, 10] (0 = no ...
    """
    return _checked(text, float, "a number", lambda value: validation.validate_length_penalty(text))


def seed_value(text):
    """A flag's random seed, an int in [0, 2^32 - 1] (`tfm.config.validation.validate_seed`).

    Args:
        text: str. The flag's value.

    Example:
        >>> seed_value("7")
        7
    """
    return _checked(text, int, "a whole number", validation.validate_seed)


def positive_seconds(text):
    """A flag's positive, finite number of seconds (`tfm.config.validation.validate_positive_number`).

    Args:
        text: str. The flag's value.

    Example:
        >>> positive_seconds("2.5")
        2.5
        >>> positive_seconds("inf")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: inf must be a finite number
    """
    return _checked(text, float, "a number of seconds",
                    lambda value: validation.validate_positive_number("value", value))


def add_train(p):
    p.add_argument("--preset", choices=TransformerConfig.PRESETS, default="tiny",
                   help="model size: tiny, small (CPU), base, big (the paper's §5), parse (§6.3), parse_small "
                        "(CPU), m30k (Wu et al. 2021's Multi30k model, lowercased + Moses-tokenized text), m30k_small "
                        "(the 90-minute CPU recipe on the same text) (default: tiny)")
    p.add_argument("--model", choices=MODELS, default="transformer",
                   help="transformer, or an RNN seq2seq baseline without/with attention (default: transformer)")
    p.add_argument("--dataset", default=None,
                   help="a generated task (numbers, reverse, copy), multi30k, a TFDS name such as "
                        "wmt14_translate/de-en, files (with --source-file/--target-file), or ptb_parse / "
                        "ptb_parse_tags (English constituency parsing, §6.3: NLTK's Penn Treebank sample as "
                        "sentence -> tree, every word written XX or as its POS tag; use a parse preset) "
                        "(default: the preset's: multi30k for m30k and m30k_small, ptb_parse_tags for parse and "
                        "parse_small, numbers for the others)")
    p.add_argument("--source-lang", default=None, help="source language, e.g. en")
    p.add_argument("--target-lang", default=None, help="target language, e.g. de")
    p.add_argument("--source-file", default=None, help="source side for --dataset files (plain or .gz)")
    p.add_argument("--target-file", default=None, help="target side for --dataset files (plain or .gz)")
    p.add_argument("--data-dir", default=None, help="download/cache folder (default: $TFM_DATA_DIR or data/cache)")
    p.add_argument("--output", required=True, metavar="RUN",
                   help="run folder: config.json, history.csv, checkpoints/, tokenizer/ (resumed if it exists)")
    p.add_argument("--resume", action="store_true",
                   help="go on with RUN on the recipe its config.json records, without repeating its flags: "
                        "`tfm train --output RUN --resume --epochs N`; only --epochs, --data-dir and the session's "
                        "settings (--strategy, --worker-timeout, --steps-per-epoch, --keep-checkpoints, --seed, "
                        "--mixed-precision, --xla) may be given beside it")
    p.add_argument("--epochs", type=positive_int, default=10, help="epochs to reach (default: 10)")
    p.add_argument("--steps-per-epoch", type=positive_int, default=None, help="batches per epoch (default: one pass)")
    p.add_argument("--strategy", choices=["auto", "default", "mirrored", "multiworker"], default="auto",
                   help="tf.distribute strategy; multiworker reads TF_CONFIG (default: auto)")
    p.add_argument("--worker-timeout", type=positive_seconds, default=None, metavar="SECONDS",
                   help="multiworker: how long to wait for the other tasks of TF_CONFIG's cluster before giving up "
                        "(default: $TFM_WORKER_TIMEOUT, else 300)")
    p.add_argument("--mixed-precision", action="store_true",
                   help="mixed_bfloat16 on CPU, mixed_float16 on GPU")
    p.add_argument("--xla", action="store_true", help="compile the train step with XLA (jit_compile)")
    p.add_argument("--tokens-per-batch", type=positive_int, default=None,
                   help="token budget per side per batch (default: the preset's; base 25000 as in §5.1)")
    p.add_argument("--vocab-size", type=positive_int, default=None,
                   help="subwords to learn, the vocabulary's size (default: the preset's subwords)")
    p.add_argument("--max-length", type=positive_int, default=None,
                   help="drop pairs longer than this many subwords; the Transformer then takes sources that long "
                        "(default: the preset's max_pair_length)")
    p.add_argument("--train-sentences", type=positive_int, default=None, metavar="N",
                   help="train (and learn the vocabulary) on the first N training pairs only, e.g. for a "
                        "learning curve (default: all)")
    p.add_argument("--keep-checkpoints", type=positive_int, default=None,
                   help="keep the last K epoch checkpoints (default: as many as the recipe averages, "
                        "checkpoints_to_average: 5 for base, 20 for big)")
    p.add_argument("--seed", type=seed_value, default=None, help="random seed (default: the preset's, 0)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override any field of the recipe, found by its name in the model config "
                        "(TransformerConfig, or Seq2SeqConfig for the RNN models), DataConfig, TrainingConfig or "
                        "DecodingConfig, e.g. --set dropout=0.2 --set warmup_steps=800 (repeatable); vocab_size is "
                        "the subwords to learn, as --vocab-size (the model takes the tokenizer's size)")


def train_recipe(args):
    """The `Recipe` of `tfm train`'s flags: the one place they meet the configs.

    `Recipe.preset(--preset, model=--model)`, then `--set FIELD=VALUE` (each to the part with that field), then
    the explicit flags: --dataset, --source-lang, --target-lang, --source-file, --target-file, --data-dir,
    --vocab-size (subwords), --max-length (the pair filter, and the Transformer's longest source) and
    --train-sentences onto the data; --tokens-per-batch, --keep-checkpoints, --seed, --steps-per-epoch,
    --mixed-precision and --xla onto the training. With --resume, the recipe of the run's config.json instead
    (`--output`), with --data-dir and the settings a session may change.

    Args:
        args: `argparse.Namespace` of `add_train`'s flags.

    Returns:
        `Recipe` (ValueError names a bad value).

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> add_train(parser)
        >>> args = parser.parse_args(["--output", "run", "--preset", "small", "--model", "luong", "--seed", "3",
        ...                           "--vocab-size", "500", "--set", "warmup_steps=100", "--set", "units=32"])
        >>> recipe = train_recipe(args)
        >>> recipe.model.units, recipe.data.subwords, recipe.training.seed, recipe.training.warmup_steps
        (32, 500, 3, 100)
    """
    if getattr(args, "resume", False):
        return _resumed_recipe(args)
    recipe = apply_overrides(Recipe.preset(args.preset, model=args.model), args.set)
    data = {"dataset": args.dataset, "source_lang": args.source_lang, "target_lang": args.target_lang,
            "source_file": args.source_file, "target_file": args.target_file, "data_dir": args.data_dir,
            "subwords": args.vocab_size, "max_pair_length": args.max_length, "train_sentences": args.train_sentences}
    training = {"tokens_per_batch": args.tokens_per_batch, "keep_checkpoints": args.keep_checkpoints,
                "seed": args.seed, "steps_per_epoch": args.steps_per_epoch,
                "mixed_precision": args.mixed_precision or None, "xla": args.xla or None}
    fields = {name: value for name, value in {**data, **training}.items() if value is not None}
    if args.max_length is not None and isinstance(recipe.model, TransformerConfig):
        fields["model"] = dataclasses.replace(recipe.model, max_length=args.max_length)
    return recipe.replace(**fields)


# The flags that make a run's recipe; `--resume` reads it from the run's config.json instead, so it refuses them.
RECIPE_FLAGS = ("preset", "model", "dataset", "source_lang", "target_lang", "source_file", "target_file", "vocab_size",
                "max_length", "train_sentences", "tokens_per_batch", "set")


def _resumed_recipe(args):
    """`--resume`: the `Recipe` of `RUN/config.json` (`--output`), with the settings a session may change
    (`tfm.runs.RESUMABLE`: --seed, --steps-per-epoch, --keep-checkpoints, --mixed-precision, --xla) and --data-dir
    where given. ValueError when RUN holds no run, or when a flag of the recipe (`RECIPE_FLAGS`) is given too."""
    from tfm.runs import CONFIG_FILE, read_run_config

    parser = argparse.ArgumentParser()
    add_train(parser)
    defaults = vars(parser.parse_args(["--output", args.output]))
    given = [f"--{name.replace('_', '-')}" for name in RECIPE_FLAGS if getattr(args, name) != defaults[name]]
    if given:
        raise ValueError(f"--resume goes on with the recipe {args.output}'s {CONFIG_FILE} records, and "
                         f"{', '.join(given)} would change it: drop {'it' if len(given) == 1 else 'them'}, or train "
                         f"into a new --output folder without --resume")
    if not os.path.isfile(os.path.join(args.output, CONFIG_FILE)):
        raise ValueError(f"--resume: {args.output} holds no run to resume (no {CONFIG_FILE}); start one there "
                         f"without --resume")
    recipe = Recipe.from_record(read_run_config(args.output))
    session = {"data_dir": args.data_dir, "keep_checkpoints": args.keep_checkpoints, "seed": args.seed,
               "steps_per_epoch": args.steps_per_epoch, "mixed_precision": args.mixed_precision or None,
               "xla": args.xla or None}
    return recipe.replace(**{name: value for name, value in session.items() if value is not None})


def add_average(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    p.add_argument("--last", type=positive_int, default=None,
                   help="how many of the last checkpoints (default: the run's checkpoints_to_average, "
                        "5 for base and 20 for big, or all there are when fewer)")
    p.add_argument("--output", default=None,
                   help="weights file to write, NAME.weights.h5, never one of the run's own files (default: "
                        "RUN/checkpoints/averaged.weights.h5); the epochs averaged go to OUTPUT.averaging.json")


def add_decoding(p):
    p.add_argument("--beam-size", type=positive_int, default=None,
                   help="beam size; 1 = greedy (default: the run's, 4 as in §6.1)")
    p.add_argument("--alpha", type=alpha_value, default=None,
                   help="length penalty alpha in [0, 10] (default: the run's, 0.6 as in §6.1)")
    p.add_argument("--checkpoint", default=None,
                   help="weights: averaged, latest, an epoch number or a file (default: averaged, else latest)")


def add_translate(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    add_decoding(p)
    p.add_argument("--strict", action="store_true",
                   help="refuse the whole input when a line is not valid UTF-8 or holds a NUL byte, so it is read "
                        "to its end first (default: name the line on stderr, print an empty line for it and "
                        "translate the others)")
    p.add_argument("text", nargs="*", help="sentences to translate (default: read standard input, one per line, "
                                           "each translated as it arrives)")


def add_evaluate(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    p.add_argument("--split", choices=["val", "test"], default="test", help="(default: test)")
    p.add_argument("--limit", type=positive_int, default=None, help="score only the first N sentences")
    p.add_argument("--unconstrained", action="store_true",
                   help="parsing runs: search without the tree constraint (any output, repaired afterwards, "
                        "as Vinyals et al. 2015); default: only well-formed trees with one leaf per word")
    add_decoding(p)


def add_export(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    p.add_argument("--output", required=True,
                   help="folder to write, new or empty (TF Serving wants MODEL/VERSION, e.g. exported/m30k/1); "
                        "written beside it and renamed into place once complete")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an earlier export of the same format in --output (default: refuse it); the old "
                        "one stays until the new one is complete")
    p.add_argument("--format", choices=("savedmodel", "ctranslate2"), default="savedmodel",
                   help="savedmodel: TF Serving, string in, string out (default); ctranslate2: CTranslate2's C++ "
                        "engine (pip install 'tfm[ctranslate2]'), faster on CPU, int8 with --quantization")
    p.add_argument("--quantize", "--quantization", dest="quantization",
                   choices=("int8", "int8_float32", "int16", "float16", "bfloat16", "float32"), default=None,
                   help="weight type (default: float32). savedmodel: bfloat16 (weights and products in bfloat16, "
                        "scores in float32: faster on CPUs with bfloat16 instructions, outputs close to float32's) "
                        "or int8 (Keras' int8 Dense kernels): smaller, not faster (slower than float32 on CPU, "
                        "docs/results.md); the fast int8 path is --format ctranslate2 --quantize int8. "
                        "ctranslate2: any of these")
    p.add_argument("--xla", action="store_true",
                   help="savedmodel: compile the search with XLA (serve with tensorflow_model_server "
                        "--xla_cpu_compilation_enabled=true); slower on CPU in docs/results.md's measurement")
    p.add_argument("--early-finish", action="store_true",
                   help="savedmodel: stop each sentence's beam once its best translation cannot be beaten (the "
                        "same translations and scores in fewer steps; nbest searches in full)")
    p.add_argument("--signatures", nargs="+", choices=("nbest", "alignment"), default=[],
                   help="extra SavedModel signatures beside serving_default: nbest (the k best translations and "
                        "scores) and/or alignment (each output subword's source position and the cross-attention)")
    p.add_argument("--alignment-layer", type=int, default=-1,
                   help="decoder layer whose cross-attention (averaged over heads) the alignment reads (default: "
                        "-1, the last)")
    add_decoding(p)


def add_demo(p):
    p.add_argument("--output", default="runs/demo", help="run folder (default: runs/demo)")
    p.add_argument("--epochs", type=positive_int, default=None, help="override the demo's epochs")
