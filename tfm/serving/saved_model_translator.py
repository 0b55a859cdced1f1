"""`SavedModelTranslator`: an exported SavedModel's `serving_default`, called from Python with
`Translator`'s calling convention.

    tfm.SavedModelTranslator("exported/m30k/1")(["A dog runs."])   # the same graph TF Serving runs

It loads a folder `tfm.serving.saved_model.export_saved_model` wrote (TensorFlow and tensorflow-text, no
Keras model), reads its record (`tfm.serving.metadata`), refuses a beam size or α other than the ones fixed in
the graph at export, and screens its input with the rule every translator applies.

Example:
    >>> from tfm.serving.metadata import write_metadata
    >>> SavedModelTranslator(write_metadata(tempfile.mkdtemp(), {"format": "ctranslate2"}))
    Traceback (most recent call last):
    ValueError: '...' holds a ctranslate2 export, not a SavedModel: load it with CTranslate2Translator
"""

import importlib
import logging
import os

import tensorflow as tf

from tfm.config.validation import validate_length_penalty
from tfm.decoding.input_rule import screen_sentences
from tfm.serving.metadata import read_metadata

# The name the translator has always logged under (it was defined in tfm.serving.saved_model).
logger = logging.getLogger("tfm.serving.saved_model")


class SavedModelTranslator:
    """Sentences in, translations out, through an exported SavedModel's `serving_default`.

    The calling convention is `Translator`'s and `CTranslate2Translator`'s: `translate(sentences, *,
    beam_size=None, alpha=None, on_invalid="error")`, `translate_with_scores` with the same arguments,
    `__call__ = translate`. What comes back is what TensorFlow Serving answers for the same folder,
    so this is the way to try an export from Python, or to compare it with the other two.

    The beam size and α are part of the graph, fixed at export (`self.beam_size`, `self.alpha`, from
    `tfm_export.json`): None, or the same values, is accepted; other values raise `ValueError` naming
    both, since answering with the exported ones would pass off one search as another. Input the rule
    refuses (invalid UTF-8, a NUL byte), which the graph would refuse for the whole batch with an
    `InvalidArgumentError`, is screened here first (`tfm.decoding.input_rule.screen_sentences`), so that it
    raises `ValueError` naming the indices, or with `on_invalid="empty"` gets `""`, as with `Translator`.

    Args:
        export_dir: str or path, a folder written by `export_saved_model` (or `tfm export`).
        batch_size: int. Sentences per call of `serving_default` (a long list goes in pieces, so memory
            stays bounded). Defaults to `64`.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
        >>> translator = SavedModelTranslator(tfm.export_saved_model((model, tokenizer), tempfile.mkdtemp(),
        ...                                                          beam_size=2))
        >>> two, also_two, blank = translator(["two", " two\\r\\n", ""])   # untrained: any words, but alike
        >>> two == also_two, blank
        (True, '')
        >>> translator(["two"], beam_size=4)
        Traceback (most recent call last):
        ValueError: beam_size=4: this SavedModel was exported with beam_size=2, fixed in its graph; ...
    """

    def __init__(self, export_dir, batch_size=64):
        importlib.import_module("tensorflow_text")  # registers the SentencePiece ops the graph holds

        export_dir = os.fspath(export_dir)
        self.metadata = read_metadata(export_dir)
        if self.metadata.get("format", "saved_model") != "saved_model":
            raise ValueError(f"{export_dir!r} holds a {self.metadata['format']} export, not a SavedModel: "
                             "load it with CTranslate2Translator")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size={batch_size} must be >= 1")
        self.export_dir = export_dir
        self.batch_size = int(batch_size)
        self.beam_size = int(self.metadata["beam_size"])
        self.alpha = float(self.metadata["alpha"])
        self.max_source_length = self.metadata["max_source_length"]
        self.serve = tf.saved_model.load(export_dir).signatures["serving_default"]

    def _check_decoding(self, beam_size, alpha):
        """Refuses per-call settings the graph cannot honour: a beam size or α other than the exported."""
        if beam_size is not None and (isinstance(beam_size, bool) or beam_size != self.beam_size):
            raise ValueError(f"beam_size={beam_size!r}: this SavedModel was exported with beam_size={self.beam_size}, "
                             f"fixed in its graph; export again with beam_size={beam_size!r}, or translate with "
                             "Translator or CTranslate2Translator, which choose it per call")
        if alpha is not None and validate_length_penalty(alpha) != self.alpha:
            raise ValueError(f"alpha={alpha!r}: this SavedModel was exported with alpha={self.alpha}, fixed in its "
                             f"graph; export again with alpha={alpha!r}, or translate with Translator or "
                             "CTranslate2Translator, which choose it per call")

    def translate(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> list of str, one translation per sentence (`translate_with_scores` adds the scores).

        Args:
            sentences: list of str (or UTF-8 bytes).
            beam_size: int or None. None or `self.beam_size` (the exported one); anything else raises
                `ValueError`.
            alpha: float or None. None or `self.alpha`; anything else raises `ValueError`.
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
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = SavedModelTranslator(tfm.export_saved_model((model, tokenizer), tempfile.mkdtemp()))
            >>> translator.translate(["two\\x00"])
            Traceback (most recent call last):
            ValueError: input is not valid UTF-8 or holds a NUL byte; indices of the invalid strings: [0]
            >>> translator.translate([b"two", "two\\x00"], on_invalid="empty")[1]
            ''
        """
        return self.translate_with_scores(sentences, beam_size=beam_size, alpha=alpha, on_invalid=on_invalid)[0]

    __call__ = translate

    def translate_with_scores(self, sentences, *, beam_size=None, alpha=None, on_invalid="error"):
        """list of str -> `(translations, scores)`: two lists, the graph's `translations` and `scores`.

        Args:
            sentences, beam_size, alpha, on_invalid: as in `translate`.

        Returns:
            `(translations, scores)`: `scores[i]` is `log P(Y | X) / lp(Y)` of `translations[i]`
            (GNMT's length penalty, whatever the beam size); 0 for a blank sentence, nan for refused
            input with `on_invalid="empty"`.

        Example:
            >>> import tfm
            >>> from tfm.data import number_words_pairs, train_tokenizer
            >>> sources, targets = number_words_pairs("train", max_number=2000)
            >>> tokenizer = train_tokenizer(sources + targets, vocab_size=70)
            >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1, extra_positions=5)
            >>> translator = SavedModelTranslator(tfm.export_saved_model((model, tokenizer), tempfile.mkdtemp(),
            ...                                                          beam_size=1))
            >>> translations, scores = translator.translate_with_scores(["two", "\\n"])
            >>> bool(scores[0] < 0), (translations[1], scores[1])
            (True, ('', 0.0))
            >>> translations == tfm.Translator(model, tokenizer, beam_size=1)(["two", "\\n"])   # the same search
            True
        """
        self._check_decoding(beam_size, alpha)
        raw, refused = screen_sentences(sentences, on_invalid)
        refused = set(refused)
        todo = [i for i in range(len(raw)) if i not in refused]
        translations = [""] * len(raw)
        scores = [float("nan") if i in refused else 0.0 for i in range(len(raw))]
        truncated = []
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start : start + self.batch_size]
            out = self.serve(text=tf.constant([raw[i] for i in chunk], tf.string))
            texts, values, cut = (out[name].numpy() for name in ("translations", "scores", "truncated"))
            for j, i in enumerate(chunk):
                translations[i] = texts[j].decode("utf-8", errors="replace")
                scores[i] = float(values[j])
            truncated += [i for j, i in enumerate(chunk) if cut[j]]
        if truncated:
            logger.warning("%d input(s) longer than the model's %d subwords were truncated (the first: index %d)",
                           len(truncated), self.max_source_length, truncated[0])
        return translations, scores
