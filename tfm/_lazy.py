"""Lazy attributes for a package (PEP 562): names imported from their modules on first use.

    __getattr__, __dir__ = lazy_attributes(__name__, {"Transformer": "tfm.models.transformer"}, ("registry",))

One definition for `tfm`, `tfm.models` and `tfm.parsing`, so that importing a package starts
neither TensorFlow nor NLTK until a name that needs them is used.
"""

import importlib


def lazy_attributes(package, exports, submodules=()):
    """`(__getattr__, __dir__)` for the package named `package`.

    Args:
        package: str, the package's `__name__`.
        exports: dict, public name -> the full name of the module that defines it.
        submodules: names of the package's modules, reachable as `package.<name>`.
    """
    module = importlib.import_module(package)

    def __getattr__(name):
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(module, name, value)
        return value

    def __dir__():
        return sorted(set(vars(module)) | set(exports) | set(submodules))

    return __getattr__, __dir__
