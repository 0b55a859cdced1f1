"""English constituency parsing as translation (Vaswani et al., 2017, §6.3, Table 4), in one place.

    trees.py            the vocabulary of trees: the linearization's tokens, the treebank's special labels,
                        the preterminal test and the one span walker (`constituents`), defined once
    preprocessing.py    treebank trees as parsers see them: no -NONE-, no function tags, no root wrapper
    linearization.py    tree -> "(S (NP XX XX ) XX )" and back, repairing what is ill formed
    evalb.py            labeled bracket F1 the EVALB way (COLLINS.prm), the right-branching baseline, Table 4
    tree_constraint.py  `TreeConstraint`: the search writes only well-formed trees (a `tfm.decoding.Constraint`)
    parse_and_score.py  a run's model parses a split, its trees are rebuilt and scored (`tfm evaluate`)
    treebank.py         NLTK's Penn Treebank sample: reading it, the splits, sentence -> linearized tree pairs
    (the pictures of trees, `plot_tree` and `plot_learning_curve`, are `tfm.viz`'s)

    tree = tfm.parsing.preprocess_tree(raw)                    # an nltk.Tree from tfm.parsing.treebank
    tokens = tfm.parsing.linearize(tree)                        # ["(S", "(NP", "XX", "XX", ")", ...]
    rebuilt, repaired = tfm.parsing.delinearize(tokens, tree.leaves(), tags=[t for _, t in tree.pos()])
    tfm.parsing.bracket_scores([tree], [rebuilt])["f1"]         # 100.0

Names are imported lazily (PEP 562): `import tfm.parsing` imports neither NLTK nor TensorFlow. `trees`
needs neither; preprocessing, linearization and scoring need NLTK only, the plots matplotlib; the
constraint and the evaluation need TensorFlow.
"""

import pkgutil as _pkgutil

from tfm._lazy import lazy_attributes as _lazy_attributes

# Public name -> the module of this package that defines it.
_EXPORTS = {
    "CLOSE_TOKEN": "trees",
    "Constituent": "trees",
    "DATASET_LEAVES": "trees",
    "EMPTY_ELEMENT_TAG": "trees",
    "LEAF_STYLES": "trees",
    "LEAF_TOKEN": "trees",
    "TAG_LEAVES": "trees",
    "XX_LEAVES": "trees",
    "POS_TAGS": "trees",
    "OPEN_PREFIX": "trees",
    "REPAIR_ROOT_LABEL": "trees",
    "ROOT_LABELS": "trees",
    "UNKNOWN_LABEL": "trees",
    "base_label": "trees",
    "constituents": "trees",
    "is_preterminal": "trees",
    "labeled_spans": "trees",
    "leaf_tokens": "trees",
    "tree_tokens": "trees",
    "preprocess_tree": "preprocessing",
    "strip_function_tags": "preprocessing",
    "Delinearized": "linearization",
    "delinearize": "linearization",
    "linearize": "linearization",
    "EQUIVALENT_LABELS": "evalb",
    "PUNCTUATION_TAGS": "trees",
    "TABLE4_WSJ23_F1": "evalb",
    "bracket_scores": "evalb",
    "evalb_label": "evalb",
    "parse_report": "evalb",
    "right_branching_tree": "evalb",
    "sentence_brackets": "evalb",
    "TreeConstraint": "tree_constraint",
    "evaluate_parsing": "parse_and_score",
    "evaluate_run": "parse_and_score",
    "one_line": "parse_and_score",
    "split_trees": "parse_and_score",
    "WSJ_TRAIN_SENTENCES": "evalb",
    "learning_curve_trend": "evalb",
    "load_ptb_parse": "treebank",
    "ptb_parse_trees": "treebank",
    "ptb_parse_pairs": "treebank",
}
_SUBMODULES = tuple(sorted(m.name for m in _pkgutil.iter_modules(__path__) if not m.name.startswith("_")))

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = _lazy_attributes(__name__, {name: f"tfm.parsing.{module}" for name, module in _EXPORTS.items()},
                                       _SUBMODULES)
