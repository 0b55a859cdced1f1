"""Generated tasks the project makes itself: deterministic by seed, no download.

`sequence_task_ids` gives integer batches ready for `model.fit` (the learning
tests use it). The text tasks give `(source, target)` string pairs for the
tokenizer + batching pipeline:

    reverse / copy   "charlie alpha echo" -> "echo alpha charlie" / the same
    numbers          "three hundred twenty one" -> "dreihundert einundzwanzig"
                     (en <-> de; units and tens swap: the offline default of `make demo`)

Train, validation and test never share a source sentence.
"""

import zlib

import numpy as np

from tfm.data.splits import SPLITS, canonical_split
from tfm.special_tokens import END_ID, START_ID

FIRST_FREE_ID = 4  # ids below are reserved (pad, unk, start, end)


def sequence_task_ids(num_examples, vocab_size=20, min_length=3, max_length=10, task="reverse", seed=0):
    """Random token sequences and their reversal (or copy), already as ids.

    Args:
        num_examples: int. Number of pairs.
        vocab_size: int. Total vocabulary including the 4 reserved ids.
        min_length, max_length: ints. Source length range (inclusive).
        task: "reverse" or "copy".
        seed: int. Same seed, same data.

    Returns:
        `((source, target_in), target_out)` int32 arrays: source `(n, max_length)`,
        target_in / target_out `(n, max_length + 1)`, zero-padded. `target_in`
        starts with START; `target_out` ends with END (teacher forcing).

    Example:
        >>> (source, target_in), target_out = sequence_task_ids(2, vocab_size=10, min_length=3, max_length=4)
        >>> source[0], target_in[0], target_out[0]
        (array([7, 5, 5, 4], dtype=int32), array([2, 4, 5, 5, 7], dtype=int32), array([4, 5, 5, 7, 3], dtype=int32))
    """
    if task not in ("reverse", "copy"):
        raise ValueError(f"task={task!r}: expected 'reverse' or 'copy'")
    if vocab_size <= FIRST_FREE_ID:
        raise ValueError(f"vocab_size={vocab_size} leaves no ids beyond the {FIRST_FREE_ID} reserved ones")
    if not 1 <= min_length <= max_length:
        raise ValueError(f"need 1 <= min_length <= max_length, got {min_length}, {max_length}")
    rng = np.random.default_rng(seed)
    source = np.zeros((num_examples, max_length), "int32")
    target_in = np.zeros((num_examples, max_length + 1), "int32")
    target_out = np.zeros((num_examples, max_length + 1), "int32")
    lengths = rng.integers(min_length, max_length + 1, size=num_examples)
    for i, n in enumerate(lengths):
        seq = rng.integers(FIRST_FREE_ID, vocab_size, size=n)
        out = seq[::-1] if task == "reverse" else seq
        source[i, :n] = seq
        target_in[i, 0] = START_ID
        target_in[i, 1 : n + 1] = out
        target_out[i, :n] = out
        target_out[i, n] = END_ID
    return (source, target_in), target_out


# ---------------------------------------------------------------------------
# The same tasks as text, plus number words (en <-> de), as (source, target)
# string pairs for the tokenizer + batching pipeline.
# ---------------------------------------------------------------------------

# Readable, distinct word tokens for the reverse / copy tasks.
SYMBOLS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
    "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()

DEFAULT_SPLIT_SIZES = {"train": 10_000, "validation": 500, "test": 500}

# What fraction of all possible items goes to each split (by a content hash).
_HASH_BUCKETS = 20  # 1/20 test, 1/20 validation, 18/20 train


def _split_of(text):
    """Which split a generated source string belongs to; stable across runs and machines."""
    bucket = zlib.crc32(text.encode("utf-8")) % _HASH_BUCKETS
    return "test" if bucket == 0 else "validation" if bucket == 1 else "train"


def sequence_task_pairs(split="train", task="reverse", num_examples=None, num_symbols=20, min_length=3,
                        max_length=10, seed=0):
    """Word sequences and their reversal (or copy), as text.

    "charlie alpha echo" -> "echo alpha charlie" (reverse) or the same string (copy).
    Each distinct source sequence belongs to exactly one split (chosen by a hash of
    its text), so train / validation / test never share a source.

    Args:
        split: "train", "validation" (alias "val") or "test".
        task: "reverse" or "copy".
        num_examples: int or None. Pairs to make; defaults to 10,000 train,
            500 validation, 500 test. Pairs may repeat inside a split.
        num_symbols: int. How many words of the NATO alphabet to use (2-26).
        min_length, max_length: ints. Source length range in words (inclusive).
        seed: int. Same seed, same pairs.

    Returns:
        `(sources, targets)`: two lists of `str`, same length.

    Example:
        >>> sources, targets = sequence_task_pairs("validation", num_examples=2, max_length=4)
        >>> sources[0], targets[0]
        ('bravo charlie echo', 'echo charlie bravo')
    """
    split = canonical_split(split)
    if task not in ("reverse", "copy"):
        raise ValueError(f"task={task!r}: expected 'reverse' or 'copy'")
    if not 2 <= num_symbols <= len(SYMBOLS):
        raise ValueError(f"num_symbols={num_symbols}: expected 2..{len(SYMBOLS)}")
    if not 1 <= min_length <= max_length:
        raise ValueError(f"need 1 <= min_length <= max_length, got {min_length}, {max_length}")
    n = DEFAULT_SPLIT_SIZES[split] if num_examples is None else int(num_examples)
    if n < 1:
        raise ValueError(f"num_examples={num_examples}: expected a positive count")
    # Each split gets its own stream, so asking for more test pairs never changes the train pairs.
    rng = np.random.default_rng([seed, SPLITS.index(split)])
    sources, targets = [], []
    max_draws = 100 * n + 10_000
    for _ in range(max_draws):
        length = int(rng.integers(min_length, max_length + 1))
        words = [SYMBOLS[i] for i in rng.integers(0, num_symbols, size=length)]
        source = " ".join(words)
        if _split_of(source) != split:
            continue
        sources.append(source)
        targets.append(" ".join(words[::-1] if task == "reverse" else words))
        if len(sources) == n:
            return sources, targets
    raise ValueError(
        f"could not make {n} {split} pairs from num_symbols={num_symbols}, lengths {min_length}..{max_length} "
        f"in {max_draws} draws: too few distinct sequences; use more symbols or longer sequences"
    )


_EN_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
            "sixteen seventeen eighteen nineteen").split()
_EN_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_DE_ONES = ("null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn fünfzehn "
            "sechzehn siebzehn achtzehn neunzehn").split()
_DE_TENS = "_ _ zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig".split()
MAX_NUMBER = 999_999


def _check_number(n):
    if not 1 <= n <= MAX_NUMBER:
        raise ValueError(f"n={n}: number words cover 1..{MAX_NUMBER}")


def _english_below_1000(n):
    words = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        words += [_EN_ONES[hundreds], "hundred"]
    if rest >= 20:
        words.append(_EN_TENS[rest // 10])
        if rest % 10:
            words.append(_EN_ONES[rest % 10])
    elif rest:
        words.append(_EN_ONES[rest])
    return words


def english_number(n):
    """English number words, space-separated: 321 -> "three hundred twenty one".

    Args:
        n: int in 1..999,999.

    Returns:
        str.

    Example:
        >>> english_number(321), english_number(40_017)
        ('three hundred twenty one', 'forty thousand seventeen')
    """
    _check_number(n)
    thousands, rest = divmod(n, 1000)
    words = _english_below_1000(thousands) + ["thousand"] if thousands else []
    return " ".join(words + _english_below_1000(rest))


def _german_below_100(n, final):
    """Morphemes of 1..99: 21 -> ["ein", "und", "zwanzig"] (units before tens)."""
    if n == 1:
        return ["eins" if final else "ein"]  # "eins" alone, "ein" inside "eintausend"
    if n < 20:
        return [_DE_ONES[n]]
    tens, ones = divmod(n, 10)
    if not ones:
        return [_DE_TENS[tens]]
    return ["ein" if ones == 1 else _DE_ONES[ones], "und", _DE_TENS[tens]]


def _german_below_1000(n, final):
    """Words (lists of morphemes) of 1..999: 321 -> [["drei", "hundert"], ["ein", "und", "zwanzig"]]."""
    words = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        words.append(["ein" if hundreds == 1 else _DE_ONES[hundreds], "hundert"])
    if rest:
        words.append(_german_below_100(rest, final))
    return words


def german_number(n, split_compounds=False):
    """German number words: 321 -> "dreihundert einundzwanzig" (units before tens).

    Standard German writes the whole number as one word; here a space follows every
    "hundert" and "tausend" group, so the words stay short and the reordering
    ("twenty one" -> "einundzwanzig") is the one to learn.

    Args:
        n: int in 1..999,999.
        split_compounds: bool. Space the morphemes too: "drei hundert ein und zwanzig",
            so a word-level vocabulary shows the crossing alignment (one -> ein,
            twenty -> zwanzig) token for token. Defaults to `False`.

    Example:
        >>> german_number(321), german_number(321, split_compounds=True)
        ('dreihundert einundzwanzig', 'drei hundert ein und zwanzig')
    """
    _check_number(n)
    thousands, rest = divmod(n, 1000)
    words = []
    if thousands:
        words = _german_below_1000(thousands, final=False)
        words[-1] = words[-1] + ["tausend"]
    joiner = " " if split_compounds else ""
    return " ".join(joiner.join(word) for word in words + _german_below_1000(rest, final=True))


NUMBER_LANGS = ("en", "de")


def number_words_pairs(split="train", source_lang="en", target_lang="de", max_number=9999, num_validation=500,
                       num_test=500, split_compounds=False, seed=0):
    """Numbers written as words in two languages: "three hundred twenty one" -> "dreihundert einundzwanzig".

    German puts units before tens ("one and twenty"), so the alignment crosses: a small
    task with real reordering for the attention notebooks, learnable by a tiny model.
    The numbers 1..max_number are shuffled with `seed` and cut into test, validation
    and train (the rest), so the splits never overlap.

    Args:
        split: "train", "validation" (alias "val") or "test".
        source_lang, target_lang: "en" or "de", different.
        max_number: int. Largest number, at most 999,999. Defaults to 9999.
        num_validation, num_test: ints. Sizes of the held-out splits.
        split_compounds: bool. German morphemes spaced ("drei hundert ein und
            zwanzig"), see `german_number`.
        seed: int. Same seed, same splits.

    Returns:
        `(sources, targets)`: two lists of `str`.

    Example:
        >>> sources, targets = number_words_pairs("test", max_number=999, num_validation=10, num_test=10)
        >>> len(sources), sources[0], targets[0]
        (10, 'five hundred forty nine', 'fünfhundert neunundvierzig')
    """
    split = canonical_split(split)
    for name, lang in (("source_lang", source_lang), ("target_lang", target_lang)):
        if lang not in NUMBER_LANGS:
            raise ValueError(f"{name}={lang!r}: number words exist for {sorted(NUMBER_LANGS)}")
    if source_lang == target_lang:
        raise ValueError(f"source_lang and target_lang are both {source_lang!r}")
    if not 1 <= max_number <= MAX_NUMBER:
        raise ValueError(f"max_number={max_number}: expected 1..{MAX_NUMBER}")
    if num_validation < 0 or num_test < 0 or num_validation + num_test >= max_number:
        raise ValueError(
            f"num_validation={num_validation} + num_test={num_test} must be >= 0 and leave training numbers "
            f"out of max_number={max_number}"
        )
    numbers = np.random.default_rng(seed).permutation(np.arange(1, max_number + 1))
    cut = {"test": numbers[:num_test], "validation": numbers[num_test : num_test + num_validation],
           "train": numbers[num_test + num_validation :]}[split]
    if len(cut) == 0:
        raise ValueError(f"split={split!r} is empty (num_{split}=0)")
    def words(lang, n):
        return english_number(n) if lang == "en" else german_number(n, split_compounds)

    return [words(source_lang, int(n)) for n in cut], [words(target_lang, int(n)) for n in cut]


def _pairs_dataset(sources, targets):
    import tensorflow as tf  # lazily: the id tasks above need only NumPy

    return tf.data.Dataset.from_tensor_slices((tf.constant(sources, tf.string), tf.constant(targets, tf.string)))


def sequence_task_dataset(split="train", task="reverse", **kwargs):
    """`sequence_task_pairs` as a `tf.data.Dataset` of scalar `(source, target)` tf.string pairs.

    Args:
        split, task: as in `sequence_task_pairs`.
        **kwargs: `num_examples`, `num_symbols`, `min_length`, `max_length`, `seed` of `sequence_task_pairs`.

    Example:
        >>> pairs = sequence_task_dataset("validation", task="copy", num_examples=2, max_length=4)
        >>> [(s.decode(), t.decode()) for s, t in pairs.take(1).as_numpy_iterator()]
        [('bravo charlie echo', 'bravo charlie echo')]
    """
    return _pairs_dataset(*sequence_task_pairs(split, task=task, **kwargs))


def number_words_dataset(split="train", source_lang="en", target_lang="de", **kwargs):
    """`number_words_pairs` as a `tf.data.Dataset` of scalar `(source, target)` tf.string pairs.

    Args:
        split, source_lang, target_lang: as in `number_words_pairs`.
        **kwargs: `max_number`, `num_validation`, `num_test`, `split_compounds`, `seed` of `number_words_pairs`.

    Example:
        >>> pairs = number_words_dataset("test", source_lang="de", target_lang="en", max_number=999, num_validation=10,
        ...                              num_test=10)
        >>> int(pairs.cardinality())
        10
    """
    return _pairs_dataset(*number_words_pairs(split, source_lang=source_lang, target_lang=target_lang, **kwargs))
