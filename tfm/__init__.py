"""tfm: "Attention Is All You Need" (Vaswani et al., 2017) rebuilt on Keras 3 / TensorFlow.

Shape legend used in every docstring and shape comment:
    B batch, S source length, T target length, N heads, H head dim,
    D model dim, F feed-forward dim, V vocabulary.
"""

import os as _os

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

__version__ = "0.1.0"

from tfm import masks  # noqa: E402
from tfm.config import TransformerConfig  # noqa: E402
from tfm.layers import *  # noqa: E402,F401,F403
from tfm.layers import positional_encoding, scaled_dot_product_attention  # noqa: E402
from tfm.losses import LabelSmoothedCrossEntropy  # noqa: E402
from tfm.metrics import MaskedAccuracy  # noqa: E402
from tfm.models import Seq2Seq, Seq2SeqConfig, Transformer, build_seq2seq, build_transformer  # noqa: E402
from tfm.schedules import TransformerSchedule, build_optimizer  # noqa: E402
from tfm.training import average_checkpoints, load_run, train  # noqa: E402
