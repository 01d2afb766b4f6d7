"""The serving GEMMs kept by shape (advisor.engine.model.serving.gemm) give the same bits as
efficiency.gemm_time_s / grouped_gemm_time_s at inference, on every catalog GPU."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from advisor.engine.facts.catalog.gpus import GPUS, GpuSpec
from advisor.engine.model.efficiency import gemm_time_s, grouped_gemm_time_s
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
GROUPS = [0.0, 0.3, 1.0, 2.7, 8.0, 256.0]


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
            for groups in GROUPS:
                want = _outcome(grouped_gemm_time_s, gpu, precision, groups, m, n, k, True)
                assert _outcome(g.grouped_time_s, groups, m) == want


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
