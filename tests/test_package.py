"""The package's front: `tfm/__init__.py` names the public API by hand, every public name resolves and has an
example, internal modules are not `tfm.<name>`, the front door (`from_preset`, `Translator.from_run`,
`export_saved_model`) is there, no public signature takes a flag that changes its contract, and importing the
package, its configs and its model names starts no TensorFlow."""

import ast
import importlib
import inspect
import os
import pkgutil
import subprocess
import sys

import pytest

import tfm
import tfm.models

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC_NAMES = [name for name in tfm.__all__ if name != "__version__"]
# Parameters that made one function answer in two ways, or that existed only for a test.
RETIRED_PARAMETERS = {"return_report", "return_summary", "exact_limits"}


def every_module():
    return sorted(m.name for m in pkgutil.walk_packages(tfm.__path__, "tfm.") if not m.name.endswith("__main__"))


def test_the_public_names_are_written_by_hand():
    """No folder walk: a module is public because `tfm/__init__.py` says so, not because it exists."""
    tree = ast.parse(open(os.path.join(ROOT, "tfm", "__init__.py")).read())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {"pkgutil", "iter_modules", "walk_packages"} & imported
    assert {"Transformer", "Seq2Seq", "Translator", "train", "export_saved_model"} <= set(tfm.__all__)


@pytest.mark.parametrize("name", PUBLIC_NAMES)
def test_every_public_name_resolves_and_has_an_example(name):
    value = getattr(tfm, name)
    assert name in dir(tfm)
    doc = inspect.getdoc(value) or ""
    assert "Example:" in doc and ">>> " in doc, f"tfm.{name} has no Example: block"


@pytest.mark.parametrize("name", ["config", "data", "layers", "models", "runs", "decoding", "parsing", "training",
                                  "serving", "viz", "exercises"])
def test_the_public_subpackages_are_attributes(name):
    assert getattr(tfm, name) is importlib.import_module(f"tfm.{name}")
    assert name in dir(tfm)


@pytest.mark.parametrize("name", ["atomic", "cli_arguments", "run_history", "text_rule", "masks"])
def test_internal_and_retired_modules_are_not_tfm_attributes(name):
    with pytest.raises(AttributeError, match=f"no attribute '{name}'"):
        getattr(tfm, name)


@pytest.mark.parametrize("module", [tfm, tfm.models], ids=["tfm", "tfm.models"])
def test_an_unknown_name_is_an_attribute_error(module):
    missing = [name for name in module.__all__ if getattr(module, name, None) is None]
    assert not missing
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018  (the lookup is the test: it must raise)


def test_the_front_door_builds_and_runs_a_model():
    import keras

    model = tfm.Transformer.from_preset("tiny", vocab_size=40, num_layers=1)
    assert model.built and model.config.num_layers == 1 and model.config.d_model == 64
    logits = model((keras.ops.array([[5, 6, 0]]), keras.ops.array([[2, 7]])))
    assert tuple(logits.shape) == (1, 2, 40)
    same = tfm.Transformer.from_preset(tfm.TransformerConfig.tiny(vocab_size=40, num_layers=1))
    assert same.config == model.config
    rnn = tfm.Seq2Seq.from_preset("bahdanau", vocab_size=40, units=8, embedding_dim=8)
    assert rnn.built and rnn.config.attention == "bahdanau"
    with pytest.raises(ValueError, match="preset='huge'"):
        tfm.Transformer.from_preset("huge")
    with pytest.raises(TypeError, match="got a Seq2SeqConfig, this class takes a TransformerConfig; "
                                        r"tfm\.models\.model_class\(config\)"):
        tfm.Transformer.from_preset(tfm.Seq2SeqConfig.tiny())


def test_every_builder_takes_a_preset_name_or_a_config():
    assert tfm.Transformer.from_preset("tiny").config == tfm.Transformer(tfm.TransformerConfig.tiny()).config
    assert tfm.build_optimizer("tiny").beta_2 == tfm.build_optimizer(tfm.Recipe.preset("tiny")).beta_2 == 0.98
    assert tfm.train.__defaults__ == ("tiny", None, None)  # train(model="tiny", data=None, training=None, ...)


def test_the_run_and_export_entry_points_exist():
    assert callable(tfm.Translator.from_run)
    assert callable(tfm.export_saved_model) and callable(tfm.export_ctranslate2)
    for translator in (tfm.Translator, tfm.SavedModelTranslator, tfm.CTranslate2Translator):
        assert {"translate", "translate_with_scores"} <= set(dir(translator)), translator


def test_no_public_signature_takes_a_retired_parameter():
    offending = []
    for name in every_module():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.startswith("_") or getattr(value, "__module__", None) != name:
                continue
            functions = [value] if inspect.isfunction(value) else []
            if inspect.isclass(value):
                functions = [f for n, f in vars(value).items()
                             if inspect.isfunction(f) and (not n.startswith("_") or n == "__init__")]
            for function in functions:
                retired = RETIRED_PARAMETERS & set(inspect.signature(function).parameters)
                if retired:
                    offending.append(f"{name}.{attr}.{function.__name__}: {sorted(retired)}")
    assert not offending, offending


def test_seq2seq_config_has_one_home():
    from tfm.config import Seq2SeqConfig

    assert tfm.Seq2SeqConfig is Seq2SeqConfig and not hasattr(tfm.models, "Seq2SeqConfig")
    assert Seq2SeqConfig.__module__ == "tfm.config.configs"


def test_configs_and_the_model_names_import_no_tensorflow():
    """`tfm --help` lists the model names and presets, so `tfm.config` must not start TensorFlow."""
    probe = ("import sys\nimport tfm, tfm.config, tfm.models, tfm.runs, tfm.training, tfm.serving, tfm.viz\n"
             "from tfm.config import MODELS\n"
             "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules), MODELS)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] ('transformer', 'seq2seq', 'bahdanau', 'luong')"


def test_a_fresh_interpreter_reaches_a_subpackage_it_never_imported():
    probe = ("import sys, tfm\nassert 'tfm.parsing' not in sys.modules\n"
             "print(tfm.parsing.__name__, tfm.runs.resume.__name__)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tfm.parsing", "tfm.runs.resume"]


def test_reading_or_refusing_a_run_record_imports_no_tensorflow(tmp_path):
    """`read_run_config` answers in milliseconds: a CLI refusal of a wrong run folder starts no TensorFlow (it took
    ~5 s when the run record imported the tokenizer's module at the top)."""
    (tmp_path / "notarun").mkdir()
    probe = ("import sys\nfrom tfm.runs import read_run_config\n"
             f"try:\n    read_run_config({str(tmp_path / 'notarun')!r})\nexcept FileNotFoundError as error:\n"
             "    print('refused:', 'not a tfm run folder' in str(error))\n"
             "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["refused: True", "[]"]
