"""Multi-head latent attention's decode on Blackwell at TensorRT-LLM's measured kernel rates, and
FlashMLA's roofline kept on Hopper (docs/MODEL.md 15.1, "MLA decode attention on Blackwell")."""

from __future__ import annotations

import pytest

from advisor.engine.facts.constants import HBM_EFFICIENCY
from advisor.engine.model.serving.attention import (
    ATTENTION_DECODE_EFFICIENCY,
    MLA_DECODE_ATTENTION_BLACKWELL,
    decode_attention_layer_s,
    mla_decode_attention_rates,
    mla_decode_attention_s,
)
from advisor.engine.model.serving.compute import decode_attention_flops_per_context_token
from tests.support import catalog

DEEPSEEK = catalog.model("deepseek-r1")
LATENT = 576


def _call(batch: int, context: int, element_bytes: float) -> tuple[float, float]:
    """One layer's latent read and FLOPs for 128 query heads on one GPU."""
    tokens = batch * context
    return tokens * LATENT * element_bytes, tokens * decode_attention_flops_per_context_token(
        DEEPSEEK
    )


@pytest.mark.parametrize(
    ("element_bytes", "batch", "context", "measured_ms"),
    [
        # TensorRT-LLM 1.3.0rc20 on B200 SXM, 128 heads (AIConfigurator 0.12.0
        # generation_mla_perf.parquet, step = context - 1)
        (1.0, 64, 4096, 0.046),
        (1.0, 256, 4096, 0.154),
        (2.0, 256, 16384, 0.891),
        (2.0, 64, 4096, 0.072),
    ],
)
def test_b200_reads_tensorrt_llm_s_measured_mla_calls(
    element_bytes: float, batch: int, context: int, measured_ms: float
) -> None:
    gpu = catalog.gpu("b200")
    rates = mla_decode_attention_rates(gpu, element_bytes)
    assert rates is not None
    kv, flops = _call(batch, context, element_bytes)
    assert mla_decode_attention_s(rates, kv, flops) * 1e3 == pytest.approx(measured_ms, rel=0.15)


def test_an_fp8_latent_cache_runs_its_math_at_twice_the_bf16_rate() -> None:
    gpu = catalog.gpu("gb200-nvl72")
    fp8 = mla_decode_attention_rates(gpu, 1.0)
    bf16 = mla_decode_attention_rates(gpu, 2.0)
    assert fp8 is not None and bf16 is not None
    assert bf16.s_per_flop / fp8.s_per_flop == pytest.approx(
        MLA_DECODE_ATTENTION_BLACKWELL[1.0][2] / MLA_DECODE_ATTENTION_BLACKWELL[2.0][2]
    )
    assert bf16.s_per_flop > 1.7 * fp8.s_per_flop


def test_hopper_keeps_flashmla_s_roofline() -> None:
    gpu = catalog.gpu("h200-sxm")
    assert mla_decode_attention_rates(gpu, 2.0) is None
    kv, flops = _call(256, 4096, 2.0)
    peak = gpu.peak_tflops("bf16") * 1e12
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    assert decode_attention_layer_s(gpu, 2.0, True, kv, flops) == pytest.approx(
        max(kv / hbm, flops / (ATTENTION_DECODE_EFFICIENCY * peak))
    )


def test_an_empty_batch_reads_nothing() -> None:
    rates = mla_decode_attention_rates(catalog.gpu("b200"), 1.0)
    assert rates is not None
    assert mla_decode_attention_s(rates, 0.0, 0.0) == 0.0
