import os
import shutil

import keras
import pytest

from tfm.data import multi30k

EXPECTED_SIZES = {"train": 29_000, "validation": 1_014, "test": 1_000}


def test_reads_the_preplaced_cache_without_network(multi30k_dir, no_network):
    for split, size in EXPECTED_SIZES.items():
        dataset, summary = multi30k.load_multi30k_with_summary(split, "en", "de", data_dir=multi30k_dir)
        assert (summary.num_lines, summary.num_pairs) == (size, size)
        assert summary.source_path == os.path.join(multi30k_dir, "multi30k", f"{multi30k.SPLIT_FILES[split]}.en.gz")
    first = next(iter(multi30k.load_multi30k("train", "de", "fr", data_dir=multi30k_dir)))
    assert first[0].numpy().decode().startswith("Zwei junge weiße Männer")


def test_get_file_is_used_and_stays_offline_when_files_are_present(multi30k_dir, no_network, monkeypatch):
    calls = []
    real_get_file = keras.utils.get_file

    def spy(**kwargs):
        calls.append(kwargs)
        return real_get_file(**kwargs)

    monkeypatch.setattr(keras.utils, "get_file", spy)
    paths = multi30k.download_multi30k(multi30k_dir, langs=("en", "de", "fr"))
    assert len(paths) == len(calls) == 9
    assert paths[("test", "fr")] == os.path.join(multi30k_dir, "multi30k", "test_2016_flickr.fr.gz")
    assert calls[0]["origin"] == ("https://raw.githubusercontent.com/multi30k/dataset/master/"
                                  "data/task1/raw/train.en.gz")
    assert calls[0]["cache_dir"] == multi30k_dir and calls[0]["cache_subdir"] == "multi30k"


def test_missing_file_is_downloaded_with_get_file_into_the_cache(multi30k_dir, tmp_path, monkeypatch):
    origins = []

    def fake_download(fname, origin, cache_dir, cache_subdir):  # what get_file does, from a local copy
        origins.append(origin)
        os.makedirs(os.path.join(cache_dir, cache_subdir), exist_ok=True)
        target = os.path.join(cache_dir, cache_subdir, fname)
        shutil.copy(os.path.join(multi30k_dir, "multi30k", fname), target)
        return target

    monkeypatch.setattr(keras.utils, "get_file", fake_download)
    monkeypatch.setenv("TFM_DATA_DIR", str(tmp_path / "fresh"))  # no data_dir: the env var decides
    path = multi30k.multi30k_file("val", "de")
    assert path == str(tmp_path / "fresh" / "multi30k" / "val.de.gz")
    assert origins == ["https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw/val.de.gz"]


def test_download_failure_explains_the_offline_route(tmp_path, monkeypatch):
    def fail(**kwargs):
        raise Exception("URL fetch failure")

    monkeypatch.setattr(keras.utils, "get_file", fail)
    with pytest.raises(RuntimeError, match="copy the Multi30k raw .gz files"):
        multi30k.multi30k_file("train", "en", data_dir=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="download=False"):
        multi30k.multi30k_file("train", "en", data_dir=str(tmp_path), download=False)


def test_bad_arguments_name_the_value(tmp_path):
    with pytest.raises(ValueError, match="lang='cs'"):
        multi30k.multi30k_file("train", "cs", data_dir=str(tmp_path))
    with pytest.raises(ValueError, match="split='test_2017'"):
        multi30k.multi30k_file("test_2017", "en", data_dir=str(tmp_path))
    with pytest.raises(ValueError, match="both 'en'"):
        multi30k.load_multi30k("train", "en", "en", data_dir=str(tmp_path))
