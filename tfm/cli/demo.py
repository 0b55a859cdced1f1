"""`make demo` / `tfm demo`: the whole pipeline, offline, in a few minutes on 2 CPU cores.

    tfm demo                       # runs/demo: train, average, evaluate, translate, export
    tfm demo --epochs 30           # train longer (a rerun resumes the same run folder)

1. Trains the tiny Transformer (`TransformerConfig.tiny()`: 2+2 layers, d_model 64)
   with `tfm.training.train` on the generated number-words task, English -> German
   ("three hundred twenty one" -> "dreihundert einundzwanzig": German puts units
   before tens, so the model must reorder), which needs no download.
2. Averages the last 5 epoch checkpoints (§6.1).
3. Translates the held-out test split with beam search (beam 4, α = 0.6, §6.1) and
   prints sacreBLEU (with its signature), lowercased BLEU and chrF; the hypotheses
   go to `RUN/hyps/test.beam4.alpha0.6.averaged.txt`.
4. Prints a few translations, then exports a SavedModel for TensorFlow Serving to
   `RUN/export/1` and translates with it once, loaded back as plain TensorFlow.
"""

import os
import time

import tensorflow as tf

from tfm import export_saved_model
from tfm.config import Recipe
from tfm.data.subword_tokenizer import without_identity_notice
from tfm.decoding import Translator, bleu
from tfm.runs import epoch_checkpoints, read_run_config, weights_path
from tfm.training.averaging import average_checkpoints
from tfm.training.trainer import train

DEMO_EPOCHS = 20
EXAMPLES = ["three hundred twenty one", "seven thousand eight hundred ninety four", "forty two",
            "one thousand one"]


def run_demo(run="runs/demo", epochs=None):
    """Trains, averages, evaluates, translates and exports into the run folder `run`; prints each step.

    Args:
        run: str. The run folder (a rerun resumes it).
        epochs: int or None. Defaults to `DEMO_EPOCHS`.

    Returns:
        0 (the exit status of `tfm demo`).
    """
    epochs = epochs or DEMO_EPOCHS
    recipe = Recipe.preset("tiny")
    start = time.perf_counter()
    print(f"[1/4] training the tiny Transformer on the generated number-words task (en -> de) into {run}, "
          f"{epochs} epochs (a rerun resumes)")
    train(recipe, "numbers", output=run, epochs=epochs, verbose=2)
    trained = time.perf_counter()

    last = min(recipe.decoding.checkpoints_to_average, len(epoch_checkpoints(run)))
    average_checkpoints(run, last=last)
    translator = Translator.from_run(run)  # the averaged weights, the run's beam and alpha
    model, tokenizer, checkpoint = translator.model, translator.tokenizer, weights_path(run)
    info = read_run_config(run)
    print(f"[2/4] averaged the last {last} checkpoints (§6.1): {checkpoint}; "
          f"{model.count_params():,} parameters, vocabulary {tokenizer.vocab_size}")

    beam_size, alpha = translator.beam_size, translator.alpha
    sources, references = bleu.split_pairs(info, "test")
    hypotheses, scores = bleu.evaluate(model, tokenizer, sources, references, beam_size=beam_size, alpha=alpha)
    scores.update(split="test", dataset="numbers", checkpoint=checkpoint)
    txt, _ = bleu.write_results(run, "test", hypotheses, scores)
    exact = sum(h == r for h, r in zip(hypotheses, references)) / len(references)
    print(f"[3/4] held-out test split: {len(sources)} sentences, beam {beam_size}, alpha {alpha}, "
          f"{scores['seconds']:.1f} s; exact match {exact:.1%}")
    print(bleu.format_scores(scores))
    print(f"hypotheses: {txt}")

    print("translations (beam search):")
    shown = list(zip(sources[:4], hypotheses[:4], references[:4]))
    for source, hypothesis, reference in shown:
        print(f"  {source}\n    -> {hypothesis}    (reference: {reference})")
    for source, hypothesis in zip(EXAMPLES, translator(EXAMPLES)):
        print(f"  {source}\n    -> {hypothesis}")

    path = os.path.join(run, "export", "1")
    export_saved_model((model, tokenizer), path, beam_size=beam_size, alpha=alpha, overwrite=True)  # a rerun's too
    with without_identity_notice():  # loading the SavedModel loads its SentencePiece model
        loaded = tf.saved_model.load(path).signatures["serving_default"]
        served = loaded(text=tf.constant(EXAMPLES[:1]))["translations"].numpy()[0].decode("utf-8")
    print(f"[4/4] exported the SavedModel to {os.path.abspath(path)}")
    print(f"  serving_default(text=[{EXAMPLES[0]!r}]) -> {served!r}")
    print(f"  inspect: saved_model_cli show --dir {path} --all")
    print(f"  serve:   docker run -p 8501:8501 -v {os.path.abspath(os.path.dirname(path))}:/models/demo "
          f"-e MODEL_NAME=demo tensorflow/serving")
    print(f"done in {time.perf_counter() - start:.0f} s (training {trained - start:.0f} s)")
    return 0
