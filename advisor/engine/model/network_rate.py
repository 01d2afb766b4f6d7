"""The NIC bandwidth a communicator gets across servers: a NIC port's line rate, the share of
it the fabric's wire, its leaf and spine uplinks and ECMP hash collisions leave
(:func:`network_efficiency`) and a transport's per-server cap (NCCL over TCP sockets).
:func:`advisor.engine.model.collectives.make_domain` prices a communicator's domain with them.
"""

from __future__ import annotations

from advisor.engine.facts.constants import (
    BITS_PER_BYTE,
    ECMP_COLLISION_LOSS,
    ECMP_COLLISION_LOSS_HIGH,
    RAIL_GROUP_NODES,
    FabricClass,
)


def cross_leaf_fraction(nodes: int) -> float:
    """Share of cross-server traffic leaving the leaf when ``nodes`` servers sit in random
    order on leaves of 32 (rail groups): the placement-free fallback of
    :func:`network_efficiency` (callers without a placement; the validation's whole-job rows
    use it for their high bound only)."""
    if nodes <= RAIL_GROUP_NODES:
        return 0.0
    return 1.0 - RAIL_GROUP_NODES / nodes


def network_efficiency(
    fabric: FabricClass,
    *,
    nodes: int,
    oversubscription: float,
    adaptive_routing: bool,
    bound: str = "point",
    uplink_load: float | None = None,
    pod_load: float = 0.0,
    offered: float = 1.0,
) -> float:
    """Fraction of NIC line rate a collective spanning ``nodes`` servers gets.

    wire efficiency x min(1, leaf uplink capacity / leaf uplink demand, spine capacity /
    pod demand): a leaf's uplinks carry 1/r of its servers' line rate, of which ECMP hash
    collisions waste ``loss`` without adaptive routing; the communicator sends ``uplink_load``
    of its bytes out of the leaf and ``pod_load`` out of the pod (placement.Crossing), so it
    slows when uplink_load x r > 1 (fluid bottleneck), and without adaptive routing loses
    ``loss`` x min(1, uplink_load x r) to collisions.  Without a placement the
    uplink load is :func:`cross_leaf_fraction`.  ``low`` (optimistic) takes the best
    published wire efficiency and no ECMP loss.

    ``offered`` is the share of its NICs' achievable rate a server actually sends (below 1
    when the transport is capped per server, NCCL over TCP sockets): the uplink demand is
    ``uplink_load x offered`` of the line rate, and a hash collision of two flows slows them
    only when together they exceed the link (each flow runs at ``offered`` of a link, so a
    colliding pair loses ``1 - 1/(2 offered)`` of its rate, none at ``offered <= 1/2``; the
    ECMP loss is scaled by that relative to line-rate flows).  The caller multiplies by
    ``offered`` (:func:`make_domain`), so the bandwidth is ``min(offered, 1/(uplink_load x r))``
    of the line rate times the collision factor: never less with more NICs.
    """
    wire = wire_efficiency(fabric, bound)
    loss = 0.0
    if bound != "low" and not adaptive_routing:
        loss = ECMP_COLLISION_LOSS if bound == "point" else ECMP_COLLISION_LOSS_HIGH
    leaf = cross_leaf_fraction(nodes) if uplink_load is None else uplink_load
    r = max(1.0, oversubscription)
    offered = min(1.0, max(offered, 1e-12))
    # a colliding pair of flows at `offered` of a link each loses 1 - 1/(2 offered) of its
    # rate; relative to line-rate flows (1/2) that is 2 - 1/offered, nothing below 1/2
    loss *= max(0.0, 2.0 - 1.0 / offered)
    factor = 1.0
    if leaf > 0.0:
        # uplink bottleneck, then ECMP: collisions cost in proportion to how busy the
        # uplinks are (a ring or a pipeline is as slow as its slowest, collided flow)
        demand = leaf * r * offered
        busy = min(1.0, demand)
        factor = (min(1.0, 1.0 / demand) if demand > 0.0 else 1.0) * (1.0 - loss * busy)
    if pod_load > 0.0:
        factor = min(factor, 1.0 - loss * min(1.0, pod_load * offered))
    return wire * factor


def wire_efficiency(fabric: FabricClass, bound: str) -> float:
    """The fabric's wire efficiency at ``bound`` (``low``, the optimistic bound, takes the best
    published one): :func:`network_efficiency` of traffic that never leaves the leaf."""
    if bound == "low":
        return fabric.wire_efficiency_high
    return fabric.wire_efficiency if bound == "point" else fabric.wire_efficiency_low


def node_cap_bytes_per_s(fabric: FabricClass, bound: str = "point") -> float:
    """Per-server throughput cap of the transport in bytes/s (0 = none)."""
    if bound == "low":
        cap = fabric.node_cap_gbytes_per_s_high
    elif bound == "high":
        cap = fabric.node_cap_gbytes_per_s_low
    else:
        cap = fabric.node_cap_gbytes_per_s
    return cap * 1e9


def nic_bytes_per_s(nic_gbps: float) -> float:
    """Line rate of one NIC port in bytes/s."""
    return nic_gbps * 1e9 / BITS_PER_BYTE
