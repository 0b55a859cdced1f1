"""Why does the Transformer parser's loss stall? Four measurements on training sentences (issue 24).

    python benchmarks/parsing_diagnosis.py --data-dir DIR                   # train parse_small 3 epochs, then measure
    python benchmarks/parsing_diagnosis.py --data-dir DIR --run RUN         # measure a trained run
    python benchmarks/parsing_diagnosis.py --data-dir DIR --set dropout=0.1 --epochs 6

On `--sentences` training sentences (default 256), teacher-forced, with no dropout:

1. the model's cross entropy per target token (no label smoothing) and its accuracy, per kind of
   tree token: "(LABEL" openers, ")" closers, leaves ("XX", or the POS tags with --dataset ptb_parse_tags);
2. the same with each sentence's source replaced by another training sentence of the same number of
   words (same length, other words): if the loss barely moves, the model reads only the length of
   its input, not its words;
3. a source-blind baseline: a trigram model of the tree tokens (add-0.1 smoothing) fitted on all
   training targets, scored on the same tokens: a model near it has learned the marginal of trees;
4. where the cross-attention looks: for the target position that writes the k-th leaf, the share
   of attention on word k's subwords (every layer, the best head and the mean of heads), against the
   share a uniform attention would give;
5. whether the encoder still tells positions apart: the standard deviation of its output across a
   sentence's positions (mean over dimensions; ~0 when every position gives the same vector and the
   cross-attention has nothing to choose from);
6. the source words' rows of the (first) embedding table: their mean cosine to their mean (0 for
   unrelated rows; it grows when every row is pushed one way, as a tied softmax does to words that
   are never targets).

Results go to docs/results/NAME.json (default parsing_diagnosis).
"""

import argparse
import collections
import math
import os
import shutil
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, save_result


def trigram_cross_entropy(train_sequences, test_sequences, vocab_size, k=0.1):
    """Mean -log p(token | two previous) in nats over `test_sequences` (lists of ids, START first)."""
    tri, bi = collections.Counter(), collections.Counter()
    for seq in train_sequences:
        for a, b, c in zip(seq, seq[1:], seq[2:]):
            tri[a, b, c] += 1
            bi[a, b] += 1
    total, count = 0.0, 0
    for seq in test_sequences:
        padded = [seq[0]] + list(seq)  # START START y1 ...: the first token has a two-token context too
        for a, b, c in zip(padded, padded[1:], padded[2:]):
            total -= math.log((tri[a, b, c] + k) / (bi[a, b] + k * vocab_size))
            count += 1
    return total / count


def word_spans(pieces):
    """`[(start, end), ...]`: the source positions of each word (SentencePiece marks a word's first piece
    with "▁"); position 0 is START."""
    spans = []
    for position, piece in enumerate(pieces):
        if piece in ("[START]", "[END]", "[PAD]"):
            continue
        if piece.startswith("▁") or not spans:
            spans.append([position, position + 1])
        else:
            spans[-1][1] = position + 1
    return [tuple(span) for span in spans]


def as_text(pieces):
    """Byte pieces -> str array without SentencePiece's word mark "▁" (so "▁XX" reads "XX")."""
    import numpy as np

    return np.vectorize(lambda piece: piece.decode("utf-8").lstrip("\u2581"))(pieces)


def measure(model, tokenizer, sources, targets, swap_sources, train_targets, leaves):
    import numpy as np
    import tensorflow as tf

    from tfm.parsing.trees import CLOSE_TOKEN, leaf_tokens

    def ids(texts):
        return tokenizer.tokenize(texts, add_start_end=True).to_tensor()

    src, tgt, swapped = ids(sources), ids(targets), ids(swap_sources)
    tgt_in, labels = tgt[:, :-1], tgt[:, 1:]
    mask = (labels != 0).numpy()
    pieces = as_text(tokenizer.id_to_token(labels).numpy())
    kind = np.where(np.isin(pieces, leaf_tokens(leaves)), "leaf", np.where(pieces == CLOSE_TOKEN, ")",
                                                       np.where(np.char.startswith(pieces, "("), "(LABEL", "END")))

    def loss_and_correct(source_ids):
        logits = tf.cast(model((source_ids, tgt_in), training=False), tf.float32).numpy()
        logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
            - logits.max(-1, keepdims=True)
        nll = -np.take_along_axis(logp, labels.numpy()[..., None], -1)[..., 0]
        return nll, logits.argmax(-1) == labels.numpy()

    rows = {}
    nll, correct = loss_and_correct(src)
    nll_swap, correct_swap = loss_and_correct(swapped)
    for name in ("all", "(LABEL", ")", "leaf"):
        keep = mask if name == "all" else mask & (kind == name)
        rows[name] = {"tokens": int(keep.sum()), "loss": round(float(nll[keep].mean()), 4),
                      "accuracy": round(float(correct[keep].mean()), 4),
                      "loss_other_source": round(float(nll_swap[keep].mean()), 4),
                      "accuracy_other_source": round(float(correct_swap[keep].mean()), 4)}
    label_ids = [list(row[row != 0]) for row in tgt.numpy()]
    train_ids = [list(row) for row in tokenizer.tokenize(train_targets, add_start_end=True).to_list()]
    trigram = trigram_cross_entropy(train_ids, label_ids, tokenizer.vocab_size)

    # Cross-attention on the k-th word while writing the k-th XX.
    weights = model.attention_weights(src, tgt_in)["cross_attention"]  # per layer (B, N, T, S)
    source_pieces = tokenizer.id_to_token(src).numpy()
    layers = []
    for layer, w in enumerate(weights):
        w = tf.cast(w, tf.float32).numpy()
        on_word, uniform = [], []
        for b in range(w.shape[0]):
            spans = word_spans([piece.decode("utf-8") for piece in source_pieces[b]])
            written = [t for t in range(labels.shape[1]) if mask[b, t] and kind[b, t] == "leaf"]
            length = int((src[b] != 0).numpy().sum())
            for k, t in enumerate(written[: len(spans)]):
                start, end = spans[k]
                on_word.append(w[b, :, t, start:end].sum(-1))  # (N,) per head
                uniform.append((end - start) / length)
        on_word = np.array(on_word)
        layers.append({"layer": layer + 1, "mean_of_heads": round(float(on_word.mean()), 4),
                       "best_head": round(float(on_word.mean(0).max()), 4),
                       "uniform": round(float(np.mean(uniform)), 4)})
    # Does the encoder still tell positions apart? Spread of its output across a sentence's positions.
    memory, memory_mask = model.encoder_output(src)
    memory, keep = tf.cast(memory, tf.float32).numpy(), memory_mask.numpy().astype(bool)
    spread = float(np.mean([memory[b][keep[b]].std(0).mean() for b in range(memory.shape[0])]))
    return {"by_token": rows, "trigram_loss": round(trigram, 4), "cross_attention_on_word_k": layers,
            "encoder_spread": round(spread, 4)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="folder with nltk_data/corpora/treebank.zip "
                                                         "(default $TFM_DATA_DIR)")
    parser.add_argument("--run", default=None, help="a trained ptb_parse run folder (default: train one)")
    parser.add_argument("--model", default="transformer", choices=["transformer"])
    parser.add_argument("--epochs", type=int, default=3, help="epochs to train when --run is not given")
    parser.add_argument("--dataset", default="ptb_parse", choices=["ptb_parse", "ptb_parse_tags"],
                        help="the leaves of the targets: XX for every word, or its POS tag")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a field of parse_small (repeatable)")
    parser.add_argument("--runs", default=os.path.join("runs", "parsing_diagnosis"))
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--name", default="parsing_diagnosis")
    args = parser.parse_args(argv)
    args.data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")

    import numpy as np

    from tfm.config import Recipe, apply_overrides
    from tfm.decoding import Translator
    from tfm.parsing.treebank import ptb_parse_pairs
    from tfm.training import train

    try:
        from tfm.parsing import DATASET_LEAVES

        leaves = DATASET_LEAVES[args.dataset]
        sources, targets = ptb_parse_pairs("train", data_dir=args.data_dir, download=False, leaves=leaves)
    except FileNotFoundError as error:
        print(f"parsing_diagnosis: skipped: {error}")
        return 0
    run_dir = args.run
    if run_dir is None:
        recipe = apply_overrides(Recipe.preset("parse_small", model=args.model), args.set or []).replace(
            dataset=args.dataset, data_dir=args.data_dir, seed=0, validation=False)
        run_dir = os.path.join(args.runs, args.model)
        shutil.rmtree(run_dir, ignore_errors=True)
        history = train(recipe, output=run_dir, epochs=args.epochs, verbose=0).history
        print("training loss by epoch: " + " ".join(f"{x:.3f}" for x in history.get("loss", [])))
    loaded = Translator.from_run(run_dir)
    model, tokenizer = loaded.model, loaded.tokenizer

    # Sentences with a same-length partner: the source swap keeps the number of words.
    by_length = collections.defaultdict(list)
    for index, sentence in enumerate(sources):
        by_length[len(sentence.split())].append(index)
    chosen, partner = [], {}
    for group in by_length.values():
        for i, index in enumerate(group if len(group) > 1 else []):
            partner[index] = group[(i + 1) % len(group)]
            chosen.append(index)
    chosen = sorted(chosen)[: args.sentences]
    results = []
    for start in range(0, len(chosen), 32):
        batch = chosen[start:start + 32]
        results.append(measure(model, tokenizer, [sources[i] for i in batch], [targets[i] for i in batch],
                               [sources[partner[i]] for i in batch], targets, leaves))

    # Source words are never targets: with tied embeddings the softmax pushes all their rows one way.
    word_ids = np.unique(np.concatenate([np.asarray(row, np.int64) for row in
                                         tokenizer.tokenize([sources[i] for i in chosen]).to_list()]))
    table = [w for w in model.weights if len(w.shape) == 2 and w.shape[0] == tokenizer.vocab_size][0].numpy()
    rows, mean = table[word_ids], table[word_ids].mean(0)
    word_rows_cosine = float(np.mean(rows @ mean / (np.linalg.norm(rows, axis=1) * np.linalg.norm(mean))))

    def merge(key):
        tokens = np.array([r["by_token"][key]["tokens"] for r in results])
        return {field: (int(tokens.sum()) if field == "tokens" else
                        round(float((np.array([r["by_token"][key][field] for r in results]) * tokens).sum()
                                    / tokens.sum()), 4))
                for field in results[0]["by_token"][key]}

    summary = {"run": os.path.basename(os.path.normpath(run_dir)), "sentences": len(chosen),
               "dataset": args.dataset, "by_token": {key: merge(key) for key in ("all", "(LABEL", ")", "leaf")},
               "trigram_loss": round(float(np.mean([r["trigram_loss"] for r in results])), 4),
               "encoder_spread": round(float(np.mean([r["encoder_spread"] for r in results])), 4),
               "word_rows_cosine_to_mean": round(word_rows_cosine, 4),
               "cross_attention_on_word_k": [
                   {field: (layer[field] if field == "layer" else
                            round(float(np.mean([r["cross_attention_on_word_k"][i][field] for r in results])), 4))
                    for field in layer}
                   for i, layer in enumerate(results[0]["cross_attention_on_word_k"])],
               "overrides": args.set, "epochs": args.epochs if args.run is None else None}
    print(f"{'tokens':8s} {'n':>6s} {'loss':>7s} {'acc':>6s}   other source: {'loss':>7s} {'acc':>6s}")
    for key, row in summary["by_token"].items():
        print(f"{key:8s} {row['tokens']:6d} {row['loss']:7.3f} {row['accuracy']:6.3f}"
              f"                 {row['loss_other_source']:7.3f} {row['accuracy_other_source']:6.3f}")
    print(f"trigram of tree tokens (source-blind): loss {summary['trigram_loss']:.3f}")
    print(f"encoder output, std across positions: {summary['encoder_spread']:.3f}")
    print(f"source words' embedding rows: mean cosine to their mean {summary['word_rows_cosine_to_mean']:.3f}")
    for layer in summary["cross_attention_on_word_k"]:
        print(f"cross-attention layer {layer['layer']}: on word k {layer['mean_of_heads']:.3f} (mean of heads), "
              f"{layer['best_head']:.3f} (best head); uniform {layer['uniform']:.3f}")
    command = command_line(__file__, argv)
    print(f"wrote {save_result(args.name, {'command': command.strip(), **summary})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
