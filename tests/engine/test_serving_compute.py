"""Dense prefill and decode on the GEMM roofline (docs/MODEL.md 15.1) against TensorRT-LLM's
published capacities, and the shape of the step time the load model relies on."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.serving.compute import dense_decode_s, dense_prefill_s
from advisor.engine.tools.validation import serving_capacity_rows, validate_row

CATALOG = default_catalog()
LINES = [
    (row, validate_row(row)[0])
    for row in serving_capacity_rows()
    if not CATALOG.model(row["config"]["model"]).is_moe  # the MoE rows: test_serving_moe_rows
]


def _mean_abs(use: str) -> float:
    # FP8 on H100 and H200, as the docstring below says: the v0.17 page's L40S and A100 rows
    # (docs/VALIDATION_SOURCES.md, batch B) and the v0.14 page's FP16 H100 rows (2026-12-07)
    # are read in validate's held-out figures instead
    errors = [
        abs(line["error_pct"])
        for row, line in LINES
        if row["use"] == use
        and row["config"]["gpu"] in {"h100-sxm", "h200-sxm"}
        and row["config"]["precision"] == "fp8"
    ]
    assert len(errors) > 50
    return sum(errors) / len(errors)


def test_every_dense_row_names_its_source_and_use() -> None:
    for row, line in LINES:
        assert row["source"].startswith("NVIDIA TensorRT-LLM performance overview")
        assert row["use"] in {"development", "held_out"}
        assert line["use"] == row["use"]


@pytest.mark.parametrize("use", ["development", "held_out"])
def test_dense_capacity_reads_within_8_percent_on_average(use: str) -> None:
    """Mean |error| over Llama 3.1 8B / 70B / 405B FP8 on H100 and H200 (TP1-TP8, ten
    ISL/OSL pairs): development 7.7 %, held out 7.0 % when this was written."""
    assert _mean_abs(use) < 8.0


def _scenario(model: str, gpu: str, tp: int, pp: int = 1, precision: str = "fp8") -> Scenario:
    raw: dict[str, Any] = {
        "workload": "inference",
        "model": model,
        "gpu": gpu,
        "gpus": 8 * pp,
        "precision": precision,
        "parallelism": {"tp": tp, "pp": pp},
        "inference": {"deployment": "replicas" if pp == 1 else "split", "requests_per_s": 1.0},
    }
    return parse_scenario(raw, default_catalog())


@pytest.mark.parametrize(
    ("model", "gpu", "tp", "pp"),
    [
        ("llama3-8b", "h100-sxm", 1, 1),
        ("llama3-70b", "h200-sxm", 4, 1),
        ("llama3.1-405b", "h100-sxm", 8, 2),
    ],
)
def test_a_decode_step_grows_smoothly_past_one_tile_of_rows(
    model: str, gpu: str, tp: int, pp: int
) -> None:
    """The load model solves b = k x step(b); a step that jumped by a third as a stage's rows
    passed one tile (128: the wave loss of the training GEMMs, before split-K faded in) made
    capacity and saturation disagree.  Around one tile the step is now smooth; where a new row
    of tiles starts, wave quantisation still moves a step by up to ~15 % either way (the
    training GEMM model's), and the trend is up."""
    s = _scenario(model, gpu, tp, pp)
    steps = [dense_decode_s(s, b, 1, 2304.0, tp, pp) for b in range(1, 1025)]
    for b, (before, after) in enumerate(itertools.pairwise(steps), start=1):
        assert before * 0.85 <= after <= before * 1.15
        if 120 * pp <= b <= 140 * pp:
            assert before <= after <= before * 1.02
    assert steps[-1] > 2 * steps[0]


def test_a_small_decode_batch_costs_the_weight_read() -> None:
    """Batch 1 on Llama 3 70B FP8, TP1 on H200: 70.6 GB of weights at 80 % of 4.8 TB/s is
    18.4 ms; the step adds the KV read, the output head and the per-layer kernels, most of it
    the four FP8 GEMMs' fixed parts (80 x 4 x 13.1 us = 4.2 ms, TensorRT-LLM's measured GEMM
    tables: efficiency.QUANTIZED_INFERENCE_GEMM).  The same step as the sum of TensorRT-LLM's
    measured kernels (AIConfigurator 0.12.0 ``static_gen``, batch 1, 1,024 tokens of context):
    23.25 ms."""
    s = _scenario("llama3-70b", "h200-sxm", 1)
    step = dense_decode_s(s, 1, 1, 1024.0, 1, 1)
    assert 18.4e-3 * 1.15 < step < 18.4e-3 * 1.40
    assert step == pytest.approx(23.25e-3, rel=0.10)


def test_prefill_per_prompt_grows_with_the_prompt_and_shrinks_with_tp() -> None:
    s = _scenario("llama3-70b", "h100-sxm", 2)
    short, long = dense_prefill_s(s, 1000, 1000, 2, 1), dense_prefill_s(s, 4000, 4000, 2, 1)
    assert long > 4 * short  # causal attention grows faster than the GEMMs
    assert dense_prefill_s(s, 4000, 4000, 4, 1) < long
    # a prefix-cache hit computes only the new tokens (attending to the cached ones)
    assert dense_prefill_s(s, 4000, 1000, 2, 1) < long


def test_a_lone_prompt_is_slower_per_token_than_a_packed_pass() -> None:
    s = _scenario("llama3-8b", "h100-sxm", 1)
    assert dense_prefill_s(s, 128, 128, 1, 1, pack=False) > dense_prefill_s(s, 128, 128, 1, 1)


def test_intra_domain_collective_times_are_kept_by_value() -> None:
    # the deployment search asks for the same decode all-reduce many times: kept by (GPU, op,
    # bytes, ranks), so a repeat is the same figure and an edited GPU of the same id its own
    import dataclasses

    from advisor.engine.model.collectives import scaleup_time_s
    from advisor.engine.model.serving.compute import _intra_time_s

    s = parse_scenario(
        {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 8},
        default_catalog(),
    )
    first = _intra_time_s(s, "all_reduce", 2.0**20, 8)
    assert first == scaleup_time_s(s.gpu, "all_reduce", 2.0**20, 8)
    assert _intra_time_s(s, "all_reduce", 2.0**20, 8) == first
    faster = dataclasses.replace(
        s, gpu=dataclasses.replace(s.gpu, scaleup_gbytes_per_s=4 * s.gpu.scaleup_gbytes_per_s)
    )
    assert _intra_time_s(faster, "all_reduce", 2.0**20, 8) < first


def test_dense_decode_steps_are_kept_by_what_they_read() -> None:
    # kept by GPU, model, precision, GPUs per server and the arguments: a repeat is the same
    # figure, another model or precision is its own
    s = parse_scenario(
        {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 8},
        default_catalog(),
    )
    first = dense_decode_s(s, 64.0, 1, 2048.0, 8, 1)
    assert dense_decode_s(s, 64.0, 1, 2048.0, 8, 1) == first
    fp8 = parse_scenario(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 8,
            "precision": "fp8",
        },
        default_catalog(),
    )
    assert dense_decode_s(fp8, 64.0, 1, 2048.0, 8, 1) < first
    small = parse_scenario(
        {"workload": "inference", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8},
        default_catalog(),
    )
    assert dense_decode_s(small, 64.0, 1, 2048.0, 8, 1) < first


def test_an_fp8_deployment_runs_its_prefill_attention_in_fp8() -> None:
    """trtllm-bench builds every FP8 checkpoint with FP8 context attention (docs/MODEL.md
    15.1): the prefill's attention runs at the FP8 peak (twice the bf16 one on H100) with the
    same attention fraction and clock; a bf16 deployment keeps the bf16 rate (it failed before:
    both ran at the bf16 rate).  A 20,000-token prompt on Llama 3 8B is mostly attention, so
    its fp8 prefill takes well under two thirds of the bf16 one."""
    from advisor.engine.model.serving.compute import _prefill_attention_flops_per_s

    fp8 = _scenario("llama3-8b", "h100-sxm", 1)
    bf16 = _scenario("llama3-8b", "h100-sxm", 1, precision="bf16")
    ratio = _prefill_attention_flops_per_s(fp8) / _prefill_attention_flops_per_s(bf16)
    assert ratio == pytest.approx(fp8.gpu.peak_tflops("fp8") / bf16.gpu.peak_tflops("bf16"))
    assert ratio == pytest.approx(2.0, rel=0.01)
    long_fp8 = dense_prefill_s(fp8, 20000, 20000, 1, 1)
    long_bf16 = dense_prefill_s(bf16, 20000, 20000, 1, 1)
    assert long_fp8 < 0.65 * long_bf16


def test_a_share_of_the_nics_is_rounded_as_round_rounds_it() -> None:
    # the load model's step table and the expert all-to-all's domain round a load point's
    # share of the NICs to 3 decimals at every step: kept by value, the same float as round's
    import random

    from advisor.engine.model.serving import compute

    rng = random.Random(3)
    shares = [1.0, 0.05, 0.0625, 0.1235, 0.9995, 0.5005] + [
        rng.uniform(0.05, 1.0) for _ in range(2000)
    ]
    compute._ROUND3_CACHE.clear()
    for x in shares:
        assert compute.round3(x) == round(x, 3)
        assert compute._ROUND3_CACHE[x] == round(x, 3)
        assert compute.round3(x) == round(x, 3)


def test_dense_prefills_are_kept_by_what_they_read() -> None:
    # every design the search prices builds a load model of the same plan and asks for its
    # prompt's prefill: kept by GPU, model, precision, GPUs per server and the arguments, so a
    # repeat is the figure computed, and an edited GPU of the same id or fp8 its own
    import dataclasses

    from advisor.engine.model.serving import compute

    s = parse_scenario(
        {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 8},
        default_catalog(),
    )
    compute._PREFILL_CACHE.clear()
    first = compute.dense_prefill_s(s, 2048, 1536.0, 8, 1)
    assert {
        (s.gpu, s.model, s.precision, s.gpus_per_node, 2048, 1536.0, 8, 1, True): first
    } == compute._PREFILL_CACHE
    assert compute.dense_prefill_s(s, 2048, 1536.0, 8, 1) == first
    assert first == compute._dense_prefill_s(s, 2048, 1536.0, 8, 1, True)
    slower = dataclasses.replace(
        s, gpu=dataclasses.replace(s.gpu, memory_bw_gbytes_per_s=s.gpu.memory_bw_gbytes_per_s / 4)
    )
    assert compute.dense_prefill_s(slower, 2048, 1536.0, 8, 1) > first
    fp8 = dataclasses.replace(s, precision="fp8")
    assert compute.dense_prefill_s(fp8, 2048, 1536.0, 8, 1) != first
    assert compute.dense_prefill_s(s, 2048, 1536.0, 8, 1, pack=False) != first
