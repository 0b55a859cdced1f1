import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import sys

sys.path.insert(0, os.path.dirname(__file__))

import keras
import pytest


@pytest.fixture(autouse=True)
def _reset_keras_state():
    """Each test starts in float32 with a fixed seed."""
    keras.config.set_dtype_policy("float32")
    keras.utils.set_random_seed(0)
    yield
    keras.config.set_dtype_policy("float32")


# ---------------------------------------------------------------------------
# The number-words tokenizer and an untrained tiny Transformer over it: built once per session,
# shared by the decoding, export, evaluation and CTranslate2 tests (none of them trains or changes
# the model; a test that needs other sizes builds its own).
# ---------------------------------------------------------------------------
NUMBER_VOCAB = 70
TINY_MAX_LENGTH, TINY_EXTRA = 12, 4


@pytest.fixture(scope="session")
def number_pairs():
    """`(english, german)`: the generated number-words task's training pairs, numbers below 2000."""
    from tfm.data import number_words_pairs

    return number_words_pairs("train", max_number=2000)


@pytest.fixture(scope="session")
def number_tokenizer(number_pairs):
    """A 70-subword joint (en + de) SentencePiece vocabulary of the number-words task."""
    from tfm.data import train_tokenizer

    return train_tokenizer(list(zip(*number_pairs)), vocab_size=NUMBER_VOCAB)


@pytest.fixture(scope="session")
def tiny_transformer(number_tokenizer):
    """An untrained 1-layer `TransformerConfig.tiny` over `number_tokenizer` (seed 0, no dropout): sources cut
    at 12 subwords, outputs at most source length + 4."""
    import tfm
    from tfm.config import TransformerConfig

    keras.utils.set_random_seed(0)
    config = TransformerConfig.tiny(vocab_size=number_tokenizer.vocab_size, dropout=0.0, num_layers=1,
                                    max_length=TINY_MAX_LENGTH, extra_positions=TINY_EXTRA)
    return tfm.Transformer.from_preset(config)


SERVING_OPS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data_files", "serving_ops")


@pytest.fixture(scope="session")
def serving_ops():
    """Op types TF Serving can load: TensorFlow 2.12.1 core + tensorflow-text 2.12.1 (tests/data_files/serving_ops,
    its README says how they were obtained)."""
    ops = set()
    for name in ("tf_core_2.12.1_ops.txt", "tf_text_2.12.1_ops.txt"):
        with open(os.path.join(SERVING_OPS_DIR, name)) as f:
            ops |= set(f.read().split())
    return ops


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


@pytest.fixture(scope="session")
def biased_decodable():
    """`BiasedDecodable(model, bias)`: a model seen through `tfm.decoding` with `bias` (V,) added to every
    step's logits, so that an untrained model writes what a test needs it to write (the search, the cache
    and the dynamic shapes all stay real)."""
    import tensorflow as tf

    from tfm import decoding

    class BiasedDecodable(decoding.Decodable):
        def __init__(self, model, bias):
            self.inner = decoding.as_decodable(model)
            for name in ("vocab_size", "max_source_length", "max_steps", "default_max_extra_length"):
                setattr(self, name, getattr(self.inner, name))
            self.bias = tf.constant(bias, tf.float32)

        def start(self, *args, **kwargs):
            return self.inner.start(*args, **kwargs)

        def step(self, *args, **kwargs):
            logits, dynamic = self.inner.step(*args, **kwargs)
            return tf.cast(logits, tf.float32) + self.bias, dynamic

    return BiasedDecodable


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory):
    """A finished 2-epoch tiny run on the numbers task (keeps 5 checkpoints); damage only a `copy_run` of it."""
    from training_helper import RUN, small_recipe

    from tfm.training import train

    run_dir = str(tmp_path_factory.mktemp("finished") / "run")
    train(small_recipe(keep_checkpoints=5), "numbers", output=run_dir, epochs=2, **RUN)
    return run_dir


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a network connection fails the test (the data and treebank tests read caches only)."""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
