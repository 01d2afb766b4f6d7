"""Sliding-window attention (gpt-oss: every other layer attends at most the 128 tokens before a
token) in the span a query attends (docs/MODEL.md 15.1, "Local attention: chunks and sliding
windows")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.attention_span import (
    decode_attention_context,
    prefill_attention_context,
    training_attention_context,
)
from advisor.engine.model.efficiency import layer_forward

CATALOG = default_catalog()
GPT_OSS_120B = CATALOG.model("gpt-oss-120b")
GPT_OSS_20B = CATALOG.model("gpt-oss-20b")
MAVERICK = CATALOG.model("llama4-maverick")


def _sampled_span(window: int, sliding: int, layers: int, first: int, last: int) -> float:
    """The mean span counted position by position (midpoints of unit steps): an independent
    reckoning of what the closed form integrates."""
    total = 0.0
    for p in range(first, last):
        x = p + 0.5
        total += ((layers - sliding) * x + sliding * min(x, window)) / layers
    return total / (last - first)


def test_gpt_oss_carries_its_published_windows() -> None:
    assert (GPT_OSS_120B.sliding_window, GPT_OSS_120B.sliding_window_layers) == (128, 18)
    assert GPT_OSS_120B.layers == 36
    assert (GPT_OSS_20B.sliding_window, GPT_OSS_20B.sliding_window_layers) == (128, 12)
    assert GPT_OSS_20B.layers == 24


def test_inside_the_window_nothing_changes() -> None:
    assert decode_attention_context(GPT_OSS_120B, 64, 64) == 64 + 32.0
    assert prefill_attention_context(GPT_OSS_120B, 128, 128) == 64.0


def test_a_long_prompt_attends_the_window_on_half_the_layers() -> None:
    # positions 0..P: a sliding layer's token attends min(p, 128), a full one p
    prompt = 32768
    window_mean = (128 * 128 / 2 + 128 * (prompt - 128)) / prompt
    expected = (18 * prompt / 2 + 18 * window_mean) / 36
    assert prefill_attention_context(GPT_OSS_120B, prompt, prompt) == pytest.approx(expected)


@pytest.mark.parametrize(("prompt", "output"), [(1000, 1000), (1024, 8192), (64, 512)])
def test_the_closed_form_matches_the_positions_counted_one_by_one(prompt: int, output: int) -> None:
    expected = _sampled_span(128, 18, 36, prompt, prompt + output)
    assert decode_attention_context(GPT_OSS_120B, prompt, output) == pytest.approx(
        expected, rel=1e-6
    )
    assert decode_attention_context(GPT_OSS_120B, prompt, output) < prompt + output / 2.0


def test_without_its_windows_gpt_oss_reads_the_whole_sequence() -> None:
    full = replace(GPT_OSS_120B, sliding_window=0)
    assert decode_attention_context(full, 1024, 8192) == 1024 + 4096.0
    assert training_attention_context(full, 4096) == 4096.0


def test_chunks_and_windows_add_up_on_one_model() -> None:
    # a model with both kinds of local layer (none in the catalog): each layer keeps its own span
    both = replace(MAVERICK, sliding_window=128, sliding_window_layers=6)
    prompt = 32768
    chunk_mean = 4096.0  # four whole chunks of 8,192
    window_mean = (128 * 128 / 2 + 128 * (prompt - 128)) / prompt
    expected = ((48 - 36 - 6) * prompt / 2 + 36 * chunk_mean + 6 * window_mean) / 48
    assert prefill_attention_context(both, prompt, prompt) == pytest.approx(expected)


def test_a_gpt_oss_training_sequence_runs_less_attention_but_the_same_model_flops() -> None:
    gpu = CATALOG.gpu("b200")
    assert gpu is not None
    full = replace(GPT_OSS_120B, sliding_window=0)
    windowed = layer_forward(gpu, "bf16", GPT_OSS_120B, 4096, 4096, 1, 8)
    whole = layer_forward(gpu, "bf16", full, 4096, 4096, 1, 8)
    assert windowed.attention_s < 0.6 * whole.attention_s
    assert windowed.model_flops == whole.model_flops


def test_the_answer_echoes_the_windows() -> None:
    result = evaluate(
        {
            "workload": "inference",
            "model": "gpt-oss-120b",
            "gpu": "h100-sxm",
            "gpus": 8,
            "inference": {"prompt_tokens": 1024, "output_tokens": 1024},
        }
    )
    model = result["workload"]["model"]
    assert model["sliding_window"] == 128 and model["sliding_window_layers"] == 18
