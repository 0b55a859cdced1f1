"""tfm: "Attention Is All You Need" (Vaswani et al., 2017) rebuilt on Keras 3 / TensorFlow.

Shape legend used in every docstring and shape comment:
    B batch, S source length, T target length, N heads, H head dim,
    D model dim, F feed-forward dim, V vocabulary.
"""

import os as _os

_os.environ.setdefault("KERAS_BACKEND", "tensorflow")
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

__version__ = "0.1.0"

from tfm.layers.scaled_dot_product_attention import scaled_dot_product_attention  # noqa: E402
