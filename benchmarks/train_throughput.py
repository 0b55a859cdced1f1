"""Training throughput at the base shape: tfm vs keras-hub vs torch.nn.Transformer, with MFU.

    python benchmarks/train_throughput.py            # full: 5 rounds x 4 steps per candidate
    python benchmarks/train_throughput.py --quick    # 3 rounds x 2 steps
    make bench-deps                                   # installs keras-hub and torch for the peers

Shape (issue 6): 6+6 layers, d_model 512, 8 heads, d_ff 2048, batch 32 x length 32 (source and
target), vocabulary 8000, dropout 0.1, Adam. Measures target tokens/s per training step for each
candidate, alternating candidates round by round, and reports medians, ratios to keras-hub fp32,
and MFU = achieved model FLOP/s / a matmul peak measured in the same run (same dtype).
Candidates whose package is missing are skipped with the reason.
"""

import argparse
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
from common import alternate, median, save_result, timed, use_bench_deps

LAYERS, D, HEADS, FF, VOCAB, B, T = 6, 512, 8, 2048, 8000, 32, 32


def model_flops_per_step(layers=LAYERS, d=D, ff=FF, vocab=VOCAB, b=B, s=T, t=T):
    """Matmul FLOPs of one training step (forward x 3), counted from the architecture."""
    attn_proj = 4 * d * d  # Q, K, V, O
    enc = layers * (attn_proj + 2 * d * ff) * b * s
    dec = layers * (2 * attn_proj + 2 * d * ff) * b * t
    out = d * vocab * b * t
    scores = layers * (2 * b * s * s * d + 2 * b * t * t * d + 2 * b * t * s * d)  # QK^T and AV
    forward = 2 * (enc + dec + out) + 2 * scores
    return 3 * forward


def matmul_peak_fn(dtype, n=2048, repeats=5):
    """A callable returning the FLOP/s of an n x n matmul right now (compiled once)."""
    import tensorflow as tf

    a = tf.cast(tf.random.normal((n, n)), dtype)
    f = tf.function(lambda x: tf.matmul(x, x))
    f(a).numpy()
    return lambda: 2 * n**3 / timed(lambda: f(a).numpy(), repeats)


def batch(seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(4, VOCAB, size=(B, T)).astype("int32")
    tgt = rng.integers(4, VOCAB, size=(B, T + 1)).astype("int32")
    return src, tgt[:, :-1], tgt[:, 1:]


def build_tfm(policy):
    import keras

    import tfm

    keras.config.set_dtype_policy(policy)
    config = tfm.TransformerConfig.base(vocab_size=VOCAB, max_length=T)
    model = tfm.Transformer.from_preset(config)
    model.compile(optimizer=tfm.build_optimizer("base"), loss=tfm.LabelSmoothedCrossEntropy(0.1))
    keras.config.set_dtype_policy("float32")
    src, tin, tout = batch()
    return model, lambda: model.train_on_batch((src, tin), tout)


def build_keras_hub():
    import keras
    import keras_hub

    keras.config.set_dtype_policy("float32")
    src_in = keras.Input((T,), dtype="int32")
    tgt_in = keras.Input((T,), dtype="int32")
    x = keras_hub.layers.TokenAndPositionEmbedding(VOCAB, T, D, mask_zero=True)(src_in)
    for _ in range(LAYERS):
        x = keras_hub.layers.TransformerEncoder(FF, HEADS, dropout=0.1)(x)
    y = keras_hub.layers.TokenAndPositionEmbedding(VOCAB, T, D, mask_zero=True)(tgt_in)
    for _ in range(LAYERS):
        y = keras_hub.layers.TransformerDecoder(FF, HEADS, dropout=0.1)(y, x)
    logits = keras.layers.Dense(VOCAB)(y)
    model = keras.Model([src_in, tgt_in], logits)
    model.compile(optimizer=keras.optimizers.Adam(1e-4, beta_2=0.98, epsilon=1e-9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    src, tin, tout = batch()
    return model, lambda: model.train_on_batch((src, tin), tout)


def build_torch():
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.src = torch.nn.Embedding(VOCAB, D)
            self.tgt = torch.nn.Embedding(VOCAB, D)
            self.core = torch.nn.Transformer(D, HEADS, LAYERS, LAYERS, FF, dropout=0.1, batch_first=True)
            self.out = torch.nn.Linear(D, VOCAB)
            self.register_buffer("causal", torch.nn.Transformer.generate_square_subsequent_mask(T))

        def forward(self, s, t):
            return self.out(self.core(self.src(s), self.tgt(t), tgt_mask=self.causal, tgt_is_causal=True))

    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=0, label_smoothing=0.1)
    src, tin, tout = (torch.as_tensor(a, dtype=torch.long) for a in batch())

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(src, tin).reshape(-1, VOCAB), tout.reshape(-1))
        loss.backward()
        opt.step()

    return net, step


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3 rounds x 2 steps (default: 5 x 4)")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--steps", type=int, default=None, help="timed training steps per round")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 5)
    steps = args.steps or (2 if args.quick else 4)
    use_bench_deps()

    import tensorflow as tf

    print(f"TensorFlow {tf.__version__}; {os.cpu_count()} CPUs; shape {LAYERS}+{LAYERS} layers, d_model {D}, "
          f"B {B} x T {T}, vocab {VOCAB}; {rounds} rounds x {steps} steps, alternating")
    steps_fns, skipped = {}, {}
    builders = {
        "tfm fp32": lambda: build_tfm("float32"),
        "tfm mixed_bfloat16": lambda: build_tfm("mixed_bfloat16"),
        "keras-hub fp32": build_keras_hub,
        "torch.nn.Transformer fp32": build_torch,
    }
    for name, build in builders.items():
        try:
            model, step = build()
        except ImportError as error:
            skipped[name] = f"not installed ({error.name}); run `make bench-deps`"
            continue
        for _ in range(2):  # trace / warm up
            step()
        params = model.count_params() if hasattr(model, "count_params") else sum(p.numel() for p in model.parameters())
        print(f"  built {name}: {params / 1e6:.1f}M parameters")
        steps_fns[name] = step
    for name, why in skipped.items():
        print(f"  skipped {name}: {why}")

    # The peaks are measured inside the same alternating rounds as the models, so that a busy
    # machine lowers both alike; the best round is the peak.
    peak_fns = {"peak float32": matmul_peak_fn("float32"), "peak bfloat16": matmul_peak_fn("bfloat16")}
    flops = model_flops_per_step()
    per_round = alternate(list(steps_fns) + list(peak_fns), rounds,
                          lambda name: peak_fns[name]() if name in peak_fns else B * T / timed(steps_fns[name], steps))
    peaks = {"float32": max(per_round.pop("peak float32")), "bfloat16": max(per_round.pop("peak bfloat16"))}
    rows = []
    reference = median(per_round["keras-hub fp32"]) if "keras-hub fp32" in per_round else None
    print(f"\nmatmul peak (2048^3, best of the same rounds): fp32 {peaks['float32'] / 1e9:.0f} GFLOP/s, "
          f"bf16 {peaks['bfloat16'] / 1e9:.0f} GFLOP/s; model FLOPs/step {flops / 1e9:.1f} G")
    print(f"{'candidate':28s} {'tokens/s':>9s} {'(min-max)':>15s} {'MFU':>6s} {'vs keras-hub fp32':>18s}")
    for name, values in per_round.items():
        rate = median(values)
        peak = peaks["bfloat16" if "bfloat16" in name else "float32"]
        mfu = rate / (B * T) * flops / peak
        ratio = rate / reference if reference else None
        rows.append({"candidate": name, "tokens_per_s": rate, "rounds": values, "mfu": mfu, "ratio": ratio})
        ratio_text = f"{ratio:.2f}x" if ratio else "n/a"
        print(f"{name:28s} {rate:9.0f} {min(values):7.0f}-{max(values):<7.0f} {mfu:6.1%} {ratio_text:>18s}")
    path = save_result("train_throughput", {
        "shape": dict(layers=LAYERS, d_model=D, heads=HEADS, d_ff=FF, vocab=VOCAB, batch=B, length=T),
        "rounds": rounds, "steps": steps, "peaks": peaks, "flops_per_step": flops, "rows": rows,
        "skipped": skipped, "command": "python benchmarks/train_throughput.py" + (" --quick" if args.quick else ""),
    })
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
