"""Serving compute: the serving records and constants, KV-cache sizes, decode and prefill step
times and expert-parallel communication (the KV-cache transfer is :mod:`kv_transfer`'s, the
M/G/c queues :mod:`queueing`'s).

Units: seconds, bytes, FLOPs, requests per second unless the name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, NamedTuple

from advisor.engine.facts.catalog import GpuSpec, ModelSpec
from advisor.engine.facts.constants import (
    DECODE_KERNEL_OVERHEAD_S_PER_LAYER,
    HBM_EFFICIENCY,
    HEAD_PRECISION,
    QUANTIZED_PRECISIONS,
)
from advisor.engine.facts.weights import dense_precision
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.attention_span import (
    decode_attention_context,
    prefill_attention_context,
)
from advisor.engine.model.collectives import CommDomain, make_domain
from advisor.engine.model.efficiency import (
    ELEMENTWISE_FFN_PASSES,
    ELEMENTWISE_HIDDEN_PASSES,
    MOE_PERMUTE_PASSES,
    attention_flops_per_query_key,
    experts_hit_fraction,
    gemm_time_s,
    mla_projection_shapes,
    profile,
)
from advisor.engine.model.moe_dispatch import moe_dispatch
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.model.serving.attention import DecodeAttention, decode_attention_layer_s
from advisor.engine.model.serving.gemm import (
    InferenceGemm,
    expert_kernel,
    expert_tile_m,
    inference_gemm,
    inference_gemms,
    routed_experts_s,
    total_time_s,
)
from advisor.engine.model.serving.intra import all_reduce, intra_time_s
from advisor.engine.model.serving.precision import (
    dispatch_bytes_per_element,
    kv_element_bytes,
)
from advisor.engine.result.echo import ServingPool

GB: Final = 1e9


def _intra_time_s(scenario: Scenario, op: str, nbytes: float, ranks: int) -> float:
    """Collective time inside one scale-up domain (no network): :func:`intra.intra_time_s`
    on the scenario's GPU."""
    return intra_time_s(scenario.gpu, op, nbytes, ranks)


# ----------------------------------------------------------------------------- constants

MLA_ROPE_DIM: Final = 64
"""Decoupled RoPE key width of multi-head latent attention (DeepSeek-V2, arXiv 2405.04434)."""
DECODE_TBO_OVERLAP: Final = 0.0
"""Share of the shorter of (compute, expert all-to-all) that two-micro-batch overlap hides in
decode.  DeepSeek (day-6 overview) and SGLang (lmsys.org/blog/2025-05-05-large-scale-ep) split
a decode batch in two; SGLang reports the decode gain 'varies' with batch and attention time and
that overlapped dispatch/combine kernels busy-wait, so most of the communication stays
visible.  Fitted to the LMSYS 9-node decode row (docs/MODEL.md)."""
PREFILL_TBO_OVERLAP: Final = 0.9
"""Prefill two-micro-batch overlap hides most of the all-to-all (SGLang: +27-35 % prefill
throughput from TBO; DeepSeek profile shows communication hidden); engineering estimate."""
SERVING_PREFILL_EFFICIENCY: Final = 0.45
"""Share of the GEMM/attention roofline (docs/MODEL.md 15.1) that an expert-parallel prefill
reaches: what the roofline leaves out of a DeepEP prefill pass (the SMs the normal kernels
occupy while they overlap the computation, 20-24 of 132 in DeepSeek's and DeepEP's settings;
expert load imbalance across the group, which EPLB narrows but does not remove; routing,
activation quantisation and sampling kernels; variable-length batches).  Fitted between the
DeepSeek production and RTP-LLM prefill rows (docs/MODEL.md 15.1, "MoE"; refitted on the same two
rows on 2026-12-05 when the routed experts took TensorRT-LLM's measured kernel costs,
:func:`gemm.routed_experts_s`: 0.45 again, +8.3 / -7.3 %); it was 0.50 of the catalog's flat
achievable-compute fraction before the roofline."""
PREFILL_BATCH_TOKENS: Final = 8192
"""Prompt tokens a dense instance packs into one prefill forward pass (TensorRT-LLM's
``max_num_tokens`` default, 8,192; vLLM V1 schedules the same budget per step): short prompts
share the GEMMs' rows, a long prompt is one pass of its own length."""
PREFILL_TOKENS_PER_GPU_EP: Final = 16384
"""Tokens per GPU per expert-parallel prefill batch (DeepSeek profile-data and SGLang's
large-scale EP prefill runs: 16,384 tokens per device)."""
PREFILL_TTFT_SHARE: Final = 0.5
"""A dense prefill instance is sized so one prompt's prefill uses at most half of the TTFT
target (the rest is left for queueing, KV transfer and the first token); design rule."""
CHUNKED_PREFILL_TOKENS: Final = 2048
"""Prefill tokens per step when prefill and decode share GPUs (vLLM chunked prefill default
``max_num_batched_tokens`` = 2048 for online serving)."""
MTP_DRAFT_TOKENS: Final = 1
"""DeepSeek-V3 multi-token prediction predicts one extra token (arXiv 2412.19437 section 5.4.3:
85-90 % acceptance, 1.8x tokens per second)."""
TARGET_QUANTILE: Final = 0.95
"""The share of requests the latency targets hold for: the questionnaire asks the time to first
token and the time per token "for 95 of 100 requests" (docs/ENGINE_API.md
``max_requests_per_s_at_target``); every p95 of the load model reads this quantile."""
P95_Z: Final = 1.645
"""One-sided normal point of :data:`TARGET_QUANTILE` (Phi^-1(0.95)), for the normal
approximation of a Poisson batch (M/G/inf) and of a request's decode time."""
ERLANG_MAX_SERVERS: Final = 512
"""Above this many prefill instances, Erlang C is evaluated on 512 aggregated servers of the
same total capacity (slightly pessimistic; keeps a cluster of 100k GPUs to milliseconds)."""
CURVE_POINTS: Final = 10
"""Points of the latency-vs-load curve, from 10 % to 100 % of capacity."""


# ----------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class ServingPlan:
    """Design-independent serving quantities (see module docstring)."""

    deployment: str
    prefill: ServingPool
    decode: ServingPool
    servers: int
    kv_bytes_per_token: float
    kv_bytes_per_request: float
    """KV cache of one prompt, the bytes a disaggregated deployment moves per request."""
    prompt_tokens: int
    computed_prompt_tokens: float
    output_tokens: int
    tokens_per_step: float
    """Output tokens per sequence per decode step (1 + MTP acceptance)."""
    rows_per_step: int
    """Tokens each sequence feeds through the model per decode step (1 + MTP drafts)."""
    requests_per_s: float | None
    concurrent_requests: int
    target_ttft_s: float
    target_tpot_s: float
    legacy_comm_s: float = 0.0
    """Per-step communication of a ``split`` replica from the per-token model (colocated)."""
    reference_comm_s: float = 0.0
    """The same on :func:`reference_design` (sets a closed loop's offered rate)."""
    kv_inside_domain: bool = False
    """Disaggregated copies whose prefill and decode pools share one scale-up domain (GPUs of
    one server): the KV cache moves over NVLink/NVSwitch, never the network."""
    copies: int = 1
    """Independent copies of a disaggregated deployment planned on fewer servers (1: one)."""
    copy_servers: int = 0
    """Servers of one such copy (0: one deployment on all its servers); on a platform whose
    scale-up domain spans servers each copy that fits one sits whole inside one
    (placement.whole_groups)."""

    @property
    def colocated(self) -> bool:
        return self.deployment != "disaggregated"


def latent_kv(model: ModelSpec) -> bool:
    """Multi-head latent attention: the cached vector is shared by all heads (not split by TP)."""
    return model.kv_dim_per_layer != 2 * model.kv_heads * model.head_dim


def kv_shards(model: ModelSpec, tp: int, pp: int = 1) -> int:
    """The GPUs one request's KV cache is spread over in a tensor x pipeline instance: each
    pipeline stage holds its own layers', tensor ranks split the KV heads (up to ``kv_heads``),
    and a latent (MLA) cache is whole on every tensor rank.  The serving pools' KV room and the
    deployment search's fit rule both read it."""
    return (1 if latent_kv(model) else min(tp, model.kv_heads)) * pp


def kv_bytes_per_token(model: ModelSpec, precision: str, gpu: GpuSpec | None = None) -> float:
    """layers x cached elements per layer (2 x kv_heads x head_dim for GQA, 576 for MLA) x
    :func:`kv_element_bytes` (``gpu``: the GPU an mxfp4 deployment runs on)."""
    return float(model.layers * model.kv_dim_per_layer) * kv_element_bytes(
        precision, latent_kv(model), gpu
    )


def decode_attention_flops_per_context_token(model: ModelSpec) -> float:
    """Attention FLOPs per generated token per cached token per layer.

    GQA/MHA: QK^T and AV, 4 x heads x head_dim.  MLA with absorbed projections (FlashMLA):
    every head scores against the 576-wide latent and reads back the 512-wide part,
    2 x heads x (576 + 512)."""
    if latent_kv(model):
        return 2.0 * model.heads * (2 * model.kv_dim_per_layer - MLA_ROPE_DIM)
    return 4.0 * model.heads * model.head_dim


def _expert_bytes(model: ModelSpec, wbytes: float) -> float:
    return model.expert_params / max(1, model.moe_experts) * wbytes


def experts_per_gpu(model: ModelSpec, ep: int, redundant: int = 0) -> int:
    """Routed experts each GPU hosts: ceil((experts + redundant) / ep).

    When ep does not divide the expert count, deployments add redundant copies of the busiest
    experts so every GPU holds the same number (DeepSeek: 256 + 32 redundant over EP144 = 2
    per GPU; EPLB makes EP72 possible with 288 slots)."""
    return math.ceil((model.moe_experts + redundant) / max(1, ep))


# ----------------------------------------------------------------------------- step costs


def scaleup_domain_gpus(scenario: Scenario) -> int:
    """GPUs of the job in one scale-up domain (a server, or an NVL72 rack of 18 trays:
    ``GpuSpec.job_domain_gpus``) for the modules :mod:`advisor.engine.model.plans` imports
    (this one, ``kv_transfer``); every other module reads ``plans.domain_gpus``."""
    return scenario.gpu.job_domain_gpus(scenario.gpus, scenario.gpus_per_node)


class _DecodeConsts(NamedTuple):
    """What a decode step reads of (GPU, model, precision) besides its batch, computed once."""

    kv_bytes_per_token: float
    attention_flops_per_context_token: float
    other_kernels_s: float
    """Decode kernels other than the GEMMs per layer (attention, norms, rotary, activation,
    residual): the per-layer launch cost less the GEMMs' own latency."""
    latent: bool


@lru_cache(maxsize=256)
def _decode_consts(gpu: GpuSpec, model: ModelSpec, precision: str) -> _DecodeConsts:
    gemm_t0 = profile(gpu).gemm_latency_s
    return _DecodeConsts(
        kv_bytes_per_token=kv_bytes_per_token(model, precision, gpu),
        attention_flops_per_context_token=decode_attention_flops_per_context_token(model),
        other_kernels_s=max(0.0, DECODE_KERNEL_OVERHEAD_S_PER_LAYER - GEMMS_PER_LAYER * gemm_t0),
        latent=latent_kv(model),
    )


# ----------------------------------------------------------------------------- dense roofline
# A dense model's prefill and decode on the GEMM roofline that training uses
# (docs/MODEL.md 15.1): the same four GEMMs per layer, priced by efficiency.gemm_time_s
# (inference=True), the element-wise kernels at HBM speed and the attention of the phase.

GEMMS_PER_LAYER: Final = 4
"""QKV, attention output, MLP up (+ gate), MLP down."""


class DenseLayerShapes(NamedTuple):
    """One dense layer's GEMMs on one GPU of a ``tp`` group, (N, K) each, and what its
    element-wise kernels move per row (before the 2-byte factor)."""

    qkv: tuple[float, float]
    output: tuple[float, float]
    up: tuple[float, float]
    """MLP up (+ gate when gated)."""
    down: tuple[float, float]
    elementwise_per_row: float


@lru_cache(maxsize=256)
def dense_layer_shapes(model: ModelSpec, tp: int) -> DenseLayerShapes:
    """Widths from the model's parameters, as the training model splits them; no sequence
    parallelism at inference, so norms and residuals run on the full hidden size on every
    rank."""
    h = float(model.hidden)
    lookup = 0.0 if model.tied_embeddings else float(model.vocab) * h
    matmul = max(0.0, model.active_params - lookup - float(model.vocab) * h)
    per_layer = matmul / max(1, model.layers)
    kv = float(model.kv_dim_per_layer or 2 * model.kv_heads * model.head_dim)
    q = float(model.q_dim)
    attn_params = min(2.0 * h * q + h * kv, per_layer)
    mlp = max(0.0, per_layer - attn_params)
    ffn = float(model.ffn_hidden or 4 * model.hidden)
    up = max(ffn, mlp / h - ffn)  # gate + up when gated (3 h f parameters)
    return DenseLayerShapes(
        qkv=((q + kv) / tp, h),
        output=(h, q / tp),
        up=(up / tp, h),
        down=(h, ffn / tp),
        elementwise_per_row=ELEMENTWISE_HIDDEN_PASSES * h + ELEMENTWISE_FFN_PASSES * up / tp,
    )


@lru_cache(maxsize=8192)
def dense_layer_s(
    gpu: GpuSpec, precision: str, model: ModelSpec, rows: float, tp: int
) -> tuple[float, float]:
    """(GEMMs, element-wise kernels) of one dense layer's forward over ``rows`` tokens on one
    GPU of a ``tp`` group (:func:`dense_layer_shapes`)."""
    shapes = dense_layer_shapes(model, tp)
    gemm = 0.0
    for n, k in (shapes.qkv, shapes.output, shapes.up, shapes.down):
        gemm += gemm_time_s(gpu, precision, rows, n, k, inference=True)
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    return gemm, 2.0 * rows * shapes.elementwise_per_row / hbm


def _output_head_s(scenario: Scenario, rows: float, tp: int) -> float:
    model = scenario.model
    return gemm_time_s(
        scenario.gpu,
        HEAD_PRECISION[scenario.precision],
        rows,
        model.vocab / tp,
        model.hidden,
        inference=True,
    )


def _prefill_attention_flops_per_s(scenario: Scenario) -> float:
    """Flash attention of a prefill pass: the training attention rate (``attention_fraction``
    x ``sustained_ratio``) of the bf16 peak, or of the FP8 peak when the scenario serves fp8
    weights on a GPU with FP8 tensor cores: an fp8 deployment keeps an fp8 KV cache
    (:func:`kv_element_bytes`) and runs its context attention in FP8, as ``trtllm-bench build``
    sets up every FP8 checkpoint (``use_fp8_context_fmha``, tensorrt_llm/bench/build/build.py;
    FlashAttention-3's FP8 forward pass reaches ~1.2 of H100's 1.98 PFLOP/s, arXiv 2407.08608);
    an fp4 (NVFP4) deployment keeps the same FP8 KV cache and FP8 context attention; an mxfp4
    one (gpt-oss) keeps its attention in BF16, as its checkpoint does."""
    gpu = scenario.gpu
    p = profile(gpu)
    peak = gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")
    if scenario.precision in QUANTIZED_PRECISIONS and gpu.peak_tflops("fp8") > 0:
        peak = gpu.peak_tflops("fp8")
    return p.attention_fraction * p.sustained_ratio * peak * 1e12


def dense_prefill_s(
    scenario: Scenario,
    prompt_tokens: float,
    computed_tokens: float,
    tp: int,
    pp: int,
    pack: bool = True,
) -> float:
    """Seconds of a ``tp`` x ``pp`` instance per prompt of ``prompt_tokens``, of which
    ``computed_tokens`` are new (the rest hit the prefix cache).

    Prompts are packed into passes of PREFILL_BATCH_TOKENS rows; attention is causal flash
    attention over the cached prefix and half the new tokens on average, at the training
    attention rate in bf16, or in FP8 for an fp8 deployment
    (:func:`_prefill_attention_flops_per_s`); only each prompt's last token reaches the output
    head; pipeline stages work on successive passes at once (the time per prompt counts all
    tp x pp GPUs).
    ``pack=False``: one prompt in a pass of its own (the latency of a lone request).
    Kept by what it reads of the scenario (GPU, model, precision, its scale-up domain's GPUs)
    and its arguments: the load model of every design the search prices asks for its plan's
    prompt.
    """
    key = (
        scenario.gpu,
        scenario.model,
        scenario.precision,
        scaleup_domain_gpus(scenario),
        prompt_tokens,
        computed_tokens,
        tp,
        pp,
        pack,
    )
    hit = _PREFILL_CACHE.get(key)
    if hit is None:
        if len(_PREFILL_CACHE) >= 4096:
            _PREFILL_CACHE.clear()
        hit = _PREFILL_CACHE[key] = _dense_prefill_s(
            scenario, prompt_tokens, computed_tokens, tp, pp, pack
        )
    return hit


_PREFILL_CACHE: dict[tuple[Any, ...], float] = {}
"""Dense prefill times by value, bounded (:func:`dense_prefill_s`)."""


def _dense_prefill_s(
    scenario: Scenario,
    prompt_tokens: float,
    computed_tokens: float,
    tp: int,
    pp: int,
    pack: bool,
) -> float:
    if computed_tokens <= 0:
        return 0.0
    model = scenario.model
    prompt = max(float(prompt_tokens), computed_tokens)
    packed = max(1, int(PREFILL_BATCH_TOKENS // max(1.0, computed_tokens))) if pack else 1
    rows = packed * computed_tokens
    gemm, elementwise = dense_layer_s(
        scenario.gpu, scenario.precision, model, float(math.ceil(rows)), tp
    )
    context = prefill_attention_context(model, prompt, computed_tokens)
    attention = (
        4.0
        * rows
        * context
        * model.heads
        * model.head_dim
        / tp
        / _prefill_attention_flops_per_s(scenario)
    )
    passes = model.layers * (gemm + elementwise + attention) + _output_head_s(scenario, packed, tp)
    comm = 0.0
    if 1 < tp <= scaleup_domain_gpus(scenario):
        comm = (
            2 * model.layers * _intra_time_s(scenario, "all_reduce", rows * model.hidden * 2.0, tp)
        )
    return (passes + comm) / (pp * packed)


# ----------------------------------------------------------------------------- MoE roofline
# An MoE model's prefill and decode on the same GEMM roofline (docs/MODEL.md 15.1, "MoE"):
# attention projections (MLA's own shapes) and the non-routed MLP (shared experts, dense
# layers) as dense GEMMs over the instance's rows, the routed experts as one grouped GEMM per
# projection at the rows each expert on the GPU receives.

SHARED_MLP_MIN_EXPERTS: Final = 0.5
"""Non-routed MLP parameters (shared experts, dense-FFN layers) below half of one routed
expert's per layer are read as rounding of the published parameter counts (Mixtral 8x7B:
12.9B active leaves ~1M per layer beside attention and two experts), not as a layer."""


class MoeLayerTimes(NamedTuple):
    """Seconds of one layer's parts on one GPU (forward, ``rows`` tokens)."""

    attention_gemm_s: float
    """Attention projections (QKV and output, or MLA's down-, up- and output projections)."""
    shared_gemm_s: float
    """Non-routed MLP per layer (shared experts and dense-FFN layers spread over the layers)."""
    routed_s: float
    """Routed experts of one MoE layer: up+gate and down grouped GEMMs."""
    elementwise_s: float
    """Norms, residuals, activation and the token permutation at HBM speed."""
    experts_run: float
    """Routed experts on this GPU that receive a token (expected)."""
    rows_per_expert: float


@lru_cache(maxsize=8192)
def moe_layer_s(
    gpu: GpuSpec,
    precision: str,
    model: ModelSpec,
    rows: float,
    tp: int,
    ep: int,
    experts_per_gpu: int,
    group_rows: float,
) -> MoeLayerTimes:
    """One MoE model layer over ``rows`` tokens of an instance on one GPU of its ``tp`` group.

    Widths as the training model splits the parameters (efficiency.layer_forward): attention
    (MLA: :func:`mla_projection_shapes`), routed experts of ``ffn_hidden`` (gated: 3 h w
    parameters each, top_k per token per MoE layer), the rest of the active matmul parameters
    a non-routed MLP of the same gated shape spread over the layers.  Routed experts:
    ``ep`` > 1 keeps whole experts, ``experts_per_gpu`` on each GPU, and the ``group_rows``
    tokens of the expert group send ``rows x top_k / tp`` copies to each GPU; ``ep`` = 1 splits
    every expert over ``tp`` (each GPU runs its slice of all of them on ``rows x top_k``
    copies).  Only experts that received a token run (expected share
    ``1 - (1 - 1/E)^(group_rows x top_k)``), each at its share of the copies: a small decode
    batch reads its experts' weights (memory bound), a large prefill pass runs them at the
    GEMMs' FLOP rate."""
    tp = max(1, tp)
    layer = _moe_layer_gemms(gpu, precision, model, tp, ep > 1)
    return _moe_layer(layer, model, rows, tp, ep, experts_per_gpu, group_rows)


class _MoeLayerGemms(NamedTuple):
    """What :func:`moe_layer_s` and :func:`moe_decode_s` read of (GPU, precision, model, tp,
    expert parallelism) besides their rows, looked up once per instance shape instead of at
    every batch (one key hashed instead of five)."""

    attention: tuple[InferenceGemm, ...]
    shared: tuple[InferenceGemm, ...]
    up: InferenceGemm
    down: InferenceGemm
    elementwise_bytes_per_row: float
    hbm: float
    head: InferenceGemm
    """The output head, ``vocab / tp`` x ``hidden`` (a decode step's)."""
    consts: _DecodeConsts
    expert_rate: float
    """FLOP/s of the routed experts' grouped GEMMs (:func:`gemm.expert_kernel`)."""
    expert_fixed_s: float
    expert_tile_s: float
    """The experts' kernels' fixed cost and cost per wave of tiles (:func:`gemm.expert_kernel`)."""
    expert_tile_m: float
    """Rows per tile of the experts' kernels, 0.0 for the GEMM profile's
    (:func:`gemm.expert_tile_m`)."""


@lru_cache(maxsize=256)
def _moe_layer_gemms(
    gpu: GpuSpec, precision: str, model: ModelSpec, tp: int, expert_parallel: bool
) -> _MoeLayerGemms:
    shapes = _moe_layer_shapes(model, tp, expert_parallel)
    dense = dense_precision(precision)
    if dense == precision:
        gemms = inference_gemms(gpu, precision, shapes.gemms)  # attention, shared, up, down
    else:  # mxfp4: the routed experts in their own format, the rest 16-bit
        gemms = inference_gemms(gpu, dense, shapes.gemms[:-2]) + inference_gemms(
            gpu, precision, shapes.gemms[-2:]
        )
    rate, fixed, tile = expert_kernel(gpu, precision)
    return _MoeLayerGemms(
        attention=gemms[: len(shapes.attention)],
        shared=gemms[len(shapes.attention) : -2],
        up=gemms[-2],
        down=gemms[-1],
        elementwise_bytes_per_row=shapes.elementwise_bytes_per_row,
        hbm=gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY,
        head=inference_gemm(gpu, HEAD_PRECISION[precision], model.vocab / tp, model.hidden),
        consts=_decode_consts(gpu, model, precision),
        expert_rate=rate,
        expert_fixed_s=fixed,
        expert_tile_s=tile,
        expert_tile_m=expert_tile_m(gpu, precision),
    )


def _moe_layer(
    layer: _MoeLayerGemms,
    model: ModelSpec,
    rows: float,
    tp: int,
    ep: int,
    experts_per_gpu: int,
    group_rows: float,
) -> MoeLayerTimes:
    """:func:`moe_layer_s` on its instance's GEMMs (``tp`` >= 1)."""
    attention_gemm = total_time_s(layer.attention, rows)
    shared = total_time_s(layer.shared, rows)
    hit = experts_hit_fraction(model, max(1.0, group_rows))
    if ep > 1:
        experts_run = experts_per_gpu * hit
        copies = rows * model.moe_top_k / tp
    else:
        experts_run = model.moe_experts * hit
        copies = rows * model.moe_top_k
    per_expert = copies / max(experts_run, 1e-9)
    routed = routed_experts_s(
        layer.up,
        layer.down,
        layer.expert_rate,
        experts_run,
        per_expert,
        layer.expert_fixed_s,
        layer.expert_tile_s,
        layer.expert_tile_m,
    )
    elementwise = 2.0 * rows * layer.elementwise_bytes_per_row / layer.hbm
    # tuple.__new__: what the NamedTuple's own (interpreted) __new__ calls, without its frame
    values = (attention_gemm, shared, routed, elementwise, experts_run, per_expert)
    return tuple.__new__(MoeLayerTimes, values)


class _MoeShapes(NamedTuple):
    """What :func:`moe_layer_s` reads of (model, tp, expert parallelism) besides its rows,
    computed once per instance shape instead of at every batch."""

    hidden: float
    attention: tuple[tuple[float, float], ...]
    """(N, K) on one GPU of each attention projection GEMM."""
    shared: tuple[tuple[float, float], ...]
    """(N, K) on one GPU of the non-routed MLP's two GEMMs (none without one)."""
    elementwise_bytes_per_row: float
    """Element-wise passes per row before the 2-byte factor: hidden, permutation, FFN."""
    gemms: tuple[tuple[float, float], ...]
    """(N, K) on one GPU: attention, shared, a routed expert's up, down (whole under EP)."""


@lru_cache(maxsize=256)
def _moe_layer_shapes(model: ModelSpec, tp: int, expert_parallel: bool) -> _MoeShapes:
    h = float(model.hidden)
    lookup = 0.0 if model.tied_embeddings else float(model.vocab) * h
    matmul = max(0.0, model.active_params - lookup - float(model.vocab) * h)
    per_layer = matmul / max(1, model.layers)
    attention: tuple[tuple[float, float], ...]
    mla = mla_projection_shapes(model)
    if mla:
        attn_params = 0.0
        projections = []
        for n, k, split in mla:
            attn_params += n * k
            projections.append((n / tp if split == "n" else n, k / tp if split == "k" else k))
        attention = tuple(projections)
    else:
        kv = float(model.kv_dim_per_layer or 2 * model.kv_heads * model.head_dim)
        q = float(model.q_dim)
        attn_params = 2.0 * h * q + h * kv
        attention = (((q + kv) / tp, h), (h, q / tp))
    width = float(model.ffn_hidden)
    expert_params = 3.0 * h * width
    routed_per_layer = model.moe_top_k * expert_params * model.moe_layers / max(1, model.layers)
    rest = max(0.0, per_layer - min(attn_params, per_layer) - routed_per_layer)
    shared_width = rest / (3.0 * h) if rest >= SHARED_MLP_MIN_EXPERTS * expert_params else 0.0
    shared: tuple[tuple[float, float], ...] = ()
    if shared_width > 0:
        shared = ((2.0 * shared_width / tp, h), (h, shared_width / tp))
    ffn_elem = (model.moe_top_k * width * model.moe_layers / max(1, model.layers)) / (
        1 if expert_parallel else tp
    ) + shared_width / tp
    moe_share = model.moe_layers / max(1, model.layers)
    expert_width = width if expert_parallel else width / tp
    return _MoeShapes(
        hidden=h,
        attention=attention,
        shared=shared,
        gemms=attention + shared + ((2.0 * expert_width, h), (h, expert_width)),
        elementwise_bytes_per_row=(
            ELEMENTWISE_HIDDEN_PASSES * h
            + moe_share * MOE_PERMUTE_PASSES * (1.0 + model.moe_top_k) * h
            + ELEMENTWISE_FFN_PASSES * ffn_elem
        ),
    )


def moe_decode_s(
    scenario: Scenario,
    pool: ServingPool,
    batch: float,
    rows_per_step: int,
    context: float,
    tp_comm: bool = True,
) -> float:
    """One decode step of an MoE instance of ``pool`` holding ``batch`` sequences
    (:meth:`MoeDecode.seconds`, the instance's figures looked up once per instance)."""
    key = (id(scenario), id(pool), rows_per_step, context)
    hit = _MOE_DECODE_CACHE.get(key)
    if hit is None or hit.scenario is not scenario or hit.pool is not pool:
        if len(_MOE_DECODE_CACHE) >= 256:
            _MOE_DECODE_CACHE.clear()
        hit = _MOE_DECODE_CACHE[key] = MoeDecode(scenario, pool, rows_per_step, context)
    return hit.seconds(batch, tp_comm)


class MoeDecode:
    """A decode step of an MoE instance of ``pool`` at any batch (:meth:`seconds`): what it
    reads of the scenario and the pool (the layer's GEMMs, the attention's form, the cache's
    split) looked up once, not at every batch the load model prices."""

    def __init__(
        self, scenario: Scenario, pool: ServingPool, rows_per_step: int, context: float
    ) -> None:
        model = scenario.model
        self.scenario, self.pool, self.model = scenario, pool, model
        self.rows_per_step, self.context = rows_per_step, context
        self.tp, self.ep = max(1, pool.tp), max(1, pool.ep)
        self.pp = 1 if self.ep > 1 else max(1, pool.pp)
        self.gpus_per_instance = max(1, pool.gpus_per_instance)
        self.experts_per_gpu = max(1, pool.experts_per_gpu)
        self.layer = _moe_layer_gemms(scenario.gpu, scenario.precision, model, self.tp, self.ep > 1)
        consts = self.layer.consts
        self.kv_split = 1 if consts.latent else min(self.tp, model.kv_heads)
        kv_element = kv_element_bytes(scenario.precision, consts.latent, scenario.gpu)
        self.attention = DecodeAttention(scenario.gpu, kv_element, consts.latent)
        self.all_reduce = (
            all_reduce(scenario.gpu, self.tp)
            if 1 < self.tp <= scaleup_domain_gpus(scenario)
            else None
        )

    def seconds(self, batch: float, tp_comm: bool = True) -> float:
        """Per layer the attention projections and the non-routed MLP over the rows, max(KV
        read, attention FLOPs), the element-wise kernels and the other kernels' launch; per MoE
        layer the routed experts' grouped GEMMs (:func:`moe_layer_s`); the output head for
        every row.  Without expert parallelism pipeline stages run pp micro-batches as the
        dense path does; with it the instance is one attention data-parallel rank (``tp``
        GPUs) of an expert group of ``ep`` GPUs whose instances all step together."""
        model, layer, consts = self.model, self.layer, self.layer.consts
        tp, ep, pp = self.tp, self.ep, self.pp
        live = max(batch, 0.0) / pp
        # continuous in the batch (the load model's fixed points need a step that grows)
        rows = max(1.0, live * self.rows_per_step)
        group = rows * ep / self.gpus_per_instance if ep > 1 else rows
        # the layer of a batch not kept (moe_layer_s keeps prefill passes): every batch is new
        parts = _moe_layer(layer, model, float(rows), tp, ep, self.experts_per_gpu, group)
        kv_read = live * self.context * consts.kv_bytes_per_token / model.layers
        flops = rows * self.context * consts.attention_flops_per_context_token / tp
        attention = self.attention.seconds(kv_read / self.kv_split, flops)
        per_layer = (
            parts.attention_gemm_s
            + parts.shared_gemm_s
            + parts.elementwise_s
            + attention
            + consts.other_kernels_s
        )
        head = layer.head.time_s(rows)
        stage = model.layers / pp * per_layer + model.moe_layers / pp * parts.routed_s + head / pp
        step = pp * stage
        if tp_comm and self.all_reduce is not None:
            # _intra_time_s's all-reduce (rows >= 1, so its bytes are > 0), its pricer kept
            step += 2 * model.layers * self.all_reduce.seconds(rows * model.hidden * 2.0)
        return step


_MOE_DECODE_CACHE: dict[tuple[int, int, int, float], MoeDecode] = {}
"""The instances :func:`moe_decode_s` prices, by the identity of the scenario and pool objects
(each entry holds them, so an identity is not reused while kept), bounded."""


def _moe_prefill_attention_flops_per_s(scenario: Scenario) -> float:
    """Context attention of an MoE prefill: in FP8 only where the deployment keeps an fp8 KV
    cache (:func:`kv_element_bytes`: GQA models, and MLA under fp4); MLA caches stay bf16
    otherwise (FlashMLA), so MLA's prefill attention runs in bf16 at the training attention
    rate."""
    if kv_element_bytes(scenario.precision, latent_kv(scenario.model), scenario.gpu) < 2.0:
        return _prefill_attention_flops_per_s(scenario)
    gpu = scenario.gpu
    p = profile(gpu)
    peak = gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")
    return p.attention_fraction * p.sustained_ratio * peak * 1e12


def moe_prefill_pass_s(
    scenario: Scenario, pool: ServingPool, rows: float, prompts: float, context: float
) -> float:
    """One prefill forward pass of ``rows`` tokens (``prompts`` prompts, attention span
    ``context`` per token: cached prefix + half the new tokens) on an MoE instance, without
    expert-parallel communication; pipeline stages one after another (the caller divides)."""
    model = scenario.model
    tp, ep = max(1, pool.tp), max(1, pool.ep)
    group = rows * ep / max(1, pool.gpus_per_instance) if ep > 1 else rows
    parts = moe_layer_s(
        scenario.gpu,
        scenario.precision,
        model,
        float(rows),
        tp,
        ep,
        max(1, pool.experts_per_gpu),
        group,
    )
    attention = (
        rows
        * context
        * attention_flops_per_query_key(model)
        / tp
        / _moe_prefill_attention_flops_per_s(scenario)
    )
    passes = (
        model.layers
        * (parts.attention_gemm_s + parts.shared_gemm_s + parts.elementwise_s + attention)
        + model.moe_layers * parts.routed_s
        + _output_head_s(scenario, max(1.0, prompts), tp)
    )
    if 1 < tp <= scaleup_domain_gpus(scenario):
        passes += (
            2 * model.layers * _intra_time_s(scenario, "all_reduce", rows * model.hidden * 2.0, tp)
        )
    return passes


def moe_prefill_alone_s(scenario: Scenario, pool: ServingPool) -> float:
    """One prompt alone on an MoE instance (no packing): the latency a request sees."""
    inf = scenario.inference
    assert inf is not None
    tokens = inf.prompt_tokens * (1.0 - inf.prefix_cache_hit_rate)
    if tokens <= 0:
        return 0.0
    context = prefill_attention_context(scenario.model, inf.prompt_tokens, tokens)
    return moe_prefill_pass_s(scenario, pool, tokens, 1.0, context)


_DECODE_CACHE: dict[tuple[Any, ...], float] = {}
"""Dense decode steps by value, bounded: every replica count the deployment search weighs and
every rate the load model tries asks again for the decode step of the same batch on the same
tensor-parallel instance."""


def dense_decode_s(
    scenario: Scenario,
    batch: float,
    rows_per_step: int,
    context: float,
    tp: int,
    pp: int,
    tp_comm: bool = True,
) -> float:
    """One decode step of a dense ``tp`` x ``pp`` instance holding ``batch`` sequences.

    Each stage works on batch / pp sequences at a time (pp micro-batches); per layer the GEMMs
    over the micro-batch's rows, max(KV read, attention FLOPs), the element-wise kernels and
    the other kernels' launch; the output head for every row; the tensor-parallel all-reduces
    inside the scale-up domain, a server or an NVL72 rack (``tp_comm=False``: without them,
    for callers that price them apart).  Kept by what it reads of the scenario (GPU, model,
    precision, its scale-up domain's GPUs) and its arguments."""
    key = (
        scenario.gpu,
        scenario.model,
        scenario.precision,
        scaleup_domain_gpus(scenario),
        batch,
        rows_per_step,
        context,
        tp,
        pp,
        tp_comm,
    )
    hit = _DECODE_CACHE.get(key)
    if hit is None:
        if len(_DECODE_CACHE) >= 65536:
            _DECODE_CACHE.clear()
        hit = _DECODE_CACHE[key] = _dense_decode_s(
            scenario, batch, rows_per_step, context, tp, pp, tp_comm
        )
    return hit


def _dense_decode_s(
    scenario: Scenario,
    batch: float,
    rows_per_step: int,
    context: float,
    tp: int,
    pp: int,
    tp_comm: bool,
) -> float:
    model = scenario.model
    gpu, precision = scenario.gpu, scenario.precision
    consts = _decode_consts(gpu, model, precision)
    layers = model.layers
    live = max(batch, 0.0) / pp
    rows = live * rows_per_step
    gemm, elementwise = dense_layer_s(gpu, precision, model, float(max(1, math.ceil(rows))), tp)
    kv_split = min(tp, model.kv_heads)
    kv_read = live * context * consts.kv_bytes_per_token / layers
    flops = rows * context * consts.attention_flops_per_context_token
    attention = decode_attention_layer_s(
        gpu,
        kv_element_bytes(precision, consts.latent, gpu),
        consts.latent,
        kv_read / kv_split,
        flops / tp,
    )
    layer = gemm + elementwise + attention + consts.other_kernels_s
    head_gemm = inference_gemm(gpu, HEAD_PRECISION[precision], model.vocab / tp, model.hidden)
    head = head_gemm.time_s(max(1.0, rows))
    stage = layers / pp * layer + head / pp
    step = pp * stage
    if tp_comm and 1 < tp <= scaleup_domain_gpus(scenario) and rows > 0:
        step += 2 * layers * _intra_time_s(scenario, "all_reduce", rows * model.hidden * 2.0, tp)
    return step


def decode_compute_s(
    scenario: Scenario,
    serving_plan: ServingPlan,
    pool: ServingPool,
    batch: float,
    tp_comm: bool = True,
) -> float:
    """One decode step of an instance holding ``batch`` sequences, without the network.

    Per GPU: GEMMs take max(weights read, GEMM FLOPs); attention takes max(KV read, attention
    FLOPs); pipeline stages run one after another; plus a launch cost per layer and the
    tensor-parallel all-reduces inside the scale-up domain (a server, or an NVL72 rack's trays;
    ``tp_comm=False``: the GPUs' own time, without them).
    """

    model = scenario.model
    context = decode_attention_context(
        model, serving_plan.prompt_tokens, serving_plan.output_tokens
    )
    if not model.is_moe:
        return dense_decode_s(
            scenario, batch, serving_plan.rows_per_step, context, pool.tp, pool.pp, tp_comm
        )
    return moe_decode_s(scenario, pool, batch, serving_plan.rows_per_step, context, tp_comm)


_ROUND3_CACHE: dict[float, float] = {}
"""``round(share, 3)`` by value, bounded: the load model rounds a load point's share of the NICs
(in [0.05, 1]) for its step table and the expert all-to-all's domain at every decode step it
prices, and CPython rounds to a number of digits through a correctly rounded decimal
conversion (a look-up costs a tenth of it)."""


def round3(x: float) -> float:
    """``round(x, 3)``, kept by value."""
    hit = _ROUND3_CACHE.get(x)
    if hit is None:
        if len(_ROUND3_CACHE) >= 4096:
            _ROUND3_CACHE.clear()
        hit = _ROUND3_CACHE[x] = round(x, 3)
    return hit


def ep_domain(
    scenario: Scenario, pool: ServingPool, design: Design | None, bound: str, net_share: float
) -> CommDomain:
    """The expert group's communicator on ``design`` at ``net_share`` of its NICs."""
    return _ep_domain_cached(
        scenario.gpu, scaleup_domain_gpus(scenario), pool.ep, design, bound, round3(net_share)
    )


@lru_cache(maxsize=512)
def _ep_domain_cached(
    gpu: GpuSpec, gpn: int, ep: int, design: Design | None, bound: str, net_share: float
) -> CommDomain:
    return _make_ep_domain(gpu, gpn, ep, design, bound, net_share)


def _make_ep_domain(
    gpu: GpuSpec, gpn: int, ep: int, design: Design | None, bound: str, net_share: float
) -> CommDomain:
    nodes = max(1, ep // gpn)
    per_node = min(ep, gpn)
    return make_domain(
        nodes=nodes,
        ranks_per_node=per_node,
        scaleup=ScaleUp.of(gpu),
        fabric_id=design.fabric if design is not None and nodes > 1 else None,
        nic_gbps=design.nic_gbps if design is not None else 0.0,
        nics_per_node=design.nics_per_node if design is not None else 0,
        oversubscription=design.oversubscription if design is not None else 1.0,
        adaptive_routing=design.adaptive_routing if design is not None else None,
        bound=bound,
        net_share=max(0.05, net_share),
        transport=(design.transport or None) if design is not None else None,
    )


def ep_comm_s(
    scenario: Scenario,
    pool: ServingPool,
    tokens_per_gpu: float,
    design: Design | None,
    bound: str,
    mode: str,
    net_share: float = 1.0,
    domain: CommDomain | None = None,
) -> float:
    """Dispatch + combine per MoE layer, all MoE layers (DeepEP model in collectives).

    Without a design (planning), only the NVLink part is priced.  ``domain``: the group's
    :func:`ep_domain` at ``net_share``, when the caller keeps it."""
    model = scenario.model
    if pool.ep <= 1 or not model.is_moe or tokens_per_gpu <= 0:
        return 0.0
    if design is None and pool.ep // scaleup_domain_gpus(scenario) > 1:
        # the group spans servers (its domain's nodes, :func:`_make_ep_domain`) and there is
        # no network to price: decided before the domain is built
        return 0.0
    dom = ep_domain(scenario, pool, design, bound, net_share) if domain is None else domain
    tokens = max(1, math.ceil(tokens_per_gpu))
    return model.moe_layers * _dispatch_combine_s(
        tokens,
        model.hidden,
        model.moe_top_k,
        dispatch_bytes_per_element(scenario),
        dom,
        mode,
    )


@lru_cache(maxsize=8192)
def _dispatch_combine_s(
    tokens: int, hidden: int, top_k: int, dispatch_bytes: float, dom: CommDomain, mode: str
) -> float:
    """One MoE layer's dispatch + combine (pure: the load searches revisit the same token
    counts on the same domain thousands of times per evaluate)."""
    disp = moe_dispatch(
        tokens_per_rank=tokens,
        hidden=hidden,
        top_k=top_k,
        bytes_per_element=dispatch_bytes,
        d=dom,
        mode=mode,
    )
    comb = moe_dispatch(
        tokens_per_rank=tokens, hidden=hidden, top_k=top_k, bytes_per_element=2.0, d=dom, mode=mode
    )
    return disp.time_s + comb.time_s


def overlapped(compute_s: float, comm_s: float, overlap: float) -> float:
    """Two-micro-batch overlap: max(C, A) + (1 - overlap) x min(C, A)."""
    return max(compute_s, comm_s) + (1.0 - overlap) * min(compute_s, comm_s)


def decode_step_s(
    scenario: Scenario,
    serving_plan: ServingPlan,
    batch: float,
    design: Design | None,
    bound: str,
    net_share: float = 1.0,
    compute_s: float | None = None,
    domain: CommDomain | None = None,
) -> float:
    """One decode step on design ``d`` (``compute_s``: a precomputed decode_compute_s;
    ``domain``: the expert group's :func:`ep_domain` at ``net_share``, kept by the caller)."""
    pool = serving_plan.decode
    compute = (
        decode_compute_s(scenario, serving_plan, pool, batch) if compute_s is None else compute_s
    )
    # tokens each GPU dispatches: the instance's rows spread over its GPUs
    rows = batch * serving_plan.rows_per_step / max(1, pool.gpus_per_instance)
    comm = ep_comm_s(scenario, pool, rows, design, bound, "low_latency", net_share, domain)
    step = overlapped(compute, comm, DECODE_TBO_OVERLAP) if comm > 0 else compute
    return step + serving_plan.legacy_comm_s


def prefill_service_s(
    scenario: Scenario,
    serving_plan: ServingPlan,
    pool: ServingPool,
    design: Design | None,
    bound: str,
) -> float:
    """Seconds one instance spends on one request's prompt at full batching efficiency."""

    model = scenario.model
    tokens = serving_plan.computed_prompt_tokens
    if tokens <= 0:
        return 0.0
    if not model.is_moe:
        return dense_prefill_s(scenario, serving_plan.prompt_tokens, tokens, pool.tp, pool.pp)
    # attention span per new token: the cached prefix and half the new tokens (causal)
    context = prefill_attention_context(model, serving_plan.prompt_tokens, tokens)
    if pool.ep > 1:
        # expert-parallel prefill: DeepEP normal kernels over a batch of
        # PREFILL_TOKENS_PER_GPU_EP tokens, two micro-batches hiding most of the all-to-all
        batch = max(PREFILL_TOKENS_PER_GPU_EP, tokens)
        compute = (
            moe_prefill_pass_s(scenario, pool, batch, batch / tokens, context)
            / SERVING_PREFILL_EFFICIENCY
        )
        comm = ep_comm_s(scenario, pool, batch, design, bound, "normal")
        per_batch = overlapped(compute, comm, PREFILL_TBO_OVERLAP)
        return per_batch * tokens / batch
    # prompts packed into passes of PREFILL_BATCH_TOKENS rows as the dense path does;
    # pipeline stages work on successive passes at once (time per prompt over all stages)
    packed = max(1, int(PREFILL_BATCH_TOKENS // max(1.0, tokens)))
    rows = packed * tokens
    return moe_prefill_pass_s(scenario, pool, rows, packed, context) / (pool.pp * packed)


def decode_capacity_rps(
    scenario: Scenario, serving_plan: ServingPlan, design: Design | None, bound: str
) -> float:
    """Requests per second the decode pool finishes at the largest batch that meets the
    time-per-token target (or fits memory)."""
    batch, step = _max_decode_batch_step(scenario, serving_plan, design, bound)
    return (
        batch
        * serving_plan.decode.instances
        * serving_plan.tokens_per_step
        / (step * serving_plan.output_tokens)
    )


def max_decode_batch(
    scenario: Scenario, serving_plan: ServingPlan, design: Design | None, bound: str
) -> float:
    """Largest batch per instance with step / tokens_per_step <= target (at least 1)."""
    return _max_decode_batch_step(scenario, serving_plan, design, bound)[0]


BISECTION_HALVINGS: Final = 30
"""Halvings of the largest-decode-batch bisection on [1, KV slots] (pools replays them)."""


def _max_decode_batch_step(
    scenario: Scenario, serving_plan: ServingPlan, design: Design | None, bound: str
) -> tuple[float, float]:
    """:func:`max_decode_batch` and the decode step at that batch (the bisection has priced
    it: :func:`decode_capacity_rps` needs it too)."""
    cap = float(serving_plan.decode.max_batch_per_instance)
    target = serving_plan.target_tpot_s
    tokens_per_step = serving_plan.tokens_per_step

    def step(b: float) -> float:
        return decode_step_s(scenario, serving_plan, b, design, bound)

    cap_step = step(cap)
    if cap_step / tokens_per_step <= target:
        return cap, cap_step
    lo, hi = 1.0, cap
    lo_step = step(lo)
    if lo_step / tokens_per_step > target:
        return lo, lo_step
    for _ in range(BISECTION_HALVINGS):
        mid = (lo + hi) / 2
        mid_step = step(mid)
        if mid_step / tokens_per_step <= target:
            lo, lo_step = mid, mid_step
        else:
            hi = mid
    return lo, lo_step


# ----------------------------------------------------------------------------- KV transfer
