"""Local attention in the span a query attends (docs/MODEL.md 15.1, "Chunked local attention" and
"Local attention: chunks and sliding windows"): Llama 4's chunks (36 of 48 layers attend within
chunks of 8,192 tokens) and gpt-oss's sliding windows (every other layer attends at most the 128
tokens before a token)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import ModelSpec, default_catalog
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.attention_span import (
    decode_attention_context,
    prefill_attention_context,
    training_attention_context,
)
from advisor.engine.model.efficiency import layer_forward
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.compute import ServingPlan, decode_compute_s
from advisor.engine.model.serving.results import published_scenario
from advisor.engine.tools.validation import serving_capacity_rows

CATALOG = default_catalog()
MAVERICK = CATALOG.model("llama4-maverick")
LLAMA3 = CATALOG.model("llama3-70b")
GPT_OSS_120B = CATALOG.model("gpt-oss-120b")
GPT_OSS_20B = CATALOG.model("gpt-oss-20b")


def _sampled_span(
    layers: int, first: int, last: int, chunked: int = 0, chunk: int = 1, sliding: int = 0,
    window: int = 1,
) -> float:  # fmt: skip
    """The mean span counted position by position (midpoints of unit steps): an independent
    reckoning of what the closed form integrates (``chunked`` layers attend ``p mod chunk``,
    ``sliding`` layers ``min(p, window)``, the rest ``p``)."""
    total = 0.0
    for p in range(first, last):
        x = p + 0.5
        full = layers - chunked - sliding
        total += (full * x + chunked * (x % chunk) + sliding * min(x, window)) / layers
    return total / (last - first)


def test_llama4_carries_its_published_chunks() -> None:
    for model_id in ("llama4-scout", "llama4-maverick"):
        model = CATALOG.model(model_id)
        assert model.attention_chunk == 8192
        assert model.chunked_attention_layers == 36 and model.layers == 48


@pytest.mark.parametrize(("prompt", "output"), [(128, 128), (1024, 8192), (32768, 1024)])
def test_a_model_without_chunks_keeps_the_causal_mean(prompt: int, output: int) -> None:
    assert LLAMA3.attention_chunk == 0
    assert decode_attention_context(LLAMA3, prompt, output) == prompt + output / 2.0
    assert prefill_attention_context(LLAMA3, prompt, prompt) == prompt / 2.0
    assert prefill_attention_context(LLAMA3, prompt, prompt / 4) == prompt - prompt / 8.0


def test_inside_the_first_chunk_nothing_changes() -> None:
    assert decode_attention_context(MAVERICK, 1024, 1024) == 1024 + 512.0
    assert prefill_attention_context(MAVERICK, 8192, 8192) == 4096.0


def test_a_long_prompt_attends_a_chunk_on_three_layers_of_four() -> None:
    # four whole chunks: a chunked layer's token attends 4,096 on average, a global one 16,384
    assert prefill_attention_context(MAVERICK, 32768, 32768) == pytest.approx(
        (12 * 16384 + 36 * 4096) / 48
    )


@pytest.mark.parametrize(("prompt", "output"), [(1024, 32768), (8192, 1024), (5000, 20000)])
def test_the_closed_form_matches_the_positions_counted_one_by_one(prompt: int, output: int) -> None:
    expected = _sampled_span(48, prompt, prompt + output, chunked=36, chunk=8192)
    assert decode_attention_context(MAVERICK, prompt, output) == pytest.approx(expected, rel=1e-6)
    assert decode_attention_context(MAVERICK, prompt, output) < prompt + output / 2.0


def test_without_its_chunks_maverick_reads_the_whole_sequence() -> None:
    full = replace(MAVERICK, attention_chunk=0)
    assert decode_attention_context(full, 1024, 32768) == 1024 + 16384.0


def _maverick_row_scenario(row_id: str) -> tuple[Scenario, ServingPlan]:
    row = next(r for r in serving_capacity_rows() if r["id"] == row_id)
    scenario = parse_scenario(published_scenario(row), CATALOG)
    plan = plan_workload(scenario).inference
    assert plan is not None and plan.serving is not None
    return scenario, plan.serving


def test_the_decode_step_reads_less_kv_past_the_first_chunk() -> None:
    long_id = "trtllm-devguide-llama4-maverick-b200-fp4-dep4-1024-32768"
    scenario, serving = _maverick_row_scenario(long_id)
    whole = replace(scenario, model=replace(scenario.model, attention_chunk=0))
    chunked = decode_compute_s(scenario, serving, serving.decode, 29.0)
    full = decode_compute_s(whole, serving, serving.decode, 29.0)
    # the attention of 36 of 48 layers reads ~4,096 cached tokens, not ~17,400
    assert chunked < 0.85 * full

    short_id = "trtllm-devguide-llama4-maverick-b200-fp4-dep4-1024-1024"
    scenario, serving = _maverick_row_scenario(short_id)
    whole = replace(scenario, model=replace(scenario.model, attention_chunk=0))
    assert decode_compute_s(scenario, serving, serving.decode, 256.0) == decode_compute_s(
        whole, serving, serving.decode, 256.0
    )


def test_training_attention_spans_the_sequence_or_its_chunks() -> None:
    assert training_attention_context(LLAMA3, 32768) == 32768.0
    assert training_attention_context(MAVERICK, 8192) == 8192.0
    # four chunks: a chunked layer's causal span averages 4,096, a global one 16,384
    assert training_attention_context(MAVERICK, 32768) == pytest.approx(
        2 * (12 * 16384 + 36 * 4096) / 48
    )


@pytest.mark.parametrize(
    ("model", "local", "gpu_id", "sequence", "bound"),
    [
        (MAVERICK, {"attention_chunk": 0}, "h100-sxm", 32768, 0.5),
        (GPT_OSS_120B, {"sliding_window": 0}, "b200", 4096, 0.6),
    ],
)
def test_a_long_training_sequence_runs_less_attention_but_the_same_model_flops(
    model: ModelSpec, local: dict[str, int], gpu_id: str, sequence: int, bound: float
) -> None:
    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    full = replace(model, **local)
    shorter = layer_forward(gpu, "bf16", model, sequence, sequence, 1, 8)
    whole = layer_forward(gpu, "bf16", full, sequence, sequence, 1, 8)
    assert shorter.attention_s < bound * whole.attention_s
    # the model FLOPs keep Megatron's count over the whole sequence
    assert shorter.model_flops == whole.model_flops


def test_a_llama4_sequence_inside_one_chunk_runs_the_whole_attention() -> None:
    gpu = CATALOG.gpu("h100-sxm")
    assert gpu is not None
    full = replace(MAVERICK, attention_chunk=0)
    short = layer_forward(gpu, "bf16", MAVERICK, 8192, 8192, 1, 8)
    assert short == layer_forward(gpu, "bf16", full, 8192, 8192, 1, 8)


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
def test_the_windows_closed_form_matches_the_positions_counted_one_by_one(
    prompt: int, output: int
) -> None:
    expected = _sampled_span(36, prompt, prompt + output, sliding=18, window=128)
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
