"""Reserved token ids, as seen from `tfm.data` (defined once, in `tfm.special_tokens`)."""

from tfm.special_tokens import *  # noqa: F401,F403
from tfm.special_tokens import __all__  # noqa: F401
