"""`CTranslate2Translator`: sentences in, translations out, from a folder `export_ctranslate2` wrote, with
only `ctranslate2` and `sentencepiece` installed.

    translator = tfm.CTranslate2Translator("exported/m30k-ct2")         # needs ctranslate2 + sentencepiece only
    translator(["A dog runs in the snow."], beam_size=4)
    translator.translate_with_scores(sentences)                          # -> (translations, scores)

No TensorFlow or Keras is imported here (nor by `tfm.serving.metadata`, which reads the export's record), so a
server that only translates needs neither. The converter, `tfm.serving.ctranslate2`, imports from this module
what both read (`SENTENCEPIECE_FILE`, `import_ctranslate2`).

Decoding follows tfm's rules (`tfm.decoding.greedy_or_beam`) where CTranslate2 lets it:

- **Tokens**: `[PAD]` and `[START]` are never written and `[END]` may come first (a blank
  translation), so each step chooses among the tokens tfm's search chooses among, with the same
  renormalized probabilities.
- **Output limit**: tfm stops each sentence at its own limit, source length + `max_extra_length`
  subwords. CTranslate2 takes one `max_decoding_length` per call, so `CTranslate2Translator` runs
  the batch with the longest source's limit, then runs again, with their own limit, the few
  sentences whose output reached theirs (a trained model rarely gets there, so this costs
  nearly nothing; an untrained one often does). Greedy search decides each token from the
  tokens before it, so a greedy output stopped at its own limit is the longer run's up to there:
  greedy outputs equal tfm's token for token. A beam's ranking can depend on the limit, so with
  beams the guarantee is the bound: no output is longer than its sentence's limit.
- **Scores**: CTranslate2 ranks a beam's hypotheses by `log P(Y | X) / |Y|^α`, tfm by GNMT's
  `log P(Y | X) / ((5 + |Y|) / 6)^α` (§6.1), so beams may rank differently. The scores
  `CTranslate2Translator` returns are tfm's for the hypothesis CTranslate2 chose: its
  log-probability, taken back out of CTranslate2's score, divided by GNMT's penalty with `|Y|` =
  subwords + `[END]` (an output stopped at its limit gets tfm's forced `[END]`, log-probability 0).
  For greedy search they equal `Translator`'s and the SavedModel's up to float rounding.
- **Input**: the rule of `tfm.decoding.input_rule` (whitespace only separates words, blank in
  -> blank out, invalid UTF-8 or a NUL byte refused, long inputs cut at `max_length` subwords).

Example:
    >>> SUPPRESSED   # the tokens CTranslate2 is told never to write
    [['[PAD]'], ['[START]']]
    >>> from tfm.serving.metadata import write_metadata
    >>> CTranslate2Translator(write_metadata(tempfile.mkdtemp(), {"format": "saved_model"}))
    Traceback (most recent call last):
    ValueError: '...' holds a saved_model export, not a CTranslate2 one: load it with SavedModelTranslator
"""

import logging
import numbers
import os

from tfm.config.validation import validate_length_penalty
from tfm.decoding import input_rule
from tfm.serving.metadata import read_metadata
from tfm.special_tokens import PAD, START

# The name the translator has always logged under (it was defined in tfm.serving.ctranslate2).
logger = logging.getLogger("tfm.serving.ctranslate2")

SENTENCEPIECE_FILE = "sentencepiece.model"
# Tokens tfm's search never writes: [PAD] is never a prediction, [START] only begins the decoder's input.
SUPPRESSED = [[PAD], [START]]


def import_ctranslate2():
    """The `ctranslate2` module, or an ImportError that says how to install it (an optional dependency).

    Returns:
        the `ctranslate2` module.

    Example:
        >>> import_ctranslate2().__name__
        'ctranslate2'
    """
    try:
        import ctranslate2
    except ImportError as error:
        raise ImportError("the CTranslate2 export needs the ctranslate2 package: pip install \"tfm[ctranslate2]\" "
                          "(or pip install ctranslate2)") from error
    return ctranslate2


def _length_penalty(length, alpha):
    """GNMT's `((5 + |Y|) / 6)^α`, as `tfm.decoding.search_steps.length_penalty` (here without TensorFlow)."""
    return ((5.0 + length) / 6.0) ** alpha


class CTranslate2Translator:
    """Sentences in, translations out, with CTranslate2 on an exported folder (no TensorFlow needed).

    The calling convention is `Translator`'s and `SavedModelTranslator`'s: `translate(sentences, *,
    beam_size=None, alpha=None, on_invalid="error")`, `translate_with_scores` with the same arguments,
    `__call__ = translate`. Here beam size and α are chosen per call; None takes the export's (the
    run's decoding part, recorded in `tfm_export.json`). Tokenization is the run's SentencePiece model
    (the `sentencepiece` package) under the input rule of `tfm.decoding.input_rule`, so text goes in
    and comes out as with `Translator` and the exported SavedModel; the module's docstring says
    where CTranslate2's decoding differs from tfm's and what is kept.

    Args:
        model_dir: str or path, a folder written by `export_ctranslate2`.
        device: "cpu" or "cuda".
        compute_type: CTranslate2's ("default": as exported; "int8", "float32", ...).
        inter_threads: batches CTranslate2 translates at the same time. Defaults to `1`.
        intra_threads: threads inside each batch (0: CTranslate2's default).
        batch_size: int. Sentences per batch (CTranslate2 sorts them by length first). Defaults to `64`.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> translator = CTranslate2Translator(tfm.export_ctranslate2((model, tokenizer), tempfile.mkdtemp() + "/ct2"))
        >>> translator.beam_size, translator.alpha   # the defaults the export recorded
        (4, 0.6)
        >>> two, also_two, blank = translator(["two", " two\\r\\n", ""], beam_size=1)   # untrained: any words
        >>> two == also_two, blank
        (True, '')
        >>> two == tfm.Translator(model, tokenizer, beam_size=1)(["two"])[0]   # greedy: tfm's output
        True
    """

    def __init__(self, model_dir, device="cpu", compute_type="default", inter_threads=1, intra_threads=0,
                 batch_size=64):
        ctranslate2 = import_ctranslate2()
        import sentencepiece

        model_dir = os.fspath(model_dir)
        self.metadata = read_metadata(model_dir)
        if self.metadata.get("format") != "ctranslate2":
            raise ValueError(f"{model_dir!r} holds a {self.metadata.get('format', 'saved_model')} export, not a "
                             "CTranslate2 one: load it with SavedModelTranslator")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        self.batch_size = int(batch_size)
        self.beam_size = int(self.metadata["beam_size"])
        self.alpha = float(self.metadata["alpha"])
        self.max_source_length = int(self.metadata["max_source_length"])
        self.max_extra_length = int(self.metadata["max_extra_length"])
        self.translator = ctranslate2.Translator(model_dir, device=device, compute_type=compute_type,
                                                 inter_threads=inter_threads, intra_threads=intra_threads)
        self.sentencepiece = sentencepiece.SentencePieceProcessor(
            model_file=os.path.join(model_dir, SENTENCEPIECE_FILE))

    def _decoding(self, beam_size, alpha):
        """`(beam_size, alpha)` for one call: None takes the export's; anything else is checked."""
        beam_size = self.beam_size if beam_size is None else beam_size
        if isinstance(beam_size, bool) or not isinstance(beam_size, numbers.Integral) or beam_size < 1:
            raise ValueError(f"beam_size={beam_size!r}: expected an int >= 1 (1 = greedy)")
        return int(beam_size), validate_length_penalty(self.alpha if alpha is None else alpha)

    def _search(self, sources, beam_size, alpha):
        """`(outputs, scores)`: the best hypothesis of each source (subword lists), each within its own
        output limit, and its score in tfm's convention."""
        options = dict(beam_size=beam_size, length_penalty=alpha, max_batch_size=self.batch_size,
                       max_input_length=0, suppress_sequences=SUPPRESSED, return_scores=True,
                       min_decoding_length=0)  # as tfm: [END] may come first (a blank translation)
        limits = [len(source) + self.max_extra_length for source in sources]
        longest = max(limits)
        results = self.translator.translate_batch(sources, max_decoding_length=longest, **options)
        found = [(result.hypotheses[0], result.scores[0]) for result in results]
        # Reaching its own limit under a longer one, an output either went past it or ended where tfm
        # would have stopped it (then its score counts an [END] that tfm's, forced, does not): again
        # with its own limit.
        again = {}
        for i, (output, _) in enumerate(found):
            if limits[i] < longest and len(output) >= limits[i]:
                again.setdefault(limits[i], []).append(i)
        pending = [(group, self.translator.translate_batch([sources[i] for i in group], max_decoding_length=limit,
                                                           asynchronous=True, **options))
                   for limit, group in again.items()]  # asynchronous: `inter_threads` groups at once
        for group, results in pending:
            for i, result in zip(group, results):
                result = result.result()
                found[i] = result.hypotheses[0], result.scores[0]
        outputs, scores = [], []
        for (output, score), limit in zip(found, limits):
            # CTranslate2's score is log P / |Y|^alpha, |Y| counting [END] when the output has one; an
            # output stopped at its limit has none (tfm's forced [END] adds log-probability 0).
            ct2_length = len(output) if len(output) >= limit else len(output) + 1
            log_prob = float(score) * ct2_length ** alpha
            outputs.append(output)
            scores.append(log_prob / _length_penalty(len(output) + 1, alpha))
        return outputs, scores

    def translate_tokens(self, sources, *, beam_size=None, alpha=None):
        """Lists of subword strings in, lists of subword strings out: the search without the text rules.

        Args:
            sources: list of lists of subword strings (`SentencePieceProcessor.encode(..., out_type=str)`),
                cut to the model's `max_length` here.
            beam_size, alpha: as in `translate`.

        Returns:
            list of lists of subword strings, one per source (`[END]` not included).

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = CTranslate2Translator(tfm.export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> outputs = translator.translate_tokens([["▁two"], ["▁seven", "▁hundred"]], beam_size=1)
            >>> [len(output) <= limit for output, limit in zip(outputs, [1 + 5, 2 + 5])]   # source length + 5
            [True, True]
        """
        return self.translate_tokens_with_scores(sources, beam_size=beam_size, alpha=alpha)[0]

    def translate_tokens_with_scores(self, sources, *, beam_size=None, alpha=None):
        """`translate_tokens` and tfm's score of each output: `(outputs, scores)`, two lists.

        Args:
            sources, beam_size, alpha: as in `translate_tokens`.

        Returns:
            `(outputs, scores)`: `scores[i]` is `log P(Y | X) / lp(Y)` of `outputs[i]` with GNMT's
            `lp` and `|Y|` = subwords + `[END]` (tfm's convention; see the module's docstring).

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = CTranslate2Translator(tfm.export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> outputs, scores = translator.translate_tokens_with_scores([["▁two"]], beam_size=1)
            >>> outputs == translator.translate_tokens([["▁two"]], beam_size=1), bool(scores[0] < 0)
            (True, True)
        """
        beam_size, alpha = self._decoding(beam_size, alpha)
        sources = [list(source)[: self.max_source_length] for source in sources]
        return self._search(sources, beam_size, alpha) if sources else ([], [])

    def translate(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> list of str, one translation per sentence (`translate_with_scores` adds the scores).

        Args:
            sentences: list of str (or UTF-8 bytes).
            beam_size: int or None. `1` = greedy. None: the export's (`self.beam_size`).
            alpha: float or None. Length penalty, >= 0 (CTranslate2 ranks beams by `|Y|^α`). None: the
                export's (`self.alpha`).
            on_invalid: "error" (raise `ValueError` naming the inputs the rule refuses: not valid
                UTF-8, or holding a NUL byte) or "empty" (answer them with `""`, translate the others).

        Returns:
            list of str. Whitespace only separates words (`"two\\r\\n"` translates as `"two"`); a blank
            sentence translates to `""`. Inputs longer than the model's `max_length` subwords are
            truncated, with one warning per call.

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
            >>> translator = CTranslate2Translator(tfm.export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> translator.translate(["two\\x00"])
            Traceback (most recent call last):
            ValueError: input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [0]
            >>> translator.translate([b"two", "two\\x00"], beam_size=2, on_invalid="empty")[1]
            ''
        """
        return self.translate_with_scores(sentences, beam_size=beam_size, alpha=alpha, on_invalid=on_invalid)[0]

    __call__ = translate

    def translate_with_scores(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> `(translations, scores)`: two lists, as `Translator.translate_with_scores`.

        Args:
            sentences, beam_size, alpha, on_invalid: as in `translate`.

        Returns:
            `(translations, scores)`: `scores[i]` is `log P(Y | X) / lp(Y)` of `translations[i]`
            (tfm's convention, whatever the beam size); 0 for a blank sentence, nan for refused input
            with `on_invalid="empty"`.

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
            >>> translator = CTranslate2Translator(tfm.export_ctranslate2((model, tokenizer), tempfile.mkdtemp()))
            >>> translations, scores = translator.translate_with_scores(["two", "\\n"], beam_size=1)
            >>> bool(scores[0] < 0), (translations[1], scores[1])
            (True, ('', 0.0))
            >>> _, tfm_scores = tfm.Translator(model, tokenizer, beam_size=1).translate_with_scores(["two"])
            >>> bool(abs(scores[0] - tfm_scores[0]) < 1e-4)   # greedy: tfm's score of tfm's output
            True
        """
        beam_size, alpha = self._decoding(beam_size, alpha)
        raw, refused = input_rule.screen_sentences(sentences, on_invalid)
        refused = set(refused)
        pieces = [[] if i in refused else self.sentencepiece.encode(input_rule.normalize(text.decode("utf-8")),
                                                                     out_type=str)
                  for i, text in enumerate(raw)]
        long = [i for i, p in enumerate(pieces) if len(p) > self.max_source_length]
        if long:
            logger.warning("%d input(s) longer than the model's %d subwords were truncated (the first: index %d)",
                           len(long), self.max_source_length, long[0])
        todo = [i for i, p in enumerate(pieces) if p]
        outputs, todo_scores = self.translate_tokens_with_scores([pieces[i] for i in todo], beam_size=beam_size,
                                                                 alpha=alpha)
        translations = [""] * len(raw)
        all_scores = [float("nan") if i in refused else 0.0 for i in range(len(raw))]
        for i, output, score in zip(todo, outputs, todo_scores):
            translations[i] = self.sentencepiece.decode_pieces(output).strip(" \t\n\v\f\r")  # as text_ops.finish
            all_scores[i] = score
        return translations, all_scores
