"""The text-in/text-out rules, written once in TensorFlow ops and shared by `Translator` and the
exported SavedModel (`tfm.export`), so both answer every input the same way.

- Invalid UTF-8 is found before tokenizing (`invalid_utf8`): the SavedModel refuses the
  batch with `InvalidArgumentError` naming the indices (`assert_valid_utf8`);
  `Translator` raises `ValueError` with the same message, or, when asked
  (`on_invalid="empty"`), answers those inputs with `""` and translates the rest.
- Long inputs: the subwords beyond the model's `max_length` are dropped before the
  encoder (`tokenize_source`, which also says which inputs were cut), so work and output
  stay bounded: at most `max_length + max_extra_length` output subwords.
- Nothing to translate (empty, or whitespace only, or no subword at all): `""` with score 0,
  never whatever the model would invent for an empty source (`has_source`, `finish`).
- Emoji, right-to-left text and other valid Unicode go through the tokenizer like any text;
  characters outside the vocabulary become `[UNK]`.

Everything here is plain TensorFlow plus the tokenizer's SentencePiece ops: the op
lists of TF Serving's images (tests/test_export.py) cover it.
"""

import tensorflow as tf

INVALID_UTF8 = "input is not valid UTF-8; indices of the invalid strings:"


def invalid_utf8(text):
    """bool `(B,)`: True where a string of `text` (tf.string `(B,)`) is not valid UTF-8.

    A valid string is unchanged by transcoding with replacement; an invalid one is not.
    """
    return tf.not_equal(tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace"), text)


def assert_valid_utf8(text):
    """`text` unchanged, after an assertion that fails with `INVALID_UTF8` and the bad indices."""
    bad = invalid_utf8(text)
    check = tf.debugging.Assert(tf.logical_not(tf.reduce_any(bad)), [
        f"tfm translator: {INVALID_UTF8}", tf.reshape(tf.where(bad), [-1])], summarize=10)
    with tf.control_dependencies([check]):
        return tf.identity(text)


def tokenize_source(tokenizer, text, max_source_length=None):
    """Source subwords of a batch of strings, cut to what the model accepts.

    Args:
        tokenizer: the run's `SubwordTokenizer`.
        text: tf.string `(B,)`, valid UTF-8.
        max_source_length: int or None. Subwords kept per input.

    Returns:
        `(ids, has_source, truncated)`: ragged int `(B, None)`; bool `(B,)` True where
        there is something to translate (not blank, at least one subword); bool `(B,)`
        True where subwords were dropped.
    """
    ids = tokenizer.tokenize(text)  # (B,) -> ragged (B, None)
    lengths = ids.row_lengths()
    truncated = tf.zeros_like(lengths, tf.bool)
    if max_source_length is not None:
        truncated = lengths > max_source_length
        ids = ids[:, :max_source_length]
    has_source = tf.logical_and(tf.strings.length(tf.strings.strip(text)) > 0, ids.row_lengths() > 0)
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
