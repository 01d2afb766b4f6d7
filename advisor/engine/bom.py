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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor.engine.catalog.network import (
    CABLES,
    ETHERNET,
    NICS,
    SWITCHES,
    TRANSCEIVERS,
    Cable,
    Nic,
    Switch,
    Transceiver,
)
from advisor.engine.topology import (
    SERVERS_PER_RACK,
    TierLinks,
    TopologyError,
    TopologySize,
    plan_cabling,
    size_topology,
    size_tor_fabric,
)

# Storage / front-end and management network sizing (docs/MODEL.md, "Bill of materials").
STORAGE_NIC_GBPS = 100
"""Per-port speed of the storage/in-band NIC (DGX H100: 2x dual-port 200G BlueField-3;
we size a cost-conscious dual-port 100GbE card, editable through the catalog)."""
STORAGE_PORTS_PER_SERVER = 2
"""Two ports per server for redundancy (DGX SuperPOD RA: dual-homed storage fabric)."""
STORAGE_OVERSUBSCRIPTION = 2.0
"""Storage and front-end networks are usually oversubscribed (DOMAIN.md §3)."""
MGMT_PORTS_PER_SERVER = 1
"""One 1 GbE BMC port per server (out-of-band management)."""
MGMT_UPLINKS_PER_SWITCH = 2
"""Each management switch uplinks twice at 100G to the storage/front-end spine layer."""

ItemT = Nic | Switch | Transceiver | Cable


class BomError(ValueError):
    """The catalog lacks a part needed for this design (e.g. no optic at that speed)."""


@dataclass(frozen=True)
class BomLine:
    sku: str
    description: str
    category: str
    quantity: int
    unit_price_usd: float
    extended_price_usd: float
    source: str
    network: str
    power_w: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "sku": self.sku,
            "description": self.description,
            "category": self.category,
            "quantity": self.quantity,
            "unit_price_usd": self.unit_price_usd,
            "extended_price_usd": self.extended_price_usd,
            "source": self.source,
            "network": self.network,
            "power_w": self.power_w,
        }


def line(item: ItemT, quantity: int, network: str, description: str | None = None) -> BomLine:
    return BomLine(
        sku=item.sku,
        description=description or item.description,
        category=item.category,
        quantity=quantity,
        unit_price_usd=item.unit_price_usd,
        extended_price_usd=round(quantity * item.unit_price_usd, 2),
        source=item.source,
        network=network,
        power_w=round(quantity * item.power_w, 2),
    )


@dataclass(frozen=True, eq=False)
class NetworkParts:
    """The network half of the catalog, as the BOM needs it (hashed by identity)."""

    nics: tuple[Nic, ...] = NICS
    switches: tuple[Switch, ...] = SWITCHES
    transceivers: tuple[Transceiver, ...] = TRANSCEIVERS
    cables: tuple[Cable, ...] = CABLES

    @classmethod
    def from_catalog(cls, catalog: object) -> NetworkParts:
        """Take nics/switches/transceivers/cables from any catalog object that has them."""
        return cls(
            nics=tuple(getattr(catalog, "nics", NICS)),
            switches=tuple(getattr(catalog, "switches", SWITCHES)),
            transceivers=tuple(getattr(catalog, "transceivers", TRANSCEIVERS)),
            cables=tuple(getattr(catalog, "cables", CABLES)),
        )

    def find(self, sku: str) -> ItemT:
        for group in (self.nics, self.switches, self.transceivers, self.cables):
            for item in group:
                if item.sku == sku:
                    return item
        raise KeyError(sku)


# ------------------------------------------------------------------------- link media


@dataclass(frozen=True)
class LinkKit:
    """Parts per link of one tier; quantities are per link (0.5 = a twin-port module)."""

    parts: tuple[tuple[ItemT, float], ...]
    price_per_link_usd: float
    medium: str


@lru_cache(maxsize=2048)
def choose_link_kit(
    parts: NetworkParts, fabric: str, gbps: int, length_m: float, switch_ends: int
) -> LinkKit:
    """Cheapest way to build one link: DAC if it reaches, else AOC, else two optics + fiber.

    ``switch_ends`` is 1 for NIC-to-switch links and 2 for switch-to-switch links; switch
    ends may use twin-port modules (one module serves two links).
    """
    options: list[LinkKit] = []
    for cable in parts.cables:
        if cable.gbps != gbps or not cable.serves(fabric) or cable.reach_m < length_m:
            continue
        if cable.kind in ("dac", "aoc"):
            options.append(LinkKit(((cable, 1.0),), cable.unit_price_usd, cable.kind))
    nic_end = _cheapest_module(parts, fabric, gbps, length_m, ("nic", "any"))
    switch_end = _cheapest_module(parts, fabric, gbps, length_m, ("switch", "any"))
    if switch_end is not None and (switch_ends == 2 or nic_end is not None):
        ends: list[tuple[Transceiver, float]] = []
        if switch_ends == 1 and nic_end is not None:
            ends.append((nic_end, 1.0))
        ends.append((switch_end, switch_ends / switch_end.ports_per_module))
        media = {t.media for t, _ in ends}
        fiber = _cheapest_fiber(parts, fabric, length_m, media)
        if fiber is not None:
            kit: list[tuple[ItemT, float]] = [*ends, (fiber, 1.0)]
            price = sum(item.unit_price_usd * qty for item, qty in kit)
            options.append(LinkKit(tuple(kit), price, "optical"))
    if not options:
        raise BomError(f"no cable or optic in the catalog for {gbps}G {fabric} at {length_m:g} m")
    return min(options, key=lambda k: (k.price_per_link_usd, k.medium))


def _cheapest_module(
    parts: NetworkParts, fabric: str, gbps: int, length_m: float, ends: tuple[str, ...]
) -> Transceiver | None:
    best: Transceiver | None = None
    for t in parts.transceivers:
        if t.gbps != gbps or not t.serves(fabric) or t.reach_m < length_m or t.end not in ends:
            continue
        if best is None or _per_port(t) < _per_port(best):
            best = t
    return best


def _per_port(t: Transceiver) -> float:
    return t.unit_price_usd / t.ports_per_module


def _cheapest_fiber(
    parts: NetworkParts, fabric: str, length_m: float, media: set[str]
) -> Cable | None:
    if len(media) != 1:
        return None
    (medium,) = media
    fibers = [
        c
        for c in parts.cables
        if c.kind == "fiber" and c.media == medium and c.reach_m >= length_m and c.serves(fabric)
    ]
    return min(fibers, key=lambda c: c.unit_price_usd) if fibers else None


def cabling_items(
    parts: NetworkParts, fabric: str, gbps: int, tiers: Sequence[TierLinks]
) -> list[tuple[ItemT, int]]:
    """Cables and transceivers of every tier, merged per SKU: (item, quantity)."""
    quantities: dict[str, float] = {}
    items: dict[str, ItemT] = {}
    for tier in tiers:
        if tier.links == 0:
            continue
        switch_ends = 1 if tier.tier == "endpoint-leaf" else 2
        kit = choose_link_kit(parts, fabric, gbps, tier.length_m, switch_ends)
        for item, per_link in kit.parts:
            items[item.sku] = item
            quantities[item.sku] = quantities.get(item.sku, 0.0) + per_link * tier.links
    return [
        (items[sku], math.ceil(qty - 1e-9))
        for sku, qty in sorted(quantities.items(), key=lambda kv: items[kv[0]].category)
    ]


def cabling_lines(
    parts: NetworkParts,
    fabric: str,
    gbps: int,
    tiers: Sequence[TierLinks],
    network: str,
) -> list[BomLine]:
    """Cables and transceivers of every tier as BOM lines."""
    return [line(item, qty, network) for item, qty in cabling_items(parts, fabric, gbps, tiers)]


# ---------------------------------------------------------------------------- networks


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
    """(item, quantity, role) of the GPU compute fabric: NICs, switches per tier, cabling."""
    out: list[tuple[ItemT, int, str]] = [(nic, nodes * nics_per_node, "compute")]
    for role, count in (
        ("leaf", topo.leaf_switches),
        ("spine", topo.spine_switches),
        ("core", topo.core_switches),
        ("super-spine", topo.superspine_switches),
    ):
        if count:
            out.append((switch, count, role))
    out.extend(
        (item, qty, "") for item, qty in _fabric_cabling(parts, topo, nodes, fabric, nic.port_gbps)
    )
    return out


@lru_cache(maxsize=4096)
def _fabric_cabling(
    parts: NetworkParts, topo: TopologySize, nodes: int, fabric: str, gbps: int
) -> tuple[tuple[ItemT, int], ...]:
    """Cabling of a compute fabric; cached because many candidates share a topology."""
    tiers = plan_cabling(topo, servers=nodes)
    return tuple(cabling_items(parts, fabric, gbps, tiers))


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
    return [
        line(item, qty, "compute", f"{item.description} ({role})" if role else None)
        for item, qty, role in items
    ]


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
    """(capex USD, power W) of the compute fabric; equals :func:`totals` of its lines."""
    items = compute_fabric_items(
        parts,
        fabric=fabric,
        nic=nic,
        nics_per_node=nics_per_node,
        nodes=nodes,
        switch=switch,
        topo=topo,
    )
    price = 0.0
    power = 0.0
    for item, qty, _ in items:
        price += round(qty * item.unit_price_usd, 2)
        power += round(qty * item.power_w, 2)
    return price, power


def storage_lines(parts: NetworkParts, *, nodes: int) -> list[BomLine]:
    """Storage / in-band front-end network: dual-port 100GbE per server, 2:1 oversubscribed.

    Two layouts are priced and the cheaper kept: a leaf in every rack (copper to the
    servers) or shared end-of-row leaves (fewer switches, optical server links).
    """
    return list(_storage_plan(parts, nodes)[2])


def storage_topology(parts: NetworkParts, *, nodes: int) -> tuple[TopologySize, Switch]:
    topo, switch, _ = _storage_plan(parts, nodes)
    return topo, switch


@lru_cache(maxsize=256)
def _storage_plan(
    parts: NetworkParts, nodes: int
) -> tuple[TopologySize, Switch, tuple[BomLine, ...]]:
    nic = _storage_nic(parts)
    switch = _tor_switch(parts, STORAGE_NIC_GBPS)
    radix = switch.radix_at(STORAGE_NIC_GBPS) or 0
    ports = STORAGE_PORTS_PER_SERVER
    cards = nodes * math.ceil(ports / nic.ports)
    nic_line = line(nic, cards, "storage", f"{nic.description} (storage / in-band)")
    best: tuple[TopologySize, Switch, tuple[BomLine, ...]] | None = None
    layouts: list[tuple[TopologySize, bool]] = [
        (size_tor_fabric(nodes, ports, radix, STORAGE_OVERSUBSCRIPTION), True)
    ]
    with contextlib.suppress(TopologyError):
        layouts.append((size_topology(nodes * ports, radix, STORAGE_OVERSUBSCRIPTION), False))
    for topo, tor in layouts:
        lines = [nic_line]
        lines.append(
            line(switch, topo.total_switches, "storage", f"{switch.description} (storage)")
        )
        tiers = plan_cabling(topo, servers=nodes, top_of_rack=tor)
        lines.extend(cabling_lines(parts, ETHERNET, STORAGE_NIC_GBPS, tiers, "storage"))
        if best is None or totals(lines)[0] < totals(best[2])[0]:
            best = (topo, switch, tuple(lines))
    assert best is not None
    return best


def management_lines(parts: NetworkParts, *, nodes: int, managed_switches: int) -> list[BomLine]:
    """Out-of-band 1 GbE: one port per server BMC and per managed switch."""
    switch = _management_switch(parts)
    ports_per_switch = switch.radix_at(1) or 48
    ports = nodes * MGMT_PORTS_PER_SERVER + managed_switches
    count = math.ceil(ports / ports_per_switch)
    copper = _cheapest_cable(parts, kind="dac", gbps=1)
    lines = [
        line(switch, count, "management", f"{switch.description} (out-of-band)"),
        line(copper, ports, "management"),
    ]
    if count > 1:
        uplink = choose_link_kit(parts, ETHERNET, 100, 30.0, 1)
        for item, per_link in uplink.parts:
            qty = math.ceil(per_link * count * MGMT_UPLINKS_PER_SWITCH - 1e-9)
            lines.append(line(item, qty, "management", f"{item.description} (mgmt uplink)"))
    return lines


def _storage_nic(parts: NetworkParts) -> Nic:
    nics = [n for n in parts.nics if n.port_gbps == STORAGE_NIC_GBPS and n.serves(ETHERNET)]
    if not nics:
        raise BomError(f"no {STORAGE_NIC_GBPS}GbE NIC in the catalog for the storage network")
    return min(nics, key=lambda n: n.unit_price_usd / n.ports)


def _tor_switch(parts: NetworkParts, gbps: int) -> Switch:
    tors = [s for s in parts.switches if s.serves(ETHERNET) and s.radix_at(gbps)]
    if not tors:
        raise BomError(f"no Ethernet switch with {gbps}G ports in the catalog")
    preferred = [s for s in tors if s.role == "tor"] or tors
    return min(preferred, key=lambda s: s.unit_price_usd / (s.radix_at(gbps) or 1))


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
) -> list[BomLine]:
    """The whole BOM of one design (compute fabric, storage, management), e.g. for any row
    of ``options``.  ``fabric=None`` (or no NICs) means no compute fabric.

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
        radix = switch.radix_at(nic.port_gbps)
        if not radix:
            raise BomError(f"{switch_model} has no {nic.port_gbps}G ports")
        topo = size_topology(nodes * nics_per_node, radix, oversubscription, rails=nics_per_node)
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
    lines.extend(storage_lines(parts, nodes=nodes))
    ns_topo, _ = storage_topology(parts, nodes=nodes)
    lines.extend(
        management_lines(
            parts, nodes=nodes, managed_switches=compute_switches + ns_topo.total_switches
        )
    )
    return lines


def check_bom(
    lines: Iterable[BomLine | Mapping[str, Any]], parts: NetworkParts | None = None
) -> list[str]:
    """Problems that would stop this bill of materials from being built; empty when buildable.

    ``lines`` are :class:`BomLine` objects or their ``to_dict()`` form (a result's ``bom``).
    Every SKU must be in the catalog (``parts``, default: the built-in one) and every
    extended price must be quantity x unit price.
    """
    cat = parts or NetworkParts()
    problems: list[str] = []
    for i, raw in enumerate(lines):
        ln = raw.to_dict() if isinstance(raw, BomLine) else dict(raw)
        sku = str(ln.get("sku", ""))
        qty = ln.get("quantity", 0)
        where = f"line {i + 1} ({sku}, {ln.get('network', '?')})"
        try:
            item = cat.find(sku)
        except KeyError:
            problems.append(f"{where}: SKU not in the catalog")
            continue
        if not isinstance(qty, int) or qty < 0:
            problems.append(f"{where}: quantity {qty!r} is not a whole number >= 0")
            continue
        expected = round(qty * item.unit_price_usd, 2)
        if abs(float(ln.get("extended_price_usd", 0.0)) - expected) > 0.01:
            problems.append(f"{where}: extended price is not {qty} x {item.unit_price_usd}")
    return problems


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
    "cabling_items",
    "cabling_lines",
    "check_bom",
    "choose_link_kit",
    "compute_fabric_items",
    "compute_fabric_lines",
    "compute_fabric_totals",
    "line",
    "management_lines",
    "network_bom",
    "storage_lines",
    "storage_topology",
    "totals",
]
