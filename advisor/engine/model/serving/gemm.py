"""Inference GEMMs of one shape, their batch-independent part computed once.

A decode step prices the same GEMM shapes (an attention projection, the non-routed MLP, the
output head of one instance) at every batch the load model and the deployment search try; only
the rows M change.  :func:`inference_gemm` keeps, by value (GPU, precision, N, K), what
:func:`efficiency.gemm_time_s` reads besides M: the compute profile, the FLOP rate, the tiles
along N, the HBM rate, the wave rule.  Its method is that function at ``inference=True``, with
the same operations in the same order (the same bits).  The routed experts of an MoE layer are
priced by :func:`routed_experts_s`, on TensorRT-LLM's measured MoE kernels.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Final

from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import HBM_EFFICIENCY, QUANTIZED_PRECISIONS, WEIGHT_BYTES
from advisor.engine.model.efficiency import (
    CUBLAS_NO_WAVE_GENERATIONS,
    FP8_INFERENCE_OVERLAP,
    FP8_INFERENCE_OVERLAP_GENERATIONS,
    HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS,
    gemm_peak_flops,
    profile,
    quantized_inference_gemm,
)
from advisor.engine.model.serving.precision import expert_math_precision


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
        "overlap",
        "sms",
        "tile_m",
        "tiles_n",
        "wbytes",
    )

    def __init__(self, gpu: GpuSpec, precision: str, n: float, k: float) -> None:
        p = profile(gpu)
        # the weights' bytes are the precision's; its math runs where the GPU runs it (mxfp4:
        # FP8 on Blackwell, 16-bit elsewhere; every other precision its own)
        self.wbytes = WEIGHT_BYTES[precision]
        precision = expert_math_precision(gpu, precision)
        self.n, self.k, self.kn = n, k, k * n
        self.empty = n <= 0 or k <= 0
        self.tile_m = p.tile_m
        self.tiles_n = math.ceil(n / p.tile_n) if not self.empty else 0
        self.sms = p.sms
        quantized = precision in QUANTIZED_PRECISIONS
        fp8_overlap = quantized and p.generation in FP8_INFERENCE_OVERLAP_GENERATIONS
        no_wave_16bit = not quantized and p.generation in CUBLAS_NO_WAVE_GENERATIONS
        self.no_wave = fp8_overlap or no_wave_16bit
        half = fp8_overlap or (
            no_wave_16bit and p.generation in HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS
        )
        self.overlap = FP8_INFERENCE_OVERLAP if half else 0.0
        extra = 0.0
        if fp8_overlap:
            extra, self.overlap = quantized_inference_gemm(p.generation, precision)
        frac = p.mamf_fp8 if quantized and p.mamf_fp8 > 0 else p.mamf_bf16
        peak = gemm_peak_flops(gpu, p, precision)
        self.flop_rate = frac * p.sustained_ratio * peak
        self.hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
        self.latency = p.gemm_latency_s + extra

    def time_s(self, m: float) -> float:
        """``efficiency.gemm_time_s(gpu, precision, m, n, k, inference=True)``."""
        if m <= 0 or self.empty:
            return 0.0
        return _rooflines_s((self,), m)


def total_time_s(gemms: tuple[InferenceGemm, ...], m: float) -> float:
    """0.0 + each of ``gemms``' :meth:`InferenceGemm.time_s` at ``m`` rows, in order (a
    layer's GEMMs at one batch): the same sum, in one call."""
    if m <= 0:
        return 0.0
    return _rooflines_s(gemms, m)


def _rooflines_s(gemms: tuple[InferenceGemm, ...], m: float) -> float:
    """0.0 + ``efficiency.gemm_time_s`` at ``inference=True`` of each non-empty GEMM of
    ``gemms``, in order (``m`` > 0).  The builtin max / min written out as the comparisons
    they make (max(a, b) is b only when b > a; min(a, b) is b only when b < a)."""
    total = 0.0
    for g in gemms:
        if g.empty:
            continue  # gemm_time_s is 0.0 for it, and x + 0.0 is x
        n, k = g.n, g.k
        if g.no_wave:
            wave_loss = 1.0
        else:
            tiles = math.ceil(m / g.tile_m) * g.tiles_n
            sms = g.sms
            wave_loss = math.ceil(tiles / sms) * sms / tiles
            ramp = m / g.tile_m - 1.0
            ramp = ramp if ramp > 0.0 else 0.0
            wave_loss = 1.0 + (wave_loss - 1.0) * (ramp if ramp < 1.0 else 1.0)
        compute = 2.0 * m * n * k / g.flop_rate * wave_loss
        memory = (m * k + g.kn + m * n) * g.wbytes / g.hbm
        longer, shorter = (memory, compute) if memory > compute else (compute, memory)
        total += longer + g.overlap * shorter + 0.0 + g.latency
    return total


MOE_KERNEL_FIXED_S: Final = 38e-6
"""Seconds one MoE layer's expert kernels cost whatever their work (fitted): TensorRT-LLM's fused
MoE runs routing, the token expansion, the activation's quantisation, two grouped GEMMs, the
gated activation and the weighted finalize as separate kernels.  Fitted with
:data:`MOE_KERNEL_TILE_S` and :data:`MOE_GROUPED_GEMM_FRACTION` on AIConfigurator 0.12.0's
measured TensorRT-LLM 1.3.0rc20 MoE tables (``moe_perf``: balanced routing, CUTLASS BF16 / FP8 /
NVFP4, H100 to GB300, tp 1-32 or ep 1-256, 1-16,384 tokens; 21,060 points), never on a
validation row (docs/MODEL.md 15.1, "MoE expert kernels, read against TensorRT-LLM's tables")."""
MOE_KERNEL_TILE_S: Final = 4.9e-6
"""Seconds per wave of output tiles of the experts' grouped GEMMs beyond their FLOPs (each
tile's prologue, epilogue and the K loop's start; fitted with :data:`MOE_KERNEL_FIXED_S`): what
makes many small experts (Qwen3-30B-A3B: 128 of 768 wide) slower per FLOP than a few wide ones
(Mixtral: 8 of 14,336)."""
MOE_GROUPED_GEMM_FRACTION: dict[str, float] = {"bf16": 1.0, "fp16": 1.0, "fp8": 0.9, "fp4": 0.49}
"""Share of the priced peak (:func:`efficiency.gemm_peak_flops` at the sustained clock) the
experts' grouped GEMMs reach on their rows padded to whole tiles, beside
:data:`MOE_KERNEL_TILE_S` (fitted with :data:`MOE_KERNEL_FIXED_S`; NVFP4's peak is already
its measured dense-GEMM rate, which grouped NVFP4 GEMMs reach half of)."""


MXFP4_EXPERT_KERNELS: dict[str, tuple[float, float, float]] = {
    "fp8": (18e-6, 3e-6, 1.0),
    "bf16": (72e-6, 0.0, 0.425),
}
"""(fixed seconds, seconds per wave of tiles, fraction of the sustained peak) of MXFP4 experts
whose math runs at the key's precision, where they have their own kernels.  ``fp8``: TensorRT-LLM's
MXFP4 x MXFP8 fused MoE on Blackwell, fitted on AIConfigurator 0.12.0's ``w4a8_mxfp4_mxfp8``
tables (B200, GB200, B300, GB300; tp 1, ep 1; 297 points: 9.7 % mean |error|, p90 18 %; the
fraction bounded by 1.0, where the fit sits; ``bench/aic_mxfp4_moe_fit.py``).  ``bf16``: Hopper's
BF16 x MXFP4 Triton kernels, fitted with :data:`MXFP4_EXPERT_TILE_M` on the ``w4a16_mxfp4``
tables (H100, H200; tp 1, ep 1; 81 points: 11.3 % mean |error|, p90 20.5 %, -0.3 % signed, where
the shared constants read 32.9 %: 20-50 % slow at 16-512 tokens, 20-42 % fast from 768;
``bench/aic_mxfp4_moe_fit.py --hopper``; docs/MODEL.md 15.1, "MXFP4 experts")."""
MXFP4_EXPERT_TILE_M: dict[str, float] = {"bf16": 32.0}
"""Rows per tile of the MXFP4 experts' kernels where they are not the GEMM profile's
(:attr:`ComputeProfile.tile_m`): Hopper's Triton kernels, fitted with their constants above
(a tile of 16, 64 or 128 rows reads the table worse)."""


def expert_tile_m(gpu: GpuSpec, precision: str) -> float:
    """Rows per tile of the routed experts' kernels when they are not the GEMM profile's
    (:data:`MXFP4_EXPERT_TILE_M`), else 0.0 (the profile's)."""
    math_precision = expert_math_precision(gpu, precision)
    return MXFP4_EXPERT_TILE_M.get(math_precision, 0.0) if precision != math_precision else 0.0


def expert_kernel(gpu: GpuSpec, precision: str) -> tuple[float, float, float]:
    """(FLOP/s, fixed seconds, seconds per wave of tiles) of an inference MoE layer's grouped
    expert GEMMs: :data:`MOE_GROUPED_GEMM_FRACTION` of the priced peak at the sustained clock,
    :data:`MOE_KERNEL_FIXED_S` and :data:`MOE_KERNEL_TILE_S` (docs/MODEL.md 15.1, "MoE expert
    kernels"); the peak of the precision the experts' math runs at (mxfp4: FP8 on Blackwell,
    with :data:`MXFP4_EXPERT_KERNELS`' constants; 16-bit elsewhere)."""
    p = profile(gpu)
    math_precision = expert_math_precision(gpu, precision)
    shared = (MOE_KERNEL_FIXED_S, MOE_KERNEL_TILE_S, MOE_GROUPED_GEMM_FRACTION[math_precision])
    own = MXFP4_EXPERT_KERNELS.get(math_precision) if precision != math_precision else None
    fixed, tile, fraction = own or shared
    peak = gemm_peak_flops(gpu, p, math_precision)
    return fraction * p.sustained_ratio * peak, fixed, tile


def routed_experts_s(
    up: InferenceGemm,
    down: InferenceGemm,
    rate: float,
    experts: float,
    rows_per_expert: float,
    fixed_s: float = MOE_KERNEL_FIXED_S,
    tile_s: float = MOE_KERNEL_TILE_S,
    tile_m: float = 0.0,
) -> float:
    """One MoE layer's routed experts on one GPU: ``experts`` experts that received a token,
    ``rows_per_expert`` rows each, their up (+gate) and down GEMMs ``up`` and ``down``.

    ``fixed_s + max(weights read / HBM, FLOPs of the rows padded to whole tiles / rate +
    tile_s x tiles / SMs)`` (:data:`MOE_KERNEL_FIXED_S` and :data:`MOE_KERNEL_TILE_S` but for
    kernels of their own, :func:`expert_kernel`): a small batch streams the weights of the experts
    it hits, a large one runs the grouped GEMMs at ``rate`` (:data:`MOE_GROUPED_GEMM_FRACTION`
    of the sustained peak) and pays each wave of tiles.  The element-wise passes (token
    permutation, gated activation) are priced with the layer's other element-wise kernels.
    Measured on TensorRT-LLM's kernels the rule reads 19-21 % mean |error| (docs/MODEL.md 15.1)."""
    if experts <= 0 or rows_per_expert <= 0 or up.empty:
        return 0.0
    params = up.kn + down.kn
    weights = experts * params * up.wbytes / up.hbm
    rows_per_tile = tile_m if tile_m > 0.0 else up.tile_m
    tile_rows = experts * math.ceil(rows_per_expert / rows_per_tile)
    compute = 2.0 * tile_rows * rows_per_tile * params / rate
    compute += tile_s * tile_rows * (up.tiles_n + down.tiles_n) / up.sms
    longer = compute if compute > weights else weights
    return fixed_s + longer


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
