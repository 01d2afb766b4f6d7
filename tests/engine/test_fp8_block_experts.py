"""Block-scaled FP8 experts: the published FP8 checkpoints of DeepSeek-V3 / R1, Kimi K2 and Qwen3's
MoE models scale their weights in 128 x 128 blocks (``ModelSpec.fp8_weight_block``), and their
experts run kernels of their own on Hopper (``serving.gemm.FP8_BLOCK_EXPERT_KERNELS``;
docs/MODEL.md 15.1, "Block-scaled FP8 experts")."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY
from advisor.engine.model.efficiency import ELEMENTWISE_FFN_PASSES
from advisor.engine.model.serving.compute import MOE_PERMUTE_PASSES, moe_layer_s
from advisor.engine.model.serving.gemm import (
    FP8_BLOCK_EXPERT_KERNELS,
    FP8_BLOCK_EXPERT_TILE_M,
    MOE_KERNEL_FIXED_S,
    expert_kernel,
    expert_tile_m,
)

CATALOG = default_catalog()


def test_the_catalog_knows_which_fp8_checkpoints_are_block_scaled() -> None:
    blocks = {m.id: m.fp8_weight_block for m in CATALOG.models}
    for model_id in (
        "deepseek-v3",
        "deepseek-r1",
        "deepseek-v3.1",
        "kimi-k2",
        "qwen3-235b-a22b",
        "qwen3-30b-a3b",
    ):
        assert blocks.pop(model_id) == 128, model_id
    # Llama 4 Maverick's FP8 is per-tensor (NVIDIA ModelOpt), gpt-oss ships MXFP4, the rest none
    assert set(blocks.values()) == {0}


def test_block_scaled_fp8_experts_select_hoppers_own_kernel() -> None:
    h200, b200 = CATALOG.gpu("h200-sxm"), CATALOG.gpu("b200")
    deepseek, maverick = CATALOG.model("deepseek-r1"), CATALOG.model("llama4-maverick")
    assert h200 is not None and b200 is not None and deepseek is not None and maverick is not None
    fixed, tile, fraction = FP8_BLOCK_EXPERT_KERNELS["hopper"]
    rate, fixed_s, tile_s = expert_kernel(h200, "fp8", deepseek.fp8_weight_block)
    assert (fixed_s, tile_s) == (fixed, tile)
    tile_m = expert_tile_m(h200, "fp8", deepseek.fp8_weight_block)
    assert tile_m == FP8_BLOCK_EXPERT_TILE_M["hopper"]
    # Maverick's per-tensor FP8 keeps the shared constants; so does a 16-bit serve of DeepSeek
    shared_rate, shared_fixed, _ = expert_kernel(h200, "fp8", maverick.fp8_weight_block)
    assert shared_fixed == MOE_KERNEL_FIXED_S
    assert expert_tile_m(h200, "fp8", maverick.fp8_weight_block) == 0.0
    assert rate == pytest.approx(shared_rate * fraction / 0.9)
    assert expert_kernel(h200, "bf16", 128)[1] == MOE_KERNEL_FIXED_S
    # Blackwell's block-scaled kernels read the shared constants about as well: no own kernel
    assert expert_kernel(b200, "fp8", 128) == expert_kernel(b200, "fp8", 0)
    assert expert_tile_m(b200, "fp8", 128) == 0.0


def _listed(model: str) -> dict[str, str]:
    raw = {
        "workload": "inference",
        "model": model,
        "gpu": "h200-sxm",
        "gpus": 8,
        "precision": "fp8",
        "inference": {"prompt_tokens": 1024, "output_tokens": 1024},
    }
    return {
        a["name"]: a["value"]
        for a in evaluate(raw)["assumptions"]
        if a["name"].startswith("block-scaled FP8 experts")
    }


def test_the_serving_answer_lists_the_block_scaled_kernel() -> None:
    assert _listed("deepseek-r1") == {
        "block-scaled FP8 experts (128 x 128 weight scales)": (
            "32 µs + 9 µs a wave of 32-row tiles, 0.76 of peak"
        )
    }
    assert _listed("llama4-maverick") == {}


# Measured points of TensorRT-LLM 1.3.0rc20's block-scaled FP8 fused MoE on H200 (AIConfigurator
# 0.12.0, systems/data/h200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet: moe_dtype fp8_block,
# balanced routing, CUTLASS, tp 1, ep 8; the latency of one MoE layer on one GPU).  The Hopper
# constants were fitted on 10,152 such points (13.7 % mean |error|); the shared FP8 constants
# read these from 4,096 tokens (512 rows an expert) 0.50-0.62 of the table.
FP8_BLOCK_POINTS = [
    # (model, tokens, measured seconds)
    ("deepseek-r1", 128, 0.3646e-3),
    ("deepseek-r1", 4096, 0.7258e-3),
    ("deepseek-r1", 16384, 2.4992e-3),
    ("qwen3-235b-a22b", 8, 0.06154e-3),
    ("qwen3-235b-a22b", 4096, 0.3519e-3),
    ("qwen3-235b-a22b", 16384, 1.3380e-3),
]


def _priced(model_id: str, tokens: int, block: bool) -> float:
    gpu, model = CATALOG.gpu("h200-sxm"), CATALOG.model(model_id)
    assert gpu is not None and model is not None
    if not block:
        model = replace(model, fp8_weight_block=0)
    ep = 8
    t = moe_layer_s(gpu, "fp8", model, tokens / ep, 1, ep, model.moe_experts // ep, float(tokens))
    # the element-wise passes the table's kernels include (permutation, gated activation)
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    rows = tokens / ep
    permute = 2.0 * rows * MOE_PERMUTE_PASSES * (1 + model.moe_top_k) * model.hidden / hbm
    activation = 2.0 * ELEMENTWISE_FFN_PASSES * rows * model.moe_top_k * model.ffn_hidden / hbm
    return t.routed_s + permute + activation


@pytest.mark.parametrize(("model_id", "tokens", "measured"), FP8_BLOCK_POINTS)
def test_block_scaled_experts_read_the_measured_kernels(
    model_id: str, tokens: int, measured: float
) -> None:
    assert 0.85 < _priced(model_id, tokens, block=True) / measured < 1.25
    if tokens >= 4096:  # the shared FP8 constants: half the table's time at these rows
        assert _priced(model_id, tokens, block=False) / measured < 0.65
