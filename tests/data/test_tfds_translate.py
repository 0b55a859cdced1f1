import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

from tfm.data.tfds_translate import TFDS_NAMES, config_langs, load_tfds_translate


@pytest.fixture(scope="module")
def mock_tfds():
    with tfds.testing.mock_data(num_examples=4):
        yield


def test_config_langs():
    assert config_langs("wmt14_translate/de-en") == ("de", "en")
    assert config_langs("ted_hrlr_translate/pt_to_en") == ("pt", "en")


@pytest.mark.parametrize("name", TFDS_NAMES)
def test_builders_give_string_pairs(mock_tfds, name, tmp_path):
    dataset = load_tfds_translate(name, "train", data_dir=str(tmp_path))
    assert [s.dtype for s in dataset.element_spec] == [tf.string, tf.string]
    assert [s.shape.rank for s in dataset.element_spec] == [0, 0]
    assert len(list(dataset)) == 4


def test_language_selection_swaps_the_pair(mock_tfds, tmp_path):
    name = "wmt14_translate/de-en"
    de_en = list(load_tfds_translate(name, "val", data_dir=str(tmp_path)).as_numpy_iterator())
    en_de = list(load_tfds_translate(name, "val", source_lang="en", data_dir=str(tmp_path)).as_numpy_iterator())
    assert en_de == [(t, s) for s, t in de_en]
    also_en_de = load_tfds_translate(name, "val", target_lang="de", data_dir=str(tmp_path))
    assert list(also_en_de.as_numpy_iterator()) == en_de


def test_errors_name_the_bad_value():
    with pytest.raises(ValueError, match="source_lang='fr'"):
        load_tfds_translate("wmt14_translate/de-en", source_lang="fr")
    with pytest.raises(ValueError, match="name='wmt19_translate/de-en'"):
        load_tfds_translate("wmt19_translate/de-en")
    with pytest.raises(ValueError, match="both 'en'"):
        load_tfds_translate("ted_hrlr_translate/pt_to_en", source_lang="en", target_lang="en")
