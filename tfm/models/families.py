"""Which model class builds a config (`model_class`), chosen in this one place for every model family.

    model = model_class(recipe.model).from_preset(recipe.model)      # a Transformer or a Seq2Seq, built
    model = model_class(recipe.model).from_preset(run_dir)           # the run's model and weights

Every model family names its config class (`config_class`, as `from_preset` reads it); a third family is one more
entry in `MODEL_CLASSES`.
"""

from tfm.config import Recipe
from tfm.models.seq2seq import Seq2Seq
from tfm.models.transformer import Transformer

MODEL_CLASSES = (Transformer, Seq2Seq)  # every model family; each builds the configs of its `config_class`


def model_class(config):
    """The model class that builds `config`: `Transformer` for a `TransformerConfig`, `Seq2Seq` for a
    `Seq2SeqConfig` (the RNN baselines).

    Args:
        config: a model config (a `Recipe`'s `model` part).

    Returns:
        the class, whose `from_preset(config)` builds the model (or `from_preset(run_dir)` a run's).

    Raises:
        TypeError: not a model config, in one line (a `Recipe` is told to pass its `.model`).

    Example:
        >>> from tfm.config import Recipe
        >>> model_class(Recipe.preset("tiny").model).__name__, model_class(Recipe.preset("bahdanau").model).__name__
        ('Transformer', 'Seq2Seq')
        >>> model_class(Recipe.preset("tiny"))
        Traceback (most recent call last):
        TypeError: model_class takes a model config, not a Recipe: pass its .model
    """
    for cls in MODEL_CLASSES:
        if isinstance(config, cls.config_class):
            return cls
    if isinstance(config, Recipe):
        raise TypeError("model_class takes a model config, not a Recipe: pass its .model")
    raise TypeError(f"model_class takes a model config ({', '.join(c.config_class.__name__ for c in MODEL_CLASSES)}), "
                    f"got a {type(config).__name__}")
