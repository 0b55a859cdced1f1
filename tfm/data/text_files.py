"""Local parallel corpora: two line-aligned text files, plain or gzip.

Line i of the source file translates line i of the target file. Lines are
stripped of surrounding whitespace. A pair is skipped (and counted) when either
side is blank or is not valid UTF-8, or refused in strict mode.
"""

import dataclasses
import gzip
import logging
import os
import zlib

import tensorflow as tf

logger = logging.getLogger("tfm.data")

_GZIP_MAGIC = b"\x1f\x8b"


@dataclasses.dataclass(frozen=True)
class CorpusSummary:
    """What reading a parallel corpus kept and skipped.

    Attributes:
        source_path, target_path: the two files.
        num_lines: lines in each file.
        num_pairs: pairs kept.
        blank: pairs skipped because a side was blank (whitespace only).
        invalid_utf8: pairs skipped because a side was not valid UTF-8.
        skipped_line_numbers: 1-based numbers of the first skipped lines (at most 20).

    Args:
        source_path, target_path, num_lines, num_pairs, blank, invalid_utf8, skipped_line_numbers:
            the attributes.

    Example:
        >>> summary = CorpusSummary("a.de", "a.en", num_lines=3, num_pairs=2, blank=1, skipped_line_numbers=(2,))
        >>> summary.skipped
        1
        >>> print(summary)
        a.de | a.en: 2 of 3 pairs kept; skipped 1 blank and 0 invalid UTF-8 (lines 2)
    """

    source_path: str
    target_path: str
    num_lines: int
    num_pairs: int
    blank: int = 0
    invalid_utf8: int = 0
    skipped_line_numbers: tuple = ()

    @property
    def skipped(self):
        return self.blank + self.invalid_utf8

    def __str__(self):
        text = f"{self.source_path} | {self.target_path}: {self.num_pairs} of {self.num_lines} pairs kept"
        if self.skipped:
            text += (f"; skipped {self.blank} blank and {self.invalid_utf8} invalid UTF-8 "
                     f"(lines {', '.join(map(str, self.skipped_line_numbers))}"
                     f"{', ...' if self.skipped > len(self.skipped_line_numbers) else ''})")
        return text


def _open_binary(path):
    """Opens `path` for binary reading, through gzip when it starts with the gzip magic bytes."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == _GZIP_MAGIC else open(path, "rb")


def read_lines(path):
    """All lines of a plain or .gz text file, as raw `bytes` without the line break.

    Lines break on `\\n` only (a `\\r` before it is removed later with the other
    whitespace), so a stray U+2028 in a sentence never splits it.

    Args:
        path: str or path-like. A plain or gzip text file (gzip is recognised by its magic bytes).

    Returns:
        list of `bytes`, one per line.

    Raises:
        FileNotFoundError: naming the missing path.
        ValueError: `path` is a folder, or a damaged gzip file.

    Example:
        >>> import gzip, os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "lines.txt")   # any name: gzip is told by content
        >>> with gzip.open(path, "wb") as f:
        ...     _ = f.write(b"Ein Hund.\\r\\nZwei Katzen.\\n")
        >>> read_lines(path)
        [b'Ein Hund.\\r', b'Zwei Katzen.']
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"{path!r} is a folder, not a corpus file; give the text file itself (plain or .gz)")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"corpus file not found: {path!r}")
    try:
        with _open_binary(path) as f:
            return [line.rstrip(b"\n") for line in f]
    except (OSError, EOFError, zlib.error) as error:  # a truncated or corrupt .gz
        raise ValueError(f"cannot read {path!r}: {error} (the file is damaged: a truncated or corrupted "
                         "gzip file; download or copy it again)") from None


def read_parallel_files(source_path, target_path, strict=False):
    """Reads two line-aligned files into lists of sentences.

    Args:
        source_path, target_path: paths to plain or gzip text files (gzip is
            recognised by its magic bytes, whatever the file name).
        strict: bool. Raise on the first blank or invalid UTF-8 line instead of
            skipping it. Defaults to `False`.

    Returns:
        `(sources, targets, summary)`: two lists of `str` and a `CorpusSummary`.

    Raises:
        ValueError: the files have different line counts (both files and counts are
            named), the corpus is empty or has no usable pair, or (strict) a bad line.

    Example:
        >>> import pathlib, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> folder = pathlib.Path(tmp.name)
        >>> _ = (folder / "a.de").write_bytes(b"  Ein Hund. \\n\\xff\\n")   # line 2 is not UTF-8
        >>> _ = (folder / "a.en").write_bytes(b"A dog.\\nA cat.\\n")
        >>> sources, targets, summary = read_parallel_files(folder / "a.de", folder / "a.en")
        >>> sources, targets, summary.invalid_utf8
        (['Ein Hund.'], ['A dog.'], 1)
    """
    source_path, target_path = os.fspath(source_path), os.fspath(target_path)
    source_lines, target_lines = read_lines(source_path), read_lines(target_path)
    if len(source_lines) != len(target_lines):
        raise ValueError(
            f"parallel files are not line-aligned: source {source_path!r} has {len(source_lines)} lines, "
            f"target {target_path!r} has {len(target_lines)} lines"
        )
    if not source_lines:
        raise ValueError(f"empty corpus: {source_path!r} and {target_path!r} have no lines")
    sources, targets, skipped_at = [], [], []
    blank = invalid = 0
    for number, raw_pair in enumerate(zip(source_lines, target_lines), start=1):
        texts = []
        for path, raw in zip((source_path, target_path), raw_pair):
            try:
                texts.append(raw.decode("utf-8").strip())
            except UnicodeDecodeError as error:
                if strict:
                    raise ValueError(f"{path!r} line {number} is not valid UTF-8: {error}") from error
                texts.append(None)
        if None in texts:
            invalid += 1
        elif not (texts[0] and texts[1]):
            if strict:
                side = source_path if not texts[0] else target_path
                raise ValueError(f"{side!r} line {number} is blank (strict mode)")
            blank += 1
        else:
            sources.append(texts[0])
            targets.append(texts[1])
            continue
        if len(skipped_at) < 20:
            skipped_at.append(number)
    summary = CorpusSummary(source_path, target_path, len(source_lines), len(sources), blank, invalid,
                            tuple(skipped_at))
    if not sources:
        raise ValueError(f"empty corpus: no usable pair in {summary}")
    (logger.warning if summary.skipped else logger.info)("%s", summary)
    return sources, targets, summary


def load_parallel_files(source_path, target_path, strict=False):
    """A parallel corpus from two local files, as a `tf.data.Dataset`.

    What was skipped is logged; `load_parallel_files_with_summary` also returns it.

    Args:
        source_path, target_path: plain or gzip text files, line-aligned.
        strict: bool. Refuse blank or invalid UTF-8 lines instead of skipping them.

    Returns:
        A dataset of scalar `(source, target)` tf.string pairs, in file order.

    Example:
        >>> import pathlib, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> folder = pathlib.Path(tmp.name)
        >>> _ = (folder / "train.de").write_text("Ein Hund.\\nZwei Katzen.\\n")
        >>> _ = (folder / "train.en").write_text("A dog.\\nTwo cats.\\n")
        >>> pairs = load_parallel_files(folder / "train.de", folder / "train.en")
        >>> [(s.decode(), t.decode()) for s, t in pairs.as_numpy_iterator()]
        [('Ein Hund.', 'A dog.'), ('Zwei Katzen.', 'Two cats.')]
    """
    return load_parallel_files_with_summary(source_path, target_path, strict=strict)[0]


def load_parallel_files_with_summary(source_path, target_path, strict=False):
    """`load_parallel_files`, and the `CorpusSummary` of what it kept and skipped.

    Args:
        source_path, target_path: plain or gzip text files, line-aligned.
        strict: bool. Refuse blank or invalid UTF-8 lines instead of skipping them.

    Returns:
        `(dataset, summary)`: the scalar `(source, target)` tf.string pairs in file order,
        and a `CorpusSummary`.

    Example:
        >>> import pathlib, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> folder = pathlib.Path(tmp.name)
        >>> _ = (folder / "train.de").write_text("Ein Hund.\\n\\nZwei Katzen.\\n")
        >>> _ = (folder / "train.en").write_text("A dog.\\nA cat.\\nTwo cats.\\n")
        >>> pairs, summary = load_parallel_files_with_summary(folder / "train.de", folder / "train.en")
        >>> summary.num_pairs, summary.blank, summary.skipped_line_numbers
        (2, 1, (2,))
    """
    sources, targets, summary = read_parallel_files(source_path, target_path, strict=strict)
    dataset = tf.data.Dataset.from_tensor_slices((tf.constant(sources, tf.string), tf.constant(targets, tf.string)))
    return dataset, summary
