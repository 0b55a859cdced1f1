"""The paper's settings, written once: the reference `tfm.config.fidelity` sets the package's values beside.

`PAPER_MODEL` (the base and big recipes' fields), `PAPER_TRAINING` (the other TrainingConfig fields),
`PAPER_FUNCTION_DEFAULTS` (defaults of functions, read from their source), `PAPER_CONVENTIONS`, and the
package's side of the story: `DIFFERENCES` (why a value differs, keyed by the value it explains) and `NOTES`
(where the paper is silent). `NOT_IN_PAPER` marks a setting the paper does not give. Plain data, no imports.

Example:
    >>> from tfm.config.paper_settings import PAPER_MODEL
    >>> PAPER_MODEL["d_model"]
    ('§3.1, Table 3', 512, 1024)
"""


class _NotInPaper:
    def __repr__(self):
        return "NOT_IN_PAPER"


NOT_IN_PAPER = _NotInPaper()  # the paper value of a setting the paper does not give
# §6.1's one output limit, "maximum output length during inference to input length + 50": the model's room
# (`extra_positions`) and the decoding's limit that follows it (`max_extra_length`) both compare with it.
OUTPUT_LIMIT = ("§6.1", 50, 50)

# The paper's values (the reference) ---------------------------------------------------------------
# Field of the base / big Recipe (any part; `Recipe.part_of` finds it) -> (section, base, big). head_key_dim /
# head_value_dim are the d_k / d_v in use.
PAPER_MODEL = {
    "num_layers": ("§3.1, Table 3", 6, 6),
    "d_model": ("§3.1, Table 3", 512, 1024),
    "num_heads": ("§3.2.2, Table 3", 8, 16),
    "d_ff": ("§3.3, Table 3", 2048, 4096),
    "key_dim": ("§3.2.2, Table 3", 64, 64),  # d_k = d_model / h in base; Table 3 big: d_k = 64
    "value_dim": ("§3.2.2, Table 3", 64, 64),
    "dropout": ("§5.4, Table 3", 0.1, 0.3),
    "attention_dropout": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "activation_dropout": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "token_dropout": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "label_smoothing": ("§5.4, Table 3", 0.1, 0.1),
    "rdrop_alpha": ("§5.4", NOT_IN_PAPER, NOT_IN_PAPER),
    "vocab_size": ("§5.1", 37000, 37000),  # EN-DE: "a shared source-target vocabulary of about 37000 tokens"
    "share_embeddings": ("§3.4", True, True),
    "norm_first": ("§3.1", False, False),  # LayerNorm(x + Sublayer(x)): post-LN
    "positional": ("§3.5, Table 3 (E)", "sinusoidal", "sinusoidal"),
    "max_length": ("§5.1", NOT_IN_PAPER, NOT_IN_PAPER),
    "extra_positions": OUTPUT_LIMIT,  # room for "input length + 50" outputs
    "warmup_steps": ("§5.3, eq. 3", 4000, 4000),
    "learning_rate_scale": ("§5.3, eq. 3", 1.0, 1.0),  # eq. 3 as written, no extra factor
    "adam_beta_1": ("§5.3", 0.9, 0.9),
    "adam_beta_2": ("§5.3", 0.98, 0.98),
    "adam_epsilon": ("§5.3", 1e-9, 1e-9),
    "layer_norm_epsilon": ("§3.1", NOT_IN_PAPER, NOT_IN_PAPER),
    "tokens_per_batch": ("§5.1", 25000, 25000),  # "approximately 25000 source tokens and 25000 target tokens"
    "beam_size": ("§6.1", 4, 4),
    "length_penalty": ("§6.1", 0.6, 0.6),  # alpha
    "max_extra_length": OUTPUT_LIMIT,  # the decoding's limit: the model's room unless set lower
    "checkpoints_to_average": ("§6.1", 5, 20),  # "averaging the last 5 checkpoints" / "the last 20"
    "preprocess": ("§5.1", NOT_IN_PAPER, NOT_IN_PAPER),
    "subwords": ("§5.1", 37000, 37000),
    "max_pair_length": ("§5.1", NOT_IN_PAPER, NOT_IN_PAPER),
}

# TrainingConfig field not in PAPER_MODEL -> (section, paper value): `TrainingConfig()`'s defaults.
PAPER_TRAINING = {
    "seed": ("§5", NOT_IN_PAPER),
    "learning_rate": ("§5.3, eq. 3", None),  # None: eq. 3's schedule, not a constant rate
    "clipnorm": ("§5.3", None),  # no gradient clipping
    "validation": ("§6", NOT_IN_PAPER),
    "keep_checkpoints": ("§6.1", NOT_IN_PAPER),
    "mixed_precision": ("§5.2", NOT_IN_PAPER),
    "xla": ("§5.2", NOT_IN_PAPER),
    "steps_per_epoch": ("§6.1", "a checkpoint every 10 minutes"),
}

# (module file, function) -> {argument: (setting, section, paper value)}: defaults read from the source.
PAPER_FUNCTION_DEFAULTS = {
    ("decoding/beam.py", "beam_search"): {
        "beam_size": ("beam size", "§6.1", 4),
        "alpha": ("length penalty α (a run decodes with its config's `beam_size` and `length_penalty`)",
                  "§6.1", 0.6),
    },
    ("training/losses.py", "LabelSmoothedCrossEntropy.__init__"): {
        "label_smoothing": ("ε_ls", "§5.4", 0.1),
        "exclude_pad_from_smoothing": ("smoothing mass on the padding id", "§5.4", NOT_IN_PAPER),
        "rdrop_alpha": ("R-Drop's KL weight (Liang et al., 2021)", "§5.4", NOT_IN_PAPER),
    },
    ("data/subword_tokenizer.py", "train_tokenizer"): {
        "model_type": ("subword algorithm", "§5.1", "bpe"),
        "max_sentences": ("sentences the vocabulary is learned from", "§5.1", NOT_IN_PAPER),
    },
}

# Conventions that are not one number: what the paper does, what the package does (checked by tests).
PAPER_CONVENTIONS = [
    # (group, setting, section, paper, package)
    ("training", "label-smoothing target", "§5.4 (Szegedy et al. 2016)",
     "q'(k) = (1-ε) δ(k,y) + ε/K: ε spread over all K ids, the reference included",
     "1-ε on the reference, ε/(V-1) on each other id"),
    ("decoding", "length penalty", "§6.1 (Wu et al. 2016)",
     "lp(Y) = ((5+|Y|)/6)^α, score = log P(Y|X) / lp(Y)", "lp(Y) = ((5+|Y|)/6)^α, score = log P(Y|X) / lp(Y)"),
    ("data", "subword vocabulary", "§5.1",
     "EN-DE: byte-pair encoding, shared, about 37000 tokens; EN-FR: word-piece, 32000",
     "SentencePiece BPE learned on the training text, shared, `vocab_size` of the preset"),
    ("evaluation", "BLEU", "§6.1, Table 2",
     "tokenized BLEU (EN-DE with compound splitting), newstest2014",
     "sacreBLEU on detokenized text (13a, cased; also lowercased and Moses-tokenized lowercased), "
     "with its signature"),
    ("training", "training length", "§5.2",
     "base 100k steps (12 h on 8 P100), big 300k steps (3.5 days)",
     "`--epochs` × `--steps-per-epoch` (notebook 09's commands: 100 × 1000 and 300 × 1000)"),
]

# Why the package differs: (group, setting) -> (package value this explains, reason).
DIFFERENCES = {
    ("training", "label-smoothing target"): (
        "1-ε on the reference, ε/(V-1) on each other id",
        "tensor2tensor, the paper's own code, smooths this way (`smoothing_cross_entropy`: "
        "`low_confidence = (1 - confidence) / (vocab_size - 1)`), so the reference gets exactly 1-ε. The two "
        "targets differ by ε/K on the reference and ε/(K(K-1)) on every other id: 2.7e-6 and 7.3e-11 at "
        "K = 37000 (notebook 07 computes both)."),
    ("data", "subword vocabulary"): (
        "SentencePiece BPE learned on the training text, shared, `vocab_size` of the preset",
        "the paper's BPE and word-piece models are not published; SentencePiece learns a BPE vocabulary of the "
        "preset's size from the raw training text (no separate tokenizer). EN-FR would need "
        "`vocab_size=32000` (the paper used word-pieces there). Parameter counts depend on V: notebook 06 shows "
        "that 37000 gives 63.1M for base where the paper prints 65M."),
    ("evaluation", "BLEU"): (
        "sacreBLEU on detokenized text (13a, cased; also lowercased and Moses-tokenized lowercased), "
        "with its signature",
        "tokenized BLEU depends on the tokenizer and on compound splitting, and its numbers cannot be "
        "reproduced from the paper; sacreBLEU's signature names everything that affects the score (Post, 2018). "
        "Detokenized sacreBLEU usually comes out lower than the paper's tokenized, compound-split BLEU for the "
        "same output (up to about a point on EN-DE)."),
    ("training", "training length"): (
        "`--epochs` × `--steps-per-epoch` (notebook 09's commands: 100 × 1000 and 300 × 1000)",
        "a run is measured in epochs (one checkpoint each); the paper's step counts are reached with "
        "`--steps-per-epoch 1000` and 100 (base) or 300 (big) epochs."),
    ("training", "steps_per_epoch"): (
        None,
        "a checkpoint is written per epoch (one pass over the data, or `--steps-per-epoch` steps), not per "
        "10 minutes of wall-clock time, so that the averaged checkpoints do not depend on the hardware's speed. "
        "Notebook 09's commands use 1000 steps (the paper's 10 minutes were about 1500 base steps)."),
}

# Notes on rows that are the same or that the paper does not give: (group, setting) -> note.
NOTES = {
    ("model", "key_dim"): "None in the config = d_model / h, i.e. 64 in both presets.",
    ("model", "value_dim"): "None in the config = d_model / h, i.e. 64 in both presets.",
    ("model", "dropout"): "Big on EN-FR used P_drop = 0.1 instead of 0.3 (§6.1): `TransformerConfig.big(dropout=0.1)`.",
    ("model", "attention_dropout"): "Dropout on the attention weights; §5.4 names only residual dropout "
                                    "(sub-layer outputs and embedding sums).",
    ("model", "activation_dropout"): "Dropout on the feed-forward network's inner activations (tensor2tensor's "
                                     "relu_dropout, fairseq's activation_dropout); §5.4 names only residual dropout.",
    ("model", "token_dropout"): "Word dropout (Sennrich et al., 2016): source and target input tokens replaced by "
                                "UNK while training, the labels kept; a regulariser from after the paper.",
    ("model", "rdrop_alpha"): "R-Drop (Liang et al., 2021), a regulariser from after the paper, for small "
                              "corpora: each batch twice (twice the compute per step), a KL term between the two "
                              "dropout passes. 0 = off.",
    ("model", "vocab_size"): "EN-DE; \"about\" 37000. EN-FR used a 32000 word-piece vocabulary.",
    ("model", "max_length"): "Longest source the model takes (positions). The paper gives no limit.",
    ("model", "extra_positions"): "The model's positions beyond `max_length`, for outputs longer than their "
                                  "source: §6.1's output limit, which the decoding's `max_extra_length` follows.",
    ("model", "max_pair_length"): "Training drops longer pairs. The paper gives no limit.",
    ("model", "subwords"): "The subwords the tokenizer learns; the model's `vocab_size` is then the tokenizer's.",
    ("model", "learning_rate_scale"): "A factor on eq. 3 for the small recipes (m30k); 1.0 is eq. 3 as written.",
    ("model", "layer_norm_epsilon"): "tensor2tensor's value (Keras' default is 1e-3).",
    ("model", "adam_epsilon"): "Keras adds ε to sqrt(v) after the bias correction folded into the step size "
                               "(Kingma and Ba's ε-hat), as tf.train.AdamOptimizer did in tensor2tensor.",
    ("model", "tokens_per_batch"): "A budget per side and batch, padding included: each length bucket gets "
                                   "floor(budget / bucket length) pairs, so a batch holds at most 25000 "
                                   "tokens per side.",
    ("model", "preprocess"): "Raw text goes to SentencePiece; `moses_lc` (lowercase + Moses tokens) is for "
                             "the Multi30k recipe.",
    ("model", "checkpoints_to_average"): "`tfm average --last N`; training keeps this many by default.",
    ("training", "seed"): "Weights, dropout and shuffling; resumed runs derive new streams from it.",
    ("training", "keep_checkpoints"): "None: as many as the recipe averages (`checkpoints_to_average`: 5 base, 20 "
                                      "big), set when a run starts.",
    ("training", "learning_rate"): "None: eq. 3's schedule; the RNN baselines' recipes train at a constant 1e-3.",
    ("training", "clipnorm"): "None: no clipping; the RNN baselines' recipes clip at 1.",
    ("training", "validation"): "The validation split's loss and accuracy after each epoch.",
    ("training", "mixed_precision"): "`--mixed-precision`: mixed_float16 on GPUs, mixed_bfloat16 on CPUs.",
    ("training", "xla"): "`--xla` compiles the train step.",
    ("training", "exclude_pad_from_smoothing"): "False: the padding id gets its ε/(V-1) share of the target "
                                             "like every other id (the loss of padding positions is ignored).",
    ("data", "max_sentences"): "SentencePiece samples at most this many sentences of the training text "
                               "(WMT14 EN-DE has 4.5M pairs = 9M sentences).",
}
