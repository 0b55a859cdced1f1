"""`DecodingState`: what incremental decoding carries from one output token to the next (Vaswani et al.,
2017, §6.1), the same type for every model.

    state = model.encode(source_ids)                       # once per sentence
    logits, state = model.decode_step(token_ids, t, state)  # once per output token

`Transformer` and `Seq2Seq` both answer that interface, so the search (`tfm.decoding`) drives either
without knowing which: it reads no field of the state, it only copies and reorders whole fields along
the batch axis. What is inside each field is the model's business.

The fields differ in how the search treats them, and that is why there are four:

- `memory` and `memory_mask` hold one row per *sentence* and never change: beam search never copies
  them per hypothesis (a sentence's `k` hypotheses read one copy) and drops a row only when its
  sentence leaves the batch;
- `cache` holds one row per *hypothesis* and changes at every step: beam search copies it `k` times
  at the start and reorders its rows after every step, with the hypotheses they belong to;
- `prepared` holds no rows at all: weights the model put in the layout its steps read fastest, once per
  search (the output projection's table transposed), which the search hands to every step untouched.

A `NamedTuple` is a nest to `tf.nest` and `tf.while_loop`, so the state travels through the
search's loop as it is.
"""

from typing import Any, NamedTuple


class DecodingState(NamedTuple):
    """The state of incremental decoding, as `encode` returns it and `decode_step` takes and returns it.

    Attributes:
        memory: nest of tensors with one row per sentence (`B`), read-only: what every step reads of the
            source. `Transformer`: one `(keys (B, N, S, d_k), values (B, N, S, d_v))` pair per decoder
            layer, the encoder output projected once for that layer's encoder-decoder attention (§3.2.3).
            `Seq2Seq`: the encoder outputs `(B, S, Dv)`.
        memory_mask: bool `(B, S)`, True = a real source token (False = padding).
        cache: nest of tensors with one row per hypothesis (`B * k` in a beam search of `k` beams, rows
            `b * k + j`; `B` otherwise), replaced at every step. `Transformer`: the self-attention keys
            and values of the positions decoded so far, one entry per decoder layer (§3.2.3's masked
            decoder self-attention, cached). `Seq2Seq`: the recurrent state (`h, c` or `h` per layer, then
            Luong's `h~` with input feeding), `(B, U)` each.
        prepared: nest of tensors with no batch axis, or `()` (the default): what the model computed once
            from its weights so that every step reads them as its kernels prefer. The search never copies,
            reorders or drops it. `Transformer`: `{"logit_table": (D, V)}`, the shared embedding transposed
            (§3.4's pre-softmax projection `x E^T` as a product with a row-major `(D, V)` matrix).
            `Seq2Seq`: `()`.

    `decode_step` accepts `B` memories for `B * G` hypotheses (`G` consecutive rows per memory):
    beam search calls it so, with `G = k`.

    Example:
        >>> import tensorflow as tf
        >>> state = DecodingState(memory=tf.zeros((2, 5, 8)), memory_mask=tf.ones((2, 5), tf.bool),
        ...                       cache=[tf.zeros((2, 16))])
        >>> beams = state._replace(cache=tf.nest.map_structure(lambda t: tf.repeat(t, 3, axis=0), state.cache))
        >>> tuple(beams.memory.shape), tuple(beams.cache[0].shape)   # k = 3 hypotheses per sentence
        ((2, 5, 8), (6, 16))
        >>> len(tf.nest.flatten(beams)), beams.prepared              # a nest: tf.while_loop carries it
        (3, ())
    """

    memory: Any
    memory_mask: Any
    cache: Any
    prepared: Any = ()
