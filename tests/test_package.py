"""The package's top level: every module under tfm/ is `tfm.<name>`, every public name resolves, and
importing the package, its configs and its model registry starts no TensorFlow."""

import importlib
import os
import pkgutil
import subprocess
import sys

import pytest

import tfm
import tfm.models

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUBMODULES = sorted(m.name for m in pkgutil.iter_modules(tfm.__path__) if not m.name.startswith("_"))


def test_the_walk_sees_the_modules_a_hand_written_list_had_missed():
    assert {"parsing", "resume", "export_ctranslate2", "fidelity"} <= set(SUBMODULES)


@pytest.mark.parametrize("name", SUBMODULES)
def test_every_submodule_is_an_attribute_of_tfm(name):
    # The module-level __getattr__ is what `tfm.<name>` falls back on before the submodule is imported.
    assert tfm.__getattr__(name) is importlib.import_module(f"tfm.{name}")
    assert getattr(tfm, name) is sys.modules[f"tfm.{name}"]
    assert name in dir(tfm)


def test_a_fresh_interpreter_reaches_a_submodule_it_never_imported():
    probe = ("import sys, tfm\nassert 'tfm.parsing' not in sys.modules\n"
             "print(tfm.parsing.__name__, tfm.runs.resume.__name__)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tfm.parsing", "tfm.runs.resume"]


@pytest.mark.parametrize("module", [tfm, tfm.models], ids=["tfm", "tfm.models"])
def test_every_public_name_resolves(module):
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert not missing
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_seq2seq_config_has_one_home():
    from tfm.config import Seq2SeqConfig
    from tfm.models.seq2seq import Seq2SeqConfig as from_the_model_module

    assert tfm.Seq2SeqConfig is tfm.models.Seq2SeqConfig is from_the_model_module is Seq2SeqConfig
    assert Seq2SeqConfig.__module__ == "tfm.config"


def test_configs_and_the_model_registry_import_no_tensorflow():
    """`tfm --help` lists the registry's model names, so the registry must not start TensorFlow."""
    probe = ("import sys\nimport tfm, tfm.config, tfm.models\nfrom tfm.models.registry import MODELS\n"
             "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules), MODELS)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] ('transformer', 'seq2seq', 'bahdanau', 'luong')"
