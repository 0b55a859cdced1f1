"""Decoding speed: cached + compiled search vs recomputing the whole prefix at every step.

    python benchmarks/decoding_speed.py            # small preset (3+3 layers, d_model 256), 5 rounds
    python benchmarks/decoding_speed.py --quick    # tiny preset, fewer sentences, 3 rounds
    python benchmarks/decoding_speed.py --preset base --sentences 16

Same model, same source batch, same outputs (checked) for every candidate; greedy and
beam 4 (α = 0.6). Candidates:

    cached+XLA       tfm.decoding with the key/value cache, tf.function(jit_compile=True)
    cached           the same, tf.function graph mode (what `tfm translate` and the export run)
    recompute-dec    no cache: the decoder reruns over the whole prefix at every step
                     (encoder output computed once), tf.function graph mode
    recompute-all    the TensorFlow tutorial's way (`use_cache=False`): the whole Transformer
                     (encoder too) on (source, prefix) at every step, tf.function graph mode

The model has random weights, so it seldom emits END: every sentence runs to its
output limit, source length + `--extra` (10 by default, so outputs are about as long as
Multi30k's ~13 subwords, not the +50 of §6.1, which would flatter the cache). Rates are
sentences/s, medians over rounds that alternate the candidates; warm-up (tracing, XLA
compilation) is excluded and reported separately. Ratios are against recompute-all.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from common import alternate, median, save_result, timed

CANDIDATES = ("cached+XLA", "cached", "recompute-dec", "recompute-all")


def recompute_decoder(model):
    """No cache, the encoder output computed once: the decoder alone reruns over the whole prefix at every step."""
    import tensorflow as tf

    from tfm.decoding import ModelDecodable
    from tfm.decoding.model_adapter import repeat_rows
    from tfm.models import DecodingState

    class RecomputeDecoder(ModelDecodable):
        def start(self, source_ids, max_steps=None, use_cache=True):
            memory, memory_mask = self.model.encoder_output(source_ids)  # (B, S, D), (B, S)
            return DecodingState(memory=memory, memory_mask=memory_mask, cache=())

        def step(self, sequences, index, state, use_cache=True):
            rows = tf.shape(sequences)[0]  # the beams of a sentence read copies of its memory
            memory, memory_mask = repeat_rows(state.memory, rows), repeat_rows(state.memory_mask, rows)
            logits = self.model.decode(sequences[:, : index + 1], memory, memory_mask)  # (N, t+1, V)
            return logits[:, -1], state

    return RecomputeDecoder(model)


def build(preset, sentences, min_len, max_len, seed=0):
    import keras

    import tfm

    keras.utils.set_random_seed(seed)
    config = tfm.TransformerConfig.preset(preset, dropout=0.0)
    model = tfm.Transformer.from_preset(config)
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_len, max_len + 1, size=sentences)
    source = np.zeros((sentences, max_len), np.int32)
    for i, n in enumerate(lengths):
        source[i, :n] = rng.integers(4, config.vocab_size, size=n)
    return model, source, config


def make_searches(model, beam_size, alpha, extra):
    import tensorflow as tf

    from tfm import decoding

    def search(decodable, use_cache):
        if beam_size == 1:
            return lambda ids: decoding.greedy_search(decodable, ids, max_extra_length=extra, use_cache=use_cache)
        return lambda ids: decoding.beam_search(decodable, ids, beam_size=beam_size, alpha=alpha,
                                                max_extra_length=extra, use_cache=use_cache)

    return {
        "cached+XLA": tf.function(search(model, True), jit_compile=True),
        "cached": tf.function(search(model, True)),
        "recompute-dec": tf.function(search(recompute_decoder(model), False)),
        "recompute-all": tf.function(search(model, False)),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny preset, 16 sentences, 3 rounds")
    parser.add_argument("--preset", default=None, help="tiny, small or base (default: small; tiny with --quick)")
    parser.add_argument("--sentences", type=int, default=None, help="sentences per batch (default: 32; 16 quick)")
    parser.add_argument("--rounds", type=int, default=None, help="timing rounds (default: 5; 3 quick)")
    parser.add_argument("--repeats", type=int, default=1, help="batches timed per round and candidate")
    parser.add_argument("--extra", type=int, default=10, help="output limit = source length + EXTRA (default: 10)")
    parser.add_argument("--min-length", type=int, default=8, help="shortest source, subwords (default: 8)")
    parser.add_argument("--max-length", type=int, default=18, help="longest source, subwords (default: 18)")
    parser.add_argument("--no-save", action="store_true", help="do not write docs/results/decoding_speed.json")
    args = parser.parse_args(argv)
    preset = args.preset or ("tiny" if args.quick else "small")
    sentences = args.sentences or (16 if args.quick else 32)
    rounds = args.rounds or (3 if args.quick else 5)

    import tensorflow as tf

    from tfm.config import DecodingConfig

    model, source, config = build(preset, sentences, args.min_length, args.max_length)
    print(f"TensorFlow {tf.__version__}; {os.cpu_count()} CPUs; preset {preset} ({config.num_layers}+"
          f"{config.num_layers} layers, d_model {config.d_model}, vocab {config.vocab_size}, "
          f"{model.count_params() / 1e6:.1f}M parameters); {sentences} sentences of "
          f"{args.min_length}-{args.max_length} subwords, outputs up to source length + {args.extra}; "
          f"{rounds} rounds x {args.repeats} batch(es), candidates alternating")

    rows, results = [], {}
    for label, beam_size in (("greedy", 1), ("beam 4", 4)):
        searches = make_searches(model, beam_size, DecodingConfig().length_penalty, args.extra)
        ids = tf.constant(source)
        outputs, warmup = {}, {}
        for name, fn in searches.items():
            start = time.perf_counter()
            outputs[name] = fn(ids).sequences.numpy()  # trace (and compile) once, outside the timing
            warmup[name] = time.perf_counter() - start
        reference = outputs["cached"]
        same = {name: bool(np.array_equal(out, reference)) for name, out in outputs.items()}
        tokens = float(np.mean(np.sum(reference != 0, axis=1)))

        def measure(name, fn_map=searches, ids=ids):
            return sentences / timed(lambda: fn_map[name](ids).sequences.numpy(), args.repeats)

        per_round = alternate(list(CANDIDATES), rounds, measure)
        base = median(per_round["recompute-all"])
        print(f"\n{label}: mean output {tokens:.1f} subwords; identical outputs: "
              + ", ".join(f"{n} {'yes' if s else 'NO'}" for n, s in same.items()))
        print(f"  {'candidate':15s} {'sentences/s':>11s} {'(min-max)':>15s} {'vs recompute-all':>17s} "
              f"{'warm-up s':>10s}")
        for name in CANDIDATES:
            values = per_round[name]
            rate = median(values)
            ratio = rate / base
            print(f"  {name:15s} {rate:11.1f} {min(values):7.1f}-{max(values):<7.1f} {ratio:16.2f}x "
                  f"{warmup[name]:10.1f}")
            rows.append({"search": label, "candidate": name, "sentences_per_s": rate, "rounds": values,
                         "ratio_vs_recompute_all": ratio, "warmup_s": warmup[name], "identical": same[name]})
        results[label] = {name: median(per_round[name]) for name in CANDIDATES}
        results[label]["tokens"] = tokens

    print("\nratios from this run (medians):")
    for label in results:
        r = results[label]
        print(f"  {label}: cached+XLA / recompute-all = {r['cached+XLA'] / r['recompute-all']:.2f}x, "
              f"cached / recompute-all = {r['cached'] / r['recompute-all']:.2f}x, "
              f"cached / recompute-dec = {r['cached'] / r['recompute-dec']:.2f}x, "
              f"cached+XLA / cached = {r['cached+XLA'] / r['cached']:.2f}x")
    if not args.no_save:
        command = "python benchmarks/decoding_speed.py" + (" --quick" if args.quick else "")
        path = save_result("decoding_speed", {
            "preset": preset, "sentences": sentences, "rounds": rounds, "extra": args.extra,
            "source_lengths": [args.min_length, args.max_length], "rows": rows, "command": command,
            "plot_bars": {"labels": [f"{r['search']}: {r['candidate']}" for r in rows],
                          "values": [r["sentences_per_s"] for r in rows], "xlabel": "sentences/s",
                          "title": f"Decoding speed, {preset} preset, {sentences} sentences, {os.cpu_count()} CPUs"},
        })
        print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
