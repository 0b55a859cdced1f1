"""Constrained decoding: which next tokens a hypothesis may take, so that every output is well formed.

    search(model, source_ids, beam_size=4, constraint=constraint)
    Translator(model, tokenizer, constraint=constraint)

A constraint removes outputs from the search instead of repairing them afterwards: at every step
the tokens it forbids get probability zero (their logits are set to -inf before the softmax, so
the allowed tokens' probabilities renormalise). §6.3's parser uses one
(`tfm.parsing.TreeConstraint`: only well-formed trees with one leaf per word); the search itself
knows nothing of trees, only this protocol.

A constraint is an object with a `vocab_size` and two methods, both TensorFlow ops (they run
inside the search's `tf.while_loop`, under `tf.function` and XLA):

- `sentence_info(source_ids (B, S)) -> (B,) int32`: what the constraint needs to know about
  each source sentence (the tree constraint: its number of words), computed once;
- `allowed(prefix (N, L), index, info (N,)) -> (N, V) bool`: the tokens hypothesis `i` may
  write at step `index`, given its prefix (START at column 0, its tokens at columns
  1..index, zeros after) and its sentence's info.

`Constraint` is that protocol as a base class (any object with the same methods works too).
Whatever state a constraint needs is read from the prefix each step, so the search keeps no
extra state to reorder with the beams or to drop when a sentence leaves the batch. When no
token is allowed, END is (the search never gets stuck); past a sentence's length limit END is
forced as always.
"""

import tensorflow as tf


class Constraint:
    """The protocol of `search(..., constraint=...)`: the tokens each hypothesis may write next.

    Subclasses set `vocab_size` and implement `allowed`; `sentence_info` defaults to nothing to
    know (zeros), for constraints that depend on the prefix only.

    Example: a constraint that never writes token 7.

        >>> class Never7(Constraint):
        ...     vocab_size = 100
        ...     def allowed(self, prefix, index, info):
        ...         return tf.tile((tf.range(self.vocab_size) != 7)[tf.newaxis], [tf.shape(prefix)[0], 1])
        >>> never7 = Never7()
        >>> info = never7.sentence_info(tf.constant([[5, 6, 0], [8, 0, 0]]))   # (B,): nothing to know
        >>> allowed = never7.allowed(tf.constant([[2, 0, 0], [2, 0, 0]]), 0, info)
        >>> tuple(allowed.shape), bool(allowed[0, 7]), bool(allowed[0, 8])
        ((2, 100), False, True)

    Attributes:
        vocab_size: int. The ids the constraint covers; `Translator` refuses a constraint whose
            vocabulary is not the model's.
    """

    vocab_size = None

    def sentence_info(self, source_ids):
        """int32 `(B,)`: what `allowed` needs to know about each source sentence `(B, S)`, computed once.

        The default is zeros (nothing to know)."""
        return tf.zeros([tf.shape(source_ids)[0]], tf.int32)

    def allowed(self, prefix, index, info):
        """bool `(N, V)`: the tokens each of `N` hypotheses may write at step `index`.

        Args:
            prefix: int `(N, L)`, START at column 0 and the tokens so far at 1..index, zeros after.
            index: int scalar, the step (= tokens written so far).
            info: `(N,)`, each hypothesis' sentence's `sentence_info`.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement allowed(prefix, index, info)")
