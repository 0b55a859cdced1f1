"""benchmarks/parsing_at_budget.py's `--set [MODEL:]FIELD=VALUE`: which assignments reach which model."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
from parsing_at_budget import main, model_overrides

SETS = ["dropout=0.1", "transformer:num_layers=2", "bahdanau:units=128", "transformer:d_model=128"]


def test_each_model_gets_the_shared_and_its_own_assignments_in_order():
    assert model_overrides(SETS, "transformer") == ["dropout=0.1", "num_layers=2", "d_model=128"]
    assert model_overrides(SETS, "bahdanau") == ["dropout=0.1", "units=128"]
    assert model_overrides([], "bahdanau") == []


def test_a_colon_in_the_value_is_not_a_model_prefix():
    assert model_overrides(["preprocess=a:b"], "bahdanau") == ["preprocess=a:b"]


def test_an_unknown_model_prefix_names_itself():
    with pytest.raises(ValueError, match="'lstm' is not a model"):
        model_overrides(["lstm:units=3"], "bahdanau")


def test_a_config_that_cannot_be_built_stops_before_training(capsys):
    with pytest.raises(SystemExit):  # d_model 102 does not divide among parse_small's 4 heads
        main(["--set", "transformer:d_model=102", "--models", "transformer"])
    assert "d_model=102" in capsys.readouterr().err
