"""Where downloaded corpora live: one cache folder for every loader.

Resolution order: the `data_dir` argument, else the environment variable
`TFM_DATA_DIR`, else `data/cache` (under the project checkout when the package
runs from one, else under the current directory). Multi30k lands in
`<data_dir>/multi30k/`, TFDS builders in `<data_dir>/<builder>/<config>/<version>/`.
"""

import os

DATA_DIR_ENV = "TFM_DATA_DIR"


def _default_cache_dir():
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../tfm
    root = os.path.dirname(package_dir)
    if os.path.isfile(os.path.join(root, "pyproject.toml")) and os.path.isdir(os.path.join(root, "data")):
        return os.path.join(root, "data", "cache")
    return os.path.abspath(os.path.join("data", "cache"))


def resolve_data_dir(data_dir=None):
    """The cache folder to use, as an absolute path (not created here).

    Args:
        data_dir: str or path-like or None. Wins when given.

    Returns:
        str: `data_dir`, else `$TFM_DATA_DIR`, else the project's `data/cache`.

    Example:
        >>> resolve_data_dir("/srv/corpora")
        '/srv/corpora'
        >>> os.environ[DATA_DIR_ENV] = "/mnt/cache"
        >>> resolve_data_dir()
        '/mnt/cache'
        >>> del os.environ[DATA_DIR_ENV]
    """
    if data_dir is None or str(data_dir) == "":
        data_dir = os.environ.get(DATA_DIR_ENV) or _default_cache_dir()
    return os.path.abspath(os.path.expanduser(str(data_dir)))
