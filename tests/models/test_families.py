"""`model_class`: the one place a config's model class is chosen, for every model family."""

import pytest

from tfm.config import MODELS, Recipe, config_class
from tfm.models import MODEL_CLASSES, Seq2Seq, Transformer, model_class


@pytest.mark.parametrize("name", MODELS)
def test_every_model_name_has_its_class(name):
    config = Recipe.preset("tiny", model=name).model
    cls = model_class(config)
    assert cls is (Transformer if name == "transformer" else Seq2Seq)
    assert isinstance(config, config_class(name)) and cls.config_class is config_class(name)
    model = cls.from_preset(config)
    assert model.config == config


def test_every_family_is_chosen_by_its_config_class():
    assert {cls.config_class for cls in MODEL_CLASSES} == {config_class(name) for name in MODELS}


def test_what_is_not_a_model_config_is_one_line():
    with pytest.raises(TypeError, match=r"^model_class takes a model config, not a Recipe: pass its \.model$"):
        model_class(Recipe.preset("tiny"))
    with pytest.raises(TypeError, match="got a str"):
        model_class("tiny")
