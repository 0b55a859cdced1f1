"""Shared source/target subword vocabulary (Vaswani et al., 2017, §5.1).

The paper encodes both languages with one byte-pair vocabulary (about 37,000
tokens for En-De). Here the vocabulary is learned with SentencePiece (BPE by
default) from the training text of both sides together, and applied in-graph with
`tensorflow_text.SentencepieceTokenizer`, so tokenization runs inside `tf.data`
maps, `tf.function`s and an exported SavedModel (its ops, SentencepieceOp /
SentencepieceTokenizeOp / SentencepieceDetokenizeOp / SentencepieceIdToStringOp /
SentencepieceVocabSizeOp, all exist in the tensorflow-text 2.12.1 that TF
Serving links in).

The first four ids are the reserved tokens of `tfm.special_tokens`:
0 `[PAD]`, 1 `[UNK]`, 2 `[START]`, 3 `[END]`.
"""

import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile

import tensorflow as tf
import tensorflow_text as tf_text
from google.protobuf.message import DecodeError
from sentencepiece import sentencepiece_model_pb2

from tfm._framework import sentencepiece_resource
from tfm.special_tokens import END, END_ID, PAD, PAD_ID, START, START_ID, UNK, UNK_ID

MODEL_FILE = "sentencepiece.model"
VOCAB_FILE = "vocab.txt"
TOKENIZER_CONFIG_FILE = "tokenizer.json"


_IDENTITY_NOTICE = b"precompiled_charsmap is empty. use identity normalization."


@contextlib.contextmanager
def without_identity_notice():
    """Runs the block with SentencePiece's `precompiled_charsmap is empty` notice kept off stderr.

    The SentencePiece inside tensorflow-text prints that line (its INFO level, straight to file
    descriptor 2) each time it loads a model with identity normalization, as every tfm model has,
    and offers no way to lower its log level. Everything else written to stderr meanwhile is
    passed on, after the block.

    Takes no arguments; use it as `with without_identity_notice(): ...`.

    Example:
        >>> with without_identity_notice():
        ...     tokenizer = SubwordTokenizer(train_tokenizer(["a b c", "a c b"], vocab_size=10).model_proto)
        >>> tokenizer.vocab_size
        10
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no stderr file descriptor to borrow
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            kept = b"".join(line for line in captured if _IDENTITY_NOTICE not in line)
            if kept:
                os.write(2, kept)


class _SharedSentencepieceModel(tf.saved_model.experimental.TrackableResource):
    """The parsed SentencePiece model, kept by name in TensorFlow's resource manager.

    tensorflow-text's own resource is private to the eager kernel that made it, and
    `tf.random.set_seed` / `keras.utils.set_random_seed` clear the eager kernel cache,
    which deletes it ("Resource .../SentencepieceOp... does not exist"). A
    `shared_name` (a hash of the model, so equal models share) keeps it alive.
    """

    def __init__(self, model_proto):
        self._model = model_proto
        self._shared_name = "tfm_sentencepiece_" + hashlib.sha1(model_proto).hexdigest()
        super().__init__()
        _ = self.resource_handle  # create it now

    def _create_resource(self):
        return sentencepiece_resource(self._model, self._shared_name)


class SubwordTokenizer(tf.Module):
    """Text <-> subword ids with a SentencePiece model, in TensorFlow ops.

    Args:
        model_proto: bytes. A serialized SentencePiece model whose ids 0-3 are
            `[PAD]`, `[UNK]`, `[START]`, `[END]` (what `train_tokenizer` makes).
        name: str. Module name.

    Example:
        >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
        >>> ids = tokenizer.tokenize(["Ein Hund läuft."], add_start_end=True)   # ragged (B, None)
        >>> int(ids[0, 0]), int(ids[0, -1])                                    # START ... END
        (2, 3)
        >>> [text.decode() for text in tokenizer.detokenize(ids).numpy()]
        ['Ein Hund läuft.']
        >>> same = SubwordTokenizer(tokenizer.model_proto)                     # from the serialized model
        >>> same.vocab_size == tokenizer.vocab_size
        True
    """

    def __init__(self, model_proto, name="subword_tokenizer"):
        super().__init__(name=name)
        if not isinstance(model_proto, bytes) or not model_proto:
            raise ValueError(f"model_proto must be non-empty bytes (a serialized SentencePiece model), "
                             f"got {type(model_proto).__name__}")
        self.model_proto = model_proto
        try:  # a damaged proto fails here with a plain message, not later inside a TensorFlow op
            sentencepiece_model_pb2.ModelProto().ParseFromString(model_proto)
        except DecodeError as error:
            raise ValueError(f"not a valid SentencePiece model ({error})") from None
        with without_identity_notice():
            self._sentencepiece = tf_text.SentencepieceTokenizer(model=model_proto, out_type=tf.int32)
            self._sentencepiece._model_resource = _SharedSentencepieceModel(model_proto)  # survives set_seed
            self._vocab_size = int(self._sentencepiece.vocab_size())
        reserved = [t.decode("utf-8") for t in self._sentencepiece.id_to_string(tf.range(4)).numpy()]
        if reserved != [PAD, UNK, START, END]:
            raise ValueError(f"the model's ids 0-3 are {reserved}, expected {[PAD, UNK, START, END]}")

    @property
    def vocab_size(self):
        """int. Number of ids `V`, the reserved ones included.

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> tokenizer.vocab_size
            40
        """
        return self._vocab_size

    def tokenize(self, strings, add_start_end=False):
        """Text to ids.

        Args:
            strings: tf.string scalar or `(B,)` (Python str / list of str work too).
            add_start_end: bool. Put START (2) before and END (3) after every sequence.

        Returns:
            int32 ids: `(L,)` for a scalar, a `tf.RaggedTensor` `(B, None)` for a vector.

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> ids = tokenizer.tokenize("Ein Hund läuft.")                     # a scalar: (L,)
            >>> ids.dtype.name, tokenizer.tokenize(["Ein Hund.", "A dog."]).shape   # a vector: ragged (B, None)
            ('int32', TensorShape([2, None]))
        """
        strings = tf.convert_to_tensor(strings, tf.string)
        if strings.shape.rank == 0:
            return self.tokenize(strings[tf.newaxis], add_start_end)[0]
        if strings.shape.rank != 1:
            raise ValueError(f"tokenize takes a scalar or a vector of strings, got shape {strings.shape}")
        ids = self._sentencepiece.tokenize(strings)  # (B,) -> (B, None)
        if add_start_end:
            column = tf.ones_like(ids[:, :1])  # (B, 1), ragged, one entry per row
            ids = tf.concat([column * START_ID, ids, column * END_ID], axis=1)
        return ids

    def detokenize(self, ids):
        """Ids to text, dropping `[PAD]`, `[START]` and `[END]`.

        Args:
            ids: int `(L,)`, `(B, L)` (0-padded) or a `tf.RaggedTensor` `(B, None)`.

        Returns:
            tf.string: a scalar for `(L,)`, else `(B,)`.

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> ids = tokenizer.tokenize(["Ein Hund.", "A dog runs."], add_start_end=True).to_tensor()  # (B, L)
            >>> [text.decode() for text in tokenizer.detokenize(ids).numpy()]
            ['Ein Hund.', 'A dog runs.']
        """
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
            if ids.shape.rank == 1:
                return self.detokenize(ids[tf.newaxis])[0]
            if ids.shape.rank != 2:
                raise ValueError(f"detokenize takes ids of rank 1 or 2, got shape {ids.shape}")
        ids = tf.cast(ids, tf.int32)
        keep = (ids != PAD_ID) & (ids != START_ID) & (ids != END_ID)
        return self._sentencepiece.detokenize(tf.ragged.boolean_mask(ids, keep))

    def id_to_token(self, ids):
        """The subword strings of `ids` (any shape, ragged too), e.g. `▁Hund`, `[END]`.

        Args:
            ids: int ids, any shape (a `tf.RaggedTensor` too).

        Returns:
            tf.string of the same shape.

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> [t.decode() for t in tokenizer.id_to_token([0, 1, 2, 3]).numpy()]
            ['[PAD]', '[UNK]', '[START]', '[END]']
        """
        return self._sentencepiece.id_to_string(ids)

    def vocabulary(self):
        """list of str: every token, in id order (for plots and `vocab.txt`).

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> vocabulary = tokenizer.vocabulary()
            >>> len(vocabulary), vocabulary[:4]
            (40, ['[PAD]', '[UNK]', '[START]', '[END]'])
        """
        return [t.decode("utf-8") for t in self.id_to_token(tf.range(self.vocab_size)).numpy()]

    def save(self, folder):
        """Writes `sentencepiece.model`, a readable `vocab.txt` and `tokenizer.json` into `folder`.

        Args:
            folder: str. Created if needed.

        Returns:
            str: `folder`.

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> import tempfile
            >>> tmp = tempfile.TemporaryDirectory()
            >>> sorted(os.listdir(tokenizer.save(tmp.name)))
            ['sentencepiece.model', 'tokenizer.json', 'vocab.txt']
        """
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, MODEL_FILE), "wb") as f:
            f.write(self.model_proto)
        with open(os.path.join(folder, VOCAB_FILE), "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in self.vocabulary()))
        with open(os.path.join(folder, TOKENIZER_CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump({"type": "sentencepiece", "vocab_size": self.vocab_size, "model_file": MODEL_FILE,
                       "reserved": {PAD: PAD_ID, UNK: UNK_ID, START: START_ID, END: END_ID}}, f, indent=2)
        return folder

    @classmethod
    def load(cls, folder):
        """The tokenizer `save` wrote into `folder` (a run folder's `tokenizer/`).

        Args:
            folder: str. A folder `save` wrote.

        Raises:
            FileNotFoundError: no `sentencepiece.model` in `folder`.
            ValueError: the file is damaged (named).

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> import tempfile
            >>> tmp = tempfile.TemporaryDirectory()
            >>> SubwordTokenizer.load(tokenizer.save(tmp.name)).vocabulary() == tokenizer.vocabulary()
            True
        """
        path = os.path.join(folder, MODEL_FILE)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no tokenizer in {folder!r}: {MODEL_FILE} not found")
        with open(path, "rb") as f:
            proto = f.read()
        try:
            return cls(proto)
        except (ValueError, tf.errors.OpError) as error:
            reason = str(error).strip().splitlines()[0][:200] if str(error).strip() else type(error).__name__
            raise ValueError(f"cannot read the tokenizer {path}: {reason}. The file is damaged (truncated or "
                             "not a SentencePiece model); restore it from a copy of the run folder — a run "
                             "cannot be used with another tokenizer") from None


    def copies_problems(self, folder):
        """What is wrong with the readable copies `save` wrote beside `sentencepiece.model` in `folder`: one line per
        damaged or missing one, `vocab.txt` (every token, one a line, in id order) or `tokenizer.json` (its size);
        empty when both match. tfm reads only `sentencepiece.model`, so `tfm.runs.load_tokenizer` warns.

        Example:
            >>> tokenizer = train_tokenizer(["Ein Hund läuft.", "Zwei Hunde laufen.", "A dog runs."], vocab_size=40)
            >>> import tempfile
            >>> folder = tokenizer.save(tempfile.mkdtemp())
            >>> os.remove(os.path.join(folder, VOCAB_FILE))
            >>> tokenizer.copies_problems(folder)
            ['...vocab.txt is missing']
        """
        problems = []
        vocab_path, config_path = os.path.join(folder, VOCAB_FILE), os.path.join(folder, TOKENIZER_CONFIG_FILE)
        try:
            with open(vocab_path, encoding="utf-8") as f:
                listed = f.read().split("\n")
            listed = listed[:-1] if listed and listed[-1] == "" else listed
            vocabulary = self.vocabulary()
            if len(listed) != len(vocabulary):
                problems.append(f"{vocab_path} lists {len(listed)} tokens, not the {len(vocabulary)} of {MODEL_FILE}"
                                f"{' (cut short?)' if len(listed) < len(vocabulary) else ''}")
            elif listed != vocabulary:
                line = next(i for i, (a, b) in enumerate(zip(listed, vocabulary)) if a != b)
                problems.append(f"{vocab_path} differs from {MODEL_FILE} at line {line + 1} ({listed[line]!r}, not "
                                f"{vocabulary[line]!r})")
        except FileNotFoundError:
            problems.append(f"{vocab_path} is missing")
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{vocab_path} cannot be read ({error})")
        try:
            with open(config_path, encoding="utf-8") as f:
                record = json.load(f)
            if not isinstance(record, dict) or record.get("vocab_size") != self.vocab_size:
                found = record.get("vocab_size") if isinstance(record, dict) else record
                problems.append(f"{config_path} records vocab_size {found!r}, not the {self.vocab_size} of "
                                f"{MODEL_FILE}")
        except FileNotFoundError:
            problems.append(f"{config_path} is missing")
        except (OSError, ValueError) as error:
            problems.append(f"{config_path} is not valid JSON ({str(error).splitlines()[0][:80]})")
        return problems


def _texts(dataset_or_texts):
    """Yields str from a dataset of strings or of string tuples, or from an iterable of str / bytes / tuples."""
    items = dataset_or_texts.as_numpy_iterator() if isinstance(dataset_or_texts, tf.data.Dataset) else dataset_or_texts
    for item in items:
        for text in item if isinstance(item, (tuple, list)) else (item,):
            yield text.decode("utf-8") if isinstance(text, bytes) else str(text)


def train_tokenizer(dataset_or_texts, vocab_size, folder=None, model_type="bpe", max_sentences=1_000_000,
                    character_coverage=1.0, normalization="identity", byte_fallback=False, num_threads=2, seed=0,
                    whole_tokens=()):
    """Learns a shared subword vocabulary with SentencePiece.

    Args:
        dataset_or_texts: a `tf.data.Dataset` of `(source, target)` pairs (both sides
            are used) or of strings, or an iterable of `str`.
        vocab_size: int. Vocabulary size `V`, the 4 reserved ids included.
        folder: str or None. Save the tokenizer there (`SubwordTokenizer.save`).
        model_type: "bpe" (the paper's byte-pair encoding) or "unigram".
        max_sentences: int. Sentences SentencePiece samples for training.
        character_coverage: float. Share of characters kept as symbols; 1.0 keeps
            all (fine for European languages).
        normalization: SentencePiece normalization rule. "identity" keeps the text
            as is, so `detokenize(tokenize(x)) == x` up to runs of whitespace;
            "nmt_nfkc" folds Unicode compatibility forms.
        byte_fallback: bool. Spell unseen characters as UTF-8 byte tokens instead
            of `[UNK]` (costs 256 ids).
        num_threads: int. Trainer threads.
        seed: int. Sampling seed when the text has more than `max_sentences` lines.
        whole_tokens: iterable of str. Space-separated tokens that always become one subword each
            (SentencePiece user-defined symbols `▁token`), e.g. a linearized tree's "(NP", ")" and
            "XX": BPE would otherwise spell "(NP" as "▁(" + "NP" (parse targets 1.3x as long).
            They count towards `vocab_size`.

    Returns:
        `SubwordTokenizer`.

    Example:
        >>> pairs = [("Ein Hund läuft.", "A dog runs."), ("Zwei Hunde laufen.", "Two dogs run.")]   # both sides
        >>> tokenizer = train_tokenizer(pairs, vocab_size=40, whole_tokens=["(NP"])
        >>> [t.decode() for t in tokenizer.id_to_token(tokenizer.tokenize("(NP")).numpy()]   # one subword
        ['▁(NP']
    """
    try:
        import sentencepiece as spm
    except ImportError as error:  # only training needs it; loading runs on tensorflow-text alone
        raise ImportError("train_tokenizer needs the `sentencepiece` package: pip install sentencepiece") from error
    if model_type not in ("bpe", "unigram"):
        raise ValueError(f"model_type={model_type!r}: expected 'bpe' or 'unigram'")
    if int(vocab_size) <= 4:
        raise ValueError(f"vocab_size={vocab_size} leaves no room beyond the 4 reserved tokens")
    whole_tokens = sorted(set(whole_tokens))
    bad = [t for t in whole_tokens if not isinstance(t, str) or not t or t != t.strip() or len(t.split()) != 1]
    if bad:
        raise ValueError(f"whole_tokens must be non-empty strings without whitespace; got {bad[:5]}")
    if len(whole_tokens) >= int(vocab_size) - 4:
        raise ValueError(f"vocab_size={vocab_size} leaves no room beyond the 4 reserved ids and "
                         f"{len(whole_tokens)} whole_tokens")
    texts = (t for t in _texts(dataset_or_texts) if t.strip())
    first = next(texts, None)
    if first is None:
        raise ValueError("train_tokenizer got no text (empty dataset or only blank lines)")
    spm.set_random_generator_seed(seed)
    model = io.BytesIO()

    def sentences():
        yield first
        yield from texts

    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=sentences(), model_writer=model, vocab_size=int(vocab_size), model_type=model_type,
            character_coverage=character_coverage, normalization_rule_name=normalization,
            byte_fallback=byte_fallback, input_sentence_size=max_sentences, shuffle_input_sentence=True,
            pad_id=PAD_ID, unk_id=UNK_ID, bos_id=START_ID, eos_id=END_ID,
            pad_piece=PAD, unk_piece=UNK, bos_piece=START, eos_piece=END,
            num_threads=num_threads, minloglevel=2,
            # "▁" (SentencePiece's space) in front: the symbol then takes the space before it, as a word does.
            user_defined_symbols=["\u2581" + t for t in whole_tokens],
        )
    except RuntimeError as error:  # e.g. "Vocabulary size is too high (2000). Please set it to a value <= 812."
        raise ValueError(f"SentencePiece could not learn vocab_size={vocab_size}: {error}") from error
    tokenizer = SubwordTokenizer(model.getvalue())
    if folder is not None:
        tokenizer.save(folder)
    return tokenizer
