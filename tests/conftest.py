import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))

import keras  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _reset_keras_state():
    """Each test starts in float32 with a fixed seed."""
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(0)
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture(scope="session")
def multi30k_dir(tmp_path_factory):
    """A temporary TFM_DATA_DIR holding a copy of ../shared/data/multi30k, or skip."""
    import shutil

    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        os.environ.get("TFM_SHARED_MULTI30K", ""),
        os.path.join(here, "..", "..", "shared", "data", "multi30k"),
    ]
    for src in candidates:
        if src and os.path.isfile(os.path.join(src, "train.en.gz")):
            root = tmp_path_factory.mktemp("tfm_data")
            shutil.copytree(src, root / "multi30k")
            return str(root)
    pytest.skip("real Multi30k not found (expected ../shared/data/multi30k or $TFM_SHARED_MULTI30K)")


SHARED_TREEBANK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data",
                               "nltk_data", "corpora", "treebank.zip")


@pytest.fixture(scope="session")
def treebank_data_dir(tmp_path_factory):
    """A temporary TFM_DATA_DIR holding a copy of NLTK's Penn Treebank sample (nltk_data/corpora/treebank.zip),
    or skip."""
    import shutil

    if not os.path.isfile(SHARED_TREEBANK):
        pytest.skip(f"Penn Treebank sample not found at {os.path.normpath(SHARED_TREEBANK)}")
    root = tmp_path_factory.mktemp("tfm_ptb")
    os.makedirs(root / "nltk_data" / "corpora")
    shutil.copy(SHARED_TREEBANK, root / "nltk_data" / "corpora" / "treebank.zip")
    return str(root)
