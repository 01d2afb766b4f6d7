"""Every kernel of a training layer pays the per-kernel fixed time t0 (launch, prologue,
epilogue) that the GEMMs pay, not only the GEMMs (docs/MODEL.md 5.1)."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog.gpus import GpuSpec
from advisor.engine.facts.catalog.models import ModelSpec
from advisor.engine.model import efficiency
from advisor.engine.model.efficiency import (
    ELEMENTWISE_KERNELS,
    MOE_PERMUTE_KERNELS,
    MOE_SORT_KERNELS,
    kernel_fixed_s,
    profile,
)
from tests.support import catalog

forward = efficiency.layer_forward.__wrapped__


def _fixed_part(gpu: GpuSpec, model: ModelSpec, tokens: int, ep: int = 1, **kw: bool) -> float:
    """The element-wise time that does not grow with the tokens: t(n) - (t(2n) - t(n))."""
    one = forward(gpu, "fp8", model, tokens, 8192, 1, ep, **kw).elementwise_s
    two = forward(gpu, "fp8", model, 2 * tokens, 8192, 1, ep, **kw).elementwise_s
    return 2.0 * one - two


def test_a_kernel_pays_the_generations_t0() -> None:
    assert kernel_fixed_s(catalog.gpu("h100-sxm"), 1) == pytest.approx(3e-6)
    assert kernel_fixed_s(catalog.gpu("b200"), 1) == pytest.approx(5e-6)
    assert kernel_fixed_s(catalog.gpu("b200"), 7) == pytest.approx(
        7 * profile(catalog.gpu("b200")).gemm_latency_s
    )


@pytest.mark.parametrize("gpu_id", ["h100-sxm", "b200", "gb200-nvl72"])
def test_a_dense_layers_element_wise_kernels_pay_a_fixed_time_each(gpu_id: str) -> None:
    gpu = catalog.gpu(gpu_id)
    # two norms, two residual adds, the activation: five kernels whatever the tokens
    assert ELEMENTWISE_KERNELS == 5
    assert _fixed_part(gpu, catalog.model("llama3-8b"), 4096) == pytest.approx(
        kernel_fixed_s(gpu, 5), rel=1e-6
    )


def test_flash_attention_pays_one_kernels_fixed_time() -> None:
    gpu = catalog.gpu("b200")
    m = catalog.model("llama3-8b")
    one = forward(gpu, "fp8", m, 1024, 8192, 1, 1).attention_s
    two = forward(gpu, "fp8", m, 2048, 8192, 1, 1).attention_s
    assert 2.0 * one - two == pytest.approx(kernel_fixed_s(gpu, 1), rel=1e-6)


def test_moe_layers_count_the_permutation_and_sort_kernels() -> None:
    gpu = catalog.gpu("b200")
    ds = catalog.model("deepseek-v3")
    permuted = _fixed_part(gpu, ds, 4096, ep=8)
    assert permuted == pytest.approx(kernel_fixed_s(gpu, 5 + MOE_PERMUTE_KERNELS), rel=1e-6)
    sorted_ = _fixed_part(gpu, ds, 4096, ep=8, sort_local=True)
    assert sorted_ - permuted == pytest.approx(kernel_fixed_s(gpu, MOE_SORT_KERNELS), rel=1e-6)


def test_the_fixed_time_weighs_on_small_per_gpu_work_not_large() -> None:
    # one 8B layer on 2,048 tokens (MLPerf's 512-GPU GB200 job's share) against one 405B
    # layer on 8,192 tokens at TP 8: the five element-wise kernels and the attention kernel
    gpu = catalog.gpu("gb200-nvl72")
    small = forward(gpu, "fp8", catalog.model("llama3-8b"), 2048, 8192, 2, 1)
    large = forward(gpu, "fp8", catalog.model("llama3.1-405b"), 8192, 8192, 8, 1)
    fixed = kernel_fixed_s(gpu, 6)
    assert fixed / small.forward_s > 0.05
    assert fixed / large.forward_s < 0.02
