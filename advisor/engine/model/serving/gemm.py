"""Inference GEMMs of one shape, their batch-independent part computed once.

A decode step prices the same GEMM shapes (an attention projection, the non-routed MLP, the
routed experts, the output head of one instance) at every batch the load model and the
deployment search try; only the rows M change.  :func:`inference_gemm` keeps, by value
(GPU, precision, N, K), what :func:`efficiency.gemm_time_s` and
:func:`efficiency.grouped_gemm_time_s` read besides M and the group count: the compute
profile, the FLOP rate, the tiles along N, the HBM rate, the wave rule.  Its methods are those
functions at ``inference=True``, with the same operations in the same order (the same bits).
"""

from __future__ import annotations

import math
from functools import lru_cache

from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import HBM_EFFICIENCY, QUANTIZED_PRECISIONS, WEIGHT_BYTES
from advisor.engine.model.efficiency import (
    CUBLAS_NO_WAVE_GENERATIONS,
    FP8_INFERENCE_OVERLAP,
    FP8_INFERENCE_OVERLAP_GENERATIONS,
    HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS,
    gemm_peak_flops,
    profile,
)


class InferenceGemm:
    """One N x K inference GEMM shape on one GPU at one precision (docs/MODEL.md 15.1)."""

    __slots__ = (
        "empty",
        "flop_rate",
        "hbm",
        "k",
        "kn",
        "latency",
        "n",
        "no_wave",
        "no_wave_grouped",
        "overlap",
        "sms",
        "tile_m",
        "tiles_n",
        "wbytes",
    )

    def __init__(self, gpu: GpuSpec, precision: str, n: float, k: float) -> None:
        p = profile(gpu)
        self.n, self.k, self.kn = n, k, k * n
        self.empty = n <= 0 or k <= 0
        self.tile_m = p.tile_m
        self.tiles_n = math.ceil(n / p.tile_n) if not self.empty else 0
        self.sms = p.sms
        quantized = precision in QUANTIZED_PRECISIONS
        fp8_overlap = quantized and p.generation in FP8_INFERENCE_OVERLAP_GENERATIONS
        self.no_wave_grouped = not quantized and p.generation in CUBLAS_NO_WAVE_GENERATIONS
        self.no_wave = fp8_overlap or self.no_wave_grouped
        half = fp8_overlap or (
            self.no_wave_grouped and p.generation in HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS
        )
        self.overlap = FP8_INFERENCE_OVERLAP if half else 0.0
        frac = p.mamf_fp8 if quantized and p.mamf_fp8 > 0 else p.mamf_bf16
        peak = gemm_peak_flops(gpu, p, precision)
        self.flop_rate = frac * p.sustained_ratio * peak
        self.hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
        self.wbytes = WEIGHT_BYTES[precision]
        self.latency = p.gemm_latency_s

    def time_s(self, m: float) -> float:
        """``efficiency.gemm_time_s(gpu, precision, m, n, k, inference=True)``."""
        if m <= 0 or self.empty:
            return 0.0
        return _rooflines_s((self,), 1.0, m)

    def grouped_time_s(self, groups: float, m: float) -> float:
        """``efficiency.grouped_gemm_time_s(gpu, precision, groups, m, n, k, inference=True)``."""
        if groups <= 0 or m <= 0 or self.empty:
            return 0.0
        tiled = _rooflines_s((self,), groups, m, grouped=True)
        if m <= self.tile_m:
            return tiled
        t0 = self.latency
        one_tile = _rooflines_s((self,), groups, self.tile_m, grouped=True) - t0
        return min(tiled, m / self.tile_m * one_tile + t0)


def total_time_s(gemms: tuple[InferenceGemm, ...], m: float) -> float:
    """0.0 + each of ``gemms``' :meth:`InferenceGemm.time_s` at ``m`` rows, in order (a
    layer's GEMMs at one batch): the same sum, in one call."""
    if m <= 0:
        return 0.0
    return _rooflines_s(gemms, 1.0, m)


def _rooflines_s(
    gemms: tuple[InferenceGemm, ...], groups: float, m: float, grouped: bool = False
) -> float:
    """0.0 + ``efficiency._gemm_roofline_s`` at ``inference=True`` of each non-empty GEMM of
    ``gemms``, in order (``m`` > 0).  The builtin max / min written out as the comparisons
    they make (max(a, b) is b only when b > a; min(a, b) is b only when b < a)."""
    total = 0.0
    for g in gemms:
        if g.empty:
            continue  # gemm_time_s is 0.0 for it, and x + 0.0 is x
        n, k = g.n, g.k
        if g.no_wave_grouped if grouped else g.no_wave:
            wave_loss = 1.0
        else:
            tiles = math.ceil(groups * math.ceil(m / g.tile_m) * g.tiles_n)
            sms = g.sms
            wave_loss = math.ceil(tiles / sms) * sms / tiles
            ramp = m / g.tile_m - 1.0
            ramp = ramp if ramp > 0.0 else 0.0
            wave_loss = 1.0 + (wave_loss - 1.0) * (ramp if ramp < 1.0 else 1.0)
        compute = 2.0 * m * n * k * groups / g.flop_rate * wave_loss
        memory = (m * k + g.kn + m * n) * groups * g.wbytes / g.hbm
        longer, shorter = (memory, compute) if memory > compute else (compute, memory)
        total += longer + (0.0 if grouped else g.overlap) * shorter + 0.0 + g.latency
    return total


@lru_cache(maxsize=1024)
def inference_gemm(gpu: GpuSpec, precision: str, n: float, k: float) -> InferenceGemm:
    """The :class:`InferenceGemm` of (GPU, precision, N, K), kept by value (bounded)."""
    return InferenceGemm(gpu, precision, n, k)


@lru_cache(maxsize=1024)
def inference_gemms(
    gpu: GpuSpec, precision: str, shapes: tuple[tuple[float, float], ...]
) -> tuple[InferenceGemm, ...]:
    """The :class:`InferenceGemm` of each (N, K) of ``shapes`` (one instance's GEMMs of a
    layer), kept by value (bounded): one look-up per layer instead of one per GEMM."""
    return tuple(inference_gemm(gpu, precision, n, k) for n, k in shapes)
