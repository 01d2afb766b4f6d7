"""MoE prefill and decode on the GEMM roofline (docs/MODEL.md 15.1, "MoE"): small decode
batches read the experts their tokens reach (memory bound), large prefill passes run the
routed experts at the GEMMs' FLOP rate, and no MoE step depends on the catalog's flat
achievable-compute fraction any more."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY, WEIGHT_BYTES
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.efficiency import experts_hit_fraction, profile
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.compute import (
    ServingPlan,
    decode_compute_s,
    moe_decode_s,
    moe_layer_s,
    prefill_service_s,
)
from advisor.engine.model.serving.gemm import MOE_GROUPED_GEMM_FRACTION


def _scenario(model: str, gpu: str, gpus: int, inference: dict[str, Any], **extra: Any) -> Scenario:
    raw: dict[str, Any] = {
        "workload": "inference",
        "model": model,
        "gpu": gpu,
        "gpus": gpus,
        "precision": "fp8",
        "inference": {"prompt_tokens": 2048, "output_tokens": 512, "requests_per_s": 1.0}
        | inference,
    } | extra
    return parse_scenario(raw, default_catalog())


def _plan(scenario: Scenario) -> ServingPlan:
    workload = plan_workload(scenario)
    assert workload.inference is not None and workload.inference.serving is not None
    return workload.inference.serving


def _replicas(model: str, tp: int) -> Scenario:
    return _scenario(model, "h100-sxm", 8, {"deployment": "replicas"}, parallelism={"tp": tp})


def _deepseek_disaggregated() -> Scenario:
    return _scenario(
        "deepseek-v3",
        "h800-sxm",
        18 * 8,
        {
            "deployment": "disaggregated",
            "pools": {"prefill": {"servers": 4}, "decode": {"servers": 14}},
        },
        gpus_per_node=8,
    )


def _expert_bytes(scenario: Scenario) -> float:
    m = scenario.model
    return 3.0 * m.hidden * m.ffn_hidden * WEIGHT_BYTES[scenario.precision]


def _hbm(scenario: Scenario) -> float:
    return scenario.gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY


@pytest.mark.parametrize(("model", "tp"), [("qwen3-30b-a3b", 1), ("mixtral-8x7b", 2)])
def test_small_decode_batches_pay_for_the_expert_weights_their_tokens_reach(
    model: str, tp: int
) -> None:
    """From 1 to 8 sequences a decode step reads the weights of every expert a new token
    reaches: the step grows by at least that read (the FLOPs of 8 rows are negligible), and it
    never costs less than the weights it reads."""
    scenario = _replicas(model, tp)
    pool = _plan(scenario).decode
    assert pool.ep == 1 and pool.tp == tp
    m = scenario.model
    context = 2048 + 256.0
    per_expert_gpu = _expert_bytes(scenario) / tp / _hbm(scenario)

    def expert_read_s(batch: int) -> float:
        return m.moe_layers * m.moe_experts * experts_hit_fraction(m, batch) * per_expert_gpu

    steps = {b: moe_decode_s(scenario, pool, b, 1, context) for b in (1, 2, 4, 8)}
    for b in (2, 4, 8):
        grown = steps[b] - steps[1]
        extra_read = expert_read_s(b) - expert_read_s(1)
        assert extra_read > 0
        assert grown >= 0.9 * extra_read, (b, grown, extra_read)
        # ... and no more than the read plus the KV read of the added sequences, doubled
        assert grown <= 2.0 * (extra_read + steps[1] * 0.1), (b, grown, extra_read)
    for b, step in steps.items():
        assert step >= expert_read_s(b), (b, step, expert_read_s(b))


def test_an_expert_parallel_decode_step_reads_only_the_experts_its_group_reaches() -> None:
    """DeepSeek-V3 decode on EP112 (2 or 3 experts a GPU): at one sequence a GPU a step reads a
    share of its experts; at 64 sequences a GPU every expert is hit and the step stops paying
    for more expert reads."""
    scenario = _deepseek_disaggregated()
    pool = _plan(scenario).decode
    assert pool.ep > 8 and pool.gpus_per_instance == 1
    small = moe_layer_s(
        scenario.gpu,
        scenario.precision,
        scenario.model,
        1.0,
        1,
        pool.ep,
        pool.experts_per_gpu,
        float(pool.ep),
    )
    large = moe_layer_s(
        scenario.gpu,
        scenario.precision,
        scenario.model,
        64.0,
        1,
        pool.ep,
        pool.experts_per_gpu,
        64.0 * pool.ep,
    )
    assert small.experts_run < pool.experts_per_gpu
    assert large.experts_run == pytest.approx(pool.experts_per_gpu, rel=1e-6)
    one_expert_s = _expert_bytes(scenario) / _hbm(scenario)
    assert small.routed_s >= small.experts_run * one_expert_s
    assert small.routed_s < large.routed_s


@pytest.mark.parametrize("rows", [8192.0, 16384.0])
def test_large_prefill_passes_run_the_routed_experts_at_the_gemm_flop_rate(rows: float) -> None:
    """An expert-parallel prefill pass of 8-16k tokens a GPU sends hundreds of rows to every
    expert: the grouped GEMMs take their FLOPs at the grouped-GEMM rate TensorRT-LLM's MoE
    kernels reach (gemm.MOE_GROUPED_GEMM_FRACTION of the sustained FP8 peak, plus the fixed
    cost and the tile waves), far above the time their weights and activations take to
    stream."""
    scenario = _deepseek_disaggregated()
    pool = _plan(scenario).prefill
    m, gpu = scenario.model, scenario.gpu
    parts = moe_layer_s(
        gpu, scenario.precision, m, rows, 1, pool.ep, pool.experts_per_gpu, rows * pool.ep
    )
    assert parts.rows_per_expert >= 1000
    flops = 2.0 * rows * m.moe_top_k * 3.0 * m.hidden * m.ffn_hidden
    p = profile(gpu)
    rate = MOE_GROUPED_GEMM_FRACTION["fp8"] * p.sustained_ratio * gpu.peak_tflops("fp8") * 1e12
    assert flops / rate <= parts.routed_s <= 1.3 * flops / rate  # + the tile waves, ~24 %
    streamed = (
        parts.experts_run * _expert_bytes(scenario)
        + rows * m.moe_top_k * (2.0 * m.hidden + 3.0 * m.ffn_hidden) * WEIGHT_BYTES["fp8"]
    ) / _hbm(scenario)
    assert streamed < 0.3 * parts.routed_s


def test_per_token_decode_cost_falls_from_the_weight_read_to_the_flops() -> None:
    """Qwen3-30B-A3B on one H100: the step's cost per sequence falls steeply while the batch
    shares the expert reads and levels off once the GEMMs are compute bound."""
    scenario = _replicas("qwen3-30b-a3b", 1)
    pool = _plan(scenario).decode
    per_seq = {b: moe_decode_s(scenario, pool, b, 1, 1024.0) / b for b in (1, 16, 256, 1024, 2048)}
    assert per_seq[16] < 0.25 * per_seq[1]
    assert per_seq[2048] < per_seq[256]
    assert per_seq[2048] > 0.5 * per_seq[1024]


@pytest.mark.parametrize("case", ["mixtral-tp2", "qwen3-tp1", "deepseek-ep"])
def test_no_moe_step_reads_the_catalog_compute_fraction(case: str) -> None:
    """The flat ``achievable_compute_fraction`` of the catalog is gone from the MoE path:
    halving it moves neither a decode step nor a prefill."""
    if case == "deepseek-ep":
        scenario = _deepseek_disaggregated()
    else:
        scenario = _replicas(
            *(("mixtral-8x7b", 2) if case == "mixtral-tp2" else ("qwen3-30b-a3b", 1))
        )
    plan = _plan(scenario)
    slower = dataclasses.replace(
        scenario,
        gpu=dataclasses.replace(
            scenario.gpu, achievable_compute_fraction=scenario.gpu.achievable_compute_fraction / 2
        ),
    )
    for s in (scenario, slower):
        assert profile(s.gpu) is profile(scenario.gpu)
    for batch in (1.0, 32.0, 256.0):
        assert decode_compute_s(slower, plan, plan.decode, batch) == decode_compute_s(
            scenario, plan, plan.decode, batch
        )
    assert prefill_service_s(slower, plan, plan.prefill, None, "point") == prefill_service_s(
        scenario, plan, plan.prefill, None, "point"
    )


def test_decode_batches_leave_the_kept_moe_layers_alone() -> None:
    """A decode step prices its layer on its instance's GEMMs looked up once, without keeping
    the layer of each batch (every batch the load model tries is a new one): the layers
    moe_layer_s keeps (prefill passes) are not pushed out by decode batches, and a batch's
    step is the same whether or not moe_layer_s has seen its rows."""
    scenario = _deepseek_disaggregated()
    plan = _plan(scenario)
    pool = plan.decode
    context = plan.prompt_tokens + plan.output_tokens / 2.0
    moe_layer_s.cache_clear()
    steps = [moe_decode_s(scenario, pool, b, plan.rows_per_step, context) for b in (1.0, 7.5, 64.0)]
    assert moe_layer_s.cache_info().currsize == 0
    for b in (1.0, 7.5, 64.0):
        rows = max(1.0, b * plan.rows_per_step)
        moe_layer_s(
            scenario.gpu,
            scenario.precision,
            scenario.model,
            rows,
            max(1, pool.tp),
            pool.ep,
            pool.experts_per_gpu,
            rows * pool.ep / pool.gpus_per_instance,
        )
    again = [moe_decode_s(scenario, pool, b, plan.rows_per_step, context) for b in (1.0, 7.5, 64.0)]
    assert again == steps
