import gzip
import logging

import pytest
import tensorflow as tf

from tfm.data.text_files import load_parallel_files, load_parallel_files_with_summary, read_parallel_files


def write(path, data, compress=False):
    data = data.encode("utf-8") if isinstance(data, str) else data
    if compress:
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("compress", [False, True])
def test_plain_and_gzip_read_the_same_pairs(tmp_path, compress):
    src = write(tmp_path / "a.de", "Ein Hund.\n  Zwei Katzen. \r\nDrei Vögel.", compress)
    tgt = write(tmp_path / "a.en", "A dog.\nTwo cats.\r\nThree birds.\n", compress)
    dataset, summary = load_parallel_files_with_summary(src, tgt)
    pairs = [(s.decode(), t.decode()) for s, t in dataset.as_numpy_iterator()]
    assert pairs == [("Ein Hund.", "A dog."), ("Zwei Katzen.", "Two cats."), ("Drei Vögel.", "Three birds.")]
    assert (summary.num_lines, summary.num_pairs, summary.skipped) == (3, 3, 0)
    assert [s.dtype for s in dataset.element_spec] == [tf.string, tf.string]
    assert [tuple(p) for p in load_parallel_files(src, tgt).as_numpy_iterator()] == [
        tuple(p) for p in dataset.as_numpy_iterator()]


def test_gzip_is_recognised_by_content_not_name(tmp_path):
    src = write(tmp_path / "src.txt", "eins\n", compress=True)
    tgt = write(tmp_path / "tgt.gz", "one\n")  # plain text despite the name
    assert read_parallel_files(src, tgt)[:2] == (["eins"], ["one"])


def test_misaligned_files_name_both_files_and_counts(tmp_path):
    src = write(tmp_path / "train.de", "a\nb\nc\n")
    tgt = write(tmp_path / "train.en.gz", "a\nb\n", compress=True)
    with pytest.raises(ValueError) as error:
        read_parallel_files(src, tgt)
    message = str(error.value)
    assert src in message and tgt in message and "3 lines" in message and "2 lines" in message


def test_empty_corpus_is_refused(tmp_path):
    src, tgt = write(tmp_path / "s", ""), write(tmp_path / "t", "", compress=True)
    with pytest.raises(ValueError, match="empty corpus"):
        load_parallel_files(src, tgt)
    src, tgt = write(tmp_path / "s2", "\n  \n"), write(tmp_path / "t2", "x\n\n")
    with pytest.raises(ValueError, match="empty corpus: no usable pair"):
        load_parallel_files(src, tgt)


def test_blank_lines_on_either_side_are_skipped_and_counted(tmp_path, caplog):
    src = write(tmp_path / "s", "a\n\nc\nd\n")
    tgt = write(tmp_path / "t", "A\nB\n \nD\n")
    with caplog.at_level(logging.WARNING, logger="tfm.data"):
        sources, targets, summary = read_parallel_files(src, tgt)
    assert (sources, targets) == (["a", "d"], ["A", "D"])
    assert (summary.blank, summary.invalid_utf8, summary.skipped_line_numbers) == (2, 0, (2, 3))
    assert "skipped 2 blank" in caplog.text
    with pytest.raises(ValueError, match="line 2 is blank"):
        read_parallel_files(src, tgt, strict=True)


def test_invalid_utf8_line_is_skipped_and_counted(tmp_path):
    src = write(tmp_path / "s", b"gut\n\xff\xfe kaputt\nauch gut\n")
    tgt = write(tmp_path / "t", "good\nbroken\nalso good\n", compress=True)
    sources, targets, summary = read_parallel_files(src, tgt)
    assert (sources, targets) == (["gut", "auch gut"], ["good", "also good"])
    assert (summary.invalid_utf8, summary.blank, summary.skipped_line_numbers) == (1, 0, (2,))
    assert "1 invalid UTF-8" in str(summary)
    with pytest.raises(ValueError, match="line 2 is not valid UTF-8"):
        read_parallel_files(src, tgt, strict=True)


def test_missing_and_corrupt_files(tmp_path):
    good = write(tmp_path / "good", "x\n")
    with pytest.raises(FileNotFoundError, match="nope"):
        read_parallel_files(str(tmp_path / "nope"), good)
    truncated = tmp_path / "cut.gz"
    write(truncated, "hello world\n" * 100, compress=True)
    truncated.write_bytes(truncated.read_bytes()[:30])
    with pytest.raises(ValueError, match="cut.gz"):
        read_parallel_files(str(truncated), good)
