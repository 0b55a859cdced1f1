"""Constituency parsing scores the EVALB way (Sekine & Collins, 1997), with COLLINS.prm (§6.3).

`bracket_scores` counts labeled brackets as EVALB does with the COLLINS.prm parameter file,
the setting behind every WSJ F1 in Table 4 of Vaswani et al. (2017):
    - `-NONE-` empty elements are deleted (DELETE_LABEL -NONE-);
    - punctuation, the words tagged `` '' . : , is deleted from both trees before spans are
      counted (DELETE_LABEL); the positions are read from the gold tree's tags, so a test tree
      whose preterminals are placeholders ("XX") is scored as EVALB scores it once the gold tags
      are put back (EVALB itself reads each tree's own tags and stops on a length mismatch);
    - a bracket left with no words after the deletions is not counted (EVALB's "zero element");
    - labels lose function tags and indices: everything from the first '-' or '=' (NP-SBJ-1 -> NP);
    - ADVP and PRT are the same label (EQ_LABEL ADVP PRT);
    - preterminals (POS tags) are not brackets, and the root wrapper (TOP, ROOT or the empty
      label of "( (S ...) )") is not counted (DELETE_LABEL TOP); the sentence's own S is;
    - brackets are a multiset of (label, start, end): duplicates (unary chains X -> X) each
      need their own match;
    - precision = matched / test brackets, recall = matched / gold brackets, F1 their harmonic
      mean, all in percent over the whole corpus (not averaged per sentence); exact match is the
      percentage of sentences whose two bracket multisets are equal.

`right_branching_tree` is the classic baseline, `parse_report` prints scores beside Table 4
(`TABLE4_WSJ23_F1`). Only NLTK is needed here; TensorFlow is not imported.
"""

import collections

import nltk
import numpy as np

from tfm.parsing.trees import (  # PUNCTUATION_TAGS: COLLINS.prm's DELETE_LABEL
    EMPTY_ELEMENT_TAG,
    LEAF_TOKEN,
    PUNCTUATION_TAGS,
    ROOT_LABELS,
    base_label,
    constituents,
)

EQUIVALENT_LABELS = {"PRT": "ADVP"}  # COLLINS.prm: EQ_LABEL ADVP PRT

# Vaswani et al. (2017), Table 4: English constituency parsing, F1 on WSJ section 23.
# (parser, training, F1)
WSJ_TRAIN_SENTENCES = 39_832  # sections 2-21 of the WSJ treebank: the training set of Table 4's "WSJ only" rows
TABLE4_WSJ23_F1 = (
    ("Vinyals & Kaiser et al. (2014)", "WSJ only, discriminative", 88.3),
    ("Petrov et al. (2006)", "WSJ only, discriminative", 90.4),
    ("Zhu et al. (2013)", "WSJ only, discriminative", 90.4),
    ("Dyer et al. (2016)", "WSJ only, discriminative", 91.7),
    ("Transformer (4 layers)", "WSJ only, discriminative", 91.3),
    ("Zhu et al. (2013)", "semi-supervised", 91.3),
    ("Huang & Harper (2009)", "semi-supervised", 91.3),
    ("McClosky et al. (2006)", "semi-supervised", 92.1),
    ("Vinyals & Kaiser et al. (2014)", "semi-supervised", 92.1),
    ("Transformer (4 layers)", "semi-supervised", 92.7),
    ("Luong et al. (2015)", "multi-task", 93.0),
    ("Dyer et al. (2016)", "generative", 93.3),
)


def evalb_label(label):
    """A bracket label as EVALB compares it: cut at the first '-' or '=', PRT read as ADVP.

    Args:
        label: str, e.g. "NP-SBJ-1", "PP-LOC=2", "PRT".

    Returns:
        str: "NP", "PP", "ADVP". A label that would be cut to nothing (it starts with '-') is kept.

    Example:
        >>> evalb_label("NP-SBJ-1"), evalb_label("PRT"), evalb_label("-NONE-")
        ('NP', 'ADVP', '-NONE-')
    """
    label = base_label(label)
    return EQUIVALENT_LABELS.get(label, label)


def _as_tree(tree, what, index):
    if isinstance(tree, nltk.Tree):
        return tree
    if isinstance(tree, str):
        try:
            return nltk.Tree.fromstring(tree)
        except ValueError as error:
            raise ValueError(f"sentence {index}: the {what} tree {tree!r} does not parse: {error}") from error
    raise ValueError(f"sentence {index}: the {what} tree is a {type(tree).__name__}, not an nltk.Tree or a string")


def _tags_and_brackets(tree):
    """`(tags, brackets)` of a tree: the POS tag of each word (None for a word directly under a phrase) and
    the `(label, start, end)` of each constituent above the preterminals, in positions that skip -NONE-."""
    spans = constituents(tree)
    tags = [None] * spans[-1].end  # the root comes last and covers every word
    for c in spans:
        if c.preterminal:
            tags[c.start] = c.label
    kept = [0]  # kept[i]: words among the first i that are not empty elements
    for tag in tags:
        kept.append(kept[-1] + (tag != EMPTY_ELEMENT_TAG))
    brackets = [(c.label, kept[c.start], kept[c.end]) for c in spans if not c.preterminal]
    return [tag for tag in tags if tag != EMPTY_ELEMENT_TAG], brackets


def _counted_brackets(brackets, kept_before):
    """The EVALB multiset of brackets: spans over kept words, empty spans and the root dropped."""
    counted = collections.Counter()
    for label, start, end in brackets:
        start, end, label = kept_before[start], kept_before[end], evalb_label(label)
        if start == end or label in ROOT_LABELS:
            continue
        counted[(label, start, end)] += 1
    return counted


def sentence_brackets(gold_tree, test_tree, index=0):
    """The counted bracket multisets of one sentence, EVALB style.

    Args:
        gold_tree, test_tree: `nltk.Tree` or bracketed strings over the same words.
        index: int. The sentence's number, for error messages.

    Returns:
        tuple `(gold, test, length)`: two `collections.Counter`s of `(label, start, end)`
        (spans count words after punctuation is deleted) and the sentence length EVALB
        uses for its length cut-off (words other than -NONE-, punctuation included).

    Raises:
        ValueError: naming the sentence when the trees have different numbers of words.

    Example:
        >>> gold, test, length = sentence_brackets("(S (NP (DT The) (NN dog)) (VP (VBZ runs)) (. .))",
        ...                                        "(S (XX The) (VP (XX dog) (XX runs)) (XX .))")
        >>> sorted(gold), sorted(test), length                  # the final "." is not counted in spans
        ([('NP', 0, 2), ('S', 0, 3), ('VP', 2, 3)], [('S', 0, 3), ('VP', 1, 3)], 4)
    """
    gold_tree, test_tree = _as_tree(gold_tree, "gold", index), _as_tree(test_tree, "test", index)
    gold_tags, gold_brackets = _tags_and_brackets(gold_tree)
    test_tags, test_brackets = _tags_and_brackets(test_tree)
    if len(gold_tags) != len(test_tags):
        raise ValueError(f"sentence {index}: the gold tree has {len(gold_tags)} words, the test tree "
                         f"{len(test_tags)} (gold: {_words(gold_tree)!r}; test: {_words(test_tree)!r})")
    kept_before = [0]  # kept_before[i]: words kept among the first i
    for tag in gold_tags:
        kept_before.append(kept_before[-1] + (tag not in PUNCTUATION_TAGS))
    return (_counted_brackets(gold_brackets, kept_before), _counted_brackets(test_brackets, kept_before),
            len(gold_tags))


def _words(tree):
    """The words of a tree other than empty elements, joined by spaces (for error messages)."""
    return " ".join(word for word, tag in tree.pos() if tag != EMPTY_ELEMENT_TAG)


def bracket_scores(gold_trees, test_trees, max_length=None):
    """Labeled bracket precision, recall and F1 of test trees against gold trees (EVALB, COLLINS.prm).

    Args:
        gold_trees: list of `nltk.Tree` or bracketed strings.
        test_trees: list of the same length, over the same words (POS tags may be placeholders).
        max_length: optional int. Score only sentences of at most this many words (EVALB's
            "len<=40" summary with `max_length=40`); punctuation counts, -NONE- does not.

    Returns:
        dict: `precision`, `recall`, `f1` and `exact_match` in percent (0.0 when there is no
        bracket to divide by); `matched_brackets`, `gold_brackets`, `test_brackets` and
        `sentences` (those scored) as ints.

    Raises:
        ValueError: when the lists differ in length, or naming the first sentence whose gold and
            test trees differ in number of words.

    Example:
        >>> gold = ["(S (NP (DT The) (NN dog)) (VP (VBZ runs)) (. .))"]
        >>> test = ["(S (NP (XX The) (XX dog)) (XX runs) (XX .))"]   # the VP is missing
        >>> scores = bracket_scores(gold, test)
        >>> scores["precision"], round(scores["recall"], 2), scores["f1"], scores["exact_match"]
        (100.0, 66.67, 80.0, 0.0)
    """
    gold_trees, test_trees = list(gold_trees), list(test_trees)
    if len(gold_trees) != len(test_trees):
        raise ValueError(f"got {len(gold_trees)} gold trees but {len(test_trees)} test trees")
    matched = gold_total = test_total = exact = sentences = 0
    for index, (gold_tree, test_tree) in enumerate(zip(gold_trees, test_trees)):
        gold, test, length = sentence_brackets(gold_tree, test_tree, index)
        if max_length is not None and length > max_length:
            continue
        sentence_matched = sum((gold & test).values())
        matched += sentence_matched
        gold_total += sum(gold.values())
        test_total += sum(test.values())
        exact += gold == test
        sentences += 1
    precision = 100.0 * matched / test_total if test_total else 0.0
    recall = 100.0 * matched / gold_total if gold_total else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "exact_match": 100.0 * exact / sentences if sentences else 0.0,
        "matched_brackets": matched,
        "gold_brackets": gold_total,
        "test_brackets": test_total,
        "sentences": sentences,
    }


def right_branching_tree(words, tags=None, label="S", tag=LEAF_TOKEN):
    """The right-branching baseline parse: each word attaches to a constituent over the rest.

    `right_branching_tree("a b c")` is `(S (XX a) (S (XX b) (XX c)))`: one bracket per suffix of
    two or more words, all with the same label.

    Args:
        words: list of str or a space-separated str.
        tags: optional list of POS tags, one per word. Defaults to `tag` for every word.
        label: str. Label of every bracket. Defaults to "S".
        tag: str. Placeholder POS tag. Defaults to "XX".

    Returns:
        `nltk.Tree`: for one word `(S (XX w))`; for none, `(S )`.

    Raises:
        ValueError: when `tags` and `words` differ in length.

    Example:
        >>> print(right_branching_tree("a b c"))
        (S (XX a) (S (XX b) (XX c)))
    """
    words = words.split() if isinstance(words, str) else list(words)
    tags = [tag] * len(words) if tags is None else list(tags)
    if len(tags) != len(words):
        raise ValueError(f"got {len(tags)} tags for {len(words)} words")
    leaves = [nltk.Tree(t, [w]) for t, w in zip(tags, words)]
    if len(leaves) < 2:
        return nltk.Tree(label, leaves)
    tree = nltk.Tree(label, leaves[-2:])
    for leaf in reversed(leaves[:-2]):
        tree = nltk.Tree(label, [leaf, tree])
    return tree


def parse_report(scores, name="this model", repair_rate=None):
    """A text table: the paper's Table 4 and one row for `scores`.

    Args:
        scores: dict from `bracket_scores`.
        name: str. The row's name.
        repair_rate: optional float in [0, 1]: the fraction of outputs `delinearize` had to repair.

    Returns:
        str: one line per Table 4 row, then the new row with P / R / F1, exact match, the bracket
        and sentence counts (and the repair rate).

    Example:
        >>> gold = ["(S (NP (DT The) (NN dog)) (VP (VBZ runs)))"]
        >>> report = parse_report(bracket_scores(gold, [right_branching_tree("The dog runs")]), name="right-branching")
        >>> print(report.splitlines()[-1])
        right-branching    (this evaluation)    40.00   P 50.00  R 33.33  exact 0.00  1/3 gold, 2 test brackets, ...
    """
    lines = [f"{'Parser':<34}{'Training':<28}{'WSJ 23 F1':>9}"]
    lines += [f"{parser:<34}{training:<28}{f1:>9.1f}" for parser, training, f1 in TABLE4_WSJ23_F1]
    row = (f"{name:<34}{'(this evaluation)':<28}{scores['f1']:>9.2f}   "
           f"P {scores['precision']:.2f}  R {scores['recall']:.2f}  exact {scores['exact_match']:.2f}  "
           f"{scores['matched_brackets']}/{scores['gold_brackets']} gold, {scores['test_brackets']} test brackets, "
           f"{scores['sentences']} sentences")
    if repair_rate is not None:
        row += f", {100.0 * repair_rate:.1f}% repaired"
    return "\n".join(lines + [row])


def learning_curve_trend(points, at=WSJ_TRAIN_SENTENCES):
    """Each model's F1 as a straight line in log(training sentences), fitted by least squares.

    Three points make a crude trend, not a forecast: it says how far the measured slope would carry if
    it held, which learning curves usually do not (they bend down as F1 nears its ceiling).

    Args:
        points: `[{"model", "train_sentences", "f1"}]`, as `benchmarks/parsing_at_budget.py
            --learning-curve` writes them; a model needs points at two sizes or more.
        at: the training set size to carry the line to (default: WSJ sections 2-21, 39,832).

    Returns:
        `{model: {"per_doubling": F1 gained per doubling of the data, "at": F1 the line reaches at
        `at` sentences}}`.

    Example:
        >>> trend = learning_curve_trend([{"model": "m", "train_sentences": 1000, "f1": 20.0},
        ...                               {"model": "m", "train_sentences": 2000, "f1": 25.0}], at=8000)
        >>> trend["m"]
        {'per_doubling': 5.0, 'at': 35.0}
    """
    trend = {}
    for model in sorted({p["model"] for p in points}):
        sizes = np.array([p["train_sentences"] for p in points if p["model"] == model], dtype=float)
        f1 = np.array([p["f1"] for p in points if p["model"] == model], dtype=float)
        if len(set(sizes)) < 2:
            raise ValueError(f"model {model!r}: a trend needs points at two training sizes or more, "
                             f"got {sorted(sizes)}")
        slope, intercept = np.polyfit(np.log2(sizes), f1, 1)
        trend[model] = {"per_doubling": round(float(slope), 2), "at": round(float(slope * np.log2(at) + intercept), 2)}
    return trend
