"""Switch-fabric sizing: single switch, leaf-spine, three-tier fat tree, four-tier super-spine.

Sizing follows Al-Fares et al., "A Scalable, Commodity Data Center Network Architecture"
(SIGCOMM'08) and the NVIDIA DGX SuperPOD reference architectures:

* radix-k switches, 1:1 -> a leaf uses k/2 ports down and k/2 up;
  two tiers serve up to k^2/2 endpoints, three tiers up to k^3/4, four tiers up to k^4/8
  (a k-ary n-tree, Petrini & Vanneschi 1997: every tier below the top uses k/2 ports down and
  k/2 up, the top tier all k down; the fourth tier is the "super-spine" / aggregation layer
  that joins three-tier pods, as in Meta's 24k-GPU clusters, Gangidi et al. SIGCOMM'24);
* r:1 oversubscription at the leaf -> d = floor(k*r/(r+1)) ports down, k-d up;
* spine (and core) switches are never oversubscribed;
* rail-optimized layout: NIC i of every server lands on leaf group i (one rail per NIC),
  so same-rail traffic crosses a single switch.

Link counts are physical cables: one per endpoint on the first tier, one per used leaf
uplink on the second, one per spine uplink on the third, one per core uplink on the fourth.
Beyond four tiers a fabric is refused (:class:`TopologyError`, saying how many leaves and
endpoints the largest four-tier fabric of that radix holds).  Which medium each tier uses
(copper inside a rack, optics beyond) is decided by :func:`plan_cabling`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any, Final

from advisor.engine.facts.vocabulary import SINGLE_SWITCH, TOPOLOGY_KIND_BY_TIERS

# Layout constants (sources in docs/MODEL.md, section "Topology").
SERVERS_PER_RACK: Final = 4
"""HGX/DGX-class 8-GPU servers per rack (~40 kW racks; NVIDIA DGX H100 SuperPOD RA)."""
DAC_MAX_REACH_M: Final = 3.0
"""Passive copper (DAC) reach at 100-400 Gb/s per lane group (IEEE 802.3ck / vendor specs)."""
IN_RACK_LINK_M: Final = 2.0
"""Typical server-to-top-of-rack cable length."""
ROW_LINK_M: Final = 30.0
"""Typical server-to-leaf length when leaves sit in a row's network rack (rail-optimized)."""
SPINE_LINK_M: Final = 50.0
"""Leaf-to-spine / spine-to-core length budget: SuperPOD RA places spines centrally so
multimode SR optics (50 m on OM4) reach; longer halls need single-mode DR optics."""
SUPERSPINE_LINK_M = SPINE_LINK_M
"""Core-to-super-spine length budget: super-spines placed centrally like spines (SR optics).
A fabric whose pods sit in other halls needs single-mode DR optics (500 m) on this tier,
which the BOM does not price yet."""

_EPS: Final = 1e-9
MAX_TIERS: Final = 4
"""Deepest fabric sized: leaf, spine, core and super-spine."""


class TopologyError(ValueError):
    """The requested endpoints do not fit four tiers of this switch radix."""


@dataclass(frozen=True)
class TopologySize:
    """Switch and link counts of a folded-Clos fabric.

    ``tiers`` is 1 (one switch), 2 (leaf-spine), 3 (leaf-spine-core fat tree) or 4
    (leaf-spine-core-super-spine).
    ``oversubscription`` is the requested r of r:1 at the leaf;
    ``achieved_oversubscription`` is down/up ports of a full leaf after rounding to ports.
    """

    endpoints: int
    radix: int
    oversubscription: float
    rails: int
    tiers: int
    kind: str
    leaf_switches: int
    spine_switches: int
    core_switches: int
    endpoint_leaf_links: int
    leaf_spine_links: int
    spine_core_links: int
    leaf_down_ports: int
    leaf_up_ports: int
    achieved_oversubscription: float
    max_endpoints: int
    rail_optimized: bool
    superspine_switches: int = 0
    core_superspine_links: int = 0
    planes: int = 1
    """Independent fabrics the endpoints are split over (1: one fabric).  A multi-plane design
    gives each rail (or each link of a split NIC) its own fat tree, so a plane holds
    ``endpoints / planes`` ports and stays shallower (DeepSeek-V3 ISCA'25 multi-plane fat tree;
    Alibaba HPN dual-plane); counts above are totals over all planes."""
    leaf_uplinks: int = 0
    """Uplinks a full leaf uses (its ``leaf_up_ports`` at 1:1 on a full leaf)."""
    leaf_downlinks: int = 0
    """Endpoints on a full leaf (the largest leaf load)."""
    links_per_leaf_spine: int = 0
    """Links between a full leaf and each spine of its plane (two tiers: every leaf reaches
    every spine with the same number of links, so each leaf's uplinks divide evenly)."""
    links_per_rail: int = 1
    """Links each server puts on its rail's leaf, always together (1 for one NIC per rail;
    8 for a Gaudi 3 ply: two whole 4 x 200G OSFPs per server, Intel Gaudi network
    configuration).  ``rails`` counts rails, so a server has ``rails x links_per_rail`` links."""
    _value_hash: int = field(default=-1, init=False, repr=False, compare=False)
    """The value hash, kept once computed (-1: not yet): a fabric's size keys its cabling
    (``bom._fabric_cabling``, asked for every candidate priced)."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        endpoints: int,
        radix: int,
        oversubscription: float,
        rails: int,
        tiers: int,
        kind: str,
        leaf_switches: int,
        spine_switches: int,
        core_switches: int,
        endpoint_leaf_links: int,
        leaf_spine_links: int,
        spine_core_links: int,
        leaf_down_ports: int,
        leaf_up_ports: int,
        achieved_oversubscription: float,
        max_endpoints: int,
        rail_optimized: bool,
        superspine_switches: int = 0,
        core_superspine_links: int = 0,
        planes: int = 1,
        leaf_uplinks: int = 0,
        leaf_downlinks: int = 0,
        links_per_leaf_spine: int = 0,
        links_per_rail: int = 1,
    ) -> None:
        object.__setattr__(self, "endpoints", endpoints)
        object.__setattr__(self, "radix", radix)
        object.__setattr__(self, "oversubscription", oversubscription)
        object.__setattr__(self, "rails", rails)
        object.__setattr__(self, "tiers", tiers)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "leaf_switches", leaf_switches)
        object.__setattr__(self, "spine_switches", spine_switches)
        object.__setattr__(self, "core_switches", core_switches)
        object.__setattr__(self, "endpoint_leaf_links", endpoint_leaf_links)
        object.__setattr__(self, "leaf_spine_links", leaf_spine_links)
        object.__setattr__(self, "spine_core_links", spine_core_links)
        object.__setattr__(self, "leaf_down_ports", leaf_down_ports)
        object.__setattr__(self, "leaf_up_ports", leaf_up_ports)
        object.__setattr__(self, "achieved_oversubscription", achieved_oversubscription)
        object.__setattr__(self, "max_endpoints", max_endpoints)
        object.__setattr__(self, "rail_optimized", rail_optimized)
        object.__setattr__(self, "superspine_switches", superspine_switches)
        object.__setattr__(self, "core_superspine_links", core_superspine_links)
        object.__setattr__(self, "planes", planes)
        object.__setattr__(self, "leaf_uplinks", leaf_uplinks)
        object.__setattr__(self, "leaf_downlinks", leaf_downlinks)
        object.__setattr__(self, "links_per_leaf_spine", links_per_leaf_spine)
        object.__setattr__(self, "links_per_rail", links_per_rail)
        object.__setattr__(self, "_value_hash", -1)

    def _value(self) -> tuple[object, ...]:
        """The compared fields' values, in the fields' order (as ``@dataclass`` reads them)."""
        return (
            self.endpoints,
            self.radix,
            self.oversubscription,
            self.rails,
            self.tiers,
            self.kind,
            self.leaf_switches,
            self.spine_switches,
            self.core_switches,
            self.endpoint_leaf_links,
            self.leaf_spine_links,
            self.spine_core_links,
            self.leaf_down_ports,
            self.leaf_up_ports,
            self.achieved_oversubscription,
            self.max_endpoints,
            self.rail_optimized,
            self.superspine_switches,
            self.core_superspine_links,
            self.planes,
            self.leaf_uplinks,
            self.leaf_downlinks,
            self.links_per_leaf_spine,
            self.links_per_rail,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, TopologySize)
        return self._value() == other._value()

    def __hash__(self) -> int:
        kept = self._value_hash
        if kept == -1:
            kept = hash(self._value())
            object.__setattr__(self, "_value_hash", kept)
        return kept

    @property
    def total_switches(self) -> int:
        return (
            self.leaf_switches + self.spine_switches + self.core_switches + self.superspine_switches
        )

    @property
    def leaf_oversubscription(self) -> float:
        """r of r:1 at the leaves as built: a single switch has no uplinks to oversubscribe,
        whatever ratio was asked of it."""
        return self.oversubscription if self.tiers > 1 else 1.0

    @property
    def switch_links(self) -> int:
        """Links between switches (both ends on a switch port)."""
        return self.leaf_spine_links + self.spine_core_links + self.core_superspine_links

    @property
    def servers(self) -> int:
        return math.ceil(self.endpoints / max(1, self.rails * self.links_per_rail))

    @property
    def leaf_servers(self) -> int:
        """Servers under one full leaf of a rail (one port each, or one ply's links each)."""
        return max(1, self.leaf_down_ports // max(1, self.links_per_rail))

    def placement_blocks(self) -> tuple[int, ...]:
        """Servers under one leaf (rail group), one pod, one super-pod: the boundaries a
        message can cross, innermost first (empty for a single switch).

        A leaf serves ``leaf_down_ports`` servers (one port per server per rail); a pod is
        k/2 leaves, i.e. (k/2)/rails scalable units of a rail-optimized fabric; a super-pod
        (four tiers) is k/2 pods.
        """
        if self.tiers <= 1:
            return ()
        half = self.radix // 2
        leaf = self.leaf_servers
        blocks = [leaf]
        if self.tiers >= 3:
            blocks.append(leaf * max(1, half // max(1, self.rails // max(1, self.planes))))
        if self.tiers >= 4:
            blocks.append(blocks[-1] * half)
        return tuple(blocks)

    @property
    def switch_ports_used(self) -> int:
        return self.endpoint_leaf_links + 2 * self.switch_links

    @property
    def hops_worst_case(self) -> int:
        """Switches crossed by the longest path (1, 3, 5 or 7)."""
        return 2 * self.tiers - 1

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        del d["_value_hash"]  # kept, not part of the value
        d["total_switches"] = self.total_switches
        d["switch_ports_used"] = self.switch_ports_used
        d["hops_worst_case"] = self.hops_worst_case
        return d


def leaf_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """(down, up) ports of a leaf for r:1 oversubscription: d = floor(k*r/(r+1))."""
    _check(radix, oversubscription)
    if oversubscription <= 1.0 + _EPS:
        down = radix // 2
    else:
        down = math.floor(radix * oversubscription / (oversubscription + 1.0) + _EPS)
    down = max(1, min(radix - 1, down))
    return down, radix - down


def max_endpoints(radix: int, tiers: int, oversubscription: float = 1.0) -> int:
    """Largest endpoint count that ``tiers`` tiers of radix-``radix`` switches serve.

    1 tier: k; t >= 2 tiers: d x max_leaves(t) = d * k * (k/2)^(t-2)
    (k^2/2, k^3/4, k^4/8 at 1:1).
    """
    down, _ = leaf_ports(radix, oversubscription)
    if tiers == 1:
        return radix
    if 2 <= tiers <= MAX_TIERS:
        return down * max_leaves(radix, tiers)
    raise ValueError(f"tiers must be 1 to {MAX_TIERS}")


def max_leaves(radix: int, tiers: int) -> int:
    """Leaves ``tiers`` tiers of radix-k switches connect: k (two tiers), then x k/2 per tier."""
    if tiers < 2:
        return 1
    leaves = radix
    for _ in range(tiers - 2):
        leaves *= radix // 2
    return leaves


def size_topology(
    endpoints: int,
    radix: int,
    oversubscription: float = 1.0,
    *,
    rails: int = 1,
    leaf_spine: bool = False,
    planes: int = 1,
    min_spines: int = 1,
    links_per_rail: int = 1,
) -> TopologySize:
    """Size the smallest folded-Clos fabric that connects ``endpoints`` NIC ports.

    ``radix`` is the switch port count at the fabric's link speed (e.g. 64 for a
    Quantum-2 at 400G).  ``rails`` > 1 asks for a rail-optimized layout: endpoints are
    ``rails`` NICs on each of ceil(endpoints/rails) servers and every leaf serves one rail.
    ``leaf_spine`` builds a two-tier leaf/spine even where one switch would hold every
    endpoint (field practice past a few servers: no single point of failure, room to grow).
    ``planes`` > 1 splits the rails over that many independent fabrics (it must divide
    ``rails`` and ``endpoints``); ``min_spines`` is the fewest spines a two-tier fabric keeps
    (per plane).  Two-tier spines are chosen so every leaf has the same number of links to
    every spine (:func:`even_spines`).  ``links_per_rail`` > 1 puts that many links of each
    server on its rail's leaf together (a Gaudi 3 ply: 8 x 200G in two whole OSFPs), so a
    leaf serves ``down // links_per_rail`` servers and no OSFP is split over leaves.
    Raises :class:`TopologyError` beyond four tiers.  Results are cached.
    """
    if isinstance(endpoints, bool) or not isinstance(endpoints, int) or endpoints < 1:
        raise ValueError("endpoints must be a positive integer")
    if rails < 1:
        raise ValueError("rails must be a positive integer")
    if planes < 1 or rails % planes or endpoints % planes:
        raise ValueError("planes must divide rails and endpoints")
    if links_per_rail < 1 or endpoints % links_per_rail:
        raise ValueError("links_per_rail must be a positive divisor of endpoints")
    _check(radix, oversubscription)
    if links_per_rail > 1 and leaf_ports(radix, oversubscription)[0] < links_per_rail:
        raise TopologyError(
            f"a leaf of radix {radix} at {oversubscription:g}:1 has fewer ports down than the "
            f"{links_per_rail} links a server puts on one rail leaf"
        )
    return _size_cached(
        endpoints,
        radix,
        float(oversubscription),
        rails,
        leaf_spine,
        planes,
        max(1, min_spines),
        links_per_rail,
    )


@lru_cache(maxsize=4096)
def _size_cached(
    endpoints: int,
    radix: int,
    oversubscription: float,
    rails: int,
    leaf_spine: bool = False,
    planes: int = 1,
    min_spines: int = 1,
    links_per_rail: int = 1,
) -> TopologySize:
    if planes > 1:
        one = _size_cached(
            endpoints // planes,
            radix,
            oversubscription,
            rails // planes,
            leaf_spine,
            1,
            min_spines,
            links_per_rail,
        )
        return replace(
            one,
            endpoints=endpoints,
            rails=rails,
            leaf_switches=one.leaf_switches * planes,
            spine_switches=one.spine_switches * planes,
            core_switches=one.core_switches * planes,
            superspine_switches=one.superspine_switches * planes,
            endpoint_leaf_links=one.endpoint_leaf_links * planes,
            leaf_spine_links=one.leaf_spine_links * planes,
            spine_core_links=one.spine_core_links * planes,
            core_superspine_links=one.core_superspine_links * planes,
            max_endpoints=one.max_endpoints * planes,
            rail_optimized=rails > 1,
            planes=planes,
        )
    down, _ = leaf_ports(radix, oversubscription)
    rails = min(rails, endpoints // links_per_rail)
    loads = _leaf_runs(endpoints, rails, down, links_per_rail)
    if leaf_spine and loads == ((endpoints, 1),):
        loads = _two_leaves(endpoints, rails, links_per_rail)
    sized = _size_from_loads(
        endpoints,
        radix,
        oversubscription,
        rails=rails,
        rail_optimized=rails > 1,
        loads=loads,
        single_switch=endpoints <= radix and not leaf_spine,
        min_spines=min_spines,
    )
    return replace(sized, links_per_rail=links_per_rail) if links_per_rail > 1 else sized


def size_tor_fabric(
    servers: int,
    ports_per_server: int,
    radix: int,
    oversubscription: float = 1.0,
    *,
    servers_per_rack: int = SERVERS_PER_RACK,
) -> TopologySize:
    """Size a top-of-rack network (storage, front-end): one or more leaves in every rack.

    Each rack's ``servers_per_rack * ports_per_server`` ports land on that rack's own
    leaves (so server links are in-rack copper); leaves uplink to spines as in
    :func:`size_topology`.  A single rack whose ports fit one switch needs no spine.
    """
    if servers < 1 or ports_per_server < 1 or servers_per_rack < 1:
        raise ValueError("servers, ports_per_server and servers_per_rack must be positive")
    _check(radix, oversubscription)
    return _size_tor_cached(
        servers, ports_per_server, radix, float(oversubscription), servers_per_rack
    )


@lru_cache(maxsize=1024)
def _size_tor_cached(
    servers: int, ports_per_server: int, radix: int, oversubscription: float, servers_per_rack: int
) -> TopologySize:
    endpoints = servers * ports_per_server
    down, _ = leaf_ports(radix, oversubscription)

    def rack(rack_servers: int) -> list[int]:
        """A rack's leaves: its ports in leaves of ``down`` ports, the rest on one more."""
        loads: list[int] = []
        rack_ports = rack_servers * ports_per_server
        while rack_ports > 0:
            load = min(down, rack_ports)
            loads.append(load)
            rack_ports -= load
        return loads

    # every full rack's leaves are alike: runs of racks, not a leaf at a time
    full_racks, rest = divmod(servers, servers_per_rack)
    full = rack(servers_per_rack)
    runs: list[tuple[int, int]] = []
    if full_racks:
        if len(set(full)) == 1:
            _add_run(runs, full[0], len(full) * full_racks)
        else:
            for load, leaves in _runs(full * full_racks):
                _add_run(runs, load, leaves)
    for load in rack(rest):
        _add_run(runs, load, 1)
    return _size_from_loads(
        endpoints,
        radix,
        oversubscription,
        rails=1,
        rail_optimized=False,
        loads=tuple(runs),
        single_switch=servers <= servers_per_rack and endpoints <= radix,
    )


def _size_from_loads(
    endpoints: int,
    radix: int,
    oversubscription: float,
    *,
    rails: int,
    rail_optimized: bool,
    loads: Runs,
    single_switch: bool,
    min_spines: int = 1,
) -> TopologySize:
    """The fabric of leaves carrying ``loads`` endpoints each (in order, as runs)."""
    down, up = leaf_ports(radix, oversubscription)
    achieved = down / up

    if single_switch:
        return TopologySize(
            endpoints=endpoints,
            radix=radix,
            oversubscription=oversubscription,
            rails=rails,
            tiers=1,
            kind=SINGLE_SWITCH,
            leaf_switches=1,
            spine_switches=0,
            core_switches=0,
            endpoint_leaf_links=endpoints,
            leaf_spine_links=0,
            spine_core_links=0,
            leaf_down_ports=radix,
            leaf_up_ports=0,
            achieved_oversubscription=1.0,
            max_endpoints=radix,
            rail_optimized=False,  # one switch: every NIC is one hop from every other
            leaf_downlinks=endpoints,
        )

    leaves = sum(n for _, n in loads)
    # uplinks per leaf: leaves of one load need the same (a 100,000-GPU fabric has tens of
    # thousands of leaves and a handful of distinct loads, a few runs)
    per_load = {load: min(up, math.ceil(load / oversubscription - _EPS)) for load, _ in loads}
    needed = _runs_mapped(loads, per_load)
    uplinks = sum(u * n for u, n in needed)
    top = max(u for u, _ in needed)
    half = radix // 2
    tiers, spines_even, pods = _tiers_by_ports(needed, up, radix, min_spines)
    if not tiers:
        limit_leaves = max_leaves(radix, MAX_TIERS)
        full_endpoints = max_endpoints(radix, MAX_TIERS, oversubscription)
        raise TopologyError(
            f"{endpoints:,} endpoints need {leaves:,} leaf switches (at most {down} ports down "
            f"each at {oversubscription:g}:1), but four tiers of radix-{radix} switches connect "
            f"at most {limit_leaves:,} leaves ({full_endpoints:,} endpoints on full leaves); use "
            "a higher-radix switch or split the cluster"
        )
    full_leaf_up = top
    if tiers == 2 and spines_even is not None:
        # every leaf reaches every spine with ceil(u/S) links: its uplinks divide evenly
        spines = spines_even
        per_need = {u: math.ceil(u / spines) for u, _ in needed}
        uplinks = sum(per_need[u] * n for u, n in needed) * spines
        pair_links = per_need[top]  # a full leaf
        full_leaf_up = pair_links * spines
    elif tiers == 3:
        # pods of k/2 leaves, each with its own spines (k/2 ports down, k/2 up), every leaf
        # spread evenly over its pod's spines; the cores join the pods' spines
        spines = 0
        uplinks = 0
        pair_links = 0
        for pod, alike in _pods(needed, half):
            pod_spines, pod_pair_links, biggest, full_pair = pods[pod]
            spines += pod_spines * alike
            uplinks += pod_pair_links * pod_spines * alike
            if not pair_links and biggest == top:
                pair_links = full_pair  # a full leaf of a full pod
                full_leaf_up = pair_links * pod_spines
    else:
        # Every tier below the top has k/2 ports down and k/2 up (1:1); the top tier k down.
        spines = math.ceil(uplinks / half)
        pair_links = max(1, up // max(1, half))
    cores = math.ceil(uplinks / (half if tiers > 3 else radix)) if tiers >= 3 else 0
    superspines = math.ceil(uplinks / radix) if tiers >= 4 else 0
    return TopologySize(
        endpoints=endpoints,
        radix=radix,
        oversubscription=oversubscription,
        rails=rails,
        tiers=tiers,
        kind=TOPOLOGY_KIND_BY_TIERS[tiers],
        leaf_switches=leaves,
        spine_switches=spines,
        core_switches=cores,
        endpoint_leaf_links=endpoints,
        leaf_spine_links=uplinks,
        spine_core_links=uplinks if tiers >= 3 else 0,
        leaf_down_ports=down,
        leaf_up_ports=up,
        achieved_oversubscription=achieved,
        max_endpoints=max_endpoints(radix, tiers, oversubscription),
        rail_optimized=rail_optimized,
        superspine_switches=superspines,
        core_superspine_links=uplinks if tiers >= 4 else 0,
        leaf_uplinks=full_leaf_up,
        leaf_downlinks=max(load for load, _ in loads),
        links_per_leaf_spine=pair_links,
    )


PodLayer = tuple[int, int, int, int]
"""One pod's spine layer: (spines, leaf-spine links per spine, largest leaf uplinks, links
from that leaf to each spine)."""


Runs = tuple[tuple[int, int], ...]
"""Leaves in order as runs of (value, leaves in a row with it): the leaves of a large fabric
are a handful of runs (every full leaf of a rail alike), so the sizing walks runs, not leaves."""


def _add_run(runs: list[tuple[int, int]], value: int, count: int) -> None:
    """``count`` leaves of ``value`` after ``runs`` (joined to the last run when alike)."""
    if runs and runs[-1][0] == value:
        runs[-1] = (value, runs[-1][1] + count)
    else:
        runs.append((value, count))


def _runs(values: list[int]) -> Runs:
    """``values`` as runs."""
    out: list[tuple[int, int]] = []
    for v in values:
        _add_run(out, v, 1)
    return tuple(out)


def _runs_mapped(runs: Runs, value: dict[int, int]) -> Runs:
    """``runs`` with each value replaced by ``value[v]`` (neighbours made equal joined)."""
    out: list[tuple[int, int]] = []
    for v, n in runs:
        _add_run(out, value[v], n)
    return tuple(out)


def _pods(runs: Runs, half: int) -> Iterator[tuple[Runs, int]]:
    """The pods of ``half`` consecutive leaves (the last may have fewer), in order, each as
    its runs with how many alike pods in a row it stands for (full pods inside one run)."""
    i = 0
    left = runs[0][1] if runs else 0  # leaves of run i not yet in a pod
    while i < len(runs):
        if left >= half:
            alike = left // half
            yield ((runs[i][0], half),), alike
            left -= alike * half
        else:
            pod: list[tuple[int, int]] = []
            need = half
            while need and i < len(runs):
                take = min(need, left)
                pod.append((runs[i][0], take))
                need -= take
                left -= take
                if not left:
                    i += 1
                    left = runs[i][1] if i < len(runs) else 0
            yield tuple(pod), 1
            continue
        if not left:
            i += 1
            left = runs[i][1] if i < len(runs) else 0


def _tiers_by_ports(
    uplinks_per_leaf: Runs, up_ports: int, radix: int, min_spines: int = 1
) -> tuple[int, int | None, dict[Runs, PodLayer]]:
    """(tiers, two-tier spines, pod spine layers) of the shallowest fabric whose non-blocking
    port arithmetic holds for these leaves (docs/MODEL.md 11, "Tier rule"); 0 tiers when
    none up to four does.

    * Two tiers: every spine takes at least one port from every leaf, so leaves <= k, and an
      even spine layer exists (:func:`even_spines`: each leaf runs ceil(u/S) links to each of
      S spines within its up ports, each spine's ports <= k).
    * Three tiers: pods of k/2 consecutive leaves, each with an even spine layer of spines
      with k/2 ports down (a non-blocking spine keeps k/2 up); every core (k ports) reaches
      every pod, so pods <= k, i.e. leaves <= k x k/2.
    * Four tiers (k-ary 4-tree): leaves <= k x (k/2)^2.
    """
    leaves = sum(n for _, n in uplinks_per_leaf)
    half = radix // 2
    if leaves <= radix:
        spines = _even_spines(uplinks_per_leaf, up_ports, radix, min_spines)
        if spines is not None:
            return 2, spines, {}
    if leaves <= max_leaves(radix, 3):
        pods: dict[Runs, PodLayer] = {}
        for pod, _ in _pods(uplinks_per_leaf, half):
            if pod in pods:
                continue  # most pods are full and alike: each distinct pod once
            pod_spines = _even_spines(pod, up_ports, half)
            if pod_spines is None:
                break  # this pod's leaves cannot spread evenly over k/2-port spines
            pairs = sum(math.ceil(u / pod_spines) * n for u, n in pod)
            biggest = max(u for u, _ in pod)
            pods[pod] = (pod_spines, pairs, biggest, math.ceil(biggest / pod_spines))
        else:
            return 3, None, pods
    if leaves <= max_leaves(radix, 4):
        return 4, None, {}
    return 0, None, {}


def even_spines(
    uplinks_per_leaf: tuple[int, ...], up_ports: int, radix: int, min_spines: int = 1
) -> int | None:
    """Fewest spines S (at least ``min_spines``) over which every leaf spreads its uplinks
    evenly: each leaf runs ceil(u/S) links to every spine, which must fit its ``up_ports``,
    and no spine needs more than ``radix`` ports.  A full leaf's uplinks must therefore
    divide by S (DGX SuperPOD: 32 uplinks over 16 spines, 2 links each); a spine count that
    does not divide them leaves some leaf pairs below line rate.  None when no S fits (the
    fabric needs another tier).
    """
    # leaves of one load behave alike
    return _even_spines(tuple(Counter(uplinks_per_leaf).items()), up_ports, radix, min_spines)


def _even_spines(counts: Runs, up_ports: int, radix: int, min_spines: int = 1) -> int | None:
    """:func:`even_spines` of leaves given as (uplinks, leaves) pairs (runs, in any order; a
    value may come in several).

    A spine takes ceil(u/S) >= u/S ports of every leaf, so S spines of ``radix`` ports hold
    every leaf only from S >= (sum of uplinks) / radix: the walk starts there (the fewest S
    that fits is the same; a fabric of many full leaves skipped up to ~30 spine counts)."""
    uplinks = sum(u * n for u, n in counts)
    for spines in range(max(1, min_spines, -(-uplinks // radix)), up_ports + 1):
        ports = 0  # one spine's ports
        for u, n in counts:
            per_spine = -(-u // spines)  # ceil(u / spines) on integers
            if per_spine * spines > up_ports:
                break
            ports += n * per_spine
        else:
            if ports <= radix:
                return spines
    return None


def _two_leaves(endpoints: int, rails: int, links_per_rail: int = 1) -> Runs:
    """A leaf-spine's endpoints when one leaf would hold them all: over two leaves, whole rails
    (or whole servers' links) on each, so the spines join something and a failed leaf takes
    half the servers, not all (a "leaf-spine" of one leaf and two spines bought spines that
    joined nothing).  One server's links stay on one leaf."""
    unit = math.ceil(endpoints / rails) if rails > 1 else max(1, links_per_rail)
    units = math.ceil(endpoints / unit)
    if units < 2:
        return ((endpoints, 1),)
    first = min(endpoints, math.ceil(units / 2) * unit)
    runs: list[tuple[int, int]] = []
    _add_run(runs, first, 1)
    _add_run(runs, endpoints - first, 1)
    return tuple(runs)


def _leaf_runs(endpoints: int, rails: int, down: int, links_per_rail: int = 1) -> Runs:
    """Endpoints on each leaf, as runs; each rail fills its own leaves in turn.

    A server's ``links_per_rail`` links of one rail land on one leaf together (whole OSFPs),
    so a leaf takes ``down // links_per_rail`` servers' links of a rail.

    A rail whose servers take at most half a leaf shares the leaf with the next rails (as
    many whole rails as its down ports hold), as rail-optimized designs smaller than one
    scalable unit are cabled: a leaf per rail would leave most of every leaf empty and
    multiply the leaves and the spines they need.  Servers per rail group (the placement's
    leaf block) stay the same: every server's NIC of a rail still lands on one leaf.
    """
    group = max(1, links_per_rail)
    per_rail = math.ceil(endpoints / rails / group) * group  # one rail's links
    leaf_links = down // group * group  # a full leaf holds whole server groups
    runs: list[tuple[int, int]] = []
    if rails > 1 and 2 * per_rail <= leaf_links:
        per_leaf = leaf_links // per_rail
        full, rest = divmod(endpoints, per_leaf * per_rail)
        if full:
            _add_run(runs, per_leaf * per_rail, full)
        if rest:
            _add_run(runs, rest, 1)
        return tuple(runs)
    remaining = endpoints
    for _ in range(rails):
        rail_endpoints = min(per_rail, remaining)
        remaining -= rail_endpoints
        # full leaves, then the rest of the rail (a run, not a leaf at a time: a 100,000-GPU
        # cluster has tens of thousands of leaves)
        full, rest = divmod(rail_endpoints, leaf_links)
        if full:
            _add_run(runs, leaf_links, full)
        if rest:
            _add_run(runs, rest, 1)
    return tuple(runs)


def _check(radix: int, oversubscription: float) -> None:
    if isinstance(radix, bool) or not isinstance(radix, int) or radix < 4 or radix % 2:
        raise ValueError("radix must be an even integer >= 4")
    if not math.isfinite(oversubscription) or oversubscription < 1.0:
        raise ValueError("oversubscription must be a finite number >= 1")


# --------------------------------------------------------------------------- cabling


@dataclass(frozen=True)
class TierLinks:
    """Cables of one tier: ``medium`` is "dac" (passive copper) or "optical"."""

    tier: str
    links: int
    medium: str
    length_m: float
    transceivers: int

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        tier: str,
        links: int,
        medium: str,
        length_m: float,
        transceivers: int,
    ) -> None:
        object.__setattr__(self, "tier", tier)
        object.__setattr__(self, "links", links)
        object.__setattr__(self, "medium", medium)
        object.__setattr__(self, "length_m", length_m)
        object.__setattr__(self, "transceivers", transceivers)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_cabling(
    topo: TopologySize,
    *,
    servers: int,
    servers_per_rack: int = SERVERS_PER_RACK,
    top_of_rack: bool = False,
) -> tuple[TierLinks, ...]:
    """Choose copper or optics per tier: DAC inside a rack, optics beyond.

    Endpoint links are copper when the leaf sits in the servers' own rack: a top-of-rack
    layout (``top_of_rack=True``), or a single switch serving servers that fit one rack.
    Rail-optimized leaves sit in a row's network rack and need AOC/optics.
    Switch-to-switch links always leave the rack.  Each optical link needs two
    transceivers (one per end); DAC and AOC carry their own ends.
    """
    tiers: list[TierLinks] = []
    in_rack = top_of_rack or (topo.tiers == 1 and servers <= servers_per_rack)
    if in_rack:
        tiers.append(TierLinks("endpoint-leaf", topo.endpoint_leaf_links, "dac", IN_RACK_LINK_M, 0))
    else:
        tiers.append(
            TierLinks(
                "endpoint-leaf",
                topo.endpoint_leaf_links,
                "optical",
                ROW_LINK_M,
                2 * topo.endpoint_leaf_links,
            )
        )
    if topo.leaf_spine_links:
        tiers.append(
            TierLinks(
                "leaf-spine",
                topo.leaf_spine_links,
                "optical",
                SPINE_LINK_M,
                2 * topo.leaf_spine_links,
            )
        )
    if topo.spine_core_links:
        tiers.append(
            TierLinks(
                "spine-core",
                topo.spine_core_links,
                "optical",
                SPINE_LINK_M,
                2 * topo.spine_core_links,
            )
        )
    if topo.core_superspine_links:
        tiers.append(
            TierLinks(
                "core-superspine",
                topo.core_superspine_links,
                "optical",
                SUPERSPINE_LINK_M,
                2 * topo.core_superspine_links,
            )
        )
    return tuple(tiers)


MIN_SPINES: Final = 2
"""A leaf-spine compute fabric keeps at least two spines: a failed spine leaves a path
(NVIDIA DGX SuperPOD reference architecture)."""
MIN_SPINES_ROCE: Final = 4
"""RoCE leaf-spine fabrics with four or more leaves keep four spines: with two, a spine
failure halves the bisection and lossless (PFC) traffic backs up into pause storms
(Juniper AI data-centre validated designs; NVIDIA Spectrum-X RA uses >= 4 spines)."""


def size_compute_fabric(
    endpoints: int,
    radix: int,
    oversubscription: float,
    *,
    rails: int,
    fabric: str,
    leaf_spine: bool = False,
    planes: int = 1,
    links_per_rail: int = 1,
) -> TopologySize:
    """The topology of a compute fabric: :func:`size_topology` plus the spine policy
    (at least ``MIN_SPINES``; ``MIN_SPINES_ROCE`` for RoCE with four or more leaves per
    plane), spines spread evenly over every leaf's uplinks; ``leaf_spine`` asks for two tiers
    even where one switch would do; ``planes`` splits the rails over independent fabrics;
    ``links_per_rail`` keeps each server's links of one rail together on one leaf."""
    topo = size_topology(
        endpoints,
        radix,
        oversubscription,
        rails=rails,
        leaf_spine=leaf_spine,
        planes=planes,
        links_per_rail=links_per_rail,
    )
    if topo.tiers != 2:
        return topo
    floor = MIN_SPINES
    if fabric != "infiniband" and topo.leaf_switches // planes >= 4:
        floor = MIN_SPINES_ROCE
    floor = min(floor, max(1, topo.leaf_spine_links // planes))
    if topo.spine_switches // planes >= floor:
        return topo
    return size_topology(
        endpoints,
        radix,
        oversubscription,
        rails=rails,
        leaf_spine=leaf_spine,
        planes=planes,
        min_spines=floor,
        links_per_rail=links_per_rail,
    )
