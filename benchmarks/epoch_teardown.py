"""What tf.data autotuning costs `model.fit` between epochs, and within them (issue 27's idle epochs).

    python benchmarks/epoch_teardown.py --data-dir DIR                     # m30k_small, 30 updates per epoch
    python benchmarks/epoch_teardown.py --data-dir DIR --steps 60 --rounds 3
    python benchmarks/epoch_teardown.py --quick                            # numbers data, 2 rounds (smoke run)

`model.fit` makes a new iterator over its dataset each epoch and deletes the last one. With tf.data
autotuning on (TensorFlow's default), each iterator runs a model thread that sleeps between optimisation
rounds, 10 ms at first and twice as long each time up to 60 s; in TensorFlow 2.21 deleting the iterator
could wait out that sleep, so an epoch ended at the next of 10.23 s, 20.47 s, 40.95 s, 81.91 s, 141.91 s...
of its iterator's life. tfm's batching functions turn autotuning off (`tfm.data.batching.autotune_off()`).

Here the recipe's model trains on the recipe's real batches (Multi30k, `bucket_by_token_budget`, shuffled;
each epoch tokenizes afresh what fills the shuffle buffer, since an epoch of `--steps` updates never reads the
whole corpus that a cache would keep) with autotuning on and off, in alternating rounds of `--epochs` epochs of
`--steps` updates, and two times are taken per epoch: the batches' (from the first batch's start to the last
batch's end: what autotuning can speed up) and the epoch's (from its start to its end: the batches plus the
iterator's creation and the last one's deletion). Medians over epochs; the ratios off/on say what turning
autotuning off costs per update and what it saves per epoch. Results: docs/results/epoch_teardown.json.
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import command_line, save_result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=None, help="folder holding multi30k/ (default $TFM_DATA_DIR)")
    parser.add_argument("--preset", default="m30k_small")
    parser.add_argument("--steps", type=int, default=30, help="updates per epoch (default 30: ~10 s here)")
    parser.add_argument("--epochs", type=int, default=3, help="epochs per round and variant (default 3)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, alternating the variants (default 2)")
    parser.add_argument("--quick", action="store_true", help="generated number words, tiny preset (smoke run)")
    parser.add_argument("--name", default="epoch_teardown", help="results file docs/results/NAME.json")
    args = parser.parse_args(argv)
    data_dir = args.data_dir or os.environ.get("TFM_DATA_DIR")
    if not args.quick and (not data_dir or not os.path.isdir(os.path.join(data_dir, "multi30k"))):
        print("no Multi30k: pass --data-dir DIR (or set TFM_DATA_DIR) with DIR/multi30k/*.gz, or --quick",
              file=sys.stderr)
        return 2

    import keras
    import tensorflow as tf

    from tfm.config import Recipe
    from tfm.data import bucket_by_token_budget, load_dataset, train_tokenizer
    from tfm.models.quantization import cpu_has_native_bfloat16
    from tfm.training import compile_model

    if args.quick:
        args.preset, args.steps, args.epochs = "tiny", 10, 2
        pairs = load_dataset("numbers", "train")
    else:
        pairs = load_dataset("multi30k", "train", "en", "de", data_dir=data_dir, download=False)
    recipe = Recipe.preset(args.preset)
    tokenizer = train_tokenizer(pairs, recipe.data.subwords, seed=0)
    recipe = recipe.replace(vocab_size=tokenizer.vocab_size)
    batches = bucket_by_token_budget(pairs, tokenizer, tokens_per_batch=recipe.training.tokens_per_batch,
                                     max_length=recipe.data.max_pair_length, shuffle=True, seed=0)
    autotune_on = tf.data.Options()
    autotune_on.autotune.enabled = True
    data = {"autotune on (TF's default)": batches.take(args.steps).with_options(autotune_on),
            "autotune off (tfm)": batches.take(args.steps)}
    mixed = cpu_has_native_bfloat16() and not args.quick
    models = {}
    for name in data:
        keras.utils.set_random_seed(0)
        models[name], _ = compile_model(recipe.replace(mixed_precision=mixed), tf.distribute.get_strategy())

    class Clock(keras.callbacks.Callback):
        """Each epoch's (batches seconds, epoch seconds)."""

        def on_train_begin(self, logs=None):
            self.times = []

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch_start, self.first = time.perf_counter(), None

        def on_train_batch_begin(self, batch, logs=None):
            if self.first is None:
                self.first = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            self.last = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.times.append((self.last - self.first, time.perf_counter() - self.epoch_start))

    for name in data:  # tracing
        models[name].fit(data[name], epochs=1, verbose=0)
    measured = {name: [] for name in data}
    names = list(data)
    for r in range(args.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            clock = Clock()
            models[name].fit(data[name], epochs=args.epochs, verbose=0, callbacks=[clock])
            measured[name] += clock.times
            print(f"round {r + 1}, {name}: epochs of " + ", ".join(f"{e:.2f} s (batches {b:.2f} s)"
                                                                    for b, e in clock.times), flush=True)
    rows = []
    for name, times in measured.items():
        batches_s, epoch_s = statistics.median(b for b, _ in times), statistics.median(e for _, e in times)
        waits = [e - b for b, e in times]
        rows.append({"variant": name, "batches_seconds": round(batches_s, 3), "epoch_seconds": round(epoch_s, 3),
                     "updates_per_s": round(args.steps / batches_s, 3), "wait_seconds_median": round(
                         statistics.median(waits), 3), "wait_seconds_max": round(max(waits), 3),
                     "epochs": [[round(b, 3), round(e, 3)] for b, e in times]})
    on, off = rows
    print(f"\n{args.preset}, {args.steps} updates per epoch, {args.epochs} epochs x {args.rounds} rounds per variant, "
          f"{'mixed_bfloat16' if mixed else 'float32'}")
    print(f"{'variant':28s} {'updates/s':>10s} {'epoch s':>8s} {'wait s (median, max)':>22s}")
    for row in rows:
        print(f"{row['variant']:28s} {row['updates_per_s']:10.2f} {row['epoch_seconds']:8.2f} "
              f"{row['wait_seconds_median']:10.2f}, {row['wait_seconds_max']:.2f}")
    print(f"off / on: updates per second {off['updates_per_s'] / on['updates_per_s']:.2f}x, "
          f"epoch time {off['epoch_seconds'] / on['epoch_seconds']:.2f}x")
    command = command_line(__file__, argv)
    save_result(args.name, {"command": command, "preset": args.preset, "steps": args.steps, "epochs": args.epochs,
                            "rounds": args.rounds, "mixed_bfloat16": mixed, "rows": rows,
                            "updates_ratio_off_on": round(off["updates_per_s"] / on["updates_per_s"], 3),
                            "epoch_ratio_off_on": round(off["epoch_seconds"] / on["epoch_seconds"], 3)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
