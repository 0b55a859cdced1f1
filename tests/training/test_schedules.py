import math

import keras
import numpy as np
import pytest

import tfm
from tfm.config import Recipe


# eq. 3 at the paper's settings (d_model 512, 4000 warm-up steps), worked by hand:
#   step 1:      512^-0.5 * 1 * 4000^-1.5     = 0.0441942 * 3.95285e-6 = 1.74693e-7  (warm-up branch)
#   step 1000:   512^-0.5 * 1000 * 4000^-1.5  = a quarter of the peak  = 1.74693e-4  (linear warm-up)
#   step 4000:   512^-0.5 * 4000^-0.5         = 0.0441942 * 0.0158114  = 6.98771e-4  (both branches meet: the peak)
#   step 16000:  512^-0.5 * 16000^-0.5        = half the peak          = 3.49386e-4  (decay branch)
#   step 40000:  512^-0.5 * 40000^-0.5        = 0.0441942 * 0.005      = 2.20971e-4
@pytest.mark.parametrize("step, rate", [(1, 1.74693e-7), (1000, 1.74693e-4), (4000, 6.98771e-4),
                                        (16000, 3.49386e-4), (40000, 2.20971e-4)])
def test_eq3_by_hand(step, rate):
    schedule = tfm.TransformerSchedule(512, 4000)
    # Keras passes the 0-based iteration; the paper's step is iteration + 1.
    assert math.isclose(float(schedule(step - 1)), rate, rel_tol=1e-5)


def test_serializable_and_used_by_the_optimizer():
    s = tfm.TransformerSchedule(256, warmup_steps=100, scale=2.0)
    again = keras.optimizers.schedules.deserialize(keras.optimizers.schedules.serialize(s))
    assert again.get_config() == s.get_config()
    opt = tfm.build_optimizer(Recipe.preset("tiny"))
    assert opt.beta_1 == 0.9 and opt.beta_2 == 0.98 and opt.epsilon == 1e-9
    var = keras.Variable(np.ones(2, "float32"))
    opt.apply_gradients([(np.ones(2, "float32"), var)])
    # After one update the rate is step 2's: 64^-0.5 * 2 * 400^-1.5 = 0.125 * 2 / 8000 = 3.125e-5
    # (so the first update used step 1, not step 0, which would give a zero rate).
    assert math.isclose(float(opt.learning_rate), 3.125e-5, rel_tol=1e-5)


def test_bad_values_named():
    with pytest.raises(ValueError, match="warmup_steps=0"):
        tfm.TransformerSchedule(512, 0)
