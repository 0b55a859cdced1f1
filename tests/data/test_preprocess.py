"""Lowercase + Moses tokenization (`DataConfig.preprocess="moses_lc"`), applied alike in training,
evaluation and `tfm translate`."""

import json

import pytest

from tfm.config import DataConfig
from tfm.data.preprocess import detokenize, moses_lc, preprocess, run_preprocess, validate_preprocess


def test_moses_lc_by_hand():
    assert moses_lc("A man's dog, in the snow.", "en") == "a man 's dog , in the snow ."
    assert moses_lc("Zwei Männer stehen am Herd.", "de") == "zwei männer stehen am herd ."
    assert moses_lc("Kids play (outside)!", "en") == "kids play ( outside ) !"


def test_no_xml_escaping():
    """tokenizer.perl escapes ' and " as &apos; &quot;; here they stay (same token boundaries, readable)."""
    assert moses_lc('He said "hi" & left.', "en") == 'he said " hi " & left .'


def test_none_is_identity_and_unknown_names_refused():
    assert preprocess(["A Dog."], "en", None) == ["A Dog."]
    assert detokenize(["a dog ."], "en", None) == ["a dog ."]
    with pytest.raises(ValueError, match="moses_lc"):
        validate_preprocess("spacy")
    with pytest.raises(ValueError, match="moses_lc"):
        DataConfig(preprocess="lowercase")


@pytest.mark.parametrize("text, lang", [("A dog runs through the snow.", "en"),
                                        ("Ein Hund, der im Schnee läuft.", "de"),
                                        ("Two men (one in red) smile!", "en")])
def test_detokenize_undoes_the_tokenization_but_not_the_case(text, lang):
    (tokens,) = preprocess([text], lang, "moses_lc")
    assert detokenize([tokens], lang, "moses_lc") == [text.lower()]


def test_training_pairs_are_preprocessed(tmp_path):
    """What the tokenizer learns from and the batches hold: both sides, each in its language."""
    from tfm.training.pipeline import load_pairs

    (tmp_path / "s.en").write_text("A Dog's Toy.\nTwo MEN, smiling.\n")
    (tmp_path / "t.de").write_text("Ein Spielzeug.\nZwei Männer, lächelnd.\n")
    data = DataConfig(dataset="files", source_file=str(tmp_path / "s.en"), target_file=str(tmp_path / "t.de"),
                      source_lang="en", target_lang="de", preprocess="moses_lc")
    pairs = [(s.decode(), t.decode()) for s, t in load_pairs(data, "train").as_numpy_iterator()]
    assert pairs == [("a dog 's toy .", "ein spielzeug ."), ("two men , smiling .", "zwei männer , lächelnd .")]
    plain = DataConfig(dataset="files", source_file=data.source_file, target_file=data.target_file)
    assert next(load_pairs(plain, "train").as_numpy_iterator())[0] == b"A Dog's Toy."


class EchoTranslator:
    """Stands in for `tfm.decoding.Translator`: "translates" a sentence into itself and records its input."""

    seen = []

    def __init__(self, *args, beam_size=None, alpha=None, **kwargs):
        self.beam_size, self.alpha = beam_size or 1, alpha or 0.0

    @classmethod
    def from_run(cls, run_dir, checkpoint="auto", **kwargs):
        return cls(**kwargs)

    def __call__(self, sentences):
        EchoTranslator.seen = list(sentences)
        return list(sentences)

    def invalid(self, sentences):
        return []

    def translate(self, sentences, on_invalid="error"):
        return self([s.decode() if isinstance(s, bytes) else s for s in sentences])


def test_evaluate_prepares_sources_and_scores_on_the_anchor_footing(monkeypatch):
    from tfm.decoding import bleu

    monkeypatch.setattr(bleu, "Translator", EchoTranslator)
    sources = ["A man's Dog runs.", "Two kids, laughing."]
    hypotheses, scores = bleu.evaluate(None, None, sources, sources, preprocess="moses_lc",
                                       source_lang="en", target_lang="en")
    assert EchoTranslator.seen == ["a man 's dog runs .", "two kids , laughing ."]
    assert hypotheses == EchoTranslator.seen  # what the model wrote, as it wrote it
    assert scores["bleu_moses_lc"] == pytest.approx(100.0)  # references tokenized and lowercased the same way
    assert scores["bleu_tokenized_lc"] == pytest.approx(100.0)  # the detokenized output, lowercased
    assert scores["bleu"] < 100.0  # lowercased output against cased references
    assert scores["hypotheses_lowercased"]


def test_translate_command_prepares_the_input_and_detokenizes_the_output(monkeypatch, capsys, tmp_path):
    import tfm.decoding
    import tfm.runs
    from tfm import cli

    # The echo "translates" English into English, so the English detokenizer applies.
    info = {"data": {"dataset": "multi30k", "source_lang": "en", "target_lang": "en", "preprocess": "moses_lc"}}
    monkeypatch.setattr(tfm.runs, "weights_path", lambda run, checkpoint="auto": f"{run}/checkpoints/x.weights.h5")
    monkeypatch.setattr(tfm.runs, "read_run_config", lambda run: info)
    monkeypatch.setattr(tfm.decoding, "Translator", EchoTranslator)
    assert cli.main(["translate", "--run", str(tmp_path), "A Dog's toy, here."]) == 0
    assert EchoTranslator.seen == ["a dog 's toy , here ."]
    assert capsys.readouterr().out.splitlines() == ["a dog's toy, here."]


def test_old_runs_have_no_preprocessing():
    """A config.json written before the field existed loads with preprocess None."""
    stored = json.loads('{"dataset": "multi30k", "source_lang": "en", "target_lang": "de", "max_length": 128, '
                        '"tokens_per_batch": 2048, "vocab_size": 8000}')
    assert DataConfig.from_dict(stored, ignore_unknown=True).preprocess is None
    assert run_preprocess({"data": stored}) == (None, "en", "de")
