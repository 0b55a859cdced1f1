import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from tfm.data.datasets import DATASET_NAMES, load_dataset


def first(dataset):
    source, target = next(iter(dataset))
    return source.numpy().decode(), target.numpy().decode()


def pairs(dataset):
    return [(source.decode(), target.decode()) for source, target in dataset.as_numpy_iterator()]


def test_generated_tasks():
    reverse = pairs(load_dataset("reverse", "train", num_examples=3))
    assert len(reverse) == 3 and all(target.split() == source.split()[::-1] for source, target in reverse)
    copy = pairs(load_dataset("copy", "test", num_examples=3))
    assert len(copy) == 3 and all(source == target for source, target in copy)
    en, de = first(load_dataset("numbers", "val", max_number=99, num_validation=5, num_test=5))
    de2, en2 = first(load_dataset("numbers", "val", source_lang="de", max_number=99, num_validation=5, num_test=5))
    assert (en, de) == (en2, de2)
    with pytest.raises(ValueError, match="has no languages"):
        load_dataset("reverse", source_lang="en")


def test_files(tmp_path):
    (tmp_path / "s.txt").write_text("hallo\n")
    (tmp_path / "t.txt").write_text("hello\n")
    dataset = load_dataset("files", source_path=str(tmp_path / "s.txt"), target_path=str(tmp_path / "t.txt"))
    assert first(dataset) == ("hallo", "hello")
    with pytest.raises(ValueError, match="target_path"):
        load_dataset("files", source_path=str(tmp_path / "s.txt"))


def test_multi30k(multi30k_dir, no_network):
    source, target = first(load_dataset("multi30k", "test", target_lang="fr", data_dir=multi30k_dir))
    assert source.startswith("A man in an orange hat") and target.startswith("Un homme")


def test_tfds(tmp_path):
    with tfds.testing.mock_data(num_examples=2):
        dataset = load_dataset("ted_hrlr_translate/pt_to_en", "validation", data_dir=str(tmp_path))
        assert [s.dtype for s in dataset.element_spec] == [tf.string, tf.string]


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError) as error:
        load_dataset("multi31k")
    for name in DATASET_NAMES:
        assert repr(name) in str(error.value)
