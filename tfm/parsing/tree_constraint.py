"""The tree constraint: the search writes only well-formed linearized trees (§6.3, Table 4).

    constraint = TreeConstraint.from_tokenizer(tokenizer)
    search(model, source_ids, beam_size=21, alpha=0.3, constraint=constraint)
    Translator(model, tokenizer, constraint=constraint)

§6.3 notes that parsing's "output is subject to strong structural constraints". Vinyals et al.
(2015, "Grammar as a foreign language") decode without constraints and repair afterwards; a
small model trained on a tenth of the WSJ (NLTK's sample) writes plausible openings and then
loses count — hundreds of ")" with nothing open, more or fewer "XX" than words, no END — so
nearly every output needs repairs. A constraint removes those outputs from the search instead:
at every step the tokens that cannot continue a well-formed tree get probability zero.

`TreeConstraint` is a `tfm.decoding.Constraint` (the search's generic protocol: `sentence_info`
once per source sentence, `allowed` at every step, both TensorFlow ops). Its state is read from
the prefix each step (a few gathers and sums over at most `T_max` columns, little beside the
decoder), so the search needs no extra state to reorder with the beams or to drop when a
sentence leaves the batch.
"""

import numpy as np
import tensorflow as tf

from tfm.decoding.constraints import Constraint
from tfm.parsing.trees import CLOSE_TOKEN, LEAF_TOKEN, OPEN_PREFIX, XX_LEAVES
from tfm.parsing.trees import leaf_tokens as leaf_tokens_of
from tfm.special_tokens import END_ID, RESERVED_TOKENS

WORD_START = "\u2581"  # SentencePiece's "▁": the piece begins a word


class TreeConstraint(Constraint):
    """Only well-formed linearized trees with exactly one leaf per source word (§6.3).

    The vocabulary's pieces fall into four classes: openers "▁(LABEL", closers "▁)" (or a
    typed "▁)LABEL"), leaves ("▁XX", or the POS tags "▁NN", "▁DT", ...), and END; every other piece (word pieces, PAD,
    START, UNK) is never written. With `d` brackets open, `x` leaves written of the sentence's `n`
    words and `last` the previous token:

    - an opener may follow when `x < n` (a new constituent will get a word) and either
      nothing was written yet (the root) or `d > 0` (one root only);
    - a leaf when `d > 0` and `x < n`;
    - a closer when `d > 0`, `last` is not an opener (no empty constituent), and either
      `d > 1` or `x = n` (the root closes only once every word has its leaf);
    - END when `d = 0` after the root was written.

    Every path through these rules is a tree the rules of `tfm.parsing.delinearize`
    accept unrepaired, and at every step some token is allowed, so an output needs a repair
    only when it reaches the length limit (source length + 300, §6.3) before END. A typed
    closer is not checked against the label it closes (decoded as `delinearize` does).

    Args:
        vocabulary: list of str, every piece in id order (`SubwordTokenizer.vocabulary()`).
        leaf_tokens: str or collection of str. What stands for a word: ("XX",) (default) or the
            POS tags (`leaf_tokens("tags")` of `tfm.parsing.trees`); those found in the vocabulary
            as whole pieces are leaves.
        close_token, open_prefix: str. The linearization's tokens (`tfm.parsing.trees`), each a
            whole piece with SentencePiece's "▁" before it.

    Raises:
        ValueError: when the vocabulary has no opener, closer or leaf piece (a tokenizer
            learned without `whole_tokens`: the trees' tokens are split into pieces).

    Example:
        >>> vocabulary = "[PAD] [UNK] [START] [END] ▁(S ▁(NP ▁) ▁XX ▁the ▁dog".split()
        >>> constraint = TreeConstraint(vocabulary)
        >>> constraint
        TreeConstraint(2 openers, 1 closer(s), 1 leaf piece(s), vocabulary 10)
        >>> int(constraint.sentence_info(tf.constant([[8, 9]]))[0])          # "▁the ▁dog": 2 words
        2
        >>> prefix = tf.constant([[2, 4, 0, 0]])                              # START "(S": one bracket open
        >>> allowed = constraint.allowed(prefix, tf.constant(1), tf.constant([2]))[0].numpy()
        >>> [vocabulary[i] for i in np.flatnonzero(allowed)]                  # an opener or a leaf; no closer yet
        ['▁(S', '▁(NP', '▁XX']
    """

    def __init__(self, vocabulary, leaf_tokens=(LEAF_TOKEN,), close_token=CLOSE_TOKEN, open_prefix=OPEN_PREFIX):
        pieces = list(vocabulary)
        leaf_tokens = (leaf_tokens,) if isinstance(leaf_tokens, str) else tuple(leaf_tokens)
        leaf_pieces = {WORD_START + token for token in leaf_tokens}
        is_open = np.array([p.startswith(WORD_START + open_prefix) and len(p) > 1 + len(open_prefix)
                            for p in pieces])
        is_close = np.array([p.startswith(WORD_START + close_token) for p in pieces])
        is_leaf = np.array([p in leaf_pieces for p in pieces])
        missing = [name for name, mask in (("opener '▁(LABEL'", is_open), (f"closer '▁{close_token}'", is_close),
                                           (f"leaf '▁{leaf_tokens[0]}'" + (" (or another POS tag)"
                                                                           if len(leaf_tokens) > 1 else ""), is_leaf))
                   if not mask.any()]
        if missing:
            raise ValueError(f"the vocabulary ({len(pieces)} pieces) has no {', no '.join(missing)} piece: "
                             "learn the tokenizer with the trees' tokens as whole pieces "
                             "(train_tokenizer(..., whole_tokens=tfm.parsing.treebank.tree_whole_tokens(pairs)))")
        word_start = np.array([p.startswith(WORD_START) for p in pieces])
        word_start[: len(RESERVED_TOKENS)] = False
        self.vocab_size = len(pieces)
        self.open_ids = np.flatnonzero(is_open).tolist()
        self.close_ids = np.flatnonzero(is_close).tolist()
        self.leaf_ids = np.flatnonzero(is_leaf).tolist()
        # Per-id tables: how a token moves the bracket depth, whether it is a leaf, whether it starts a word.
        self._depth = tf.constant(is_open.astype(np.int32) - is_close.astype(np.int32))  # (V,)
        self._leaf = tf.constant(is_leaf.astype(np.int32))  # (V,)
        self._opener = tf.constant(is_open)  # (V,) bool
        self._word_start = tf.constant(word_start.astype(np.int32))  # (V,)
        self._classes = {name: tf.constant(mask)[tf.newaxis, :] for name, mask in
                         (("open", is_open), ("close", is_close), ("leaf", is_leaf),
                          ("end", np.arange(self.vocab_size) == END_ID))}  # (1, V) bool each

    @classmethod
    def from_tokenizer(cls, tokenizer, leaves=XX_LEAVES, **kwargs):
        """The constraint for a `SubwordTokenizer`'s vocabulary (learned with the trees' whole tokens);
        `leaves`: the linearization's leaf style, "XX" or "tags" (`tfm.parsing.linearize`).

        Args:
            tokenizer: a `SubwordTokenizer` learned with the trees' tokens as `whole_tokens`.
            leaves: "XX" or "tags".
            **kwargs: `close_token`, `open_prefix` of `TreeConstraint`.

        Example:
            >>> from tfm.data import train_tokenizer
            >>> targets = ["(S (NP XX XX ) (VP XX ) XX )"]
            >>> tokenizer = train_tokenizer(targets + ["The man saw ."], vocab_size=20, whole_tokens=targets[0].split())
            >>> TreeConstraint.from_tokenizer(tokenizer).leaf_ids == [tokenizer.vocabulary().index("▁XX")]
            True
        """
        return cls(tokenizer.vocabulary(), leaf_tokens=leaf_tokens_of(leaves), **kwargs)

    def sentence_info(self, source_ids):
        """int32 `(B,)`: the words of each source `(B, S)`, counted as the pieces that begin with "▁".

        Args:
            source_ids: int `(B, S)`.

        Example:
            >>> vocabulary = "[PAD] [UNK] [START] [END] ▁(S ▁(NP ▁) ▁XX ▁the ▁dog".split()
            >>> TreeConstraint(vocabulary).sentence_info(tf.constant([[8, 9, 0], [9, 0, 0]])).numpy().tolist()
            [2, 1]
        """
        source_ids = tf.cast(source_ids, tf.int32)
        return tf.reduce_sum(tf.gather(self._word_start, source_ids), axis=1)

    def state(self, prefix, index):
        """`(depth, leaves, last_is_open)`, each `(N,)`: the bracket depth, the leaves written and whether the
        last token opened a constituent, read from `prefix (N, L)` (START, then `index` tokens, then zeros).

        Args:
            prefix: int `(N, L)`.
            index: int scalar. Tokens written so far.

        Example:
            >>> vocabulary = "[PAD] [UNK] [START] [END] ▁(S ▁(NP ▁) ▁XX ▁the ▁dog".split()
            >>> prefix = tf.constant([[2, 4, 5, 7, 0]])
            >>> depth, leaves, last_open = TreeConstraint(vocabulary).state(prefix, tf.constant(3))
            >>> int(depth[0]), int(leaves[0]), bool(last_open[0])                 # START (S (NP XX
            (2, 1, False)
        """
        prefix = tf.cast(prefix, tf.int32)
        depth = tf.reduce_sum(tf.gather(self._depth, prefix), axis=1)  # PAD / START move nothing
        leaves = tf.reduce_sum(tf.gather(self._leaf, prefix), axis=1)
        last = tf.gather(prefix, tf.reshape(index, [1]), axis=1)[:, 0]  # (N,)
        return depth, leaves, tf.gather(self._opener, last)

    def allowed(self, prefix, index, info):
        """bool `(N, V)`: the tokens each hypothesis may write next (see the class docstring).

        Args:
            prefix: int `(N, L)`, START at column 0 and the tokens so far at 1..index.
            index: int scalar, the step (= tokens written so far).
            info: int32 `(N,)`, each hypothesis' sentence's word count (`sentence_info`).

        Example:
            >>> vocabulary = "[PAD] [UNK] [START] [END] ▁(S ▁(NP ▁) ▁XX ▁the ▁dog".split()
            >>> constraint = TreeConstraint(vocabulary)
            >>> done = tf.constant([[2, 4, 7, 7, 6]])                             # START (S XX XX ): the tree is whole
            >>> [vocabulary[i] for i in np.flatnonzero(constraint.allowed(done, tf.constant(4), tf.constant([2]))[0])]
            ['[END]']
        """
        depth, leaves, last_open = self.state(prefix, index)
        words = tf.cast(info, tf.int32)
        started = tf.fill(tf.shape(depth), tf.greater(index, 0))
        room = leaves < words
        inside = depth > 0
        may = {
            "open": room & (inside | tf.logical_not(started)),
            "leaf": room & inside,
            "close": inside & tf.logical_not(last_open) & ((depth > 1) | tf.logical_not(room)),
            "end": started & tf.logical_not(inside),
        }
        allowed = tf.zeros([tf.shape(depth)[0], self.vocab_size], tf.bool)
        for name, rows in may.items():  # (N, 1) & (1, V)
            allowed = allowed | (rows[:, tf.newaxis] & self._classes[name])
        return allowed

    def __repr__(self):
        return (f"TreeConstraint({len(self.open_ids)} openers, {len(self.close_ids)} closer(s), "
                f"{len(self.leaf_ids)} leaf piece(s), vocabulary {self.vocab_size})")
