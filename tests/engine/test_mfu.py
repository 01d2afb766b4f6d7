"""MFU counts causal attention as published runs do (docs/MODEL.md 6)."""

from __future__ import annotations

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.efficiency import forward_flops_per_token


def test_mfu_halves_the_attention_term_that_model_tflops_counts_in_full() -> None:
    seq = 32768
    result = evaluate(
        {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "h100-sxm",
            "gpus": 64,
            "precision": "bf16",
            "sequence_length": seq,
            "training": {"global_batch_sequences": 64, "total_tokens": 1e10},
        }
    )
    metrics = result["metrics"]
    model = default_catalog().model("llama3-8b")
    assert model is not None
    full = forward_flops_per_token(model, seq)
    causal = full - 2.0 * seq * model.heads * model.head_dim * model.layers
    peak = 989e12
    full_mfu = metrics["model_tflops_per_gpu"] * 1e12 / peak
    assert metrics["mfu"] == pytest.approx(full_mfu * causal / full, rel=1e-6)
    assert metrics["mfu"] < full_mfu
