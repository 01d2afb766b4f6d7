"""Decode attention of one layer on one GPU, and the KV memory of a serving instance.

A decode step's attention reads every live sequence's KV cache.  On NVIDIA Hopper and
Blackwell it is priced by a closed form whose four constants were fitted on TensorRT-LLM's
measured generation-attention latencies (docs/MODEL.md 15.1, "Decode attention in closed
form", "The decode step at the kernel tables' own costs"): a fixed time per call, then the KV
bytes at a share of the HBM peak and the attention FLOPs (query heads x context) at a share of
the 16-bit tensor peak, partly overlapped (their p-norm: ``(m^k + c^k)^(1/k)``).
The table reads the kernels far below the HBM roofline where a GPU holds few KV heads and
many query heads per KV head (405B / 70B at TP8), and far above it at small batches, where
the fixed time dominates.  A latent (MLA) cache on Blackwell has its own closed form, fitted
on TensorRT-LLM's MLA generation latencies (its read and math overlapped: docs/MODEL.md 15.1,
"MLA decode attention on Blackwell").  Other generations, and MLA on Hopper, keep the roofline
``max(KV read / (HBM x 0.8), FLOPs / (0.67 x 16-bit peak))`` (FlashMLA's rate).
:func:`decode_attention_layer_s` picks the form.

How many cached tokens a query attends is the model's (:mod:`advisor.engine.model.attention_span`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final, NamedTuple

from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import BYTES_PER_GB, HBM_EFFICIENCY, MEMORY_USABLE_FRACTION

ATTENTION_DECODE_EFFICIENCY: Final = 0.67
"""Decode attention without a fitted closed form (FlashMLA's roofline): it reaches 660 of 989
dense bf16 TFLOP/s on H800 when compute bound (deepseek-ai/FlashMLA README: 660 TFLOPS, 3000
GB/s memory bound)."""

DECODE_ATTENTION_FIXED_S: Final = 9.43e-6
"""Fixed time of one decode-attention call (fitted on the kernel table, not on serving rows:
``bench/aic_attention_fit.py --overlap``; docs/MODEL.md 15.1)."""
DECODE_ATTENTION_HBM_FRACTION: Final = 0.853
"""Share of the HBM peak at which the decode attention streams the KV cache (fitted as above)."""
DECODE_ATTENTION_FLOP_FRACTION: Final = 0.0925
"""Share of the 16-bit dense tensor peak at which it runs the attention FLOPs, 4 x query heads x
head_dim per cached token (fitted as above)."""
DECODE_ATTENTION_NORM: Final = 2.66
"""Exponent k of the p-norm that overlaps the KV stream m and the FLOPs c, ``(m^k + c^k)^(1/k)``
(1: added; large: the longer alone): fitted with the three above, least squares on the relative
error over H100 SXM and H200 SXM FP8-KV calls (mean |error| H100 9.1 %, H200 11.1 %, B200 10.1 %,
GB200 10.5 %, against 9.5 / 11.9 / 10.5 / 10.9 % for the sum).  The 70B-at-TP1 shape (64 query and
8 KV heads, batch x context >= 64 Ki), which the sum read 13-15 % slow on Hopper, reads 7.5 %."""
DECODE_ATTENTION_FITTED_GENERATIONS: tuple[str, ...] = ("hopper", "blackwell")
"""Generations whose TensorRT-LLM generation-attention tables the constants were fitted on
(H100 SXM, H200 SXM) or checked against (B200 SXM, GB200).  The A100 table (TensorRT-LLM 1.0.0)
reads up to 1.5 x the HBM peak, so it measures no KV stream; Ampere, Ada, AMD, Gaudi and
custom GPUs keep the roofline."""

DECODE_ATTENTION_HOPPER_16BIT_KV: tuple[float, float, float, float] = (
    15.05e-6,
    0.864,
    0.088,
    1.74,
)
"""(fixed time, HBM share, 16-bit peak share, p-norm exponent) of the decode attention on Hopper
reading a 16-bit (BF16 / FP16) KV cache: fitted as above on the same H100 SXM and H200 SXM tables
and domain, on their BF16-KV calls (3,142; ``bench/aic_attention_fit.py --overlap --kv
bfloat16``: 11.1 / 14.9 % mean |error| on H100 / H200, the sum form's 11.0 / 15.1 %).
TensorRT-LLM's Hopper kernels for the two KV dtypes differ: the FP8 constants read the BF16-KV
calls 15-23 % fast (H100 -14.2 %, H200 -21.7 % signed).  Blackwell keeps the FP8 constants
for both (they read its BF16-KV calls within 9 %, -0.9 / -2.3 %, and these 22-24 % slow)."""

MLA_DECODE_ATTENTION_BLACKWELL: dict[float, tuple[float, float, float]] = {
    1.0: (13e-6, 0.58, 1.00),
    2.0: (15e-6, 0.66, 0.57),
}
"""(fixed time, HBM share, 16-bit peak share) of multi-head latent attention's decode on
Blackwell by latent-cache bytes per element (FP8, BF16): ``t0 + max(latent read / (e x HBM),
FLOPs / (r x 16-bit peak))``, the kernel overlapping its read and its math.  Fitted on
TensorRT-LLM 1.3.0rc20's measured MLA generation latencies of B200 SXM and GB200
(AIConfigurator 0.12.0 ``generation_mla_perf.parquet``; ``bench/aic_mla_fit.py``: 16-128 query
heads per GPU, 16+ sequences, 512+ tokens of context, 171 calls a table), never on a serving row:
12.8 % mean |error| on both tables for FP8, 12.2 / 12.7 % for BF16, where FlashMLA's roofline
below reads 45-47 / 37 %.  An FP8 cache runs its math at the 16-bit peak (share 1.00: FP8 tensor
cores at half their peak), a BF16 one at 0.57 of it.  Hopper keeps FlashMLA's roofline
(``max(read / (0.8 HBM), FLOPs / (0.67 x 16-bit peak))``, the kernel DeepSeek's and SGLang's
fitted Hopper deployments ran; TensorRT-LLM's Hopper tables read 20-28 % from either form)."""
MLA_DECODE_ATTENTION_FITTED_GENERATIONS: tuple[str, ...] = ("blackwell",)
"""Generations whose MLA decode attention takes :data:`MLA_DECODE_ATTENTION_BLACKWELL`."""

KV_MEMORY_FRACTION: Final = 0.90
"""Share of the memory left after the weights and ``KV_MEMORY_RESERVE_BYTES`` that a serving
instance's KV cache takes: TensorRT-LLM's ``kv_cache_free_gpu_mem_fraction`` default (0.90),
vLLM's ``gpu_memory_utilization`` default (0.90)."""
KV_MEMORY_RESERVE_BYTES: Final = 2e9
"""Memory per GPU besides weights and KV cache: CUDA context, activations of a decode step,
runtime buffers (docs/MODEL.md 15.1)."""


class DecodeAttentionRates(NamedTuple):
    fixed_s: float
    s_per_byte: float
    s_per_flop: float
    norm: float = 1.0


@lru_cache(maxsize=64)
def decode_attention_rates(
    gpu: GpuSpec, kv_element_bytes: float = 1.0
) -> DecodeAttentionRates | None:
    """The fitted decode attention's constants on ``gpu`` reading a KV cache of
    ``kv_element_bytes`` per element (1: FP8; 2: BF16 / FP16, which Hopper prices by
    :data:`DECODE_ATTENTION_HOPPER_16BIT_KV`), or None where the roofline prices it (a
    generation outside :data:`DECODE_ATTENTION_FITTED_GENERATIONS`)."""
    if gpu.generation not in DECODE_ATTENTION_FITTED_GENERATIONS:
        return None
    return _rates_on(
        gpu,
        DECODE_ATTENTION_HOPPER_16BIT_KV
        if gpu.generation == "hopper" and kv_element_bytes >= 2.0
        else (
            DECODE_ATTENTION_FIXED_S,
            DECODE_ATTENTION_HBM_FRACTION,
            DECODE_ATTENTION_FLOP_FRACTION,
            DECODE_ATTENTION_NORM,
        ),
    )


@lru_cache(maxsize=64)
def mla_decode_attention_rates(
    gpu: GpuSpec, kv_element_bytes: float = 2.0
) -> DecodeAttentionRates | None:
    """The fitted MLA decode attention's constants on ``gpu`` reading a latent cache of
    ``kv_element_bytes`` per element, or None where FlashMLA's roofline prices it (a generation
    outside :data:`MLA_DECODE_ATTENTION_FITTED_GENERATIONS`)."""
    if gpu.generation not in MLA_DECODE_ATTENTION_FITTED_GENERATIONS:
        return None
    return _rates_on(
        gpu, (*MLA_DECODE_ATTENTION_BLACKWELL[1.0 if kv_element_bytes < 2.0 else 2.0], 1.0)
    )


def _rates_on(
    gpu: GpuSpec, constants: tuple[float, float, float, float]
) -> DecodeAttentionRates | None:
    """(fixed time, HBM share, 16-bit peak share) as the rates of ``gpu``'s own HBM and 16-bit
    dense peak (None for a GPU without either)."""
    fixed, hbm_share, flop_share, norm = constants
    peak = (gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")) * 1e12
    hbm = gpu.memory_bw_gbytes_per_s * 1e9
    if peak <= 0 or hbm <= 0:
        return None
    return DecodeAttentionRates(fixed, 1.0 / (hbm_share * hbm), 1.0 / (flop_share * peak), norm)


def decode_attention_layer_s(
    gpu: GpuSpec, kv_element_bytes: float, latent: bool, kv_bytes: float, flops: float
) -> float:
    """One layer's decode attention on one GPU reading ``kv_bytes`` of its KV cache
    (``kv_element_bytes`` per element; ``latent``: an MLA cache) and running ``flops``
    attention FLOPs: :meth:`DecodeAttention.seconds`."""
    return DecodeAttention(gpu, kv_element_bytes, latent).seconds(kv_bytes, flops)


class DecodeAttention:
    """The decode attention of one GPU and cache format, its form picked once (a decode step
    priced at many batches asks for the same one): the closed forms fitted on TensorRT-LLM's
    kernels where a generation has them (GQA / MHA: :func:`decode_attention_s`; MLA on
    Blackwell: :func:`mla_decode_attention_s`), else the roofline ``max(read / (0.8 HBM),
    FLOPs / (0.67 x 16-bit peak))`` (FlashMLA's rate, :data:`ATTENTION_DECODE_EFFICIENCY`)."""

    def __init__(self, gpu: GpuSpec, kv_element_bytes: float, latent: bool) -> None:
        self.mla = mla_decode_attention_rates(gpu, kv_element_bytes) if latent else None
        self.rates = None if latent else decode_attention_rates(gpu, kv_element_bytes)
        self.roofline = (
            _roofline_rates(gpu) if self.mla is None and self.rates is None else (1.0, 1.0)
        )

    def seconds(self, kv_bytes: float, flops: float) -> float:
        """One layer reading ``kv_bytes`` of the cache and running ``flops`` FLOPs."""
        if self.mla is not None:
            return mla_decode_attention_s(self.mla, kv_bytes, flops)
        if self.rates is not None:
            return decode_attention_s(self.rates, kv_bytes, flops)
        hbm, flop_rate = self.roofline
        return max(kv_bytes / hbm, flops / flop_rate)


@lru_cache(maxsize=64)
def _roofline_rates(gpu: GpuSpec) -> tuple[float, float]:
    """(bytes/s, FLOP/s) of the decode attention's roofline on ``gpu``."""
    peak = gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")
    return (
        gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY,
        peak * 1e12 * ATTENTION_DECODE_EFFICIENCY,
    )


def mla_decode_attention_s(rates: DecodeAttentionRates, kv_bytes: float, flops: float) -> float:
    """One layer's MLA decode attention on one GPU: fixed + max(latent read, FLOPs) at the
    fitted rates (:data:`MLA_DECODE_ATTENTION_BLACKWELL`); 0.0 when it reads nothing."""
    if kv_bytes <= 0.0:
        return 0.0
    memory = kv_bytes * rates.s_per_byte
    math_s = flops * rates.s_per_flop
    return rates.fixed_s + (memory if memory > math_s else math_s)


def decode_attention_s(rates: DecodeAttentionRates, kv_bytes: float, flops: float) -> float:
    """One layer's decode attention on one GPU reading ``kv_bytes`` of KV cache and running
    ``flops`` attention FLOPs: fixed + the p-norm of (bytes / (0.853 HBM), FLOPs / (0.0925
    16-bit peak)) at k = 2.66 (:data:`DECODE_ATTENTION_NORM`); 0.0 when it reads nothing (an
    empty batch)."""
    if kv_bytes <= 0.0:
        return 0.0
    k = rates.norm
    memory = kv_bytes * rates.s_per_byte
    math_s = flops * rates.s_per_flop
    both: float = (memory**k + math_s**k) ** (1.0 / k)
    return rates.fixed_s + both


def decimal_usable_bytes(gpu: GpuSpec) -> float:
    """``MEMORY_USABLE_FRACTION`` of the vendor's figure read as decimal gigabytes: the fit rule
    before it read the binary capacity (:attr:`GpuSpec.usable_bytes`), kept for two serving
    sizing choices tuned on it, an expert-parallel pool's KV room (:func:`kv_room_bytes`) and a
    pool's tensor-parallel size (``pools._holds_a_handful``; docs/MODEL.md 15.1)."""
    return gpu.memory_gb * BYTES_PER_GB * MEMORY_USABLE_FRACTION


def kv_room_bytes(gpu: GpuSpec, weights: float, expert_parallel: bool = False) -> float:
    """KV-cache memory of one GPU holding ``weights`` bytes of weights: ``KV_MEMORY_FRACTION``
    of the HBM capacity in binary gigabytes (:attr:`GpuSpec.memory_bytes`, as the runtime reads
    it) less the weights and ``KV_MEMORY_RESERVE_BYTES``.  0.0 where the weights alone do not
    pass the engine's fit rule (:attr:`GpuSpec.usable_bytes`, the deployment search's), so
    which deployments fit does not change with the KV sizing; an expert-parallel pool (DeepEP's
    communication buffers beside the weights) keeps :func:`decimal_usable_bytes` less the
    weights."""
    if weights >= gpu.usable_bytes:
        return 0.0
    if expert_parallel:
        # DeepEP's and the expert-parallel runtimes' own buffers beside the weights
        return max(0.0, decimal_usable_bytes(gpu) - weights)
    return KV_MEMORY_FRACTION * (gpu.memory_bytes - weights - KV_MEMORY_RESERVE_BYTES)


def serving_usable_gb(gpu: GpuSpec, weights_gb: float, expert_parallel: bool = False) -> float:
    """What a serving GPU holding ``weights_gb`` GB of weights gives its weights and KV cache
    (GB): the weights plus :func:`kv_room_bytes`, the memory report's usable figure for a pool
    whose KV cache was sized by it."""
    return weights_gb + kv_room_bytes(gpu, weights_gb * 1e9, expert_parallel) / 1e9
