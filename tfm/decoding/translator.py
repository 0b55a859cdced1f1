"""Sentences in, translations out: `Translator` (what `tfm translate` and `tfm evaluate` run).

    translator = Translator.from_run("runs/m30k")      # the run's averaged weights, its beam size and alpha
    translator = Translator(model, tokenizer)          # or a model in hand: beam 4, alpha 0.6 from its config
    translator(["A dog runs in the snow."])            # -> ["Ein Hund läuft im Schnee."]
    translator.translate(sentences, beam_size=1)       # greedy for this call only
    translator.translate_with_scores(sentences)        # -> (translations, scores)
    translate(model, tokenizer, sentences)             # the same as translator(sentences), one call
    translator.attention("A dog runs.")                # attention maps of the chosen translation

The calling convention is shared with the exported models (`tfm.serving.SavedModelTranslator`,
`tfm.serving.CTranslate2Translator`): `translate(sentences, *, beam_size=None, alpha=None,
on_invalid="error") -> list[str]`, `translate_with_scores(...) -> (list[str], list[float])`, and
`__call__ = translate`; None means the translator's own setting.

The input rule (refused input, whitespace, blank in -> blank out, truncation) is
`tfm.decoding.text_ops`'s, the same ops the exported SavedModel runs. Attention weights for plots
(`Translator.attention`) come from `tfm.decoding.attention_weights.attention_maps`: one teacher-forced pass
over the chosen hypothesis.

Example:
    >>> input_rule.ON_INVALID, LENGTH_MULTIPLE   # what `on_invalid=` takes; sources are padded to a multiple of 8
    (('error', 'empty'), 8)
"""

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tensorflow as tf

from tfm.config.run_settings import DecodingConfig
from tfm.config.validation import validate_length_penalty
from tfm.decoding import input_rule, nbest, text_ops
from tfm.decoding.attention_weights import attention_maps
from tfm.decoding.greedy_or_beam import search
from tfm.decoding.model_adapter import as_decodable
from tfm.decoding.search_steps import SearchResult, validate_beam_size
from tfm.models.quantization import quantized_copy, validate_quantize
from tfm.special_tokens import END_ID

logger = logging.getLogger("tfm.decoding")

LENGTH_MULTIPLE = 8  # Translator pads source lengths to this multiple: fewer traces / XLA compilations


class _OneTracePerTranslator(logging.Filter):
    """Drops TensorFlow's "triggered tf.function retracing" warning when it names a `Translator`'s search.

    Each of a `Translator`'s searches (one per beam size and alpha) traces once: its input signature
    admits every batch shape. TensorFlow counts traces per Python function, not per `tf.function`, so
    the fifth search built in one process (a notebook or a benchmark comparing checkpoints, splits or
    beam sizes) is reported as retracing although none of them traced twice. The warning still passes
    for every other function.
    """

    def filter(self, record):
        message = record.getMessage()
        return not ("triggered tf.function retracing" in message and "Translator._search" in message)


tf.get_logger().addFilter(_OneTracePerTranslator())


class Translator:
    """Sentences in, translations out: tokenize, batch by length, search (compiled), detokenize (§6.1).

    Args:
        model: a `Transformer` or a `Seq2Seq`.
        tokenizer: a `tfm.data.SubwordTokenizer` (anything with `tokenize`/`detokenize`).
        beam_size: int or None. `1` = greedy. None: §6.1's 4 (`tfm.config.DecodingConfig`). Each call may
            override it (`translate(..., beam_size=...)`).
        alpha: float or None. Length penalty, >= 0. None: §6.1's 0.6. Each call
            may override it.
        max_extra_length: int or None. Output limit = source length + this
            (default: the model's `extra_positions`, 50).
        batch_size: int. Sentences per search call. Defaults to `64`.
        workers: int. Batches searched at the same time (each call runs on its own thread;
            TensorFlow runs their ops side by side). Defaults to `min(2, CPUs)`. On CPUs,
            throughput is best with TensorFlow's intra-op threads at 1 and inter-op threads at
            the core count (`tfm translate` / `tfm evaluate` set that): the decoder's ops are
            too small to split, so whole batches in parallel use the cores instead.
        jit_compile: bool. Compile the search with XLA (one compilation per padded
            source shape). Defaults to `False`.
        constraint: None or a constraint (`tfm.decoding.constraints`, e.g. `TreeConstraint`
            for a parser): only the tokens it allows are searched. Defaults to `None`.
        quantize: None, "int8" or "bfloat16". Search with a copy of the model whose Dense layers hold int8
            kernels, or whose weights and products are bfloat16 (`tfm.models.quantization.quantized_copy`;
            `model` itself is not changed). bfloat16 is faster where the CPU computes it in hardware
            (`tfm.models.quantization.cpu_has_native_bfloat16()`), slower where oneDNN emulates it, and its
            outputs are close to float32's, not identical. Defaults to `None` (the model as it is).
        early_finish: bool. Beam search stops a sentence once its best finished hypothesis cannot be
            beaten (`tfm.decoding.beam_search`): the same translations in fewer steps; `nbest` is
            unaffected (it decides all k). Defaults to `False`.

    Each beam size and alpha used gets its own compiled search, traced once and kept.

    Example:
        >>> from tfm import Transformer
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
        >>> translator = Translator(model, tokenizer, beam_size=2)
        >>> two, also_two, blank = translator(["two", " two\\r\\n", ""])   # untrained: any words, but alike
        >>> two == also_two, blank
        (True, '')
        >>> translator.translate(["two"], beam_size=1) == translator.translate(["two"], beam_size=1)   # greedy
        True
    """

    def __init__(self, model, tokenizer, beam_size=None, alpha=None, max_extra_length=None, batch_size=64,
                 jit_compile=False, workers=None, constraint=None, quantize=None, early_finish=False):
        self.early_finish = bool(early_finish)
        self.quantize = validate_quantize(quantize)
        if self.quantize is not None:
            model = quantized_copy(model, self.quantize)
        self.model = model
        self.tokenizer = tokenizer
        self.decodable = as_decodable(model)
        default = DecodingConfig()  # §6.1: beam 4, alpha 0.6 (`from_run` passes the run's)
        self.beam_size = validate_beam_size(default.beam_size if beam_size is None else beam_size,
                                            self.decodable.vocab_size)
        self.alpha = validate_length_penalty(default.length_penalty if alpha is None else alpha)
        if max_extra_length is not None and int(max_extra_length) < 0:
            raise ValueError(f"max_extra_length={max_extra_length} must be >= 0")
        self.max_extra_length = max_extra_length
        if int(batch_size) < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        self.batch_size = int(batch_size)
        self.jit_compile = bool(jit_compile)
        if constraint is not None and constraint.vocab_size != self.decodable.vocab_size:
            raise ValueError(f"the constraint covers {constraint.vocab_size} ids, the model's vocabulary has "
                             f"{self.decodable.vocab_size}: build it from this model's tokenizer")
        self.constraint = constraint
        self.workers = min(2, os.cpu_count() or 1) if workers is None else int(workers)
        if self.workers < 1:
            raise ValueError(f"workers={workers} must be >= 1")
        self._searches = {}  # (beam_size, alpha, return_all) -> its compiled search
        self._searches_lock = threading.Lock()  # the workers' threads may ask for a new one at once

    @classmethod
    def from_run(cls, run_dir, checkpoint="auto", beam_size=None, alpha=None, max_extra_length=None, **kwargs):
        """A `Translator` for a run folder made by `tfm train`: its trained model, tokenizer and decoding (§6.1).

        Args:
            run_dir: the run folder.
            checkpoint: which weights, by the one rule of `tfm.runs.weights_path` (the rule
                `Transformer.from_preset(run)` follows): "auto" = the averaged weights (`tfm average`, §6.1)
                when present, else the latest epoch's (which one is logged); "averaged", "latest", an epoch
                number, a file name in `RUN/checkpoints/` or a path.
            beam_size, alpha, max_extra_length: None = the run's `DecodingConfig` (`beam_size`,
                `length_penalty`, `max_extra_length`: 4, 0.6 and 50 in the paper's presets).
            **kwargs: the other arguments of `Translator` (`batch_size`, `quantize`, ...).

        Raises:
            FileNotFoundError: not a run folder, or no such checkpoint ("averaged": saying how to make it).

        Example:
            translator = Translator.from_run("runs/m30k")                      # averaged, else the latest
            translator = Translator.from_run("runs/m30k", checkpoint="latest", beam_size=1)
            translator(["A dog runs in the snow."])
        """
        from tfm import runs
        from tfm.config import Recipe
        from tfm.models.families import model_class

        recipe = Recipe.from_record(runs.read_run_config(run_dir))
        model = model_class(recipe.model).from_preset(run_dir, checkpoint=checkpoint)
        tokenizer = runs.load_tokenizer(run_dir, recipe.model)
        decoding = recipe.decoding
        return cls(model, tokenizer, beam_size=decoding.beam_size if beam_size is None else beam_size,
                   alpha=decoding.length_penalty if alpha is None else alpha,
                   max_extra_length=decoding.max_extra_length if max_extra_length is None else max_extra_length,
                   **kwargs)

    def settings(self, beam_size=None, alpha=None):
        """A call's search settings, checked: `(beam_size, alpha)`, None meaning the translator's own.

        Example:
            >>> from tfm import Transformer
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> model = Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = Translator(model, train_tokenizer(sources + targets, vocab_size=70), beam_size=2)
            >>> translator.settings(), translator.settings(beam_size=1, alpha=0)
            ((2, 0.6), (1, 0.0))
            >>> translator.settings(beam_size=0)
            Traceback (most recent call last):
            ValueError: beam_size=0 must be >= 1
        """
        k = self.beam_size if beam_size is None else validate_beam_size(beam_size, self.decodable.vocab_size)
        return k, self.alpha if alpha is None else validate_length_penalty(alpha)

    def _search_function(self, beam_size, alpha, return_all=False):
        """The compiled search for one setting, traced on first use and kept: one trace for every batch shape
        (XLA still compiles per concrete shape)."""
        key = (beam_size, alpha, return_all)
        with self._searches_lock:
            if key not in self._searches:
                def search_ids(source_ids):
                    return search(self.decodable, source_ids, beam_size=beam_size, alpha=alpha,
                                  max_extra_length=self.max_extra_length, constraint=self.constraint,
                                  return_all=return_all, early_finish=self.early_finish)
                # No AutoGraph: the search's loops are tf.while_loop already, so there is nothing to convert,
                # and tracing needs no source code.
                self._searches[key] = tf.function(search_ids, jit_compile=self.jit_compile, autograph=False,
                                                  input_signature=[tf.TensorSpec([None, None], tf.int32)])
            return self._searches[key]

    def invalid(self, sentences):
        """Indices of the sentences the input rule refuses (`tfm.decoding.input_rule.screen_sentences`: not
        valid UTF-8, or holding a NUL byte), as the exported model refuses them."""
        return input_rule.screen_sentences(sentences, on_invalid="empty")[1]

    def encode(self, sentences):
        """list of str -> list of int arrays (source subwords, truncated to the model's maximum).

        Input the rule refuses (invalid UTF-8, a NUL byte) raises `ValueError` naming the indices."""
        return self.prepare(sentences)[0]

    def prepare(self, sentences):
        """list of str -> `(rows, has_source, truncated)`: the subwords of `encode`, and bool arrays
        (something to translate; subwords were dropped) by `tfm.decoding.text_ops`'s rules."""
        raw, _ = input_rule.screen_sentences(sentences)  # refused input: ValueError naming the indices
        if not raw:
            return [], np.zeros(0, bool), np.zeros(0, bool)
        ids, has_source, truncated = text_ops.tokenize_source(
            self.tokenizer, tf.constant(raw, tf.string), self.decodable.max_source_length)
        return list(ids.numpy()), has_source.numpy(), truncated.numpy()

    def search_ids(self, source_ids, *, beam_size=None, alpha=None):
        """The compiled search on one padded batch: a `SearchResult` of NumPy arrays.

        Args:
            source_ids: int `(B, S)`, 0-padded subwords (`encode`).
            beam_size, alpha: as in `translate`.

        Example:
            >>> from tfm import Transformer
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> model = Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = Translator(model, train_tokenizer(sources + targets, vocab_size=70), beam_size=2)
            >>> result = translator.search_ids(np.array([[20, 21, 0]]), beam_size=1)   # greedy
            >>> result.sequences.shape[0], result.all_sequences.shape[1]               # B, k
            (1, 1)
        """
        function = self._search_function(*self.settings(beam_size, alpha))
        return SearchResult(*(np.asarray(value) for value in function(tf.constant(source_ids, tf.int32))))

    def translate(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> list of str, one translation per sentence (`translate_with_scores` adds the scores).

        Args:
            sentences: list of str (or UTF-8 bytes).
            beam_size: int or None. This call's beam size (1 = greedy); None: the translator's.
            alpha: float or None. This call's length penalty (§6.1); None: the translator's.
            on_invalid: "error" (raise `ValueError` naming the inputs the rule refuses: not
                valid UTF-8, or holding a NUL byte; as the exported model refuses the batch)
                or "empty" (answer them with `""`, translate the others).

        The rule is `tfm.decoding.text_ops`'s, as in the exported SavedModel: whitespace (line
        breaks included) only separates words, so `"two\\r\\n"` translates as `"two"`; an
        empty or whitespace-only sentence translates to `""`. Inputs longer than the model's
        `max_length` subwords are truncated, with one warning per call (the log record's `truncated_inputs`
        holds their indices, which `tfm translate` reports as line numbers).

        Example:
            >>> from tfm import Transformer
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> model = Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = Translator(model, train_tokenizer(sources + targets, vocab_size=70), beam_size=2)
            >>> len(set(translator.translate(["two", " two\\r\\n"], beam_size=1)))   # untrained: any words, but alike
            1
            >>> translator.translate(["two\\x00"])
            Traceback (most recent call last):
            ValueError: input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [0]
            >>> translator.translate([b"two", "two\\x00"], on_invalid="empty")[1]
            ''
        """
        return self.translate_with_scores(sentences, beam_size=beam_size, alpha=alpha, on_invalid=on_invalid)[0]

    __call__ = translate

    def translate_with_scores(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> `(translations, scores)`: two lists, as the exported SavedModel's outputs.

        `scores[i]` is `log P(Y | X) / lp(Y)` of `translations[i]` (the search's score, whatever
        the beam size); 0 for a blank sentence, nan for refused input with `on_invalid="empty"`.
        The arguments and the rules are `translate`'s.

        Example:
            >>> from tfm import Transformer
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> model = Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = Translator(model, train_tokenizer(sources + targets, vocab_size=70), beam_size=2)
            >>> translations, scores = translator.translate_with_scores(["two", "\\n"])
            >>> bool(scores[0] < 0), (translations[1], scores[1])
            (True, ('', 0.0))
        """
        raw, refused = input_rule.screen_sentences(sentences, on_invalid)  # every translator's check
        settings = self.settings(beam_size, alpha)
        bad = set(refused)
        good = [i for i in range(len(raw)) if i not in bad]
        rows, has_source, truncated = self.prepare([raw[i] for i in good])
        if truncated.any():
            cut = [good[int(i)] for i in np.flatnonzero(truncated)]  # indices into `sentences`
            logger.warning("%d input(s) longer than the model's %d subwords were truncated (the first: index %d)",
                           len(cut), self.decodable.max_source_length, cut[0], extra={"truncated_inputs": cut})
        translations, scores = [""] * len(raw), [float("nan") if i in bad else 0.0 for i in range(len(raw))]
        for chunk, result in self._searched(rows, settings):
            texts, chunk_scores = text_ops.finish(self.tokenizer, result.sequences, result.scores,
                                                    tf.constant(has_source[chunk]))
            for j, row in enumerate(chunk):
                translations[good[row]] = texts[j].numpy().decode("utf-8", errors="replace")
                scores[good[row]] = float(chunk_scores[j])
        return translations, scores

    def _batches(self, rows):
        """Batches of similar lengths (less padding): yields `(indices into rows, ids int32 (b, S))`,
        `S` a multiple of `LENGTH_MULTIPLE`."""
        order = np.argsort([len(r) for r in rows], kind="stable")
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            ragged = tf.ragged.constant([[int(t) for t in rows[j]] for j in chunk], dtype=tf.int32, ragged_rank=1)
            yield chunk, text_ops.pad_source(ragged, LENGTH_MULTIPLE).numpy()

    def _searched(self, rows, settings):
        """`(indices into rows, search result)` per batch, in order; `workers` batches in flight."""
        batches = list(self._batches(rows))
        beam_size, alpha = settings
        run = lambda ids: self.search_ids(  # noqa: E731  (one line, run here or by the pool)
            ids, beam_size=beam_size, alpha=alpha)
        if self.workers == 1 or len(batches) < 2:
            return [(chunk, run(ids)) for chunk, ids in batches]
        with ThreadPoolExecutor(self.workers) as pool:
            results = list(pool.map(run, [ids for _, ids in batches]))
        return [(chunk, result) for (chunk, _), result in zip(batches, results)]

    def nbest(self, sentences):
        """The k best translations of each sentence (k = the beam size), best first.

        Returns:
            list (one per sentence) of k `(translation, score)` pairs; a slot the search did
            not fill is `("", -inf)` (`tfm.decoding.nbest.nbest`). Refused input (invalid
            UTF-8, a NUL byte) raises `ValueError`, as in `translate`.
        """
        rows, has_source, _ = self.prepare(sentences)
        best = [None] * len(rows)
        for chunk, ids in self._batches(rows):
            result = self._search_function(self.beam_size, self.alpha, return_all=True)(tf.constant(ids))
            texts, scores = nbest.nbest(self.tokenizer, result, tf.constant(has_source[chunk]))
            for j, row in enumerate(chunk):
                best[row] = [(t.decode("utf-8", "replace"), float(v)) for t, v in zip(texts[j].numpy(), scores[j])]
        return best

    def align(self, sentences, layer=-1):
        """Translations with the source subword each output subword attends to most.

        Args:
            sentences: list of str.
            layer: int. The decoder layer whose cross-attention (averaged over heads) is read.

        Returns:
            list of dicts: `translation`, `score`, `source_tokens` and `target_tokens` (subword
            strings), `alignment` (one source index per target subword) and `attention`
            (float `(T, S)`), as the exported model's `alignment` signature answers.
        """
        nbest.validate_alignment_layer(self.model, layer)
        rows, has_source, _ = self.prepare(sentences)
        aligned = [None] * len(rows)
        for chunk, ids in self._batches(rows):
            result = self.search_ids(ids)
            present = tf.constant(has_source[chunk])
            texts, scores = text_ops.finish(self.tokenizer, result.sequences, result.scores, present)
            maps = nbest.alignments(self.decodable, self.tokenizer, tf.constant(ids), result.sequences,
                                    tf.constant(result.lengths), present, layer)
            maps = {name: value.numpy() for name, value in maps.items()}
            for j, row in enumerate(chunk):
                n, s = int((maps["alignment"][j] >= 0).sum()), len(rows[row])
                aligned[row] = {
                    "translation": texts[j].numpy().decode("utf-8", "replace"), "score": float(scores[j]),
                    "source_tokens": [t.decode("utf-8", "replace") for t in maps["source_tokens"][j, :s]],
                    "target_tokens": [t.decode("utf-8", "replace") for t in maps["target_tokens"][j, :n]],
                    "alignment": [int(a) for a in maps["alignment"][j, :n]],
                    "attention": maps["attention"][j, :n, :s],
                }
        return aligned

    def beam_attention(self, sentence, layer=-1):
        """Each of the k best hypotheses of one sentence with its cross-attention (for `tfm.viz.plot_beam_attention`).

        Args:
            sentence: str. Searched with the translator's beam size and alpha.
            layer: int. The decoder layer whose cross-attention (averaged over heads) is read.

        Returns:
            list of dicts (best first, unfilled slots left out): `translation`, `score`,
            `source_tokens`, `target_tokens`, `attention` float `(T, S)` (layer `layer`,
            averaged over heads).
        """
        nbest.validate_alignment_layer(self.model, layer)
        rows, has_source, _ = self.prepare([sentence])
        if not has_source[0]:
            return []
        ids = self._one_source(rows[0])  # (1, S)
        result = self._search_function(self.beam_size, self.alpha, return_all=True)(tf.constant(ids))
        texts, scores = nbest.nbest(self.tokenizer, result, tf.constant(has_source))
        sequences = result.all_sequences[0]  # (k, T)
        k = int(tf.shape(sequences)[0])
        lengths = tf.reduce_sum(tf.cast(tf.not_equal(sequences, 0), tf.int32), axis=1)
        maps = nbest.alignments(self.decodable, self.tokenizer, tf.repeat(ids, k, axis=0), sequences, lengths,
                                tf.ones([k], tf.bool), layer)
        hypotheses = []
        for j in range(k):
            if not np.isfinite(scores[0, j]):
                continue
            n = int(lengths[j])
            hypotheses.append({
                "translation": texts[0, j].numpy().decode("utf-8", "replace"), "score": float(scores[0, j]),
                "source_tokens": [t.decode("utf-8", "replace") for t in maps["source_tokens"][j].numpy()],
                "target_tokens": [t.decode("utf-8", "replace") for t in maps["target_tokens"][j, :n].numpy()],
                "attention": maps["attention"][j, :n].numpy(),
            })
        return hypotheses

    def attention(self, sentence):
        """Translate one sentence and return its attention maps for plotting (`attention_maps` of the
        chosen translation: one teacher-forced pass over it).

        Args:
            sentence: str. Searched with the translator's settings.

        Returns:
            dict: `source_tokens` and `target_tokens` (subword strings; the target ends with `[END]`),
            `translation` (str), and the arrays of `attention_maps` for this sentence (batch axis removed).
        """
        rows, has_source, _ = self.prepare([sentence])
        ids = self._one_source(rows[0])  # (1, S), S >= 1
        result = self.search_ids(ids)
        # Nothing to translate: no output tokens (only END), as `translate` answers "".
        n = int(result.lengths[0]) if has_source[0] else 0
        output = result.sequences[:, :n]
        translation, _ = text_ops.finish(self.tokenizer, output, result.scores[:1], tf.constant(has_source))
        maps = attention_maps(self.model, ids, output)

        def tokens(ids):
            pieces = self.tokenizer.id_to_token(tf.constant(ids, tf.int32)).numpy()
            return [piece.decode("utf-8", errors="replace") for piece in pieces]

        return {
            "source_tokens": tokens(rows[0]),
            "target_tokens": tokens(list(output[0]) + [END_ID]),
            "translation": translation.numpy()[0].decode("utf-8", "replace"),
            **{name: [w[0] for w in weights] for name, weights in maps.items()},
        }

    @staticmethod
    def _one_source(row):
        """One sentence's source ids, padded as `_batches` pads a batch: int32 `(1, S)`, S >= 1."""
        ragged = tf.ragged.constant([[int(t) for t in row]], dtype=tf.int32, ragged_rank=1)
        return text_ops.pad_source(ragged).numpy()


_TRANSLATORS_ATTRIBUTE = "_tfm_translators"


def translate(model, tokenizer, sentences, beam_size=None, alpha=None, **kwargs):
    """Translate a list of sentences: `list[str] -> list[str]` (see `Translator`, §6.1).

    Args:
        model: a `Transformer` or a `Seq2Seq`.
        tokenizer: its `SubwordTokenizer`.
        sentences: list of str.
        beam_size, alpha: as in `Translator.translate` (None: §6.1's 4 and 0.6).
        **kwargs: the other arguments of `Translator` (`max_extra_length`, `batch_size`, ...).

    Reuses one `Translator` per (model, tokenizer, other arguments), and its compiled search per
    beam size and alpha, so repeated calls do not retrace. They are kept on the model itself (a private
    attribute, out of Keras' and TensorFlow's tracking), so they go when the model goes; a module-level
    cache keyed by the model would keep every model alive through its Translator.

    Example:
        >>> from tfm import Transformer
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
        >>> translations = translate(model, tokenizer, ["two", ""], beam_size=2)
        >>> translations == Translator(model, tokenizer, beam_size=2)(["two", ""])
        True
    """
    key = (id(tokenizer), tuple(sorted(kwargs.items())))
    cache = getattr(model, _TRANSLATORS_ATTRIBUTE, None)
    if cache is None:
        cache = {}
        try:
            object.__setattr__(model, _TRANSLATORS_ATTRIBUTE, cache)  # no Keras / tf.Module tracking
        except (AttributeError, TypeError):  # an object that takes no attributes: no reuse
            pass
    if key not in cache:
        cache[key] = Translator(model, tokenizer, **kwargs)
    return cache[key].translate(sentences, beam_size=beam_size, alpha=alpha)
