"""Multi30k: what the joint subword vocabulary's size does to sentence lengths (issue 27).

    python benchmarks/m30k_vocab.py --data-dir DIR                         # 6k, 8k, 10k, 12k
    python benchmarks/m30k_vocab.py --data-dir DIR --sizes 4000 8000       # other sizes
    python benchmarks/m30k_vocab.py --data-dir DIR --sentences 2000        # a smoke run

For each size, the joint SentencePiece BPE vocabulary is learned as `tfm train` learns it (the
training pairs lowercased and Moses-tokenized, `m30k_small`'s `preprocess="moses_lc"`, seed 0) and
both sides of the training and validation pairs are tokenized with it. Per size and side: subwords per
sentence (mean), subwords per word (how finely the words are cut), the share of words cut into more than one
subword, and the training tokens of an epoch (source + target), from which the updates per epoch at
`m30k_small`'s 2,048-token batches follow (a run's time per epoch grows with its tokens; its updates
with tokens / batch size). A larger vocabulary makes shorter sequences (fewer tokens per epoch, faster
epochs) and rarer subwords (fewer examples of each embedding row): the trade the size sets. No model is
trained here; docs/results/m30k_vocab.json holds the table.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, save_result

TOKENS_PER_BATCH = 2048  # m30k_small's batches: tokens per side per batch


def lengths(tokenizer, texts):
    """Subwords per sentence (without [START]/[END]) for each of `texts`."""
    ids = tokenizer.tokenize(texts)
    return ids.row_lengths().numpy()


def side_stats(tokenizer, texts):
    """Mean subwords per sentence and per word, the share of words cut in two or more, total subwords."""
    import numpy as np

    sentence_lengths = lengths(tokenizer, texts)
    words = sorted({w for text in texts for w in text.split()})
    word_lengths = dict(zip(words, lengths(tokenizer, words)))
    running = [word_lengths[w] for text in texts for w in text.split()]
    return {"subwords_per_sentence": round(float(np.mean(sentence_lengths)), 2),
            "subwords_per_word": round(float(np.mean(running)), 3),
            "words_cut_percent": round(100.0 * float(np.mean([n > 1 for n in running])), 2),
            "subwords": int(np.sum(sentence_lengths))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="folder holding multi30k/ (default $TFM_DATA_DIR)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[6000, 8000, 10000, 12000],
                        help="joint vocabulary sizes to learn (default: 6000 8000 10000 12000)")
    parser.add_argument("--sentences", type=int, default=None,
                        help="use only the first N training pairs (a smoke run; default: all)")
    parser.add_argument("--name", default="m30k_vocab", help="results file docs/results/NAME.json")
    args = parser.parse_args(argv)
    bad = [size for size in args.sizes if size < 5]
    if bad:
        parser.error(f"--sizes must leave room beyond the 4 reserved ids (>= 5); got {bad}")
    args.data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")

    from tfm.config import DataConfig, Recipe
    from tfm.training.pipeline import learn_tokenizer, load_pairs

    recipe = Recipe.preset("m30k_small")
    data = DataConfig(dataset="multi30k", data_dir=args.data_dir, preprocess=recipe.data.preprocess,
                      train_sentences=args.sentences)
    try:
        train_pairs = load_pairs(data, "train")
        validation = list(load_pairs(data, "validation").as_numpy_iterator())
    except (FileNotFoundError, OSError) as error:
        print(f"m30k_vocab: skipped: {error}")
        return 0
    train = list(train_pairs.as_numpy_iterator())
    texts = {"train": [[s.decode() for s, _ in train], [t.decode() for _, t in train]],
             "validation": [[s.decode() for s, _ in validation], [t.decode() for _, t in validation]]}
    rows = []
    for size in args.sizes:
        start = time.perf_counter()
        tokenizer = learn_tokenizer(train_pairs, size, seed=0)
        learned = time.perf_counter() - start
        row = {"vocab_size": size, "learned_vocab_size": int(tokenizer.vocab_size), "learn_seconds": round(learned, 1)}
        for split, (sources, targets) in texts.items():
            row[split] = {"en": side_stats(tokenizer, sources), "de": side_stats(tokenizer, targets)}
        tokens = row["train"]["en"]["subwords"] + row["train"]["de"]["subwords"]
        row["train_tokens_per_epoch"] = tokens
        # each batch holds up to TOKENS_PER_BATCH tokens per side: the longer side sets the count
        row["updates_per_epoch_at_2048"] = round(max(row["train"]["en"]["subwords"],
                                                     row["train"]["de"]["subwords"]) / TOKENS_PER_BATCH)
        rows.append(row)
        print(f"vocab {size:6d}: en {row['train']['en']['subwords_per_sentence']:5.2f} / de "
              f"{row['train']['de']['subwords_per_sentence']:5.2f} subwords per sentence, "
              f"{row['train']['de']['words_cut_percent']:5.2f}% of German words cut, "
              f"{tokens:,} training tokens, ~{row['updates_per_epoch_at_2048']} updates per epoch", flush=True)
    command = command_line(__file__, argv)
    result = {"command": command.strip(), "train_pairs": len(train), "validation_pairs": len(validation),
              "preprocess": recipe.preprocess, "tokens_per_batch": TOKENS_PER_BATCH, "rows": rows}
    print(f"wrote {save_result(args.name, result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
