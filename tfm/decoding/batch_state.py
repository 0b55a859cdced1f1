"""The search's state when shapes may change: a sentence leaves the batch once decided, caches grow.

`tfm.decoding.greedy_or_beam` keeps its loop state as two nests, `state["sentence"]` (one row per
sentence) and `state["rows"]` (one row per beam, `k` per sentence), plus `outputs`
(one row per sentence of the original batch). When sentences are decided, `retire`
writes their results into `outputs` at their original positions and drops their rows
from both nests; `while_loop` relaxes the loop's shape invariants so batch sizes and
cache lengths may change between steps. XLA needs static shapes: `use_static_shapes`
says when to keep them (inside an XLA trace: `tfm._framework.in_xla_context`).
"""

import tensorflow as tf

from tfm._framework import in_xla_context


def use_static_shapes(static_shapes, use_cache):
    """The search's `static_shapes` argument resolved: None = static under XLA and without a cache.

    Args:
        static_shapes: bool or None.
        use_cache: bool. Without a cache the prefix is recomputed whole, so nothing grows anyway.

    Example:
        >>> use_static_shapes(None, use_cache=True), use_static_shapes(None, use_cache=False)
        (False, True)
    """
    if static_shapes is None:
        return in_xla_context() or not use_cache
    return bool(static_shapes)


def relaxed(structure):
    """Loop-variable shape invariants: every dimension may change but the last (a feature width).

    Example:
        >>> relaxed({"cache": tf.zeros((4, 2, 0, 8)), "limit": tf.zeros((4,))})
        {'cache': TensorShape([None, None, None, 8]), 'limit': TensorShape([None])}
    """
    def invariant(t):
        rank = t.shape.rank
        return tf.TensorShape([None] * (rank - 1) + list(t.shape[-1:]) if rank > 1 else [None] * rank)
    return tf.nest.map_structure(invariant, structure)


def rows_of(keep, per_sentence=1):
    """int32 row indices of the sentences where `keep (b,)` holds, `per_sentence` rows each (beams).

    Example:
        >>> rows_of(tf.constant([True, False, True]), per_sentence=2).numpy().tolist()   # rows b * 2 + j
        [0, 1, 4, 5]
    """
    kept = tf.cast(tf.where(keep)[:, 0], tf.int32)  # (b',)
    if per_sentence == 1:
        return kept
    return tf.reshape(kept[:, tf.newaxis] * per_sentence + tf.range(per_sentence), [-1])  # (b' * K,)


def take(structure, rows):
    """Every tensor of `structure` at `rows` of its first axis: beams reordered, sentences dropped.

    Works on any nest (`tf.nest`): a `DecodingState`'s cache, whatever the model put in it.

    Args:
        structure: nest of tensors, each `(N, ...)`.
        rows: int `(M,)`, indices into `N`.

    Returns:
        the same nest of `(M, ...)` tensors.

    Example:
        >>> cache = {"keys": tf.constant([[1.0], [2.0], [3.0]]), "state": [tf.constant([10, 20, 30])]}
        >>> take(cache, tf.constant([2, 2, 0]))["state"][0].numpy().tolist()
        [30, 30, 10]
    """
    return tf.nest.map_structure(lambda t: tf.gather(t, rows, axis=0), structure)


def store(outputs, positions, results, which):
    """`outputs[name][positions[i]] = results[name][i]` for every sentence `i` where `which (b,)` holds.

    Example:
        >>> outputs = {"score": tf.zeros([4])}                       # the whole batch
        >>> results = {"score": tf.constant([-1.0, -2.0])}           # two sentences still searching
        >>> store(outputs, tf.constant([3, 1]), results, tf.constant([True, False]))["score"].numpy().tolist()
        [0.0, 0.0, 0.0, -1.0]
    """
    rows = rows_of(which)
    index = tf.gather(positions, rows)[:, tf.newaxis]  # (b', 1): each sentence's place in the batch
    return {name: tf.tensor_scatter_nd_update(out, index, tf.gather(results[name], rows))
            for name, out in outputs.items()}


def retire(done, state, outputs, results, per_sentence, reorder=None):
    """Finished sentences leave the batch: their `results` go to `outputs`, every tensor of `state`
    (`sentence`: one row per sentence; `rows`: `per_sentence` rows each) keeps the others' rows.

    Args:
        done: bool `(b,)`, the sentences decided at this step.
        state: `{"sentence": nest of (b, ...), "rows": nest of (b * per_sentence, ...)}`.
        outputs: nest of `(B, ...)`, one row per sentence of the original batch.
        results: the values of `outputs`' names for the `b` sentences, `(b, ...)` each.
        per_sentence: int, rows per sentence in `state["rows"]` (beams).
        reorder: None or int `(b * per_sentence,)`: `state["rows"]` are first taken at these rows (beam search:
            each beam's cache follows the beam it came from). The reordering and the leaving are then one
            gather per tensor, not two: the same values, one copy of the caches fewer.

    Returns:
        `(state, outputs)`: `state` with the undecided sentences' rows only, `outputs` with the decided ones'.

    Example:
        >>> state = {"sentence": {"position": tf.constant([0, 1])}, "rows": {"cache": tf.constant([1, 2, 3, 4])}}
        >>> outputs, results = {"score": tf.zeros([2])}, {"score": tf.constant([-1.0, -2.0])}
        >>> state, outputs = retire(tf.constant([True, False]), state, outputs, results, per_sentence=2)
        >>> state["rows"]["cache"].numpy().tolist(), outputs["score"].numpy().tolist()
        ([3, 4], [-1.0, 0.0])
        >>> state = {"sentence": {"position": tf.constant([0, 1])}, "rows": {"cache": tf.constant([1, 2, 3, 4])}}
        >>> retire(tf.constant([True, False]), state, outputs, results, 2, reorder=tf.constant([0, 0, 3, 3])
        ...        )[0]["rows"]["cache"].numpy().tolist()    # sentence 1's rows of the reordered [1, 1, 4, 4]
        [4, 4]
    """
    def leave():
        stored = store(outputs, state["sentence"]["position"], results, done)
        keep = tf.logical_not(done)
        rows = rows_of(keep, per_sentence)
        return {"sentence": take(state["sentence"], rows_of(keep)),
                "rows": take(state["rows"], rows if reorder is None else tf.gather(reorder, rows))}, stored

    def stay():
        return (state if reorder is None else {**state, "rows": take(state["rows"], reorder)}), outputs
    return tf.cond(tf.reduce_any(done), leave, stay)


def while_loop(cond, body, loop_vars, static_shapes):
    """`tf.while_loop`, with relaxed shape invariants when the batch shrinks and the caches grow.

    Example:
        >>> grow = lambda i, x: (i + 1, tf.concat([x, x[-1:] + 1], axis=0))
        >>> _, grown = while_loop(lambda i, x: i < 3, grow, (tf.constant(0), tf.constant([0])), static_shapes=False)
        >>> grown.numpy().tolist()
        [0, 1, 2, 3]
    """
    if static_shapes:
        return tf.while_loop(cond, body, loop_vars)
    return tf.while_loop(cond, body, loop_vars, shape_invariants=relaxed(loop_vars))
