"""BLEU and chrF with sacreBLEU (Vaswani et al., 2017, §6.1, Table 2).

    tfm evaluate --run runs/m30k --split test --beam-size 4
    scores = tfm.decoding.bleu.score(hypotheses, references)

Three numbers, side by side, all computed by the `sacrebleu` library on
detokenized text (the model's own output, references as distributed):

- `bleu`: sacreBLEU's default, case-sensitive BLEU with its `13a` tokenizer,
  reported with its signature (`nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:...`)
  so the number can be compared and reproduced (Post, 2018).
- `bleu_tokenized_lc`: lowercased BLEU with the same `13a` tokenization, i.e.
  `sacrebleu --lowercase`. This is how the Multi30k literature scores (WMT16
  multimodal task 1 and the papers that followed used Moses-tokenized, lowercased
  text with `multi-bleu.perl`); `13a` reproduces the mteval/Moses tokenization of
  punctuation closely enough for the numbers to be comparable, though not
  digit-for-digit identical. (The paper's WMT14 numbers are tokenized, cased BLEU
  with compound splitting; they are not computed here.)
- `chrf`: chrF2 (character n-grams, Popović, 2015), sacreBLEU's default settings.

When the references contain no 4-gram at all (the generated number-words task,
whose sentences have at most 3 words), BLEU-4 is 0/0 and sacreBLEU would print 0
for a perfect system; both BLEUs then use sacreBLEU's effective order (the
signature shows `eff:yes`, and `note` says why). Real corpora never hit this.

`tfm evaluate` writes the hypotheses to `RUN/hyps/<name>.txt` (one per line, in
corpus order) and the scores to `RUN/hyps/<name>.json`, the name made of everything
that decides the hypotheses (`results_name`): `test.beam4.alpha0.6.averaged`, so that
a second evaluation with another beam, α or checkpoint keeps the first one's files. `tfm evaluate`
checks that `RUN/hyps/` can be written before it decodes (`validate_results_folder`).
"""

import json
import os
import time

from tfm.data import canonical_split, load_dataset
from tfm.data.preprocess import detokenize, moses_lc, signature
from tfm.data.preprocess import preprocess as prepare  # `preprocess` names an argument here
from tfm.decoding import Translator
from tfm.runs import WriteError


def score(hypotheses, references, lang=None, preprocess=None):
    """Corpus-level BLEU (sacreBLEU default, lowercased, Moses-tokenized lowercased) and chrF, one reference each.

    `bleu_moses_lc` is the Multi30k literature's number (Wu et al., 2021 and fairseq; the
    multi-bleu.perl tradition): BLEU on whitespace tokens (sacreBLEU `tok:none`) of text
    lowercased and Moses-tokenized by sacremoses (`tfm.data.preprocess.moses_lc`), on both
    sides; its signature names the tokenization.

    Args:
        hypotheses: list of str, system outputs: detokenized text, or for a run trained on
            preprocessed text (`preprocess="moses_lc"`) that lowercased, tokenized text as
            the model writes it.
        references: list of str, same length, as distributed (cased, untokenized).
        lang: the target language for the Moses tokenizer / detokenizer (None = "en").
        preprocess: None, or the run's `DataConfig.preprocess`: then the hypotheses are
            scored as they are for `bleu_moses_lc`, and Moses-detokenized (still lowercased,
            against cased references) for `bleu`, `bleu_tokenized_lc` and `chrf`.

    Returns:
        dict: `bleu`, `bleu_tokenized_lc`, `bleu_moses_lc`, `chrf` (floats, 0-100), their
        `*_signature` strings, `bleu_details` (n-gram precisions, brevity penalty,
        lengths) and `sentences`.
    """
    from sacrebleu.metrics import BLEU, CHRF

    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError("nothing to score: no sentences")
    if preprocess is not None:
        tokenized, hypotheses = hypotheses, detokenize(hypotheses, lang, preprocess)
    else:
        tokenized = [moses_lc(h, lang) for h in hypotheses]
    refs = [references]
    # BLEU-4 is 0/0 on a corpus whose references have no 4-grams at all (the generated
    # number-words task: at most 3 words). Scoring then uses n-grams up to 3 (with
    # sacreBLEU's effective order for shorter ones); plain effective order alone would let a
    # single over-long hypothesis drag corpus BLEU far down. Real corpora are unaffected.
    no_4grams = BLEU().corpus_score(references, refs).totals[-1] == 0
    order = dict(max_ngram_order=3, effective_order=True) if no_4grams else {}
    bleu_metric = BLEU(**order)  # tokenize="13a", case-sensitive
    lc_metric = BLEU(tokenize="13a", lowercase=True, **order)
    chrf_metric = CHRF()
    bleu = bleu_metric.corpus_score(hypotheses, refs)
    lc = lc_metric.corpus_score(hypotheses, refs)
    chrf = chrf_metric.corpus_score(hypotheses, refs)
    moses_metric = BLEU(tokenize="none", lowercase=True, force=True, **order)  # force: tokenized on purpose
    moses = moses_metric.corpus_score(tokenized, [[moses_lc(r, lang) for r in references]])
    return {
        "bleu": float(bleu.score),
        "bleu_signature": str(bleu_metric.get_signature()),
        "bleu_tokenized_lc": float(lc.score),
        "bleu_tokenized_lc_signature": str(lc_metric.get_signature()),
        "bleu_moses_lc": float(moses.score),
        "bleu_moses_lc_signature": f"{moses_metric.get_signature()}|{signature(lang)}",
        "hypotheses_lowercased": preprocess is not None,
        "chrf": float(chrf.score),
        "chrf_signature": str(chrf_metric.get_signature()),
        "bleu_details": {"precisions": [float(p) for p in bleu.precisions], "bp": float(bleu.bp),
                         "sys_len": int(bleu.sys_len), "ref_len": int(bleu.ref_len)},
        "sentences": len(hypotheses),
        "note": ("the references have no 4-grams: BLEU uses n-grams up to 3, with sacreBLEU's effective "
                 "order (eff:yes)" if no_4grams else ""),
    }


def format_scores(scores):
    """One line per metric, value then signature (and the notes, if any).

    Cased BLEU (sacreBLEU's default, the number to quote for a model that writes cased text) comes
    first, unless the model writes lowercased, Moses-tokenized text (`scores["hypotheses_lowercased"]`,
    e.g. the `m30k_small` recipe): then the score such a model is compared by, Moses-tokenized
    lowercased BLEU, leads, and the cased line is labelled as the one it cannot do well on.

    Args:
        scores: dict from `score` (or `evaluate`).

    Returns:
        str, one line per metric.

    Example:
        >>> from tfm.decoding.bleu import format_scores, score
        >>> cased = score(["The cat sat on the mat."], ["The cat sat on the mat."], lang="en")
        >>> [line[:18].strip() for line in format_scores(cased).splitlines()]
        ['BLEU', 'BLEU (tok, lc)', 'BLEU (Moses, lc)', 'chrF']
        >>> lowercased = score(["the cat sat on the mat ."], ["The cat sat on the mat."], lang="en",
        ...                    preprocess="moses_lc")
        >>> [line[:18].strip() for line in format_scores(lowercased).splitlines()][:4]
        ['BLEU (Moses, lc)', 'BLEU (tok, lc)', 'BLEU (cased)', 'chrF']
    """
    moses = ([f"BLEU (Moses, lc)   {scores['bleu_moses_lc']:6.2f}  {scores['bleu_moses_lc_signature']}"]
             if "bleu_moses_lc" in scores else [])
    tokenized = f"BLEU (tok, lc)     {scores['bleu_tokenized_lc']:6.2f}  {scores['bleu_tokenized_lc_signature']}"
    chrf = f"chrF               {scores['chrf']:6.2f}  {scores['chrf_signature']}"
    if scores.get("hypotheses_lowercased") and moses:
        lines = [*moses, tokenized,
                 f"BLEU (cased)       {scores['bleu']:6.2f}  {scores['bleu_signature']}  (lowercased output: see note)",
                 chrf]
    else:
        lines = [f"BLEU               {scores['bleu']:6.2f}  {scores['bleu_signature']}", tokenized, *moses, chrf]
    if scores.get("note"):
        lines.append(f"note: {scores['note']}")
    if scores.get("hypotheses_lowercased"):
        lines.append("note: the model writes lowercased, Moses-tokenized text (its run's preprocess); BLEU and chrF "
                     "score it Moses-detokenized, still lowercased, against the cased references: cased BLEU "
                     "cannot credit a word whose reference is capitalised (every German noun)")
    return "\n".join(lines)


def split_pairs(run_info, split, limit=None):
    """The `(sources, references)` of a run's dataset split, as lists of str.

    Args:
        run_info: a run's config.json as `tfm.runs.read_run_config` reads it (its `data` entry names the dataset).
        split: "validation" (or an alias of `tfm.data.canonical_split`: "val", "valid", "dev") or "test".
        limit: int or None. Only the first `limit` pairs.
    """
    split = canonical_split(split)
    if split == "train":
        raise ValueError("split='train': evaluate on 'val' or 'test', which the model has not trained on")
    data = run_info["data"]
    if data["dataset"] == "files":
        raise ValueError("this run was trained on --dataset files, which has no val/test split to evaluate")
    pairs = load_dataset(data["dataset"], split, source_lang=data.get("source_lang"),
                         target_lang=data.get("target_lang"), data_dir=data.get("data_dir"))
    if limit is not None:
        if int(limit) < 1:
            raise ValueError(f"limit={limit}: expected a positive number of sentences")
        pairs = pairs.take(int(limit))
    sources, references = [], []
    for source, target in pairs.as_numpy_iterator():
        sources.append(source.decode("utf-8"))
        references.append(target.decode("utf-8"))
    return sources, references


def evaluate(model, tokenizer, sources, references, beam_size=None, alpha=None, batch_size=64, preprocess=None,
             source_lang=None, target_lang=None):
    """Translate `sources` and score them against `references`.

    Args:
        model: a trained `Transformer` or `Seq2Seq`.
        tokenizer: its `SubwordTokenizer`.
        sources: list of str, the source sentences (raw: prepared here as in training).
        references: list of str, one reference translation per source.
        beam_size, alpha: decoding settings; None = `Translator`'s (§6.1: 4, 0.6); a run's are its
            `DecodingConfig`'s (`tfm evaluate` passes them).
        batch_size: int. Sentences per search call (`Translator`). Defaults to `64`.
        preprocess, source_lang, target_lang: the run's `DataConfig` settings: the sources
            are prepared as in training (`tfm.data.preprocess`) and `score` told so.

    Returns:
        `(hypotheses, scores)`: list of str and the dict of `score`, plus
        `beam_size`, `alpha` and `seconds` (translation time).
    """
    translator = Translator(model, tokenizer, beam_size=beam_size, alpha=alpha, batch_size=batch_size)
    start = time.perf_counter()
    hypotheses = translator(prepare(sources, source_lang, preprocess))
    seconds = time.perf_counter() - start
    scores = score(hypotheses, references, lang=target_lang, preprocess=preprocess)
    scores.update(beam_size=translator.beam_size, alpha=translator.alpha, seconds=round(seconds, 2))
    return hypotheses, scores


def results_name(split, scores, limit=None):
    """The file name (without `.txt` / `.json`) of an evaluation's results: the split, then what decided
    the hypotheses, so that evaluations that differ in any of them do not overwrite each other.

    Args:
        split: "val", "test", ...
        scores: the evaluation's scores, with `beam_size`, `alpha` and (optional) `checkpoint` (the
            weights file; its name without `.weights.h5`) and `constrained` (parsing: False adds
            `unconstrained`).
        limit: the number of sentences when only the first ones were translated (`--limit`).

    Example:
        >>> results_name("test", {"beam_size": 4, "alpha": 0.6, "checkpoint": "run/checkpoints/averaged.weights.h5"})
        'test.beam4.alpha0.6.averaged'
        >>> results_name("val", {"beam_size": 1, "alpha": 1.0, "checkpoint": "epoch_012.weights.h5"}, limit=50)
        'val.beam1.alpha1.epoch_012.first50'
    """
    weights = os.path.basename(scores.get("checkpoint") or "")
    weights = weights[:-len(".weights.h5")] if weights.endswith(".weights.h5") else os.path.splitext(weights)[0]
    parts = [split, f"beam{int(scores['beam_size'])}", f"alpha{float(scores['alpha']):g}", weights,
             "unconstrained" if scores.get("constrained") is False else "", f"first{int(limit)}" if limit else ""]
    return ".".join(part for part in parts if part)


def validate_results_folder(run_dir):
    """Raises unless `RUN/hyps/` can take an evaluation's files; `tfm evaluate` asks before it decodes.

    The rule every output path follows (`tfm.runs.files`): `RUN/hyps` is a folder or can be made
    (not a file, a symbolic link loop or a dangling link), and it (or, before it is made, the run
    folder) can be written.

    Args:
        run_dir: str. The run folder.

    Returns:
        str: the results folder, `RUN/hyps`.

    Raises:
        NotADirectoryError: `RUN/hyps` is a file, a link loop or a dangling link.
        tfm.runs.WriteError: it cannot be written (read-only, not this user's).

    Example:
        >>> import tempfile
        >>> run = tempfile.mkdtemp()
        >>> os.path.basename(validate_results_folder(run))
        'hyps'
        >>> open(os.path.join(run, "hyps"), "w").close()
        >>> validate_results_folder(run)
        Traceback (most recent call last):
        ...
        NotADirectoryError: the results folder '...hyps' is a file, not a folder
    """
    from tfm import runs

    folder = os.path.join(run_dir, runs.HYPS_DIR)
    runs.validate_output_path(folder, "the results folder")
    runs.validate_writable(folder, inside=True)
    return folder


def write_results(run_dir, split, hypotheses, scores, limit=None):
    """`RUN/hyps/<name>.txt` and `.json` (the name: `results_name(split, scores, limit)`), each whole or not
    at all; returns both paths.

    Args:
        run_dir: str. The run folder.
        split: str. The split evaluated ("val", "test").
        hypotheses: list of str, one per sentence (a line break inside one is written as a space).
        scores: dict. The evaluation's scores (`evaluate`'s), written as JSON.
        limit: int or None. The number of sentences, when only the first ones were translated.

    Raises:
        NotADirectoryError: `RUN/hyps` is a file, a link loop or a dangling link (`validate_results_folder`).
        ResultsWriteError: a file could not be written (named, with the cause: read-only, disk full); its
            `saved` lists the files written before it (the hypotheses, when only the scores failed).

    Example:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> paths = write_results(tmp.name, "val", ["eins", "zwei"], {"beam_size": 4, "alpha": 0.6})
        >>> [os.path.basename(path) for path in paths], open(paths[0]).read()
        (['val.beam4.alpha0.6.txt', 'val.beam4.alpha0.6.json'], 'eins\\nzwei\\n')
    """
    from tfm import runs

    folder = validate_results_folder(run_dir)
    saved = []
    try:
        runs.make_folder(folder)
        stem = os.path.join(folder, results_name(split, scores, limit))
        # One line per sentence even if a translation contained a line break.
        runs.write_atomic(stem + ".txt", "".join(" ".join(h.splitlines()) + "\n" for h in hypotheses))
        saved.append(stem + ".txt")
        runs.write_atomic(stem + ".json", json.dumps(scores, indent=2, ensure_ascii=False) + "\n")
    except WriteError as error:
        raise ResultsWriteError(error.errno, error.strerror, error.filename, saved) from None
    return stem + ".txt", stem + ".json"


class ResultsWriteError(WriteError):
    """`write_results` could not write a file (a `tfm.runs.WriteError`: named, with the cause); `saved` lists the
    files it wrote before (the hypotheses' .txt when only the scores' .json failed).

    Args:
        errno, strerror, filename: as `OSError`'s.
        saved: list of str. The paths written before the failure.

    Example:
        >>> import errno
        >>> error = ResultsWriteError(errno.EFBIG, "File too large", "hyps/val.json", ["hyps/val.txt"])
        >>> error.saved
        ['hyps/val.txt']
        >>> str(error)
        'cannot write hyps/val.json: the file would exceed the file-size limit set by ulimit -f (EFBIG)'
    """

    def __init__(self, errno, strerror, filename, saved=()):
        super().__init__(errno, strerror, filename)
        self.saved = list(saved)
