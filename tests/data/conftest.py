"""Shared, module-or-session scoped fixtures for the data tests (tokenizers are trained once)."""

import gzip
import os

import pytest


@pytest.fixture(scope="session")
def synthetic_texts():
    """Text of the generated tasks: number words (en, de) and NATO-word sequences."""
    from tfm.data.synthetic import number_words_pairs, sequence_task_pairs

    en, de = number_words_pairs("train", max_number=9999)
    words, reversed_words = sequence_task_pairs("train", num_examples=1000)
    return en[:2000] + de[:2000] + words


@pytest.fixture(scope="session")
def synthetic_tokenizer(synthetic_texts):
    from tfm.data.subword_tokenizer import train_tokenizer

    return train_tokenizer(synthetic_texts, vocab_size=200)


def read_gz_lines(path, limit=None):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [line.strip() for line in f]
    return lines[:limit] if limit else lines


@pytest.fixture(scope="session")
def multi30k_lines(multi30k_dir):
    """`lines(split_file, lang, limit)`: stripped lines of a cached Multi30k file, e.g. ("val", "de", 300)."""

    def lines(split_file, lang, limit=None):
        return read_gz_lines(os.path.join(multi30k_dir, "multi30k", f"{split_file}.{lang}.gz"), limit)

    return lines


@pytest.fixture(scope="session")
def multi30k_tokenizer(multi30k_lines):
    """A 1000-subword vocabulary learned from the first 3000 en + de training lines of Multi30k."""
    from tfm.data.subword_tokenizer import train_tokenizer

    return train_tokenizer(multi30k_lines("train", "en", 3000) + multi30k_lines("train", "de", 3000), vocab_size=1000)
