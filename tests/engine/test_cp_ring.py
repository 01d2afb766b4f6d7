"""Context parallelism's own kernels (Transformer Engine's ``AttnFuncWithCPAndKVP2P``): per
layer the cp - 1 extra flash-attention calls, the forward's output / softmax-LSE merges and the
backward's dq / dk / dv accumulations, each a kernel and an HBM pass (docs/MODEL.md 6)."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model import stage_time
from advisor.engine.model.efficiency import (
    BACKWARD_FACTOR,
    cp_ring_overhead_s,
    kernel_fixed_s,
    layer_forward,
)
from tests.support import catalog


def test_no_context_parallelism_costs_nothing() -> None:
    assert cp_ring_overhead_s(catalog.gpu("b200"), catalog.model("llama3-8b"), 8192, 1, 1) == 0.0


def test_llama_8b_cp2_on_b200_by_hand() -> None:
    # MLPerf v5.1's 8B job at CP 2: 4,096 tokens a GPU, 32 query heads x 128, 8 K/V heads
    gpu, m = catalog.gpu("b200"), catalog.model("llama3-8b")
    t, q, kv = 4096.0, 32 * 128.0, 2 * 8 * 128.0
    # bytes per element over two steps: a copy (4 B), then 3/4 of an add (6 B)
    per_element = 4.0 + 0.75 * 6.0
    passes = t * (2 * q * per_element + kv * per_element + 4 * kv)  # out, dq; dk/dv; the cat
    # 3.5 attention kernels more; 2 merges forward and 3 accumulations backward a step; the cat
    kernels = 3.5 + 5 * 2 + 1
    expected = passes / (gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY) + kernel_fixed_s(
        gpu, kernels
    )
    assert cp_ring_overhead_s(gpu, m, 4096, 1, 2) == pytest.approx(expected, rel=1e-9)
    # ~130 us a layer: a few ms over 32 layers of a ~190 ms step, not the whole miss
    assert 100e-6 < expected < 160e-6


def test_more_ring_steps_cost_more_per_token() -> None:
    gpu, m = catalog.gpu("gb200-nvl72"), catalog.model("llama3-8b")
    cp2 = cp_ring_overhead_s(gpu, m, 4096, 1, 2) / 4096
    cp4 = cp_ring_overhead_s(gpu, m, 2048, 1, 4) / 2048
    assert cp4 > 1.5 * cp2


def test_a_cp_layer_pays_the_ring_in_the_stage_time() -> None:
    raw = {"workload": "training", "model": "llama3-8b", "gpu": "b200", "gpus": 64}
    s = parse_scenario(raw, default_catalog())
    with_cp = stage_time._layer_time(s, 1, 2, 1, 1, "none")[0]
    ring = cp_ring_overhead_s(s.gpu, s.model, s.sequence_length // 2, 1, 2)
    assert ring > 0
    # the layer's GEMMs, element-wise kernels and attention on its half of the sequence,
    # forward and backward; the ring's kernels come on top
    half = s.sequence_length // 2
    lc = layer_forward(s.gpu, s.precision, s.model, half, s.sequence_length, 1, 1)
    parts = (
        (1.0 + BACKWARD_FACTOR) * (lc.gemm_s + lc.elementwise_s)
        + lc.backward_gemm_extra_s
        + 3.5 * lc.attention_s
    )
    assert with_cp - parts == pytest.approx(ring, rel=1e-6)
