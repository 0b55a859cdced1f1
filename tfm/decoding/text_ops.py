"""The input rule: what every path makes of a string before translating it, and how the
answer is given back. Written once in TensorFlow ops here and run by `Translator` (so by
`tfm translate` and `tfm evaluate`) and by the exported SavedModel (`tfm.serving.saved_model`); its
plain-Python twin `tfm.decoding.input_rule` (the same constants) serves `CTranslate2Translator`.

The rule, in order:

1. **Refused**: a string that is not valid UTF-8, or that holds a NUL byte (U+0000). A NUL
   never occurs in text; it is the sign of UTF-16 (`"t\\x00w\\x00o\\x00"`) or of binary data,
   whose translation would be a confident wrong answer. The SavedModel refuses the batch with
   `InvalidArgumentError` ("tfm translator: input is not valid UTF-8 or holds a NUL byte;
   indices of the invalid strings: [...]", `assert_valid`); `Translator` and
   `CTranslate2Translator` raise `ValueError` with the same message or, with
   `on_invalid="empty"`, answer `""` for those strings and translate the rest; `tfm translate`
   names the line or argument ("is not valid UTF-8" / "holds a NUL byte") and prints an empty
   line for it (`--strict`: nothing).
2. **Whitespace separates words, and only that**: every run of Unicode White_Space characters
   (`tfm.decoding.input_rule.SEPARATORS`: space, tab, CR, LF, vertical tab, form feed, NEL, no-break and
   the other Unicode spaces, line and paragraph separators) becomes one space, and none is
   kept at either end (`normalize_strings`). So `"two"`, `"two\\n"`, `"two\\r\\n"`, `" two "`,
   `"\\ttwo"` and `"\\u00a0two"` translate alike, and `"a\\nb"` is the one sentence `"a b"`:
   one string is one sentence however it was wrapped (to translate lines apart, send them as
   separate strings; `tfm translate` reads one sentence per line of standard input).
   Other control characters and zero-width characters are characters like any other.
3. **Nothing to translate** (empty after step 2, or no subword at all): `""` with score 0,
   never whatever the model would invent for an empty source (`has_source`, `finish`).
4. **Long inputs**: the subwords beyond the model's `max_length` are dropped before the
   encoder (`tokenize_source`, which says which inputs were cut), so work and output stay
   bounded: at most `max_length + max_extra_length` output subwords. `Translator` and
   `tfm translate` warn once per call; the SavedModel answers `truncated` (bool, one per
   input) beside the translations.
5. Emoji, right-to-left text and other valid Unicode go through the tokenizer like any text;
   characters outside the vocabulary become `[UNK]`.

Everything here is plain TensorFlow (the regular expressions are RE2's, as Python's `re` reads
them for the same characters) plus the tokenizer's SentencePiece ops: the op lists of TF
Serving's images (tests/serving/test_saved_model.py) cover it. `tests/decoding/test_input_rule.py` runs one table of
cases through both versions of the rule and through every path.

Example:
    >>> normalize_strings(tf.constant(["two\\r\\n", " two ", "a\\nb", "\\u00a0"])).numpy().tolist()
    [b'two', b'two', b'a b', b'']
    >>> invalid(tf.constant([b"two", b"two\\x00", b"\\xff"])).numpy().tolist()
    [False, True, True]
"""

import tensorflow as tf

from tfm.decoding import input_rule

# The same characters as input_rule.SEPARATORS, written as RE2 escapes (\x{...}): one pattern, no literal controls.
SEPARATOR_RUNS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in input_rule.SEPARATORS) + "]+"


def invalid(text):
    """bool `(B,)`: True where a string of `text` (tf.string `(B,)`) is refused: not valid UTF-8, or
    holding a NUL byte.

    A valid string is unchanged by transcoding with replacement; an invalid one is not.
    """
    not_utf8 = tf.not_equal(tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace"), text)
    nul = tf.strings.regex_full_match(text, "(?s).*\\x00.*")
    return tf.logical_or(not_utf8, nul)


def assert_valid(text):
    """`text` unchanged, after an assertion that fails with `input_rule.INVALID` and the indices of the refused
    strings."""
    bad = invalid(text)
    check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(bad)), [
        f"tfm translator: {input_rule.INVALID}", tf.reshape(tf.where(bad), [-1])], summarize=10)
    with tf.control_dependencies([check]):
        return tf.identity(text)


def normalize_strings(text):
    """tf.string `(B,)` -> the text the tokenizer sees: each run of separators one space, none at either end."""
    return tf.strings.strip(tf.strings.regex_replace(text, SEPARATOR_RUNS, " "))


def tokenize_source(tokenizer, text, max_source_length=None):
    """Source subwords of a batch of strings (`normalize_strings`), cut to what the model accepts.

    Args:
        tokenizer: the run's `SubwordTokenizer`.
        text: tf.string `(B,)`, not `invalid`.
        max_source_length: int or None. Subwords kept per input.

    Returns:
        `(ids, has_source, truncated)`: ragged int `(B, None)`; bool `(B,)` True where
        there is something to translate (not blank, at least one subword); bool `(B,)`
        True where subwords were dropped.
    """
    text = normalize_strings(text)
    ids = tokenizer.tokenize(text)  # (B,) -> ragged (B, None)
    lengths = ids.row_lengths()
    truncated = tf.zeros_like(lengths, tf.bool)
    if max_source_length is not None:
        truncated = lengths > max_source_length
        ids = ids[:, :max_source_length]
    has_source = tf.logical_and(tf.strings.length(text) > 0, ids.row_lengths() > 0)
    return ids, has_source, truncated


def pad_source(ids, multiple=1):
    """Ragged ids -> int32 `(B, S)`, 0-padded, `S` a multiple of `multiple` and at least 1
    (an all-empty batch still has a shape the encoder takes)."""
    dense = tf.cast(ids.to_tensor(default_value=0), tf.int32)  # (B, S)
    width = tf.shape(dense)[1]
    target = tf.maximum((width + multiple - 1) // multiple * multiple, 1)
    return tf.pad(dense, [[0, 0], [0, target - width]])


def finish(tokenizer, sequences, scores, has_source):
    """Search output -> `(translations tf.string (B,), scores float32 (B,))`: detokenized, stripped,
    and `""` / 0 where there was nothing to translate."""
    translations = tf.strings.strip(tokenizer.detokenize(sequences))  # (B,)
    translations = tf.where(has_source, translations, "")
    scores = tf.where(has_source, tf.cast(scores, tf.float32), 0.0)
    return translations, scores
