"""benchmarks/beam_step_profile.py: every op of a traced beam search lands in one group, the matrix
products in the right one, and the groups add up to the ops' time (the results page's profile)."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))
import beam_step_profile as profile_tool

from tfm.decoding import Translator


@pytest.mark.parametrize(("op_type", "name", "group"), [
    ("_MklMatMul", "while/body/_1/while/feed_forward_5/inner_1/Tensordot/MatMul", "matrix products: FFN"),
    ("_MklMatMul",
     "while/body/_1/while/shared_embedding_3/Tensordot/ArithmeticOptimizer/FoldTransposeIntoMatMul_MatMul",
     "matrix products: output projection"),
    ("_MklMatMul", "while/body/_1/while/query_9/Tensordot/MatMul", "matrix products: attention"),
    # the row-major logit table's product, fused with the search's bias of banned ids (named after the bias)
    ("_FusedMatMul", "while/body/_1/while/BiasAdd", "matrix products: output projection"),
    ("_FusedMatMul", "while/body/_1/while/attention_output_11/BiasAdd", "matrix products: attention"),
    ("_FusedMatMul", "while/body/_1/while/feed_forward_5/inner_1/Relu", "matrix products: FFN"),
    ("_MklBatchMatMulV2", "while/body/_1/while/MatMul_7", "matrix products: attention"),
    ("GatherV2", "while/body/_1/while/GatherV2_3", "beam reorder"),
    ("ConcatV2", "while/body/_1/while/concat_2", "cache writes"),
    ("TopKV2", "while/body/_1/while/TopKV2", "softmax and top-k"),
    ("AddV2", "while/body/_1/while/add_4", "elementwise"),
    ("_MklMatMul", "encoder_1/layer_2_1/feed_forward_1/inner_1/Tensordot/MatMul",
     "encoder and set-up (once per batch)"),
])
def test_op_groups(op_type, name, group):
    assert profile_tool.op_group(op_type, name) == group


def test_profile_of_a_tiny_search(tiny_transformer, number_tokenizer):
    translator = Translator(tiny_transformer, number_tokenizer, beam_size=2, workers=1)
    sentences = ["seven", "three hundred twenty one", "ninety nine", "one thousand two hundred five"] * 2
    result = profile_tool.profile_search(translator, sentences, batch_size=4)
    assert result["batches"] == 2 and result["steps"] > 2
    groups = {g["group"]: g for g in result["groups"]}
    assert list(groups) == profile_tool.GROUP_ORDER
    for name in ("matrix products: output projection", "matrix products: attention", "matrix products: FFN",
                 "beam reorder", "softmax and top-k", "encoder and set-up (once per batch)"):
        assert groups[name]["ms_per_step"] > 0 and groups[name]["ops_per_step"] > 0, name
    total = sum(g["ms_per_step"] for g in result["groups"])
    assert total == pytest.approx(result["op_ms_per_step"], abs=0.01)
    assert result["op_ms_per_step"] < result["wall_ms_per_step"]  # the rest is dispatch
    assert result["ops_per_step"] > 50  # a beam step is hundreds of small ops, not a handful


def test_lever_variants_parse_and_batches_are_reproducible():
    """Issue 59's levers mode: a variant names a checkout and Translator options; every variant sees one batch set."""
    variant = profile_tool.parse_variant("bf16@/tmp/main:precision=bfloat16,early_finish=true,workers=1")
    assert variant == {"label": "bf16", "tree": "/tmp/main",
                       "options": {"precision": "bfloat16", "early_finish": True, "workers": 1}}
    assert profile_tool.parse_variant("this") == {"label": "this", "tree": None, "options": {}}
    first, again = profile_tool.lever_batches(40, 16), profile_tool.lever_batches(40, 16)
    assert [b.shape[0] for b in first] == [16, 16, 8]
    assert all((a == b).all() for a, b in zip(first, again)) and all((b[:, 0] > 0).all() for b in first)


def test_levers_on_a_trained_run_search_its_test_sentences(finished_run):
    """`--lever-run`: the variant's process searches the run's own model on its first test sentences (the digest is
    that of the same search done here), and profiles every op of its steps."""
    import hashlib

    import numpy as np

    [row] = profile_tool.compare_levers([profile_tool.parse_variant("this")], rounds=1, sentences=8, batch_size=4,
                                        beam_size=2, run=finished_run, alpha=0.6)
    loaded = Translator.from_run(finished_run)
    translator = Translator(loaded.model, loaded.tokenizer, beam_size=2, alpha=0.6, workers=1)
    sources = profile_tool.run_sources(finished_run, 8)
    assert len(sources) == 8
    batches = profile_tool.source_batches(translator, sources, 4)
    assert [b.shape[0] for b in batches] == [4, 4]
    digest = hashlib.sha1()
    for batch in batches:
        result = translator.search_ids(batch)
        digest.update(result.sequences.tobytes())
        digest.update(np.round(result.scores, 5).tobytes())
    assert row["digest"] == digest.hexdigest()[:12]
    assert row["steps"] > 2 and row["ops_per_step"] > 50 and row["same_digest_every_round"]
