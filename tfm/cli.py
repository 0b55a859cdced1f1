"""The `tfm` command: train | translate | evaluate | export | average | demo.

    tfm train --preset tiny --dataset multi30k --data-dir DIR --output runs/m30k --epochs 1
    tfm average --run runs/m30k --last 5
    tfm evaluate --run runs/m30k --split test --beam-size 4
    tfm translate --run runs/m30k "A dog runs in the snow."
    tfm export --run runs/m30k --output exported/m30k
    tfm demo

Argument parsing lives here and stays light (no TensorFlow import), so
`tfm --help` answers at once; each subcommand imports its module when run.
"""

import argparse
import importlib
import sys

PRESETS = ["tiny", "small", "base", "big"]
MODELS = ["transformer", "seq2seq", "bahdanau", "luong"]

# subcommand -> (module, function, one-line help)
COMMANDS = {
    "train": ("tfm.training", "train_command", "train a model with model.fit (resumes an existing RUN)"),
    "average": ("tfm.training", "average_command", "average the last checkpoints' weights (§6.1)"),
    "translate": ("tfm.decoding", "translate_command", "translate TEXT arguments or standard input"),
    "evaluate": ("tfm.evaluation", "evaluate_command", "BLEU (sacreBLEU and tokenized) and chrF on a split"),
    "export": ("tfm.export", "export_command", "export a SavedModel for TF Serving (string in, string out)"),
    "demo": ("tfm.demo", "demo_command", "train the tiny preset offline, evaluate, translate, export"),
}


def _add_train(p):
    p.add_argument("--preset", choices=PRESETS, default="tiny", help="model size (default: tiny)")
    p.add_argument("--model", choices=MODELS, default="transformer",
                   help="transformer, or an RNN seq2seq baseline without/with attention (default: transformer)")
    p.add_argument("--dataset", default="numbers",
                   help="a generated task (numbers, reverse, copy), multi30k, a TFDS name such as "
                        "wmt14_translate/de-en, or files (with --source-file/--target-file) (default: numbers)")
    p.add_argument("--source-lang", default=None, help="source language, e.g. en")
    p.add_argument("--target-lang", default=None, help="target language, e.g. de")
    p.add_argument("--source-file", default=None, help="source side for --dataset files (plain or .gz)")
    p.add_argument("--target-file", default=None, help="target side for --dataset files (plain or .gz)")
    p.add_argument("--data-dir", default=None, help="download/cache folder (default: $TFM_DATA_DIR or data/cache)")
    p.add_argument("--output", required=True, metavar="RUN",
                   help="run folder: config.json, history.csv, checkpoints/, tokenizer/")
    p.add_argument("--epochs", type=int, default=10, help="epochs to reach (default: 10)")
    p.add_argument("--steps-per-epoch", type=int, default=None, help="batches per epoch (default: one pass)")
    p.add_argument("--strategy", choices=["auto", "default", "mirrored", "multiworker"], default="auto",
                   help="tf.distribute strategy; multiworker reads TF_CONFIG (default: auto)")
    p.add_argument("--mixed-precision", action="store_true",
                   help="mixed_bfloat16 on CPU, mixed_float16 on GPU")
    p.add_argument("--xla", action="store_true", help="compile the train step with XLA (jit_compile)")
    p.add_argument("--tokens-per-batch", type=int, default=None,
                   help="token budget per side per batch (default: the preset's; base 25000 as in §5.1)")
    p.add_argument("--vocab-size", type=int, default=None, help="subword vocabulary size (default: the preset's)")
    p.add_argument("--max-length", type=int, default=None, help="drop pairs longer than this many tokens")
    p.add_argument("--keep-checkpoints", type=int, default=None,
                   help="keep the last K epoch checkpoints (default: the preset's checkpoints_to_average)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override any TransformerConfig field, e.g. --set dropout=0.2 (repeatable)")


def _add_average(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    p.add_argument("--last", type=int, default=5, help="how many of the last checkpoints (default: 5)")
    p.add_argument("--output", default=None, help="checkpoint to write (default: RUN/checkpoints/averaged.weights.h5)")


def _add_decoding(p):
    p.add_argument("--beam-size", type=int, default=4, help="beam size; 1 = greedy (default: 4)")
    p.add_argument("--alpha", type=float, default=0.6, help="length penalty alpha (default: 0.6, §6.1)")
    p.add_argument("--checkpoint", default=None, help="weights file (default: the averaged one, else the latest)")


def _add_translate(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    _add_decoding(p)
    p.add_argument("text", nargs="*", help="sentences to translate (default: read standard input)")


def _add_evaluate(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    p.add_argument("--split", choices=["val", "test"], default="test", help="(default: test)")
    p.add_argument("--limit", type=int, default=None, help="score only the first N sentences")
    _add_decoding(p)


def _add_export(p):
    p.add_argument("--run", required=True, help="run folder made by tfm train")
    p.add_argument("--output", required=True, help="SavedModel folder to write")
    _add_decoding(p)


def _add_demo(p):
    p.add_argument("--output", default="runs/demo", help="run folder (default: runs/demo)")
    p.add_argument("--epochs", type=int, default=None, help="override the demo's epochs")


ADDERS = {"train": _add_train, "average": _add_average, "translate": _add_translate,
          "evaluate": _add_evaluate, "export": _add_export, "demo": _add_demo}


def build_parser():
    parser = argparse.ArgumentParser(
        prog="tfm", description="Attention Is All You Need on Keras 3: train, translate, evaluate, export.",
        epilog="Run 'tfm COMMAND --help' for a command's options.")
    parser.add_argument("--version", action="version", version="tfm 0.1.0")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, _, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        ADDERS[name](p)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    module_name, function_name, _ = COMMANDS[args.command]
    module = importlib.import_module(module_name)
    try:
        return getattr(module, function_name)(args) or 0
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(f"tfm {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
