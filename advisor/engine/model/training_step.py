"""The training step time of a workload plan on a design: compute, exposed communication and
pipeline bubble per step, and the fastest of the plan's alternatives on that design.

Units: bytes, seconds unless the name says otherwise.
"""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any, Final, NamedTuple

from advisor.engine.facts.constants import (
    COMPUTE_JITTER_CV,
    DP_OVERLAP_EFFICIENCY,
    EP_COMM_OVERLAP,
    EP_COMM_SMS,
    GRAD_BYTES_PER_PARAM,
    TP_COMM_OVERLAP,
)
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.collectives import (
    collective_time_s,
    expert_all_to_all_time_s,
    p2p_time_s,
)
from advisor.engine.model.design_network import (
    JobNets,
    _comms,
    _Net,
    _pp_stride,
    ops_seconds,
)
from advisor.engine.model.efficiency import profile
from advisor.engine.model.placement import Communicator
from advisor.engine.model.plans import GroupLayout, Plan, TrainingPlan, WorkloadPlan
from advisor.engine.model.stage_time import _compute_terms, bucket_params

# ----------------------------------------------------------------------------- training


class _TrainingTimes:
    """The step of a plan on a design in one bound's world and its parts (seconds).  A plain
    class, not a NamedTuple: built ~2,500 times an evaluation, and a compiled module builds a
    NamedTuple through its interpreted ``__new__``; equal when every figure is."""

    __slots__ = (
        "bubble_s", "exposed_comm_s", "exposed_network_s", "network_comm_s", "step_s",
        "straggler_s",
    )  # fmt: skip

    def __init__(
        self,
        step_s: float,
        exposed_comm_s: float,
        exposed_network_s: float,
        network_comm_s: float,
        bubble_s: float,
        straggler_s: float,
    ) -> None:
        self.step_s = step_s
        self.exposed_comm_s = exposed_comm_s
        self.exposed_network_s = exposed_network_s
        self.network_comm_s = network_comm_s
        self.bubble_s = bubble_s
        self.straggler_s = straggler_s

    def _value(self) -> tuple[float, float, float, float, float, float]:
        return (
            self.step_s,
            self.exposed_comm_s,
            self.exposed_network_s,
            self.network_comm_s,
            self.bubble_s,
            self.straggler_s,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _TrainingTimes):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash(self._value())

    def __repr__(self) -> str:
        return f"_TrainingTimes{self._value()!r}"


_Ops = tuple[tuple[str, float, int], ...]


def _split_ops(ops: _Ops, sharding: str) -> tuple[_Ops, _Ops]:
    """(gradient reductions, parameter all-gathers) of a plan's data-parallel collectives.
    Megatron-Core reduces a bucket as soon as its gradients of the last micro-batch are ready
    (``_make_backward_post_hook`` -> ``start_grad_sync``) and, with ``overlap_param_gather``,
    gathers the next bucket's parameters when a module of the first micro-batch's forward needs
    the previous one (``_make_forward_pre_hook`` -> ``finish_param_sync``): two windows.  FSDP
    (``zero3``) prefetches over the whole step: one window, every collective in it."""
    if sharding == "zero3":
        return ops, ()
    return (
        tuple(o for o in ops if o[0] != "all_gather"),
        tuple(o for o in ops if o[0] == "all_gather"),
    )


class _Static(NamedTuple):
    """What :func:`_training_times` reads of a plan that is the same on every design and in
    every bound (kept in the plan's memo): which communicators leave the scale-up domain and
    the network-free factors of the step, each the same float as the step computed them."""

    tp_net: bool
    ep_net: bool
    cp_net: bool
    pp_net: bool
    dp_net: bool
    edp_net: bool
    in_domain: bool
    """Some communicator stays inside the domain (:func:`_in_domain_s` is read)."""
    tp_hidden: float
    dualpipe: bool
    ep_share: float
    reduce_window: float
    """Seconds the gradient reduction (reduce-scatter, all-reduce) may hide behind: the last
    micro-batch's backward pass (under ``zero3`` the whole step, and every collective); with
    interleaved pipeline stages the cool-down from the first model chunk's last backward."""
    chunk_share: float
    chunk_window: float
    """With interleaved stages, the reduction of the model chunk whose last backward ends the
    step (1 / virtual stages of it) and the seconds it may hide behind: that chunk's own last
    backward (:func:`_static`); 1 and ``reduce_window`` without interleaving."""
    gather_window: float
    """Seconds the parameter all-gather may hide behind: the first micro-batch's forward."""
    dp_ops: tuple[_Ops, _Ops]
    """(reduction, gather) collectives of the data-parallel group (:func:`_split_ops`)."""
    edp_ops: tuple[_Ops, _Ops]
    """The same of the expert data-parallel group."""
    min_exposed_share: float
    bubble_share: float
    busy_s: float
    """compute + optimizer seconds."""
    jitter_compute_s: float
    straggler_sigmas: float
    """sqrt(2 ln domains), 0 with one domain."""


def _static(scenario: Scenario, workload: WorkloadPlan, t: TrainingPlan) -> _Static:
    hit: _Static | None = workload.memo.get("static")
    if hit is not None:
        return hit
    plan = workload.plan
    dp_net = t.dp_layout.crosses_network
    edp_net = t.expert_dp_layout.crosses_network
    dualpipe = t.ep_overlap in ("dualpipe", "a2a_1f1b")
    per_mb = t.compute_s / t.microbatches
    if plan.sharding == "zero3":
        reduce_window = chunk_window = t.compute_s * DP_OVERLAP_EFFICIENCY
        gather_window = 0.0
        chunk_share = 1.0
    else:
        # the last micro-batch's backward (with recomputation, its repeated forward too) and
        # the first micro-batch's forward (MODEL.md 6)
        backward = per_mb * (1.0 - t.forward_fraction) * DP_OVERLAP_EFFICIENCY
        reduce_window = chunk_window = backward
        gather_window = per_mb * t.forward_fraction * DP_OVERLAP_EFFICIENCY
        vp = plan.virtual_stages
        if plan.pp > 1 and vp > 1:
            # Megatron-Core's interleaved 1F1B enables a model chunk's gradient reduction on
            # its last micro-batch's backward (backward_step_helper_preprocess); in the last
            # round chunk vp-1 finishes first and each next one pp chunk-backwards later, so
            # chunk c's reduction has c x pp + 1 chunk-backwards left to hide behind, and the
            # chunks' reductions queue on one stream: exposed max over c of (c + 1) R / vp
            # minus that window, the largest at c = 0 or c = vp - 1 (MODEL.md 6)
            group = min(plan.pp, t.microbatches)
            chunk_window = backward / vp
            reduce_window = backward * ((vp - 1) * group + 1) / vp
        chunk_share = 1.0 / vp
    static = _Static(
        tp_net=t.tp_layout.crosses_network and bool(t.tp_collectives_per_step),
        ep_net=t.ep_layout.crosses_network and bool(t.ep_all_to_all_per_step),
        cp_net=bool(t.cp_exchanges_per_step) and t.cp_layout.crosses_network,
        pp_net=bool(t.pp_p2p_per_step) and t.pp_crosses_network,
        dp_net=dp_net,
        edp_net=edp_net,
        in_domain=(bool(t.pp_p2p_per_step) and not t.pp_crosses_network)
        or not dp_net
        or not edp_net,
        tp_hidden=1.0 - max(TP_COMM_OVERLAP, t.tp_overlap),
        dualpipe=dualpipe,
        ep_share=min(1.0, EP_COMM_SMS / max(1, profile(scenario.gpu).sms)) if dualpipe else 0.0,
        reduce_window=reduce_window,
        chunk_share=chunk_share,
        chunk_window=chunk_window,
        gather_window=gather_window,
        dp_ops=_split_ops(t.dp_op_bytes, plan.sharding),
        edp_ops=_split_ops(t.expert_dp_op_bytes, plan.sharding),
        min_exposed_share=_min_exposed_share(t, scenario.parallelism.dp_bucket_params),
        bubble_share=(plan.pp - 1) / plan.virtual_stages if plan.pp > 1 else 0.0,
        busy_s=t.compute_s + t.optimizer_s,
        jitter_compute_s=COMPUTE_JITTER_CV * t.compute_s,
        straggler_sigmas=math.sqrt(2.0 * math.log(workload.domains))
        if workload.domains > 1
        else 0.0,
    )
    value: _Static = workload.remember("static", static)
    return value


def _min_exposed_share(t: TrainingPlan, given: int | None) -> float:
    """The share of the data-parallel collectives never overlapped: one Megatron-Core bucket
    (:func:`stage_time.bucket_params` on the data-parallel group) of the gradient bytes, the
    last bucket's reduce-scatter after the backward pass and the first bucket's all-gather
    before the forward."""
    bucket_bytes = bucket_params(t.dp_layout.size, given) * GRAD_BYTES_PER_PARAM
    return min(1.0, bucket_bytes / max(t.dp_bytes, 1.0))


def _training_times(
    scenario: Scenario,
    workload: WorkloadPlan,
    t: TrainingPlan,
    design: Design,
    bound: str,
    *,
    free_network: bool = False,
) -> _TrainingTimes:
    """The step of plan ``workload`` on design ``design`` in one bound's world.

    ``free_network``: the same step on a network that costs nothing (every collective or
    send that leaves a scale-up domain takes no time, and the straggler term keeps only the
    compute jitter); every term is monotone in the network's times, so no design beats it.
    """
    times = _times_below(scenario, workload, t, design, bound, math.inf, free_network)
    assert times is not None
    return times


def _times_below(
    scenario: Scenario,
    workload: WorkloadPlan,
    t: TrainingPlan,
    design: Design,
    bound: str,
    above: float,
    free_network: bool = False,
    factor: float = 1.0,
) -> _TrainingTimes | None:
    """:func:`_training_times`, or None when the step x ``factor`` (> 0) is not below
    ``above``: before the data-parallel gradients that cross the network are priced (the
    costliest collectives of most plans), the step with them free, a lower bound of the step
    (every term is monotone in their time), is checked against ``above``.

    The plan's memo keeps, per design and bound, the network and what was priced on it (the
    step and that lower bound, :data:`_Priced`): a plan of a job series is an alternative of
    every larger size's plan, priced on the same designs again; a kept step gives the same
    floats and the same None as pricing it again.  Designs whose networks behave alike for
    the plan (:attr:`design_network._Net.behaviour`: the same domains for every communicator,
    the same jitter; another switch model, oversubscription or radix that moves no boundary
    the plan's groups cross) share one entry."""
    kept = _priced_on(scenario, workload, design, bound)
    st = _static(scenario, workload, t)
    known: _TrainingTimes | None = kept[_TIMES]
    if known is not None and not free_network:
        if above == math.inf or not (st.dp_net or st.edp_net):
            return known
        if kept[_LOWER] is not None:
            return None if kept[_LOWER] * factor >= above else known
    net: _Net = kept[_NET]
    comms = _plan_comms(workload)
    in_domain = _in_domain_s(scenario, workload, t, net) if st.in_domain else (0.0, _NO_DP, _NO_DP)
    priced = not free_network

    # tensor parallel: intra-domain part precomputed; across domains it uses the NICs
    tp_net = 0.0
    if st.tp_net and priced:
        dom = net.domain(t.tp_layout, comms["tp"])
        tp_net = (
            t.tp_collectives_per_step
            * collective_time_s("all_reduce", t.tp_bytes_per_collective, dom)[0]
        )
    tp_exposed = (t.tp_comm_s + tp_net) * st.tp_hidden

    # expert parallel all-to-all
    ep_net = 0.0
    if st.ep_net and priced:
        dom = net.domain(t.ep_layout, comms["ep"])
        ep_net = t.ep_all_to_all_per_step * expert_all_to_all_time_s(
            t.ep_bytes_per_all_to_all, dom, top_k=t.moe_top_k, dispatcher=t.moe_dispatcher
        )
    ep_total = t.ep_intra_s + ep_net
    if st.dualpipe:
        # DualPipe (DeepSeek-V3 report, section 3.2.1) and Megatron-Core's 1F1B all-to-all
        # overlap (moe_a2a_overlap): one micro-batch's all-to-all runs under another's
        # compute, so only the part longer than the compute is exposed; while it runs, its
        # kernels hold EP_COMM_SMS of the GPU's SMs and the compute under it slows to the
        # rest: step = max(all-to-all, compute + share x all-to-all)
        ep_exposed = max(ep_total - t.compute_s, st.ep_share * ep_total, 0.0)
    else:
        ep_exposed = ep_total * (1.0 - EP_COMM_OVERLAP)

    # context parallel: the K/V ring is hidden behind the attention kernels it feeds
    cp_total = t.cp_intra_s
    if st.cp_net:
        if priced:
            dom = net.domain(t.cp_layout, comms["cp"])
            cp_total = (
                t.cp_exchanges_per_step
                * collective_time_s("all_gather", t.cp_bytes_per_exchange, dom)[0]
            )
        else:
            cp_total = 0.0
    cp_exposed = max(0.0, cp_total - t.attention_s)

    dp_s = _NO_DP if st.dp_net else in_domain[1]
    edp_s = _NO_DP if st.edp_net else in_domain[2]
    if _below_without_pp_edge(st, priced, above) and _assemble(
        st, t, design, bound, tp_net, tp_exposed, ep_net, ep_exposed, cp_exposed,
        0.0, 0.0, dp_s, edp_s, net.jitter_cv,
    ).step_s * factor >= above:  # fmt: skip
        return None  # its step with the edge and the gradients free is already not below

    # pipeline point-to-point: the stages are synchronous, so once any edge joins two
    # domains every step waits for the network edge; the GPUs of a domain whose peer stage
    # sits in another domain (min(domain, stride) of them) send at once
    pp_s = 0.0
    pp_net = 0.0
    if st.pp_net:
        if priced:
            senders, pair = _pp_pair(workload)
            dom = net.domain(pair, comms["pp"])
            pp_net = t.pp_p2p_per_step * p2p_time_s(
                t.pp_bytes_per_p2p, dom, concurrent_per_node=senders
            )
            pp_s = pp_net
    elif t.pp_p2p_per_step:
        pp_s = in_domain[0]

    # data parallel gradients, overlapped with the last micro-batch's backward pass
    if priced and (st.dp_net or st.edp_net):
        if above < math.inf:
            free = _assemble(
                st, t, design, bound, tp_net, tp_exposed, ep_net, ep_exposed, cp_exposed,
                pp_net, pp_s, dp_s, edp_s, net.jitter_cv,
            )  # fmt: skip
            kept[_LOWER] = free.step_s
            if free.step_s * factor >= above:
                return None
            if known is not None:
                return known
        if st.dp_net:
            dp_s = _pair_time(net, t.dp_layout, st.dp_ops, comms["dp"])
        if st.edp_net:
            edp_s = _pair_time(net, t.expert_dp_layout, st.edp_ops, comms["edp"])
    times = _assemble(
        st, t, design, bound, tp_net, tp_exposed, ep_net, ep_exposed, cp_exposed,
        pp_net, pp_s, dp_s, edp_s, net.jitter_cv,
    )  # fmt: skip
    if priced:
        kept[_TIMES] = times
    return times


def _below_without_pp_edge(st: _Static, priced: bool, above: float) -> bool:
    """Whether :func:`_times_below` checks its bound before pricing the pipeline edge across
    the network, with the edge free as well as the network-crossing gradients (a lower bound
    of the step for the same reason: every term is monotone in it, and IEEE rounding keeps
    the order): where a tensor-, expert- or context-parallel term crossing the network is
    priced first (without one the bound is the network-free step, already checked) and the
    gradients cross it (without them no bound is checked at all).  The same None as checking
    after the edge; the edge is then not priced (DeepSeek-V3 on 24,576 H100: 2,253 of the
    2,424 plans the bound skips are skipped here, on their expert all-to-all)."""
    return (
        priced
        and st.pp_net
        and above < math.inf
        and (st.dp_net or st.edp_net)
        and (st.tp_net or st.ep_net or st.cp_net)
    )


def _priced_on(scenario: Scenario, workload: WorkloadPlan, design: Design, bound: str) -> _Priced:
    """The plan's :data:`_Priced` entry of ``design`` in ``bound``'s world, from its memo: a
    table per bound by design, and one by network behaviour that designs pricing the plan
    alike share (dicts in the memo, keyed by the design and the behaviour's number
    themselves: no key tuple kept per entry)."""
    by_design: dict[Design, _Priced] | None = workload.memo.get(_NETS_BY_BOUND[bound])
    if by_design is None:
        by_design = workload.remember(_NETS_BY_BOUND[bound], {})
        assert by_design is not None
    kept = by_design.get(design)
    if kept is None:
        nets: JobNets | None = workload.memo.get("job-nets")
        if nets is None:
            nets = workload.remember("job-nets", JobNets(scenario, workload))
            assert nets is not None
        built = nets.net(design, bound)
        by_behaviour: dict[int, _Priced] | None = workload.memo.get("nets-alike")
        if by_behaviour is None:
            by_behaviour = workload.remember("nets-alike", {})
            assert by_behaviour is not None
        kept = by_behaviour.get(built.behaviour)
        if kept is None:
            kept = by_behaviour[built.behaviour] = [built, None, None]
        by_design[design] = kept
    return kept


_NETS_BY_BOUND: dict[str, str] = {"point": "nets-point", "low": "nets-low", "high": "nets-high"}
"""The memo key of each bound's table of :func:`_priced_on`."""


_Priced = list[Any]
"""A plan's network on one design in one bound's world (:func:`net_for`) and, once priced
there, its step and its step with the network-crossing data-parallel gradients free, at
:data:`_NET`, :data:`_TIMES`, :data:`_LOWER` (a list: made for every plan and design priced,
where a small class's construction cost about 1 % of a series' instructions)."""
_NET: Final = 0
_TIMES: Final = 1
_LOWER: Final = 2


def _assemble(
    st: _Static,
    t: TrainingPlan,
    design: Design,
    bound: str,
    tp_net: float,
    tp_exposed: float,
    ep_net: float,
    ep_exposed: float,
    cp_exposed: float,
    pp_net: float,
    pp_s: float,
    dp_s: tuple[float, float],
    edp_s: tuple[float, float],
    jitter_cv: float,
) -> _TrainingTimes:
    """The step of :func:`_times_below` from its communication terms (``dp_s``, ``edp_s``:
    the seconds of the reductions and of the all-gathers, :func:`_split_ops`); ``jitter_cv``:
    the design's fabric's (:attr:`design_network._Net.jitter_cv`)."""
    reduce_s = dp_s[0] + edp_s[0]
    gather_s = dp_s[1] + edp_s[1]
    dp_total = reduce_s + gather_s
    # each kind hides in its own window; one bucket of each is never hidden
    dp_exposed = 0.0
    if reduce_s > 0:
        # max() of the three, written out (the first largest, as max keeps it)
        dp_exposed = reduce_s - st.reduce_window
        chunk = reduce_s * st.chunk_share - st.chunk_window
        if chunk > dp_exposed:
            dp_exposed = chunk
        bucket = reduce_s * st.min_exposed_share
        if bucket > dp_exposed:
            dp_exposed = bucket
    if gather_s > 0:
        gather_exposed = gather_s - st.gather_window
        gather_bucket = gather_s * st.min_exposed_share
        dp_exposed += gather_bucket if gather_bucket > gather_exposed else gather_exposed
    dp_net = dp_s[0] + dp_s[1] if st.dp_net else 0.0
    dp_net += edp_s[0] + edp_s[1] if st.edp_net else 0.0
    dp_net_exposed = dp_exposed * (dp_net / dp_total) if dp_total > 0 else 0.0

    bubble = 0.0
    if st.bubble_share:
        bubble = (
            st.bubble_share * (t.compute_s + tp_exposed + ep_exposed + cp_exposed) / t.microbatches
        )

    network_comm = tp_net + ep_net + pp_net + dp_net
    exposed = tp_exposed + ep_exposed + pp_s + dp_exposed + cp_exposed
    exposed_network = tp_net + ep_net * (1.0 - EP_COMM_OVERLAP) + pp_net + dp_net_exposed

    straggler = 0.0
    if st.straggler_sigmas and bound != "low":
        sigma = math.hypot(st.jitter_compute_s, jitter_cv * network_comm)
        straggler = sigma * st.straggler_sigmas
        if bound == "high":
            straggler *= 2.0
    return _TrainingTimes(
        step_s=st.busy_s + exposed + bubble + straggler,
        exposed_comm_s=exposed,
        exposed_network_s=exposed_network,
        network_comm_s=network_comm,
        bubble_s=bubble,
        straggler_s=straggler,
    )


def _plan_comms(workload: WorkloadPlan) -> dict[str, Communicator]:
    """The plan's communicators (:func:`design_network._comms`), kept in its memo: asked once
    per plan and design priced."""
    hit: dict[str, Communicator] | None = workload.memo.get("comms")
    if hit is None:
        hit = workload.remember("comms", _comms(workload.plan))
        assert hit is not None
    return hit


def _pp_pair(workload: WorkloadPlan) -> tuple[int, GroupLayout]:
    """(GPUs of a domain that send at once, the two-domain layout) of a pipeline edge that
    joins two scale-up domains, kept in the plan's memo."""
    hit: tuple[int, GroupLayout] | None = workload.memo.get("pp-pair")
    if hit is None:
        senders = max(1, min(workload.domain_gpus, _pp_stride(workload.plan)))
        pair = GroupLayout(
            size=2 * workload.domain_gpus,
            nodes=2,
            ranks_per_node=workload.domain_gpus,
            concurrent_groups=1,
        )
        hit = workload.remember("pp-pair", (senders, pair))
        assert hit is not None
    return hit


_NO_DP = (0.0, 0.0)
_InDomain = tuple[float, tuple[float, float], tuple[float, float]]


def _pair_time(
    net: _Net,
    layout: GroupLayout,
    ops: tuple[_Ops, _Ops],
    comm: Communicator | None = None,
) -> tuple[float, float]:
    """(reduction, all-gather) seconds of a group's collectives on ``net``: the group's domain
    looked up once for both."""
    if layout.size <= 1 or not (ops[0] or ops[1]):
        return _NO_DP
    dom = net.domain(layout, comm)
    return ops_seconds(dom, ops[0]), ops_seconds(dom, ops[1])


def _in_domain_s(
    scenario: Scenario, workload: WorkloadPlan, t: TrainingPlan, net: _Net
) -> _InDomain:
    """(pipeline sends, data-parallel, expert data-parallel; each data-parallel term a
    (reduction, all-gather) pair) seconds per step of the plan's
    communicators that stay inside one scale-up domain (0 for those that cross it): the same
    on every design and in every bound (a domain of one server or rack has no network, and a
    calibration scales its scale-up bandwidth whatever the fabric), so priced once per plan
    object (its memo) instead of once per design."""
    key = ("in-domain", net.design.fabric if scenario.calibration is not None else None)
    hit: _InDomain | None = workload.memo.get(key)
    if hit is not None:
        return hit
    pp_s = 0.0
    if t.pp_p2p_per_step and not t.pp_crosses_network:
        local = GroupLayout(size=2, nodes=1, ranks_per_node=2, concurrent_groups=1)
        pp_s = t.pp_p2p_per_step * p2p_time_s(t.pp_bytes_per_p2p, net.domain(local))
    st = _static(scenario, workload, t)
    dp_s = _NO_DP if t.dp_layout.crosses_network else _pair_time(net, t.dp_layout, st.dp_ops)
    edp_s = _NO_DP
    if not t.expert_dp_layout.crosses_network:
        edp_s = _pair_time(net, t.expert_dp_layout, st.edp_ops)
    value: _InDomain = workload.remember(key, (pp_s, dp_s, edp_s))
    return value


def _idle_fraction(step: float, free_step_s: float | None, point: _TrainingTimes) -> float:
    if free_step_s is None:
        return min(1.0, (point.exposed_network_s + point.straggler_s) / step)
    return min(1.0, max(0.0, 1.0 - free_step_s / step)) if step > 0 else 0.0


# ----------------------------------------------------------------------------- entry point


def training_step_time_s(scenario: Scenario, workload: WorkloadPlan, design: Design) -> float:
    """Point estimate of the training step time only (used by the planner to rank plans)."""
    assert workload.training is not None
    if workload.weighs_other_plans():
        return _fastest_plan(scenario, workload, design)[1].step_s
    return _training_times(scenario, workload, workload.training, design, "point").step_s


def training_step_above(
    scenario: Scenario, workload: WorkloadPlan, design: Design, least: float
) -> float:
    """:func:`training_step_time_s` of a plan without alternatives, or ``inf`` when it is
    above ``least`` (its data-parallel gradients across the network are not priced when the
    step without them already is, :func:`_times_below`); a step equal to ``least`` is
    returned."""
    assert workload.training is not None and not workload.weighs_other_plans()
    times = _times_below(
        scenario, workload, workload.training, design, "point", math.nextafter(least, math.inf)
    )
    return math.inf if times is None else times.step_s


def _compute_floor_s(t: TrainingPlan, pp: int, vp: int) -> float:
    """A step can be no shorter than compute + optimizer + the compute part of the bubble
    (every communication term of :func:`_training_times` is >= 0)."""
    return t.compute_s + t.optimizer_s + (pp - 1) / max(1, vp) * t.compute_s / t.microbatches


def plan_floor_s(scenario: Scenario, plan: Plan) -> float:
    """:func:`_compute_floor_s` of a training plan without building its workload (its
    communicators, traffic and layouts): the same float as the floor of the plan's
    :class:`TrainingPlan` (the same terms, :func:`stage_time._compute_terms`, in the same
    order), so a lower bound of its step on every design, in every bound's world.  The
    planner prices a contender's full step only when this floor is below the best step so far
    (MODEL.md 5.3, cost)."""
    microbatches, _, _, compute_s, optimizer_s = _compute_terms(scenario, plan)
    return (
        compute_s
        + optimizer_s
        + (plan.pp - 1) / max(1, plan.virtual_stages) * compute_s / microbatches
    )


def alternatives_below(
    workload: WorkloadPlan, below: float = math.inf
) -> tuple[tuple[float, WorkloadPlan], ...]:
    """``workload.alternatives`` and the plans of every smaller size still to search
    (``workload.fewer``) whose floors' lower bound is below ``below``, each with its compute
    floor, lowest floor first (stable: in the order the planner made them).  A plan left out
    has a floor of at least ``below``: a caller that stops at the first floor not below the
    step to beat sees every plan it would have priced.  Kept in the plan's memo with the
    number of smaller sizes searched, so each size is searched once, when first needed."""
    kept: list[Any] | None = workload.memo.get("floors")
    if kept is None:
        out = []
        for alt in workload.alternatives:
            assert alt.training is not None
            floor = _compute_floor_s(alt.training, alt.plan.pp, alt.plan.virtual_stages)
            out.append((floor, alt))
        kept = workload.remember("floors", [tuple(sorted(out, key=itemgetter(0))), 0])
        assert kept is not None
    fewer = workload.fewer
    if fewer is not None:
        searched: int = kept[1]
        bounds = fewer.bounds
        if searched < len(bounds) and bounds[searched][0] < below:
            pairs: list[tuple[float, WorkloadPlan]] = list(kept[0])
            while searched < len(bounds) and bounds[searched][0] < below:
                for alt in fewer.search(bounds[searched][1]):
                    assert alt.training is not None
                    floor = _compute_floor_s(alt.training, alt.plan.pp, alt.plan.virtual_stages)
                    pairs.append((floor, alt))
                searched += 1
            kept[0] = tuple(sorted(pairs, key=itemgetter(0)))
            kept[1] = searched
    floors: tuple[tuple[float, WorkloadPlan], ...] = kept[0]
    return floors


def all_alternatives(workload: WorkloadPlan) -> tuple[WorkloadPlan, ...]:
    """Every other plan of the planner's (every smaller size searched), lowest floor first."""
    return tuple(alt for _, alt in alternatives_below(workload))


def _network_free_step_s(scenario: Scenario, workload: WorkloadPlan, design: Design) -> float:
    """The least step the planner's plans (``workload`` and its alternatives) reach on a network
    that costs nothing: the step no design can beat, the same for every design (kept in the
    plan's memo; a plan whose compute floor is not below the best so far is not priced)."""
    key = ("free", design.fabric if scenario.calibration is not None else None)
    hit: float | None = workload.memo.get(key)
    if hit is not None:
        return hit
    assert workload.training is not None
    best = _training_times(
        scenario, workload, workload.training, design, "point", free_network=True
    ).step_s
    for floor, alt in alternatives_below(workload, best):
        if floor >= best:
            break
        assert alt.training is not None
        best = min(
            best,
            _training_times(scenario, alt, alt.training, design, "point", free_network=True).step_s,
        )
    workload.remember(key, best)
    return best


def free_step_s(scenario: Scenario, workload: WorkloadPlan, design: Design, bound: str) -> float:
    """The step of plan ``workload`` in ``bound``'s world on a network that costs nothing: a
    lower bound of its step on every design in that world (every term of
    :func:`_training_times` is monotone in the network's times, and IEEE rounding keeps the
    order), tighter than :func:`_compute_floor_s` (it counts the communication inside the
    scale-up domain and the compute jitter).  The same for every design (kept in the plan's
    memo), so a plan whose bound already reaches the best step so far is not priced."""
    key = ("free-bound", bound, design.fabric if scenario.calibration is not None else None)
    hit: float | None = workload.memo.get(key)
    if hit is not None:
        return hit
    assert workload.training is not None
    step = _training_times(
        scenario, workload, workload.training, design, bound, free_network=True
    ).step_s
    value: float = workload.remember(key, step)
    return value


def _fastest_plan(
    scenario: Scenario,
    workload: WorkloadPlan,
    design: Design,
    priced: dict[int, float] | None = None,
) -> tuple[WorkloadPlan, _TrainingTimes]:
    """The planner's plan or, if faster on ``design``, one of its plans of fewer servers
    (``WorkloadPlan.alternatives``; a plan whose compute floor is not below the best step so
    far cannot win and is not priced, nor one whose step with its network-crossing
    data-parallel gradients free is not below it, :func:`_times_below`): with the same global
    batch, adding servers never slows a design's predicted step.  ``priced`` collects the
    point step of every plan priced (by ``id``)."""
    assert workload.training is not None
    best, point = workload, _training_times(scenario, workload, workload.training, design, "point")
    if priced is not None:
        priced[id(workload)] = point.step_s
    for floor, alt in alternatives_below(workload, point.step_s):
        if floor >= point.step_s:
            break  # sorted: no later plan can win either
        if free_step_s(scenario, alt, design, "point") >= point.step_s:
            continue  # not even on a free network
        t = alt.training
        assert t is not None
        below = _times_below(scenario, alt, t, design, "point", point.step_s)
        if below is None:
            continue  # its step is at least its bound, not below the best
        if priced is not None:
            priced[id(alt)] = below.step_s
        if below.step_s < point.step_s:
            best, point = alt, below
    return best, point
