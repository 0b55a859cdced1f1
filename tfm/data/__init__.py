"""Data: corpora as `(source, target)` string pairs, a shared subword tokenizer, and token-budget batches.

    pairs = tfm.data.load_dataset("multi30k", "train", source_lang="en", target_lang="de")
    tokenizer = tfm.data.train_tokenizer(pairs, vocab_size=8000, folder="runs/x/tokenizer")
    batches = tfm.data.bucket_by_token_budget(pairs, tokenizer, tokens_per_batch=4096, shuffle=True, seed=0)
    print(tfm.data.length_report(pairs, tokenizer, max_length=256))   # what the batches leave out
    model.fit(batches, ...)  # ((source_ids, target_in), target_out)

Reserved ids (`tfm.special_tokens`): 0 [PAD], 1 [UNK], 2 [START], 3 [END].
The treebank's reader is `tfm.parsing.treebank` (data never imports parsing; importing it registers
"ptb_parse" and "ptb_parse_tags" with `load_dataset`), so translation, training and the export never import NLTK.
"""

from tfm.data.batching import (
    LengthReport,
    bucket_batch_sizes,
    bucket_boundaries,
    bucket_by_token_budget,
    length_report,
    pad_to_fixed_length,
    padding_fraction,
    tokenize_pairs,
)
from tfm.data.cache import resolve_data_dir
from tfm.data.datasets import DATASET_NAMES, GENERATED_TASKS, PARSING_TASKS, load_dataset, register_dataset
from tfm.data.multi30k import download_multi30k, load_multi30k, load_multi30k_with_summary, multi30k_file
from tfm.data.splits import SPLITS, canonical_split
from tfm.data.subword_tokenizer import SubwordTokenizer, train_tokenizer
from tfm.data.synthetic import (
    english_number,
    german_number,
    number_words_dataset,
    number_words_pairs,
    sequence_task_dataset,
    sequence_task_ids,
    sequence_task_pairs,
)
from tfm.data.text_files import (
    CorpusSummary,
    load_parallel_files,
    load_parallel_files_with_summary,
    read_parallel_files,
)
from tfm.data.tfds_translate import TFDS_NAMES, load_tfds_translate

__all__ = [
    "CorpusSummary",
    "DATASET_NAMES",
    "GENERATED_TASKS",
    "LengthReport",
    "PARSING_TASKS",
    "SPLITS",
    "SubwordTokenizer",
    "TFDS_NAMES",
    "bucket_batch_sizes",
    "bucket_boundaries",
    "bucket_by_token_budget",
    "canonical_split",
    "download_multi30k",
    "english_number",
    "german_number",
    "length_report",
    "load_dataset",
    "register_dataset",
    "load_multi30k",
    "load_multi30k_with_summary",
    "load_parallel_files",
    "load_parallel_files_with_summary",
    "load_tfds_translate",
    "multi30k_file",
    "number_words_dataset",
    "number_words_pairs",
    "pad_to_fixed_length",
    "padding_fraction",
    "read_parallel_files",
    "resolve_data_dir",
    "sequence_task_dataset",
    "sequence_task_ids",
    "sequence_task_pairs",
    "tokenize_pairs",
    "train_tokenizer",
]
