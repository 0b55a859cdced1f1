"""The learning-rate schedule of Vaswani et al., 2017, §5.3, eq. 3."""

import keras
from keras import ops


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


def build_optimizer(config, learning_rate=None):
    """The optimizer a model's config trains with: the one builder for every model.

    The Transformer: Adam with the paper's settings (§5.3: beta1=0.9, beta2=0.98, eps=1e-9) and eq. 3's
    learning rate. The RNN baselines (`Seq2SeqConfig`): Adam at their constant `learning_rate`, gradients
    clipped to `clipnorm`.

    Args:
        config: `TransformerConfig` (reads d_model, warmup_steps, adam_beta_1, adam_beta_2, adam_epsilon,
            learning_rate_scale), `Seq2SeqConfig` (learning_rate, clipnorm), or a preset name ("tiny", "base").
        learning_rate: optional float or schedule replacing eq. 3 (Transformer only).

    Returns:
        `keras.optimizers.Adam`.

    Example:
        >>> optimizer = build_optimizer("base")
        >>> optimizer.beta_1, optimizer.beta_2, optimizer.epsilon
        (0.9, 0.98, 1e-09)
        >>> round(float(optimizer.learning_rate), 10)            # eq. 3 at step 1: 512^-0.5 * 4000^-1.5
        1.747e-07
        >>> from tfm.config import Seq2SeqConfig
        >>> build_optimizer(Seq2SeqConfig.tiny(attention="bahdanau")).clipnorm
        1.0
    """
    from tfm.models.registry import as_config, model_name

    config = as_config(config)
    if model_name(config) != "transformer":
        if learning_rate is not None:
            raise ValueError("learning_rate= replaces eq. 3 and applies to the Transformer only; a Seq2SeqConfig "
                             "carries its own learning_rate")
        return keras.optimizers.Adam(learning_rate=config.learning_rate, clipnorm=config.clipnorm)
    if learning_rate is None:
        learning_rate = TransformerSchedule(
            config.d_model, config.warmup_steps, getattr(config, "learning_rate_scale", 1.0)
        )
    return keras.optimizers.Adam(
        learning_rate=learning_rate,
        beta_1=config.adam_beta_1,
        beta_2=config.adam_beta_2,
        epsilon=config.adam_epsilon,
    )
