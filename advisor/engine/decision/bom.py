"""Bill of materials: NICs, switches, transceivers and cables of every network.

Three networks per cluster, kept physically separate (NVIDIA DGX SuperPOD RA):

* ``compute``: the GPU east-west fabric (only when the job spans servers);
* ``storage``: storage and in-band front-end traffic, top-of-rack, oversubscribed;
* ``management``: 1 GbE out-of-band (BMCs and switch management ports).

Every line's price is copied from one catalog item, so ``extended_price_usd`` is always
``quantity * unit_price_usd`` of a catalog SKU.  ``power_w`` of a line is the total power of
its quantity (``quantity * item.power_w``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Final, TypeVar

from advisor.engine.decision.util import cents
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.catalog.gpus import GpuSpec
from advisor.engine.facts.catalog.network import (
    CABLES,
    ETHERNET,
    NICS,
    SWITCHES,
    TRANSCEIVERS,
    WITH_THE_SERVERS,
    Cable,
    Nic,
    Switch,
    Transceiver,
)
from advisor.engine.model.topology import (
    ROW_LINK_M,
    SERVERS_PER_RACK,
    SPINE_LINK_M,
    TierLinks,
    TopologyError,
    TopologySize,
    plan_cabling,
    size_compute_fabric,
    size_topology,
    size_tor_fabric,
)
from advisor.engine.result.records import BomLine

# Storage / in-band and management network sizing (docs/MODEL.md, "Bill of materials").
STORAGE_NIC_GBPS: Final = 100
"""Storage/in-band port speed when the GPU's platform facts name no storage adapter."""
STORAGE_PORTS_PER_SERVER: Final = 2
"""Storage-fabric ports per server when the platform facts say nothing (dual-homed)."""
STORAGE_OVERSUBSCRIPTION: Final = 2.0
"""Storage and front-end networks are usually oversubscribed: only the compute fabric is
built non-blocking (NVIDIA DGX SuperPOD reference architecture)."""
STORAGE_TARGET_RATIO: Final = 2.0
"""Server storage ports per storage-target port: the targets' links carry half the servers'
storage bandwidth (matches the 2:1 fabric; storage appliances are sized by the customer)."""
STORAGE_CORE_UPLINKS: Final = 2
"""Ports every storage/in-band leaf keeps for uplinks to the data-centre core (in-band
management, users, the internet edge)."""
MGMT_PORTS_PER_SERVER: Final = 1
"""One 1 GbE BMC port per server (out-of-band management)."""
MGMT_UPLINKS_PER_SWITCH: Final = 2
"""Each out-of-band switch uplinks twice at 100G to the management aggregation layer."""
AGGREGATION_RESERVED_PORTS: Final = 2
"""Ports of each management aggregation switch kept for its own uplinks."""
ItemT = Nic | Switch | Transceiver | Cable


class BomError(ValueError):
    """The catalog lacks a part needed for this design (e.g. no optic at that speed)."""


_Found = TypeVar("_Found")


def _built(found: _Found | str) -> _Found:
    """What a kept search found, or :class:`BomError` with the reason it kept instead (the
    searches keep refusals by value, so a refused shape asked again is not searched again)."""
    if isinstance(found, str):
        raise BomError(found)
    return found


def line(item: ItemT, quantity: int, network: str, role: str = "") -> BomLine:
    """``quantity`` of ``item`` on ``network``; the description is the catalog's (what the
    customer orders), the line's purpose is its ``role`` (never written into the text)."""
    return BomLine(
        sku=item.sku,
        part_number=item.part_number,
        description=item.description,
        category=item.category,
        quantity=quantity,
        unit_price_usd=item.unit_price_usd,
        extended_price_usd=cents(quantity * item.unit_price_usd),
        source=item.source,
        network=network,
        power_w=cents(quantity * item.power_w),
        role=role,
    )


@dataclass(frozen=True, eq=False)
class NetworkParts:
    """The network half of the catalog, as the BOM needs it (hashed by identity)."""

    nics: tuple[Nic, ...] = NICS
    switches: tuple[Switch, ...] = SWITCHES
    transceivers: tuple[Transceiver, ...] = TRANSCEIVERS
    cables: tuple[Cable, ...] = CABLES

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> NetworkParts:
        """The catalog's nics, switches, transceivers and cables."""
        return cls(
            nics=catalog.nics,
            switches=catalog.switches,
            transceivers=catalog.transceivers,
            cables=catalog.cables,
        )

    def find(self, sku: str) -> ItemT:
        for group in (self.nics, self.switches, self.transceivers, self.cables):
            for item in group:
                if item.sku == sku:
                    return item
        raise KeyError(sku)


# ------------------------------------------------------------------------- link media

Cage = tuple[str, int]
"""(form factor, logical links per cage) of one end of a link."""


@dataclass(frozen=True)
class LinkKit:
    """Parts per link of one tier; quantities are per link (0.5 = a twin-port module)."""

    parts: tuple[tuple[ItemT, float], ...]
    price_per_link_usd: float
    medium: str


def choose_link_kit(
    parts: NetworkParts,
    fabric: str,
    gbps: int,
    length_m: float,
    switch_cage: Cage,
    far_cage: Cage,
    far_end: str = "nic",
    far_lane: int = 0,
) -> LinkKit:
    """Cheapest buildable link from a switch cage to a NIC (``far_end="nic"``) or to another
    switch cage (``far_end="switch"``): a straight or breakout DAC/AOC whose connectors
    match both cages, else a transceiver in each cage plus fiber of the same medium.

    Cages carry ``links`` logical ports each (a QM9700 OSFP cage: 2 x 400G), so a twin-port
    switch cage meets single-port NICs through a 1-to-2 splitter cable or a twin-port module
    whose two fibers go to two NIC modules.  Raises :class:`BomError` when none is buildable
    (the search's answer either way is kept by value: :func:`_link_kit`).
    """
    return _built(
        _link_kit(parts, fabric, gbps, length_m, switch_cage, far_cage, far_end, far_lane)
    )


@lru_cache(maxsize=4096)
def _link_kit(
    parts: NetworkParts,
    fabric: str,
    gbps: int,
    length_m: float,
    switch_cage: Cage,
    far_cage: Cage,
    far_end: str,
    far_lane: int,
) -> LinkKit | str:
    """:func:`choose_link_kit`'s kit, or why there is none (kept too: every candidate of a
    switch and NIC with no link between them asks again, ~140 an evaluation)."""
    sw_ff, sw_links = switch_cage
    far_ff, far_links = far_cage
    options: list[LinkKit] = []
    for cable in parts.cables:
        if cable.kind not in ("dac", "aoc") or cable.gbps != gbps or not cable.serves(fabric):
            continue
        if cable.reach_m < length_m or cable.form_factor != sw_ff or cable.links != sw_links:
            continue
        if cable.end_b != far_ff or cable.links // max(1, cable.legs) != far_links:
            continue
        if cable.links % max(1, cable.legs):
            continue
        options.append(
            LinkKit(((cable, 1.0 / cable.links),), cable.unit_price_usd / cable.links, cable.kind)
        )
    far_ends = ("nic", "any") if far_end == "nic" else ("switch", "any")
    for media in ("mmf", "smf"):
        # both ends' modules of one medium (a multimode module never meets a single-mode one)
        sw_mod = _cheapest_module(
            parts, fabric, gbps, length_m, sw_ff, sw_links, ("switch", "any"), far_lane, media
        )
        far_mod = _cheapest_module(
            parts, fabric, gbps, length_m, far_ff, far_links, far_ends, far_lane, media
        )
        if sw_mod is None or far_mod is None:
            continue
        if sw_mod.lane_gbps and far_mod.lane_gbps and sw_mod.lane_gbps != far_mod.lane_gbps:
            continue
        fiber = _cheapest_fiber(parts, fabric, length_m, sw_mod.media)
        if fiber is None:
            continue
        fibers = max(sw_mod.fibers_per_module / sw_links, far_mod.fibers_per_module / far_links)
        kit: list[tuple[ItemT, float]] = [
            (sw_mod, 1.0 / sw_links),
            (far_mod, 1.0 / far_links),
            (fiber, fibers),
        ]
        merged: dict[str, tuple[ItemT, float]] = {}
        for item, qty in kit:
            prev = merged.get(item.sku)
            merged[item.sku] = (item, qty + (prev[1] if prev else 0.0))
        price = sum(item.unit_price_usd * qty for item, qty in merged.values())
        options.append(LinkKit(tuple(merged.values()), price, "optical"))
    if not options:
        return (
            f"no cable or optic in the catalog joins a {sw_links} x {gbps}G {sw_ff} switch "
            f"cage to a {far_links} x {gbps}G {far_ff} {far_end} cage at {length_m:g} m "
            f"({fabric})"
        )
    return min(options, key=lambda k: (k.price_per_link_usd, k.medium))


def _cheapest_module(
    parts: NetworkParts,
    fabric: str,
    gbps: int,
    length_m: float,
    form_factor: str,
    links: int,
    ends: tuple[str, ...],
    lane: int = 0,
    media: str = "",
) -> Transceiver | None:
    best: Transceiver | None = None
    for t in parts.transceivers:
        if lane and t.lane_gbps and t.lane_gbps != lane:
            continue
        if media and t.media != media:
            continue
        if t.gbps != gbps or not t.serves(fabric) or t.reach_m < length_m or t.end not in ends:
            continue
        if t.form_factor != form_factor or t.ports_per_module != links:
            continue
        if best is None or t.unit_price_usd < best.unit_price_usd:
            best = t
    return best


def _cheapest_fiber(parts: NetworkParts, fabric: str, length_m: float, medium: str) -> Cable | None:
    fibers = [
        c
        for c in parts.cables
        if c.kind == "fiber" and c.media == medium and c.reach_m >= length_m and c.serves(fabric)
    ]
    return min(fibers, key=lambda c: c.unit_price_usd) if fibers else None


def switch_cage(switch: Switch, gbps: int) -> Cage:
    cage = switch.cage_at(gbps)
    if cage is None:
        raise BomError(f"{switch.sku} lists no cage form factor for {gbps}G ports")
    return cage


def nic_cage(nic: Nic) -> Cage:
    return nic.form_factor, nic.links_per_port


def cabling_items(
    parts: NetworkParts,
    fabric: str,
    gbps: int,
    tiers: Sequence[TierLinks],
    *,
    switch: Switch,
    far: Cage,
    far_lane: int = 0,
) -> list[tuple[ItemT, int, str]]:
    """Cables and transceivers of every tier, merged per SKU and role: (item, qty, role).

    Endpoint links run from ``switch`` cages to ``far`` cages (NICs); switch-to-switch tiers
    join two cages of ``switch``.
    """
    return _cabling_at(parts, fabric, gbps, tiers, switch_cage(switch, gbps), far, far_lane)


def _cabling_at(
    parts: NetworkParts,
    fabric: str,
    gbps: int,
    tiers: Sequence[TierLinks],
    sw: Cage,
    far: Cage,
    far_lane: int,
) -> list[tuple[ItemT, int, str]]:
    """:func:`cabling_items` from the switch's cage (all it reads of the switch)."""
    quantities: dict[tuple[str, str], float] = {}
    items: dict[str, ItemT] = {}
    for tier in tiers:
        if tier.links == 0:
            continue
        if tier.tier == "endpoint-leaf":
            kit = choose_link_kit(parts, fabric, gbps, tier.length_m, sw, far, "nic", far_lane)
            role = "server-link"
        else:
            kit = choose_link_kit(parts, fabric, gbps, tier.length_m, sw, sw, "switch")
            role = "switch-link"
        for item, per_link in kit.parts:
            items[item.sku] = item
            key = (item.sku, role)
            quantities[key] = quantities.get(key, 0.0) + per_link * tier.links
    return [
        (items[sku], math.ceil(qty - 1e-9), role)
        for (sku, role), qty in sorted(
            quantities.items(), key=lambda kv: (kv[0][1], items[kv[0][0]].category)
        )
    ]


# ---------------------------------------------------------------------------- networks


def cards_per_node(nic: Nic, links_per_node: int) -> int:
    """Adapters per server that give ``links_per_node`` links."""
    return max(1, math.ceil(links_per_node / max(1, nic.links)))


def compute_fabric_items(
    parts: NetworkParts,
    *,
    fabric: str,
    nic: Nic,
    nics_per_node: int,
    nodes: int,
    switch: Switch,
    topo: TopologySize,
) -> list[tuple[ItemT, int, str]]:
    """(item, quantity, role) of the GPU compute fabric: NICs, switches per tier, cabling.

    ``nics_per_node`` counts compute links per server (one per GPU on HGX; 24 x 200G on
    Gaudi 3, whose links come six OSFP cages to a baseboard)."""
    out: list[tuple[ItemT, int, str]] = [
        (nic, nodes * cards_per_node(nic, nics_per_node), "compute-nic")
    ]
    for role, count in (
        ("leaf", topo.leaf_switches),
        ("spine", topo.spine_switches),
        ("core", topo.core_switches),
        ("superspine", topo.superspine_switches),
    ):
        if count:
            out.append((switch, count, role))
    gbps = nic.port_gbps
    cabling = _fabric_cabling(
        parts, topo, nodes, fabric, gbps, switch_cage(switch, gbps), nic_cage(nic), nic.lane_gbps
    )
    out.extend(cabling[0])
    return out


_Cabling = tuple[tuple[tuple[ItemT, int, str], ...], tuple[tuple[float, float], ...]]


def _fabric_cabling(
    parts: NetworkParts,
    topo: TopologySize,
    nodes: int,
    fabric: str,
    gbps: int,
    sw: Cage,
    far: Cage,
    far_lane: int = 0,
) -> _Cabling:
    """Cabling of a compute fabric, and each line's (price, power) rounded to cents as
    :func:`compute_fabric_totals` adds them; raises :class:`BomError` when a tier has no
    link (:func:`_cabling_or_reason` keeps either)."""
    return _built(_cabling_or_reason(parts, topo, nodes, fabric, gbps, sw, far, far_lane))


@lru_cache(maxsize=4096)
def _cabling_or_reason(
    parts: NetworkParts,
    topo: TopologySize,
    nodes: int,
    fabric: str,
    gbps: int,
    sw: Cage,
    far: Cage,
    far_lane: int,
) -> _Cabling | str:
    """:func:`_fabric_cabling`, or the reason a tier has no link; cached because many
    candidates share a topology and switches of one cage share their cabling (the switch's
    cage is all it reads), and a cage no link reaches is asked again by every such candidate."""
    tiers = plan_cabling(topo, servers=nodes)
    try:
        items = tuple(_cabling_at(parts, fabric, gbps, tiers, sw, far, far_lane))
    except BomError as exc:
        return str(exc)
    return items, tuple(
        (cents(qty * item.unit_price_usd), cents(qty * item.power_w)) for item, qty, _ in items
    )


def compute_fabric_lines(
    parts: NetworkParts,
    *,
    fabric: str,
    nic: Nic,
    nics_per_node: int,
    nodes: int,
    switch: Switch,
    topo: TopologySize,
) -> list[BomLine]:
    """NICs, leaf/spine/core switches and per-tier cabling of the GPU compute fabric."""
    items = compute_fabric_items(
        parts,
        fabric=fabric,
        nic=nic,
        nics_per_node=nics_per_node,
        nodes=nodes,
        switch=switch,
        topo=topo,
    )
    return [line(item, qty, "compute", role) for item, qty, role in items]


def compute_fabric_totals(
    parts: NetworkParts,
    *,
    fabric: str,
    nic: Nic,
    nics_per_node: int,
    nodes: int,
    switch: Switch,
    topo: TopologySize,
) -> tuple[float, float]:
    """(capex USD, power W) of the compute fabric; equals :func:`totals` of its lines
    (:func:`compute_fabric_items`' lines, each rounded to cents and added in their order)."""
    cards = nodes * cards_per_node(nic, nics_per_node)
    price = 0.0
    power = 0.0
    price += cents(cards * nic.unit_price_usd)
    power += cents(cards * nic.power_w)
    # the switches of each tier in turn (leaf, spine, core, super-spine), as the lines list them
    switch_price, switch_power = switch.unit_price_usd, switch.power_w
    for tier in range(4):
        if tier == 0:
            count = topo.leaf_switches
        elif tier == 1:
            count = topo.spine_switches
        elif tier == 2:
            count = topo.core_switches
        else:
            count = topo.superspine_switches
        if count:
            price += cents(count * switch_price)
            power += cents(count * switch_power)
    gbps = nic.port_gbps
    cabling = _fabric_cabling(
        parts, topo, nodes, fabric, gbps, switch_cage(switch, gbps), nic_cage(nic), nic.lane_gbps
    )
    for line_price, line_power in cabling[1]:
        price += line_price
        power += line_power
    return price, power


@dataclass(frozen=True)
class StorageSpec:
    """A server's storage / in-band adapters (from the GPU's platform facts)."""

    nic_sku: str = ""
    storage_ports: int = STORAGE_PORTS_PER_SERVER
    inband_ports: int = 0
    converged: bool = True
    """In-band management rides on the storage ports (NVIDIA Enterprise RAs: converged
    storage / in-band, 2 x 200-400G per server on Ethernet leaves), so only the storage ports
    are cabled; the platform's adapters are still bought.  False cables the in-band ports too."""
    published: bool = False
    """The platform's published design names the adapter (``GpuSpec.storage_nic_published``)."""

    @property
    def standing(self) -> str:
        """Where the adapter comes from, as the answer says it."""
        if self.published:
            return "the platform's storage / in-band adapters"
        return "assumed storage / in-band adapters: the platform's published design names none"

    @classmethod
    def for_gpu(cls, gpu: GpuSpec | None) -> StorageSpec:
        if gpu is None:
            return cls()
        return cls(
            nic_sku=gpu.storage_nic_sku,
            storage_ports=gpu.storage_ports_per_server or STORAGE_PORTS_PER_SERVER,
            inband_ports=gpu.inband_ports_per_server,
            published=gpu.storage_nic_published,
        )

    def trimmed(self) -> StorageSpec:
        """What an architect cuts first under a budget: one converged storage / in-band port
        per server on one adapter (single-homed) instead of the platform's dual-homed pair."""
        return replace(self, storage_ports=1, inband_ports=0, converged=True)


@dataclass(frozen=True)
class StoragePlan:
    topo: TopologySize
    switch: Switch
    nic: Nic
    ports_per_server: int
    target_ports: int
    lines: tuple[BomLine, ...]
    adapters_per_server: int = 1
    spec: StorageSpec = StorageSpec()

    @property
    def gbps(self) -> int:
        return self.nic.port_gbps


def storage_plan(
    parts: NetworkParts, *, nodes: int, spec: StorageSpec | None = None
) -> StoragePlan:
    """Storage / in-band network of ``nodes`` servers with their platform's adapters."""
    return _storage_plan(parts, nodes, spec or StorageSpec())


def storage_lines(
    parts: NetworkParts, *, nodes: int, spec: StorageSpec | None = None
) -> list[BomLine]:
    """Storage / in-band network: the platform's adapters, 2:1 oversubscribed leaves that
    keep ports for storage targets and core uplinks.

    Two layouts are priced and the cheaper kept: a leaf in every rack (copper to the
    servers) or shared end-of-row leaves (fewer switches, optical server links).
    """
    return list(storage_plan(parts, nodes=nodes, spec=spec).lines)


def storage_topology(
    parts: NetworkParts, *, nodes: int, spec: StorageSpec | None = None
) -> tuple[TopologySize, Switch]:
    plan = storage_plan(parts, nodes=nodes, spec=spec)
    return plan.topo, plan.switch


@lru_cache(maxsize=512)
def _storage_plan(parts: NetworkParts, nodes: int, spec: StorageSpec) -> StoragePlan:
    nic = _storage_nic(parts, spec.nic_sku)
    best: StoragePlan | None = None
    for switch in _storage_switches(parts, nic):
        plan = _storage_plan_on(parts, nodes, spec, nic, switch)
        if best is None or totals(plan.lines)[0] < totals(best.lines)[0]:
            best = plan
    assert best is not None
    return best


def _storage_plan_on(
    parts: NetworkParts, nodes: int, spec: StorageSpec, nic: Nic, switch: Switch
) -> StoragePlan:
    gbps = nic.port_gbps
    radix = (switch.radix_at(gbps) or 0) - STORAGE_CORE_UPLINKS
    # the platform's adapters are bought; converged designs cable the storage ports only
    cards = max(1, math.ceil((spec.storage_ports + spec.inband_ports) / nic.ports))
    ports = spec.storage_ports + (0 if spec.converged else spec.inband_ports)
    ports = max(ports, cards)  # every adapter keeps a link
    target_ports = math.ceil(nodes * spec.storage_ports / STORAGE_TARGET_RATIO)
    target_nodes = math.ceil(target_ports / ports)
    nic_line = line(nic, nodes * cards, "storage", "storage-nic")
    best: StoragePlan | None = None
    layouts: list[tuple[TopologySize, bool]] = [
        (size_tor_fabric(nodes + target_nodes, ports, radix, STORAGE_OVERSUBSCRIPTION), True)
    ]
    with contextlib.suppress(TopologyError):
        layouts.append(
            (size_topology((nodes + target_nodes) * ports, radix, STORAGE_OVERSUBSCRIPTION), False)
        )
    sw_cage = switch_cage(switch, gbps)
    for topo, tor in layouts:
        lines = [nic_line]
        lines.append(line(switch, topo.total_switches, "storage", "storage-switch"))
        tiers = plan_cabling(topo, servers=nodes + target_nodes, top_of_rack=tor)
        for tier in tiers:
            if tier.tier == "endpoint-leaf":
                server_links = nodes * ports
                split = (
                    (replace(tier, links=server_links), "server-link"),
                    (replace(tier, links=target_ports), "target-link"),
                )
                for part, role in split:
                    kit = choose_link_kit(
                        parts,
                        ETHERNET,
                        gbps,
                        part.length_m,
                        sw_cage,
                        nic_cage(nic),
                        "nic",
                        nic.lane_gbps,
                    )
                    lines.extend(kit_lines(kit, part.links, "storage", role))
            else:
                kit = choose_link_kit(
                    parts, ETHERNET, gbps, tier.length_m, sw_cage, sw_cage, "switch"
                )
                lines.extend(kit_lines(kit, tier.links, "storage", "switch-link"))
        top = topo.core_switches or topo.spine_switches or topo.leaf_switches
        uplink = choose_link_kit(parts, ETHERNET, gbps, SPINE_LINK_M, sw_cage, sw_cage, "switch")
        lines.extend(kit_lines(uplink, top * STORAGE_CORE_UPLINKS, "storage", "core-uplink"))
        plan = StoragePlan(topo, switch, nic, ports, target_ports, tuple(lines), cards, spec)
        if best is None or totals(plan.lines)[0] < totals(best.lines)[0]:
            best = plan
    assert best is not None
    return best


def kit_lines(kit: LinkKit, links: int, network: str, role: str) -> list[BomLine]:
    if links <= 0:
        return []
    return [
        line(item, math.ceil(per_link * links - 1e-9), network, role)
        for item, per_link in kit.parts
    ]


def management_lines(parts: NetworkParts, *, nodes: int, managed_switches: int) -> list[BomLine]:
    """Out-of-band 1 GbE: one port per server BMC and per managed switch; more than one
    out-of-band switch uplinks to an aggregation layer, which is priced too."""
    switch = _management_switch(parts)
    ports_per_switch = switch.radix_at(1) or 48
    ports = nodes * MGMT_PORTS_PER_SERVER + managed_switches
    count = math.ceil(ports / ports_per_switch)
    agg_count = 0
    agg: Switch | None = None
    if count > 1:
        agg = tor_switch(parts, 100)
        usable = (agg.radix_at(100) or 0) - AGGREGATION_RESERVED_PORTS
        if usable <= 0:
            raise BomError(f"{agg.sku} has too few 100G ports for management aggregation")
        agg_count = math.ceil(count * MGMT_UPLINKS_PER_SWITCH / usable)
        ports += agg_count
        count = math.ceil(ports / ports_per_switch)
        agg_count = math.ceil(count * MGMT_UPLINKS_PER_SWITCH / usable)
    copper = _cheapest_cable(parts, kind="dac", gbps=1)
    lines = [
        line(switch, count, "management", "oob-switch"),
        line(copper, ports, "management", "mgmt-link"),
    ]
    if agg is not None and agg_count:
        lines.append(line(agg, agg_count, "management", "aggregation"))
        kit = choose_link_kit(
            parts,
            ETHERNET,
            100,
            ROW_LINK_M,
            switch_cage(agg, 100),
            switch_cage(switch, 100),
            "switch",
        )
        lines.extend(kit_lines(kit, count * MGMT_UPLINKS_PER_SWITCH, "management", "mgmt-uplink"))
    return lines


def _storage_nic(parts: NetworkParts, sku: str = "") -> Nic:
    if sku:
        with contextlib.suppress(KeyError):
            item = parts.find(sku)
            if isinstance(item, Nic):
                return item
    nics = [
        n
        for n in parts.nics
        if n.port_gbps == STORAGE_NIC_GBPS and n.serves(ETHERNET) and not n.integrated
    ]
    if not nics:
        raise BomError(f"no {STORAGE_NIC_GBPS}GbE NIC in the catalog for the storage network")
    return min(nics, key=lambda n: n.unit_price_usd / n.ports)


def tor_switch(parts: NetworkParts, gbps: int) -> Switch:
    tors = [
        s
        for s in parts.switches
        if s.serves(ETHERNET) and s.radix_at(gbps) and s.role != "management"
    ]
    if not tors:
        raise BomError(f"no Ethernet switch with {gbps}G ports in the catalog")
    preferred = [s for s in tors if s.role == "tor"] or tors
    return min(preferred, key=lambda s: s.unit_price_usd / (s.radix_at(gbps) or 1))


def _storage_switches(parts: NetworkParts, nic: Nic) -> list[Switch]:
    """Storage leaves to price: the cheapest (per port, top-of-rack first) Ethernet leaf whose
    cages the storage adapter can reach, and every storage-only leaf (a smaller switch such as
    the SN5400) that reaches it too; the plan keeps whichever bill is cheaper in total, so one
    or two servers do not get a 51.2T switch."""
    gbps = nic.port_gbps
    found: list[Switch] = []
    for sw in _reachable_storage_switches(parts, nic):
        if not found or sw.role == "storage":
            found.append(sw)
    if not found:
        raise BomError(
            f"no Ethernet switch in the catalog takes the {nic.sku} storage adapter "
            f"({gbps}G {nic.form_factor})"
        )
    return found


def _reachable_storage_switches(parts: NetworkParts, nic: Nic) -> list[Switch]:
    """Ethernet leaves whose cages the storage adapter can reach, the first being the
    cheapest per port among top-of-rack switches (else any non-storage-only leaf)."""
    gbps = nic.port_gbps
    tors = [
        s
        for s in parts.switches
        if s.serves(ETHERNET) and s.radix_at(gbps) and s.role != "management" and s.cage_at(gbps)
    ]
    tors.sort(
        key=lambda s: (
            s.role == "storage",
            s.role != "tor",
            s.unit_price_usd / (s.radix_at(gbps) or 1),
        )
    )
    out: list[Switch] = []
    for sw in tors:
        try:
            for length in (2.0, ROW_LINK_M):
                choose_link_kit(
                    parts,
                    ETHERNET,
                    gbps,
                    length,
                    switch_cage(sw, gbps),
                    nic_cage(nic),
                    "nic",
                    nic.lane_gbps,
                )
        except BomError:
            continue
        out.append(sw)
    return out


def _management_switch(parts: NetworkParts) -> Switch:
    mgmt = [s for s in parts.switches if s.role == "management" and s.radix_at(1)]
    if not mgmt:
        raise BomError("no management switch (1G ports) in the catalog")
    return min(mgmt, key=lambda s: s.unit_price_usd)


def _cheapest_cable(parts: NetworkParts, *, kind: str, gbps: int) -> Cable:
    cables = [c for c in parts.cables if c.kind == kind and c.gbps == gbps]
    if not cables:
        raise BomError(f"no {gbps}G {kind} cable in the catalog")
    return min(cables, key=lambda c: c.unit_price_usd)


def network_bom(
    parts: NetworkParts,
    *,
    nodes: int,
    fabric: str | None,
    nic_sku: str | None = None,
    nics_per_node: int = 0,
    switch_model: str | None = None,
    oversubscription: float = 1.0,
    storage: StorageSpec | None = None,
    leaf_spine: bool = False,
    planes: int = 1,
    on_board_nics: Collection[str] = (),
) -> list[BomLine]:
    """The whole BOM of one design (compute fabric, storage, management), e.g. for any row
    of ``options``.  ``fabric=None`` (or no NICs) means no compute fabric.  ``storage`` is
    the platform's storage adapters (``StorageSpec.for_gpu(gpu)``).  ``leaf_spine`` builds
    two tiers where one switch would hold every NIC (the search prices both variants).
    ``on_board_nics``: the NICs the platform's servers come with (``GpuSpec.on_board_nic_skus``),
    priced as the candidates price them (``Nic.as_bought``).

    Raises KeyError for unknown SKUs, :class:`BomError` / ``TopologyError`` when the design
    cannot be built from the catalog.
    """
    lines: list[BomLine] = []
    compute_switches = 0
    if fabric is not None and nic_sku and nics_per_node > 0 and switch_model:
        nic = parts.find(nic_sku)
        switch = parts.find(switch_model)
        if not isinstance(nic, Nic) or not isinstance(switch, Switch):
            raise BomError(f"{nic_sku} is not a NIC or {switch_model} is not a switch")
        nic = nic.as_bought(on_board_nics)
        radix = switch.radix_at(nic.port_gbps)
        if not radix:
            raise BomError(f"{switch_model} has no {nic.port_gbps}G ports")
        rails, links_per_rail = nic.rail_layout(nics_per_node)
        topo = size_compute_fabric(
            nodes * nics_per_node,
            radix,
            oversubscription,
            rails=rails,
            fabric=fabric,
            leaf_spine=leaf_spine,
            planes=planes,
            links_per_rail=links_per_rail,
        )
        compute_switches = topo.total_switches
        lines.extend(
            compute_fabric_lines(
                parts,
                fabric=fabric,
                nic=nic,
                nics_per_node=nics_per_node,
                nodes=nodes,
                switch=switch,
                topo=topo,
            )
        )
    plan = storage_plan(parts, nodes=nodes, spec=storage)
    lines.extend(plan.lines)
    lines.extend(
        management_lines(
            parts, nodes=nodes, managed_switches=compute_switches + plan.topo.total_switches
        )
    )
    return lines


def on_board_nic(item: ItemT, line: Mapping[str, Any]) -> bool:
    """A compute-NIC line a platform ships on its own boards (:meth:`Nic.on_board`: no price,
    :data:`WITH_THE_SERVERS` for a part number), the one line whose price is not the catalog's."""
    return (
        isinstance(item, Nic)
        and line.get("role") == "compute-nic"
        and line.get("part_number") == WITH_THE_SERVERS
    )


def check_bom(
    lines: Iterable[BomLine | Mapping[str, Any]], parts: NetworkParts | None = None
) -> list[str]:
    """Problems that would stop this bill of materials from being built; empty when buildable.

    ``lines`` are :class:`BomLine` objects or their ``to_dict()`` form (a result's ``bom``);
    ``parts`` is the catalog they were priced from (default: the built-in one).  Checked per
    network (docs/MODEL.md, "Bill of materials"):

    * every SKU is in the catalog at the catalog's unit price (a platform's own NICs at none,
      :func:`on_board_nic`) and every extended price is quantity x unit price;
    * every transceiver sits in a cage that exists in that network (a NIC's or a switch's,
      same form factor, same links per cage, same speed, right end) and every DAC/AOC has a
      switch cage on end A and a matching NIC or switch cage on each leg of end B;
    * fiber cords match the medium of a transceiver in the network;
    * the server links that the cables and optics make equal the NIC links, and the switch
      ports they use (server + storage-target + core-uplink + 2 per switch link) fit the
      switches' ports at that speed;
    * the storage network keeps ports for storage targets and core uplinks; a management
      network of more than one out-of-band switch has an aggregation switch and uplinks.
    """
    cat = parts or NetworkParts()
    problems: list[str] = []
    by_net: dict[str, list[tuple[ItemT, int, str]]] = {}
    for i, raw in enumerate(lines):
        ln = raw.to_dict() if isinstance(raw, BomLine) else dict(raw)
        sku = str(ln.get("sku", ""))
        qty = ln.get("quantity", 0)
        net = str(ln.get("network", ""))
        where = f"line {i + 1} ({sku}, {net or '?'})"
        try:
            item = cat.find(sku)
        except KeyError:
            problems.append(f"{where}: SKU not in the catalog")
            continue
        if isinstance(qty, bool) or not isinstance(qty, int) or qty < 0:
            problems.append(f"{where}: quantity {qty!r} is not a whole number >= 0")
            continue
        unit = float(ln.get("unit_price_usd", item.unit_price_usd))
        if unit != item.unit_price_usd and not (on_board_nic(item, ln) and unit == 0):
            problems.append(f"{where}: unit price {unit} is not the catalog's")
        expected = round(qty * unit, 2)
        if abs(float(ln.get("extended_price_usd", 0.0)) - expected) > 0.01:
            problems.append(f"{where}: extended price is not {qty} x {unit}")
        by_net.setdefault(net, []).append((item, qty, str(ln.get("role", "") or "")))
    for net, entries in by_net.items():
        problems.extend(_check_network(net, entries))
    return problems


def _check_network(net: str, entries: list[tuple[ItemT, int, str]]) -> list[str]:
    out: list[str] = []
    nics = [(i, q) for i, q, _ in entries if isinstance(i, Nic)]
    switches = [(i, q, r) for i, q, r in entries if isinstance(i, Switch)]
    nic_cages = {(n.form_factor, n.links_per_port, n.port_gbps) for n, _ in nics}
    switch_cages = {
        (cage, per, speed) for s, _, _ in switches for speed, cage, per in s.cages_by_gbps
    }
    media: set[str] = set()
    link_count: dict[str, float] = {}
    link_speed: dict[str, set[int]] = {}
    for item, qty, role in entries:
        if isinstance(item, Transceiver):
            media.add(item.media)
            key = (item.form_factor, item.ports_per_module, item.gbps)
            in_nic = key in nic_cages and item.end in ("nic", "any")
            if in_nic and item.lane_gbps:
                in_nic = any(
                    nic_cage(n) == key[:2]
                    and n.port_gbps == item.gbps
                    and n.lane_gbps in (0, item.lane_gbps)
                    for n, _ in nics
                )
            in_switch = key in switch_cages and item.end in ("switch", "any")
            if not (in_nic or in_switch):
                out.append(
                    f"{net}: transceiver {item.sku} ({item.ports_per_module} x {item.gbps}G "
                    f"{item.form_factor}, {item.end} end) fits no NIC or switch cage there"
                )
            link_count[role] = link_count.get(role, 0.0) + qty * item.ports_per_module / 2
            link_speed.setdefault(role, set()).add(item.gbps)
        elif isinstance(item, Cable) and item.kind in ("dac", "aoc"):
            if item.form_factor == "rj45":
                link_count[role] = link_count.get(role, 0.0) + qty
                continue
            a_ok = (item.form_factor, item.links, item.gbps) in switch_cages
            leg = (item.end_b, item.links // max(1, item.legs), item.gbps)
            b_ok = leg in switch_cages or leg in nic_cages
            if not (a_ok and b_ok):
                out.append(
                    f"{net}: cable {item.sku} ({item.links} x {item.gbps}G {item.form_factor} "
                    f"to {item.legs} x {item.end_b}) does not match the cages of its NICs and "
                    "switches"
                )
            link_count[role] = link_count.get(role, 0.0) + qty * item.links
            link_speed.setdefault(role, set()).add(item.gbps)
    for item, _, _ in entries:
        if isinstance(item, Cable) and item.kind == "fiber" and item.media not in media:
            out.append(f"{net}: fiber {item.sku} ({item.media}) matches no transceiver there")
    nic_links = sum(n.links * q for n, q in nics)
    cards = sum(q for _, q in nics)
    server_links = link_count.get("server-link", 0.0)
    # the last breakout cable of a tier may leave legs unused (66 links on 4-leg cables: 17)
    spare = max(
        (
            c.legs - 1
            for c, _, role in entries
            if isinstance(c, Cable) and role == "server-link" and c.legs > 1
        ),
        default=0,
    )
    # Adapters with no switch of ours plug into the customer's existing switches (a job of a
    # few servers with no compute fabric): their links are not ours to count.
    ours = bool(switches) or server_links > 0
    if (
        nics
        and ours
        and net != "management"
        and not cards - 0.5 <= server_links <= nic_links + spare + 0.5
    ):
        out.append(
            f"{net}: cables and optics make {server_links:g} server links for {cards} adapters "
            f"with {nic_links} ports (every adapter needs a link, no port two)"
        )
    if switches and net != "management":
        speeds = {n.port_gbps for n, _ in nics} or set().union(*link_speed.values())
        for gbps in speeds:
            capacity = sum((s.radix_at(gbps) or 0) * q for s, q, _ in switches)
            used = (
                link_count.get("server-link", 0.0)
                + link_count.get("target-link", 0.0)
                + link_count.get("core-uplink", 0.0)
                + 2 * link_count.get("switch-link", 0.0)
            )
            if capacity == 0:
                out.append(f"{net}: no switch there has {gbps}G ports")
            elif used > capacity + 0.5:
                out.append(
                    f"{net}: links need {used:g} switch ports at {gbps}G, the switches have "
                    f"{capacity}"
                )
    if net == "storage" and switches:
        if link_count.get("target-link", 0.0) <= 0:
            out.append("storage: no switch ports are kept for storage targets")
        if link_count.get("core-uplink", 0.0) <= 0:
            out.append("storage: the storage leaves have no uplinks to the data-centre core")
    if net == "management":
        oob = sum(q for s, q, r in switches if s.role == "management")
        agg = sum(q for s, q, r in switches if r == "aggregation")
        if oob > 1 and agg == 0:
            out.append(f"management: {oob} out-of-band switches but no aggregation switch")
        if oob > 1 and link_count.get("mgmt-uplink", 0.0) <= 0:
            out.append("management: out-of-band switches have no uplinks to the aggregation")
    if net == "compute" and switches and not nics:
        out.append("compute: switches but no NICs")
    return out


def totals(lines: Iterable[BomLine]) -> tuple[float, float]:
    """(capex in USD, power in W) of some BOM lines."""
    price = 0.0
    power = 0.0
    for item in lines:
        price += item.extended_price_usd
        power += item.power_w
    return price, power


__all__ = [
    "SERVERS_PER_RACK",
    "BomError",
    "BomLine",
    "LinkKit",
    "NetworkParts",
    "StoragePlan",
    "StorageSpec",
    "cabling_items",
    "cards_per_node",
    "check_bom",
    "choose_link_kit",
    "compute_fabric_items",
    "compute_fabric_lines",
    "compute_fabric_totals",
    "kit_lines",
    "line",
    "management_lines",
    "network_bom",
    "storage_lines",
    "storage_plan",
    "storage_topology",
    "tor_switch",
    "totals",
]
