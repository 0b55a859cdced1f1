"""The Transformer variants people train, for the two-routes tests (cached == uncached, exported == eager).

Four tiny untrained models (1 layer, d_model 32) that together take every value of every flag:

    name                          norm_first   positional   share_embeddings   precision
    post_ln                       False        sinusoidal   True               float32         the paper
    pre_ln_learned_untied         True         learned      False              float32
    pre_ln_bf16                   True         sinusoidal   True               mixed_bfloat16  the README's recipe
    post_ln_learned_untied_bf16   False        learned      False              mixed_bfloat16

Each value of each flag appears twice, and `norm_first` meets both values of every other flag
(`positional` and `share_embeddings` move together: learned positions come untied). Each flag
switches its own layer (the LayerNorm placement, the position table, the output projection, the
compute dtype), so the full product (16 models) would cost test time without reaching more code.
"""

import keras

import tfm
from tfm.config import TransformerConfig

VARIANTS = {
    "post_ln": dict(norm_first=False, positional="sinusoidal", share_embeddings=True, policy="float32"),
    "pre_ln_learned_untied": dict(norm_first=True, positional="learned", share_embeddings=False, policy="float32"),
    "pre_ln_bf16": dict(norm_first=True, positional="sinusoidal", share_embeddings=True, policy="mixed_bfloat16"),
    "post_ln_learned_untied_bf16": dict(norm_first=False, positional="learned", share_embeddings=False,
                                        policy="mixed_bfloat16"),
}

# bfloat16 keeps 8 significant bits (unit roundoff 2^-8 = 0.4%). The cached step and the full
# pass round different intermediates (a (1, D) row against a (t, D) block; a softmax over the
# T_max cache slots, the masked ones included, against one over t keys), so their logits agree to
# a few roundings of the largest logit, not bitwise: 2^-6 * max|logit| is 4 units of roundoff.
# An off-by-one cache position moves these models' logits by 0.9 to 3.4, far outside it.
BF16_LOGIT_RTOL = 2.0**-6


def is_bf16(name):
    return VARIANTS[name]["policy"] == "mixed_bfloat16"


def build_variant(name, vocab_size, max_length, max_extra_length, seed=0):
    """The built `Transformer` of variant `name`, seeded; the global dtype policy is left as it was."""
    flags = dict(VARIANTS[name])
    policy = flags.pop("policy")
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)  # the model keeps it: every sublayer gets dtype=model.dtype_policy
    try:
        keras.utils.set_random_seed(seed)
        config = TransformerConfig.tiny(vocab_size=vocab_size, d_model=32, num_heads=2, d_ff=64, num_layers=1,
                                        dropout=0.0, max_length=max_length, extra_positions=max_extra_length,
                                        **flags)
        return tfm.Transformer.from_preset(config)
    finally:
        keras.config.set_dtype_policy(previous)
