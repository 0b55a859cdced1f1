"""The `tfm` command: train | translate | evaluate | export | average | demo.

    tfm train --preset tiny --dataset multi30k --data-dir DIR --output runs/m30k --epochs 1
    tfm average --run runs/m30k                 # the run's checkpoints_to_average (5 base, 20 big)
    tfm evaluate --run runs/m30k --split test   # the run's beam size and alpha unless given
    tfm translate --run runs/m30k "A dog runs in the snow."
    tfm export --run runs/m30k --output exported/m30k/1
    tfm demo

Every command handler lives here (their flags in `tfm.cli.arguments`); the library modules take plain
arguments. Parsing imports nothing heavy (no TensorFlow, no Keras), so `tfm --help` and every
`tfm COMMAND --help` answer at once; a handler imports the library when it runs.
Decoding and averaging settings left out come from the run's stored config.
"""

import argparse
import importlib
import logging
import os
import shlex
import signal
import sys
import threading

from tfm.cli.arguments import add_average, add_demo, add_evaluate, add_export, add_train, add_translate, train_recipe
from tfm.cli.exits import describe_os_error, exit_status, file_error, stopped_by, terminate_on_sigterm

logger = logging.getLogger("tfm")


# Handlers ---------------------------------------------------------------------
def _setup_logging():
    # tfm's own progress at INFO; other libraries' (absl's list of renamed SavedModel inputs, TensorFlow's
    # "Assets written to") only from WARNING up, so their warnings still show.
    if not logging.getLogger().handlers and not logger.handlers:
        logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    logger.setLevel(logging.INFO)


def quiet_tensorflow_import():
    """Imports TensorFlow with the C++ start-up lines (absl's "All log messages before
    absl::InitializeLog()...", oneDNN and CUDA notices) kept off stderr.

    TensorFlow 2.21 prints them before `TF_CPP_MIN_LOG_LEVEL` is read, so the environment
    variable cannot silence them; stderr's file descriptor is pointed at /dev/null for the
    import only. `TF_CPP_MIN_LOG_LEVEL=0` keeps them. tools/attention_explorer.py uses it too.

    Example:
        >>> quiet_tensorflow_import()   # TensorFlow is imported already here: nothing to do
    """
    if "tensorflow" in sys.modules or os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2") == "0":
        return
    try:
        sys.stderr.flush()
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError):  # no real file descriptor 2 (e.g. captured)
        return
    try:
        os.dup2(devnull, 2)
        importlib.import_module("tensorflow")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def train_command(args):
    from tfm.runs import read_history
    from tfm.training.trainer import train

    recipe = train_recipe(args)
    try:
        result = train(recipe, output=args.output, epochs=args.epochs, strategy=args.strategy,
                       worker_timeout=args.worker_timeout)
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (see `main`)
        from tfm.runs.resume import epochs_on_disk

        done = epochs_on_disk(os.path.abspath(args.output)) if os.path.isdir(args.output) else 0
        print(f"\ntfm train: {stopped_by(stop)}. {args.output} is intact and keeps {done} finished epoch"
              f"{'' if done == 1 else 's'} (the interrupted epoch is lost); run the same command again, or "
              f"`tfm train --output {shlex.quote(args.output)} --resume --epochs {args.epochs}`, to resume.",
              file=sys.stderr)
        return exit_status(stop)
    except FloatingPointError as error:
        print(f"tfm train: error: {error}", file=sys.stderr)
        return 1
    history = read_history(result.run_dir)
    last = {k: v[-1] for k, v in history.items() if v and k != "epoch"}
    summary = ", ".join(f"{k} {last[k]:.4f}" for k in ("loss", "accuracy", "val_loss", "val_accuracy") if k in last)
    print(f"{result.run_dir}: {result.epochs} epoch{'' if result.epochs == 1 else 's'} finished"
          f"{'; ' + summary if summary else ''}")
    run = shlex.quote(args.output)  # a folder with a space or a quote is copied as one argument
    print(f"next: tfm average --run {run}\nthen: tfm evaluate --run {run}")  # a line each: short, and copied whole
    return 0


def average_command(args):
    from tfm.training.averaging import average_checkpoints

    print(f"wrote {average_checkpoints(args.run, last=args.last, output=args.output)}")
    return 0


def _read_lines():
    """Standard input as a list of lines (bytes, line ends removed); undecodable bytes kept as they are."""
    if sys.stdin is None:
        return []
    if sys.stdin.isatty():
        print("tfm translate: reading sentences from standard input, one per line (Ctrl-D to end)", file=sys.stderr)
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines = lines[:-1]  # the newline that ends the last line
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


TRANSLATE_LINES = 1024  # lines per batch at most: 16 of Translator's batches of 64, sorted by length within it
LINE_WAIT_SECONDS = 0.05  # a batch waits this long for one more line before it is translated without it


def _line_batches(stdin):
    """Standard input's lines in batches, as they arrive (bytes, line ends removed; undecodable bytes kept).

    A thread reads the lines; a batch is given as soon as it holds `TRANSLATE_LINES` lines or no further line
    comes within `LINE_WAIT_SECONDS`: a person typing gets each sentence back while the input stays open, and
    a piped file, whose lines are all there at once, is translated in full batches.
    """
    import queue

    if stdin is None:
        return
    if stdin.isatty():
        print("tfm translate: reading sentences from standard input, one per line (Ctrl-D to end)", file=sys.stderr)
    lines, end = queue.Queue(), object()

    def read():
        try:
            if hasattr(stdin, "buffer"):
                for line in iter(stdin.buffer.readline, b""):
                    lines.put(line)
            else:
                for line in iter(stdin.readline, ""):
                    lines.put(line.encode("utf-8", "surrogateescape"))
        except BaseException as error:  # raised again in the translating thread
            lines.put(error)
        lines.put(end)

    threading.Thread(target=read, name="tfm translate: stdin", daemon=True).start()
    while True:
        line, batch = lines.get(), []  # the next line, however long a person takes to type it
        while line is not end:
            if isinstance(line, BaseException):
                raise line
            line = line[:-1] if line.endswith(b"\n") else line
            batch.append(line[:-1] if line.endswith(b"\r") else line)
            if len(batch) == TRANSLATE_LINES:
                break
            try:
                line = lines.get(timeout=LINE_WAIT_SECONDS)
            except queue.Empty:
                break
        if batch:
            yield batch
        if line is end:
            return


def _decoding_threads():
    """TensorFlow threads for decoding on CPU: ops one thread each, batches side by side (`Translator.workers`).

    The decoder's per-step ops are too small to split across cores; running two batches at once uses
    both (the measurements: docs/results.md, "Measurements quoted by the code")."""
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(max(2, os.cpu_count() or 1))
    except RuntimeError:  # TensorFlow already started (tests call the handlers in-process)
        pass


def _open_run(args):
    """`(translator, run_info)`: the run's `Translator` (the flags' checkpoint, beam and alpha, else the run's) and
    its config.json with `run_dir` and `checkpoint` (the weights file read)."""
    from tfm import runs
    from tfm.decoding import Translator

    path = runs.weights_path(args.run, args.checkpoint or "auto")
    translator = Translator.from_run(args.run, checkpoint=path, beam_size=args.beam_size, alpha=args.alpha)
    return translator, {**runs.read_run_config(args.run), "run_dir": os.path.abspath(args.run), "checkpoint": path}


def translate_command(args):
    _decoding_threads()

    # Arguments and --strict's whole input are one batch; otherwise standard input is translated as it arrives.
    batches = iter([list(args.text)] if args.text else [_read_lines()] if args.strict else _line_batches(sys.stdin))
    texts = next(batches, [])
    if not texts:
        print("tfm translate: nothing to translate: give sentences as arguments or on standard input",
              file=sys.stderr)
        return 1
    translator, run_info = _open_run(args)
    refused, first = 0, 0  # first: the index of the batch's first line in the whole input
    while texts:
        refused += _translate_batch(args, translator, run_info, texts, first)
        if refused and args.strict:
            return 1
        first += len(texts)
        texts = next(batches, [])
    return 1 if refused else 0


class _TruncatedInputs(logging.Filter):
    """Keeps the Translator's truncation warning from the log (its `truncated_inputs`, indices into one call's
    sentences), so that `tfm translate` says it once per batch by line number."""

    def __init__(self):
        super().__init__()
        self.indices = []

    def filter(self, record):
        indices = getattr(record, "truncated_inputs", None)
        if indices is None:
            return True
        self.indices.extend(indices)
        return False


def _translate_batch(args, translator, run_info, texts, first):
    """Translates one batch of `tfm translate`'s input and prints it (flushed), line for line, an empty line
    for each refused one, which is named on stderr (lines counted from `first` + 1), as is a line longer than the
    model takes; with --strict, a batch holding a refused line is not translated. Returns the number of refused
    lines."""
    from tfm.data.preprocess import detokenize, run_preprocess
    from tfm.data.preprocess import preprocess as prepare
    from tfm.decoding import input_rule

    bad = translator.invalid(texts)
    method, source_lang, target_lang = run_preprocess(run_info)
    if method is not None:  # the run learned from lowercased, Moses-tokenized text: prepare the input the same way
        # after the input rule (tfm.decoding.text_ops: whitespace only separates words), which Translator applies again
        texts = [text if i in bad else prepare([input_rule.normalize(input_rule.as_bytes(text).decode("utf-8"))],
                                               source_lang, method)[0] for i, text in enumerate(texts)]
    for index in bad:  # counted from 1, as an editor counts lines
        where = f"line {first + index + 1} of standard input" if not args.text else f"argument {index + 1}"
        print(f"tfm translate: {where} {input_rule.problem(texts[index])}"
              f"{'' if args.strict else '; an empty line is printed in its place'}", file=sys.stderr, flush=True)
    if bad and args.strict:
        print("tfm translate: error: nothing translated (--strict)", file=sys.stderr)
        return len(bad)
    cut = _TruncatedInputs()  # the Translator's warning names list indices of this batch: said here by line
    logging.getLogger("tfm.decoding").addFilter(cut)
    try:
        translations = translator.translate(texts, on_invalid="empty")
    finally:
        logging.getLogger("tfm.decoding").removeFilter(cut)
    if cut.indices:
        numbers = [i + 1 + (0 if args.text else first) for i in cut.indices]
        many, most = len(numbers) > 1, translator.decodable.max_source_length
        listed = ", ".join(map(str, numbers[:5])) + (f" and {len(numbers) - 5} more" if len(numbers) > 5 else "")
        print(f"tfm translate: {'argument' if args.text else 'line'}{'s' if many else ''} {listed}"
              f"{'' if args.text else ' of standard input'} {'are' if many else 'is'} longer than the model's {most} "
              f"subwords: translated from {'their' if many else 'its'} first {most}", file=sys.stderr, flush=True)
    for line in translations:
        print(detokenize([line], target_lang, method)[0] if method and line else line)
    sys.stdout.flush()  # the answer shows now, while the input is still open
    return len(bad)


def evaluate_command(args):
    from tfm.data import PARSING_TASKS
    from tfm.decoding import bleu

    _decoding_threads()

    translator, run_info = _open_run(args)
    model, tokenizer = translator.model, translator.tokenizer
    bleu.validate_results_folder(run_info["run_dir"])  # RUN/hyps/ refused now, not after decoding
    if run_info["data"]["dataset"] in PARSING_TASKS:
        return _evaluate_parsing(args, translator, run_info)
    sources, references = bleu.split_pairs(run_info, args.split, limit=args.limit)
    data = run_info["data"]
    hypotheses, scores = bleu.evaluate(model, tokenizer, sources, references, beam_size=translator.beam_size,
                                             alpha=translator.alpha, preprocess=data.get("preprocess"),
                                             source_lang=data.get("source_lang"), target_lang=data.get("target_lang"))
    scores.update(split=args.split, dataset=data["dataset"], source_lang=data.get("source_lang"),
                  target_lang=data.get("target_lang"), checkpoint=run_info.get("checkpoint"))
    print(f"{data['dataset']} {args.split}: {len(hypotheses)} sentences, beam {scores['beam_size']}, "
          f"alpha {scores['alpha']}, {scores['seconds']:.1f} s")
    print(bleu.format_scores(scores))
    saved = _save_results(run_info, args, hypotheses, scores)
    if saved is None:
        return 1
    print(f"hypotheses: {saved[0]}\nscores:     {saved[1]}")
    return 0


def _save_results(run_info, args, hypotheses, scores):
    """`bleu.write_results`, called once the scores are printed (a folder that refuses the files loses
    no scores); None, after saying why, when they cannot be written."""
    from tfm.decoding import bleu

    try:
        return bleu.write_results(run_info["run_dir"], args.split, hypotheses, scores, limit=args.limit)
    except OSError as error:
        saved = getattr(error, "saved", [])
        what = (f"the hypotheses are saved ({saved[0]}), but not the scores above" if saved
                else "the scores above are not saved, nor the hypotheses")
        print(f"tfm evaluate: error: {what}: {describe_os_error(error)}; fix that and run the same command again to "
              f"save {'the scores' if saved else 'both'}", file=sys.stderr)
        return None


def _evaluate_parsing(args, translator, run_info):
    """`tfm evaluate` on a parsing run: labeled bracket F1 (EVALB, COLLINS.prm), beside Table 4."""
    from tfm import parsing

    trees, scores = parsing.evaluate_run(translator.model, translator.tokenizer, run_info, args.split,
                                         limit=args.limit, beam_size=translator.beam_size, alpha=translator.alpha,
                                         constrained=not args.unconstrained,
                                         max_extra_length=translator.max_extra_length)
    print(f"{scores['dataset']} {args.split}: {scores['sentences']} sentences, beam {scores['beam_size']}, alpha "
          f"{scores['alpha']}, {'constrained' if scores['constrained'] else 'unconstrained'} search, "
          f"{scores['seconds']:.1f} s; {scores['repaired']} outputs repaired "
          f"({100 * scores['repair_rate']:.1f}%)")
    print(parsing.parse_report(scores, name=f"{os.path.basename(run_info['run_dir'])} (NLTK sample)",
                               repair_rate=scores["repair_rate"]))
    saved = _save_results(run_info, args, [parsing.one_line(tree) for tree in trees], scores)
    if saved is None:
        return 1
    print(f"trees:  {saved[0]}\nscores: {saved[1]}")
    return 0


def export_command(args):
    import json

    from tfm.serving.metadata import METADATA_FILE
    from tfm.serving.saved_model import export_saved_model

    refusal = _export_flags_refused(args)
    if refusal is not None:  # a flag the chosen format would ignore: a usage error, as argparse's (exit 2)
        print(f"tfm export: error: {refusal}", file=sys.stderr)
        return 2
    if args.format == "ctranslate2":
        return _export_ctranslate2(args)
    path = export_saved_model(args.run, args.output, beam_size=args.beam_size, alpha=args.alpha,
                              checkpoint=args.checkpoint, signatures=args.signatures,
                              alignment_layer=args.alignment_layer, overwrite=args.overwrite,
                              quantize=None if args.quantization == "float32" else args.quantization,
                              jit_compile=args.xla, early_finish=args.early_finish)
    with open(os.path.join(path, METADATA_FILE)) as f:
        metadata = json.load(f)
    extra = "".join(f"; {name}: text -> {', '.join(outputs)}" for name, outputs in metadata["signatures"].items()
                    if name != "serving_default")
    options = (f", {metadata['quantize']} weights" if metadata.get("quantize") else "") + (
        ", XLA-compiled search" if metadata.get("jit_compile") else "") + (
        ", early finish" if metadata.get("early_finish") else "")
    print(f"exported {args.run} to {path} (serving_default: tf.string text (B,) -> "
          f"{', '.join(metadata['outputs'])}{extra}; "
          f"beam {metadata['beam_size']}, alpha {metadata['alpha']}{options})")
    print(f"check it: saved_model_cli show --dir {path} --all")
    return 0


def _export_flags_refused(args):
    """The one-line reason `tfm export` refuses a flag that its `--format` (or its other flags) would ignore, or
    None: the export a user asked for is made as asked, or not at all."""
    savedmodel = args.format == "savedmodel"
    if savedmodel and args.quantization not in (None, "float32", "int8", "bfloat16"):
        return (f"--quantize {args.quantization}: a SavedModel takes int8 or bfloat16 (or float32); "
                f"{args.quantization} is for --format ctranslate2")
    if not savedmodel and args.xla:
        return "--xla is for --format savedmodel (CTranslate2 compiles nothing)"
    if not savedmodel and args.early_finish:
        return "--early-finish is for --format savedmodel (CTranslate2's translator stops early by its own rule)"
    if not savedmodel and args.signatures:
        return (f"--signatures {' '.join(args.signatures)} is for --format savedmodel (a CTranslate2 export has no "
                "signatures; its translator's translate_with_scores gives the scores)")
    if args.alignment_layer != -1 and "alignment" not in args.signatures:  # -1 is the default: nothing asked
        return (f"--alignment-layer {args.alignment_layer} is for --format savedmodel --signatures alignment (the "
                "decoder layer that signature reads)")
    return None


def _export_ctranslate2(args):
    from tfm.serving.ctranslate2 import export_ctranslate2

    if args.beam_size is not None or args.alpha is not None:
        logger.warning("--beam-size/--alpha are chosen at translation time with CTranslate2; the run's are recorded")
    try:
        path = export_ctranslate2(args.run, args.output, quantization=args.quantization, checkpoint=args.checkpoint,
                                  overwrite=args.overwrite)
    except ImportError as error:  # ctranslate2 is an optional extra
        raise ValueError(str(error)) from None
    print(f"exported {args.run} to {path} (CTranslate2, {args.quantization or 'float32'} weights)")
    print(f"use it: tfm.CTranslate2Translator({path!r})(['A sentence.'])")
    return 0


def demo_command(args):
    from tfm.cli.demo import run_demo

    return run_demo(args.output, epochs=args.epochs)


# subcommand -> (handler, argument adder, one-line help)
COMMANDS = {
    "train": (train_command, add_train, "train a model with model.fit (resumes an existing RUN)"),
    "average": (average_command, add_average, "average the last checkpoints' weights (§6.1)"),
    "translate": (translate_command, add_translate, "translate TEXT arguments or standard input"),
    "evaluate": (evaluate_command, add_evaluate, "BLEU (sacreBLEU and tokenized) and chrF on a split; hypotheses "
                 "and scores to RUN/hyps/<split>.beam<K>.alpha<A>.<weights>.txt/.json"),
    "export": (export_command, add_export, "export a SavedModel for TF Serving (string in, string out)"),
    "demo": (demo_command, add_demo, "train the tiny preset offline, evaluate, translate, export"),
}


def build_parser():
    from tfm import __version__

    parser = argparse.ArgumentParser(
        prog="tfm", description="Attention Is All You Need on Keras 3: train, translate, evaluate, export.",
        epilog="Run 'tfm COMMAND --help' for a command's options.")
    parser.add_argument("--version", action="version", version=f"tfm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, add_arguments, help_text) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    _setup_logging()
    handler = COMMANDS[args.command][0]
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminate_on_sigterm) if main_thread else None
    try:
        quiet_tensorflow_import()
        return handler(args) or 0
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(f"tfm {args.command}: error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # a file that cannot be written, a run folder in use, a cluster that never came
        lead = "\n" if args.command == "train" else ""  # after the progress bar's unfinished line
        print(f"{lead}tfm {args.command}: error: {describe_os_error(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as stop:
        print(f"\ntfm {args.command}: {stopped_by(stop)}", file=sys.stderr)
        return exit_status(stop)
    except Exception as error:
        message = file_error(error)
        if message is None:
            raise
        print(f"tfm {args.command}: error: {message}", file=sys.stderr)
        return 1
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


if __name__ == "__main__":
    sys.exit(main())
