"""The planner's fabric-independent step estimate of a training plan shape (how its search
ranks plans), on a reference network per GPU.

Units: bytes, seconds unless the name says otherwise.
"""

from __future__ import annotations

import math

from advisor.engine.facts.constants import DP_OVERLAP_EFFICIENCY, GRAD_BYTES_PER_PARAM
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.collectives import deepep_network_share
from advisor.engine.model.memory import _model_consts
from advisor.engine.model.placement import (
    contiguous_share,
    expert_dp_size,
    expert_tp,
    pipeline_crosses_network,
)
from advisor.engine.model.plans import domain_gpus, group_layout, moe_software
from advisor.engine.model.stage_time import (
    TP_OVERLAP_HIDDEN,
    _act_bytes,
    _microbatches,
    _stage_time_per_microbatch,
)

REFERENCE_GPU_NET_BYTES_PER_S = 400e9 / 8.0 * 0.9
"""The planner's fabric-independent reference: one 400G RDMA NIC per GPU at 90 % of line rate
(the engine's InfiniBand/RoCE wire efficiency), non-blocking."""

SCALE_UP_REFERENCE_BYTES_PER_S = REFERENCE_GPU_NET_BYTES_PER_S * 8.0
"""What the estimate gives traffic that stays inside a scale-up domain (a data-parallel ring's
scale-up edges, an expert all-to-all inside the domain): 8 x the reference, 360 GB/s per GPU."""

MID_REFERENCE_GPU_NET_BYTES_PER_S = REFERENCE_GPU_NET_BYTES_PER_S / 4.0
"""Between the two: one 400G RDMA NIC per four GPUs (two per 8-GPU server, 11 GB/s per GPU), the
designs the recommendation weighs below one NIC per GPU.  The planner keeps its best plans for
this network too (:data:`MID_PLAN_CONTENDERS`): once the estimate priced data-parallel rings at
their edges between servers (docs/MODEL.md 5.3), the plans best on the reference moved to data
parallelism and the 2- and 4-NIC designs lost the tensor-parallel plans they ran fastest
(Llama 3 70B on 1,024 H100, 2 x 400G InfiniBand: 4.19 -> 4.91 s a step)."""

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


_ShapeBase = tuple[int, float, float, float, float, bool, bool, bool]
"""What :func:`_shape_terms` reads of a shape whatever the network: (micro-batches, gradient
bytes of a pass, the share of them on edges between scale-up domains, PP
send bytes per micro-batch and virtual stage (0 when no edge crosses), EP all-to-all bytes per
micro-batch (0 without expert parallelism), the all-to-all crosses scale-up domains,
data-parallel group > 1, DualPipe)."""


_ShapeConsts = tuple[int, int, float, float, float, int, int, int, int, int, int, bool, bool]
"""What :func:`shape_base` reads of a scenario whatever the shape (:func:`shape_consts`):
(global batch, GPUs per server, dense params, expert params, activation bytes, scale-up domain
GPUs, sequence length, hidden, top-k, MoE layers, layers, DeepEP, DualPipe)."""


def shape_consts(scenario: Scenario) -> _ShapeConsts:
    """The scenario's part of :func:`shape_base`, looked up once per cluster size (the planner's
    search asks the bytes of ~70 shapes a size)."""
    assert scenario.training is not None
    m = scenario.model
    dense_params, expert_params, _, _ = _model_consts(m)
    software = moe_software(scenario)
    return (
        scenario.training.global_batch_sequences,
        scenario.gpus_per_node,
        dense_params,
        expert_params,
        _act_bytes(scenario),
        domain_gpus(scenario),
        scenario.sequence_length,
        m.hidden,
        m.moe_top_k,
        m.moe_layers,
        m.layers,
        software.dispatcher == "deepep",
        software.overlap in ("dualpipe", "a2a_1f1b"),
    )


def shape_base(
    scenario: Scenario,
    tp: int,
    pp: int,
    cp: int,
    dp: int,
    ep: int,
    mb: int,
    stages: tuple[int, int, int],
) -> _ShapeBase:
    """The bytes of :func:`_shape_terms` before they are divided by a network's rate: the
    planner's fast and slow searches of a size walk the same shapes at two rates, so each
    shape's bytes are computed once (:func:`shape_terms_at` divides them, the same float
    operations in the same order)."""
    consts = shape_consts(scenario)
    mcount = _microbatches(consts[0], dp, mb)
    return shape_base_of(consts, tp, pp, cp, dp, ep, mb, stages, mcount)


def shape_base_of(
    consts: _ShapeConsts,
    tp: int,
    pp: int,
    cp: int,
    dp: int,
    ep: int,
    mb: int,
    stages: tuple[int, int, int],
    mcount: int,
) -> _ShapeBase:
    """:func:`shape_base` from the scenario's :func:`shape_consts` and the shape's
    micro-batches (``_microbatches(batch, dp, mb)``)."""
    (
        _, _, dense_params, expert_params, act, dom, seq, hidden, top_k, moe_layers, layers,
        deepep, dualpipe,
    ) = consts  # fmt: skip
    dense_grad = dense_params / (tp * pp) * GRAD_BYTES_PER_PARAM
    expert_grad = expert_params / (ep * pp) * GRAD_BYTES_PER_PARAM
    grad = dense_grad + expert_grad
    pp_bytes = 0.0
    # the stages are synchronous: once any edge joins two scale-up domains (placement, Megatron
    # order) every step waits on a network send
    if pipeline_crosses_network(tp, cp, dp, pp, dom):
        pp_bytes = 2.0 * mb * seq / cp * hidden * act / tp
    # the gradients' bytes on ring edges between scale-up domains, laid out as the priced plan
    # lays its groups (placement.training_communicators): the dense ones over the dp x cp
    # group at stride tp, the experts' over the expert-data-parallel group at stride ep
    used = tp * cp * dp * pp
    etp = expert_tp(tp, ep)
    crossing = dense_grad * contiguous_share("ring", dp * cp, tp, dom, used)
    if expert_grad > 0.0:
        edp = expert_dp_size(tp, dp * cp, ep)
        crossing += expert_grad * contiguous_share("ring", edp, ep * etp, dom, used)
    grad_share = crossing / grad if grad > 0.0 else 0.0
    ep_bytes = 0.0
    ep_nodes = group_layout(ep, etp, dom, used).nodes
    ep_net = ep_nodes > 1
    if expert_params > 0 and ep > 1:
        tokens = mb * seq / cp / tp
        a2a = tokens * top_k * hidden * act * 4.0
        if ep_net and deepep:
            # a token crosses the network once per destination domain (section 8)
            a2a *= deepep_network_share(ep_nodes, top_k)
        ep_bytes = a2a * math.ceil(moe_layers / layers * max(stages))
    return (mcount, grad, grad_share, pp_bytes, ep_bytes, ep_net, dp * cp > 1, dualpipe)


def shape_terms_at(
    base: _ShapeBase, bw: float
) -> tuple[int, float, float, float, float, bool, bool]:
    """:func:`_shape_terms` of a shape's :func:`shape_base` on ``bw`` bytes/s per GPU across
    servers (0 bytes give 0 s, as the terms of a shape without them)."""
    mcount, grad, grad_share, pp_bytes, ep_bytes, ep_net, has_dp, dualpipe = base
    # a pass of the distributed optimizer: the ring at the slower of its edges between domains
    # and its scale-up edges (8 x the reference, the EP all-to-all's in-domain rate); ZeRO-3's
    # 2 + 2m passes keep every byte at the network's rate once any crosses, the reference's
    # inside: its window is the whole step (the priced plan's too), and at the scale-up rate
    # the estimate hid what the priced plan does not (Llama 3.1 405B tp4 pp16 dp4 on 256
    # GB200: ZeRO-3 ranked first, 94.9 s priced against ZeRO-1's 62.5 s; docs/MODEL.md 5.3)
    return (
        mcount,
        max(grad * grad_share / bw, grad / SCALE_UP_REFERENCE_BYTES_PER_S),
        grad / (bw if grad_share > 0.0 else REFERENCE_GPU_NET_BYTES_PER_S),
        pp_bytes / bw,
        ep_bytes / (bw if ep_net else SCALE_UP_REFERENCE_BYTES_PER_S),
        has_dp,
        dualpipe,
    )


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
) -> tuple[int, float, float, float, float, bool, bool]:
    """(micro-batches, DP seconds per gradient pass of the distributed optimizer and of ZeRO-3
    (:func:`shape_terms_at`), PP send seconds per micro-batch and
    virtual stage, EP all-to-all seconds per micro-batch, data-parallel group > 1, DualPipe),
    with ``bw`` bytes/s per GPU across servers (inside a server the reference's)."""
    return shape_terms_at(shape_base(scenario, tp, pp, cp, dp, ep, mb, stages), bw)


def _estimate_from(
    shape: tuple[int, float, float, float, float, bool, bool],
    per_mb: float,
    tp_s: float,
    tp_overlap: bool,
    pp: int,
    vp: int,
    shardings: tuple[str, ...],
    pp_sends: bool,
) -> float:
    """The arithmetic of :func:`_estimate_step_s` for one shape's precomputed terms."""
    mcount, grad, grad_zero3, pp_unit, ep_unit, has_dp, dualpipe = shape
    tp_exposed = tp_s * (1.0 - TP_OVERLAP_HIDDEN if tp_overlap else 1.0)
    compute = (mcount + (pp - 1) / vp) * (per_mb + tp_exposed)
    dp_exposed = math.inf
    for sh in shardings:
        # reduce-scatter + all-gather (2x the shard at the ring limit); zero3 gathers the
        # weights again for every micro-batch's forward and backward
        if not has_dp:
            dp_s = 0.0
        elif sh == "zero3":
            dp_s = (2.0 + 2.0 * mcount) * grad_zero3
        else:
            dp_s = 2.0 * grad
        window = (compute if sh == "zero3" else per_mb) * DP_OVERLAP_EFFICIENCY
        dp_exposed = min(dp_exposed, max(0.0, dp_s - window))
    pp_send = pp_unit * mcount * vp if pp_sends else 0.0
    ep_s = ep_unit * mcount
    if dualpipe:
        ep_s = max(0.0, ep_s - compute)
    return compute + dp_exposed + pp_send + ep_s
