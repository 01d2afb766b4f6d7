"""Inference serving as deployed now: deployments, pools, KV-cache transfer and load.

Deployments (``inference.deployment``):

* ``replicas``: each replica fits one server (or NVLink domain); servers never talk.
* ``split``: one replica spans servers (tensor/pipeline parallel, or wide expert parallel with
  attention data-parallel), prefill and decode share the GPUs (chunked prefill).
* ``disaggregated``: a prefill pool and a decode pool on different servers (NVIDIA Dynamo,
  llm-d, SGLang, Mooncake); every request's KV cache crosses the fabric from prefill to decode.

Load: an open arrival rate (Poisson, ``inference.requests_per_s``) or a closed loop of
``concurrent_requests`` users.  Decode uses continuous batching: the in-flight batch follows
Little's law (batch = arrival rate x output tokens x time per token).  The prefill queue is an
M/G/c queue (Erlang C with the Allen-Cunneen correction for deterministic service); time to
first token = queueing + prefill + KV transfer + first decode step.  docs/MODEL.md ("Serving")
lists every formula and constant with its source.

Units: seconds, bytes, FLOPs, requests per second unless the name says otherwise.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from advisor.engine.catalog import GpuSpec, ModelSpec
from advisor.engine.collectives import (
    CommDomain,
    make_domain,
    moe_dispatch,
    nic_bytes_per_s,
    scaleup_time_s,
)
from advisor.engine.constants import (
    DECODE_KERNEL_OVERHEAD_S_PER_LAYER,
    FABRICS,
    HBM_EFFICIENCY,
    MEMORY_USABLE_FRACTION,
    WEIGHT_BYTES,
)
from advisor.engine.efficiency import (
    achievable_flops_per_s,
    experts_hit_fraction,
    forward_flops_per_token,
)
from advisor.engine.errors import ScenarioError
from advisor.engine.scenario import Design, PoolSpec, Scenario

GB = 1e9


def _intra_time_s(scenario: Scenario, op: str, nbytes: float, ranks: int) -> float:
    """Collective time inside one scale-up domain (no network)."""
    return scaleup_time_s(scenario.gpu, op, nbytes, ranks)


# ----------------------------------------------------------------------------- constants

KV_TRANSFER_SETUP_S = 200e-6
"""Per-request handshake of a KV transfer (decode pre-allocates, prefill is told where to
write: SGLang PD design, Mooncake transfer engine); engineering estimate, two round trips plus
bookkeeping."""
ATTENTION_DECODE_EFFICIENCY = 0.67
"""Decode attention reaches 660 of 989 dense bf16 TFLOP/s on H800 when compute bound
(deepseek-ai/FlashMLA README: 660 TFLOPS, 3000 GB/s memory bound)."""
MLA_ROPE_DIM = 64
"""Decoupled RoPE key width of multi-head latent attention (DeepSeek-V2, arXiv 2405.04434)."""
DECODE_TBO_OVERLAP = 0.0
"""Share of the shorter of (compute, expert all-to-all) that two-micro-batch overlap hides in
decode.  DeepSeek (day-6 overview) and SGLang (lmsys.org/blog/2025-05-05-large-scale-ep) split
a decode batch in two; SGLang reports the decode gain 'varies' with batch and attention time and
that overlapped dispatch/combine kernels busy-wait, so most of the communication stays
visible.  Fitted to the LMSYS 9-node decode row (docs/MODEL.md)."""
PREFILL_TBO_OVERLAP = 0.9
"""Prefill two-micro-batch overlap hides most of the all-to-all (SGLang: +27-35 % prefill
throughput from TBO; DeepSeek profile shows communication hidden); engineering estimate."""
SERVING_PREFILL_EFFICIENCY = 0.50
"""Prefill reaches this share of the training compute model's GEMM efficiency: variable-length
batches, expert load imbalance (SGLang: default EPLB 20 % slower than perfect balance), routing,
quantisation and sampling kernels.  Fitted between the DeepSeek production and RTP-LLM prefill
rows (docs/MODEL.md)."""
DENSE_PREFILL_EFFICIENCY = 1.0
"""A dense (non-expert-parallel) prefill reaches the training compute model's GEMM rate: none
of the MoE losses above apply.  Checked against TensorRT-LLM's published in-flight-batching
throughput of Llama 3.1 405B FP8 on 8 H100 (perf-overview, v1.0 PyTorch backend): 0.5 read
2048/128 at 187 vs 453 output tokens/s and 5000/500 at 279 vs 610; 1.0 reads 328 and 473, and
2048/2048 at 2,279 vs 2,296 (tests/engine/test_serving_load.py, docs/MODEL.md)."""
PREFILL_TOKENS_PER_GPU_EP = 16384
"""Tokens per GPU per expert-parallel prefill batch (DeepSeek profile-data and SGLang's
large-scale EP prefill runs: 16,384 tokens per device)."""
PREFILL_TTFT_SHARE = 0.5
"""A dense prefill instance is sized so one prompt's prefill uses at most half of the TTFT
target (the rest is left for queueing, KV transfer and the first token); design rule."""
CHUNKED_PREFILL_TOKENS = 2048
"""Prefill tokens per step when prefill and decode share GPUs (vLLM chunked prefill default
``max_num_batched_tokens`` = 2048 for online serving)."""
MTP_DRAFT_TOKENS = 1
"""DeepSeek-V3 multi-token prediction predicts one extra token (arXiv 2412.19437 section 5.4.3:
85-90 % acceptance, 1.8x tokens per second)."""
P95_Z = 1.645
"""One-sided 95 % point of the normal approximation of a Poisson batch (M/G/inf)."""
SATURATED_S = 3600.0
"""Latency reported when the arrival rate exceeds capacity (the queue grows without bound)."""
ERLANG_MAX_SERVERS = 512
"""Above this many prefill instances, Erlang C is evaluated on 512 aggregated servers of the
same total capacity (slightly pessimistic; keeps a cluster of 100k GPUs to milliseconds)."""
CURVE_POINTS = 10
"""Points of the latency-vs-load curve, from 10 % to 100 % of capacity."""


# ----------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class PoolPlan:
    """One pool of GPUs serving one phase (``prefill``, ``decode``) or both (``serve``).

    An *instance* batches requests on its own: a tensor/pipeline-parallel replica, or one
    GPU of attention data-parallel when experts are spread over ``ep`` GPUs.
    """

    role: str
    servers: int
    gpus: int
    tp: int
    pp: int
    ep: int
    instances: int
    gpus_per_instance: int
    experts_per_gpu: int
    redundant_experts: int
    weights_gb_per_gpu: float
    kv_gb_per_request: float
    """KV cache of one request at its full context, per GPU holding it."""
    max_batch_per_instance: int
    """Requests an instance can hold in memory at full context."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ServingPlan:
    """Design-independent serving quantities (see module docstring)."""

    deployment: str
    prefill: PoolPlan
    decode: PoolPlan
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

    @property
    def colocated(self) -> bool:
        return self.deployment != "disaggregated"

    def to_dict(self) -> dict[str, Any]:
        return {
            "deployment": self.deployment,
            "servers": self.servers,
            "pools": {"prefill": self.prefill.to_dict(), "decode": self.decode.to_dict()}
            if not self.colocated
            else {"serve": self.decode.to_dict()},
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "kv_bytes_per_request": self.kv_bytes_per_request,
            "computed_prompt_tokens": self.computed_prompt_tokens,
            "tokens_per_step": self.tokens_per_step,
            "requests_per_s": self.requests_per_s,
            "concurrent_requests": self.concurrent_requests,
        }


def kv_element_bytes(precision: str, latent: bool = False) -> float:
    """KV cache bytes per element: fp8 serving of GQA/MHA models keeps an fp8 KV cache
    (TensorRT-LLM ``fp8_kv_cache``, vLLM ``kv_cache_dtype=fp8``); latent (MLA) caches stay
    bf16 as in FlashMLA and the DeepSeek/SGLang deployments; otherwise 16-bit."""
    return 1.0 if precision == "fp8" and not latent else 2.0


def latent_kv(model: ModelSpec) -> bool:
    """Multi-head latent attention: the cached vector is shared by all heads (not split by TP)."""
    return model.kv_dim_per_layer != 2 * model.kv_heads * model.head_dim


def kv_bytes_per_token(model: ModelSpec, precision: str) -> float:
    """layers x cached elements per layer (2 x kv_heads x head_dim for GQA, 576 for MLA)."""
    return float(model.layers * model.kv_dim_per_layer) * kv_element_bytes(
        precision, latent_kv(model)
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


def _usable_bytes(scenario: Scenario) -> float:
    return scenario.gpu.memory_gb * GB * MEMORY_USABLE_FRACTION


def _pool(
    scenario: Scenario, role: str, servers: int, tp: int, pp: int, ep: int, context: int
) -> PoolPlan | None:
    """A pool of ``servers`` whole servers, or ``None`` when its weights leave no KV room."""
    model = scenario.model
    weight_bytes = WEIGHT_BYTES[scenario.precision]
    gpus = servers * scenario.gpus_per_node
    kvb = kv_bytes_per_token(model, scenario.precision)
    if ep > 1:
        per_gpu = experts_per_gpu(model, ep)
        slots = per_gpu * ep
        weights = model.dense_params * weight_bytes / tp + per_gpu * _expert_bytes(
            model, weight_bytes
        )
        gpi = 1 if tp == 1 else tp
        kv_split = 1 if latent_kv(model) else min(tp, model.kv_heads)
        instances = gpus // gpi
        redundant = slots - model.moe_experts
    else:
        per_gpu, redundant = 0, 0
        weights = model.params * weight_bytes / (tp * pp)
        gpi = tp * pp
        kv_split = 1 if latent_kv(model) else min(tp, model.kv_heads)
        instances = gpus // gpi
    kv_req = context * kvb / (kv_split * pp)
    # the activation working set of a decode step is small next to the KV cache
    room = _usable_bytes(scenario) - weights
    if room <= 0:
        return None
    max_batch = int(room / kv_req)
    if max_batch < 1:
        return None
    per_instance = max_batch
    return PoolPlan(
        role=role,
        servers=servers,
        gpus=gpus,
        tp=tp,
        pp=pp,
        ep=ep,
        instances=max(1, instances),
        gpus_per_instance=gpi,
        experts_per_gpu=per_gpu,
        redundant_experts=redundant,
        weights_gb_per_gpu=weights / GB,
        kv_gb_per_request=kv_req / GB,
        max_batch_per_instance=per_instance,
    )


def _dense_instance(scenario: Scenario, role: str, servers: int, context: int) -> PoolPlan | None:
    """Smallest power-of-two tensor-parallel group inside one server that holds the model.

    A prefill instance grows further (up to the server) until one prompt's prefill takes at
    most PREFILL_TTFT_SHARE of the time-to-first-token target: long prompts need more GPUs per
    request, not more requests per GPU."""

    model = scenario.model
    inf = scenario.inference
    assert inf is not None
    fitting: list[PoolPlan] = []
    tp = 1
    while tp <= scenario.gpus_per_node:
        if model.heads % tp == 0 and (servers * scenario.gpus_per_node) % tp == 0:
            pool = _pool(scenario, role, servers, tp, 1, 1, context)
            # keep at least a handful of requests per instance
            if pool is not None and pool.max_batch_per_instance >= 4:
                fitting.append(pool)
                if role != "prefill":
                    return pool
                tokens = inf.prompt_tokens * (1.0 - inf.prefix_cache_hit_rate)
                flops = tokens * forward_flops_per_token(model, inf.prompt_tokens)
                fps = _gemm_flops_per_s(scenario, tp) * DENSE_PREFILL_EFFICIENCY * tp
                if flops / fps <= PREFILL_TTFT_SHARE * inf.target_ttft_ms / 1e3:
                    return pool
        tp *= 2
    return fitting[-1] if fitting else None


def _moe_pool(
    scenario: Scenario, role: str, servers: int, context: int, spec: PoolSpec | None
) -> PoolPlan | None:
    """Attention data-parallel + experts over the pool (or ``spec.ep`` GPUs).

    Without ``spec.tp`` the attention and dense layers take the smallest power-of-two tensor-
    parallel group inside one server that leaves room for a handful of requests (SGLang's
    ``--tp`` with ``--enable-dp-attention``: attention TP inside the server when the dense
    weights do not fit one GPU next to its experts)."""
    gpus = servers * scenario.gpus_per_node
    ep = (spec.ep if spec and spec.ep else None) or gpus
    if spec and spec.tp:
        return _pool(scenario, role, servers, spec.tp, 1, ep, context)
    fitting: PoolPlan | None = None
    tp = 1
    while tp <= scenario.gpus_per_node:
        if scenario.model.heads % tp == 0 and gpus % tp == 0:
            pool = _pool(scenario, role, servers, tp, 1, ep, context)
            if pool is not None:
                if pool.max_batch_per_instance >= 4:
                    return pool
                fitting = fitting or pool
        tp *= 2
    return fitting


def _pool_for(
    scenario: Scenario, role: str, servers: int, context: int, spec: PoolSpec | None
) -> PoolPlan | None:
    model = scenario.model
    if model.is_moe and (spec is None or spec.ep is None or spec.ep > 1):
        pool = _moe_pool(scenario, role, servers, context, spec)
        if pool is not None or (spec is not None and spec.ep is not None):
            return pool
    if spec is not None and spec.tp is not None:
        return _pool(scenario, role, servers, spec.tp, 1, 1, context)
    return _dense_instance(scenario, role, servers, context)


def plan_disaggregated(scenario: Scenario) -> ServingPlan:
    """Size the prefill and decode pools (given in ``inference.pools`` or balanced here).

    Balance: prefill servers / decode servers = (prompt work per request / prefill rate per
    server) / (output tokens per request / decode rate per server at the time-per-token
    target), both from the compute model alone (the network is priced per design later).
    """
    inf = scenario.inference
    assert inf is not None
    servers = scenario.nodes
    if servers < 2:
        raise ScenarioError.single(
            "inference.deployment",
            "disaggregated serving needs at least 2 servers (one prefill, one decode)",
        )
    context = inf.prompt_tokens + inf.output_tokens
    pspec, dspec = inf.prefill_pool, inf.decode_pool
    fixed_p = pspec.servers if pspec and pspec.servers else None
    fixed_d = dspec.servers if dspec and dspec.servers else None
    if fixed_p and fixed_d and fixed_p + fixed_d != servers:
        raise ScenarioError.single(
            "inference.pools",
            f"prefill ({fixed_p}) + decode ({fixed_d}) servers must equal the {servers} "
            "servers of the scenario",
        )
    if (fixed_p and fixed_p >= servers) or (fixed_d and fixed_d >= servers):
        raise ScenarioError.single(
            "inference.pools", f"each pool needs at least one of the {servers} servers"
        )
    if fixed_p is None and fixed_d is None:
        fixed_p = _balanced_prefill_servers(scenario, context, pspec, dspec)
    n_p = fixed_p if fixed_p is not None else servers - (fixed_d or 0)
    n_d = servers - n_p
    prefill = _pool_for(scenario, "prefill", n_p, inf.prompt_tokens, pspec)
    decode = _pool_for(scenario, "decode", n_d, context, dspec)
    for name, pool, n, spec in (
        ("prefill", prefill, n_p, pspec),
        ("decode", decode, n_d, dspec),
    ):
        if pool is None:
            ctx = inf.prompt_tokens if name == "prefill" else context
            need = next(
                (
                    k
                    for k in range(n + 1, n + 257)
                    if _pool_for(scenario, name, k, ctx, spec) is not None
                ),
                None,
            )
            other = servers - n
            fits = (
                f"it needs a pool of at least {need} servers"
                + (
                    f" (the other pool keeps {servers - need})"
                    if need < servers
                    else f", so the scenario needs at least {need + other} servers "
                    "(or inference.deployment split)"
                )
                if need is not None
                else f"no {name} pool of up to {n + 256} servers holds it"
            )
            raise ScenarioError.single(
                f"inference.pools.{name}",
                f"{scenario.model.name} does not fit a {name} pool of {n} x "
                f"{scenario.gpus_per_node} {scenario.gpu.id}: its weights leave no room for the "
                f"KV cache of one {ctx}-token request; {fits}",
            )
    assert prefill is not None and decode is not None
    for name, pool, spec in (("prefill", prefill, pspec), ("decode", decode, dspec)):
        if spec and spec.ep and spec.ep > pool.gpus:
            raise ScenarioError.single(
                f"inference.pools.{name}.ep", f"must be <= the pool's {pool.gpus} GPUs"
            )
        if spec and spec.tp and scenario.model.heads % spec.tp != 0:
            raise ScenarioError.single(
                f"inference.pools.{name}.tp",
                f"must divide the model's heads ({scenario.model.heads})",
            )
    return _serving_plan(scenario, "disaggregated", prefill, decode)


def reference_design(scenario: Scenario) -> Design:
    """The platform's reference network: InfiniBand, one 400G NIC per GPU (as the training
    planner's).  Pools are balanced on it, and a closed loop of users offers the arrival rate it
    reaches on it."""
    return Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=scenario.gpus_per_node)


def _balanced_prefill_servers(
    scenario: Scenario, context: int, pspec: PoolSpec | None, dspec: PoolSpec | None
) -> int:
    """Prefill servers whose request rate matches the decode pool's at the time-per-token
    target, both priced on the platform's reference network (one 400G RDMA NIC per GPU, as
    the training planner's reference fabric); bisection on the server split (prefill capacity
    grows and decode capacity shrinks with it)."""
    inf = scenario.inference
    assert inf is not None
    servers = scenario.nodes
    reference = reference_design(scenario)

    def balance(n_p: int) -> float:
        """log(prefill rate / decode rate); -inf when prefill cannot hold the model."""
        prefill_pool = _pool_for(scenario, "prefill", n_p, inf.prompt_tokens, pspec)
        if prefill_pool is None:
            return -math.inf
        decode_pool = _pool_for(scenario, "decode", servers - n_p, context, dspec)
        if decode_pool is None:
            return math.inf
        serving_plan = _serving_plan(scenario, "disaggregated", prefill_pool, decode_pool)
        service = prefill_service_s(
            scenario, serving_plan, serving_plan.prefill, reference, "point"
        )
        prefill_rps = serving_plan.prefill.instances / max(service, 1e-12)
        decode_rps = decode_capacity_rps(scenario, serving_plan, reference, "point")
        return math.log(max(prefill_rps, 1e-12) / max(decode_rps, 1e-12))

    lo, hi = 1, servers - 1
    if balance(lo) >= 0:
        return lo
    if balance(hi) <= 0:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if balance(mid) < 0:
            lo = mid
        else:
            hi = mid
    return lo if abs(balance(lo)) <= abs(balance(hi)) else hi


def _serving_plan(
    scenario: Scenario,
    deployment: str,
    prefill: PoolPlan,
    decode: PoolPlan,
    legacy_comm_s: float = 0.0,
) -> ServingPlan:
    inf = scenario.inference
    assert inf is not None
    kvb = kv_bytes_per_token(scenario.model, scenario.precision)
    mtp = inf.mtp or 0.0
    return ServingPlan(
        deployment=deployment,
        prefill=prefill,
        decode=decode,
        servers=scenario.nodes,
        kv_bytes_per_token=kvb,
        kv_bytes_per_request=kvb * inf.prompt_tokens,
        prompt_tokens=inf.prompt_tokens,
        computed_prompt_tokens=inf.prompt_tokens * (1.0 - inf.prefix_cache_hit_rate),
        output_tokens=inf.output_tokens,
        tokens_per_step=1.0 + (mtp * MTP_DRAFT_TOKENS if mtp else 0.0),
        rows_per_step=1 + (MTP_DRAFT_TOKENS if mtp else 0),
        requests_per_s=inf.requests_per_s,
        concurrent_requests=inf.concurrent_requests,
        target_ttft_s=inf.target_ttft_ms / 1e3,
        target_tpot_s=inf.target_ms_per_token / 1e3,
        legacy_comm_s=legacy_comm_s,
    )


def colocated_plan(
    scenario: Scenario, deployment: str, tp: int, pp: int, ep: int, legacy_comm_s: float
) -> ServingPlan:
    """The serving view of a ``replicas`` or ``split`` plan chosen by the workload planner."""
    inf = scenario.inference
    assert inf is not None
    context = inf.prompt_tokens + inf.output_tokens
    servers = scenario.nodes
    pool = (
        _pool(scenario, "serve", servers, tp, pp, ep, context)
        if scenario.gpus >= scenario.gpus_per_node
        else None
    )
    if pool is None:
        # a job smaller than a server, or whose weights fill memory: still report one instance
        gpi = 1 if ep > 1 else tp * pp
        pool = PoolPlan(
            role="serve",
            servers=servers,
            gpus=scenario.gpus,
            tp=tp,
            pp=pp,
            ep=ep,
            instances=max(1, scenario.gpus // gpi),
            gpus_per_instance=gpi,
            experts_per_gpu=experts_per_gpu(scenario.model, ep) if ep > 1 else 0,
            redundant_experts=experts_per_gpu(scenario.model, ep) * ep - scenario.model.moe_experts
            if ep > 1
            else 0,
            weights_gb_per_gpu=0.0,
            kv_gb_per_request=0.0,
            max_batch_per_instance=max(
                1, math.ceil(inf.concurrent_requests / max(1, scenario.gpus))
            ),
        )
    return _serving_plan(scenario, deployment, pool, pool, legacy_comm_s)


# ----------------------------------------------------------------------------- step costs


def _hbm_bytes_per_s(scenario: Scenario) -> float:
    return scenario.gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY


def _gemm_flops_per_s(scenario: Scenario, tp: int) -> float:

    return achievable_flops_per_s(scenario.gpu, scenario.precision, tp, scenario.model.hidden)


def _attention_flops_per_s(scenario: Scenario) -> float:
    peak = scenario.gpu.peak_tflops("bf16") or scenario.gpu.peak_tflops("fp16")
    return peak * 1e12 * ATTENTION_DECODE_EFFICIENCY


def _matmul_active_params(model: ModelSpec) -> float:
    lookup = 0.0 if model.tied_embeddings else float(model.vocab * model.hidden)
    return max(0.0, model.active_params - lookup)


def decode_compute_s(
    scenario: Scenario, serving_plan: ServingPlan, pool: PoolPlan, batch: float
) -> float:
    """One decode step of an instance holding ``batch`` sequences, without the network.

    Per GPU: GEMMs take max(weights read, GEMM FLOPs); attention takes max(KV read, attention
    FLOPs); pipeline stages run one after another; plus a launch cost per layer and the
    tensor-parallel all-reduces inside the server.
    """

    model = scenario.model
    weight_bytes = WEIGHT_BYTES[scenario.precision]
    live_batch = max(batch, 0.0)
    rows = live_batch * serving_plan.rows_per_step
    context = serving_plan.prompt_tokens + serving_plan.output_tokens / 2.0
    hbm = _hbm_bytes_per_s(scenario)
    tp, pp = pool.tp, pool.pp
    kv_split = 1 if latent_kv(model) else min(tp, model.kv_heads)
    if pool.ep > 1:
        hit = experts_hit_fraction(model, max(1, round(rows * pool.ep / pool.gpus_per_instance)))
        weights = (
            model.dense_params * weight_bytes / tp
            + pool.experts_per_gpu * _expert_bytes(model, weight_bytes) * hit
        )
        gemm = rows * 2.0 * _matmul_active_params(model) / tp
        share = tp
        stages = 1
    else:
        # pipeline parallel: the batch runs as pp micro-batches (vLLM virtual engines,
        # TensorRT-LLM / SGLang micro-batches), so every stage works on one micro-batch of
        # rows / pp while the others hold the rest; a step (every sequence one token) is pp
        # stage times of one micro-batch
        live_batch /= pp
        rows /= pp
        hit = experts_hit_fraction(model, max(1, round(rows)))
        weights = (model.dense_params + model.expert_params * hit) * weight_bytes / (tp * pp)
        gemm = rows * 2.0 * _matmul_active_params(model) / (tp * pp)
        share = tp * pp
        stages = pp
    kv_read = live_batch * context * kv_bytes_per_token(model, scenario.precision) / (kv_split * pp)
    attn = rows * context * model.layers * decode_attention_flops_per_context_token(model) / share
    gemm_s = max(weights / hbm, gemm / _gemm_flops_per_s(scenario, tp))
    attn_s = max(kv_read / hbm, attn / _attention_flops_per_s(scenario))
    step = stages * (gemm_s + attn_s) + DECODE_KERNEL_OVERHEAD_S_PER_LAYER * model.layers
    if tp > 1 and tp <= scenario.gpus_per_node and rows > 0:
        # each micro-batch's all-reduces over its own layers: layers x AR(rows) per step
        step += (
            2 * model.layers * _intra_time_s(scenario, "all_reduce", rows * model.hidden * 2.0, tp)
        )
    return step


def _ep_domain(
    scenario: Scenario, pool: PoolPlan, design: Design | None, bound: str, net_share: float
) -> CommDomain:
    return _ep_domain_cached(
        scenario.gpu, scenario.gpus_per_node, pool.ep, design, bound, round(net_share, 3)
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
        scaleup_kind=gpu.scaleup_kind,
        scaleup_gbytes_per_s=gpu.scaleup_gbytes_per_s,
        scaleup_efficiency=gpu.scaleup_efficiency,
        nvls=gpu.nvlink_sharp,
        fabric_id=design.fabric if design is not None and nodes > 1 else None,
        nic_gbps=design.nic_gbps if design is not None else 0.0,
        nics_per_node=design.nics_per_node if design is not None else 0,
        oversubscription=design.oversubscription if design is not None else 1.0,
        adaptive_routing=design.adaptive_routing if design is not None else None,
        bound=bound,
        net_share=max(0.05, net_share),
    )


def ep_comm_s(
    scenario: Scenario,
    pool: PoolPlan,
    tokens_per_gpu: float,
    design: Design | None,
    bound: str,
    mode: str,
    net_share: float = 1.0,
) -> float:
    """Dispatch + combine per MoE layer, all MoE layers (DeepEP model in collectives).

    Without a design (planning), only the NVLink part is priced."""
    model = scenario.model
    if pool.ep <= 1 or not model.is_moe or tokens_per_gpu <= 0:
        return 0.0
    dom = _ep_domain(scenario, pool, design, bound, net_share)
    if dom.nodes > 1 and design is None:
        return 0.0
    tokens = max(1, math.ceil(tokens_per_gpu))
    return model.moe_layers * _dispatch_combine_s(
        tokens,
        model.hidden,
        model.moe_top_k,
        1.0 if scenario.precision == "fp8" else 2.0,
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
) -> float:
    """One decode step on design ``d`` (``compute_s``: a precomputed decode_compute_s)."""
    pool = serving_plan.decode
    compute = (
        decode_compute_s(scenario, serving_plan, pool, batch) if compute_s is None else compute_s
    )
    # tokens each GPU dispatches: the instance's rows spread over its GPUs
    rows = batch * serving_plan.rows_per_step / max(1, pool.gpus_per_instance)
    comm = ep_comm_s(scenario, pool, rows, design, bound, "low_latency", net_share)
    step = overlapped(compute, comm, DECODE_TBO_OVERLAP) if comm > 0 else compute
    return step + serving_plan.legacy_comm_s


def prefill_service_s(
    scenario: Scenario, serving_plan: ServingPlan, pool: PoolPlan, design: Design | None, bound: str
) -> float:
    """Seconds one instance spends on one request's prompt at full batching efficiency."""

    model = scenario.model
    flops_tok = forward_flops_per_token(model, serving_plan.prompt_tokens)
    tokens = serving_plan.computed_prompt_tokens
    if tokens <= 0:
        return 0.0
    fps = _gemm_flops_per_s(scenario, pool.tp) * (
        SERVING_PREFILL_EFFICIENCY if pool.ep > 1 else DENSE_PREFILL_EFFICIENCY
    )
    if pool.ep > 1:
        batch = max(PREFILL_TOKENS_PER_GPU_EP, tokens)
        compute = batch * flops_tok / (pool.tp * fps)
        comm = ep_comm_s(scenario, pool, batch, design, bound, "normal")
        per_batch = overlapped(compute, comm, PREFILL_TBO_OVERLAP)
        return per_batch * tokens / batch
    # pipeline stages work on successive chunks / prompts at once (chunked prefill keeps
    # every stage busy under load): the instance's time per prompt is its FLOPs over all
    # tp x pp GPUs; the extra latency of filling the pipeline is prefill_fill_s
    compute = tokens * flops_tok / (pool.tp * pool.pp * fps)
    comm = 0.0
    if pool.tp > 1 and pool.tp <= scenario.gpus_per_node:
        comm = (
            2
            * model.layers
            * _intra_time_s(scenario, "all_reduce", tokens * model.hidden * 2.0, pool.tp)
        )
    return compute + comm


def decode_capacity_rps(
    scenario: Scenario, serving_plan: ServingPlan, design: Design | None, bound: str
) -> float:
    """Requests per second the decode pool finishes at the largest batch that meets the
    time-per-token target (or fits memory)."""
    batch = max_decode_batch(scenario, serving_plan, design, bound)
    step = decode_step_s(scenario, serving_plan, batch, design, bound)
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
    cap = float(serving_plan.decode.max_batch_per_instance)

    def tpot(b: float) -> float:
        return (
            decode_step_s(scenario, serving_plan, b, design, bound) / serving_plan.tokens_per_step
        )

    if tpot(cap) <= serving_plan.target_tpot_s:
        return cap
    lo, hi = 1.0, cap
    if tpot(lo) > serving_plan.target_tpot_s:
        return lo
    for _ in range(30):
        mid = (lo + hi) / 2
        if tpot(mid) <= serving_plan.target_tpot_s:
            lo = mid
        else:
            hi = mid
    return lo


# ----------------------------------------------------------------------------- KV transfer


@dataclass(frozen=True)
class KvTransfer:
    seconds: float
    """Unloaded transfer of one request's KV cache (setup + per-layer latency + wire)."""
    bytes_per_s_per_server: float
    """What one server's NICs carry for KV transfer on this fabric."""
    rdma: bool


def kv_transfer(
    scenario: Scenario, serving_plan: ServingPlan, design: Design, bound: str
) -> KvTransfer:
    """One request's KV cache from its prefill instance to its decode instance.

    Streams: the cache is spread over the instance's GPUs (one GPU under attention data-
    parallel), each sending over its share of the server's NICs at the fabric's wire
    efficiency; TCP also stops at the fabric's per-server socket cap (host copies and kernel
    TCP, constants.FABRICS).  SGLang, Dynamo and
    Mooncake send after the prefill forward pass completes, so the transfer adds to TTFT.
    """
    fabric = FABRICS[design.fabric]
    # the optimistic bound ("low" time) takes the high efficiency and the high cap
    eff = {"low": fabric.wire_efficiency_high, "high": fabric.wire_efficiency_low}.get(
        bound, fabric.wire_efficiency
    )
    cap_gbytes = {
        "low": fabric.node_cap_gbytes_per_s_high,
        "high": fabric.node_cap_gbytes_per_s_low,
    }.get(bound, fabric.node_cap_gbytes_per_s)
    server_bw = design.nics_per_node * nic_bytes_per_s(design.nic_gbps) * eff
    if cap_gbytes > 0:
        server_bw = min(server_bw, cap_gbytes * 1e9)
    per_gpu = server_bw / scenario.gpus_per_node
    streams = min(
        serving_plan.prefill.gpus_per_instance,
        serving_plan.decode.gpus_per_instance,
        scenario.gpus_per_node,
    )
    wire = serving_plan.kv_bytes_per_request / (per_gpu * max(1, streams))
    latency = scenario.model.layers * (fabric.message_latency_s + fabric.extra_step_latency_s)
    return KvTransfer(
        seconds=KV_TRANSFER_SETUP_S + latency + wire,
        bytes_per_s_per_server=server_bw,
        rdma=fabric.rdma,
    )


# ----------------------------------------------------------------------------- queueing


@lru_cache(maxsize=4096)
def erlang_c(servers: int, offered: float) -> float:
    """Probability of waiting in M/M/c (Erlang C) via the Erlang B recursion (cached: the
    median, p95 and mean waits of one load point ask for the same value)."""
    if offered <= 0:
        return 0.0
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in range(1, servers + 1):
        b = offered * b / (k + offered * b)
        if b < 1e-300:
            # Erlang B falls with every server added: the probability of waiting is 0 to
            # within 1e-300
            return 0.0
    rho = offered / servers
    return b / (1.0 - rho * (1.0 - b))


def _mgc_wait_terms(rate: float, service_s: float, servers: int) -> tuple[float, float] | None:
    """(probability of waiting C, mean of a wait given one m = 0.5 / (c/S - lambda)) of the
    M/G/c queue with deterministic service (Allen-Cunneen), ``None`` at or above capacity.
    Past ``ERLANG_MAX_SERVERS`` the servers are pooled into that many faster ones."""
    c = servers
    mu = 1.0 / service_s
    if c > ERLANG_MAX_SERVERS:
        mu *= c / ERLANG_MAX_SERVERS
        c = ERLANG_MAX_SERVERS
    if rate >= c * mu:
        return None
    return erlang_c(c, rate / mu), 0.5 / (c * mu - rate)


def mgc_mean_wait_s(rate: float, service_s: float, servers: int) -> float:
    """Mean wait of the M/G/c queue of :func:`mgc_wait_quantile_s`: C x m;
    ``SATURATED_S`` at or above capacity."""
    if rate <= 0 or service_s <= 0:
        return 0.0
    terms = _mgc_wait_terms(rate, service_s, servers)
    if terms is None:
        return SATURATED_S
    prob_wait, mean_tail = terms
    return min(SATURATED_S, prob_wait * mean_tail)


def mgc_wait_quantile_s(rate: float, service_s: float, servers: int, q: float) -> float:
    """q-quantile of the wait in an M/G/c queue with deterministic service.

    Allen-Cunneen: W(M/G/c) ~ W(M/M/c) x (1 + cs^2) / 2 with cs = 0 for deterministic
    service; the M/M/c wait is 0 with probability 1 - C and exponential with rate
    c/S - lambda otherwise, so the quantile is m ln(C / (1 - q)), m = 0.5 / (c/S - lambda).
    """
    if rate <= 0 or service_s <= 0:
        return 0.0
    terms = _mgc_wait_terms(rate, service_s, servers)
    if terms is None:
        return SATURATED_S
    prob_wait, mean_tail = terms
    if prob_wait <= 1.0 - q:
        return 0.0
    return min(SATURATED_S, mean_tail * math.log(prob_wait / (1.0 - q)))


# ----------------------------------------------------------------------------- load


@dataclass(frozen=True)
class LoadPoint:
    requests_per_s: float
    ttft_p50_s: float
    ttft_p95_s: float
    tpot_p50_s: float
    tpot_p95_s: float
    output_tokens_per_s: float
    decode_batch_per_instance: float
    kv_transfer_s: float
    saturated: bool

    def meets(self, serving_plan: ServingPlan) -> bool:
        return (
            not self.saturated
            and self.ttft_p95_s <= serving_plan.target_ttft_s
            and self.tpot_p95_s <= serving_plan.target_tpot_s
        )


@lru_cache(maxsize=32)
def _compute_cache(scenario: Scenario, serving_plan: ServingPlan) -> dict[float, float]:
    """Decode compute per batch is design-independent: shared by every design's model."""
    return {}


class ServingModel:
    """Latency and throughput of one serving plan on one network design and bound.

    ``d = None`` is the network-free reference (no traffic between servers costs time): the
    load a closed loop of users offers is its arrival rate there (see ``offered_rate``)."""

    def __init__(
        self,
        scenario: Scenario,
        serving_plan: ServingPlan,
        design: Design | None,
        bound: str = "point",
    ) -> None:
        self.scenario, self.serving_plan, self.design, self.bound = (
            scenario,
            serving_plan,
            design,
            bound,
        )
        self.prefill_s = prefill_service_s(
            scenario, serving_plan, serving_plan.prefill, design, bound
        )
        if serving_plan.colocated:
            self.kv: KvTransfer | None = None
        elif design is None:
            self.kv = KvTransfer(seconds=0.0, bytes_per_s_per_server=math.inf, rdma=True)
        else:
            self.kv = kv_transfer(scenario, serving_plan, design, bound)
        self._steps: dict[tuple[float, float], float] = {}
        self._compute = _compute_cache(scenario, serving_plan)
        self._operating: LoadPoint | None = None
        self._max_rate: float | None = None

    # -- decode
    def step(self, batch: float, net_share: float = 1.0) -> float:
        # 4 significant digits: the fixed points and bisections below revisit nearby batches
        key = (float(f"{batch:.4g}"), round(min(1.0, net_share), 3))
        step_s = self._steps.get(key)
        if step_s is None:
            compute = self._compute.get(key[0])
            if compute is None:
                compute = decode_compute_s(
                    self.scenario, self.serving_plan, self.serving_plan.decode, key[0]
                )
                self._compute[key[0]] = compute
            step_s = decode_step_s(
                self.scenario,
                self.serving_plan,
                key[0],
                self.design,
                self.bound,
                net_share,
                compute_s=compute,
            )
            self._steps[key] = step_s
        return step_s

    def _little_batch(self, k: float, cap_b: float, share: float) -> float:
        """The least batch b = k x step(min(b, cap_b)) (Little's law).

        Plain iteration from below: step grows with b, so the iterates rise to the least fixed
        point, and a design whose steps are no longer (a faster network) never gets a larger
        batch (Tarski).  Without damping it takes a few steps away from saturation."""
        b = 0.0
        for _ in range(200):
            nb = k * self.step(min(b, cap_b), share)
            if nb - b <= 1e-4 * max(1.0, nb):
                return nb
            b = nb
        return b

    def _kv_load(self, rate: float) -> float:
        """Utilisation of the busier pool's NICs by KV transfer at ``rate``."""
        if self.kv is None:
            return 0.0
        per_server = min(self.serving_plan.prefill.servers, self.serving_plan.decode.servers)
        return (
            rate
            * self.serving_plan.kv_bytes_per_request
            / (self.kv.bytes_per_s_per_server * per_server)
        )

    def capacity_rps(self) -> float:
        """Highest sustainable arrival rate (prefill, decode memory, KV links)."""
        serving_plan = self.serving_plan
        cap_b = float(serving_plan.decode.max_batch_per_instance)
        decode = (
            cap_b
            * serving_plan.decode.instances
            * serving_plan.tokens_per_step
            / (self.step(cap_b) * serving_plan.output_tokens)
        )
        if serving_plan.colocated:
            if self.prefill_s <= 0:
                return decode
            prefill = serving_plan.prefill.instances / self.prefill_s
            # prefill and decode share the instances' time
            return 1.0 / (1.0 / prefill + 1.0 / decode)
        prefill = (
            serving_plan.prefill.instances / self.prefill_s if self.prefill_s > 0 else math.inf
        )
        assert self.kv is not None
        per_server = min(serving_plan.prefill.servers, serving_plan.decode.servers)
        kv = self.kv.bytes_per_s_per_server * per_server / serving_plan.kv_bytes_per_request
        return min(prefill, decode, kv)

    def at_rate(self, rate: float, users: float | None = None) -> LoadPoint:
        """The operating point for Poisson arrivals at ``rate`` requests per second.

        ``users``: a closed loop never holds more than ``users`` requests, so no request waits
        behind more than ``users / prefill instances`` prompts (caps the open-queue wait)."""
        return self._at_rate(rate, users)[0]

    def _at_rate(self, rate: float, users: float | None = None) -> tuple[LoadPoint, float]:
        """The load point and the *mean* time in system (Little's law of a closed loop)."""
        serving_plan = self.serving_plan
        inst = serving_plan.decode.instances
        out = serving_plan.output_tokens
        tokens_per_step = serving_plan.tokens_per_step
        steps_per_request = out / tokens_per_step
        cap_b = float(serving_plan.decode.max_batch_per_instance)
        rho_kv = self._kv_load(rate)
        share = 1.0 - min(0.95, rho_kv)
        rho_p = (
            rate * self.prefill_s / serving_plan.prefill.instances
            if serving_plan.colocated
            else 0.0
        )
        stretch = 1.0 / max(0.05, 1.0 - rho_p)
        # Little's law for the decode batch: b = rate x out x tpot(b) / instances
        b = self._little_batch(rate * out * stretch / (tokens_per_step * inst), cap_b, share)
        saturated = b >= cap_b or rho_p >= 1.0 or rho_kv >= 1.0
        b_eff = min(b, cap_b)
        b95 = min(cap_b, b_eff + P95_Z * math.sqrt(max(b_eff, 0.0)))
        if users is not None:
            b95 = min(b95, max(b_eff, users / inst))
        mean_step = self.step(b_eff, share) * stretch
        tpot50 = mean_step / tokens_per_step
        tpot95 = self.step(b95, share) * stretch / tokens_per_step
        fill = 0.0
        if serving_plan.colocated:
            chunk_s = self.prefill_s * min(
                1.0, CHUNKED_PREFILL_TOKENS / max(1.0, serving_plan.computed_prompt_tokens)
            )
            # time per output token is each request's own mean (vLLM benchmark_serving TPOT,
            # MLPerf TPOT): the chunks its decode steps carry are Poisson, K ~ Poisson(m) with
            # m = steps per request x share of steps carrying a chunk; the mean is in the
            # stretch, the 95th percentile adds 1.645 sqrt(m) chunks spread over its steps
            chunks = math.ceil(serving_plan.computed_prompt_tokens / CHUNKED_PREFILL_TOKENS)
            chunk_share = min(1.0, rate / inst * chunks * mean_step)
            m = steps_per_request * chunk_share
            tpot95 += P95_Z * math.sqrt(m) * chunk_s / steps_per_request / tokens_per_step
            service = self.prefill_s + (
                serving_plan.computed_prompt_tokens / CHUNKED_PREFILL_TOKENS
            ) * self.step(b_eff)
            # a prompt's last chunk leaves the last of pp stages (pp - 1) stage times after
            # the instance finished its share (one chunk per stage at a time)
            fill = (serving_plan.prefill.pp - 1) * chunk_s
            kv_s = 0.0
        else:
            service = self.prefill_s
            assert self.kv is not None
            kv_s = self.kv.seconds / max(0.05, 1.0 - rho_kv) if rho_kv < 1.0 else SATURATED_S
        tpot95 = max(tpot50, tpot95)
        prefill_instances = serving_plan.prefill.instances
        w50 = mgc_wait_quantile_s(rate, service, prefill_instances, 0.50)
        w95 = mgc_wait_quantile_s(rate, service, prefill_instances, 0.95)
        w_mean = mgc_mean_wait_s(rate, service, prefill_instances)
        # a request waits for a decode slot (KV memory) once the pool's batches are full:
        # M/G/c with c = instances x batch that fits, each slot held for the request's decode
        slots = max(1, int(inst * cap_b))
        hold = steps_per_request * mean_step
        if not saturated:
            w50 += mgc_wait_quantile_s(rate, hold, slots, 0.50)
            w95 += mgc_wait_quantile_s(rate, hold, slots, 0.95)
            w_mean += mgc_mean_wait_s(rate, hold, slots)
        if saturated:
            w50 = w95 = w_mean = SATURATED_S
        if users is not None:
            # a closed loop never holds more than its users: at worst every other one is
            # ahead, at the prefill queue and for a decode slot
            closed = (
                users / max(1, prefill_instances) * service + max(0.0, users - slots) / slots * hold
            )
            w50, w95 = min(w50, closed), min(w95, closed)
        first = self.step(b_eff, share)
        unloaded = service + fill + kv_s + first
        ttft50 = min(SATURATED_S, w50 + unloaded)
        ttft95 = min(SATURATED_S, w95 + unloaded)
        if users is not None:
            # a closed loop at capacity cycles each user in users / capacity seconds, and the
            # first token comes before the cycle ends
            cycle = max(unloaded, users / max(self.capacity_rps(), 1e-12))
            ttft50, ttft95 = min(ttft50, cycle), min(ttft95, cycle)
        tokens = b_eff * inst * tokens_per_step / mean_step if b_eff > 0 else 0.0
        in_system = (
            math.inf
            if saturated or kv_s >= SATURATED_S
            else w_mean + unloaded + steps_per_request * mean_step
        )
        point = LoadPoint(
            requests_per_s=min(rate, self.capacity_rps()) if saturated else rate,
            ttft_p50_s=ttft50,
            ttft_p95_s=ttft95,
            tpot_p50_s=tpot50,
            tpot_p95_s=tpot95,
            output_tokens_per_s=min(tokens, rate * out) if not saturated else tokens,
            decode_batch_per_instance=b_eff,
            kv_transfer_s=kv_s,
            saturated=saturated,
        )
        return point, in_system

    def operating_point(self) -> LoadPoint:
        """At ``requests_per_s``, or the closed loop of ``concurrent_requests`` users."""
        if self._operating is None:
            self._operating = self._operating_point()
        return self._operating

    def _operating_point(self) -> LoadPoint:
        serving_plan = self.serving_plan
        if serving_plan.requests_per_s is not None:
            return self.at_rate(serving_plan.requests_per_s)
        users = float(serving_plan.concurrent_requests)
        return self.at_rate(offered_rate(self.scenario, serving_plan), users)

    def closed_loop_rate(self) -> float:
        """Throughput of ``concurrent_requests`` users that send a new request when the last
        one finishes (no think time): the rate X with X x mean time in system (X) = users
        (Little's law, as mean value analysis solves a closed network; the mean time in
        system grows without bound at capacity, so X stays below it)."""
        serving_plan = self.serving_plan
        users = float(serving_plan.concurrent_requests)
        cap = self.capacity_rps()
        hi = cap * (1.0 - 1e-6)

        def in_system(rate: float) -> float:
            return rate * self._at_rate(rate)[1]

        if in_system(hi) <= users:
            return hi
        lo = 0.0
        for _ in range(40):
            mid = (lo + hi) / 2
            if in_system(mid) <= users:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-6 * hi:
                break
        return max(lo, 1e-9)

    def max_rate_at_target(self) -> float:
        """Highest arrival rate whose p95 TTFT and time per token meet both targets."""
        if self._max_rate is None:
            self._max_rate = self._max_rate_at_target()
        return self._max_rate

    def _max_rate_at_target(self) -> float:
        cap = self.capacity_rps()
        lo, hi = 0.0, cap * 0.999
        if self.at_rate(hi).meets(self.serving_plan):
            return hi
        if not self.at_rate(hi * 1e-3).meets(self.serving_plan):
            return 0.0
        lo = hi * 1e-3
        for _ in range(20):
            mid = (lo + hi) / 2
            if self.at_rate(mid).meets(self.serving_plan):
                lo = mid
            else:
                hi = mid
        return lo

    def curve(self, points: int = CURVE_POINTS) -> list[LoadPoint]:
        cap = self.capacity_rps()
        return [self.at_rate(cap * (i + 1) / points * 0.98) for i in range(points)]


@lru_cache(maxsize=64)
def offered_rate(scenario: Scenario, serving_plan: ServingPlan) -> float:
    """The arrival rate a closed loop of ``concurrent_requests`` users reaches on the
    platform's reference network (:func:`reference_design`, Little's law).  A design that
    carries it with no more users in the system serves it as an open loop, so a network faster
    than the reference only shortens the latencies (a per-design closed loop let a faster
    fabric admit more requests per second and queue them longer before prefill); a design
    that cannot runs its own closed loop of the same users at a lower rate (its latencies then
    follow from its own Little's law, never from a queue offered more than it can serve)."""
    ref = dataclasses.replace(serving_plan, legacy_comm_s=serving_plan.reference_comm_s)
    return serving_model(scenario, ref, reference_design(scenario), "point").closed_loop_rate()


@lru_cache(maxsize=64)
def serving_model(
    scenario: Scenario, serving_plan: ServingPlan, design: Design | None, bound: str = "point"
) -> ServingModel:
    """One :class:`ServingModel` per (scenario, plan, design, bound): the metrics, the rationale
    and the chart ask for the same operating point."""
    return ServingModel(scenario, serving_plan, design, bound)


def serving_values(
    scenario: Scenario, serving_plan: ServingPlan, design: Design
) -> list[tuple[str, float]]:
    """The serving metrics of one design (ENGINE_API metric keys, SI-ish units in the name)."""
    queue_model = serving_model(scenario, serving_plan, design, "point")
    point = queue_model.operating_point()
    high = serving_model(scenario, serving_plan, design, "high").operating_point()
    servers = max(1, serving_plan.servers)
    ttft = point.ttft_p50_s
    values = [
        ("ttft_ms_p50", point.ttft_p50_s * 1e3),
        ("ttft_ms_p95", point.ttft_p95_s * 1e3),
        ("ttft_ms_p95_high", high.ttft_p95_s * 1e3),
        ("ms_per_token_p50", point.tpot_p50_s * 1e3),
        ("ms_per_token_p95", point.tpot_p95_s * 1e3),
        ("requests_per_s", point.requests_per_s),
        ("serving_tokens_per_s_per_server", point.output_tokens_per_s / servers),
        ("decode_batch_per_instance", point.decode_batch_per_instance),
        ("kv_transfer_ms", point.kv_transfer_s * 1e3),
        ("kv_transfer_share_of_ttft", min(1.0, point.kv_transfer_s / ttft) if ttft > 0 else 0.0),
        ("max_requests_per_s_at_target", queue_model.max_rate_at_target()),
        ("capacity_requests_per_s", queue_model.capacity_rps()),
        ("load_saturated", 1.0 if point.saturated else 0.0),
        (
            "meets_latency_targets",
            1.0 if (point.meets(serving_plan)) else 0.0,
        ),
    ]
    return values


def load_curve(
    scenario: Scenario, serving_plan: ServingPlan, design: Design
) -> list[dict[str, float]]:
    """Latency vs load on design ``d`` (for the results chart)."""
    return [
        {
            "requests_per_s": point.requests_per_s,
            "ttft_ms_p95": point.ttft_p95_s * 1e3,
            "ms_per_token_p95": point.tpot_p95_s * 1e3,
            "tokens_per_s_per_server": point.output_tokens_per_s / max(1, serving_plan.servers),
            "kv_transfer_ms": point.kv_transfer_s * 1e3,
        }
        for point in ServingModel(scenario, serving_plan, design, "point").curve()
    ]


# ----------------------------------------------------------------------------- rationale


def kv_transfer_sentence(
    best_label: str,
    best_metrics: Mapping[str, Any],
    tcp_label: str | None,
    tcp_metrics: Mapping[str, Any] | None,
    target_ttft_ms: float | None,
) -> str | None:
    """The rationale's sentence on KV-cache transfer of a disaggregated deployment, with the
    numbers: bytes per request, transfer time and share of TTFT on the recommended network,
    and on the best TCP design when one was priced (and whether it misses the TTFT target).

    Reads the per-design metrics only (``prefill_servers``, ``decode_servers``,
    ``kv_bytes_per_request``, ``kv_transfer_ms``, ``ttft_ms_p95``...); ``None`` when the
    deployment is not disaggregated."""
    if not best_metrics.get("prefill_servers"):
        return None
    prefill = int(best_metrics["prefill_servers"])
    decode = int(best_metrics.get("decode_servers", 0))
    kv_megabytes = float(best_metrics.get("kv_bytes_per_request", 0.0)) / 1e6
    kv = float(best_metrics.get("kv_transfer_ms", 0.0))
    ttft = float(best_metrics.get("ttft_ms_p95", 0.0))
    share = float(best_metrics.get("kv_transfer_share_of_ttft", 0.0)) * 100
    text = (
        f"Prefill and decode run on separate servers ({prefill} prefill, {decode} decode), so "
        f"each request's KV cache ({kv_megabytes:,.0f} MB) crosses the fabric before its first "
        "token: "
        f"{kv:,.1f} ms on {best_label} ({share:.0f} % of the {ttft:,.0f} ms p95 time to first "
        "token)"
    )
    if tcp_label and tcp_metrics:
        tcp_kv = float(tcp_metrics.get("kv_transfer_ms", 0.0))
        tcp_ttft = float(tcp_metrics.get("ttft_ms_p95", 0.0))
        if tcp_ttft >= SATURATED_S * 1e3 or tcp_kv >= SATURATED_S * 1e3:
            return text + (
                f"; over TCP (at best {tcp_label}) the servers cannot keep up with the load "
                "(the queue for the first token grows without bound), so this deployment "
                "needs RDMA."
            )
        tcp_share = float(tcp_metrics.get("kv_transfer_share_of_ttft", 0.0)) * 100
        text += f"; over TCP (at best {tcp_label}) it takes {tcp_kv:,.0f} ms"
        if target_ttft_ms and tcp_ttft > target_ttft_ms:
            text += (
                f" and the p95 time to first token reaches {tcp_ttft:,.0f} ms (KV transfer "
                f"{tcp_share:.0f} % of it), over the {target_ttft_ms:,.0f} ms target, so this "
                "deployment needs RDMA"
            )
    return text + "."
