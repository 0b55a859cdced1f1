"""Reference solution, notebook 11. Check: `tfm.exercises.check_parameter_count(parameter_count)`."""


def parameter_count(config):
    """Parameters of a post-LN Transformer with shared embeddings (§3, §3.4): weights and biases of every layer."""
    d, h, n = config.d_model, config.num_heads, config.num_layers
    d_k = config.key_dim or d // h  # per head; None = d_model / h
    d_v = config.value_dim or d // h
    attention = 2 * (d * h * d_k + h * d_k) + (d * h * d_v + h * d_v) + (h * d_v * d + d)  # W^Q, W^K, W^V, W^O
    feed_forward = (d * config.d_ff + config.d_ff) + (config.d_ff * d + d)
    norm = 2 * d  # scale and offset
    encoder = n * (attention + feed_forward + 2 * norm)
    decoder = n * (2 * attention + feed_forward + 3 * norm)  # self- and cross-attention
    embedding = config.vocab_size * d  # one matrix: both embeddings and the pre-softmax projection
    positions = 0
    if config.positional == "learned":  # a source and a target table
        positions = 2 * (config.max_length + config.extra_positions + 1) * d
    return embedding + positions + encoder + decoder
