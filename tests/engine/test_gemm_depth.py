"""FP8 training GEMMs pay their tiles' fixed cost against the reduction depth K; MLA's
projections and the routed experts' backward GEMMs run at their own shapes."""

from __future__ import annotations

import pytest

from advisor.engine.model.efficiency import (
    FP8_TILE_DEPTH_K,
    expert_backward_s,
    fp8_depth_factor,
    gemm_time_s,
    layer_forward,
    mla_projection_shapes,
)
from tests.support import catalog


def test_depth_factor_follows_the_deepgemm_fit() -> None:
    # DeepGEMM H800 M = 4096: K = 512 ran at 590 TFLOPS, K = 16384 at 1358 (2.3x); the fit
    # rate / (1 + 725 / K) gives 2.2x between them
    assert FP8_TILE_DEPTH_K == 725.0
    ratio = fp8_depth_factor(512) / fp8_depth_factor(16384)
    assert ratio == pytest.approx(1358 / 590, rel=0.06)
    assert fp8_depth_factor(2048) / fp8_depth_factor(7168) == pytest.approx(1304 / 1025, rel=0.05)


def test_depth_term_applies_to_fp8_training_gemms_only() -> None:
    h800 = catalog.gpu("h800-sxm")
    shallow = gemm_time_s(h800, "fp8", 4096, 32768, 512)
    deep_rate = gemm_time_s(h800, "fp8", 4096, 4096, 4096 * 4) / (4096 * 4)
    # per unit of depth a K = 512 training GEMM is far slower than a deep one
    assert shallow / (32768 / 4096 * 512) > 1.5 * deep_rate
    # bf16 and serving (inference) GEMMs keep the old pricing: no depth term
    bf16 = gemm_time_s(h800, "bf16", 4096, 32768, 512)
    fp8_inf = gemm_time_s(h800, "fp8", 4096, 32768, 512, inference=True)
    assert bf16 < 2.5 * fp8_inf
    assert shallow > fp8_inf * 1.5


def test_mla_projections_carry_deepseek_v3_parameters() -> None:
    m = catalog.model("deepseek-v3")
    params = sum(n * k for n, k, _ in mla_projection_shapes(m))
    # 7168 x 2112 + 1536 x 24576 + 512 x 32768 + 16384 x 7168 (DeepSeek-V3 config.json)
    assert params == 7168 * 2112 + 1536 * 24576 + 512 * 32768 + 16384 * 7168
    assert mla_projection_shapes(catalog.model("llama3-70b")) == ()


def test_expert_weight_gradient_depth_is_the_experts_rows() -> None:
    b200 = catalog.gpu("b200")
    few = expert_backward_s(b200, "fp8", 1024, 7168, 2048) / 1024
    many = expert_backward_s(b200, "fp8", 8192, 7168, 2048) / 8192
    # fewer rows per expert: shallower weight-gradient GEMMs, more time per row
    assert few > 1.2 * many
    m = catalog.model("deepseek-v3")
    lc = layer_forward(b200, "fp8", m, 4096, 4096, 1, 8)
    assert lc.backward_gemm_extra_s > 0.0
    dense = layer_forward(b200, "fp8", catalog.model("llama3-70b"), 4096, 4096, 1, 1)
    assert dense.backward_gemm_extra_s == 0.0
