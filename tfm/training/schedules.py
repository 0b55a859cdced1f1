"""The learning-rate schedule of Vaswani et al., 2017, §5.3, eq. 3."""

import keras
from keras import ops

from tfm.config import Recipe


@keras.saving.register_keras_serializable(package="tfm")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """`lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)` (eq. 3).

    Linear warm-up for `warmup_steps`, then decay with the inverse square root of
    the step. Keras passes the optimizer's 0-based iteration `i`; the paper's step
    is `i + 1`, so the first update uses step 1 (never a zero learning rate).

    Args:
        d_model: int. Model width `d_model`.
        warmup_steps: int. Defaults to `4000`.
        scale: float. Multiplies the rate (1.0 = the paper). Defaults to `1.0`.

    Example:
        >>> schedule = TransformerSchedule(d_model=512, warmup_steps=4000)
        >>> round(float(schedule(3999)), 8)                      # step 4000, the peak: 512^-0.5 * 4000^-0.5
        0.00069877
        >>> round(float(schedule(15999)), 8)                     # four times the warm-up: half the peak
        0.00034939
    """

    def __init__(self, d_model, warmup_steps=4000, scale=1.0):
        if int(d_model) <= 0:
            raise ValueError(f"d_model={d_model} must be positive")
        if int(warmup_steps) <= 0:
            raise ValueError(f"warmup_steps={warmup_steps} must be positive")
        self.d_model = int(d_model)
        self.warmup_steps = int(warmup_steps)
        self.scale = float(scale)

    def __call__(self, step):
        step = ops.cast(step, "float32") + 1.0
        rate = ops.minimum(ops.rsqrt(step), step * (self.warmup_steps**-1.5))
        return self.scale * (self.d_model**-0.5) * rate

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale}


def build_optimizer(recipe, learning_rate=None):
    """The optimizer a recipe trains with: the one builder for every model.

    Adam with the recipe's `TrainingConfig` (§5.3: beta1=0.9, beta2=0.98, eps=1e-9 in the paper's recipes) and
    eq. 3's learning rate for the model's `d_model`, or a constant `training.learning_rate` (the RNN baselines'
    recipes: 1e-3, gradients clipped to `clipnorm`).

    Args:
        recipe: a `tfm.config.Recipe`, or a preset name ("tiny", "base").
        learning_rate: optional float or schedule replacing the recipe's rate.

    Returns:
        `keras.optimizers.Adam`.

    Example:
        >>> optimizer = build_optimizer("base")
        >>> optimizer.beta_1, optimizer.beta_2, optimizer.epsilon
        (0.9, 0.98, 1e-09)
        >>> round(float(optimizer.learning_rate), 10)            # eq. 3 at step 1: 512^-0.5 * 4000^-1.5
        1.747e-07
        >>> build_optimizer(Recipe.preset("tiny", model="bahdanau")).clipnorm
        1.0
    """
    recipe = Recipe.preset(recipe) if isinstance(recipe, str) else recipe
    training = recipe.training
    if learning_rate is None:
        learning_rate = training.learning_rate
    if learning_rate is None:
        learning_rate = TransformerSchedule(recipe.model.d_model, training.warmup_steps, training.learning_rate_scale)
    return keras.optimizers.Adam(learning_rate=learning_rate, beta_1=training.adam_beta_1,
                                 beta_2=training.adam_beta_2, epsilon=training.adam_epsilon,
                                 clipnorm=training.clipnorm)
