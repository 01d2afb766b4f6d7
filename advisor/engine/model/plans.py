"""The workload plan records: the parallelism plan, its groups and the training and inference
costs a design evaluates, with the traffic they imply.

Units: bytes, seconds, FLOPs (not FLOP/s) unless the name says otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from dataclasses import replace as dataclass_replace
from typing import Any, Final, NamedTuple

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.input.scenario import Scenario, model_parallel_size
from advisor.engine.model.collectives import deepep_network_share
from advisor.engine.model.placement import (
    Communicator,
    blocks_spanned,
    contiguous_share,
    training_communicators,
    wire_bytes,
)
from advisor.engine.model.serving.compute import ServingPlan
from advisor.engine.result.echo import Constraints, Memory
from advisor.engine.result.echo import Plan as Plan  # the plan is the result's own record

_NO_CONSTRAINTS = Constraints()


def as_planned(scenario: Scenario) -> Scenario:
    """The scenario as the planner sees it: with the default constraints.  The constraints
    (budget, team skills, preference, GPU pricing, power, cloud) are the decision's; no model
    module reads them (``tests/engine/test_planner_constraints.py``), so jobs that differ only
    in them share one plan, its deployment search and its memo (the audit's constraint
    variants, a what-if that changes the budget)."""
    given = scenario.constraints
    if given is _NO_CONSTRAINTS or _DEFAULT_CONSTRAINTS_CACHE.get(id(given)) is given:
        return scenario
    if given == _NO_CONSTRAINTS:
        if len(_DEFAULT_CONSTRAINTS_CACHE) >= 64:
            _DEFAULT_CONSTRAINTS_CACHE.clear()
        _DEFAULT_CONSTRAINTS_CACHE[id(given)] = given
        return scenario
    return dataclass_replace(scenario, constraints=_NO_CONSTRAINTS)


def resized(scenario: Scenario, gpus: int) -> Scenario:
    """The scenario on ``gpus`` GPUs (the scaling chart's sizes, a sweep's servers): an
    explicit data-parallel degree follows the size (the GPUs over tp x cp x pp, as the planner
    checks it); refused naming ``gpus`` where the explicit plan does not divide it."""
    parallelism = scenario.parallelism
    if parallelism.dp is None:
        return dataclass_replace(scenario, gpus=gpus)
    model_parallel = model_parallel_size(parallelism.tp, parallelism.cp, parallelism.pp)
    if gpus % model_parallel:
        named = "tp x pp" if parallelism.cp is None else "tp x cp x pp"
        raise ScenarioError.single(
            "gpus", f"{gpus} GPUs cannot hold the explicit {named} = {model_parallel} plan"
        )
    return dataclass_replace(
        scenario, gpus=gpus, parallelism=dataclass_replace(parallelism, dp=gpus // model_parallel)
    )


_DEFAULT_CONSTRAINTS_CACHE: dict[int, Constraints] = {}
"""Constraints objects found equal to the defaults, by identity (each entry holds its object,
so an identity is not reused while kept): every design evaluated asks :func:`as_planned` of
the same scenario, whose parsed constraints are not the default object."""


@dataclass(frozen=True)
class GroupLayout:
    """How one communicator maps onto scale-up domains (servers or NVL72 racks).

    ``concurrent_groups`` communicators of this kind share each domain's NICs.
    """

    size: int
    nodes: int
    ranks_per_node: int
    concurrent_groups: int

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        size: int,
        nodes: int,
        ranks_per_node: int,
        concurrent_groups: int,
    ) -> None:
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "ranks_per_node", ranks_per_node)
        object.__setattr__(self, "concurrent_groups", concurrent_groups)

    @property
    def crosses_network(self) -> bool:
        return self.nodes > 1


ONE_RANK = GroupLayout(size=1, nodes=1, ranks_per_node=1, concurrent_groups=1)
"""The layout of a group of one GPU (no context parallelism)."""


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
    """``dualpipe`` (DeepSeek-V3) / ``a2a_1f1b`` (Megatron-Core): all-to-all hidden behind
    another micro-batch's compute."""
    moe_dispatcher: str = "alltoall"
    """``deepep``: a token crosses the network once per destination server; ``alltoall``: once
    per routed expert (``collectives.expert_all_to_all_time_s``)."""
    moe_top_k: int = 1
    cp_layout: GroupLayout = ONE_RANK
    cp_bytes_per_exchange: float = 0.0
    """All-gather-equivalent bytes of one ring-attention K/V exchange (nccl-tests size)."""
    cp_exchanges_per_step: int = 0
    causal_model_flops_per_gpu: float = 0.0
    """Model FLOPs with causal attention (half of QK^T and AV executed): the MFU numerator
    published runs use; ``model_flops_per_gpu`` keeps Megatron-LM's full-attention count."""
    cp_intra_s: float = 0.0
    attention_s: float = 0.0
    """Attention kernel seconds per step (what ring-attention traffic hides behind)."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        microbatches: int,
        global_batch_sequences: int,
        tokens_per_step: int,
        steps: float,
        hardware_flops_per_gpu: float,
        model_flops_per_gpu: float,
        compute_s: float,
        optimizer_s: float,
        forward_fraction: float,
        tp_comm_s: float,
        tp_bytes_per_collective: float,
        tp_collectives_per_step: int,
        pp_bytes_per_p2p: float,
        pp_p2p_per_step: int,
        dp_bytes: float,
        dp_op_bytes: tuple[tuple[str, float, int], ...],
        expert_dp_op_bytes: tuple[tuple[str, float, int], ...],
        ep_bytes_per_all_to_all: float,
        ep_all_to_all_per_step: int,
        ep_intra_s: float,
        dp_layout: GroupLayout,
        expert_dp_layout: GroupLayout,
        tp_layout: GroupLayout,
        ep_layout: GroupLayout,
        pp_crosses_network: bool,
        tp_overlap: float = 0.0,
        ep_overlap: str = "none",
        moe_dispatcher: str = "alltoall",
        moe_top_k: int = 1,
        cp_layout: GroupLayout = ONE_RANK,
        cp_bytes_per_exchange: float = 0.0,
        cp_exchanges_per_step: int = 0,
        causal_model_flops_per_gpu: float = 0.0,
        cp_intra_s: float = 0.0,
        attention_s: float = 0.0,
    ) -> None:
        object.__setattr__(self, "microbatches", microbatches)
        object.__setattr__(self, "global_batch_sequences", global_batch_sequences)
        object.__setattr__(self, "tokens_per_step", tokens_per_step)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "hardware_flops_per_gpu", hardware_flops_per_gpu)
        object.__setattr__(self, "model_flops_per_gpu", model_flops_per_gpu)
        object.__setattr__(self, "compute_s", compute_s)
        object.__setattr__(self, "optimizer_s", optimizer_s)
        object.__setattr__(self, "forward_fraction", forward_fraction)
        object.__setattr__(self, "tp_comm_s", tp_comm_s)
        object.__setattr__(self, "tp_bytes_per_collective", tp_bytes_per_collective)
        object.__setattr__(self, "tp_collectives_per_step", tp_collectives_per_step)
        object.__setattr__(self, "pp_bytes_per_p2p", pp_bytes_per_p2p)
        object.__setattr__(self, "pp_p2p_per_step", pp_p2p_per_step)
        object.__setattr__(self, "dp_bytes", dp_bytes)
        object.__setattr__(self, "dp_op_bytes", dp_op_bytes)
        object.__setattr__(self, "expert_dp_op_bytes", expert_dp_op_bytes)
        object.__setattr__(self, "ep_bytes_per_all_to_all", ep_bytes_per_all_to_all)
        object.__setattr__(self, "ep_all_to_all_per_step", ep_all_to_all_per_step)
        object.__setattr__(self, "ep_intra_s", ep_intra_s)
        object.__setattr__(self, "dp_layout", dp_layout)
        object.__setattr__(self, "expert_dp_layout", expert_dp_layout)
        object.__setattr__(self, "tp_layout", tp_layout)
        object.__setattr__(self, "ep_layout", ep_layout)
        object.__setattr__(self, "pp_crosses_network", pp_crosses_network)
        object.__setattr__(self, "tp_overlap", tp_overlap)
        object.__setattr__(self, "ep_overlap", ep_overlap)
        object.__setattr__(self, "moe_dispatcher", moe_dispatcher)
        object.__setattr__(self, "moe_top_k", moe_top_k)
        object.__setattr__(self, "cp_layout", cp_layout)
        object.__setattr__(self, "cp_bytes_per_exchange", cp_bytes_per_exchange)
        object.__setattr__(self, "cp_exchanges_per_step", cp_exchanges_per_step)
        object.__setattr__(self, "causal_model_flops_per_gpu", causal_model_flops_per_gpu)
        object.__setattr__(self, "cp_intra_s", cp_intra_s)
        object.__setattr__(self, "attention_s", attention_s)


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
    """Deployment, pools, KV transfer and load inputs (advisor.engine.model.serving.load)."""


@dataclass(frozen=True)
class FewerGpuPlans:
    """The planner's plans of the smaller power-of-two server counts it did not search while
    planning (MODEL.md 5.3, "Smaller sizes searched when they can win"): each size with a lower
    bound of the compute floors of its plans (``plan_search.fewer_gpus_floor_s``), searched
    only when a design's step to beat is above that bound."""

    bounds: tuple[tuple[float, int], ...]
    """(lower bound of the compute floors of a size's plans, its GPUs), lowest bound first."""
    search: Callable[[int], tuple[WorkloadPlan, ...]]
    """The plans of a size: the planner's contenders there, as plans of this cluster (each
    size searched once; a plan already weighed is not repeated)."""


MEMO_MAX: Final = 4096
"""Entries a plan object keeps in its memo (about 3 bounds x 1,000 designs)."""


@dataclass(frozen=True)
class WorkloadPlan:
    """Everything about the workload that does not depend on the network design."""

    plan: Plan
    memory: Memory
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
    """Training: the planner's other plans of this cluster and its plans of the smaller
    power-of-two numbers of servers it searched (their other GPUs idle); a design evaluates
    each whose compute floor beats this plan's step on it and uses the fastest
    (:func:`advisor.engine.model.performance.evaluate_design`)."""
    fewer: FewerGpuPlans | None = field(default=None, compare=False, hash=False, repr=False)
    """Training: the smaller sizes not searched yet, searched when a design needs them
    (:func:`advisor.engine.model.training_step.alternatives_below`)."""
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
    """What is derived from this plan object alone while it lives (its alternatives' floors,
    traffic, network-free step, the design networks its steps are priced on, its metrics per
    design): never part of the plan's value, gone with the plan (no process-wide cache keyed
    by the object's id), at most :data:`MEMO_MAX` entries."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        plan: Plan,
        memory: Memory,
        nodes: int,
        gpus_per_node: int,
        domain_gpus: int,
        domains: int,
        spans_servers: bool,
        needs_compute_fabric: bool,
        training: TrainingPlan | None,
        inference: InferencePlan | None,
        notes: tuple[str, ...],
        alternatives: tuple[WorkloadPlan, ...] = (),
        fewer: FewerGpuPlans | None = None,
        memo: dict[Any, Any] | None = None,
    ) -> None:
        object.__setattr__(self, "plan", plan)
        object.__setattr__(self, "memory", memory)
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "gpus_per_node", gpus_per_node)
        object.__setattr__(self, "domain_gpus", domain_gpus)
        object.__setattr__(self, "domains", domains)
        object.__setattr__(self, "spans_servers", spans_servers)
        object.__setattr__(self, "needs_compute_fabric", needs_compute_fabric)
        object.__setattr__(self, "training", training)
        object.__setattr__(self, "inference", inference)
        object.__setattr__(self, "notes", notes)
        object.__setattr__(self, "alternatives", alternatives)
        object.__setattr__(self, "fewer", fewer)
        object.__setattr__(self, "memo", {} if memo is None else memo)

    def weighs_other_plans(self) -> bool:
        """Whether a design may run another of the planner's plans (:attr:`alternatives`, or
        a smaller size still to search, :attr:`fewer`)."""
        return bool(self.alternatives) or self.fewer is not None

    def remember(self, key: Any, value: Any) -> Any:
        """Keep ``value`` under ``key`` in :attr:`memo` (emptied when full) and return it."""
        if len(self.memo) >= MEMO_MAX:
            self.memo.clear()
        self.memo[key] = value
        return value


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


def _largest_pow2_dividing(n: int, limit: int) -> int:
    v = 1
    while v * 2 <= limit and n % (v * 2) == 0:
        v *= 2
    return v


def _largest_divisor_at_most(n: int, limit: int) -> int:
    return max(d for d in _divisors(n) if d <= limit)


SMALLER_DEPLOYMENTS_SPAN: Final = 16
"""Smaller deployments weighed by ``serving.deployment._best_serving_plan``: every server
count up to 16, the powers of two below the cluster and the cluster's N // 2^a and
N // (3 x 2^a) servers (bounded planning cost; the replica shapes of a larger cluster repeat
these)."""


def smaller_server_counts(nodes: int) -> list[int]:
    """The smaller server counts weighed against the whole cluster (SMALLER_DEPLOYMENTS_SPAN):
    1 to 16, the powers of two, and N // 2^a and N // (3 x 2^a).  The last two families hold
    every count weighed on half the cluster (N // 2 // k = N // 2k), so the cluster weighs
    copies of every deployment its half did and never serves less (DeepSeek-V3 on 64 V100
    servers chose 3 copies of 21, which 128 servers lacked when only N // 2, 3, 4 were
    weighed)."""
    smaller = set(range(1, min(nodes, SMALLER_DEPLOYMENTS_SPAN + 1)))
    smaller |= {2**i for i in range(nodes.bit_length()) if 2**i < nodes}
    smaller |= {
        nodes // (m * 2**a)
        for m in (1, 3)
        for a in range(nodes.bit_length())
        if nodes // (m * 2**a) > SMALLER_DEPLOYMENTS_SPAN
    }
    return sorted(n for n in smaller if 1 <= n < nodes)


class MoeSoftware(NamedTuple):
    """The expert dispatcher and all-to-all overlap a training plan runs
    (:func:`moe_software`)."""

    dispatcher: str
    overlap: str


DEEPEP_GENERATIONS: tuple[str, ...] = ("hopper", "blackwell")
"""NVIDIA generations DeepEP and Megatron-Core's HybridEP run on (NVLink inside the server or
rack, NVSHMEM/IBGDA over RDMA between them: deepseek-ai/DeepEP README, Megatron-Core's flex
dispatcher)."""


def moe_software(scenario: Scenario) -> MoeSoftware:
    """The MoE training stack of ``scenario``: what it sets, else what the field runs.

    A plan the planner chooses for a mixture-of-experts model runs the software NVIDIA's MoE
    training recipes enable (Megatron-Bridge performance recipes for DeepSeek-V3, Qwen3 and
    gpt-oss; docs/MODEL.md 8): the ``deepep`` dispatcher (Megatron-Core's ``flex`` with DeepEP /
    HybridEP) on NVIDIA Hopper and Blackwell GPUs joined by NVLink (:data:`DEEPEP_GENERATIONS`),
    and the ``a2a_1f1b`` overlap (``overlap_moe_expert_parallel_comm``) wherever Megatron-Core
    allows it (:func:`a2a_overlap_runs`).  An explicit plan (``parallelism.given``), a dense
    model and a setting the scenario gives keep Megatron-Core's own defaults or the given
    value: ``alltoall``, ``none``."""
    p = scenario.parallelism
    chosen = scenario.model.is_moe and scenario.training is not None and not p.given
    deepep = chosen and deepep_runs_on(scenario.gpu)
    return MoeSoftware(
        p.moe_dispatcher or ("deepep" if deepep else "alltoall"),
        p.ep_overlap or ("a2a_1f1b" if chosen else "none"),
    )


def deepep_runs_on(gpu: GpuSpec) -> bool:
    """Whether DeepEP / HybridEP run on ``gpu``'s servers: NVIDIA Hopper or Blackwell GPUs
    joined by NVLink (:data:`DEEPEP_GENERATIONS`)."""
    return (
        gpu.vendor == "NVIDIA"
        and gpu.generation in DEEPEP_GENERATIONS
        and gpu.scaleup_kind == "nvlink"
    )


def a2a_overlap_runs(ep: int, pp: int, vp: int, recompute: str) -> bool:
    """Whether Megatron-Core runs ``overlap_moe_expert_parallel_comm`` on a plan: expert
    parallelism, no full recomputation, and no pipeline or an interleaved one (its argument
    checks: "moe a2a overlap is only supported with vpp", "disable full recomputation when
    enabling overlap_moe_expert_parallel_comm"; megatron/training/arguments.py)."""
    return ep > 1 and recompute != "full" and (pp == 1 or vp > 1)


def domain_gpus(scenario: Scenario) -> int:
    """GPUs per scale-up domain used by this job (a server, or an NVL72 rack of whole servers:
    ``GpuSpec.job_domain_gpus``)."""
    return scenario.gpu.job_domain_gpus(scenario.gpus, scenario.gpus_per_node)


def group_layout(size: int, stride: int, domain: int, total: int) -> GroupLayout:
    """Place a communicator of ``size`` ranks spaced ``stride`` apart on domains of ``domain``.

    Megatron orders ranks tp (stride 1), then cp, then dp/ep, then pp; a group spans
    :func:`advisor.engine.model.placement.blocks_spanned` domains (ranks 0, stride, ... fill a
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


def plan_traffic(w: WorkloadPlan, rdma: bool = True) -> tuple[tuple[Communicator, float], ...]:
    """(communicator, on-wire bytes per GPU) of a workload plan: per training step, or per
    output token for inference.  ``rdma``: the network carries RDMA, so a DeepEP dispatch
    sends a token once per destination server; without it (TCP Ethernet, a network plugin)
    the dispatch is NCCL's all-to-all of every copy (``collectives.expert_all_to_all_time_s``
    prices it so)."""
    p = w.plan
    cp = p.cp
    out: list[tuple[Communicator, float]] = []
    t = w.training
    if t is not None:
        comms = training_communicators(p.tp, cp, p.dp, max(1, p.ep), p.pp)
        tp_b = t.tp_collectives_per_step * wire_bytes("all_reduce", t.tp_bytes_per_collective, p.tp)
        edp = comms["edp"].size
        dpg = comms["dp"].size
        dp_b = sum(c * wire_bytes(op, b, dpg) for op, b, c in t.dp_op_bytes)
        edp_b = sum(c * wire_bytes(op, b, edp) for op, b, c in t.expert_dp_op_bytes)
        cp_b = t.cp_exchanges_per_step * wire_bytes("all_gather", t.cp_bytes_per_exchange, cp)
        ep_b = t.ep_all_to_all_per_step * wire_bytes("all_to_all", t.ep_bytes_per_all_to_all, p.ep)
        if t.moe_dispatcher == "deepep" and rdma:
            # a token crosses the network once per destination server (MODEL.md section 8)
            ep_b *= deepep_network_share(t.ep_layout.nodes, t.moe_top_k)
        pp_b = t.pp_p2p_per_step * t.pp_bytes_per_p2p if p.pp > 1 else 0.0
        for kind, nbytes in (("tp", tp_b), ("cp", cp_b), ("pp", pp_b), ("dp", dp_b), ("ep", ep_b)):
            out.append((comms[kind], nbytes))
        if p.ep > 1:
            out.append((comms["edp"], edp_b))
        return tuple(out)
    i = w.inference
    if i is None:
        return ()
    tp_b = i.tp_collectives_per_token * wire_bytes(
        "all_reduce", i.tp_bytes_per_decode_collective, p.tp
    )
    ep_b = 2.0 * i.moe_layers * wire_bytes("all_to_all", i.ep_dispatch_bytes_per_gpu, p.ep)
    pp_b = i.pp_bytes_per_token if p.pp > 1 else 0.0
    return (
        (Communicator("tp", "ring", p.tp, 1), tp_b),
        (Communicator("pp", "p2p", p.pp, p.tp), pp_b),
        (Communicator("ep", "all_to_all", p.ep, 1), ep_b),
    )
