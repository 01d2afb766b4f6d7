"""Workload model: FLOPs, memory fit, the parallelism plan and traffic volumes.

Everything here depends on the scenario only, never on the network design, so
:func:`plan_workload` runs once per scenario and :func:`advisor.engine.performance.
evaluate_design` reuses its numbers for every candidate network (precomputed in the plan).

Units: bytes, seconds, FLOPs (not FLOP/s) unless the name says otherwise.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from typing import Any

from advisor.engine.catalog import ModelSpec
from advisor.engine.collectives import (
    scaleup_time_s,
)
from advisor.engine.constants import (
    ACTIVATION_BYTES_PER_TOKEN_HIDDEN,
    DECODE_KERNEL_OVERHEAD_S_PER_LAYER,
    DP_OVERLAP_EFFICIENCY,
    GRAD_BYTES_PER_PARAM,
    HBM_EFFICIENCY,
    MASTER_AND_ADAM_BYTES_PER_PARAM,
    MEMORY_USABLE_FRACTION,
    OPTIMIZER_BYTES_PER_PARAM,
    RECOMPUTE_BYTES_PER_TOKEN_HIDDEN,
    TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM,
    WEIGHT_BYTES,
)
from advisor.engine.efficiency import (
    BACKWARD_FACTOR,
    achievable_flops_per_s,
    experts_hit_fraction,
    forward_flops_per_token,
    gemm_time_s,
    layer_forward,
    profile,
)
from advisor.engine.errors import ScenarioError
from advisor.engine.placement import (
    blocks_spanned,
    contiguous_share,
    pipeline_crosses_network,
    server_traffic,
)
from advisor.engine.scenario import ZERO_STAGES, Design, ParallelismSpec, Scenario
from advisor.engine.serving import (
    ServingPlan,
    colocated_plan,
    experts_per_gpu,
    plan_disaggregated,
    reference_design,
    serving_model,
)

GB = 1e9


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class MemoryEstimate:
    """Per-GPU memory in GB."""

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    kv_cache_gb: float
    total_gb: float
    capacity_gb: float
    usable_gb: float

    @property
    def fits(self) -> bool:
        return self.total_gb <= self.usable_gb

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["fits"] = self.fits
        return d


@dataclass(frozen=True)
class Plan:
    tp: int
    pp: int
    dp: int
    ep: int
    micro_batch: int
    virtual_stages: int
    sharding: str
    recompute: str
    source: str
    """``planner`` or ``explicit``."""
    cp: int = 1
    """Context parallel ranks (the sequence is split over them; ring attention)."""
    first_stage_layers: int = 0
    last_stage_layers: int = 0
    """Layers on the first / last pipeline stage; 0 = an even split."""
    tp_comm_overlap: bool = False
    ep_overlap: str = "none"
    gpus_used: int = 0
    """GPUs the plan runs on (tp x cp x pp x dp); the rest of the cluster idles (0 = all)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def model_parallel(self) -> int:
        return self.tp * self.cp * self.pp


@dataclass(frozen=True)
class GroupLayout:
    """How one communicator maps onto scale-up domains (servers or NVL72 racks).

    ``concurrent_groups`` communicators of this kind share each domain's NICs.
    """

    size: int
    nodes: int
    ranks_per_node: int
    concurrent_groups: int

    @property
    def crosses_network(self) -> bool:
        return self.nodes > 1


@dataclass(frozen=True)
class TrainingPlan:
    """Per-step quantities of a training plan (all per GPU unless noted)."""

    microbatches: int
    global_batch_sequences: int
    tokens_per_step: int
    steps: float
    hardware_flops_per_gpu: float
    model_flops_per_gpu: float
    compute_s: float
    optimizer_s: float
    forward_fraction: float
    tp_comm_s: float
    """Tensor-parallel collectives per step inside the scale-up domain (0 if TP crosses it)."""
    tp_bytes_per_collective: float
    tp_collectives_per_step: int
    pp_bytes_per_p2p: float
    pp_p2p_per_step: int
    dp_bytes: float
    """Dense-parameter gradient bytes per GPU reduced over the data-parallel group per step."""
    dp_op_bytes: tuple[tuple[str, float, int], ...]
    """(op, bytes per rank, count) for the dense data-parallel group per step."""
    expert_dp_op_bytes: tuple[tuple[str, float, int], ...]
    ep_bytes_per_all_to_all: float
    ep_all_to_all_per_step: int
    ep_intra_s: float
    """All-to-all time per step when the expert group stays inside one domain."""
    dp_layout: GroupLayout
    expert_dp_layout: GroupLayout
    tp_layout: GroupLayout
    ep_layout: GroupLayout
    pp_crosses_network: bool
    tp_overlap: float = 0.0
    """Share of TP collective time hidden behind GEMMs (0 without comm-GEMM overlap)."""
    ep_overlap: str = "none"
    """``dualpipe``: all-to-all hidden behind another micro-batch's compute (DeepSeek-V3)."""
    cp_layout: GroupLayout = GroupLayout(size=1, nodes=1, ranks_per_node=1, concurrent_groups=1)
    cp_bytes_per_exchange: float = 0.0
    """All-gather-equivalent bytes of one ring-attention K/V exchange (nccl-tests size)."""
    cp_exchanges_per_step: int = 0
    cp_intra_s: float = 0.0
    attention_s: float = 0.0
    """Attention kernel seconds per step (what ring-attention traffic hides behind)."""


@dataclass(frozen=True)
class InferencePlan:
    """Per-token quantities of an inference plan."""

    replicas: int
    gpus_per_replica: int
    batch_per_replica: int
    independent_replicas: bool
    decode_compute_s: float
    """One decode step of the whole replica (all pipeline stages), compute/memory bound."""
    prefill_compute_s: float
    tp_bytes_per_decode_collective: float
    tp_collectives_per_token: int
    tp_bytes_per_prefill_collective: float
    tp_decode_intra_s: float
    tp_prefill_intra_s: float
    pp_bytes_per_token: float
    pp_hops: int
    ep_dispatch_bytes_per_gpu: float
    """Per MoE layer per decode step: tokens x top_k x hidden bytes each GPU dispatches."""
    ep_tokens_per_gpu: int
    moe_layers: int
    tp_layout: GroupLayout
    ep_layout: GroupLayout
    pp_crosses_network: bool
    serving: ServingPlan | None = None
    """Deployment, pools, KV transfer and load inputs (advisor.engine.serving)."""


@dataclass(frozen=True)
class WorkloadPlan:
    """Everything about the workload that does not depend on the network design."""

    plan: Plan
    memory: MemoryEstimate
    nodes: int
    gpus_per_node: int
    domain_gpus: int
    """GPUs per scale-up domain (8 for HGX, 72 for NVL72)."""
    domains: int
    spans_servers: bool
    needs_compute_fabric: bool
    training: TrainingPlan | None
    inference: InferencePlan | None
    notes: tuple[str, ...]
    alternatives: tuple[WorkloadPlan, ...] = ()
    """Training: the planner's best plans of smaller power-of-two numbers of servers (their
    other GPUs idle); a design evaluates each whose compute floor beats this plan's step on
    it and uses the fastest (:func:`advisor.engine.performance.evaluate_design`)."""

    def to_dict(self, scenario: Scenario) -> dict[str, Any]:
        return {
            "model": scenario.model.to_dict(),
            "memory": self.memory.to_dict(),
            "plan": self.plan.to_dict(),
            "nodes": self.nodes,
            "gpus_per_node": self.gpus_per_node,
            "scaleup_domain_gpus": self.domain_gpus,
            "spans_servers": self.spans_servers,
            "needs_compute_fabric": self.needs_compute_fabric,
            "traffic": traffic_dict(self) | server_traffic(self),
            "notes": list(self.notes),
        } | (
            {"serving": self.inference.serving.to_dict()}
            if self.inference is not None and self.inference.serving is not None
            else {}
        )


def traffic_dict(workload: WorkloadPlan) -> dict[str, Any]:
    """Traffic volumes per step (training) or per output token (inference), in bytes."""
    if workload.training is not None:
        t = workload.training
        dp_total = sum(b * c for _, b, c in t.dp_op_bytes)
        edp_total = sum(b * c for _, b, c in t.expert_dp_op_bytes)
        return {
            "unit": "bytes per GPU per training step",
            "tokens_per_step": t.tokens_per_step,
            "microbatches": t.microbatches,
            "tensor_parallel_bytes": t.tp_bytes_per_collective * t.tp_collectives_per_step,
            "tensor_parallel_collectives": t.tp_collectives_per_step,
            "tensor_parallel_crosses_network": t.tp_layout.crosses_network,
            "pipeline_bytes": t.pp_bytes_per_p2p * t.pp_p2p_per_step,
            "pipeline_crosses_network": t.pp_crosses_network,
            "data_parallel_bytes": dp_total + edp_total,
            "data_parallel_crosses_network": t.dp_layout.crosses_network,
            "expert_all_to_all_bytes": t.ep_bytes_per_all_to_all * t.ep_all_to_all_per_step,
            "expert_crosses_network": t.ep_layout.crosses_network,
        }
    assert workload.inference is not None
    i = workload.inference
    return {
        "unit": "bytes per GPU per output token (decode step)",
        "tensor_parallel_bytes": i.tp_bytes_per_decode_collective * i.tp_collectives_per_token,
        "tensor_parallel_collectives": i.tp_collectives_per_token,
        "tensor_parallel_crosses_network": i.tp_layout.crosses_network,
        "pipeline_bytes": i.pp_bytes_per_token,
        "pipeline_crosses_network": i.pp_crosses_network,
        "expert_all_to_all_bytes": 2.0 * i.ep_dispatch_bytes_per_gpu * i.moe_layers,
        "expert_crosses_network": i.ep_layout.crosses_network,
    }


# ----------------------------------------------------------------------------- helpers


def _powers_of_two_up_to(limit: int) -> list[int]:
    out, v = [], 1
    while v <= limit:
        out.append(v)
        v *= 2
    return out


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def domain_gpus(scenario: Scenario) -> int:
    """GPUs per scale-up domain used by this job (a server, or an NVL72 rack)."""
    if scenario.gpu.scaleup_domain_gpus > scenario.gpus_per_node:
        dom = min(scenario.gpu.scaleup_domain_gpus, scenario.gpus)
        # a domain holds whole servers
        return max(scenario.gpus_per_node, dom - dom % scenario.gpus_per_node)
    return scenario.gpus_per_node


def group_layout(size: int, stride: int, domain: int, total: int) -> GroupLayout:
    """Place a communicator of ``size`` ranks spaced ``stride`` apart on domains of ``domain``.

    Megatron orders ranks tp (stride 1), then cp, then dp/ep, then pp; a group spans
    :func:`advisor.engine.placement.blocks_spanned` domains (ranks 0, stride, ... fill a
    domain before the next), ``ceil(size / nodes)`` ranks in each, and ``domain / per_node``
    such groups share a domain's NICs; on ``total`` ranks, groups that do not tile the
    domains straddle two of them.
    """
    if size <= 1:
        return GroupLayout(size=1, nodes=1, ranks_per_node=1, concurrent_groups=1)
    nodes = blocks_spanned(size, stride, domain)
    if nodes <= 1 and contiguous_share("ring", size, stride, domain, total) > 0.0:
        nodes = 2  # groups that do not tile the domains straddle two of them
    if nodes <= 1:
        return GroupLayout(size=size, nodes=1, ranks_per_node=size, concurrent_groups=1)
    per_node = math.ceil(size / nodes)
    # every rank of a domain belongs to one such group: domain / per_node groups share its NICs
    concurrent = max(1, domain // per_node)
    return GroupLayout(
        size=size, nodes=nodes, ranks_per_node=per_node, concurrent_groups=concurrent
    )


def _intra_time_s(
    scenario: Scenario, op: str, nbytes: float, ranks: int, nvls: bool | None = None
) -> float:
    """Collective time inside one scale-up domain (no network)."""
    return scaleup_time_s(scenario.gpu, op, nbytes, ranks, nvls)


# ----------------------------------------------------------------------------- memory


_CONSTS: dict[int, tuple[ModelSpec, tuple[float, float, float, float]]] = {}


def _model_consts(m: ModelSpec) -> tuple[float, float, float, float]:
    """(dense params, expert params, embedding params, per-layer dense params) of ``m``,
    cached by identity (hashing a frozen ModelSpec on every planner step costs more than
    the arithmetic it saves)."""
    hit = _CONSTS.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    dense = m.dense_params
    emb = m.embedding_params
    experts = m.expert_params if m.is_moe else 0.0
    value = (dense, experts, emb, max(0.0, dense - emb) / max(1, m.layers))
    if len(_CONSTS) > 256:
        _CONSTS.clear()
    _CONSTS[id(m)] = (m, value)
    return value


def _memory_parts(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    mb: int,
    sharding: str,
    recompute: str,
    microbatches: int,
    cp: int,
    vp: int,
    stages: tuple[int, int, int] | None,
) -> tuple[float, float, float, float]:
    """(weights + gradients, optimizer, activations, weights) bytes per GPU
    (see :func:`training_memory`)."""
    m = scenario.model
    first, inner, last = stages or (math.ceil(m.layers / pp),) * 3
    emb = float(m.vocab * m.hidden)
    dense_params, expert_params, _, per_layer_params = _model_consts(m)
    is_moe = expert_params > 0
    if pp <= 1:
        dense_stage = dense_params
    else:
        head = 0.0 if m.tied_embeddings else emb
        dense_stage = max(
            first * per_layer_params + emb, inner * per_layer_params, last * per_layer_params + head
        )
    dense = dense_stage / tp
    experts = expert_params / (ep * pp)
    dpg = dp * cp
    edp = max(1, dpg // ep) if is_moe else dpg
    dense_shard = dpg if sharding == "zero3" else 1
    expert_shard = edp if sharding == "zero3" else 1
    wg = TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM * (dense / dense_shard + experts / expert_shard)
    opt_div_dense = dpg if sharding in ("zero1", "zero3") else 1
    opt_div_exp = edp if sharding in ("zero1", "zero3") else 1
    opt = MASTER_AND_ADAM_BYTES_PER_PARAM * (dense / opt_div_dense + experts / opt_div_exp)
    tokens = scenario.sequence_length * mb / max(1, cp)
    per_layer_full = ACTIVATION_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp
    ffn_act = float(m.ffn_hidden) * (m.moe_top_k if is_moe else 1)
    if recompute == "selective":
        per_layer_kept = max(
            RECOMPUTE_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp,
            per_layer_full - 2.0 * tokens * ffn_act / tp,
        )
    elif recompute == "full":
        per_layer_kept = RECOMPUTE_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp
    else:
        per_layer_kept = per_layer_full
    in_flight = min(pp, microbatches)
    interleave = 1.0 + (pp - 1) / (pp * vp) if vp > 1 and pp > 1 else 1.0
    stage_layers = max(first, inner) if pp > 1 else m.layers
    act = stage_layers * in_flight * interleave * per_layer_kept
    if recompute == "full":
        act += per_layer_full
    # logits of the last stage (fp32 for the loss); the last stage holds one micro-batch
    logits = 4.0 * tokens * m.vocab / tp
    if pp == 1:
        act += logits
    else:
        last_act = last * per_layer_kept * interleave + logits
        act = max(act, last_act)
    weights_b = (
        TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM / 2.0 * (dense / dense_shard + experts / expert_shard)
    )
    return wg, opt, act, weights_b


def training_memory(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    mb: int,
    sharding: str,
    recompute: str,
    microbatches: int,
    *,
    cp: int = 1,
    vp: int = 1,
    stages: tuple[int, int, int] | None = None,
) -> MemoryEstimate:
    """Per-GPU memory of a training plan (GB), for the fullest pipeline stage.

    Dense parameters are split over tp x pp (by the stage's layers; the first stage also holds
    the input embedding, the last the output head), routed experts over ep x pp.  Weights +
    gradients take 4 B/param; fp32 master weights and Adam moments 12 B/param, divided by
    dp x cp under zero1 (distributed optimizer); zero3 also shards weights and gradients.
    Activations (Korthikanti et al. 2022, with sequence parallelism and flash attention):
    34 B x s/cp x b x h / tp per layer; selective recomputation drops the activation function's
    output (2 B x ffn); full recomputation keeps 2 B x s x b x h per layer plus one layer's
    working set.  The first 1F1B stage holds min(pp, microbatches) micro-batches of its layers,
    x (1 + (pp - 1) / (pp x vp)) when interleaved (Narayanan et al. SC'21, section 2.2).
    """
    wg, opt, act, weights_b = _memory_parts(
        scenario, tp, pp, dp, ep, mb, sharding, recompute, microbatches, cp, vp, stages
    )
    total = wg + opt + act
    cap = scenario.gpu.memory_gb
    return MemoryEstimate(
        weights_gb=weights_b / GB,
        gradients_gb=(wg - weights_b) / GB,
        optimizer_gb=opt / GB,
        activations_gb=act / GB,
        kv_cache_gb=0.0,
        total_gb=total / GB,
        capacity_gb=cap,
        usable_gb=cap * MEMORY_USABLE_FRACTION,
    )


def _fits(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    mb: int,
    sharding: str,
    recompute: str,
    microbatches: int,
    cp: int,
    vp: int,
    stages: tuple[int, int, int],
) -> bool:
    """Whether :func:`training_memory` fits, without building the estimate."""
    wg, opt, act, _ = _memory_parts(
        scenario, tp, pp, dp, ep, mb, sharding, recompute, microbatches, cp, vp, stages
    )
    return (wg + opt + act) / GB <= scenario.gpu.memory_gb * MEMORY_USABLE_FRACTION


def inference_memory(
    scenario: Scenario, gpus_per_replica: int, batch: int, kv_split: int
) -> MemoryEstimate:
    """Weights / gpus_per_replica + KV cache of ``batch`` full contexts / kv_split (GB)."""
    assert scenario.inference is not None
    m = scenario.model
    wbytes = WEIGHT_BYTES[scenario.precision]
    weights = m.params * wbytes / gpus_per_replica
    context = scenario.inference.prompt_tokens + scenario.inference.output_tokens
    kv = batch * context * m.layers * m.kv_dim_per_layer * wbytes / max(1, kv_split)
    act = 2.0 * batch * m.hidden * 64 * wbytes  # small decode working set
    total = weights + kv + act
    cap = scenario.gpu.memory_gb
    return MemoryEstimate(
        weights_gb=weights / GB,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=act / GB,
        kv_cache_gb=kv / GB,
        total_gb=total / GB,
        capacity_gb=cap,
        usable_gb=cap * MEMORY_USABLE_FRACTION,
    )


# ----------------------------------------------------------------------------- planner


def plan_workload(scenario: Scenario) -> WorkloadPlan:
    """Choose (or check) the parallelism plan and precompute its design-independent costs.

    Raises :class:`ScenarioError` when an explicit plan is inconsistent or when the model
    cannot fit even at maximum parallelism.
    """
    if not scenario.is_training:
        return _plan_inference(scenario)
    hit = _PLAN_CACHE.get(scenario)
    if hit is None:
        hit = _plan_training(scenario)
        if len(_PLAN_CACHE) > 256:
            _PLAN_CACHE.clear()
        _PLAN_CACHE[scenario] = hit
    return hit


_PLAN_CACHE: dict[Scenario, WorkloadPlan] = {}
"""Training plans by scenario: planning is a pure function of the (frozen) scenario, and the
same plan object lets :func:`advisor.engine.performance.evaluate_design` reuse its design
metrics."""


def _stage_split(layers: int, pp: int) -> tuple[int, int, int] | None:
    """(first, inner, last) layers per pipeline stage, Megatron's uneven split, or None.

    Inner stages hold ``ceil(layers / pp)`` layers; the first and last stages share the rest
    (at least one layer each, at most an inner stage's), as Megatron-Core's
    ``num_layers_in_first/last_pipeline_stage`` allow (Llama 3 405B: 126 layers on 16 stages
    as 7 + 14 x 8 + 7, arXiv 2407.21783 section 3.3.2).
    """
    if pp <= 1:
        return (layers, layers, layers)
    if pp > layers:
        return None
    if layers % pp == 0:
        return (layers // pp, layers // pp, layers // pp)
    inner = math.ceil(layers / pp)
    rest = layers - (pp - 2) * inner
    if pp == 2:
        rest = layers
    first, last = math.ceil(rest / 2), rest // 2
    if last < 1 or first > inner:
        return None
    return (first, inner, last)


def _explicit_stages(scenario: Scenario, pp: int) -> tuple[int, int, int]:
    """Stage split of an explicit plan (first/last stage layers honoured)."""
    p = scenario.parallelism
    layers = scenario.model.layers
    if p.first_stage_layers is None and p.last_stage_layers is None:
        split = _stage_split(layers, pp)
        if split is None:
            raise ScenarioError.single(
                "parallelism.pp", f"must be <= the model's layers ({layers})"
            )
        return split
    if pp < 2:
        raise ScenarioError.single(
            "parallelism.first_stage_layers", "needs a pipeline of at least 2 stages (pp >= 2)"
        )
    first = p.first_stage_layers
    last = p.last_stage_layers
    given = [v for v in (first, last) if v is not None]
    rest = layers - sum(given)
    inner_stages = pp - len(given)
    if (
        rest < inner_stages
        or (inner_stages and rest % inner_stages != 0)
        or (not inner_stages and rest != 0)
    ):
        raise ScenarioError.single(
            "parallelism.first_stage_layers",
            f"the layers left after the first/last stages ({rest}) must split evenly over the "
            f"other {inner_stages} stages",
        )
    inner = rest // inner_stages if inner_stages else max(given)
    return (first if first is not None else inner, inner, last if last is not None else inner)


def _check_explicit_training(scenario: Scenario) -> tuple[int, int, int, int, int]:
    p = scenario.parallelism
    errors: dict[str, list[str]] = {}
    tp = p.tp or 1
    pp = p.pp or 1
    ep = p.ep or 1
    cp = p.cp or 1
    mp = tp * pp * cp
    if p.dp is not None:
        dp = p.dp
        if mp * dp != scenario.gpus:
            errors["parallelism"] = [
                f"tp x cp x pp x dp = {tp} x {cp} x {pp} x {dp} = {mp * dp} must equal "
                f"gpus ({scenario.gpus})"
            ]
    else:
        if scenario.gpus % mp != 0:
            errors["parallelism"] = [f"tp x cp x pp = {mp} must divide gpus ({scenario.gpus})"]
        dp = max(1, scenario.gpus // mp)
    m = scenario.model
    if m.heads % tp != 0:
        errors.setdefault("parallelism.tp", []).append(f"must divide the model's heads ({m.heads})")
    if pp > m.layers:
        errors.setdefault("parallelism.pp", []).append(
            f"must be <= the model's layers ({m.layers})"
        )
    if cp > 1 and scenario.sequence_length % (2 * cp) != 0:
        errors.setdefault("parallelism.cp", []).append(
            f"2 x cp must divide the sequence length ({scenario.sequence_length})"
        )
    if ep > 1:
        if not m.is_moe:
            errors.setdefault("parallelism.ep", []).append("must be 1 for a dense model")
        elif m.moe_experts % ep != 0:
            errors.setdefault("parallelism.ep", []).append(
                f"must divide the number of experts ({m.moe_experts})"
            )
        elif (dp * cp) % ep != 0:
            errors.setdefault("parallelism.ep", []).append(f"must divide dp x cp ({dp * cp})")
    if errors:
        raise ScenarioError(errors)
    return tp, pp, dp, ep, cp


MICRO_BATCHES: tuple[int, ...] = (1, 2)
PP_MAX = 128
"""Pipeline depths the planner tries: divisors of the layer count and powers of two (with
Megatron's uneven first/last stages), up to 128 stages."""
VIRTUAL_STAGES: tuple[int, ...] = (1, 2, 4, 8)
CONTEXT_PARALLEL: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
CP_MIN_TOKENS_PER_RANK = 4096
"""The planner splits a sequence over cp ranks only while each keeps >= 4096 tokens (NeMo's
long-context recipes: CP 2 at 8k-16k, CP 16 at 128k)."""
TP_OVERLAP_HIDDEN = 0.8
"""Share of tensor-parallel collective time hidden behind GEMMs with Transformer Engine's
comm-GEMM overlap (userbuffers; default in NeMo recipes on Hopper and newer).  Engineering
estimate: the first and last chunk of each pipelined exchange stay exposed."""
TP_OVERLAP_DEFAULT_GENERATIONS = ("hopper", "blackwell")


@dataclass(frozen=True)
class _Candidate:
    tp: int
    pp: int
    cp: int
    dp: int
    ep: int
    mb: int
    vp: int
    sharding: str
    recompute: str
    stages: tuple[int, int, int]
    mem: MemoryEstimate
    estimate_s: float


def _microbatches(batch_sequences: int, dp: int, mb: int) -> int:
    return max(1, math.ceil(batch_sequences / (dp * mb)))


def _min_dp(batch: int, dp_max: int, mb: int, ep: int) -> int:
    """Fewest data-parallel ranks (a multiple of ep, <= dp_max) with the micro-batch count of
    dp_max: more ranks than that only add communication, so they are left idle."""
    m = _microbatches(batch, dp_max, mb)
    dp = math.ceil(batch / (m * mb))
    dp = math.ceil(dp / ep) * ep
    return max(ep, min(dp_max, dp))


def _tp_overlap(scenario: Scenario) -> bool:
    p = scenario.parallelism
    if p.tp_comm_overlap is not None:
        return p.tp_comm_overlap

    return profile(scenario.gpu).generation in TP_OVERLAP_DEFAULT_GENERATIONS


REFERENCE_GPU_NET_BYTES_PER_S = 400e9 / 8.0 * 0.9
"""The planner's fabric-independent reference: one 400G RDMA NIC per GPU at 90 % of line rate
(the engine's InfiniBand/RoCE wire efficiency), non-blocking."""

SLOW_REFERENCE_GPU_NET_BYTES_PER_S = 25e9 / 8.0 * 0.9 / 8.0
"""The other end of the designs the recommendation prices: one 25G RDMA NIC per 8-GPU server
(0.35 GB/s per GPU, 1/128 of :data:`REFERENCE_GPU_NET_BYTES_PER_S`).  The planner also keeps
its best plans for this network (:data:`SLOW_PLAN_CONTENDERS`): the plans best on a fast
network move many bytes (data parallel over every GPU, ZeRO-3), and a design far slower
than the reference needs the plans that keep traffic inside the server (tensor parallel
over the whole server, pipeline stages)."""


def _estimate_step_s(
    scenario: Scenario,
    tp: int,
    pp: int,
    cp: int,
    dp: int,
    ep: int,
    mb: int,
    vp: int,
    recompute: str,
    stages: tuple[int, int, int],
    tp_overlap: bool,
    sharding: str | tuple[str, ...] = "zero1",
    pp_sends: bool = True,
    bw: float = REFERENCE_GPU_NET_BYTES_PER_S,
) -> float:
    """Fabric-independent step estimate used to rank plans (``pp_sends=False`` leaves out the
    pipeline sends, which grow with interleaving: a lower bound over every interleaving; a
    tuple of shardings gives the cheapest of them: a lower bound over them).

    Stage compute x (micro-batches + bubble / vp) + exposed in-server TP collectives +
    data-parallel traffic not hidden behind the backward pass + pipeline sends + expert
    all-to-all, the communication on the reference fabric (:data:`REFERENCE_GPU_NET_BYTES_PER_S`).
    Every term is non-increasing as data-parallel ranks are added with the same global batch
    (ring traffic is bounded by its 2x limit), which is what makes the planner monotone in
    servers.
    """
    shape = _shape_terms(scenario, tp, pp, cp, dp, ep, mb, stages, bw)
    per_mb, tp_s = _stage_time_per_microbatch(scenario, tp, cp, ep, mb, recompute, stages, pp)
    shardings = (sharding,) if isinstance(sharding, str) else sharding
    return _estimate_from(shape, per_mb, tp_s, tp_overlap, pp, vp, shardings, pp_sends)


def _shape_terms(
    scenario: Scenario,
    tp: int,
    pp: int,
    cp: int,
    dp: int,
    ep: int,
    mb: int,
    stages: tuple[int, int, int],
    bw: float = REFERENCE_GPU_NET_BYTES_PER_S,
) -> tuple[int, float, float, float, bool, bool]:
    """(micro-batches, DP seconds per gradient pass, PP send seconds per micro-batch and
    virtual stage, EP all-to-all seconds per micro-batch, data-parallel group > 1, DualPipe),
    with ``bw`` bytes/s per GPU across servers (inside a server the reference's)."""
    assert scenario.training is not None
    m = scenario.model
    mcount = _microbatches(scenario.training.global_batch_sequences, dp, mb)
    gpn = scenario.gpus_per_node
    dense_params, expert_params, _, _ = _model_consts(m)
    grad = (dense_params / (tp * pp) + expert_params / (ep * pp)) * GRAD_BYTES_PER_PARAM
    grad /= bw if tp * cp * dp > gpn else REFERENCE_GPU_NET_BYTES_PER_S
    act = _act_bytes(scenario)
    pp_unit = 0.0
    # the stages are synchronous: once any edge joins two scale-up domains (placement, Megatron
    # order) every step waits on a network send
    if pipeline_crosses_network(tp, cp, dp, pp, domain_gpus(scenario)):
        pp_unit = 2.0 * mb * scenario.sequence_length / cp * m.hidden * act / tp / bw
    ep_unit = 0.0
    if expert_params > 0 and ep > 1:
        tokens = mb * scenario.sequence_length / cp / tp
        a2a = tokens * m.moe_top_k * m.hidden * act * 4.0
        moe_layers = math.ceil(m.moe_layers / m.layers * max(stages))
        ep_unit = (
            a2a * moe_layers / (bw if ep * tp * cp > gpn else REFERENCE_GPU_NET_BYTES_PER_S * 8)
        )
    return (
        mcount,
        grad,
        pp_unit,
        ep_unit,
        dp * cp > 1,
        scenario.parallelism.ep_overlap == "dualpipe",
    )


def _estimate_from(
    shape: tuple[int, float, float, float, bool, bool],
    per_mb: float,
    tp_s: float,
    tp_overlap: bool,
    pp: int,
    vp: int,
    shardings: tuple[str, ...],
    pp_sends: bool,
) -> float:
    """The arithmetic of :func:`_estimate_step_s` for one shape's precomputed terms."""
    mcount, grad, pp_unit, ep_unit, has_dp, dualpipe = shape
    tp_exposed = tp_s * (1.0 - TP_OVERLAP_HIDDEN if tp_overlap else 1.0)
    compute = (mcount + (pp - 1) / vp) * (per_mb + tp_exposed)
    dp_exposed = math.inf
    for sh in shardings:
        # reduce-scatter + all-gather (2x the shard at the ring limit); zero3 gathers the
        # weights again for every micro-batch's forward and backward
        dp_s = (2.0 + (2.0 * mcount if sh == "zero3" else 0.0)) * grad if has_dp else 0.0
        window = (compute if sh == "zero3" else per_mb) * DP_OVERLAP_EFFICIENCY
        dp_exposed = min(dp_exposed, max(0.0, dp_s - window))
    pp_send = pp_unit * mcount * vp if pp_sends else 0.0
    ep_s = ep_unit * mcount
    if dualpipe:
        ep_s = max(0.0, ep_s - compute)
    return compute + dp_exposed + pp_send + ep_s


def _sharding_options(scenario: Scenario) -> tuple[str, ...]:
    assert scenario.training is not None
    p = scenario.parallelism
    if p.zero is not None:
        return (ZERO_STAGES[p.zero],)
    if scenario.training.sharding_given:
        return (scenario.training.sharding,)
    return (
        (scenario.training.sharding, "zero3")
        if scenario.training.sharding != "zero3"
        else ("zero3",)
    )


def _search_training(
    scenario: Scenario, bw: float = REFERENCE_GPU_NET_BYTES_PER_S, keep: int = 1
) -> list[_Candidate]:
    """The fitting plans the planner considers (branch and bound on the step estimate).

    tp: powers of two inside the scale-up domain dividing the heads; pp: divisors of the
    layers and powers of two (Megatron's uneven first/last stages); cp: while >= 4096 tokens
    per rank; ep: divisors of the experts; vp: interleaving that divides the inner stages;
    micro-batch 1/2; ZeRO 1/3; recomputation none < selective < full (the first that fits,
    per sharding).  dp is the fewest ranks that reach the micro-batch count of all remaining
    GPUs, so adding servers never slows a plan (monotone by construction): the extra GPUs
    idle instead.  Estimates use ``bw`` bytes/s per GPU across servers.  A plan whose compute
    alone (no recomputation, no communication) is slower than the ``keep``-th best fitting
    plan found so far is skipped without pricing its memory, so the ``keep`` best by estimate
    are exact (among the plans returned): a true top ``keep`` depends on the plans alone, so
    the best plans of a size that fit a smaller size are the best of that size too, and the
    planner's levels (:func:`_fastest_on_fewer_gpus`) carry them to every larger size.
    """
    assert scenario.training is not None
    p = scenario.parallelism
    m = scenario.model
    batch = scenario.training.global_batch_sequences
    n = scenario.gpus
    tp_limit = min(domain_gpus(scenario), max(scenario.gpus_per_node, 8))
    tps = sorted((t for t in _powers_of_two_up_to(tp_limit) if m.heads % t == 0), reverse=True)
    cps = [
        c
        for c in CONTEXT_PARALLEL
        if c == 1
        or (
            scenario.sequence_length // c >= CP_MIN_TOKENS_PER_RANK
            and scenario.sequence_length % (2 * c) == 0
        )
    ]
    pps = sorted(
        q
        for q in set(_divisors(m.layers)) | set(_powers_of_two_up_to(m.layers))
        if q <= PP_MAX and _stage_split(m.layers, q) is not None
    )
    eps = [1]
    if m.is_moe:
        eps = [e for e in _divisors(m.moe_experts) if e <= n]
    mbs = (p.micro_batch,) if p.micro_batch else MICRO_BATCHES
    recomputes = (p.recompute,) if p.recompute else RECOMPUTE_ORDER
    shardings = _sharding_options(scenario)
    tp_overlap = _tp_overlap(scenario)
    # 1. every shape (tp, cp, pp, ep, micro-batch) that can fit at all, with a compute floor
    shapes: list[tuple[float, int, int, int, int, int, int, int, tuple[int, int, int], int]] = []
    for tp in tps:
        for cp in cps:
            for pp in pps:
                mp = tp * cp * pp
                if mp > n:
                    break
                stages = _stage_split(m.layers, pp)
                assert stages is not None
                dp_max = n // mp
                for ep in eps:
                    ep_unit = max(1, ep // math.gcd(ep, cp))
                    if dp_max < ep_unit:
                        continue
                    for mb in mbs:
                        if mb > 1 and batch < dp_max * mb and mb != p.micro_batch:
                            continue
                        dp = _min_dp(batch, dp_max - dp_max % ep_unit, mb, ep_unit)
                        mcount = _microbatches(batch, dp, mb)
                        vp_max = p.virtual_stages or max(
                            (v for v in VIRTUAL_STAGES if stages[1] % v == 0), default=1
                        )
                        per_mb = _stage_time_per_microbatch(
                            scenario, tp, cp, ep, mb, recomputes[0], stages, pp
                        )[0]
                        floor = (mcount + (pp - 1) / vp_max) * per_mb
                        shapes.append((floor, tp, cp, pp, ep, mb, dp, mcount, stages, vp_max))
    # 2. best first: price shapes by their floor until the floor exceeds the keep-th best
    # estimate (a max-heap of the keep best so far)
    shapes.sort(key=lambda x: x[0])
    out: list[_Candidate] = []
    kept: list[float] = []
    best = math.inf
    for floor, tp, cp, pp, ep, mb, dp, mcount, stages, vp_max in shapes:
        if floor > best:
            break  # compute alone (no recomputation, no communication) is already slower
        # the smallest footprint of this shape (last sharding and recomputation, no
        # interleaving), then a bound with the data-parallel term of the cheaper sharding
        if not _fits(
            scenario, tp, pp, dp, ep, mb, shardings[-1], recomputes[-1], mcount, cp, 1, stages
        ):
            continue
        shape = _shape_terms(scenario, tp, pp, cp, dp, ep, mb, stages, bw)
        timing = [
            _stage_time_per_microbatch(scenario, tp, cp, ep, mb, rc, stages, pp)
            for rc in recomputes
        ]
        bound = _estimate_from(
            shape, timing[0][0], timing[0][1], tp_overlap, pp, vp_max, shardings, False
        )
        if bound > best:
            continue
        vps: tuple[int, ...] = (p.virtual_stages,) if p.virtual_stages else (1,)
        if not p.virtual_stages and pp > 1:
            vps = tuple(v for v in VIRTUAL_STAGES if stages[1] % v == 0 and mcount >= pp) or (1,)
        for sharding in shardings:
            # memory grows with interleaving: the first recomputation that fits never drops
            first_rc = 0
            for vp in vps:
                while first_rc < len(recomputes):
                    rc = recomputes[first_rc]
                    per_mb, tp_s = timing[first_rc]
                    est = _estimate_from(shape, per_mb, tp_s, tp_overlap, pp, vp, (sharding,), True)
                    if est > best:
                        break  # more recomputation is only slower
                    if _fits(scenario, tp, pp, dp, ep, mb, sharding, rc, mcount, cp, vp, stages):
                        mem = training_memory(
                            scenario, tp, pp, dp, ep, mb, sharding, rc, mcount,
                            cp=cp, vp=vp, stages=stages,
                        )  # fmt: skip
                        heapq.heappush(kept, -est)
                        if len(kept) > keep:
                            heapq.heappop(kept)
                        best = -kept[0] if len(kept) >= keep else math.inf
                        out.append(
                            _Candidate(tp, pp, cp, dp, ep, mb, vp, sharding, rc, stages, mem, est)
                        )
                        break
                    first_rc += 1
                if first_rc >= len(recomputes):
                    break
    return out


RECOMPUTE_ORDER: tuple[str, ...] = ("none", "selective", "full")


_LEVEL_CACHE: dict[Scenario, tuple[_Candidate | None, tuple[_Candidate, ...]]] = {}
"""Per cluster size: its fastest plan on the reference design and its planner's contenders."""
"""The planner's best plan of a power-of-two number of servers (shared by the sizes above
it, and by the scaling curve's sizes)."""

REFERENCE_DESIGN = Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8)
"""The design the planner uses to compare its best plans of different sizes: one 400G
InfiniBand NIC per GPU, non-blocking (the fabric of :data:`REFERENCE_GPU_NET_BYTES_PER_S`)."""


PLAN_CONTENDERS = 4
"""The planner's best plans by its step estimate that the full step model then prices: the
estimate leaves out per-hop latency, placement and stragglers and can rank two plans a few per
cent apart the wrong way round (llama3-70b on 70 H100 servers picked tp8/pp2/dp35 at 6.03 s
over tp4/pp2/dp69 at 5.79 s), and the full model decides."""

SLOW_PLAN_CONTENDERS = 2
"""The planner's best plans by its estimate on :data:`SLOW_REFERENCE_GPU_NET_BYTES_PER_S`,
carried beside the :data:`PLAN_CONTENDERS` so every design, fast or slow, weighs a plan made
for a network like its own (llama3-70b on A100 over one 25G TCP NIC per server: 347 s per step
on 13 servers with tp8/dp13, 4,262 s on 16 servers, whose contenders were all data-parallel
ZeRO-3 plans made for 400G per GPU)."""


def _ranked_contenders(scenario: Scenario) -> tuple[_Candidate, ...]:
    """The planner's contenders of one cluster size, best by the reference estimate first:
    its :data:`PLAN_CONTENDERS` best for the reference network, then its
    :data:`SLOW_PLAN_CONTENDERS` best for the slow one (each once)."""

    hit = _CONTENDERS_CACHE.get(scenario)
    if hit is not None:
        return hit

    def rank(found: list[_Candidate]) -> list[_Candidate]:
        return sorted(found, key=lambda c: (c.estimate_s, c.tp * c.pp * c.cp * c.dp))

    fast = rank(_search_training(scenario, keep=PLAN_CONTENDERS))
    slow = rank(
        _search_training(scenario, SLOW_REFERENCE_GPU_NET_BYTES_PER_S, keep=SLOW_PLAN_CONTENDERS)
    )
    seen = {_plan_key(c) for c in fast[:PLAN_CONTENDERS]}
    extra = [c for c in slow if _plan_key(c) not in seen][:SLOW_PLAN_CONTENDERS]
    out = (*fast[:PLAN_CONTENDERS], *extra)
    if len(_CONTENDERS_CACHE) > 2048:
        _CONTENDERS_CACHE.clear()
    _CONTENDERS_CACHE[scenario] = out
    return out


_CONTENDERS_CACHE: dict[Scenario, tuple[_Candidate, ...]] = {}


def _plan_key(c: _Candidate) -> tuple[Any, ...]:
    return (c.tp, c.pp, c.cp, c.dp, c.ep, c.mb, c.vp, c.sharding, c.recompute, c.stages)


def _reference_step_s(scenario: Scenario, c: _Candidate) -> float:
    """A candidate's step on the full model and the reference design (its own servers)."""
    from advisor.engine.performance import training_step_time_s

    plan = _candidate_plan(scenario, c, "planner")
    return training_step_time_s(
        scenario, _training_workload(scenario, plan, c.mem, notes=()), REFERENCE_DESIGN
    )


def _level_best(
    scenario: Scenario, smaller_best: _Candidate | None
) -> tuple[_Candidate | None, tuple[_Candidate, ...]]:
    """The fastest plan of a cluster of this size on the reference design, and the plans it
    was chosen from: its planner's :data:`PLAN_CONTENDERS` best by estimate and the best of
    the next smaller level, priced on the full step model (cached per scenario)."""
    if scenario not in _LEVEL_CACHE:
        if len(_LEVEL_CACHE) > 2048:
            _LEVEL_CACHE.clear()
        contenders = _ranked_contenders(scenario)
        pool = [*contenders, *([smaller_best] if smaller_best is not None else [])]
        best = (
            min(pool, key=lambda c: (_reference_step_s(scenario, c), c.tp * c.pp * c.cp * c.dp))
            if pool
            else None
        )
        _LEVEL_CACHE[scenario] = (best, contenders)
    return _LEVEL_CACHE[scenario]


def _fastest_on_fewer_gpus(
    scenario: Scenario,
    chosen: _Candidate,
    notes: list[str],
    others: list[WorkloadPlan],
    *,
    contenders: Sequence[_Candidate] = (),
) -> _Candidate:
    """Monotone by construction: the best plan of this cluster, or the best plan of any
    smaller power-of-two number of servers if that predicts a faster step (its extra GPUs
    idle).  The candidates are compared with the full step model
    (:func:`advisor.engine.performance.training_step_time_s`) on :data:`REFERENCE_DESIGN`,
    each on the contiguous sub-fabric its own servers need, so a plan predicts the same step
    on any larger cluster: the candidates of a cluster include every power-of-two size below
    it, and its predicted step never exceeds theirs.  The workload plans of the candidates
    not chosen go to ``others``: each design also evaluates them (a design unlike the
    reference may rank them differently).
    """
    from advisor.engine.performance import training_step_time_s

    gpn = scenario.gpus_per_node
    candidates = [chosen, *contenders]
    servers = 1
    level_best: _Candidate | None = None
    # every design also weighs each smaller level's contenders (``others``): a design unlike
    # the reference may rank them differently, and carrying them keeps its step monotone
    level_contenders: list[_Candidate] = []
    while servers * gpn < scenario.gpus:
        level_best, contenders_here = _level_best(replace(scenario, gpus=servers * gpn), level_best)
        servers *= 2
        level_contenders.extend(contenders_here)
        if level_best is not None:
            candidates.append(level_best)
    if len(candidates) == 1:
        return chosen
    seen: dict[tuple[Any, ...], tuple[float, int, _Candidate]] = {}
    workloads: dict[tuple[Any, ...], WorkloadPlan] = {}
    for c in candidates:
        key = (c.tp, c.pp, c.cp, c.dp, c.ep, c.mb, c.vp, c.sharding, c.recompute, c.stages)
        if key in seen:
            continue
        plan = _candidate_plan(scenario, c, "planner")
        workload = _training_workload(scenario, plan, c.mem, notes=())
        step = training_step_time_s(scenario, workload, REFERENCE_DESIGN)
        seen[key] = (step, plan.gpus_used, c)
        workloads[key] = workload
    best = min(seen.values(), key=lambda x: (x[0], x[1]))
    others.extend(workload for key, workload in workloads.items() if seen[key][2] is not best[2])
    for c in level_contenders:
        key = (c.tp, c.pp, c.cp, c.dp, c.ep, c.mb, c.vp, c.sharding, c.recompute, c.stages)
        if key not in workloads:
            workloads[key] = _training_workload(
                scenario, _candidate_plan(scenario, c, "planner"), c.mem, notes=()
            )
            others.append(workloads[key])
    if best[2] is not chosen:
        own_entry = seen[
            (
                chosen.tp, chosen.pp, chosen.cp, chosen.dp, chosen.ep, chosen.mb, chosen.vp,
                chosen.sharding, chosen.recompute, chosen.stages,
            )
        ]  # fmt: skip
        own, chosen_gpus = own_entry[0], own_entry[1]
        if best[1] >= chosen_gpus:
            return best[2]  # a plan of this cluster the estimate had ranked lower
        notes.append(
            f"a plan on {best[1]} GPUs predicts a faster step ({best[0]:.4g} s) than the best "
            f"plan using more of the {scenario.gpus} GPUs ({own:.4g} s on the reference "
            "400G-per-GPU InfiniBand fabric, each on the contiguous servers it needs): the "
            "planner keeps it and leaves the other GPUs idle, so adding servers never slows "
            "the step"
        )
    return best[2]


def _candidate_plan(scenario: Scenario, c: _Candidate, source: str) -> Plan:
    first, _, last = c.stages
    even = first == last == c.stages[1]
    return Plan(
        tp=c.tp,
        pp=c.pp,
        dp=c.dp,
        ep=c.ep,
        micro_batch=c.mb,
        virtual_stages=c.vp,
        sharding=c.sharding,
        recompute=c.recompute,
        source=source,
        cp=c.cp,
        first_stage_layers=0 if even else first,
        last_stage_layers=0 if even else last,
        tp_comm_overlap=_tp_overlap(scenario),
        ep_overlap=scenario.parallelism.ep_overlap or "none",
        gpus_used=c.tp * c.cp * c.pp * c.dp,
    )


def _plan_training(scenario: Scenario) -> WorkloadPlan:
    assert scenario.training is not None
    p = scenario.parallelism
    batch = scenario.training.global_batch_sequences
    notes: list[str] = []
    others: list[WorkloadPlan] = []
    if p.given:
        tp, pp, dp, ep, cp = _check_explicit_training(scenario)
        stages = _explicit_stages(scenario, pp)
        mb = p.micro_batch or 1
        m_count = _microbatches(batch, dp, mb)
        vps: tuple[int, ...] = (p.virtual_stages,) if p.virtual_stages else (1,)
        if not p.virtual_stages and pp > 1:
            vps = tuple(v for v in VIRTUAL_STAGES if stages[1] % v == 0 and m_count >= pp) or (1,)
        recomputes = (p.recompute,) if p.recompute else RECOMPUTE_ORDER
        tp_overlap = _tp_overlap(scenario)
        options: list[_Candidate] = []
        best_mem: MemoryEstimate | None = None
        for vp in vps:
            for sharding in _sharding_options(scenario):
                for rc in recomputes:
                    mem = training_memory(
                        scenario,
                        tp,
                        pp,
                        dp,
                        ep,
                        mb,
                        sharding,
                        rc,
                        m_count,
                        cp=cp,
                        vp=vp,
                        stages=stages,
                    )
                    best_mem = best_mem or mem
                    if mem.fits:
                        est = _estimate_step_s(
                            scenario, tp, pp, cp, dp, ep, mb, vp, rc, stages, tp_overlap, sharding
                        )
                        options.append(
                            _Candidate(tp, pp, cp, dp, ep, mb, vp, sharding, rc, stages, mem, est)
                        )
                        break
        if not options:
            assert best_mem is not None
            raise ScenarioError.single(
                "parallelism",
                f"the plan needs {best_mem.total_gb:.0f} GB per GPU but {scenario.gpu.id} has "
                f"{best_mem.usable_gb:.0f} GB usable; raise tp, pp, cp or ep, recompute, or "
                "shard (zero3)",
            )
        chosen = min(options, key=lambda c: c.estimate_s)
        source = "explicit"
    else:
        fitting = _ranked_contenders(scenario)
        if not fitting:
            raise ScenarioError.single(
                "gpus",
                f"{scenario.model.name} does not fit on {scenario.gpus} x {scenario.gpu.id} "
                "even with maximum tensor, pipeline, context and expert parallelism, full "
                "recomputation and zero3 sharding; add GPUs or pick a GPU with more memory",
            )
        chosen = _fastest_on_fewer_gpus(scenario, fitting[0], notes, others, contenders=fitting[1:])
        source = "planner"
    plan = _candidate_plan(scenario, chosen, source)
    used = plan.gpus_used
    if source == "planner":
        full_dp = math.ceil(batch / plan.micro_batch)
        full_dp = math.ceil(full_dp / max(1, plan.ep)) * max(1, plan.ep)
        limit = math.ceil(plan.model_parallel * full_dp / scenario.gpus_per_node)
        notes.append(
            f"with this plan's model parallelism (tp {plan.tp} x cp {plan.cp} x pp {plan.pp}) "
            f"more servers stop shortening the step beyond {limit} servers, where every "
            f"data-parallel rank holds one micro-batch of the {batch}-sequence global batch"
        )
    if used < scenario.gpus:
        notes.append(
            f"the plan uses {used} of {scenario.gpus} GPUs (tp {plan.tp} x cp {plan.cp} "
            f"x pp {plan.pp} x dp {plan.dp}); {scenario.gpus - used} GPUs idle: with a global "
            f"batch of {batch} sequences more data-parallel ranks would not shorten the step "
            f"(it stops improving beyond {math.ceil(used / scenario.gpus_per_node)} servers "
            "for this plan)"
        )
    dp, mb = plan.dp, plan.micro_batch
    if batch < dp * mb:
        notes.append(
            f"global batch raised from {batch} to {dp * mb} sequences "
            f"(at least one micro-batch per data-parallel rank)"
        )
    elif batch % (dp * mb) != 0:
        notes.append(
            f"global batch rounded to {_microbatches(batch, dp, mb) * dp * mb} sequences "
            f"(a multiple of dp x micro_batch = {dp * mb})"
        )
    if others:
        sizes = sorted({o.plan.gpus_used for o in others})
        notes.append(
            f"a design on which it predicts a faster step uses one of the planner's "
            f"{len(others)} other plans instead (on "
            + ", ".join(f"{n:,}" for n in sizes)
            + " GPUs; the other GPUs idle), so adding servers never slows a design's step"
        )
    workload = _training_workload(scenario, plan, chosen.mem, notes=tuple(notes))
    return replace(workload, alternatives=tuple(others))


def _training_workload(
    scenario: Scenario, plan: Plan, mem: MemoryEstimate, *, notes: tuple[str, ...]
) -> WorkloadPlan:
    """The WorkloadPlan of a training scenario under one parallelism plan."""
    dom = domain_gpus(scenario)
    return WorkloadPlan(
        plan=plan,
        memory=mem,
        nodes=scenario.nodes,
        gpus_per_node=scenario.gpus_per_node,
        domain_gpus=dom,
        domains=max(1, (plan.gpus_used or scenario.gpus) // dom),
        spans_servers=scenario.nodes > 1,
        needs_compute_fabric=scenario.gpus > dom,
        training=_training_costs(scenario, plan),
        inference=None,
        notes=notes,
    )


SELECTIVE_RECOMPUTE_EXTRA = 0.3
"""Selective recomputation (Megatron-Core ``recompute_modules``: activation function and norms)
re-runs this share of a layer's forward element-wise time."""


_STAGE_CACHE: dict[tuple[Any, ...], tuple[float, float]] = {}
_KEEP: dict[int, Any] = {}
"""Objects whose id() keys the stage cache, kept alive so an id is never reused while cached."""


def _stage_time_per_microbatch(
    scenario: Scenario,
    tp: int,
    cp: int,
    ep: int,
    mb: int,
    recompute: str,
    stages: tuple[int, int, int],
    pp: int,
) -> tuple[float, float]:
    """Cached :func:`_stage_time` (the planner asks for the same stage many times)."""
    p = scenario.parallelism
    _KEEP[id(scenario.gpu)] = scenario.gpu
    _KEEP[id(scenario.model)] = scenario.model
    key = (
        id(scenario.gpu),
        id(scenario.model),
        scenario.precision,
        scenario.sequence_length,
        p.flash_attention,
        p.sequence_parallel,
        tp,
        cp,
        ep,
        mb,
        recompute,
        stages,
        pp,
    )
    v = _STAGE_CACHE.get(key)
    if v is None:
        if len(_STAGE_CACHE) > 8192:
            _STAGE_CACHE.clear()
            _KEEP.clear()
            _KEEP[id(scenario.gpu)] = scenario.gpu
            _KEEP[id(scenario.model)] = scenario.model
        v = _stage_time(scenario, tp, cp, ep, mb, recompute, stages, pp)
        _STAGE_CACHE[key] = v
    return v


def _stage_time(
    scenario: Scenario,
    tp: int,
    cp: int,
    ep: int,
    mb: int,
    recompute: str,
    stages: tuple[int, int, int],
    pp: int,
) -> tuple[float, float]:
    """(compute seconds of the slowest pipeline stage for one micro-batch forward+backward,
    in-domain TP collective seconds of that stage)."""

    m = scenario.model
    seq = scenario.sequence_length
    tokens = max(1, mb * seq // max(1, cp))
    par = scenario.parallelism
    lc = layer_forward(
        scenario.gpu,
        scenario.precision,
        m,
        tokens,
        seq,
        tp,
        ep,
        par.flash_attention is not False,
        par.sequence_parallel is not False,
    )
    layer = (1.0 + BACKWARD_FACTOR) * (lc.gemm_s + lc.elementwise_s) + 3.5 * lc.attention_s
    if recompute == "full":
        layer += lc.forward_s
    elif recompute == "selective":
        layer += SELECTIVE_RECOMPUTE_EXTRA * lc.elementwise_s
    head = 3.0 * gemm_time_s(scenario.gpu, scenario.precision, tokens, m.vocab / tp, m.hidden)
    first, inner, last = stages
    if pp <= 1:
        stage = first * layer + head
        stage_layers = first
    else:
        stage = max(first * layer, inner * layer, last * layer + head)
        stage_layers = max(first, inner, last)
    tp_s = 0.0
    if tp > 1:
        tp_bytes = mb * seq / cp * m.hidden * _act_bytes(scenario)
        per_layer = 6 if recompute == "full" else 4
        tp_s = per_layer * stage_layers * _intra_time_cached(scenario, tp_bytes, tp)
    return stage, tp_s


def _act_bytes(scenario: Scenario) -> float:
    return 2.0 if scenario.precision == "fp8" else WEIGHT_BYTES.get(scenario.precision, 2.0)


_INTRA_CACHE: dict[tuple[str, float, int], float] = {}


def _intra_time_cached(scenario: Scenario, nbytes: float, ranks: int) -> float:
    key = (scenario.gpu.id, nbytes, ranks)
    v = _INTRA_CACHE.get(key)
    if v is None:
        if len(_INTRA_CACHE) > 4096:
            _INTRA_CACHE.clear()
        v = _intra_time_s(scenario, "all_reduce", nbytes, ranks)
        _INTRA_CACHE[key] = v
    return v


def _training_costs(scenario: Scenario, plan: Plan) -> TrainingPlan:
    assert scenario.training is not None
    m = scenario.model
    tp, pp, dp, ep, mb, cp = plan.tp, plan.pp, plan.dp, plan.ep, plan.micro_batch, plan.cp
    used = plan.gpus_used or scenario.gpus
    microbatches = _microbatches(scenario.training.global_batch_sequences, dp, mb)
    batch = microbatches * dp * mb
    seq = scenario.sequence_length
    tokens = batch * seq
    fwd = forward_flops_per_token(m, seq)
    passes = 4.0 if plan.recompute == "full" else 3.0
    # recomputation repeats every layer's forward pass but not the output (logit) layer
    recompute_flops = fwd - 2.0 * m.hidden * m.vocab if plan.recompute == "full" else 0.0
    hardware_flops = tokens * (3.0 * fwd + recompute_flops) / used
    model_flops = tokens * fwd * 3.0 / used
    stages = (
        (plan.first_stage_layers or math.ceil(m.layers / pp)),
        math.ceil(m.layers / pp)
        if not plan.first_stage_layers
        else _inner_layers(m.layers, pp, plan.first_stage_layers, plan.last_stage_layers),
        (plan.last_stage_layers or math.ceil(m.layers / pp)),
    )
    if not plan.first_stage_layers and not plan.last_stage_layers:
        split = _stage_split(m.layers, pp)
        stages = split if split is not None else stages
    per_mb, tp_stage_s = _stage_time_per_microbatch(
        scenario, tp, cp, ep, mb, plan.recompute, stages, pp
    )
    compute_s = microbatches * per_mb
    # optimizer: memory-bound Adam over this GPU's shard of parameters
    dense = m.dense_params / (tp * pp)
    experts = m.expert_params / (ep * pp) if m.is_moe else 0.0
    edp = max(1, dp * cp // ep) if m.is_moe else dp * cp
    opt_div = dp * cp if plan.sharding != "none" else 1
    opt_params = dense / opt_div + experts / (edp if plan.sharding != "none" else 1)
    optimizer_s = (
        opt_params
        * OPTIMIZER_BYTES_PER_PARAM
        / (scenario.gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY)
    )
    act_bytes = _act_bytes(scenario)
    dom = domain_gpus(scenario)
    stage_layers = max(stages) if pp > 1 else m.layers

    # tensor parallel: 2 all-reduces forward + 2 backward per layer per micro-batch
    # (+2 with recomputation), of b x s/cp x h activations (Megatron-LM, Shoeybi et al. 2019)
    tp_bytes = mb * seq / cp * m.hidden * act_bytes
    per_layer = 6 if plan.recompute == "full" else 4
    tp_count = per_layer * stage_layers * microbatches if tp > 1 else 0
    tp_layout = group_layout(tp, 1, dom, used)
    tp_comm_s = 0.0
    if tp > 1 and not tp_layout.crosses_network:
        tp_comm_s = microbatches * tp_stage_s

    # pipeline: activations of one micro-batch forward, their gradients backward, per edge
    pp_bytes = mb * seq / cp * m.hidden * act_bytes / tp
    pp_count = 2 * microbatches * plan.virtual_stages if pp > 1 else 0
    pp_crosses = pipeline_crosses_network(tp, cp, dp, pp, dom)

    # data parallel: dense gradients over dp x cp ranks, expert gradients over dp x cp / ep
    grad = GRAD_BYTES_PER_PARAM
    dp_ops: list[tuple[str, float, int]] = []
    edp_ops: list[tuple[str, float, int]] = []
    dense_bytes = dense * grad
    expert_bytes = experts * grad
    dpg = dp * cp
    if plan.sharding == "zero3":
        if dpg > 1:
            dp_ops = [
                ("all_gather", dense_bytes, 2 * microbatches),
                ("reduce_scatter", dense_bytes, 1),
            ]
        if edp > 1 and expert_bytes > 0:
            edp_ops = [
                ("all_gather", expert_bytes, 2 * microbatches),
                ("reduce_scatter", expert_bytes, 1),
            ]
    elif plan.sharding == "zero1":
        if dpg > 1:
            dp_ops = [("reduce_scatter", dense_bytes, 1), ("all_gather", dense_bytes, 1)]
        if edp > 1 and expert_bytes > 0:
            edp_ops = [("reduce_scatter", expert_bytes, 1), ("all_gather", expert_bytes, 1)]
    else:
        if dpg > 1:
            dp_ops = [("all_reduce", dense_bytes, 1)]
        if edp > 1 and expert_bytes > 0:
            edp_ops = [("all_reduce", expert_bytes, 1)]
    dp_layout = group_layout(dpg, tp, dom, used)
    ep_layout = group_layout(ep, tp, dom, used)
    edp_layout = group_layout(edp, tp * ep, dom, used)
    cp_layout = group_layout(cp, tp, dom, used)

    # expert parallel: dispatch + combine per MoE layer, forward and backward (+1 fwd w/ recompute)
    ep_bytes = 0.0
    ep_count = 0
    ep_intra_s = 0.0
    if m.is_moe and ep > 1:
        tokens_per_gpu = mb * seq / cp / tp
        ep_bytes = tokens_per_gpu * m.moe_top_k * m.hidden * act_bytes
        moe_layers_stage = math.ceil(m.moe_layers / m.layers * stage_layers)
        passes_a2a = 6 if plan.recompute == "full" else 4
        ep_count = passes_a2a * moe_layers_stage * microbatches
        if not ep_layout.crosses_network:
            ep_intra_s = ep_count * _intra_time_s(scenario, "all_to_all", ep_bytes, ep, nvls=False)

    # context parallel: K and V of every rank's chunk travel the cp ring, forward (1x) and
    # backward (2x: K/V again and their gradients), overlapped with the attention kernels
    cp_bytes = 0.0
    cp_count = 0
    cp_intra_s = 0.0
    attention_s = 0.0
    if cp > 1:
        kv = m.kv_dim_per_layer or 2 * m.kv_heads * m.head_dim
        local = mb * seq / cp * kv * act_bytes / min(tp, max(1, m.kv_heads))
        cp_bytes = local * cp
        cp_count = 3 * stage_layers * microbatches

        lc = layer_forward(
            scenario.gpu, scenario.precision, m, max(1, mb * seq // cp), seq, tp, ep, True, True
        )
        attention_s = 3.5 * lc.attention_s * stage_layers * microbatches
        if not cp_layout.crosses_network:
            cp_intra_s = cp_count * _intra_time_s(scenario, "all_gather", cp_bytes, cp, nvls=False)

    return TrainingPlan(
        microbatches=microbatches,
        global_batch_sequences=batch,
        tokens_per_step=tokens,
        steps=scenario.training.total_tokens / tokens,
        hardware_flops_per_gpu=hardware_flops,
        model_flops_per_gpu=model_flops,
        compute_s=compute_s,
        optimizer_s=optimizer_s,
        forward_fraction=1.0 / passes,
        tp_comm_s=tp_comm_s,
        tp_bytes_per_collective=tp_bytes,
        tp_collectives_per_step=tp_count,
        pp_bytes_per_p2p=pp_bytes,
        pp_p2p_per_step=pp_count,
        dp_bytes=dense_bytes,
        dp_op_bytes=tuple(dp_ops),
        expert_dp_op_bytes=tuple(edp_ops),
        ep_bytes_per_all_to_all=ep_bytes,
        ep_all_to_all_per_step=ep_count,
        ep_intra_s=ep_intra_s,
        dp_layout=dp_layout,
        expert_dp_layout=edp_layout,
        tp_layout=tp_layout,
        ep_layout=ep_layout,
        pp_crosses_network=pp_crosses,
        tp_overlap=TP_OVERLAP_HIDDEN if plan.tp_comm_overlap else 0.0,
        ep_overlap=plan.ep_overlap,
        cp_layout=cp_layout,
        cp_bytes_per_exchange=cp_bytes,
        cp_exchanges_per_step=cp_count,
        cp_intra_s=cp_intra_s,
        attention_s=attention_s,
    )


def _inner_layers(layers: int, pp: int, first: int, last: int) -> int:
    given = [v for v in (first, last) if v]
    rest = layers - sum(given)
    inner_stages = pp - len(given)
    return rest // inner_stages if inner_stages > 0 else max(given)


# ----------------------------------------------------------------------------- inference


def _plan_inference(scenario: Scenario) -> WorkloadPlan:
    assert scenario.inference is not None
    inf = scenario.inference
    m = scenario.model
    p = scenario.parallelism
    dom = domain_gpus(scenario)
    notes: list[str] = []

    def kv_split(tp: int, ep_like: int) -> int:
        return min(tp, m.kv_heads) if ep_like <= 1 else 1

    deployment = _choose_deployment(scenario, dom)
    if deployment == "disaggregated":
        return _plan_disaggregated(scenario, dom)
    if deployment == "compare":
        return _best_serving_plan(scenario)

    chosen: tuple[int, int, int, int, MemoryEstimate] | None = None  # tp, pp, ep, r, mem
    if p.given:
        tp, pp, ep = p.tp or 1, p.pp or 1, p.ep or 1
        r = tp * pp if ep <= 1 else max(ep, tp * pp)
        errors: dict[str, list[str]] = {}
        if p.dp is not None and p.dp * r != scenario.gpus:
            errors["parallelism"] = [
                f"replicas (dp={p.dp}) x GPUs per replica ({r}) must equal gpus ({scenario.gpus})"
            ]
        elif scenario.gpus % r != 0:
            errors["parallelism"] = [f"GPUs per replica ({r}) must divide gpus ({scenario.gpus})"]
        if m.heads % tp != 0:
            errors["parallelism.tp"] = [f"must divide the model's heads ({m.heads})"]
        if ep > 1 and not m.is_moe:
            errors["parallelism.ep"] = ["must be 1 for a dense model"]
        elif ep > 1 and ep > m.moe_experts:
            errors["parallelism.ep"] = [f"must be <= the number of experts ({m.moe_experts})"]
        if errors:
            raise ScenarioError(errors)
        replicas = scenario.gpus // r
        batch = math.ceil(inf.concurrent_requests / replicas)
        # ep need not divide the experts: redundant copies fill every GPU equally
        mem = (
            _moe_ep_memory(scenario, r, batch)
            if ep > 1
            else inference_memory(scenario, r, batch, kv_split(tp, ep))
        )
        if not mem.fits:
            raise ScenarioError.single(
                "parallelism",
                f"the plan needs {mem.total_gb:.0f} GB per GPU but {scenario.gpu.id} has "
                f"{mem.usable_gb:.0f} GB usable",
            )
        chosen = (tp, pp, ep, r, mem)
        source = "explicit"
    else:
        # replica sizes: whole servers or domains, or powers of two; a remainder of the
        # cluster too small for another replica stays idle (said in the notes)
        sizes = [r for r in _powers_of_two_up_to(scenario.gpus_per_node) if scenario.gpus % r == 0]
        sizes += [
            k * dom for k in range(1, scenario.gpus // dom + 1) if k * dom > scenario.gpus_per_node
        ]
        sizes += [
            k * scenario.gpus_per_node
            for k in range(2, scenario.gpus // scenario.gpus_per_node + 1)
            if scenario.gpus % (k * scenario.gpus_per_node) == 0
            and k * scenario.gpus_per_node > dom
        ]
        sizes += [r for r in _powers_of_two_up_to(scenario.gpus) if r > dom]
        if inf.independent_replicas or deployment == "replicas":
            sizes = [r for r in sizes if r <= dom]
        # replicas that use every GPU first, then the smallest that fits
        for r in sorted(set(sizes), key=lambda size: (scenario.gpus % size != 0, size)):
            replicas = scenario.gpus // r
            batch = math.ceil(inf.concurrent_requests / replicas)
            if r <= dom:
                tp_c = min(r, _largest_pow2_dividing(m.heads, r))
                tp, pp, ep = tp_c, r // tp_c, 1
                if m.is_moe and r > 1 and m.moe_experts % r == 0 and r > dom:
                    ep = r
            elif m.is_moe:
                tp, pp, ep = 1, 1, _largest_divisor_at_most(m.moe_experts, r)
                if ep < r:
                    tp, ep = min(dom, _largest_pow2_dividing(m.heads, dom)), 1
                    pp = r // tp
            else:
                tp = min(dom, _largest_pow2_dividing(m.heads, dom))
                pp = r // tp
                ep = 1
            if tp * pp * ep != r:
                continue  # a replica is whole tensor x pipeline (or expert) groups
            ks = kv_split(tp, ep) if ep <= 1 else 1
            mem = inference_memory(scenario, r, batch if ep <= 1 else math.ceil(batch / 1), ks)
            if ep > 1:
                # attention is data-parallel over the expert group: each GPU holds the
                # dense weights and its share of requests' KV cache
                mem = _moe_ep_memory(scenario, r, batch)
            if mem.fits:
                chosen = (tp, pp, ep, r, mem)
                break
        if chosen is None:
            field = "inference.independent_replicas" if inf.independent_replicas else "gpus"
            if deployment == "replicas":
                field = "inference.deployment"
            weights_gb = m.params * WEIGHT_BYTES[scenario.precision] / GB
            usable_gb = scenario.gpu.memory_gb * MEMORY_USABLE_FRACTION
            need = math.ceil(weights_gb / usable_gb)
            limit = dom if inf.independent_replicas or deployment == "replicas" else scenario.gpus
            context = inf.prompt_tokens + inf.output_tokens
            raise ScenarioError.single(
                field,
                f"{m.name} with {inf.concurrent_requests} concurrent requests does not fit on "
                f"{scenario.gpus} x {scenario.gpu.id}"
                + (" inside one server" if inf.independent_replicas else "")
                + (
                    f": its {scenario.precision} weights alone take {weights_gb:,.0f} GB at "
                    f"{usable_gb:.0f} GB usable per GPU, so a replica needs more than {need} "
                    "GPUs (add GPUs or use a smaller precision)"
                    if need >= limit
                    else f": the weights ({weights_gb:,.0f} GB) fit, the KV cache of "
                    f"{inf.concurrent_requests} requests of {context} tokens does not "
                    "(fewer concurrent requests or shorter prompts would fit)"
                ),
            )
        source = "planner"
    tp, pp, ep, r, mem = chosen
    replicas = scenario.gpus // r
    if replicas * r < scenario.gpus:
        notes.append(
            f"{replicas} replica(s) of {r} GPUs use {replicas * r} of {scenario.gpus} GPUs; "
            f"the other {scenario.gpus - replicas * r} are too few for another replica and idle"
        )
    batch = math.ceil(inf.concurrent_requests / replicas)
    independent = r <= dom
    if (inf.independent_replicas is False or deployment == "split") and independent:
        notes.append("each replica fits one server, so replicas are independent anyway")
    plan = Plan(
        tp=tp,
        pp=pp,
        dp=replicas,
        ep=ep,
        micro_batch=batch,
        virtual_stages=1,
        sharding="none",
        recompute="none",
        source=source,
    )
    inference = _inference_costs(scenario, plan, r, batch, dom)
    inference = replace(
        inference,
        serving=colocated_plan(
            scenario,
            "replicas" if independent else "split",
            tp,
            pp,
            ep,
            # the design's own communication is added per design (performance.py)
            legacy_comm_s=0.0,
        ),
    )
    return WorkloadPlan(
        plan=plan,
        memory=mem,
        nodes=scenario.nodes,
        gpus_per_node=scenario.gpus_per_node,
        domain_gpus=dom,
        domains=max(1, scenario.gpus // dom),
        spans_servers=scenario.nodes > 1,
        needs_compute_fabric=not independent,
        training=None,
        inference=inference,
        notes=tuple(notes),
    )


def _choose_deployment(scenario: Scenario, dom: int) -> str | None:
    """``inference.deployment``; or ``compare`` for a model too big for one scale-up domain on
    two or more servers with no explicit plan (:func:`_best_serving_plan` weighs split,
    disaggregated and smaller deployments); ``None`` leaves replicas vs split to the planner
    below (a model that fits one domain runs independent replicas, which more servers only
    multiply)."""
    inf = scenario.inference
    assert inf is not None
    if inf.deployment is not None:
        return inf.deployment
    if scenario.parallelism.given or inf.independent_replicas is True or scenario.nodes < 2:
        return None
    m = scenario.model
    weights = m.params * WEIGHT_BYTES[scenario.precision]
    too_big = weights > dom * scenario.gpu.memory_gb * GB * MEMORY_USABLE_FRACTION
    return "compare" if too_big else None


SMALLER_DEPLOYMENTS_SPAN = 16
"""Smaller deployments weighed by :func:`_best_serving_plan`: every server count up to 16 and
the powers of two and halves, thirds, quarters of the cluster below it (bounded planning cost;
the replica shapes of a larger cluster repeat these)."""

_SERVING_PLAN_CACHE: dict[Scenario, WorkloadPlan] = {}


def _serving_score(scenario: Scenario, wp: WorkloadPlan) -> tuple[float, float, float]:
    """(meets the p95 time-per-token target, requests/s served, -p95 TTFT) at the scenario's
    load on the reference network (advisor.engine.serving.reference_design); requests/s to 3
    significant digits so that near-equal throughputs are decided by the first-token latency."""
    assert wp.inference is not None and wp.inference.serving is not None
    sp = wp.inference.serving
    point = serving_model(scenario, sp, reference_design(scenario), "point").operating_point()
    meets_tpot = 1.0 if point.tpot_p95_s <= sp.target_tpot_s else 0.0
    return meets_tpot, float(f"{point.requests_per_s:.3g}"), -point.ttft_p95_s


def _serves_better(new: tuple[float, float, float], old: tuple[float, float, float]) -> bool:
    """``new`` meets the time-per-token target and ``old`` does not, or both equal on it and
    ``new`` serves at least as many requests/s at no worse p95 TTFT, better in one of them."""
    if new[0] != old[0]:
        return new[0] > old[0]
    return new[1] >= old[1] and new[2] >= old[2] and new != old


def _describe_serving(scenario: Scenario, wp: WorkloadPlan) -> str:
    assert wp.inference is not None and wp.inference.serving is not None
    sp = wp.inference.serving
    point = serving_model(scenario, sp, reference_design(scenario), "point").operating_point()
    if sp.colocated:
        shape = (
            f"{wp.plan.dp} split replica(s) of TP{wp.plan.tp} x PP{wp.plan.pp}"
            + (f" x EP{wp.plan.ep}" if wp.plan.ep > 1 else "")
            + f" on {sp.prefill.servers} servers"
        )
    else:
        shape = f"disaggregated {sp.prefill.servers} prefill + {sp.decode.servers} decode servers"
    return (
        f"{shape}: {point.requests_per_s:.2f} requests/s at p95 time to first token "
        f"{point.ttft_p95_s * 1e3:,.0f} ms"
    )


def _lift(scenario: Scenario, sub: Scenario, wp: WorkloadPlan) -> WorkloadPlan | None:
    """A deployment planned on ``sub`` (fewer servers) run on ``scenario``'s cluster: a split
    replica is copied onto every whole replica's worth of servers, a disaggregated deployment
    runs once; the remaining servers stay idle."""
    assert scenario.inference is not None and wp.inference is not None
    assert wp.inference.serving is not None
    if wp.inference.serving.colocated:
        p = wp.plan
        r = max(p.ep, p.tp * p.pp) if p.ep > 1 else p.tp * p.pp
        copies = scenario.gpus // r
        if (copies * r) % scenario.gpus_per_node != 0:
            return None
        wider = replace(
            scenario,
            gpus=copies * r,
            parallelism=ParallelismSpec(tp=p.tp, pp=p.pp, ep=p.ep),
            inference=replace(scenario.inference, deployment="split"),
        )
        try:
            wp = _plan_inference(wider)
        except ScenarioError:
            return None
        used = wider.nodes
    else:
        used = sub.nodes
    assert wp.inference is not None and wp.inference.serving is not None
    idle = scenario.nodes - used
    serving = replace(wp.inference.serving, servers=scenario.nodes)
    return replace(
        wp,
        plan=replace(wp.plan, source="planner"),
        nodes=scenario.nodes,
        domain_gpus=domain_gpus(scenario),
        domains=max(1, scenario.gpus // domain_gpus(scenario)),
        inference=replace(wp.inference, serving=serving),
        notes=tuple(n for n in wp.notes if "idle" not in n)
        + (
            (f"{idle} of the {scenario.nodes} servers {'stays' if idle == 1 else 'stay'} idle",)
            if idle
            else ()
        ),
    )


def _best_serving_plan(scenario: Scenario) -> WorkloadPlan:
    """The engine's own deployment for a model that spans servers: the split planner's plan,
    a disaggregated one (MoE), and the same on fewer servers (split replicas copied over the
    cluster, or one disaggregated deployment with servers left idle, as the training planner
    leaves GPUs idle), scored by :func:`_serving_score` on the reference network; the best is
    kept and the notes say why.  More servers thus never serve the same load with fewer
    requests per second, and a disaggregated plan whose decode pool cannot hold the users
    (too few KV slots) loses to a split one."""
    hit = _SERVING_PLAN_CACHE.get(scenario)
    if hit is not None:
        return hit
    inf = scenario.inference
    assert inf is not None
    nodes, gpn = scenario.nodes, scenario.gpus_per_node
    smaller = set(range(1, min(nodes, SMALLER_DEPLOYMENTS_SPAN + 1)))
    smaller |= {2**i for i in range(nodes.bit_length()) if 2**i < nodes}
    smaller |= {nodes // k for k in (2, 3, 4)}
    first_error: ScenarioError | None = None
    best: tuple[tuple[float, float, float], WorkloadPlan, int] | None = None
    beaten: list[str] = []
    for n in sorted(n for n in smaller | {nodes} if n >= 1):
        sub = scenario if n == nodes else replace(scenario, gpus=n * gpn)
        sub_dom = domain_gpus(sub)
        tries: list[Callable[[], WorkloadPlan]] = []
        if scenario.model.is_moe and n >= 2:
            tries.append(partial(_plan_disaggregated, sub, sub_dom))
        split_sub = replace(sub, inference=replace(inf, deployment="split"))
        tries.append(partial(_plan_inference, split_sub))
        for make in tries:
            try:
                wp = make()
            except ScenarioError as exc:
                if n == nodes and first_error is None:
                    first_error = exc
                continue
            lifted = wp if n == nodes else _lift(scenario, sub, wp)
            if lifted is None:
                continue
            score = _serving_score(scenario, lifted)
            # ascending server counts: a deployment on more servers replaces the incumbent
            # only when it serves the load better (:func:`_serves_better`)
            if best is None or _serves_better(score, best[0]):
                best = (score, lifted, n)
            elif n == nodes:
                beaten.append(_describe_serving(scenario, lifted))
    if best is None:
        assert first_error is not None
        raise first_error
    chosen = best[1]
    if beaten:
        chosen = replace(
            chosen,
            notes=(
                *chosen.notes,
                "deployment chosen by serving the load on the reference network: "
                f"{_describe_serving(scenario, chosen)}; "
                + ("the other plan" if best[2] == nodes else "the plans")
                + f" on all {nodes} servers"
                + (" serves" if best[2] == nodes else " serve")
                + " fewer requests/s, at a worse p95 time to first token or over the "
                f"time-per-token target ({'; '.join(beaten)})",
            ),
        )
    if len(_SERVING_PLAN_CACHE) > 256:
        _SERVING_PLAN_CACHE.clear()
    _SERVING_PLAN_CACHE[scenario] = chosen
    return chosen


def _plan_disaggregated(scenario: Scenario, dom: int) -> WorkloadPlan:
    """Prefill and decode pools (advisor.engine.serving); the decode pool is the plan."""
    inf = scenario.inference
    assert inf is not None
    if scenario.parallelism.given:
        raise ScenarioError.single(
            "parallelism",
            "a disaggregated deployment takes its parallelism from inference.pools",
        )
    sp = plan_disaggregated(scenario)
    dec = sp.decode
    gpus_per_replica = dec.ep if dec.ep > 1 else dec.tp * dec.pp
    replicas = max(1, dec.gpus // gpus_per_replica)
    batch = max(1, math.ceil(inf.concurrent_requests / replicas))
    plan = Plan(
        tp=dec.tp,
        pp=dec.pp,
        dp=replicas,
        ep=dec.ep,
        micro_batch=batch,
        virtual_stages=1,
        sharding="none",
        recompute="none",
        source="explicit" if inf.decode_pool or inf.prefill_pool else "planner",
    )
    per_gpu_requests = min(
        float(dec.max_batch_per_instance),
        inf.concurrent_requests / max(1, dec.instances),
    )
    kv_gb = per_gpu_requests * dec.kv_gb_per_request / max(1, dec.gpus_per_instance)
    cap = scenario.gpu.memory_gb
    mem = MemoryEstimate(
        weights_gb=dec.weights_gb_per_gpu,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=0.0,
        kv_cache_gb=kv_gb,
        total_gb=dec.weights_gb_per_gpu + kv_gb,
        capacity_gb=cap,
        usable_gb=cap * MEMORY_USABLE_FRACTION,
    )
    costs = _inference_costs(scenario, plan, gpus_per_replica, batch, dom)
    inference = replace(costs, serving=sp, independent_replicas=False)
    notes = [
        f"disaggregated serving: {sp.prefill.servers} prefill and {sp.decode.servers} decode "
        f"servers; each request's KV cache ({sp.kv_bytes_per_request / 1e6:.0f} MB) crosses "
        "the fabric from prefill to decode"
    ]
    if dec.redundant_experts > 0:
        notes.append(
            f"decode EP{dec.ep} hosts {dec.experts_per_gpu} routed experts per GPU "
            f"({dec.redundant_experts} redundant copies)"
        )
    return WorkloadPlan(
        plan=plan,
        memory=mem,
        nodes=scenario.nodes,
        gpus_per_node=scenario.gpus_per_node,
        domain_gpus=dom,
        domains=max(1, scenario.gpus // dom),
        spans_servers=True,
        needs_compute_fabric=True,
        training=None,
        inference=inference,
        notes=tuple(notes),
    )


def _moe_ep_memory(scenario: Scenario, r: int, batch: int) -> MemoryEstimate:
    assert scenario.inference is not None
    m = scenario.model
    wbytes = WEIGHT_BYTES[scenario.precision]
    # routed experts: ceil(experts / r) per GPU, redundant copies fill the remainder
    weights = (
        m.dense_params * wbytes
        + experts_per_gpu(m, r) * m.expert_params / max(1, m.moe_experts) * wbytes
    )
    context = scenario.inference.prompt_tokens + scenario.inference.output_tokens
    per_gpu_requests = math.ceil(batch / r)
    kv = per_gpu_requests * context * m.layers * m.kv_dim_per_layer * wbytes
    total = weights + kv
    cap = scenario.gpu.memory_gb
    return MemoryEstimate(
        weights_gb=weights / GB,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=0.0,
        kv_cache_gb=kv / GB,
        total_gb=total / GB,
        capacity_gb=cap,
        usable_gb=cap * MEMORY_USABLE_FRACTION,
    )


def _largest_pow2_dividing(n: int, limit: int) -> int:
    v = 1
    while v * 2 <= limit and n % (v * 2) == 0:
        v *= 2
    return v


def _largest_divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in _divisors(n) if d <= limit)


def _inference_costs(
    scenario: Scenario, plan: Plan, gpus_per_replica: int, batch: int, dom: int
) -> InferencePlan:
    """Per-token quantities of one serving replica of ``gpus_per_replica`` GPUs.

    Replicas (and disaggregated pools) are placed from a scale-up domain's first GPU, as
    serving stacks place them, so a replica that fits one domain keeps its tensor- and
    expert-parallel groups off the network.
    """
    assert scenario.inference is not None
    inf = scenario.inference
    m = scenario.model
    tp, pp, ep = plan.tp, plan.pp, plan.ep
    wbytes = WEIGHT_BYTES[scenario.precision]
    act_bytes = 2.0
    hbm = scenario.gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    context = inf.prompt_tokens + inf.output_tokens / 2.0
    fwd_token = forward_flops_per_token(m, int(context))
    flops_per_s = achievable_flops_per_s(scenario.gpu, scenario.precision, tp, m.hidden)

    if ep > 1:
        # expert-parallel serving: attention data-parallel, experts spread over r GPUs
        requests_per_gpu = math.ceil(batch / gpus_per_replica)
        hit = experts_hit_fraction(m, batch)
        weight_read = (m.dense_params + m.expert_params * hit / gpus_per_replica) * wbytes
        kv_read = requests_per_gpu * context * m.layers * m.kv_dim_per_layer * wbytes
        flops = requests_per_gpu * fwd_token
        decode = max((weight_read + kv_read) / hbm, flops / flops_per_s)
        prefill = inf.prompt_tokens * forward_flops_per_token(m, inf.prompt_tokens) / flops_per_s
        tokens_per_gpu = requests_per_gpu
        dispatch = tokens_per_gpu * m.moe_top_k * m.hidden * wbytes
        ep_layout = group_layout(ep, 1, dom, gpus_per_replica)
        tp_layout = group_layout(1, 1, dom, gpus_per_replica)
        tp_bytes = 0.0
        tp_count = 0
        tp_prefill_bytes = 0.0
    else:
        # per pipeline stage: read its weights + its KV, or compute, whichever is slower
        hit = experts_hit_fraction(m, batch)
        weight_read = (m.dense_params + m.expert_params * hit) * wbytes / (tp * pp)
        kv_split = min(tp, m.kv_heads)
        kv_read = batch * context * m.layers * m.kv_dim_per_layer * wbytes / (kv_split * pp)
        flops_stage = batch * fwd_token / (tp * pp)
        stage = max((weight_read + kv_read) / hbm, flops_stage / flops_per_s)
        decode = stage * pp
        prefill = (
            inf.prompt_tokens * forward_flops_per_token(m, inf.prompt_tokens) / (tp * flops_per_s)
        )
        dispatch = 0.0
        tokens_per_gpu = 0
        ep_layout = group_layout(1, 1, dom, gpus_per_replica)
        tp_layout = group_layout(tp, 1, dom, gpus_per_replica)
        tp_bytes = batch * m.hidden * act_bytes
        tp_count = 2 * m.layers if tp > 1 else 0
        tp_prefill_bytes = inf.prompt_tokens * m.hidden * act_bytes

    decode += DECODE_KERNEL_OVERHEAD_S_PER_LAYER * m.layers
    tp_decode_intra = 0.0
    tp_prefill_intra = 0.0
    if tp > 1 and not tp_layout.crosses_network:
        tp_decode_intra = tp_count * _intra_time_s(scenario, "all_reduce", tp_bytes, tp)
        tp_prefill_intra = tp_count * _intra_time_s(scenario, "all_reduce", tp_prefill_bytes, tp)
    # a replica's stages are tp apart in rank order (pipeline outermost)
    pp_crosses = pipeline_crosses_network(tp, 1, 1, pp, dom)
    return InferencePlan(
        replicas=scenario.gpus // gpus_per_replica,
        gpus_per_replica=gpus_per_replica,
        batch_per_replica=batch,
        independent_replicas=gpus_per_replica <= dom,
        decode_compute_s=decode,
        prefill_compute_s=prefill,
        tp_bytes_per_decode_collective=tp_bytes,
        tp_collectives_per_token=tp_count,
        tp_bytes_per_prefill_collective=tp_prefill_bytes,
        tp_decode_intra_s=tp_decode_intra,
        tp_prefill_intra_s=tp_prefill_intra,
        pp_bytes_per_token=batch * m.hidden * act_bytes if pp > 1 else 0.0,
        pp_hops=pp - 1,
        ep_dispatch_bytes_per_gpu=dispatch,
        ep_tokens_per_gpu=tokens_per_gpu,
        moe_layers=m.moe_layers,
        tp_layout=tp_layout,
        ep_layout=ep_layout,
        pp_crosses_network=pp_crosses,
    )
