"""The models as the search sees them: `start(source) -> state`, `step(state) -> logits`.

`TransformerDecodable` encodes once and feeds one token per step into a key/value
cache (`Transformer.init_cache` / `decode_step`); `Seq2SeqDecodable` carries the
recurrent state (`Seq2Seq.encode` / `decode_step`). `as_decodable` picks by type.
"""

import tensorflow as tf

from tfm.models.seq2seq import Seq2Seq
from tfm.models.transformer import Transformer

DEFAULT_MAX_EXTRA_LENGTH = 50  # §6.1: input length + 50


class Decodable:
    """What the search needs of a model: `start(source) -> state`, `step(state) -> logits`.

    Attributes:
        vocab_size: int. `V`.
        max_source_length: int or None. Longer sources are truncated (None: no limit).
        max_steps: int or None. Most decoder positions the model has (None: no limit).
        default_max_extra_length: int. Output limit = source length + this (§6.1: 50).

    Subclass it to decode with something that is not a tfm model (tests use small
    hand-made tables); `as_decodable` passes instances through.
    """

    vocab_size = None
    max_source_length = None
    max_steps = None
    default_max_extra_length = DEFAULT_MAX_EXTRA_LENGTH

    def start(self, source_ids, max_steps, use_cache=True):
        """`source_ids (B, S)` -> `(static, dynamic)` state: static is copied to every beam once,
        dynamic is reordered with the beams at every step.

        `max_steps` is an int tensor when the search keeps static shapes (under XLA),
        or None when it runs with dynamic shapes: then caches may grow with each step and
        rows of the state may be dropped between steps (a finished sentence leaves the batch).

        Beam search copies `static` to each of a sentence's k beams (rows `b * k + j`), except
        an entry `static["shared"]`, which keeps one row per sentence: `step` then gets
        `B * k` rows of everything else and `B` rows of `static["shared"]`."""
        raise NotImplementedError

    def step(self, sequences, index, static, dynamic, use_cache=True):
        """`sequences (B, T_max + 1)` (START + outputs so far), `index` = position to feed
        -> `(logits (B, V), dynamic)`."""
        raise NotImplementedError

    def attention(self, source_ids, decoder_input_ids):
        """Teacher-forced attention weights: dict of per-layer lists."""
        raise NotImplementedError(f"{type(self).__name__} has no attention maps")


class TransformerDecodable(Decodable):
    """The search's view of a `tfm.models.Transformer`.

    State is split in two: `static` (encoder output / cross-attention caches and
    the memory mask: copied to every beam once, never reordered) and `dynamic`
    (self-attention caches: reordered with the beams at every step).
    """

    def __init__(self, model):
        self.model = model
        config = model.config
        self.vocab_size = int(config.vocab_size)
        self.max_source_length = int(config.max_length)
        # Positions 0 .. max_length + max_extra_length exist (Transformer.__init__).
        self.max_steps = int(config.max_length + config.max_extra_length + 1)
        self.default_max_extra_length = int(config.max_extra_length)

    def start(self, source_ids, max_steps, use_cache=True):
        memory, memory_mask = self.model.encode(source_ids, training=False)  # (B, S, D), (B, S)
        if not use_cache:
            return {"memory": memory, "memory_mask": memory_mask}, {}
        if max_steps is not None:  # static shapes: caches of max_steps zeros, written in place
            cache = self.model.init_cache(memory, max_steps)
            return {"cross": cache["cross"], "memory_mask": memory_mask}, {"self": cache["self"]}
        # Dynamic shapes: (keys, values) pairs. The self-attention ones start empty and grow by one
        # position per step (step t attends over t + 1 keys, not T_max); the memory's are split once.
        batch = tf.shape(source_ids)[0]
        layers = self.model.decoder.layers
        cross = [layer.cross_attention.split_cache(c)
                 for layer, c in zip(layers, self.model.decoder.compute_cross_caches(memory))]
        growing = [layer.self_attention.empty_cache_pair(batch) for layer in layers]
        # The memory is not copied per beam: the k beams of a sentence read one copy (shared).
        return {"shared": {"cross": cross, "memory_mask": memory_mask}}, {"self_growing": growing}

    def step(self, sequences, index, static, dynamic, use_cache=True):
        """`sequences` int `(B, T_max + 1)` (START + outputs so far), `index` = position to feed."""
        if not use_cache:
            prefix = sequences[:, : index + 1]  # (B, t + 1): the whole prefix, recomputed
            logits = self.model.decode(prefix, static["memory"], static["memory_mask"], training=False)
            return logits[:, -1], dynamic  # (B, t + 1, V) -> (B, V)
        # gather, not sequences[:, i:i+1]: XLA must see a static width of 1.
        tokens = tf.gather(sequences, index, axis=1)[:, tf.newaxis]  # (B, L) -> (B, 1): only the newest token
        key = "self_growing" if "self_growing" in dynamic else "self"  # pairs that grow, or (B, 2, N, T_max, H)
        memory = static.get("shared", static)
        cache = {"self": dynamic[key], "cross": memory["cross"]}
        logits, cache = self.model.decode_step(tokens, index, cache, memory["memory_mask"])
        return logits, {key: cache["self"]}

    def attention(self, source_ids, decoder_input_ids):
        """Teacher-forced weights: dict of per-layer lists of `(B, N, T|S, T|S)` arrays."""
        return self.model.attention_scores(source_ids, decoder_input_ids)


class Seq2SeqDecodable(Decodable):
    """The search's view of a `tfm.models.seq2seq.Seq2Seq` (state from `encode`, `decode_step`).

    Static: the encoder outputs and the memory mask; dynamic: the decoder state.
    """

    def __init__(self, model):
        self.model = model
        self.vocab_size = int(model.config.vocab_size)
        self.max_source_length = None  # recurrent: no position table
        self.max_steps = None
        self.default_max_extra_length = int(model.config.max_extra_length)

    def start(self, source_ids, max_steps, use_cache=True):
        if not use_cache:
            return {"source_ids": source_ids}, {}
        state = self.model.encode(source_ids, training=False)
        return {"encoder": list(state[:2])}, {"decoder": list(state[2:])}

    def step(self, sequences, index, static, dynamic, use_cache=True):
        if not use_cache:
            logits = self.model((static["source_ids"], sequences[:, : index + 1]), training=False)
            return logits[:, -1], dynamic  # (B, t + 1, V) -> (B, V)
        tokens = tf.gather(sequences, index, axis=1)  # (B, L) -> (B,)
        logits, state = self.model.decode_step(tokens, static["encoder"] + dynamic["decoder"])
        return logits, {"decoder": list(state[2:])}

    def attention(self, source_ids, decoder_input_ids):
        return self.model.attention_scores(source_ids, decoder_input_ids)  # one (B, T, S) map, or none


def as_decodable(model):
    """The search's adapter for `model`: a `Transformer`, a `Seq2Seq`, or a `Decodable` (returned as is)."""
    if isinstance(model, Decodable):
        return model
    if isinstance(model, Transformer):
        return TransformerDecodable(model)
    if isinstance(model, Seq2Seq):
        return Seq2SeqDecodable(model)
    raise TypeError(f"cannot decode with {type(model).__name__}: expected a tfm Transformer, a Seq2Seq "
                    "or a tfm.decoding.Decodable")
