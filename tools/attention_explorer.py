"""The attention explorer's data (docs/explorer.md): every attention weight of a trained run, for a few sentences.

    make explorer RUN=runs/08_multi30k_d256                      # notebook 08's run -> docs/explorer/attention_data.js
    .venv/bin/python tools/attention_explorer.py runs/08_multi30k_d256 [--output FILE] [--data-dir DIR]
    .venv/bin/python tools/attention_explorer.py RUN --sentence "three hundred twenty one" --sentence "..."

The run is loaded with `Translator.from_run` (its averaged weights when it has them, its beam size and α,
§6.1), each sentence is prepared as the run's training text was (notebook 08's `m30k_small` lowercases and
Moses-tokenizes), and `Translator.attention` translates it and returns the model's own attention weights
for the output its beam search chose: the encoder's self-attention, the decoder's masked self-attention and
the encoder-decoder (cross-) attention, every layer and every head (§3.2.2). Nothing is recomputed here:
each weight is written as `Translator.attention` returns it, rounded to `DECIMALS` decimals and stored as an
integer count of 10^-DECIMALS (`0.8731` -> `8731`), rows NOT renormalised. So a row of the file sums to 1
within the rounding (at most 0.5 * 10^-DECIMALS per key).

The file is JavaScript, one statement assigning the data to `window.TFM_ATTENTION_DATA`: a page opened from
the disk (file://) may load a script beside it but not fetch() a JSON file. Its layout:

    {"format": 1, "decimals": 4, "scale": 10000,
     "provenance": {"run": "08_multi30k_d256", "preset": "m30k_small", "epochs": 24, "weights": "...",
                    "beam_size": 4, "alpha": 0.6, "preprocess": "moses_lc", "date": "2026-11-28",
                    "tfm_version": "0.1.0"},
     "layers": {"encoder": 3, "decoder": 3}, "heads": 4,
     "sentences": [{"index": 42, "why": "...", "why_ko": "...", "source": "People sit inside a train.",
                    "prepared": "...", "reference": "...", "translation": "...",
                    "tokens": {"source": [...], "output": [..., "[END]"], "decoder_input": ["[START]", ...]},
                    "attention": {"encoder_self_attention": [layer][head][query][key],    # source x source
                                  "decoder_self_attention": [layer][head][query][key],    # output x decoder_input
                                  "cross_attention": [layer][head][query][key]}}]}       # output x source

Row `i` of the decoder's maps is the step that wrote `tokens.output[i]` (the last row wrote END), reading the
decoder inputs `tokens.decoder_input` (START, then the outputs before it). No machine path is written: the
run is named by its folder's name only, and the tool refuses to write a file that holds the run's full path.

The default sentences are `DEFAULT_SENTENCES`: ten of Multi30k's test split (`test_2016_flickr`), chosen by
index for variety, each with the reason it is there. tools/make_course.py runs this tool after notebook 08
when the notebook's run folder exists.

The tool refuses, in one line on stderr and with exit status 2, before it loads a model or writes anything: a
path that is missing, a file, or a folder that is not a tfm run; and a run whose corpus or direction the page's
notes do not describe (they describe Multi30k, English into German: `DESCRIBED`) when it would write the page's
own file or translate the default (Multi30k) sentences. Any run may be looked at with `--sentence ... --output
ELSEWHERE`.
"""

import argparse
import datetime
import gzip
import json
import math
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "docs" / "explorer" / "attention_data.js"
GLOBAL_NAME = "TFM_ATTENTION_DATA"
FORMAT = 1
DECIMALS = 4
KINDS = ("encoder_self_attention", "decoder_self_attention", "cross_attention")
MAX_BYTES = 1_500_000  # the budget of the whole file
SOURCE_LANG, TARGET_LANG = "en", "de"
# The corpus and direction the page's notes (docs/explorer.md, docs/ko/explorer.md) and DEFAULT_SENTENCES are about.
DESCRIBED = ("multi30k", SOURCE_LANG, TARGET_LANG)

# (index in Multi30k's test split, why it is here, the same in Korean for docs/ko/explorer.md). The reasons are the
# sentences' own (length, word order, rare words); "gets wrong" was checked on the run the committed data comes from
# and on notebook 08's published copy (docs/course/08_translate_multi30k.ipynb, section 5). `--sentence` replaces
# them all.
DEFAULT_SENTENCES = (
    (42, "short (five words), and German keeps the English word order: an aligning head draws a diagonal",
     "짧고(다섯 단어), 독일어가 영어의 어순을 그대로 따릅니다. 정렬하는 헤드는 대각선을 그립니다"),
    (4, "short; two English words (are fixing) become one German verb (reparieren)",
     "짧은 문장. 영어 두 단어(are fixing)가 독일어 동사 하나(reparieren)가 됩니다"),
    (66, "two English words become one German compound (sandy beach: sandstrand)",
     "영어 두 단어가 독일어 합성어 하나가 됩니다(sandy beach: sandstrand)"),
    (1, "a rare name, Boston Terrier, cut into subwords the model has seldom seen",
     "드문 이름 Boston Terrier가 모델이 거의 보지 못한 서브워드로 쪼개집니다"),
    (6, "a rare word the model gets wrong: it has learned no German word for igloo (Iglu) and copies the English "
        "subwords",
     "모델이 틀리는 드문 단어: igloo에 해당하는 독일어 단어(Iglu)를 배우지 못해 영어 서브워드를 그대로 베낍니다"),
    (24, "German puts the verb of the second clause last (takes her picture: ihr foto macht): a crossing, not a "
         "diagonal",
     "독일어는 두 번째 절의 동사를 끝에 둡니다(takes her picture: ihr foto macht). 대각선이 아니라 교차가 생깁니다"),
    (51, "a rare word (wakeboarder), and a passive whose German verbs come last (being towed: here aufgehoben "
         "wird, lifted; the reference has gezogen wird)",
     "드문 단어(wakeboarder)와, 독일어에서 동사가 끝에 오는 수동태(being towed: 여기서는 aufgehoben wird, "
     "들어 올려지다. 참조 번역은 gezogen wird)"),
    (0, "a misspelt source (starring for staring, cut into star + ring): the model writes starrt (stares) all the "
        "same",
     "철자가 틀린 소스(staring 대신 starring, star + ring으로 잘립니다): 모델은 그래도 starrt(응시하다)라고 씁니다"),
    (7, "long (27 words), with a baseball term (home plate) the model misses",
     "긴 문장(27단어)이고, 모델이 놓치는 야구 용어(home plate)가 있습니다"),
    (959, "the longest sentence of the test split (32 words, 33 subwords)",
     "테스트 분할에서 가장 긴 문장(32단어, 서브워드 33개)"),
)


# --- The data -------------------------------------------------------------------------------------------------

def rounded(weights, decimals=DECIMALS):
    """A float array of weights as nested lists of integers counting 10^-decimals (rounding only).

    Example:
        >>> rounded([[0.12344, 0.87656]], decimals=4)
        [[1234, 8766]]
    """
    import numpy as np

    scale = 10 ** decimals
    return np.rint(np.asarray(weights, dtype=np.float64) * scale).astype(np.int64).tolist()


def sentence_entry(translator, sentence, prepared=None, decimals=DECIMALS):
    """One sentence of the data: its tokens, the beam's translation and every attention map `translator.attention`
    returns for it, rounded.

    Args:
        translator: a `tfm.decoding.Translator`.
        sentence: str. The sentence as the reader sees it.
        prepared: str or None. The sentence as the model reads it (the run's preprocessing); None: `sentence`.
        decimals: int. Decimals kept.

    Returns:
        dict: `source`, `prepared`, `translation`, `tokens` (`source`, `output`, `decoder_input`) and
        `attention` (the three kinds, `[layer][head][query][key]` integers counting 10^-decimals; §3.2.2's heads).

    Example:
        entry = sentence_entry(Translator.from_run("runs/08_multi30k_d256"), "Two dogs.", "two dogs .")
        entry["attention"]["cross_attention"][2][0]   # decoder layer 3, head 0: one row per output token
    """
    import tensorflow as tf

    from tfm.special_tokens import START_ID

    prepared = sentence if prepared is None else prepared
    maps = translator.attention(prepared)
    start = translator.tokenizer.id_to_token(tf.constant([START_ID], tf.int32)).numpy()[0].decode("utf-8", "replace")
    output = list(maps["target_tokens"])
    entry = {
        "source": sentence, "prepared": prepared, "translation": maps["translation"],
        "tokens": {"source": list(maps["source_tokens"]), "output": output,
                   "decoder_input": [start] + output[:-1]},
        "attention": {kind: [rounded(layer, decimals) for layer in maps[kind]] for kind in KINDS},
    }
    s, t = len(entry["tokens"]["source"]), len(output)
    shapes = {"encoder_self_attention": (s, s), "decoder_self_attention": (t, t), "cross_attention": (t, s)}
    for kind, shape in shapes.items():
        for layer, weights in enumerate(maps[kind]):
            if tuple(weights.shape[1:]) != shape:
                raise ValueError(f"{kind} layer {layer} has shape {tuple(weights.shape)} for {s} source and {t} output "
                                 f"tokens of {prepared!r}: expected (heads, {shape[0]}, {shape[1]})")
    return entry


def explorer_data(translator, sentences, provenance=None, decimals=DECIMALS):
    """The explorer's whole data for `sentences`.

    Args:
        translator: a `tfm.decoding.Translator`.
        sentences: list of dicts with `source` (str) and optionally `prepared` (str, as the model reads it),
            `index`, `why`, `why_ko` (the reason in Korean), `reference`, which are copied into the data as they are.
        provenance: dict or None. Where the weights come from (`provenance`).
        decimals: int. Decimals kept (each weight is stored as an integer count of 10^-decimals).

    Returns:
        dict: the layout of this module's docstring.

    Example:
        >>> import tfm
        >>> from tfm.data import number_words_pairs, train_tokenizer
        >>> from tfm.decoding import Translator
        >>> sources, targets = number_words_pairs("train", max_number=2000)
        >>> model = tfm.Transformer.from_preset("tiny", vocab_size=70, num_layers=1)
        >>> translator = Translator(model, train_tokenizer(sources + targets, vocab_size=70), beam_size=2)
        >>> data = explorer_data(translator, [{"source": "two"}])
        >>> data["heads"], data["layers"], sorted(data["sentences"][0]["attention"])
        (4, {'encoder': 1, 'decoder': 1}, ['cross_attention', 'decoder_self_attention', 'encoder_self_attention'])
    """
    entries = []
    for item in sentences:
        entry = sentence_entry(translator, item["source"], item.get("prepared"), decimals)
        entries.append({key: item[key] for key in ("index", "why", "why_ko", "reference") if key in item} | entry)
    first = entries[0]["attention"] if entries else {kind: [] for kind in KINDS}
    return {
        "format": FORMAT, "decimals": decimals, "scale": 10 ** decimals, "provenance": provenance or {},
        "layers": {"encoder": len(first["encoder_self_attention"]), "decoder": len(first["cross_attention"])},
        "heads": len(first["cross_attention"][0]) if entries else 0,
        "sentences": entries,
    }


def weights(data, sentence, kind, layer, head):
    """One map of the data as floats (the stored integers / scale): `[query][key]`.

    Example:
        >>> data = {"scale": 10000, "sentences": [{"attention": {"cross_attention": [[[[2500, 7500]]]]}}]}
        >>> weights(data, 0, "cross_attention", 0, 0)
        [[0.25, 0.75]]
    """
    return [[value / data["scale"] for value in row]
            for row in data["sentences"][sentence]["attention"][kind][layer][head]]


# --- Where the weights come from --------------------------------------------------------------------------

def run_recipe(run_dir):
    """The run's `tfm.config.Recipe`, read from its config.json (any format tfm reads).

    Example:
        run_recipe("runs/08_multi30k_d256").data.preprocess   # 'moses_lc'
    """
    import tfm.runs
    from tfm.config import Recipe

    return Recipe.from_record(tfm.runs.read_run_config(run_dir))


def preset_name(model_config):
    """The name of the preset whose model is `model_config`, or None.

    Compared on what a weight means, the config's `architecture()`: the fields a trained model may change (`free`:
    dropout, the lengths it takes) may differ.

    Example:
        >>> import dataclasses
        >>> from tfm.config import TransformerConfig
        >>> preset_name(dataclasses.replace(TransformerConfig.m30k_small(), dropout=0.1)), preset_name(
        ...     dataclasses.replace(TransformerConfig.m30k_small(), num_heads=8))
        ('m30k_small', None)
    """
    cls = type(model_config)
    for name in getattr(cls, "PRESETS", ()):
        if getattr(cls, name)().architecture() == model_config.architecture():
            return name
    return None


def provenance(run_dir, translator, checkpoint="auto"):
    """Where the weights come from: the run's folder name (never its path), its preset, epochs, the weights
    loaded (`checkpoint` by `tfm.runs.weights_path`'s rule, as `Translator.from_run` reads it), the search
    settings (§6.1), the text preparation, today's date (UTC) and tfm's version.

    Example:
        provenance("runs/08_multi30k_d256", translator)
        # {'run': '08_multi30k_d256', 'preset': 'm30k_small', 'epochs': 24, 'weights': 'averaged.weights.h5', ...}
    """
    import tfm
    import tfm.runs

    recipe = run_recipe(run_dir)
    history = tfm.runs.read_history(run_dir)
    return {
        "run": os.path.basename(os.path.normpath(run_dir)),
        "preset": preset_name(recipe.model),
        "epochs": len(history.get("epoch", [])) if history else None,
        "weights": os.path.basename(tfm.runs.weights_path(run_dir, checkpoint)),
        "beam_size": int(translator.beam_size), "alpha": float(translator.alpha),
        "preprocess": recipe.data.preprocess,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
        "tfm_version": tfm.__version__,
    }


def default_sentences(data_dir=None, chosen=DEFAULT_SENTENCES):
    """`DEFAULT_SENTENCES` read from Multi30k's test split (the data cache; nothing is downloaded): list of
    dicts with `index`, `why`, `why_ko`, `source` and `reference`.

    Example:
        default_sentences("/data/cache")[0]["source"]   # 'People sit inside a train.'
    """
    import tfm.data

    lines = {}
    for lang in (SOURCE_LANG, TARGET_LANG):
        path = tfm.data.multi30k_file("test", lang, data_dir=data_dir, download=False)
        with gzip.open(path, "rt", encoding="utf-8") as f:
            lines[lang] = f.read().splitlines()
    return [{"index": index, "why": why, "why_ko": why_ko, "source": lines[SOURCE_LANG][index].strip(),
             "reference": lines[TARGET_LANG][index].strip()} for index, why, why_ko in chosen]


def prepare(sentences, preprocess, lang=SOURCE_LANG):
    """Each sentence dict with `prepared`: its source as the run's training text was prepared.

    Example:
        >>> prepare([{"source": "Two dogs, running."}], "moses_lc")
        [{'source': 'Two dogs, running.', 'prepared': 'two dogs , running .'}]
        >>> prepare([{"source": "Two dogs."}], None)[0]["prepared"]
        'Two dogs.'
    """
    from tfm.data.preprocess import preprocess as prepare_text

    texts = prepare_text([item["source"] for item in sentences], lang, preprocess)
    return [{**item, "prepared": text} for item, text in zip(sentences, texts)]


# --- What the tool refuses ---------------------------------------------------------------------------------

class Refused(ValueError):
    """The tool's arguments name no run it can show: one line says why (`main` prints it and exits with 2)."""


def direction(data_config):
    """`(dataset, source language, target language)` of a run's `DataConfig`, its corpus' default direction filled
    in for Multi30k (None = English into German, as `tfm.data.load_dataset` reads it); None where the corpus has none.

    Example:
        >>> from tfm.config import DataConfig
        >>> direction(DataConfig(dataset="multi30k")), direction(DataConfig(dataset="multi30k", target_lang="fr"))
        (('multi30k', 'en', 'de'), ('multi30k', 'en', 'fr'))
        >>> direction(DataConfig(dataset="numbers"))
        ('numbers', None, None)
    """
    source, target = data_config.source_lang, data_config.target_lang
    if data_config.dataset == "multi30k":
        source = source or ("de" if target == "en" else "en")
        target = target or ("en" if source == "de" else "de")
    return data_config.dataset, source, target


def check_run(run_dir, output=OUTPUT, sentences=None):
    """The run's recipe, or `Refused` naming the problem: `run_dir` missing, a file, or not a tfm run folder (or its
    config.json damaged); or a run whose corpus or direction is not `DESCRIBED` while `output` is the page's own
    file or no `sentences` are given (the default ones are Multi30k's English test sentences). Reads config.json
    only: no model is built and nothing is written.

    Example:
        >>> check_run("no/such/run")
        Traceback (most recent call last):
        attention_explorer.Refused: run folder 'no/such/run' does not exist (make one with tfm train)
    """
    import tfm.runs.files

    try:
        # The folder first, without TensorFlow (which reading a run's config.json imports): an answer in a moment.
        tfm.runs.files.validate_output_path(run_dir, "run folder")
        if not os.path.exists(run_dir):
            raise FileNotFoundError(f"run folder {run_dir!r} does not exist (make one with tfm train)")
        if not os.path.isfile(os.path.join(run_dir, tfm.runs.files.CONFIG_FILE)):
            raise FileNotFoundError(f"{run_dir!r} is not a tfm run folder: {tfm.runs.files.CONFIG_FILE} not found "
                                    "(make one with tfm train)")
        from tfm.cli.commands import quiet_tensorflow_import

        quiet_tensorflow_import()
        recipe = run_recipe(run_dir)
    except (FileNotFoundError, NotADirectoryError, ValueError) as error:
        raise Refused(" ".join(str(error).split())) from None
    found = direction(recipe.data)
    page_file = pathlib.Path(output).resolve() == OUTPUT.resolve()
    if found != DESCRIBED and (page_file or not sentences):
        dataset, source, target = found
        languages = f" ({source} -> {target})" if source or target else ""
        why = ("the explorer page's notes describe" if page_file
               else "the default sentences are English ones of")
        raise Refused(f"{os.path.basename(os.path.normpath(run_dir))!r} was trained on {dataset}{languages}, but {why} "
                      f"{DESCRIBED[0]} ({DESCRIBED[1]} -> {DESCRIBED[2]}): give a run of notebook 08's recipe, or "
                      "look at this one with --sentence TEXT --output ANOTHER_FILE")
    return recipe


# --- The file -------------------------------------------------------------------------------------------

def to_script(data):
    """The data as the JavaScript file the page loads: `window.TFM_ATTENTION_DATA = {...};` (compact JSON).

    Example:
        >>> to_script({"format": 1})
        'window.TFM_ATTENTION_DATA = {"format":1};\\n'
    """
    return f"window.{GLOBAL_NAME} = " + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + ";\n"


def from_script(text):
    """`to_script`'s text back to the data.

    Example:
        >>> from_script(to_script({"format": 1, "sentences": []}))
        {'format': 1, 'sentences': []}
    """
    prefix = f"window.{GLOBAL_NAME} = "
    if not text.startswith(prefix) or not text.rstrip().endswith(";"):
        raise ValueError(f"not an attention explorer data file: it does not start with {prefix!r} and end with ';'")
    return json.loads(text[len(prefix):].rstrip()[:-1])


def row_sum_problems(data, tolerance=0.01):
    """Rows of the data whose weights do not sum to 1 within `tolerance`: list of str (empty when all do).

    Example:
        >>> row_sum_problems({"scale": 10, "sentences": [{"attention": {"cross_attention": [[[[3, 7], [4, 4]]]]}}]})
        ['sentence 0 cross_attention layer 0 head 0 query 1: 0.8']
    """
    problems = []
    for s, sentence in enumerate(data["sentences"]):
        for kind, layers in sentence["attention"].items():
            for layer, heads in enumerate(layers):
                for head, rows in enumerate(heads):
                    for query, row in enumerate(rows):
                        total = sum(row) / data["scale"]
                        if not math.isclose(total, 1.0, abs_tol=tolerance):
                            problems.append(f"sentence {s} {kind} layer {layer} head {head} query {query}: {total:.4g}")
    return problems


def write(data, path=OUTPUT, max_bytes=MAX_BYTES, forbidden=()):
    """Writes the data file; refuses (ValueError, nothing written) a file over `max_bytes`, one whose rows do not
    sum to 1 within 0.01, or one that holds any of the `forbidden` strings (machine paths). Returns its size.

    Example:
        >>> import pathlib, tempfile
        >>> data = {"scale": 10, "sentences": [{"attention": {"cross_attention": [[[[3, 7]]]]}}]}
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "data.js"
        >>> write(data, path) == path.stat().st_size
        True
        >>> write(data, path, max_bytes=10)
        Traceback (most recent call last):
        ValueError: the data is 102 bytes, over the budget of 10: fewer or shorter sentences, or fewer decimals
    """
    text = to_script(data)
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise ValueError(f"the data is {size:,} bytes, over the budget of {max_bytes:,}: fewer or shorter sentences, "
                         "or fewer decimals")
    found = [name for name in forbidden if name and name in text]
    if found:
        raise ValueError(f"the data would name a machine path ({found[0]!r}); it names the run by its folder only")
    problems = row_sum_problems(data)
    if problems:
        raise ValueError(f"{len(problems)} attention rows do not sum to 1: {problems[:3]}")
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return size


def build(run_dir, output=OUTPUT, sentences=None, data_dir=None, decimals=DECIMALS, checkpoint="auto"):
    """Loads the run (`checkpoint` as `Translator.from_run` takes it; "auto": its averaged weights when it has
    them, else its latest epoch's), translates the sentences (default: `DEFAULT_SENTENCES` of Multi30k's test
    split) and writes the data file. Returns the data. Raises `Refused` (`check_run`'s, or the default sentences
    not in the data cache) before it loads the model.

    Example:
        build("runs/08_multi30k_d256")                                    # -> docs/explorer/attention_data.js
        build("runs/numbers", "/tmp/data.js", ["two hundred"], checkpoint="latest")
    """
    data_config = check_run(run_dir, output, sentences).data
    run_dir = os.path.abspath(run_dir)
    if sentences:
        chosen = [{"source": s} for s in sentences]
    else:
        try:
            chosen = default_sentences(data_dir)
        except FileNotFoundError as error:
            raise Refused(" ".join(str(error).split())) from None

    from tfm.decoding import Translator

    translator = Translator.from_run(run_dir, checkpoint=checkpoint)
    data = explorer_data(translator, prepare(chosen, data_config.preprocess, data_config.source_lang),
                         provenance(run_dir, translator, checkpoint), decimals)
    forbidden = {run_dir, str(ROOT), os.path.expanduser("~") if os.path.expanduser("~") != "/" else ""}
    write(data, output, forbidden=forbidden)
    return data


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a trained run folder (notebook 08's: runs/08_multi30k_d256)")
    parser.add_argument("--output", default=str(OUTPUT), help="the data file (default docs/explorer/attention_data.js)")
    parser.add_argument("--sentence", action="append",
                        help="a sentence to show (repeat it); default: the ten chosen Multi30k test sentences")
    parser.add_argument("--data-dir", help="the data cache holding multi30k/ (default: $TFM_DATA_DIR, else data/cache)")
    parser.add_argument("--decimals", type=int, default=DECIMALS, help=f"decimals kept (default {DECIMALS})")
    parser.add_argument("--checkpoint", default="auto",
                        help="which weights, as `tfm translate --checkpoint` takes them (default auto: the run's "
                             "averaged weights when it has them, else its latest epoch's)")
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        data = build(args.run, args.output, args.sentence, args.data_dir, args.decimals, args.checkpoint)
    except Refused as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    size = pathlib.Path(args.output).stat().st_size
    inside = pathlib.Path(args.output).resolve().is_relative_to(ROOT)
    where = os.path.relpath(args.output, ROOT) if inside else args.output
    print(f"{where}: {len(data['sentences'])} sentences, {data['layers']['encoder']}+{data['layers']['decoder']} "
          f"layers x {data['heads']} heads, {size / 1e3:,.0f} kB")
    for item in data["sentences"]:
        print(f"  [{item.get('index', '-')}] {item['source']}\n      -> {item['translation']}"
              + (f"\n      reference {item['reference']}" if item.get("reference") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
