"""What the search needs of a model (Vaswani et al., 2017, §6.1): `start(source) -> state`, `step(state) -> logits`.

    decodable = as_decodable(model)                                    # a Transformer, a Seq2Seq, ...
    state = decodable.start(source_ids)                                # a DecodingState
    logits, state = decodable.step(sequences, index, state)            # (N, V), one step

Every tfm model decodes through one interface, `encode(source_ids, training, max_length) ->
DecodingState` and `decode_step(token_ids, index, state) -> (logits, state)`
(`tfm.models.decoding_state`); `ModelDecodable` is the search's view of any model that has it, and
adds what the search needs beside: the model's limits, and decoding without a cache (the reference
the cached decoding is tested against). `Decodable` is the protocol itself, for decoding with
something that is not a tfm model (the tests use small hand-made tables).

The search never looks inside the state: it keeps `memory` and `memory_mask` one row per sentence,
copies `cache` once per hypothesis and reorders its rows with the hypotheses, whatever the model.
"""

import tensorflow as tf

from tfm.config.configs import DEFAULT_MAX_EXTRA_LENGTH
from tfm.config.recipe import output_room
from tfm.models.decoding_state import DecodingState
from tfm.special_tokens import PAD_ID


class Decodable:
    """What the search needs of a model: `start(source_ids) -> DecodingState`, `step(...) -> (logits, state)`.

    Attributes:
        vocab_size: int. `V`.
        max_source_length: int or None. Longer sources are truncated (None: no limit).
        max_steps: int or None. Most decoder positions the model has (None: no limit).
        default_max_extra_length: int. Output limit = source length + this (§6.1: 50).

    Subclass it to decode with something that is not a tfm model: set the attributes and write `step`
    (and `start`, when the model needs more than the source's padding). `as_decodable` passes
    instances through.

    Example: a "model" that counts, START (id 2) -> 4 -> 5 -> 6 -> 7 -> END (id 3).

        >>> from tfm.decoding import greedy_search
        >>> class Counter(Decodable):
        ...     vocab_size, default_max_extra_length = 8, 4
        ...     def step(self, sequences, index, state, use_cache=True):
        ...         last = tf.gather(sequences, index, axis=1)                     # (N,)
        ...         following = tf.where(last == 2, 4, tf.where(last == 7, 3, last + 1))
        ...         return tf.one_hot(following, self.vocab_size) * 10.0, state    # logits (N, V)
        >>> greedy_search(Counter(), tf.constant([[9, 9]])).sequences.numpy().tolist()   # T_max = 2 + 4 + 1
        [[4, 5, 6, 7, 0, 0, 0]]
    """

    vocab_size = None
    max_source_length = None
    max_steps = None
    default_max_extra_length = DEFAULT_MAX_EXTRA_LENGTH

    def start(self, source_ids, max_steps=None, use_cache=True):
        """The state before the first step, for a batch of sources.

        Args:
            source_ids: int `(B, S)`, 0-padded (already truncated to `max_source_length`).
            max_steps: int tensor when the search keeps static shapes (under XLA): the most steps it runs,
                so that caches can be fixed buffers. None when it runs with dynamic shapes: caches may then
                grow with each step, and rows of the state may be dropped between steps (a decided
                sentence leaves the batch).
            use_cache: bool. False: `step` recomputes from the prefix (the state need hold no cache).

        Returns:
            `DecodingState`: `memory` and `memory_mask` with one row per sentence, `cache` one row per
            sentence too (beam search copies it once per hypothesis), `prepared` what every step reads as it
            is (no rows; `()` when there is nothing). The default holds the source itself as memory, no cache
            and nothing prepared.
        """
        source_ids = tf.convert_to_tensor(source_ids)
        return DecodingState(memory=source_ids, memory_mask=tf.not_equal(source_ids, PAD_ID), cache=())

    def step(self, sequences, index, state, use_cache=True):
        """The next-token logits of every hypothesis.

        Args:
            sequences: int `(N, T_max + 1)`: START, the outputs so far at columns `1..index`, zeros after.
            index: int scalar tensor: the position to feed (`sequences[:, index]`), = tokens output so far.
            state: `DecodingState`; `cache` has `N` rows, `memory` and `memory_mask` `B` rows, `N = B * G`
                (the G hypotheses of sentence `b` at rows `b * G .. b * G + G - 1`).
            use_cache: bool, as given to `start`.

        Returns:
            `(logits (N, V), state)`: the new state keeps `memory` and `memory_mask` as they are.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement step(sequences, index, state, use_cache)")

    def attention(self, source_ids, decoder_input_ids):
        """Teacher-forced attention weights: a dict of per-layer lists (`attention_weights` of the model)."""
        raise NotImplementedError(f"{type(self).__name__} has no attention maps")


class ModelDecodable(Decodable):
    """The search's view of a model with the decoding interface: `Transformer`, `Seq2Seq`.

    Args:
        model: has `config` (`vocab_size`; its `tfm.config.output_room` is the default output limit),
            `encode(source_ids, training, max_length) -> DecodingState`, `decode_step(token_ids, index, state) ->
            (logits, state)`,
            `attention_weights(source_ids, target_ids)`, and may have `max_source_length` /
            `max_decode_steps` (None or absent: no limit).

    With `use_cache=False` the model runs whole on the source and the prefix at every step (the
    TensorFlow tutorial's decoding): the reference the cached steps must equal.

    Example:
        >>> from tfm import Transformer
        >>> model = Transformer.from_preset("tiny", vocab_size=30, num_layers=1, max_length=16, extra_positions=4)
        >>> decodable = ModelDecodable(model)
        >>> decodable.vocab_size, decodable.max_source_length, decodable.max_steps   # 16 + 4 + 1 positions
        (30, 16, 21)
        >>> sequences = tf.constant([[2, 0, 0], [2, 0, 0]])      # START, nothing output yet
        >>> state = decodable.start(tf.constant([[5, 6, 7], [8, 0, 0]]))
        >>> logits, state = decodable.step(sequences, tf.constant(0), state)
        >>> recomputed, _ = decodable.step(sequences, tf.constant(0), decodable.start(
        ...     tf.constant([[5, 6, 7], [8, 0, 0]]), use_cache=False), use_cache=False)
        >>> tuple(logits.shape), bool(tf.reduce_all(tf.abs(logits - recomputed) < 1e-4))
        ((2, 30), True)
    """

    def __init__(self, model):
        self.model = model
        config = model.config
        self.vocab_size = int(config.vocab_size)
        self.max_source_length = getattr(model, "max_source_length", None)
        self.max_steps = getattr(model, "max_decode_steps", None)
        self.default_max_extra_length = int(output_room(config))

    def start(self, source_ids, max_steps=None, use_cache=True):
        if not use_cache:
            return super().start(source_ids, max_steps, use_cache)
        return self.model.encode(source_ids, training=False, max_length=max_steps)

    def step(self, sequences, index, state, use_cache=True):
        if not use_cache:
            prefix = sequences[:, : index + 1]  # (N, t + 1): the whole prefix, recomputed
            source_ids = repeat_rows(state.memory, tf.shape(prefix)[0])  # (B, S) -> (N, S)
            logits = self.model((source_ids, prefix), training=False)  # (N, t + 1, V)
            return logits[:, -1], state
        # gather, not sequences[:, i]: XLA must see a static shape.
        tokens = tf.gather(sequences, index, axis=1)  # (N, L) -> (N,): only the newest token
        return self.model.decode_step(tokens, index, state)

    def attention(self, source_ids, decoder_input_ids):
        """Teacher-forced weights: dict of per-layer lists (`(B, N, T|S, T|S)` for the Transformer)."""
        return self.model.attention_weights(source_ids, decoder_input_ids)


def repeat_rows(tensor, rows):
    """`tensor (B, ...)` with each row repeated to make `rows` rows (`rows // B` consecutive copies each):
    one row per sentence -> one per hypothesis.

    Example:
        >>> repeat_rows(tf.constant([[1, 2], [3, 4]]), 6).numpy().tolist()
        [[1, 2], [1, 2], [1, 2], [3, 4], [3, 4], [3, 4]]
    """
    return tf.repeat(tensor, rows // tf.shape(tensor)[0], axis=0)


def as_decodable(model):
    """The search's view of `model`: a `Decodable` as it is, else a `ModelDecodable`.

    Args:
        model: a `Decodable`, or a model with the decoding interface (`Transformer`, `Seq2Seq`).

    Raises:
        TypeError: for anything else, naming its type.

    Example:
        >>> from tfm import Seq2Seq
        >>> type(as_decodable(Seq2Seq.from_preset("tiny", vocab_size=30))).__name__
        'ModelDecodable'
        >>> as_decodable("a model")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        TypeError: cannot decode with str: expected a model with encode / decode_step (a tfm Transformer ...
    """
    if isinstance(model, Decodable):
        return model
    if all(callable(getattr(model, name, None)) for name in ("encode", "decode_step")) and hasattr(model, "config"):
        return ModelDecodable(model)
    raise TypeError(f"cannot decode with {type(model).__name__}: expected a model with encode / decode_step "
                    "(a tfm Transformer or Seq2Seq) or a tfm.decoding.Decodable")
