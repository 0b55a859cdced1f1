"""Parsing evaluation (§6.3, Table 4): parse sentences with a run's model, rebuild the trees, score them
the EVALB way.

    tfm evaluate --run runs/parse --split test            # the command line's route to `evaluate_run`
    trees, scores = tfm.parsing.evaluate_run(model, tokenizer, run_info, "test")
    trees, scores = tfm.parsing.evaluate_parsing(model, tokenizer, sentences, gold_trees, beam_size=21)

Each output is rebuilt into a well-formed tree with one leaf per word (`delinearize`; repairs are
counted, not hidden), its preterminals labelled with the gold POS tags (EVALB scores no
preterminal; its punctuation rule reads them), and scored with `bracket_scores`. The search is
constrained to well-formed trees (`TreeConstraint`) unless `constrained=False`.
"""

import time

from tfm.data import PARSING_TASKS, canonical_split
from tfm.decoding import Translator
from tfm.parsing.evalb import bracket_scores
from tfm.parsing.linearization import delinearize
from tfm.parsing.tree_constraint import TreeConstraint
from tfm.parsing.treebank import ptb_parse_trees
from tfm.parsing.trees import DATASET_LEAVES, XX_LEAVES


def evaluate_parsing(model, tokenizer, sources, gold_trees, beam_size=None, alpha=None, batch_size=32,
                     constrained=True, leaves=XX_LEAVES, max_extra_length=None):
    """Parse `sources` (sentences, words separated by spaces) and score them the EVALB way (§6.3, Table 4).

    Args:
        model, tokenizer: a run's model and tokenizer.
        sources: list of str.
        gold_trees: list of `nltk.Tree`, the same sentences.
        beam_size, alpha: decoding settings; None = `Translator`'s (4, 0.6). A parsing run's are its
            `DecodingConfig`'s (§6.3: 21, 0.3), which `tfm evaluate` passes.
        batch_size: int. Sentences decoded together.
        constrained: bool. Search only well-formed trees with one leaf per word
            (`TreeConstraint`); an output is then repaired only when it reaches
            the length limit. False: unconstrained search, then repairs (Vinyals et al., 2015).
        leaves: "XX" or "tags": what stands for a word in the model's outputs (its dataset's,
            `tfm.parsing.DATASET_LEAVES`; `evaluate_run` reads it from the run).
        max_extra_length: int or None. Trees end at sentence length + this (the run's
            `DecodingConfig.max_extra_length`: 300 in the parse presets); None = the model's room.

    Returns:
        `(trees, scores)`: the `nltk.Tree`s and the dict of `bracket_scores` plus
        `repaired` (count), `repair_rate`, `beam_size`, `alpha`, `constrained` and `seconds`.

    Raises:
        ValueError: when `sources` and `gold_trees` differ in length.

    Example:
        A run's model parses its test split (`tfm evaluate --run runs/parse --split test` does this):

            translator = tfm.Translator.from_run("runs/parse")
            sources, gold = split_trees(tfm.runs.read_run_config("runs/parse"), "test")
            trees, scores = evaluate_parsing(translator.model, translator.tokenizer, sources, gold, beam_size=21,
                                             alpha=0.3)
            print(parse_report(scores, repair_rate=scores["repair_rate"]))

        The scoring alone, on a tree rebuilt from an output:

        >>> from tfm.parsing import bracket_scores, delinearize
        >>> gold = ["(S (NP (DT The) (NN man)) (VP (VBD saw)) (. .))"]
        >>> tree = delinearize("(S (NP XX XX ) (VP XX ) XX )", "The man saw .", tags=["DT", "NN", "VBD", "."]).tree
        >>> bracket_scores(gold, [tree])["f1"]
        100.0
    """
    if len(sources) != len(gold_trees):
        raise ValueError(f"{len(sources)} sentences but {len(gold_trees)} gold trees")
    constraint = TreeConstraint.from_tokenizer(tokenizer, leaves=leaves) if constrained else None
    translator = Translator(model, tokenizer, beam_size=beam_size, alpha=alpha, batch_size=batch_size,
                            constraint=constraint, max_extra_length=max_extra_length)
    start = time.perf_counter()
    outputs = translator(list(sources))
    seconds = time.perf_counter() - start
    trees, repaired = [], 0
    for source, output, gold in zip(sources, outputs, gold_trees):
        tree, fixed = delinearize(output, source.split(), tags=[tag for _, tag in gold.pos()])
        trees.append(tree)
        repaired += bool(fixed)
    scores = bracket_scores(gold_trees, trees)
    scores.update(repaired=repaired, repair_rate=repaired / max(len(trees), 1), beam_size=translator.beam_size,
                  alpha=translator.alpha, constrained=bool(constrained), seconds=round(seconds, 2))
    return trees, scores


def split_trees(run_info, split, limit=None):
    """The sentences and gold trees of a parsing run's split: what the model reads and what it is scored against.

    Args:
        run_info: a run's config.json as `tfm.runs.read_run_config` reads it (its `data` entry names the dataset
            and the cache folder).
        split: "validation" (or an alias: "val", "dev") or "test".
        limit: int or None. Only the first `limit` sentences.

    Returns:
        `(sources, gold_trees)`: each source the tree's words joined by spaces (the sources the
        run trained on, `tfm.parsing.treebank.ptb_parse_pairs`), and the preprocessed `nltk.Tree`s.

    Raises:
        ValueError: for the training split, a run that is not a parsing run, or a `limit` below 1.

    Example:
        >>> import tempfile
        >>> from tfm.parsing.treebank import write_example_treebank
        >>> tmp = tempfile.TemporaryDirectory()
        >>> run_info = {"data": {"dataset": "ptb_parse", "data_dir": write_example_treebank(tmp.name)}}
        >>> sources, gold = split_trees(run_info, "test", limit=2)
        >>> sources
        ['The man saw a dog .', 'The man saw a dog .']
    """
    if canonical_split(split) == "train":
        raise ValueError("split='train': evaluate on 'val' or 'test', which the model has not trained on")
    data = run_info["data"]
    if data["dataset"] not in PARSING_TASKS:
        raise ValueError(f"the run was trained on {data['dataset']!r}, not a parsing task {PARSING_TASKS}")
    if limit is not None and int(limit) < 1:
        raise ValueError(f"limit={limit}: expected a positive number of sentences")
    gold = ptb_parse_trees(split, data_dir=data.get("data_dir"))[:limit]
    return [" ".join(tree.leaves()) for tree in gold], gold


def evaluate_run(model, tokenizer, run_info, split, limit=None, beam_size=None, alpha=None, constrained=True,
                 max_extra_length=None):
    """`tfm evaluate` on a parsing run: its split parsed and scored (`evaluate_parsing`).

    Args:
        model, tokenizer: a run's (`tfm.Translator.from_run(run)`'s `model` and `tokenizer`).
        run_info: its config.json (`tfm.runs.read_run_config`), with `checkpoint`: the weights file read.
        split, limit: as in `split_trees`.
        beam_size, alpha, constrained, max_extra_length: as in `evaluate_parsing`.

    Returns:
        `(trees, scores)`: as `evaluate_parsing`, with `split`, `dataset` and `checkpoint` in the scores.

    Example:
        What `tfm evaluate --run runs/parse --split test --limit 100` runs:

            translator = tfm.Translator.from_run("runs/parse")
            run_info = {**tfm.runs.read_run_config("runs/parse"), "checkpoint": tfm.runs.weights_path("runs/parse")}
            trees, scores = evaluate_run(translator.model, translator.tokenizer, run_info, "test", limit=100)
            scores["f1"], scores["split"], scores["checkpoint"]

        A run that is not a parsing run is refused before anything is decoded:

        >>> evaluate_run(None, None, {"data": {"dataset": "numbers"}}, "test")
        Traceback (most recent call last):
        ...
        ValueError: the run was trained on 'numbers', not a parsing task ('ptb_parse', 'ptb_parse_tags')
    """
    sources, gold = split_trees(run_info, split, limit)
    trees, scores = evaluate_parsing(model, tokenizer, sources, gold, beam_size=beam_size, alpha=alpha,
                                     constrained=constrained, leaves=DATASET_LEAVES[run_info["data"]["dataset"]],
                                     max_extra_length=max_extra_length)
    scores.update(split=split, dataset=run_info["data"]["dataset"], checkpoint=run_info.get("checkpoint"))
    return trees, scores


def one_line(tree):
    """A tree as one bracketed line, "(S (NP (XX The) (XX man)) (VP (XX saw)))": how `tfm evaluate` writes them.

    Args:
        tree: `nltk.Tree`.

    Example:
        >>> import nltk
        >>> one_line(nltk.Tree.fromstring("(S\\n  (NP (XX The) (XX man))\\n  (VP (XX saw)))"))
        '(S (NP (XX The) (XX man)) (VP (XX saw)))'
    """
    return " ".join(str(tree).split())
