"""The design's network as the workload's communicators see it: the fabric of a candidate design,
the communication domains of each communicator and the time of their collectives.

Units: bytes, seconds unless the name says otherwise.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Final

from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import (
    DEFAULT_SWITCH_RADIX,
    FABRICS,
)
from advisor.engine.input.scenario import Calibration, Design, Scenario
from advisor.engine.model.collectives import (
    CommDomain,
    calibrated_domain,
    collective_time_s,
    make_domain,
)
from advisor.engine.model.placement import (
    Communicator,
    Crossing,
    Fabric,
    make_fabric,
    place,
    training_communicators,
)
from advisor.engine.model.plans import GroupLayout, Plan, WorkloadPlan
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.model.topology import TopologyError, TopologySize, size_topology

# ----------------------------------------------------------------------------- domains


class _Net:
    """Builds communicator domains for one design and bound (cached per layout).

    The compute fabric is sized for this design (:func:`topology.size_topology` with the
    design's switch radix), and every communicator is placed on it
    (:mod:`advisor.engine.model.placement`): contiguous for the point and low bounds, scattered for
    the high bound. Built by :func:`net_for`, once per value of what it depends on.
    """

    def __init__(
        self,
        scaleup: ScaleUp,
        calibration: Calibration | None,
        design: Design,
        bound: str,
        servers: int,
        gpus_per_node: int,
        domain_gpus: int,
    ) -> None:
        self.scaleup = scaleup
        self.calibration = calibration
        self.design = design
        self.bound = bound
        self.servers_per_domain = max(1, domain_gpus // gpus_per_node)
        self.nics_per_domain = design.nics_per_node * self.servers_per_domain
        self.fabric, self.fabric_oversubscription = _fabric_for(
            servers,
            gpus_per_node,
            domain_gpus,
            max(1, design.nics_per_node),
            int(design.switch_radix or DEFAULT_SWITCH_RADIX),
            max(1.0, float(design.oversubscription)),
            design.planes,
            design.links_per_rail,
        )
        self.placement = "scattered" if bound == "high" else "contiguous"
        self.jitter_cv = FABRICS[design.fabric].jitter_cv
        """The fabric's collective jitter (the straggler term of every step priced on it)."""
        self.cache: dict[tuple[int, int, int, Communicator | None], CommDomain] = {}
        self.alike: dict[tuple[int, int, int, float | None, float, int], CommDomain] = {}
        # what make_domain reads of this network besides the communicator's crossing: nets of
        # designs (or job sizes) that agree on it build equal domains for equal crossings
        kind = (
            scaleup,
            calibration,
            design.fabric,
            design.nic_gbps,
            self.nics_per_domain,
            self.fabric_oversubscription,
            design.adaptive_routing,
            design.in_network_reduction,
            bound,
            self.servers_per_domain,
            design.transport,
        )
        self.kind = _net_kind(kind)
        # a domain whose traffic never leaves a leaf (or that spans one scale-up domain) reads
        # neither the fabric's oversubscription nor its routing (network_rate.network_efficiency
        # reads them only for bytes that leave the leaf or the pod): designs that differ only
        # in them build equal domains for such a communicator
        self.leaf_kind = _net_kind((*kind[:5], None, None, *kind[7:]))
        # what a plan's step on this network reads of it: the kind (every figure a domain and
        # the step's jitter read of the design) and where the communicators sit; networks of
        # designs that agree on both price every plan alike (training_step._times_below)
        self.behaviour = _net_kind((self.kind, self.fabric))

    def crossing(self, comm: Communicator) -> Crossing:
        return place(comm, self.fabric, self.placement)

    def domain(
        self,
        layout: GroupLayout,
        comm: Communicator | None = None,
        *,
        share_all: int | None = None,
    ) -> CommDomain:
        share = share_all if share_all is not None else layout.concurrent_groups
        if layout.nodes <= 1:
            # inside one scale-up domain the placement does not matter (make_domain reads the
            # crossing only across domains): one domain for every communicator, none placed
            comm = None
        key = (layout.nodes, layout.ranks_per_node, share, comm)
        dom = self.cache.get(key)
        if dom is None:
            uplink: float | None = None
            pod = 0.0
            hops = 1
            if comm is not None:
                x = self.crossing(comm)
                uplink, pod, hops = x.uplink_load, x.pod_load, max(1, x.hops)
            # communicators of different plans that cross the fabric alike share one domain
            alike = (layout.nodes, layout.ranks_per_node, share, uplink, pod, hops)
            dom = self.alike.get(alike)
            if dom is not None:
                self.cache[key] = dom
                return dom
            local = layout.nodes <= 1 or (uplink == 0.0 and pod == 0.0)
            shared = (self.leaf_kind if local else self.kind, alike)
            dom = _DOMAIN_CACHE.get(shared)
            if dom is not None:
                self.cache[key] = self.alike[alike] = dom
                return dom
            dom = make_domain(
                nodes=layout.nodes,
                ranks_per_node=layout.ranks_per_node,
                scaleup=self.scaleup,
                fabric_id=self.design.fabric,
                nic_gbps=self.design.nic_gbps,
                nics_per_node=self.nics_per_domain,
                oversubscription=self.fabric_oversubscription,
                adaptive_routing=self.design.adaptive_routing,
                in_network_reduction=self.design.in_network_reduction,
                bound=self.bound,
                net_share=1.0 / max(1, share),
                uplink_load=uplink,
                pod_load=pod,
                hops=hops,
                servers_per_node=self.servers_per_domain,
                transport=self.design.transport or None,
            )
            if self.calibration is not None:
                dom = calibrated_domain(dom, self.calibration, self.design.fabric)
            if len(_DOMAIN_CACHE) >= _DOMAIN_CACHE_MAX:
                _DOMAIN_CACHE.clear()
            self.cache[key] = self.alike[alike] = _DOMAIN_CACHE[shared] = dom
        return dom


_NET_KINDS_CACHE: dict[tuple[object, ...], int] = {}
"""A number per distinct value of what :func:`make_domain` reads of a network (the GPU's
scale-up figures, the calibration, the fabric, NIC speed and count per domain, the achieved
oversubscription, routing, in-network reduction, bound, servers per domain): hashed once per
network built, not once per domain asked."""

_DOMAIN_CACHE: dict[tuple[int, tuple[int, int, int, float | None, float, int]], CommDomain] = {}
"""Communicator domains by value (the network's kind and the communicator's crossing): a
training evaluation builds a network per design and job size, and designs that differ only in
what a group does not reach (switch radix, oversubscription of a group inside a leaf) build
equal domains (~25 % of them), bounded."""
_DOMAIN_CACHE_MAX: Final = 16384


_NET_KIND_NUMBERS = itertools.count()
"""Never reused (not even after the caches are emptied): a network built before keeps its
number, which no other value ever gets."""


def _net_kind(value: tuple[object, ...]) -> int:
    kind = _NET_KINDS_CACHE.get(value)
    if kind is None:
        if len(_NET_KINDS_CACHE) >= _DOMAIN_CACHE_MAX:
            _NET_KINDS_CACHE.clear()
        kind = _NET_KINDS_CACHE[value] = next(_NET_KIND_NUMBERS)
    return kind


def net_for(scenario: Scenario, workload: WorkloadPlan, design: Design, bound: str) -> _Net:
    """The design's network as ``workload``'s communicators see it in ``bound``'s world.

    One per value of what the domains depend on (the GPU's scale-up figures, the calibration,
    the design, the bound, the servers the job occupies and the scale-up domain), shared by
    every plan and evaluation with the same values: a design evaluation prices several plans
    on it, the planner many plans on one reference design.
    """
    return JobNets(scenario, workload).net(design, bound)


class JobNets:
    """What :func:`net_for` reads of the scenario and the plan (the GPU's scale-up figures, the
    calibration, the servers the job occupies, the scale-up domain), read once: a plan asks
    for its network on every design priced (``training_step`` keeps one per plan)."""

    def __init__(self, scenario: Scenario, workload: WorkloadPlan) -> None:
        self.scaleup = _scaleup_of(scenario.gpu)
        self.calibration = scenario.calibration
        self.servers = _job_servers(scenario, workload)
        self.gpus_per_node = scenario.gpus_per_node
        self.domain_gpus = workload.domain_gpus

    def net(self, design: Design, bound: str) -> _Net:
        """:func:`net_for` of ``design`` in ``bound``'s world."""
        return _net(
            self.scaleup,
            self.calibration,
            design,
            bound,
            self.servers,
            self.gpus_per_node,
            self.domain_gpus,
        )


@lru_cache(maxsize=64)
def _scaleup_of(gpu: GpuSpec) -> ScaleUp:
    """:meth:`ScaleUp.of` by the GPU's value (a pure function of it): built once per GPU, not
    once per plan priced on a design (~1,000 times an evaluation)."""
    return ScaleUp.of(gpu)


@lru_cache(maxsize=4096)
def _net(
    scaleup: ScaleUp,
    calibration: Calibration | None,
    design: Design,
    bound: str,
    servers: int,
    gpus_per_node: int,
    domain_gpus: int,
) -> _Net:
    return _Net(scaleup, calibration, design, bound, servers, gpus_per_node, domain_gpus)


@lru_cache(maxsize=1024)
def _fabric_for(
    servers: int,
    gpus_per_server: int,
    domain_gpus: int,
    nics_per_server: int,
    radix: int,
    oversubscription: float,
    planes: int = 1,
    links_per_rail: int = 1,
) -> tuple[Fabric, float]:
    """(placement boundaries, achieved leaf oversubscription) of the fabric sized for a design.

    The fabric is the design's own: a multi-plane design's planes are each a shallower fat
    tree, so its messages cross the boundaries (and take the hops) of one plane; a Gaudi 3
    ply puts ``links_per_rail`` links of a server on one leaf, so a leaf holds fewer servers.
    A fabric too large for four tiers of its switch falls back to leaves and pods of ``k/2``
    servers (the design itself is refused by the recommendation).
    """
    radix = max(4, radix - radix % 2)
    links_per_rail = links_per_rail if nics_per_server % max(1, links_per_rail) == 0 else 1
    rails = nics_per_server // max(1, links_per_rail)
    planes = planes if planes > 1 and rails % planes == 0 else 1
    try:
        topo: TopologySize | None = size_topology(
            servers * nics_per_server,
            radix,
            oversubscription,
            rails=rails,
            planes=planes,
            links_per_rail=links_per_rail,
        )
    except (TopologyError, ValueError):
        topo = None
    if topo is not None:
        blocks = topo.placement_blocks()
        achieved = topo.achieved_oversubscription if topo.tiers > 1 else 1.0
    else:
        half = radix // 2
        blocks = (half, half * max(1, half // nics_per_server), half**3)
        achieved = oversubscription
    fabric = make_fabric(
        domain_gpus=domain_gpus,
        gpus_per_server=gpus_per_server,
        servers=servers,
        placement_blocks=blocks,
    )
    return fabric, achieved


def _job_servers(scenario: Scenario, workload: WorkloadPlan) -> int:
    """Servers the job occupies: a training plan that leaves GPUs idle runs on
    ``ceil(gpus_used / gpus_per_node)`` contiguous servers, so its communicators see the
    sub-fabric those servers need (the same plan predicts the same step on a larger cluster);
    inference spans the whole cluster."""
    used = workload.plan.gpus_used if workload.training is not None else 0
    if 0 < used < scenario.gpus:
        return max(1, math.ceil(used / scenario.gpus_per_node))
    return max(1, scenario.nodes)


def _design_fabric(
    scenario: Scenario, workload: WorkloadPlan, design: Design
) -> tuple[Fabric, float]:
    return _fabric_for(
        _job_servers(scenario, workload),
        scenario.gpus_per_node,
        workload.domain_gpus,
        max(1, design.nics_per_node),
        int(design.switch_radix or DEFAULT_SWITCH_RADIX),
        max(1.0, float(design.oversubscription)),
        design.planes,
        design.links_per_rail,
    )


def design_fabric(scenario: Scenario, workload: WorkloadPlan, design: Design) -> Fabric:
    """The boundaries (domain, leaf, pod, super-pod) of the compute fabric sized for ``design``."""
    return _design_fabric(scenario, workload, design)[0]


def _comms(plan: Plan) -> dict[str, Communicator]:
    return training_communicators(plan.tp, plan.cp, plan.dp, max(1, plan.ep), plan.pp)


_OPS_CACHE: dict[tuple[CommDomain, tuple[tuple[str, float, int], ...]], float] = {}
"""Seconds of a communicator's collectives (``ops``) on a domain, by value: designs that
differ only where the communicator does not reach (another oversubscription or switch for a
group inside one leaf) give equal domains, and a plan's data-parallel gradients are priced on
them again for every design (~70 % of the look-ups of a training evaluation repeat one)."""
_OPS_CACHE_MAX: Final = 16384


def ops_seconds(dom: CommDomain, ops: tuple[tuple[str, float, int], ...]) -> float:
    """Seconds of ``ops`` (``(collective, bytes, count)``) on ``dom``, kept by value
    (:data:`_OPS_CACHE`); 0 for none."""
    if not ops:
        return 0.0
    key = (dom, ops)
    hit = _OPS_CACHE.get(key)
    if hit is None:
        if len(_OPS_CACHE) >= _OPS_CACHE_MAX:
            _OPS_CACHE.clear()
        hit = _OPS_CACHE[key] = sum(
            count * domain_collective_s(op, nbytes, dom) for op, nbytes, count in ops
        )
    return hit


_COLLECTIVE_CACHE: dict[tuple[str, float, CommDomain], float] = {}
"""Seconds of one collective (NCCL's algorithm and protocol chosen as ``auto`` does) by value:
designs that build equal domains for a communicator (:class:`_Net`'s shared domains) ask the
same collective again; a split-model serving evaluation asks each tensor-parallel all-reduce
~3 times (Llama 3.1 405B on 257 H100 servers: 2,654 asks, 906 distinct), bounded."""
_COLLECTIVE_CACHE_MAX: Final = 16384


def domain_collective_s(op: str, nbytes: float, dom: CommDomain) -> float:
    """``collective_time_s(op, nbytes, dom)[0]``, kept by value (:data:`_COLLECTIVE_CACHE`):
    the same float as computing it again."""
    key = (op, nbytes, dom)
    hit = _COLLECTIVE_CACHE.get(key)
    if hit is None:
        if len(_COLLECTIVE_CACHE) >= _COLLECTIVE_CACHE_MAX:
            _COLLECTIVE_CACHE.clear()
        hit = _COLLECTIVE_CACHE[key] = collective_time_s(op, nbytes, dom)[0]
    return hit


def _pp_stride(plan: Plan) -> int:
    return plan.tp * plan.cp * plan.dp
