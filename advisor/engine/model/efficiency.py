"""Size-dependent compute efficiency of a transformer layer on one GPU (a GEMM-level roofline).

The time of one transformer layer's forward pass on one GPU is the sum of

* its matrix multiplications (QKV, attention output, MLP / experts), each priced as
  ``flops / (mamf x peak) x wave + t0``: ``mamf`` is the measured *maximum achievable matmul
  FLOPS* of the GPU generation as a fraction of its dense peak (stas00/ml-engineering,
  "Maximum Achievable Matmul FLOPS comparison table", mamf-finder.py, torch 2.5-2.10);
  ``wave`` is the wave-quantisation loss of a GEMM of M x N output split in
  ``tile_m x tile_n`` tiles over ``sms`` streaming multiprocessors (the last wave runs partly
  empty); ``t0`` is a fixed per-GEMM latency (launch, prologue, epilogue), fitted on the
  published square-GEMM size sweeps (H100: torch 2.7 bf16 1024^3 177, 2048^3 677, 4096^3 789,
  8192^3 798 TFLOP/s, zzc0721/torch-performance-test-data #79; B200: cuBLAS 2048^3 1006,
  4096^3 1532, 8192^3 1610 TFLOP/s, pyptx.dev/performance);
* the attention score/context products (flash attention, causal: half of the 4 s h FLOPs
  are executed) at ``attention_fraction`` of the bf16 peak (FlashAttention-2 paper, A100
  forward+backward 50-60 % of peak; FlashAttention-3 paper, H100 bf16 forward+backward
  ~55 %), derated like the GEMMs by the sustained clock (``sustained_ratio``); attention
  stays in bf16 under FP8 training (Transformer Engine default);
* the memory-bound element-wise kernels (norms, residual adds, activation function, rotary),
  priced at ``HBM_EFFICIENCY`` of the HBM bandwidth.  With sequence parallelism the
  hidden-sized tensors are split over TP ranks;
* every kernel other than the GEMMs (the element-wise kernels, the attention kernel, an MoE
  layer's permutation and sort) also pays the GEMMs' fixed ``t0`` (:func:`kernel_fixed_s`).

Backward passes cost twice the forward (two GEMMs per forward GEMM, the same shapes).  The
resulting efficiency is ``model FLOPs of the layer / (peak x time)``.  Small models lose to
wave quantisation, ``t0`` and the element-wise traffic (which grows with h, not h^2), large
models approach the MAMF.  Nothing here is fitted per calibration row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from advisor.engine.facts.catalog import GpuSpec, ModelSpec
from advisor.engine.facts.catalog.gpus import HOPPER_OR_NEWER
from advisor.engine.facts.constants import (
    FP8_EFFICIENCY_FACTOR,
    GEMM_HALF_EFFICIENCY_WIDTH,
    HBM_EFFICIENCY,
    QUANTIZED_PRECISIONS,
    WEIGHT_BYTES,
)
from advisor.engine.model.attention_span import training_attention_context
from advisor.engine.model.placement import expert_tp


@dataclass(frozen=True)
class ComputeProfile:
    """Measured GEMM behaviour of one GPU generation."""

    generation: str
    mamf_bf16: float
    """Maximum achievable matmul FLOPS / dense bf16 peak."""
    mamf_fp8: float
    """Same for FP8 inputs (0: use the bf16 fraction)."""
    sms: int
    tile_m: int
    tile_n: int
    gemm_latency_s: float
    attention_fraction: float
    """Flash-attention forward+backward FLOP/s as a fraction of the dense bf16 peak."""
    source: str
    sustained_ratio: float = 0.905
    """MSMF / MAMF: the clock a saturated GPU holds at its power limit vs a short burst.
    Hopper: H200 MAMF 834, MSMF 755 TFLOP/s (0.905); Blackwell: B200 MAMF 1745, MSMF 1429
    (0.819) - stas00/ml-engineering, mamf-finder.py MSMF.  Other generations: Hopper's ratio."""
    fp4_over_fp8: float = 0.0
    """NVFP4 GEMMs' achieved FLOP rate over FP8's on this GPU: TensorRT-LLM 1.3.0rc20's measured
    GEMM latencies (AIConfigurator 0.12.0, ``gemm/trtllm/1.3.0rc20/gemm_perf.parquet``), median
    TFLOP/s of the compute-bound GEMMs (M, N, K >= 4,096), NVFP4 over FP8
    (``bench/aic_gemm_table.py --fixed``); an NVFP4 GEMM is priced at the FP8 rate times it
    (:func:`gemm_peak_flops`).  0: no NVFP4 table (the FP4 peak, where the GPU has one)."""


_MAMF = (
    "stas00/ml-engineering compute/accelerator/README.md, Maximum Achievable Matmul FLOPS "
    "comparison table (mamf-finder.py)"
)
_FA2: Final = "FlashAttention-2 (Dao 2023, arXiv 2307.08691): A100 fwd+bwd 50-60 % of peak"
_FA3: Final = (
    "FlashAttention-3 (Shah et al. 2024, arXiv 2407.08608): H100 bf16 fwd+bwd ~55 % of peak"
)
_T0_H100 = (
    "t0 fitted on H100 bf16 square GEMMs (zzc0721/torch-performance-test-data #79: 2048^3 677, "
    "4096^3 789 TFLOP/s)"
)
_T0_B200: Final = (
    "t0 fitted on B200 cuBLAS square GEMMs (pyptx.dev/performance: 2048^3 1006, 8192^3 1610)"
)
_ULTRA = (
    "Blackwell Ultra: B200's SMs enabled, tiles, t0 and sustained clock assumed (the full chip has "
    "160 SMs, NVIDIA 'Inside NVIDIA Blackwell Ultra'; the enabled count is not published); "
    "attention fraction B200's / GB200's 0.55 times TensorRT-LLM 1.3.0rc20's measured BF16 "
    "context-attention rate over B200's / GB200's (AIConfigurator 0.12.0 tables, "
    "bench/aic_attention_fit.py --context: B300 1,083 / 932, GB300 1,248 / 1,024 TFLOP/s; "
    "Blackwell Ultra doubles the SFU's exponential rate, NVIDIA 'Making Softmax More Efficient "
    "with NVIDIA Blackwell Ultra')"
)
_GB300_MAMF = (
    f"{_MAMF} has no GB300 row: GB200's and B300's MAMF scaled by TensorRT-LLM 1.3.0rc20's "
    "largest measured GEMM rates (AIConfigurator 0.12.0 gemm tables, GB300 over GB200 / B300: "
    "BF16 2,107 / 1,929 / 1,878, FP8 3,749 / 3,493 / 3,376 TFLOP/s), the two estimates "
    "averaged: BF16 1,988, FP8 3,802 of 2,500 / 5,000"
)

HOPPER = ComputeProfile(
    "hopper", 0.803, 0.709, 132, 128, 256, 3e-6, 0.55, f"{_MAMF}: H100 SXM; {_FA3}; {_T0_H100}"
)
PROFILES: dict[str, ComputeProfile] = {
    "a100-80gb-sxm": ComputeProfile(
        "ampere", 0.869, 0.0, 108, 128, 128, 3e-6, 0.55, f"{_MAMF}: A100 SXM; {_FA2}; {_T0_H100}"
    ),
    "v100-sxm2-32gb": ComputeProfile(
        "volta",
        0.80,
        0.0,
        80,
        128,
        128,
        4e-6,
        0.45,
        "V100: no MAMF row; A100-class matmul fraction assumed, no flash-attention-2 support",
    ),
    "h100-sxm": HOPPER,
    "h800-sxm": HOPPER,
    "h200-sxm": ComputeProfile(
        "hopper", 0.803, 0.734, 132, 128, 256, 3e-6, 0.55, f"{_MAMF}: H200 SXM; {_FA3}"
    ),
    "h100-pcie": ComputeProfile(
        "hopper", 0.803, 0.709, 114, 128, 256, 3e-6, 0.55, f"{_MAMF}: H100 SXM row applied"
    ),
    "h20": ComputeProfile("hopper", 0.90, 0.90, 78, 128, 256, 3e-6, 0.65, f"{_MAMF}: H20 hgemm"),
    "b200": ComputeProfile(
        "blackwell",
        0.776,
        0.763,
        148,
        128,
        256,
        5e-6,
        0.55,
        f"{_MAMF}: B200 SXM; {_T0_B200}",
        sustained_ratio=0.819,
        fp4_over_fp8=1.485,
    ),
    "gb200-nvl72": ComputeProfile(
        "blackwell",
        0.729,
        0.723,
        148,
        128,
        256,
        5e-6,
        0.55,
        f"{_MAMF}: GB200; {_T0_B200}",
        sustained_ratio=0.819,
        fp4_over_fp8=1.524,
    ),
    "b300": ComputeProfile(
        "blackwell",
        0.786,
        0.745,
        148,
        128,
        256,
        5e-6,
        0.639,
        f"{_MAMF}: B300 SXM (BF16 1,769, FP8 3,353 of 2,250 / 4,500); {_T0_B200}; {_ULTRA}",
        sustained_ratio=0.819,
        fp4_over_fp8=1.708,
    ),
    "gb300-nvl72": ComputeProfile(
        "blackwell",
        0.795,
        0.760,
        148,
        128,
        256,
        5e-6,
        0.670,
        f"{_GB300_MAMF}; {_T0_B200}; {_ULTRA}",
        sustained_ratio=0.819,
        fp4_over_fp8=1.601,
    ),
    "l40s": ComputeProfile(
        "ada", 0.80, 0.70, 142, 128, 128, 3e-6, 0.50, "L40S: no MAMF row; Hopper fractions assumed"
    ),
    "mi300x": ComputeProfile(
        "cdna3", 0.514, 0.514, 304, 256, 256, 4e-6, 0.40, f"{_MAMF}: MI300X (ROCm 6.3)"
    ),
    "mi325x": ComputeProfile(
        "cdna3", 0.604, 0.604, 304, 256, 256, 4e-6, 0.45, f"{_MAMF}: MI325X (ROCm 6.2)"
    ),
    "mi355x": ComputeProfile(
        "cdna4",
        0.622,
        0.0,
        256,
        256,
        256,
        4e-6,
        0.45,
        f"{_MAMF}: MI355X (ROCm 7.0, 1,565 TFLOP/s over the catalog's 2,516.6 BF16 peak; no FP8 "
        "row: the BF16 fraction); 256 CUs (AMD Instinct MI355X datasheet); attention fraction "
        "MI325X's, no CDNA 4 flash-attention figure read",
    ),
    "gaudi3": ComputeProfile("gaudi", 0.741, 0.769, 64, 256, 256, 5e-6, 0.45, f"{_MAMF}: Gaudi 3"),
}

ELEMENTWISE_HIDDEN_PASSES: Final = 10.0
"""Forward element-wise reads+writes of hidden-sized bf16 tensors per token per layer: two norms
(read, write: 4), two residual adds (read 2, write 1: 6).  Tensor count from the activation
inventory of Korthikanti et al. 2022 (arXiv 2205.05198, section 4.1)."""
ELEMENTWISE_FFN_PASSES: Final = 3.0
"""Forward element-wise passes over FFN-sized tensors per token per layer (activation function:
read gate and up, write the product)."""
MOE_PERMUTE_PASSES = 2.0
"""Forward hidden-sized passes per routed copy of a token in an MoE layer: Megatron-Core's token
dispatcher permutes each token into expert order before the experts (``permute``: read the
token, write its ``top_k`` copies) and unpermutes after them (``unpermute``: read the copies,
write the weighted sum), megatron/core/transformer/moe/moe_utils.py (Transformer Engine's
fused ``moe_permute`` / ``moe_unpermute`` do each in one pass).  Per token: read + write of
``h`` once and of ``top_k x h`` once each way, bf16."""
ELEMENTWISE_KERNELS: Final = 5
"""Forward element-wise kernels per layer whose passes :data:`ELEMENTWISE_HIDDEN_PASSES` and
:data:`ELEMENTWISE_FFN_PASSES` count: two norms (Transformer Engine's ``LayerNormLinear`` /
``LayerNormMLP`` run each norm, with its FP8 cast, as one kernel), two residual adds (Megatron-
Core's fused bias-dropout-add) and the activation function (one fused SwiGLU / GeLU kernel).
Each pays the fixed per-kernel time :func:`kernel_fixed_s`."""
MOE_PERMUTE_KERNELS: Final = 2
"""Forward kernels of the MoE token permutation (:data:`MOE_PERMUTE_PASSES`): Transformer
Engine's fused ``moe_permute`` and ``moe_unpermute``, one each."""
MOE_SORT_KERNELS: Final = 2
"""Forward kernels of the all-to-all dispatcher's local sort (:data:`MOE_SORT_PASSES`):
``sort_chunks_by_idxs`` after the exchange and back before the return, one each."""
MOE_SORT_PASSES: Final = 4.0
"""Forward hidden-sized passes per routed copy that the all-to-all token dispatcher adds when a
GPU holds more than one expert: after the exchange it sorts the received copies by local
expert and before the return exchange sorts them back (Megatron-Core
``MoEAlltoAllTokenDispatcher``, "Permutation 2", ``sort_chunks_by_idxs``): a read and a write of
``top_k x h`` each way per token.  The DeepEP / HybridEP (flex) dispatcher writes its received
tokens once and permutes them with the ``permute`` already counted."""
MOE_ALLTOALL_HOST_SYNC_S: Final = 5.0e-3
"""Seconds one MoE layer's forward and backward of one micro-batch lose, beyond its kernels, to
the all-to-all token dispatcher's host round trip (fitted, docs/MODEL.md 8, "The all-to-all
dispatcher's host round trip"): Megatron-Core's dropless ``MoEAlltoAllTokenDispatcher`` copies
the token counts per expert to the host and synchronises the stream before the expert-parallel
exchange ("A synchronization is needed before expert parallel AlltoAll communication to get
the ``input_splits`` and ``output_splits`` CPU values", ``cuda_sync_point =
"before_ep_alltoall"``), since NCCL's all-to-all-v and the grouped GEMM take their split sizes
as host values; the sync drains the host's launch queue, so the GPU waits while the host
launches the rest of the layer.  The flex dispatcher (DeepEP / HybridEP) keeps the counts on
the GPU and has no such round trip."""
UNFUSED_ATTENTION_BYTES_PER_SCORE: Final = 13.0
"""Forward bytes per attention score without flash attention (see :func:`layer_forward`)."""
MLA_HEAD_DIM: Final = 128
"""Per-head query/key ("nope") and value width of multi-head latent attention as trained
(DeepSeek-V2 arXiv 2405.04434 and DeepSeek-V3 arXiv 2412.19437 section 4.2: d_h = 128)."""
MLA_ROPE_DIM: Final = 64
"""Decoupled RoPE query/key width per head of multi-head latent attention (d_h^R = 64, same
sources)."""
MLA_Q_LORA_RANK: Final = 1536
"""Query down-projection rank of multi-head latent attention (DeepSeek-V3 / R1 / V3.1 and
Kimi K2 ``config.json``: ``q_lora_rank`` 1536; the key/value rank is the cached latent,
``kv_dim_per_layer`` less the RoPE width: 512)."""
BACKWARD_FACTOR: Final = 2.0
"""Backward GEMMs: input and weight gradients, each the forward's size (Narayanan et al. 2021)."""


def hopper_or_newer(gpu: GpuSpec) -> bool:
    """Whether ``gpu``'s measured compute profile is a Hopper or Blackwell one (the planner's
    TP-overlap default). GPUs without a profile of their own (staff-added) read as custom."""
    return profile(gpu).generation in HOPPER_OR_NEWER


def profile(gpu: GpuSpec) -> ComputeProfile:
    """The compute profile of ``gpu``; unknown (custom) GPUs use the catalog's compute fraction."""
    p = PROFILES.get(gpu.id)
    if p is not None:
        return p
    frac = max(0.05, min(0.95, gpu.achievable_compute_fraction / 0.75))
    return ComputeProfile(
        "custom",
        frac,
        frac,
        132,
        128,
        256,
        4e-6,
        0.55 * frac,
        "custom GPU: catalog achievable_compute_fraction scaled to a matmul fraction",
    )


FP8_TILE_DEPTH_K: Final = 725.0
"""Fixed cost of one FP8 GEMM output tile (prologue, pipeline fill, epilogue) in elements of
its reduction depth K: a training FP8 GEMM takes ``1 + FP8_TILE_DEPTH_K / K`` times the deep-K
time, the MAMF being read as the rate of a deep GEMM.  Least-squares fit of
``rate / (1 + K0 / K)`` (rate 1,441 TFLOP/s, K0 725) to the nine M = 4096 rows of DeepGEMM's
first published H800 tables with N >= 4096 (deepseek-ai/DeepGEMM README at a6d97a1,
2025-02-25: normal GEMMs N x K = 7168 x 16384 1358, 4096 x 7168 1304, 7168 x 2048 1025,
24576 x 1536 990, 32768 x 512 590 TFLOPS; contiguous grouped GEMMs 4096 x 7168 1297 / 1288,
7168 x 2048 1099 / 1093), mean error 1.6 %.  Measured on Hopper only; applied to every FP8
training GEMM (Blackwell included: an assumption, no public K sweep for it)."""


CUBLAS_NO_WAVE_GENERATIONS: tuple[str, ...] = ("ampere", "hopper", "blackwell")
"""GPU generations whose 16-bit (BF16/FP16) inference GEMMs pay no wave-quantisation loss at any
M (cuBLAS picks tile, split-K and stream-K per shape): the BF16 GEMM latencies TensorRT-LLM's
PyTorch flow measured on them (NVIDIA AIConfigurator 0.12.0's SILICON database,
``aiconfigurator_core/systems/data/<gpu>/gemm/trtllm/<version>/gemm_perf.parquet``: A100 SXM
1.0.0; H100 SXM, H200 SXM, B200 SXM, GB200 1.3.0rc20) read 10.2 % (H100), 11.1 % (H200),
10.3 % (A100), 13.7 % (B200) and 13.6 % (GB200) from this roofline on average over their
126-168 shapes with M >= 256, and 42-151 % from the training wave rule (docs/MODEL.md 15.1,
"16-bit inference GEMMs").  FP8 keeps the split-K rule; generations without such a table (Ada,
CDNA, Gaudi, custom) keep it too."""
FP8_INFERENCE_OVERLAP_GENERATIONS: tuple[str, ...] = ("hopper", "blackwell")
"""GPU generations whose FP8 inference GEMMs pay no wave loss and overlap their memory and compute
phases only half: ``max(c, m) + FP8_INFERENCE_OVERLAP x min(c, m)``.  TensorRT-LLM's measured
FP8 GEMM latencies (AIConfigurator 0.12.0, ``gemm/trtllm/1.3.0rc20/gemm_perf.parquet``) read
this within -5 to +7 % at the dense decode layers' shapes on H100 and H200, where the training
wave loss misses them +12 to +37 % (few rows) and -5 to -25 % (docs/MODEL.md 15.1)."""
FP8_INFERENCE_OVERLAP: Final = 0.5
"""Share of the shorter of an FP8 inference GEMM's compute and memory times added to the longer
(0.4-0.5 the best over the H100 FP8 table's grid of M >= 129; docs/MODEL.md 15.1)."""
QUANTIZED_INFERENCE_GEMM: dict[tuple[str, str], tuple[float, float]] = {
    ("hopper", "fp8"): (10.12e-6, 0.267),
    ("blackwell", "fp8"): (10.01e-6, 0.744),
    ("blackwell", "fp4"): (6.1e-6, 0.5),
}
"""(seconds beyond the profile's ``gemm_latency_s``, share of the shorter of compute and memory
added to the longer) of an 8- or 4-bit inference GEMM by (generation, precision):
``t0 + f + max(c, m) + o x min(c, m)``.  The fixed part ``f`` is the quantized kernel's own
prologue and the activation's cast to its input format, which TensorRT-LLM's ``Linear.forward``
runs before it.  Fitted (least squares on the relative error; the rule is linear in f and o) on
TensorRT-LLM 1.3.0rc20's measured GEMM latencies (AIConfigurator 0.12.0
``gemm/trtllm/1.3.0rc20/gemm_perf.parquet``), over the decode domain M = 1-1,024, N, K in
{1,024 ... 16,384}, per generation over every table it has (Hopper: H100, H200; Blackwell: B200,
GB200, B300, GB300; NVFP4's overlap held at the half its compute-bound GEMMs read, the fixed part
fitted alone): ``bench/aic_quantized_gemm_fit.py``.
Never fitted on a serving row (docs/MODEL.md 15.1, "The decode step at the kernel tables' own
costs").  Replaces the half overlap (:data:`FP8_INFERENCE_OVERLAP`) and no fixed part, which read
the tables' whole latencies 21-50 % fast at M <= 1,024."""


def quantized_inference_gemm(generation: str, precision: str) -> tuple[float, float]:
    """(seconds beyond ``gemm_latency_s``, overlap) of an 8- or 4-bit inference GEMM on a
    generation of :data:`FP8_INFERENCE_OVERLAP_GENERATIONS`: :data:`QUANTIZED_INFERENCE_GEMM`,
    else no fixed part and :data:`FP8_INFERENCE_OVERLAP`."""
    return QUANTIZED_INFERENCE_GEMM.get((generation, precision), (0.0, FP8_INFERENCE_OVERLAP))


HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS: tuple[str, ...] = ("ampere",)
"""GPU generations whose 16-bit inference GEMMs (no wave loss, :data:`CUBLAS_NO_WAVE_GENERATIONS`)
also overlap their memory and compute phases only half, as FP8 does on Hopper:
``max(c, m) + FP8_INFERENCE_OVERLAP x min(c, m)``.  TensorRT-LLM 1.0.0's measured A100 SXM BF16
GEMM latencies (AIConfigurator 0.12.0, ``a100_sxm/gemm/trtllm/1.0.0/gemm_perf.parquet``; N, K as
``bench/aic_gemm_table.py``) read full overlap -17.0 % at M <= 128 and -26.3 % at M = 129-448
(mean signed), the half overlap -1.4 and -1.6 % (8.7 and 14.1 % mean |error|; +8.6 % at
M >= 256 against -4.2 %).  Hopper and Blackwell keep the full overlap at 16 bits (their tables
read the half overlap +7 to +23 % at M >= 256); docs/MODEL.md 15.1."""


def fp8_depth_factor(k: float) -> float:
    """Time multiplier of an FP8 training GEMM of reduction depth ``k``
    (:data:`FP8_TILE_DEPTH_K`)."""
    return 1.0 + FP8_TILE_DEPTH_K / max(1.0, k)


def kernel_fixed_s(gpu: GpuSpec, kernels: float) -> float:
    """Fixed time of ``kernels`` kernels run one after another on ``gpu``'s compute stream:
    each pays the per-kernel latency ``t0`` of :attr:`ComputeProfile.gemm_latency_s`
    (launch, prologue, epilogue; fitted on the GEMM sweeps and taken for every kernel), on top
    of its FLOP or byte time (docs/MODEL.md 5.1)."""
    return kernels * profile(gpu).gemm_latency_s


def gemm_peak_flops(gpu: GpuSpec, p: ComputeProfile, precision: str) -> float:
    """The FLOP/s a GEMM of ``precision`` is priced against (before the profile's measured
    fractions): the GPU's dense peak of that precision (bf16's where it has none), except
    NVFP4 where TensorRT-LLM's kernels were measured (:attr:`ComputeProfile.fp4_over_fp8`):
    the FP8 peak times their rate over FP8's.  B200's NVFP4 GEMMs reach 3,525 TFLOP/s (median),
    0.39 of its 9 PF FP4 peak against FP8's 0.53 of 4.5 PF (docs/MODEL.md 15.1, "NVFP4 GEMMs,
    read against TensorRT-LLM's kernels")."""
    if precision == "fp4" and p.fp4_over_fp8 > 0:
        return gpu.peak_tflops("fp8") * 1e12 * p.fp4_over_fp8
    return gpu.peak_tflops(precision) * 1e12 or gpu.peak_tflops("bf16") * 1e12


def gemm_time_s(
    gpu: GpuSpec, precision: str, m: float, n: float, k: float, inference: bool = False
) -> float:
    """Time of one M x N x K GEMM (2 M N K FLOPs) on ``gpu``.

    ``inference``: a serving forward pass (docs/MODEL.md 15.1): no Transformer Engine casts or
    transposed copies (the quantisation of an inference activation is fused into the kernel
    before it), and a GEMM whose rows fit one tile (decode: M = the batch) is split over K
    across the idle SMs (cuBLAS / CUTLASS split-K and stream-K), so it pays no wave loss; the
    loss returns linearly as M grows to two tiles' rows (no jump in a step's time at M = one
    tile).  A 16-bit inference GEMM on an Ampere, Hopper or Blackwell GPU pays no wave loss at
    any M (:data:`CUBLAS_NO_WAVE_GENERATIONS`).  An FP8 training GEMM also pays its tiles'
    fixed cost against its depth K (:func:`fp8_depth_factor`)."""
    if m <= 0 or n <= 0 or k <= 0:
        return 0.0
    p = profile(gpu)
    frac = p.mamf_fp8 if precision in QUANTIZED_PRECISIONS and p.mamf_fp8 > 0 else p.mamf_bf16
    peak = gemm_peak_flops(gpu, p, precision)
    tiles = math.ceil(m / p.tile_m) * math.ceil(n / p.tile_n)
    wave_loss = math.ceil(tiles / p.sms) * p.sms / tiles
    overlap = 0.0
    fixed = p.gemm_latency_s
    if (
        inference
        and precision in QUANTIZED_PRECISIONS
        and p.generation in FP8_INFERENCE_OVERLAP_GENERATIONS
    ):
        # a quantized inference GEMM: no wave loss, its fitted fixed part and overlap
        # (QUANTIZED_INFERENCE_GEMM; FP8_INFERENCE_OVERLAP where it has none)
        extra, overlap = quantized_inference_gemm(p.generation, precision)
        wave_loss, fixed = 1.0, fixed + extra
    elif (
        inference
        and precision not in QUANTIZED_PRECISIONS
        and p.generation in CUBLAS_NO_WAVE_GENERATIONS
    ):
        # a 16-bit inference GEMM on cuBLAS: no wave loss at any M (CUBLAS_NO_WAVE_GENERATIONS),
        # half overlap on Ampere (HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS)
        wave_loss = 1.0
        if p.generation in HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS:
            overlap = FP8_INFERENCE_OVERLAP
    elif inference:
        # split-K spreads a GEMM of one row of tiles over the idle SMs; its benefit fades as
        # a second row of tiles fills (continuous in M, the training loss from 2 tile rows)
        wave_loss = 1.0 + (wave_loss - 1.0) * min(1.0, max(0.0, m / p.tile_m - 1.0))
    flops = 2.0 * m * n * k
    compute = flops / (frac * p.sustained_ratio * peak) * wave_loss
    if precision == "fp8" and not inference:
        compute *= fp8_depth_factor(k)
    # a GEMM also streams its operands once: the memory roofline
    bytes_moved = (m * k + k * n + m * n) * WEIGHT_BYTES[precision]
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    memory = bytes_moved / hbm
    cast = 0.0
    if precision == "fp8" and not inference:
        # Transformer Engine quantises the GEMM output's consumer input and keeps a transposed
        # FP8 copy for the weight-gradient GEMM: read bf16 (2 B) + write fp8 (1 B) of the output,
        # + the transpose (1 B read + 1 B write) of the activation input
        cast = (3.0 * m * n + 2.0 * m * k) / hbm
    return max(compute, memory) + overlap * min(compute, memory) + cast + fixed


@dataclass(frozen=True)
class LayerCompute:
    """Forward time of one transformer layer for one micro-batch on one GPU, by part."""

    gemm_s: float
    attention_s: float
    elementwise_s: float
    model_flops: float
    """Forward FLOPs of the layer on this GPU as the engine counts them (full attention)."""
    backward_gemm_extra_s: float = 0.0
    """Backward GEMM seconds beyond ``BACKWARD_FACTOR x gemm_s``: the routed experts' input-
    and weight-gradient GEMMs priced at their own shapes (the weight gradient's depth K is the
    expert's rows, see :func:`expert_backward_s`)."""

    @property
    def forward_s(self) -> float:
        return self.gemm_s + self.attention_s + self.elementwise_s

    @property
    def flops_per_s(self) -> float:
        return self.model_flops / self.forward_s if self.forward_s > 0 else 0.0


def expert_backward_s(gpu: GpuSpec, precision: str, rows: float, h: float, width: float) -> float:
    """Backward seconds of one routed expert's gated MLP (up+gate ``h -> 2 width``, down
    ``width -> h``) over ``rows`` tokens, each GEMM at its own shape: the input gradients
    (rows x h from K = 2 width; rows x width from K = h) and the weight gradients (2 width x h
    and h x width outputs, K = rows: the depth of a weight-gradient GEMM is the expert's token
    count, small when many experts share a GPU's tokens)."""
    return (
        gemm_time_s(gpu, precision, rows, h, 2 * width)
        + gemm_time_s(gpu, precision, rows, width, h)
        + gemm_time_s(gpu, precision, 2 * width, h, rows)
        + gemm_time_s(gpu, precision, h, width, rows)
    )


def latent_attention(model: ModelSpec) -> bool:
    """Multi-head latent attention (DeepSeek MLA): the cached vector per layer is not
    ``2 x kv_heads x head_dim`` (576 = 512 latent + 64 RoPE)."""
    return model.kv_dim_per_layer != 2 * model.kv_heads * model.head_dim


def mla_up_projection_s(
    gpu: GpuSpec, precision: str, model: ModelSpec, tokens: int, tp: int
) -> float:
    """Forward seconds of an MLA layer's up-projections on ``tokens`` rows: the query's
    (``q_lora_rank`` -> heads x (d_h + d_h^R)) and the key/value's (latent -> heads x 2 d_h),
    heads split over tp.  Training recomputes them in the backward pass instead of keeping
    their outputs (DeepSeek-V3 report arXiv 2412.19437 section 3.2.3, "Recomputation of
    RMSNorm and MLA Up-Projection"; Megatron-Bridge's DeepSeek-V3 recipes,
    ``recompute_modules=["mla_up_proj"]``).  0 for other attention."""
    if not latent_attention(model):
        return 0.0
    heads = model.heads / max(1, tp)
    kv_rank = max(1, model.kv_dim_per_layer - MLA_ROPE_DIM)
    return gemm_time_s(
        gpu, precision, tokens, heads * (MLA_HEAD_DIM + MLA_ROPE_DIM), MLA_Q_LORA_RANK
    ) + gemm_time_s(gpu, precision, tokens, heads * 2 * MLA_HEAD_DIM, kv_rank)


def mla_projection_shapes(model: ModelSpec) -> tuple[tuple[float, float, str], ...]:
    """(N, K, the dimension tensor parallelism splits) of each projection GEMM of an MLA layer
    as trained (DeepSeek-V3 report arXiv 2412.19437 section 2.1.1 and its config.json:
    ``q_lora_rank`` 1536, ``kv_lora_rank`` 512, ``qk_nope_head_dim`` 128, ``qk_rope_head_dim``
    64, ``v_head_dim`` 128; Megatron-Core ``MLASelfAttention``): the query and key/value
    down-projections from the hidden state (one GEMM of N = 1536 + 576, not split), the
    query's up-projection to heads x 192 and the latent's to heads x 256 (split over heads),
    and the output projection from heads x 128 (split over K).  Empty without MLA."""
    if not latent_attention(model):
        return ()
    h = float(model.hidden)
    heads = float(model.heads)
    kv_rank = float(max(1, model.kv_dim_per_layer - MLA_ROPE_DIM))
    return (
        (MLA_Q_LORA_RANK + float(model.kv_dim_per_layer), h, "none"),
        (heads * (MLA_HEAD_DIM + MLA_ROPE_DIM), MLA_Q_LORA_RANK, "n"),
        (heads * 2 * MLA_HEAD_DIM, kv_rank, "n"),
        (h, heads * MLA_HEAD_DIM, "k"),
    )


def mla_up_projection_flops_per_token(model: ModelSpec) -> float:
    """Forward FLOPs per token per layer of :func:`mla_up_projection_s` (0 without MLA)."""
    if not latent_attention(model):
        return 0.0
    kv_rank = max(1, model.kv_dim_per_layer - MLA_ROPE_DIM)
    return (
        2.0
        * model.heads
        * ((MLA_HEAD_DIM + MLA_ROPE_DIM) * MLA_Q_LORA_RANK + 2 * MLA_HEAD_DIM * kv_rank)
    )


def attention_flops_per_query_key(model: ModelSpec) -> float:
    """Score (QK^T) and context (AV) FLOPs per query per key position per layer, all heads.

    Multi-head and grouped-query attention: ``2 heads x head_dim`` each, ``4 heads head_dim``
    (= ``4 h``).  MLA as trained (no absorbed projections: Megatron-Core's MLA, DeepSeek's
    training kernels) scores with per-head queries and keys of ``d_h + d_h^R`` = 192 and reads
    values of ``d_h`` = 128: ``2 heads (192 + 128)``, 2.9x the ``4 h`` of DeepSeek-V3's
    hidden size."""
    if latent_attention(model):
        return 2.0 * model.heads * (2 * MLA_HEAD_DIM + MLA_ROPE_DIM)
    return 4.0 * model.heads * model.head_dim


def _mlp_shapes(model: ModelSpec) -> tuple[float, float]:
    """(dense FFN width incl. gate, matmul params per layer of attention) for one layer."""
    kv = model.kv_dim_per_layer or 2 * model.kv_heads * model.head_dim
    attn_params = model.hidden * (2 * model.q_dim) + model.hidden * kv
    return float(attn_params), float(kv)


@lru_cache(maxsize=4096)
def layer_forward(
    gpu: GpuSpec,
    precision: str,
    model: ModelSpec,
    tokens: int,
    context: int,
    tp: int,
    ep: int,
    flash: bool = True,
    sequence_parallel: bool = True,
    sort_local: bool = False,
) -> LayerCompute:
    """One layer's forward pass over ``tokens`` rows (micro-batch x sequence / cp) on one GPU.

    ``sort_local``: the MoE token dispatcher sorts received copies by local expert and back
    (the all-to-all dispatcher, :data:`MOE_SORT_PASSES`).

    ``flash=False`` prices attention as Megatron-LM did before flash attention: batched GEMMs
    for QK^T and AV plus the score matrix (heads/tp x s x s per sequence) written by QK^T,
    read and written by the fused softmax and by dropout (+1 B mask), read by AV: 13 bytes per
    score element forward.  ``sequence_parallel=False`` keeps norms/residuals on the full
    hidden size on every TP rank (Korthikanti et al. 2022 introduced the split).

    ``context`` is the attention span per query (the full sequence; with flash attention a
    model's chunked layers execute less, :func:`training_attention_context`, while the model
    FLOPs keep Megatron's count over the whole sequence).  Matmul FLOPs are
    derived from the model's active parameters so that the total matches
    :func:`forward_flops_per_token`.
    """
    h = model.hidden
    tp = max(1, tp)
    lookup = 0.0 if model.tied_embeddings else float(model.vocab * h)
    matmul_params = max(0.0, model.active_params - lookup - float(model.vocab * h))
    per_layer = matmul_params / max(1, model.layers)
    attn_params, kv = _mlp_shapes(model)
    t = float(tokens)
    gemm = 0.0
    if latent_attention(model):
        # MLA's own projections (mla_projection_shapes): the down-projections of the query
        # and the key/value latent, their up-projections and the output projection
        attn_params = 0.0
        for n, k, split in mla_projection_shapes(model):
            attn_params += n * k
            n_rank = n / tp if split == "n" else n
            k_rank = k / tp if split == "k" else k
            gemm += gemm_time_s(gpu, precision, t, n_rank, k_rank)
        attn_params = min(attn_params, per_layer)
    else:
        attn_params = min(attn_params, per_layer)
        # attention projections: QKV (N = (q + kv)/tp) and output (K = q/tp), q = heads x
        # head_dim (the hidden size for most models)
        q = float(model.q_dim)
        gemm += gemm_time_s(gpu, precision, t, (q + kv) / tp, h)
        gemm += gemm_time_s(gpu, precision, t, h, q / tp)
    mlp_params = max(0.0, per_layer - attn_params)
    kernels = float(ELEMENTWISE_KERNELS)  # non-GEMM kernels of the forward (kernel_fixed_s)
    if model.is_moe:
        # routed experts: tokens x top_k rows spread over the experts this GPU holds; with
        # expert parallelism the experts are not tensor-parallel (placement.expert_tp): each
        # rank routes its own 1/tp of the tokens (sequence parallel) to whole experts
        etp = expert_tp(tp, ep)
        local_experts = max(1.0, model.moe_experts / max(1, ep))
        rows_per_expert = max(1.0, t * etp / tp * model.moe_top_k * max(1, ep) / model.moe_experts)
        expert_width = float(model.ffn_hidden)
        # active MLP params per layer split as top_k experts (+ shared) of up/gate/down
        per_expert_params = 3.0 * h * expert_width
        active_experts = mlp_params / per_expert_params if per_expert_params else 0.0
        shared = max(0.0, active_experts - model.moe_top_k)
        experts_run = local_experts
        rows = rows_per_expert
        expert_fwd = gemm_time_s(gpu, precision, rows, 2 * expert_width / etp, h) + gemm_time_s(
            gpu, precision, rows, h, expert_width / etp
        )
        gemm += experts_run * expert_fwd
        backward_extra = experts_run * (
            expert_backward_s(gpu, precision, rows, h, expert_width / etp)
            - BACKWARD_FACTOR * expert_fwd
        )
        if shared > 0:
            gemm += gemm_time_s(gpu, precision, t, 2 * shared * expert_width / tp, h)
            gemm += gemm_time_s(gpu, precision, t, h, shared * expert_width / tp)
        ffn_elem = (model.moe_top_k + shared) * expert_width
        # token permutation into expert order and back (MOE_PERMUTE_PASSES per copy)
        permute_hidden = MOE_PERMUTE_PASSES * (1.0 + model.moe_top_k) * h
        kernels += MOE_PERMUTE_KERNELS
        if sort_local and local_experts > 1:
            permute_hidden += MOE_SORT_PASSES * model.moe_top_k * h
            kernels += MOE_SORT_KERNELS
    else:
        # split the MLP in up (+gate) and down GEMMs with the model's FFN width
        ffn = float(model.ffn_hidden or 4 * h)
        up_width = max(ffn, mlp_params / h - ffn)  # gate+up when gated (3 h f params)
        gemm += gemm_time_s(gpu, precision, t, up_width / tp, h)
        gemm += gemm_time_s(gpu, precision, t, h, ffn / tp)
        ffn_elem = up_width
        permute_hidden = 0.0
        backward_extra = 0.0
    p = profile(gpu)
    heads_dim = model.heads * model.head_dim
    # model FLOPs count 4 s h per token (Megatron's convention, forward_flops_per_token); the
    # kernels execute the attention's own head widths (MLA: 192-wide scores, 128-wide values)
    attn_flops = 4.0 * t * context * heads_dim / tp
    flops_per_query_key = attention_flops_per_query_key(model)
    attn_exec = t * context * flops_per_query_key / tp
    bf16_peak = gpu.peak_tflops("bf16") * 1e12 or gpu.peak_tflops(precision) * 1e12
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    # element-wise kernels (sequence parallel: hidden-sized tensors split over tp)
    hidden_split = tp if sequence_parallel else 1
    elem_bytes = (
        2.0
        * t
        * (
            (ELEMENTWISE_HIDDEN_PASSES * h + permute_hidden) / hidden_split
            + ELEMENTWISE_FFN_PASSES * ffn_elem / tp
        )
    )
    if flash:
        # flash attention, causal: half of 4 t s h FLOPs executed, bf16 tensor cores, over the
        # model's span (chunked local attention skips whole chunks: attention_span)
        executed = t * training_attention_context(model, context) * flops_per_query_key / tp
        attention = 0.5 * executed / (p.attention_fraction * p.sustained_ratio * bf16_peak)
        attention += kernel_fixed_s(gpu, 1)
    else:
        attention = 0.0
        gemm += attn_exec / (p.mamf_bf16 * p.sustained_ratio * bf16_peak)
        scores = t * context * max(1.0, model.heads / tp)
        elem_bytes += UNFUSED_ATTENTION_BYTES_PER_SCORE * scores
        # the batched QK^T and AV GEMMs, the fused softmax and the dropout
        kernels += 4
    elementwise = elem_bytes / hbm + kernel_fixed_s(gpu, kernels)
    model_flops = 2.0 * per_layer * t / tp + attn_flops
    return LayerCompute(
        gemm_s=gemm,
        attention_s=attention,
        elementwise_s=elementwise,
        model_flops=model_flops,
        backward_gemm_extra_s=backward_extra,
    )


CP_RING_FORWARD_KERNELS_PER_STEP: Final = 2
"""Forward kernels per ring step of Transformer Engine's context-parallel attention
(``AttnFuncWithCPAndKVP2P.forward``, the ``p2p`` type Megatron-Core passes when
``cp_comm_type`` is unset) besides the flash-attention call: the softmax-LSE merge
(``flash_attn_fwd_softmax_lse_correction``; the first step's ``clone``) and the output merge
(``flash_attn_fwd_out_correction``; ``..._init`` on the first step), one fused kernel each.
The forward's one ``torch.cat`` of K and V into the first send buffer is counted once."""
CP_RING_BACKWARD_KERNELS_PER_STEP: Final = 3
"""Backward kernels per ring step besides the flash-attention backward call: the ``dq``
accumulation and the ``dk`` and ``dv`` accumulations (``copy_`` / ``add_`` on the step's
partial gradients; ``AttnFuncWithCPAndKVP2P.backward``)."""


def cp_ring_overhead_s(gpu: GpuSpec, model: ModelSpec, tokens: int, tp: int, cp: int) -> float:
    """Seconds one layer's forward + backward spends, for one micro-batch of ``tokens`` rows per
    GPU (sequence / cp), on context parallelism's own kernels beyond the attention FLOPs the
    layer already prices (docs/MODEL.md 6, "Context parallelism"; 0 without CP).

    Transformer Engine's ring (``AttnFuncWithCPAndKVP2P``, causal, load-balanced 2 x cp chunks)
    runs ``cp`` flash-attention calls forward and ``cp`` backward on shorter blocks where one
    GPU without CP runs one: ``cp - 1`` more calls, each paying the attention kernel's fixed
    time as the layer does (1 forward, 2.5 backward).  Per step it merges the partial outputs
    and softmax statistics forward and accumulates ``dq``, ``dk``, ``dv`` backward, each a
    kernel (:func:`kernel_fixed_s`) and an HBM pass: the first step copies (read 2 B, write 2 B
    per element), each later one adds (read 2, read 2, write 2); on a rank's later steps half
    of them cover half the rows (the causal upper / lower triangle), 3/4 of a full pass on
    average over the ranks.  The forward's concatenation of K and V reads and writes the local
    K/V once.  The point-to-point exchanges are priced as the ring's all-gather
    (:mod:`stage_time`); the attention kernel's efficiency on the shorter blocks is not
    modelled (``attention_fraction`` does not depend on the block length)."""
    if cp <= 1:
        return 0.0
    t = float(tokens)
    tp = max(1, tp)
    q_width = model.heads * model.head_dim / tp
    kv_width = (model.kv_dim_per_layer or 2 * model.kv_heads * model.head_dim) / min(
        tp, max(1, model.kv_heads)
    )
    # bytes per element over the cp steps: a copy on the first, 3/4 of an add on the others
    per_element = 4.0 + 0.75 * 6.0 * (cp - 1)
    passes = t * (2.0 * q_width * per_element + kv_width * per_element + 4.0 * kv_width)
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    kernels = (
        3.5 * (cp - 1)
        + (CP_RING_FORWARD_KERNELS_PER_STEP + CP_RING_BACKWARD_KERNELS_PER_STEP) * cp
        + 1
    )
    return passes / hbm + kernel_fixed_s(gpu, kernels)


def training_efficiency(
    gpu: GpuSpec,
    precision: str,
    model: ModelSpec,
    tokens: int,
    context: int,
    tp: int,
    ep: int = 1,
    flash: bool = True,
    sequence_parallel: bool = True,
) -> float:
    """Fraction of the dense peak that a training micro-batch of ``tokens`` rows reaches.

    Forward and backward (2x the GEMMs and the element-wise traffic, 2.5x the attention as in
    FlashAttention's backward) over the layer's model FLOPs x 3.
    """
    lc = layer_forward(
        gpu, precision, model, max(1, tokens), max(1, context), tp, ep, flash, sequence_parallel
    )
    time = (
        (1.0 + BACKWARD_FACTOR) * (lc.gemm_s + lc.elementwise_s)
        + lc.backward_gemm_extra_s
        + 3.5 * lc.attention_s
    )
    peak = gpu.peak_tflops(precision) * 1e12
    if time <= 0 or peak <= 0:
        return 0.0
    return 3.0 * lc.model_flops / time / peak


# ----------------------------------------------------------------------------- FLOPs


def forward_flops_per_token(model: ModelSpec, sequence_length: int) -> float:
    """Forward FLOPs per token: 2 x matmul parameters + attention score/context matmuls.

    Matmul parameters are the active parameters minus the input embedding lookup (tied
    embeddings double as the output head, so nothing is removed).  Attention adds
    4 * s * hidden per layer (QK^T and AV), counted over the full sequence as Megatron-LM
    does (Narayanan et al. SC'21 eq. 3: 24 h^2 (1 + s/6h) + 2 h V per token per layer).
    """
    lookup = 0.0 if model.tied_embeddings else float(model.vocab * model.hidden)
    matmul_params = max(0.0, model.active_params - lookup)
    attention = 4.0 * sequence_length * model.heads * model.head_dim * model.layers
    return 2.0 * matmul_params + attention


def compute_efficiency(gpu: GpuSpec, precision: str, tp: int, hidden: int) -> float:
    """Achieved fraction of the dense peak for transformer layers on one GPU.

    ``achievable_compute_fraction`` (catalog) x width factor w/(w + 128) with w = hidden/tp
    (small GEMMs underfill the GPU) x 0.7 for FP8.
    """
    width = hidden / max(1, tp)
    eff = gpu.achievable_compute_fraction * width / (width + GEMM_HALF_EFFICIENCY_WIDTH)
    if precision in QUANTIZED_PRECISIONS:
        eff *= FP8_EFFICIENCY_FACTOR
    return eff


def experts_hit_fraction(model: ModelSpec, tokens: float) -> float:
    """Expected share of routed experts a decode step reads: 1 - (1 - 1/E)^(tokens x top_k).

    A decode step only streams the weights of experts that received at least one token
    (uniform routing assumed), which is why small-batch MoE decode is cheaper than the total
    parameter count suggests.
    """
    if not model.is_moe:
        return 1.0
    draws = max(1.0, float(tokens)) * model.moe_top_k
    miss: float = (1.0 - 1.0 / model.moe_experts) ** draws
    return 1.0 - miss
