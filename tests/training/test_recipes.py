"""The m30k recipe (Wu et al., 2021's text-only Multi30k Transformer) and its scoring on the anchor's footing."""

import json
import os

import pytest

from tfm.config import Recipe, TransformerConfig


def test_m30k_preset_has_every_anchor_setting():
    recipe = Recipe.preset("m30k")
    c, t, d, data = recipe.model, recipe.training, recipe.decoding, recipe.data
    # Wu et al. (2021) / LividWo/Revisit-MMT: 4+4 layers, d 128, FFN 256, 4 heads, shared embeddings,
    # dropout 0.3, label smoothing 0.1, Adam (0.9, 0.98), 2000 warm-up steps, 4096 tokens, 10 averaged, beam 5.
    assert (c.num_layers, c.d_model, c.d_ff, c.num_heads) == (4, 128, 256, 4)
    assert c.share_embeddings and c.dropout == 0.3 and t.label_smoothing == 0.1
    assert (t.adam_beta_1, t.adam_beta_2) == (0.9, 0.98)
    assert t.warmup_steps == 2000 and t.tokens_per_batch == 4096
    assert d.checkpoints_to_average == 10 and t.keep_checkpoints is None and d.beam_size == 5  # keeps as many
    assert data.preprocess == "moses_lc" and c.vocab_size == data.subwords == 10000  # lowercased; ~10k joint subwords
    # Differences, documented in the README: pre-LN, GNMT length penalty 1.0 (fairseq divides by length).
    assert c.norm_first and d.length_penalty == 1.0


def test_m30k_peak_learning_rate_is_0_005_at_the_end_of_warmup():
    from tfm.training.schedules import TransformerSchedule

    recipe = Recipe.preset("m30k")
    t = recipe.training
    schedule = TransformerSchedule(recipe.model.d_model, t.warmup_steps, t.learning_rate_scale)
    rates = [float(schedule(step - 1)) for step in (1000, 2000, 8000)]  # Keras' iteration i is step i + 1
    assert rates[1] == pytest.approx(0.005, rel=1e-4)
    assert rates[0] == pytest.approx(0.0025, rel=1e-4)  # linear warm-up
    assert rates[2] == pytest.approx(0.0025, rel=1e-4)  # then inverse square root: 0.005 * sqrt(2000 / 8000)


def test_m30k_is_a_preset_of_the_cli():
    from tfm import cli
    from tfm.cli.arguments import train_recipe

    assert "m30k" in TransformerConfig.PRESETS and "m30k" in Recipe.PRESETS
    args = cli.build_parser().parse_args(["train", "--preset", "m30k", "--dataset", "multi30k", "--output", "x"])
    assert args.preset == "m30k"
    assert train_recipe(args) == Recipe.preset("m30k", dataset="multi30k", seed=0)


def test_m30k_small_is_the_prenorm_recipe_on_the_anchors_text():
    """The 90-minute recipe: the small preset with the pre-LN recipe of the quality benchmark, trained
    on lowercased Moses-tokenized text like m30k."""
    from tfm import cli
    from tfm.cli.arguments import train_recipe

    recipe = Recipe.preset("m30k_small")
    c, t, d = recipe.model, recipe.training, recipe.decoding
    assert (c.num_layers, c.d_model, c.d_ff, c.num_heads, c.vocab_size) == (3, 256, 1024, 4, 8000)
    assert c.norm_first and c.dropout == 0.3 and t.label_smoothing == 0.1
    assert (t.warmup_steps, t.learning_rate_scale, t.tokens_per_batch) == (1000, 1.0, 2048)
    assert d.checkpoints_to_average == 10 and recipe.data.preprocess == "moses_lc"
    assert (d.beam_size, d.length_penalty, d.max_extra_length) == (4, 0.6, 50)  # §6.1
    # Exactly `tfm train --preset small` with the README's pre-LN --set flags, plus the preprocessing.
    flags = ["norm_first=true", "dropout=0.3", "warmup_steps=1000", "learning_rate_scale=1.0",
             "checkpoints_to_average=10", "preprocess=moses_lc"]
    argv = ["train", "--preset", "small", "--output", "x", "--tokens-per-batch", "2048", "--dataset", "multi30k"]
    from_flags = train_recipe(cli.build_parser().parse_args(argv + [arg for f in flags for arg in ("--set", f)]))
    assert from_flags == recipe.replace(seed=0) == Recipe.preset("m30k_small")
    assert "m30k_small" in Recipe.PRESETS


def test_a_preset_named_for_a_corpus_trains_on_it():
    """`tfm train --preset m30k_small --output RUN` trains on Multi30k (it trained the Multi30k model on the numbers
    task before), a parse preset on the treebank with tag leaves; the other presets keep the offline numbers task.
    `--dataset` still wins, and takes no languages from the preset (a generated task refuses them)."""
    from tfm import cli
    from tfm.cli.arguments import train_recipe

    parser = cli.build_parser()
    expected = {"m30k": "multi30k", "m30k_small": "multi30k", "parse": "ptb_parse_tags",
                "parse_small": "ptb_parse_tags", "tiny": "numbers", "small": "numbers", "base": "numbers",
                "big": "numbers"}
    assert set(expected) == set(TransformerConfig.PRESETS)
    for preset, dataset in expected.items():
        data = train_recipe(parser.parse_args(["train", "--preset", preset, "--output", "x"])).data
        assert (data.dataset, data.source_lang, data.target_lang) == (dataset, None, None), preset
        assert Recipe.preset(preset, model="bahdanau").data == Recipe.preset(preset).data  # the RNN baseline too
    swapped = train_recipe(parser.parse_args(["train", "--preset", "m30k", "--dataset", "reverse", "--output", "x"]))
    assert swapped.data.dataset == "reverse" and swapped.data.preprocess == "moses_lc"


def test_bleu_moses_lc_by_hand():
    """hyp `ein mann läuft im gras .` vs ref `ein mann läuft im park .` (after lowercasing and Moses
    tokenization): n-gram precisions 5/6, 3/5, 2/4, 1/3, equal lengths (BP = 1):
    BLEU = (5/6 * 3/5 * 2/4 * 1/3)^(1/4) = (1/12)^(1/4) = 53.73."""
    from tfm.decoding.bleu import score

    expected = 100 * (1 / 12) ** 0.25
    model_output = score(["ein mann läuft im gras ."], ["Ein Mann läuft im Park."], lang="de", preprocess="moses_lc")
    assert model_output["bleu_moses_lc"] == pytest.approx(expected, abs=0.01)
    plain = score(["Ein Mann läuft im Gras."], ["Ein Mann läuft im Park."], lang="de")  # a cased, detokenized system
    assert plain["bleu_moses_lc"] == pytest.approx(expected, abs=0.01)
    signature = model_output["bleu_moses_lc_signature"]
    assert "tok:none" in signature and "case:lc" in signature and "moses-lc:de" in signature
    assert "sacremoses:" in signature


def test_moses_and_13a_tokenizations_differ_where_expected():
    """13a keeps `man's` whole; Moses splits `'s`: the anchor's footing is Moses."""
    from tfm.decoding.bleu import score

    s = score(["The man's dog runs."], ["The man's dog runs."])
    assert s["bleu_moses_lc"] == pytest.approx(100.0) and s["bleu_tokenized_lc"] == pytest.approx(100.0)
    half = score(["the man 's dog runs ."], ["The man's dog runs."], lang="en", preprocess="moses_lc")
    assert half["bleu_moses_lc"] == pytest.approx(100.0)


def test_a_run_stores_preprocess_and_reloads_it(tmp_path):
    from tfm.runs import read_run_config
    from tfm.training import train

    (tmp_path / "s.en").write_text("A Dog Runs.\nTwo Men Smile.\nA Cat Sleeps.\n" * 4)
    (tmp_path / "t.de").write_text("Ein Hund Läuft.\nZwei Männer Lächeln.\nEine Katze Schläft.\n" * 4)
    files = dict(dataset="files", source_file=str(tmp_path / "s.en"), target_file=str(tmp_path / "t.de"),
                 source_lang="en", target_lang="de", tokens_per_batch=64)
    recipe = Recipe.preset("tiny", preprocess="moses_lc", subwords=40, **files)
    run = str(tmp_path / "run")
    train(recipe, output=run, epochs=1, strategy="default", verbose=0)
    info = read_run_config(run)
    assert info["data"]["preprocess"] == "moses_lc" and "preprocess" not in info["model"]
    assert Recipe.from_record(info).data.preprocess == "moses_lc"
    with open(os.path.join(run, "tokenizer", "vocab.txt"), encoding="utf-8") as f:
        vocab = f.read().split("\n")[4:]
    assert not any(piece != piece.lower() for piece in vocab)  # learned from lowercased text
    # The same command resumes it (nothing differs); without the preprocessing it is another run.
    train(recipe, output=run, epochs=1, strategy="default", verbose=0)
    with pytest.raises(ValueError, match="preprocess"):
        train(recipe.replace(preprocess=None), output=run, epochs=2, strategy="default", verbose=0)


def test_config_json_without_preprocess_still_resumes():
    from tfm.runs import config_differences, run_record

    record = run_record(Recipe.preset("tiny"))
    old = json.loads(json.dumps(record))
    del old["data"]["preprocess"]
    assert config_differences(old, record) == []


def test_train_sentences_keeps_the_first_training_pairs_only(tmp_path):
    """`DataConfig.train_sentences` (learning curves): the training split is its first N pairs, the
    validation split whole; bad values are refused by name; an older config.json without it resumes."""
    from tfm.config import DataConfig
    from tfm.runs import config_differences, run_record
    from tfm.training.pipeline import load_pairs

    (tmp_path / "s.en").write_text("".join(f"source {i}\n" for i in range(10)))
    (tmp_path / "t.de").write_text("".join(f"target {i}\n" for i in range(10)))
    files = dict(dataset="files", source_file=str(tmp_path / "s.en"), target_file=str(tmp_path / "t.de"))
    pairs = list(load_pairs(DataConfig(**files, train_sentences=3), "train").as_numpy_iterator())
    assert [s.decode() for s, _ in pairs] == ["source 0", "source 1", "source 2"]
    assert len(list(load_pairs(DataConfig(**files), "train").as_numpy_iterator())) == 10
    numbers = DataConfig(dataset="numbers", train_sentences=7)
    assert len(list(load_pairs(numbers, "train").as_numpy_iterator())) == 7
    assert len(list(load_pairs(numbers, "validation").as_numpy_iterator())) > 7
    for bad in (0, -5, 2.5, "3", True):
        with pytest.raises(ValueError, match=f"train_sentences={bad!r}"):
            DataConfig(train_sentences=bad)
    record = run_record(Recipe.preset("tiny"))
    old = json.loads(json.dumps(record))
    del old["data"]["train_sentences"]
    assert config_differences(old, record) == []
    assert config_differences(record, run_record(Recipe.preset("tiny", train_sentences=9)))
