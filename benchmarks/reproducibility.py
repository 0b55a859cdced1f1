"""Does the Multi30k recipe reproduce? The same training twice, in two fresh processes, compared bit for bit.

    python benchmarks/reproducibility.py --data-dir DIR                       # m30k_small, 2 x 40 updates
    python benchmarks/reproducibility.py --data-dir DIR --steps 100 --epochs 3
    python benchmarks/reproducibility.py --data-dir DIR --precision float32   # without mixed_bfloat16
    python benchmarks/reproducibility.py --data-dir DIR --quick               # 1 epoch x 10 updates (smoke run)

A BLEU score is reproduced "to the decimal" only when a second run of its command trains the same
weights. Here `tfm train --preset m30k_small` (or `--preset`) runs twice, each in a new Python process
(`subprocess`: nothing cached between them), with the same seed, epochs and updates per epoch, in the
recipe's precision. Then: the loss of every epoch (history.csv), every weight of the last epoch
checkpoint (how many tensors differ, the largest difference), and the greedy translations of the first
`--sentences` validation sentences with their BLEU (Moses-tokenized, lowercased). Identical weights mean
identical translations and scores; anything else is measured, not assumed. The runs train with a
fixed `--steps` per epoch (the data repeating) so that the check takes minutes, not the recipe's 90.
The result lands in docs/results/reproducibility.json.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, save_result

TRAIN = "import sys; from tfm.cli import main; sys.exit(main())"


def train_once(run_dir, args):
    """`tfm train` in a new process; returns its wall seconds."""
    command = [sys.executable, "-c", TRAIN, "train", "--preset", args.preset, "--dataset", "multi30k",
               "--source-lang", "en", "--target-lang", "de", "--output", run_dir, "--epochs", str(args.epochs),
               "--steps-per-epoch", str(args.steps), "--seed", str(args.seed)]
    if args.precision == "mixed_bfloat16":
        command.append("--mixed-precision")
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def weights(path):
    """{name: array} of a Keras .weights.h5 file (every dataset in it, by its path)."""
    import h5py

    found = {}

    def keep(name, item):
        if isinstance(item, h5py.Dataset):
            found[name] = item[()]

    with h5py.File(path, "r") as f:
        f.visititems(keep)
    return found


def compare_weights(first, second):
    """(tensors, tensors that differ, the largest absolute difference) of two weight files."""
    import numpy as np

    a, b = weights(first), weights(second)
    if a.keys() != b.keys():
        raise ValueError(f"{first} and {second} hold different tensors")
    differ = [name for name in a if not np.array_equal(a[name], b[name])]
    largest = max((float(np.max(np.abs(a[n].astype(np.float64) - b[n].astype(np.float64)))) for n in differ),
                  default=0.0)
    return len(a), len(differ), largest


def translations(run_dir, sentences):
    """Greedy translations of the first validation sentences and their BLEU (Moses lc)."""
    from tfm.data.preprocess import run_preprocess
    from tfm.decoding import Translator
    from tfm.decoding.bleu import evaluate, split_pairs
    from tfm.runs import read_run_config

    loaded = Translator.from_run(run_dir, checkpoint="latest")
    model, tokenizer, info = loaded.model, loaded.tokenizer, read_run_config(run_dir)
    method, source_lang, target_lang = run_preprocess(info)
    sources, refs = split_pairs(info, "val", limit=sentences)
    hypotheses, scores = evaluate(model, tokenizer, sources, refs, beam_size=1, preprocess=method,
                                  source_lang=source_lang, target_lang=target_lang)
    return list(hypotheses), round(scores["bleu_moses_lc"], 4)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="folder holding multi30k/ (default $TFM_DATA_DIR)")
    parser.add_argument("--preset", default="m30k_small", help="the recipe to train twice (default m30k_small)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs per run (default 2)")
    parser.add_argument("--steps", type=int, default=40, help="updates per epoch (default 40)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--precision", choices=("mixed_bfloat16", "float32"), default="mixed_bfloat16",
                        help="the recipe's precision (default mixed_bfloat16)")
    parser.add_argument("--sentences", type=int, default=200, help="validation sentences translated (default 200)")
    parser.add_argument("--name", default="reproducibility", help="results file docs/results/NAME.json")
    parser.add_argument("--quick", action="store_true", help="1 epoch of 10 updates, 50 sentences (smoke run)")
    args = parser.parse_args(argv)
    if args.quick:
        args.epochs, args.steps, args.sentences = 1, 10, 50
    data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")
    if not data_dir or not os.path.isdir(os.path.join(data_dir, "multi30k")):
        print("no Multi30k: pass --data-dir DIR (or set TFM_DATA_DIR) with DIR/multi30k/*.gz", file=sys.stderr)
        return 2
    os.environ["TFM_DATA_DIR"] = os.path.abspath(data_dir)

    from tfm.runs import latest_checkpoint, read_history

    scratch = tempfile.mkdtemp(prefix="tfm_reproducibility_")
    runs, seconds = [os.path.join(scratch, name) for name in ("first", "second")], []
    for run_dir in runs:
        seconds.append(train_once(run_dir, args))
        print(f"{os.path.basename(run_dir)} run: {args.epochs} epochs x {args.steps} updates in {seconds[-1]:.0f} s",
              flush=True)
    losses = [read_history(run_dir)["loss"] for run_dir in runs]
    tensors, differ, largest = compare_weights(*(latest_checkpoint(run_dir) for run_dir in runs))
    (first_text, first_bleu), (second_text, second_bleu) = (translations(r, args.sentences) for r in runs)
    same_text = sum(a == b for a, b in zip(first_text, second_text))
    print(f"loss per epoch: {losses[0]} vs {losses[1]} ({'identical' if losses[0] == losses[1] else 'different'})")
    print(f"weights: {differ} of {tensors} tensors differ (largest difference {largest:.3g})")
    print(f"greedy translations of {len(first_text)} validation sentences: {same_text} identical; "
          f"BLEU {first_bleu} vs {second_bleu}")
    identical = losses[0] == losses[1] and differ == 0 and same_text == len(first_text)
    print("the two runs are bit-identical" if identical else "the two runs differ")
    command = command_line(__file__, argv)
    save_result(args.name, {
        "command": command, "preset": args.preset, "precision": args.precision, "epochs": args.epochs,
        "steps_per_epoch": args.steps, "seed": args.seed, "train_seconds": [round(s, 1) for s in seconds],
        "losses": losses, "tensors": tensors, "tensors_differ": differ, "largest_difference": largest,
        "sentences": len(first_text), "identical_translations": same_text, "bleu_moses_lc": [first_bleu, second_bleu],
        "identical": identical})
    return 0


if __name__ == "__main__":
    sys.exit(main())
