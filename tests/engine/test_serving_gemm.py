"""The serving GEMMs kept by shape (advisor.engine.model.serving.gemm) give the same bits as
efficiency.gemm_time_s at inference, on every catalog GPU."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from advisor.engine.facts.catalog.gpus import GPUS, GpuSpec
from advisor.engine.model.efficiency import gemm_time_s
from advisor.engine.model.serving.gemm import (
    InferenceGemm,
    inference_gemm,
    inference_gemms,
    total_time_s,
)

SHAPES = [(7168.0, 1536.0), (4096.0, 4096.0), (16032.0 / 3, 5120.0 / 7), (3.5, 7.0), (0.0, 4096.0)]
ROWS = [
    -1.0,
    0.0,
    0.4,
    1.0,
    7.5,
    100 / 3,
    1e4 / 7,
    64.0,
    127.0,
    128.0,
    129.0,
    300.25,
    4096.0,
    70000.0,
]


@pytest.mark.parametrize("precision", ["bf16", "fp16", "fp8"])
@pytest.mark.parametrize(
    "gpu",
    # every catalog GPU, and one without a compute profile of its own (the custom fallback)
    [*GPUS, dataclasses.replace(GPUS[0], id="staff-added-gpu")],
    ids=lambda g: g.id,
)
def test_same_bits_as_the_efficiency_functions(gpu: GpuSpec, precision: str) -> None:
    for n, k in SHAPES:
        g = InferenceGemm(gpu, precision, n, k)
        for m in ROWS:
            assert _outcome(g.time_s, m) == _outcome(gemm_time_s, gpu, precision, m, n, k, True)


def _outcome(f: Callable[..., float], *args: object) -> float | str:
    """The time, or the error's type (a GPU without any 16-bit peak, V100 at bf16, divides by
    zero in both)."""
    try:
        return f(*args)
    except ZeroDivisionError as e:
        return type(e).__name__


def test_kept_by_value() -> None:
    gpu = GPUS[0]
    assert inference_gemm(gpu, "bf16", 4096.0, 1024.0) is inference_gemm(
        gpu, "bf16", 4096.0, 1024.0
    )
    pair = inference_gemms(gpu, "bf16", ((4096.0, 1024.0), (1024.0, 4096.0)))
    assert [(g.n, g.k) for g in pair] == [(4096.0, 1024.0), (1024.0, 4096.0)]
    assert pair[0] is inference_gemm(gpu, "bf16", 4096.0, 1024.0)


@pytest.mark.parametrize("precision", ["bf16", "fp8"])
@pytest.mark.parametrize("gpu", [g for g in GPUS if g.bf16_dense_tflops > 0], ids=lambda g: g.id)
def test_a_layers_sum_is_the_loop_it_replaces(gpu: GpuSpec, precision: str) -> None:
    gemms = inference_gemms(gpu, precision, tuple(SHAPES))
    for m in ROWS:
        loop = 0.0
        for n, k in SHAPES:
            loop += gemm_time_s(gpu, precision, m, n, k, inference=True)
        assert total_time_s(gemms, m) == loop


# --------------------------------------------------------------------- MoE expert kernels
# Measured points of TensorRT-LLM 1.3.0rc20's fused MoE (AIConfigurator 0.12.0 moe_perf tables,
# balanced routing, CUTLASS; latency of one MoE layer on one GPU, tp 1, ep 1): the rule of
# routed_experts_s was fitted on 21,060 such points; these few hold it to them within the fit's
# spread (its mean |error| is 19-21 %, docs/MODEL.md 15.1 "MoE expert kernels").
MOE_POINTS = [
    # (GPU, precision, model, tokens, measured seconds)
    ("h200-sxm", "fp8", "mixtral-8x7b", 1024, 0.5947e-3),
    ("h200-sxm", "fp8", "mixtral-8x7b", 8192, 3.8352e-3),
    ("b200", "fp4", "qwen3-30b-a3b", 1024, 0.2223e-3),
    ("b200", "fp4", "qwen3-30b-a3b", 16384, 1.8168e-3),
]


@pytest.mark.parametrize(("gpu_id", "precision", "model_id", "tokens", "measured"), MOE_POINTS)
def test_moe_layer_reads_the_measured_kernels(
    gpu_id: str, precision: str, model_id: str, tokens: int, measured: float
) -> None:
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.facts.constants import HBM_EFFICIENCY
    from advisor.engine.model.efficiency import ELEMENTWISE_FFN_PASSES
    from advisor.engine.model.serving.compute import MOE_PERMUTE_PASSES, moe_layer_s

    catalog = default_catalog()
    gpu = catalog.gpu(gpu_id)
    model = catalog.model(model_id)
    assert gpu is not None and model is not None
    t = moe_layer_s(gpu, precision, model, float(tokens), 1, 1, model.moe_experts, float(tokens))
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    copies = tokens * model.moe_top_k
    permute = 2.0 * tokens * MOE_PERMUTE_PASSES * (1 + model.moe_top_k) * model.hidden / hbm
    activation = 2.0 * ELEMENTWISE_FFN_PASSES * copies * model.ffn_hidden / hbm
    priced = t.routed_s + permute + activation
    assert 0.6 < priced / measured < 1.5


def test_routed_experts_grow_with_their_rows_and_pay_the_kernels_fixed_cost() -> None:
    from advisor.engine.model.serving.gemm import MOE_KERNEL_FIXED_S, routed_experts_s

    gpu = next(g for g in GPUS if g.id == "h200-sxm")
    up = inference_gemm(gpu, "fp8", 2 * 768.0, 2048.0)
    down = inference_gemm(gpu, "fp8", 2048.0, 768.0)
    rate = 1e15
    assert routed_experts_s(up, down, rate, 0.0, 4.0) == 0.0
    # one row per expert on a fast rate: the experts' weights stream, beside the fixed cost
    fast = routed_experts_s(up, down, 1e18, 8.0, 1.0)
    weights = 8.0 * (up.kn + down.kn) * up.wbytes / up.hbm
    assert fast == pytest.approx(MOE_KERNEL_FIXED_S + weights)
    assert routed_experts_s(up, down, rate, 8.0, 1.0) >= fast
    times = [routed_experts_s(up, down, rate, 128.0, r) for r in (1.0, 64.0, 128.0, 129.0, 4096.0)]
    assert times == sorted(times)
    # rows padded to whole tiles: 129 rows cost two tiles of FLOPs, 128 one
    assert times[3] > times[2]
