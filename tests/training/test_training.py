"""tfm.training: run folders, resuming, strategies, checkpoint averaging, `--set` parsing."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import keras
import numpy as np
import pytest
from training_helper import copy_run, free_ports, stop_inside_second_epoch

import tfm
from tfm.cli import commands as cli
from tfm.cli.arguments import train_recipe
from tfm.config import Recipe, Seq2SeqConfig, TransformerConfig, apply_overrides, model_name, parse_overrides
from tfm.decoding import Translator
from tfm.models.seq2seq import Seq2Seq
from tfm.models.transformer import Transformer
from tfm.runs import epoch_checkpoints, latest_checkpoint, read_history, read_run_config, weights_path
from tfm.training import train
from tfm.training.averaging import average_checkpoints
from tfm.training.callbacks import HistoryCSV, NaNGuard

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# A recipe small enough for 2 shared CPU cores; no dropout, so strategies can be compared.
SMALL = dict(num_layers=1, d_model=32, num_heads=2, d_ff=64, dropout=0.0, subwords=100, warmup_steps=60,
             tokens_per_batch=512, max_length=32, max_pair_length=32, steps_per_epoch=4, keep_checkpoints=3,
             validation=True)
RUN = dict(epochs=3, verbose=0)
SET_SMALL = [arg for key in ("num_layers", "d_model", "num_heads", "d_ff", "dropout", "warmup_steps")
             for arg in ("--set", f"{key}={SMALL[key]}")]


def small(**fields):
    """The tiny recipe at `SMALL`'s sizes, with `fields` changed (in whichever part holds each)."""
    return Recipe.preset("tiny", **{**SMALL, **fields})
CHILD_TIMEOUT = 300


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A finished 3-epoch run on the generated numbers task (single device); also the reference losses."""
    run_dir = str(tmp_path_factory.mktemp("training") / "run")
    result = train(small(), "numbers", output=run_dir, strategy="default", **RUN)
    return run_dir, result





# Run folder ------------------------------------------------------------------
def test_run_folder_contract(tiny_run):
    run_dir, result = tiny_run
    info = read_run_config(run_dir)
    assert info["format"] == 2 and info["model_name"] == "transformer" and info["tfm_version"]
    assert set(info) == {"tfm_version", "format", "model_name", "model", "data", "training", "decoding"}
    assert set(info["data"]) >= {"dataset", "source_lang", "target_lang", "data_dir", "max_pair_length", "subwords"}
    assert info["data"]["dataset"] == "numbers" and info["training"]["tokens_per_batch"] == 512
    assert info["model"]["vocab_size"] == result.tokenizer.vocab_size == result.recipe.model.vocab_size
    assert Recipe.from_record(info) == result.recipe
    assert [epoch for epoch, _ in epoch_checkpoints(run_dir)] == [1, 2, 3]
    assert latest_checkpoint(run_dir).endswith(os.path.join("checkpoints", "epoch_003.weights.h5"))
    history = read_history(run_dir)
    assert history["epoch"] == [0, 1, 2]
    assert history["iterations"] == [4, 8, 12]
    assert {"loss", "accuracy", "val_loss", "val_accuracy", "learning_rate", "epoch_seconds"} <= set(history)
    assert history["loss"] == pytest.approx(result.history["loss"])
    assert history["loss"][-1] < history["loss"][0]
    model = Transformer.from_preset(run_dir)  # no averaged weights: the latest epoch's
    assert weights_path(run_dir) == latest_checkpoint(run_dir) and model.config == result.recipe.model
    for got, want in zip(model.get_weights(), result.model.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_from_preset_of_a_run_has_the_weights_the_translator_uses(tiny_run, tmp_path):
    """Issue 49's check: `tfm.Transformer.from_preset(RUN)` on a freshly trained tiny run returns the weights that
    `tfm.Translator.from_run(RUN, checkpoint="latest")` uses; with averaged weights both take those."""
    run_dir = copy_run(tiny_run[0], tmp_path)
    model = tfm.Transformer.from_preset(run_dir)
    translator = tfm.Translator.from_run(run_dir, checkpoint="latest")
    assert len(model.get_weights()) == len(translator.model.get_weights())
    for got, want in zip(model.get_weights(), translator.model.get_weights()):
        np.testing.assert_array_equal(got, want)
    recipe = tiny_run[1].recipe
    assert (translator.beam_size, translator.alpha, translator.max_extra_length) == (
        recipe.decoding.beam_size, recipe.decoding.length_penalty, recipe.decoding.max_extra_length)
    assert translator.tokenizer.vocab_size == model.config.vocab_size
    average_checkpoints(run_dir, last=2)
    averaged = tfm.Transformer.from_preset(run_dir)
    by_default = Translator.from_run(run_dir)  # the same rule: averaged when present
    for got, want in zip(averaged.get_weights(), by_default.model.get_weights()):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(averaged.get_weights()[0], model.get_weights()[0])
    with pytest.raises(TypeError, match="holds a transformer model"):
        Seq2Seq.from_preset(run_dir)
    with pytest.raises(ValueError, match="built as it was trained"):
        Transformer.from_preset(run_dir, num_layers=2)


def test_a_current_run_folder_is_read_without_a_format_note(tiny_run, tmp_path, caplog):
    """Only a folder of format 1 is logged as converted; a current one (format 2, any dataset) gets no note."""
    with caplog.at_level("INFO", logger="tfm.runs"):
        read_run_config(tiny_run[0])
    assert "format" not in caplog.text
    run_dir = copy_run(tiny_run[0], tmp_path)
    with open(os.path.join(run_dir, "config.json")) as f:
        record = json.load(f)
    old = {"tfm_version": "0.1.0", "format": 1, "model": "transformer", "model_config": record["model"],
           "data": {**record["data"], "vocab_size": record["data"]["subwords"]}, "training": record["training"]}
    with open(os.path.join(run_dir, "config.json"), "w") as f:
        json.dump(old, f)
    with caplog.at_level("INFO", logger="tfm.runs"):
        read_run_config(run_dir)
    assert "format 1 (tfm 0.1.0), read as format 2" in caplog.text


def test_a_run_folder_of_format_1_loads_and_resumes(tiny_run, tmp_path):
    """A run folder written by tfm before the config split (config.json format 1, built here by hand as
    `run_record` wrote it then) loads with the same settings and weights, and resumes."""
    run_dir = copy_run(tiny_run[0], tmp_path)
    recipe = tiny_run[1].recipe
    m, d, t, dec = recipe.model, recipe.data, recipe.training, recipe.decoding
    model_config = {**{k: v for k, v in m.to_dict().items() if k != "extra_positions"},
                    "label_smoothing": t.label_smoothing, "rdrop_alpha": t.rdrop_alpha,
                    "warmup_steps": t.warmup_steps, "learning_rate_scale": t.learning_rate_scale,
                    "adam_beta_1": t.adam_beta_1, "adam_beta_2": t.adam_beta_2, "adam_epsilon": t.adam_epsilon,
                    "tokens_per_batch": t.tokens_per_batch, "beam_size": dec.beam_size,
                    "length_penalty": dec.length_penalty, "max_extra_length": dec.max_extra_length,
                    "checkpoints_to_average": dec.checkpoints_to_average, "preprocess": d.preprocess}
    data = {"dataset": d.dataset, "source_lang": d.source_lang, "target_lang": d.target_lang, "data_dir": d.data_dir,
            "source_file": None, "target_file": None, "max_length": d.max_pair_length,
            "tokens_per_batch": t.tokens_per_batch, "vocab_size": m.vocab_size, "preprocess": d.preprocess,
            "train_sentences": d.train_sentences}
    training = {"seed": t.seed, "keep_checkpoints": t.keep_checkpoints, "label_smoothing": t.label_smoothing,
                "rdrop_alpha": t.rdrop_alpha, "strategy": "_DefaultDistributionStrategy",
                "mixed_precision": t.mixed_precision, "xla": t.xla, "steps_per_epoch": t.steps_per_epoch}
    old = {"tfm_version": "0.1.0", "format": 1, "model": "transformer", "model_config": model_config, "data": data,
           "training": training}
    with open(os.path.join(run_dir, "config.json"), "w") as f:
        json.dump(old, f)
    # Read as the same recipe, but for the subwords asked for (format 1 kept the learned size only).
    assert Recipe.from_record(read_run_config(run_dir)) == recipe.replace(subwords=m.vocab_size)
    model = Transformer.from_preset(run_dir)
    for got, want in zip(model.get_weights(), tiny_run[1].model.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    more = train(small(subwords=m.vocab_size), "numbers", output=run_dir, strategy="default", **{**RUN, "epochs": 4})
    assert more.initial_epoch == 3 and more.epochs == 4
    with pytest.raises(ValueError, match=r"model\.num_heads: run has 2, now 1"):
        train(small(subwords=m.vocab_size, num_heads=1), "numbers", output=run_dir, **RUN)


def test_an_unknown_dataset_is_refused_before_a_folder_is_made(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown dataset name='wmt99'"):
        train(small(), "wmt99", output=str(tmp_path / "run"), **RUN)
    assert not (tmp_path / "run").exists()
    assert cli.main(["train", "--dataset", "wmt99", "--output", str(tmp_path / "cli")]) == 1
    assert "unknown dataset name='wmt99'" in capsys.readouterr().err
    assert not (tmp_path / "cli").exists()


def test_a_first_session_that_fails_before_its_config_leaves_no_folder(tmp_path, monkeypatch, capsys):
    """A corpus that cannot be read (Multi30k offline, the default of `--preset m30k_small`) fails after the lock
    made the folder: the folder goes with the failure, unless it was there before (the user's, kept)."""
    import tfm.training.trainer as trainer

    def unreadable(data, split):
        raise OSError(f"could not download {data.dataset} ({split}): offline")

    monkeypatch.setattr(trainer, "load_pairs", unreadable)
    with pytest.raises(OSError, match="could not download numbers"):
        train(small(), "numbers", output=str(tmp_path / "run"), **RUN)
    assert not (tmp_path / "run").exists()
    assert cli.main(["train", "--preset", "m30k_small", "--output", str(tmp_path / "cli")]) == 1
    assert "could not download multi30k (train): offline" in capsys.readouterr().err
    assert not (tmp_path / "cli").exists()
    (tmp_path / "mine").mkdir()
    with pytest.raises(OSError):
        train(small(), "numbers", output=str(tmp_path / "mine"), **RUN)
    assert (tmp_path / "mine").is_dir()


def test_rerun_resumes_and_extends(tiny_run, tmp_path):
    run_dir = copy_run(tiny_run[0], tmp_path)
    done = train(small(), "numbers", output=run_dir, strategy="default", **RUN)
    assert done.history == {} and done.initial_epoch == 3 and done.epochs == 3  # nothing left to train
    more = train(small(), "numbers", output=run_dir, strategy="default", **{**RUN, "epochs": 4})
    assert more.initial_epoch == 3 and more.epochs == 4 and len(more.history["loss"]) == 1
    history = read_history(run_dir)
    assert history["epoch"] == [0, 1, 2, 3] and history["iterations"] == [4, 8, 12, 16]
    assert [epoch for epoch, _ in epoch_checkpoints(run_dir)] == [2, 3, 4]  # keeps the last 3
    # Without the backup (deleted by hand) the run continues from its newest checkpoint, at the same step.
    shutil.rmtree(os.path.join(run_dir, "backup"))
    train(small(), "numbers", output=run_dir, strategy="default", **{**RUN, "epochs": 5})
    history = read_history(run_dir)
    assert history["epoch"] == [0, 1, 2, 3, 4] and history["iterations"] == [4, 8, 12, 16, 20]

    # An extra callback runs after the run folder's own (it finds the epoch's checkpoint) and may stop the run.
    class StopAfterOne(keras.callbacks.Callback):
        seen = []

        def on_epoch_end(self, epoch, logs=None):
            self.seen.append((epoch, [e for e, _ in epoch_checkpoints(run_dir)][-1]))
            self.model.stop_training = True

    stopped = train(small(), "numbers", output=run_dir, strategy="default",
                    **{**RUN, "epochs": 8}, callbacks=[StopAfterOne()])
    assert StopAfterOne.seen == [(5, 6)] and stopped.epochs == 6
    assert read_history(run_dir)["epoch"] == [0, 1, 2, 3, 4, 5]


def test_resumed_run_draws_new_batches_and_masks(tmp_path):
    # With a learning rate of ~0 the weights stay put, so an epoch's loss depends only on its
    # batches and dropout masks: a resumed epoch must not replay the first epoch's.
    recipe = small(dropout=0.3, learning_rate_scale=1e-12)
    run = dict(RUN, output=str(tmp_path / "run"), strategy="default")
    first = train(recipe, **{**run, "epochs": 1}).history["loss"][0]
    resumed = train(recipe, **{**run, "epochs": 2}).history["loss"][0]
    again = train(recipe, output=str(tmp_path / "again"), strategy="default", **{**RUN, "epochs": 1})
    assert again.history["loss"][0] == pytest.approx(first, abs=1e-6)  # a fresh run is reproducible
    assert abs(resumed - first) > 1e-3, (first, resumed)


@pytest.fixture
def numbers_files(tmp_path):
    """24 number-word pairs as a "files" corpus (the fields of its recipe): one pass is a few batches of 128
    tokens."""
    from tfm.data.synthetic import number_words_pairs

    en, de = number_words_pairs("validation", max_number=999, num_validation=24, num_test=5)
    (tmp_path / "train.en").write_text("\n".join(en) + "\n")
    (tmp_path / "train.de").write_text("\n".join(de) + "\n")
    return dict(dataset="files", source_file=str(tmp_path / "train.en"), target_file=str(tmp_path / "train.de"),
                tokens_per_batch=128, steps_per_epoch=None)


def _state(model):
    """Weights and optimizer variables (Adam's step counter, moments) as NumPy arrays, by path
    (the optimizer's own name, "adam_2", differs from one session to the next)."""
    state = {v.path: np.array(v) for v in model.weights}
    state.update({"optimizer/" + v.path.split("/", 1)[-1]: np.array(v) for v in model.optimizer.variables})
    return state


def _assert_same_state(got, want):
    assert got.keys() == want.keys()
    for path in want:
        np.testing.assert_array_equal(got[path], want[path], err_msg=path)


def test_killed_and_resumed_run_equals_the_uninterrupted_one(numbers_files, tmp_path):
    """The state a resumed session starts from is the one the first session ended with (weights, Adam's moments
    and step counter), and the run goes on to the uninterrupted run's weights and history (loss, learning rate,
    iterations). tests/training/test_exact_resume.py does the same with dropout, token dropout and a SIGTERM.
    """
    recipe = small(**numbers_files)  # dropout=0.0
    straight = train(recipe, output=str(tmp_path / "straight"), epochs=2, strategy="default", verbose=0)

    class FirstStep(keras.callbacks.Callback):
        """The state at the first step of the resumed session (restored before `fit`)."""
        state = None

        def on_train_batch_begin(self, batch, logs=None):
            if self.state is None:
                self.state = _state(self.model)

    first = train(recipe, output=str(tmp_path / "resumed"), epochs=1, strategy="default", verbose=0)
    steps = int(first.model.optimizer.iterations)
    assert steps >= 3  # a few batches per epoch
    first_step = FirstStep()
    resumed = train(recipe, output=str(tmp_path / "resumed"), epochs=2, callbacks=[first_step], strategy="default",
                    verbose=0)
    assert resumed.initial_epoch == 1 and resumed.epochs == 2
    _assert_same_state(first_step.state, _state(first.model))  # restored exactly, moments and step included
    _assert_same_state(_state(resumed.model), _state(straight.model))
    assert int(resumed.model.optimizer.iterations) == 2 * steps
    a, b = read_history(str(tmp_path / "straight")), read_history(str(tmp_path / "resumed"))
    for column in ("epoch", "iterations", "learning_rate", "loss", "accuracy"):
        assert a[column] == b[column], column
    assert a["iterations"] == [steps, 2 * steps]


def test_seq2seq_baseline_trains_loads_and_resumes_from_either_entry_point(numbers_files, tmp_path):
    """`train(Seq2SeqConfig.tiny())` and `tfm train --model bahdanau --preset tiny` are the same run."""
    assert Recipe.for_model(Seq2SeqConfig.tiny()) == Recipe.preset("tiny", model="bahdanau")  # the same recipe
    sizes = dict(embedding_dim=8, units=16, attention_units=16)  # see test_set_on_a_seq2seq_preset_...
    files = {**numbers_files, "steps_per_epoch": 2}
    from_python = Recipe.for_model(Seq2SeqConfig.tiny(**sizes)).replace(**files)
    from_cli = apply_overrides(Recipe.preset("tiny", model="bahdanau"),
                               [f"{key}={value}" for key, value in sizes.items()]).replace(**files)
    assert from_cli == from_python
    run = dict(output=str(tmp_path / "run"), strategy="default", verbose=0)
    first = train(from_python, epochs=1, **run)
    info = read_run_config(run["output"])
    assert info["model_name"] == "bahdanau" and info["data"]["max_pair_length"] == 64
    assert info["training"]["learning_rate"] == 1e-3 and info["training"]["clipnorm"] == 1.0
    translator = Translator.from_run(run["output"])
    model = translator.model
    assert isinstance(model, Seq2Seq) and model.config == first.recipe.model
    assert translator.tokenizer.vocab_size == first.tokenizer.vocab_size == first.recipe.model.vocab_size
    for got, want in zip(model.get_weights(), first.model.get_weights()):
        np.testing.assert_array_equal(got, want)
    resumed = train(from_cli, epochs=2, **run)  # the other entry point's recipe: accepted as the same run
    assert resumed.initial_epoch == 1 and resumed.epochs == 2
    assert read_history(run["output"])["iterations"] == [2, 4]


def test_different_config_is_refused_naming_fields(tiny_run):
    run_dir, _ = tiny_run
    with pytest.raises(ValueError, match=r"model\.dropout: run has 0\.0, now 0\.2") as error:
        train(small(dropout=0.2), output=run_dir, **RUN)
    assert "model.num_layers" not in str(error.value)
    with pytest.raises(ValueError, match=r"training\.tokens_per_batch: run has 512, now 256"):
        train(small(tokens_per_batch=256), output=run_dir, **RUN)
    with pytest.raises(ValueError, match=r"data\.dataset: run has 'numbers', now 'reverse'"):
        train(small(), "reverse", output=run_dir, **RUN)


def test_other_format_and_foreign_folder_refused(tiny_run, tmp_path):
    other = tmp_path / "old"
    other.mkdir()
    info = read_run_config(tiny_run[0])
    (other / "config.json").write_text(json.dumps({**info, "format": 3}))
    with pytest.raises(ValueError, match="format 3.*reads formats 1 and 2"):
        train(small(), output=str(other), **RUN)
    with pytest.raises(ValueError, match="format 3"):
        Transformer.from_preset(str(other))
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("...")
    with pytest.raises(FileExistsError, match="not a tfm run folder"):
        train(small(), output=str(foreign), strategy="default", **RUN)


def test_mixed_precision_and_xla(tmp_path):
    run_dir = str(tmp_path / "run")
    result = train(small(mixed_precision=True, xla=True, validation=False, steps_per_epoch=1), output=run_dir,
                   strategy="default", **{**RUN, "epochs": 1})
    assert result.model.dtype_policy.name == "mixed_bfloat16" and result.model.jit_compile  # no GPU here
    assert keras.config.dtype_policy().name == "float32"  # the global policy is restored
    assert np.isfinite(result.history["loss"][0])
    model = Transformer.from_preset(run_dir)  # weights-only float32 checkpoints load into a float32 model
    for got, want in zip(model.get_weights(), result.model.get_weights()):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


# Checkpoint averaging ----------------------------------------------------------
def test_average_equals_numpy_mean_and_is_loaded_first(tiny_run, tmp_path):
    run_dir = copy_run(tiny_run[0], tmp_path)
    per_epoch = [Transformer.from_preset(run_dir, checkpoint=epoch).get_weights() for epoch in (2, 3)]
    path = average_checkpoints(run_dir, last=2)
    assert path == os.path.join(run_dir, "checkpoints", "averaged.weights.h5")
    with open(os.path.join(run_dir, "checkpoints", "averaged.weights.h5.averaging.json")) as f:
        assert json.load(f)["epochs"] == [2, 3]
    model = Transformer.from_preset(run_dir)  # the averaged checkpoint wins over the latest
    assert weights_path(run_dir) == path
    for got, a, b in zip(model.get_weights(), *per_epoch):
        np.testing.assert_allclose(got, (a.astype(np.float64) + b) / 2, rtol=1e-6, atol=1e-7)
    assert latest_checkpoint(run_dir).endswith("epoch_003.weights.h5")  # averaged is no epoch checkpoint


def test_average_asking_too_many_says_how_many(tiny_run, capsys):
    run_dir, _ = tiny_run
    with pytest.raises(ValueError, match=r"last 5 checkpoints: .* has 3 \(epoch_001.weights.h5"):
        average_checkpoints(run_dir, last=5)
    assert cli.main(["average", "--run", run_dir, "--last", "4"]) == 1
    assert "has 3" in capsys.readouterr().err


def test_average_chosen_epochs_equals_numpy_mean(tiny_run, tmp_path):
    run_dir = copy_run(tiny_run[0], tmp_path)
    first, third = (Transformer.from_preset(run_dir, checkpoint=epoch).get_weights() for epoch in (1, 3))
    output = str(tmp_path / "best.weights.h5")
    average_checkpoints(run_dir, epochs=[3, 1], output=output)  # e.g. the best two on validation
    with open(str(tmp_path / "best.weights.h5.averaging.json")) as f:  # named after the whole file name
        assert json.load(f)["epochs"] == [1, 3]
    assert not os.path.exists(tmp_path / "best.json")
    model = Transformer.from_preset(run_dir, checkpoint=output)
    for got, a, b in zip(model.get_weights(), first, third):
        np.testing.assert_allclose(got, (a.astype(np.float64) + b) / 2, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=r"no checkpoint of epoch\(s\) \[7\]; it has \[1, 2, 3\]"):
        average_checkpoints(run_dir, epochs=[1, 7])
    with pytest.raises(ValueError, match="give one of them"):
        average_checkpoints(run_dir, last=2, epochs=[1])


# --set and configs ---------------------------------------------------------------
def test_set_overrides_are_typed():
    values = parse_overrides(TransformerConfig, ["dropout=0.2", "num_layers=3", "key_dim=none",
                                                 "norm_first=true", "positional=learned", "dropout=0.3"])
    assert values == {"dropout": 0.3, "num_layers": 3, "key_dim": None, "norm_first": True,
                      "positional": "learned"}
    parser = cli.build_parser()
    recipe = train_recipe(parser.parse_args(["train", "--output", "r", "--set", "num_heads=2", "--vocab-size", "300",
                                             "--max-length", "48", "--tokens-per-batch", "999"]))
    assert (recipe.model.num_heads, recipe.data.subwords, recipe.model.max_length, recipe.data.max_pair_length,
            recipe.training.tokens_per_batch) == (2, 300, 48, 48, 999)
    luong = train_recipe(parser.parse_args(["train", "--output", "r", "--model", "luong", "--set", "units=32"]))
    assert luong.model_name == "luong" and luong.model.units == 32 and luong.model.vocab_size == 1000
    assert model_name(Recipe.preset("base", model="seq2seq").model) == "seq2seq"


@pytest.mark.parametrize("override, argument", [("units=16", dict(units=16)),
                                                ("attention=luong", dict(attention="luong")),
                                                ("attention=none", dict(attention=None))])
def test_set_on_a_seq2seq_preset_equals_the_python_preset(override, argument):
    """`tfm train --model bahdanau --preset tiny --set units=16` must build `Seq2SeqConfig.tiny(units=16)`:
    the attention width follows the units, Luong gets its "general" score, no attention takes no score.
    (Fails today: Seq2SeqConfig stores its resolved `score` and `attention_units`, and the
    `dataclasses.replace` of `apply_overrides` carries the preset's resolved values over.)"""
    assert apply_overrides(Recipe.preset("tiny", model="bahdanau"), [override]).model == Seq2SeqConfig.tiny(**argument)


@pytest.mark.parametrize("item, message", [
    ("dropuot=0.2", r"no part of the recipe has a field 'dropuot' \(did you mean dropout"),
    ("dropout", r"expected FIELD=VALUE"),
    ("num_layers=two", r"TransformerConfig.num_layers is an int"),
    ("dropout=lots", r"TransformerConfig.dropout is a float"),
    ("norm_first=maybe", r"is a bool; use true or false"),
    ("dropout=1.5", r"dropout=1.5 must be in \[0, 1\)"),  # the dataclass' own check
])
def test_set_errors(item, message):
    with pytest.raises(ValueError, match=message):
        apply_overrides(Recipe.preset("tiny"), [item])


def test_set_errors_through_the_cli(tmp_path, capsys):
    assert cli.main(["train", "--output", str(tmp_path / "r"), "--set", "d_model=wide"]) == 1
    assert "tfm train: error: --set d_model='wide': TransformerConfig.d_model is an int" in capsys.readouterr().err
    assert cli.main(["train", "--model", "bahdanau", "--output", str(tmp_path / "r"), "--set", "d_model=8"]) == 1
    assert "no part of the recipe has a field 'd_model'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


# Callbacks ---------------------------------------------------------------------
def test_nan_guard_says_what_to_try():
    guard = NaNGuard()
    guard.on_epoch_begin(4)
    guard.on_batch_end(7, {"loss": 2.5})
    with pytest.raises(FloatingPointError, match=r"became nan at batch 8 of epoch 4.*learning_rate_scale"):
        guard.on_batch_end(8, {"loss": float("nan")})


def test_history_drops_rows_of_epochs_that_run_again(tmp_path):
    path = tmp_path / "history.csv"
    path.write_text("epoch,loss\n0,3.0\n1,2.0\n2,1.5\n")
    HistoryCSV(str(path)).on_epoch_begin(2)  # a run resumed at epoch 2 (its epoch-2 row never reached the backup)
    assert read_history(str(tmp_path))["epoch"] == [0, 1]


# Multi-process ---------------------------------------------------------------



def child_env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    # One thread pool thread each: several TensorFlow processes share 2 cores without thrashing.
    env.update(TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow", TF_NUM_INTRAOP_THREADS="1",
               TF_NUM_INTEROP_THREADS="1", **extra)
    return env


def run_helper(tmp_path, tag, spec, env):
    spec = {"recipe": SMALL, "result": str(tmp_path / f"{tag}.json"), **spec}
    log = open(tmp_path / f"{tag}.log", "w")
    helper = os.path.join(os.path.dirname(HERE), "training_helper.py")
    process = subprocess.Popen([sys.executable, helper, json.dumps(spec)],
                               cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    return process, spec["result"], tmp_path / f"{tag}.log"


def wait_all(children):
    """Waits for every (process, result, log); kills them all on a failure or timeout."""
    deadline = time.time() + CHILD_TIMEOUT
    try:
        for process, _, log in children:
            process.wait(timeout=max(1, deadline - time.time()))
            assert process.returncode == 0, f"exit {process.returncode}:\n{log.read_text()[-4000:]}"
    finally:
        for process, _, _ in children:
            if process.poll() is None:
                process.kill()
                process.wait()
    results = []
    for _, result, _ in children:
        with open(result) as f:
            results.append(json.load(f))
    return results


def assert_follows(history, reference):
    # Replicas average their per-replica token means, the single device takes one mean: close, not equal.
    for key in ("loss", "val_loss"):
        np.testing.assert_allclose(history[key], reference[key], rtol=0.03, err_msg=key)
    np.testing.assert_allclose(history["accuracy"], reference["accuracy"], atol=0.03)


@pytest.mark.slow
def test_mirrored_on_two_cpus_follows_single_device(tiny_run, tmp_path):
    train_args = {**RUN, "data": "numbers", "output": str(tmp_path / "run"), "strategy": "mirrored"}
    child = run_helper(tmp_path, "mirrored", {"logical_cpus": 2, "train": train_args}, child_env())
    (result,) = wait_all([child])
    assert result["replicas"] == 2
    assert_follows(result["history"], tiny_run[1].history)


@pytest.mark.slow
def test_multi_worker_follows_single_device(tiny_run, tmp_path):
    cluster = {"worker": [f"127.0.0.1:{port}" for port in free_ports(2)]}
    train_args = {**RUN, "data": "numbers", "output": str(tmp_path / "run"), "strategy": "multiworker"}
    children = []
    for index in range(2):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        children.append(run_helper(tmp_path, f"worker{index}", {"train": train_args}, child_env(TF_CONFIG=tf_config)))
    results = wait_all(children)
    for result in results:
        assert_follows(result["history"], tiny_run[1].history)
    # The chief (worker 0) owns the run folder; worker 1 keeps only its own backup.
    assert read_history(str(tmp_path / "run"))["epoch"] == [0, 1, 2]
    assert os.path.isdir(tmp_path / "run" / "workers" / "worker_1" / "backup")


@pytest.mark.slow
def test_killed_during_second_epoch_resumes_with_continuous_history(tmp_path):
    run_dir = tmp_path / "run"
    steps = 60
    command = [sys.executable, "-m", "tfm.cli", "train", "--preset", "tiny", "--output", str(run_dir),
               "--epochs", "3", "--steps-per-epoch", str(steps), "--vocab-size", "100", "--tokens-per-batch", "512",
               "--max-length", "32", *SET_SMALL]
    stop_inside_second_epoch(command, run_dir, tmp_path / "first.log", signal.SIGKILL)
    assert not (run_dir / "checkpoints" / "epoch_002.weights.h5").exists(), "killed too late: epoch 2 finished"
    assert read_history(str(run_dir))["epoch"] == [0]

    again = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "resuming" in again.stdout + again.stderr
    history = read_history(str(run_dir))
    assert history["epoch"] == [0, 1, 2]
    assert history["iterations"] == [steps, 2 * steps, 3 * steps]
    assert [epoch for epoch, _ in epoch_checkpoints(str(run_dir))] == [1, 2, 3]


# Real data ---------------------------------------------------------------------
@pytest.mark.slow
def test_train_command_on_multi30k(multi30k_dir, tmp_path, capsys):
    run_dir = str(tmp_path / "m30k")
    argv = ["train", "--preset", "tiny", "--dataset", "multi30k", "--data-dir", multi30k_dir, "--output", run_dir,
            "--epochs", "1", "--steps-per-epoch", "5", "--vocab-size", "500"]
    assert cli.main(argv) == 0
    info = read_run_config(run_dir)
    assert info["data"]["dataset"] == "multi30k" and info["data"]["data_dir"] == os.path.abspath(multi30k_dir)
    assert info["model"]["vocab_size"] == 500 and info["model"]["d_model"] == 64 and info["data"]["subwords"] == 500
    history = read_history(run_dir)
    assert history["epoch"] == [0] and np.isfinite(history["val_loss"][0])
    translator = Translator.from_run(run_dir)
    model, tokenizer = translator.model, translator.tokenizer
    ids = tokenizer.tokenize(["A dog runs in the snow."])
    assert model((ids.to_tensor(), ids.to_tensor()[:, :3])).shape[-1] == 500
    capsys.readouterr()
    assert cli.main(argv) == 0  # the same command again: resumes, nothing left to train
    assert "1 epoch finished" in capsys.readouterr().out
    assert read_history(run_dir)["epoch"] == [0]


def test_training_budget_stops_after_the_epoch_that_spends_it(monkeypatch):
    """Each epoch takes 10 s on a fake clock: a 25 s budget stops `fit` after the third epoch (30 s), never
    mid-epoch; `on_epoch` sees the seconds spent so far and the epoch's logs."""
    from tfm.training import callbacks

    ticks = iter(range(10_000))
    monkeypatch.setattr(callbacks, "_clock", lambda: 10.0 * ((next(ticks) + 1) // 2))  # 0, 10, 10, 20, 20, ...
    seen = []
    budget = callbacks.TrainingBudget(
        25, on_epoch=lambda epoch, spent, logs: seen.append((epoch, spent, "loss" in logs)))
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(np.ones((8, 2)), np.zeros((8, 1)), epochs=10, verbose=0, callbacks=[budget])
    assert len(history.history["loss"]) == 3 and budget.epochs == 3 and budget.spent == 30.0
    assert seen == [(0, 10.0, True), (1, 20.0, True), (2, 30.0, True)]
    for bad in (0, -1, "600", True, None):
        with pytest.raises(ValueError, match="must be a positive number"):
            callbacks.TrainingBudget(bad)


def test_training_budget_records_each_epochs_cpu_share_and_names_the_stalled_ones(monkeypatch):
    """Epochs of 10 wall seconds on a fake clock; the process' CPU seconds in them are 19, 20, 6 and 20: the
    third epoch got 0.6 CPU seconds per second where the others got about 2 (an idle wait)."""
    from tfm.training import callbacks

    ticks = iter(range(10_000))
    monkeypatch.setattr(callbacks, "_clock", lambda: 10.0 * ((next(ticks) + 1) // 2))  # 0, 10, 10, 20, 20, ...
    cpu = iter([0.0, 19.0, 19.0, 39.0, 39.0, 45.0, 45.0, 65.0])  # (begin, end) of each epoch
    monkeypatch.setattr(callbacks, "_cpu_clock", lambda: next(cpu))
    budget = callbacks.TrainingBudget(1000)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(np.ones((8, 2)), np.zeros((8, 1)), epochs=4, verbose=0, callbacks=[budget])
    assert budget.epoch_seconds == [(10.0, 19.0), (10.0, 20.0), (10.0, 6.0), (10.0, 20.0)]
    assert budget.stalled_epochs() == [2]  # 0.6 < 0.75 x the best epoch's share (2.0)
    assert budget.stalled_epochs(fraction=0.25) == []  # 0.6 > 0.25 x 2.0
    budget.epoch_seconds = [(10.0, 19.0), (10.0, 10.0), (10.0, 11.0), (10.0, 10.0)]  # stalled more often than not
    assert budget.stalled_epochs() == [1, 2, 3]
    budget.epoch_seconds = budget.epoch_seconds[:2]
    assert budget.stalled_epochs() == []  # too few epochs to tell
