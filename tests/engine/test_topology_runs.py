"""The fabric sizing walks runs of alike leaves (topology.Runs), not one leaf at a time: it
sizes every fabric exactly as the leaf-by-leaf sizing it replaced, kept here as the reference
(seeded random fabrics: rails, plies, oversubscription, forced leaf/spine, spine floors, small
radixes that need three and four tiers; top-of-rack fabrics with several leaves per rack)."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

from advisor.engine.facts.vocabulary import SINGLE_SWITCH, TOPOLOGY_KIND_BY_TIERS
from advisor.engine.model.topology import (
    _EPS,
    MAX_TIERS,
    TopologyError,
    TopologySize,
    even_spines,
    leaf_ports,
    max_endpoints,
    max_leaves,
    size_topology,
    size_tor_fabric,
)


def _one_plane_reference(
    endpoints: int,
    radix: int,
    oversubscription: float,
    rails: int,
    leaf_spine: bool,
    min_spines: int,
    links_per_rail: int,
) -> TopologySize:
    """size_topology of one plane, leaf by leaf."""
    down, _ = leaf_ports(radix, oversubscription)
    rails = min(rails, endpoints // links_per_rail)
    loads = list(_leaf_loads_reference(endpoints, rails, down, links_per_rail))
    if leaf_spine and len(loads) == 1:
        # a leaf-spine keeps two leaves at least: half the rails (or servers) on each
        unit = math.ceil(endpoints / rails) if rails > 1 else links_per_rail
        if endpoints > unit:
            first = min(endpoints, math.ceil(math.ceil(endpoints / unit) / 2) * unit)
            loads = [first, endpoints - first]
    sized = _from_loads_reference(
        endpoints,
        radix,
        oversubscription,
        rails=rails,
        rail_optimized=rails > 1,
        loads=tuple(loads),
        single_switch=endpoints <= radix and not leaf_spine,
        min_spines=min_spines,
    )
    if links_per_rail > 1:
        return dataclasses.replace(sized, links_per_rail=links_per_rail)
    return sized


def _tor_reference(
    servers: int, ports_per_server: int, radix: int, oversubscription: float, servers_per_rack: int
) -> TopologySize:
    endpoints = servers * ports_per_server
    down, _ = leaf_ports(radix, oversubscription)
    loads: list[int] = []
    remaining = servers
    while remaining > 0:
        rack_ports = min(servers_per_rack, remaining) * ports_per_server
        remaining -= servers_per_rack
        while rack_ports > 0:
            load = min(down, rack_ports)
            loads.append(load)
            rack_ports -= load
    return _from_loads_reference(
        endpoints,
        radix,
        oversubscription,
        rails=1,
        rail_optimized=False,
        loads=tuple(loads),
        single_switch=servers <= servers_per_rack and endpoints <= radix,
    )


def _from_loads_reference(
    endpoints: int,
    radix: int,
    oversubscription: float,
    *,
    rails: int,
    rail_optimized: bool,
    loads: tuple[int, ...],
    single_switch: bool,
    min_spines: int = 1,
) -> TopologySize:
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

    leaves = len(loads)
    # uplinks per leaf: leaves of one load need the same (a 100,000-GPU fabric has tens of
    # thousands of leaves and a handful of distinct loads)
    per_load = {load: min(up, math.ceil(load / oversubscription - _EPS)) for load in set(loads)}
    needed = tuple(map(per_load.__getitem__, loads))
    uplinks = sum(needed)
    half = radix // 2
    tiers, spines_even, pods = _tiers_reference(needed, up, radix, min_spines)
    if not tiers:
        limit_leaves = max_leaves(radix, MAX_TIERS)
        raise TopologyError(
            f"{endpoints:,} endpoints need {leaves:,} leaf switches (at most {down} ports down "
            f"each at {oversubscription:g}:1), but four tiers of radix-{radix} switches connect "
            f"at most {limit_leaves:,} leaves "
            f"({max_endpoints(radix, MAX_TIERS, oversubscription):,} endpoints on full leaves); "
            "use a higher-radix switch or split the cluster"
        )
    full_leaf_up = max(needed)
    if tiers == 2 and spines_even is not None:
        # every leaf reaches every spine with ceil(u/S) links: its uplinks divide evenly
        spines = spines_even
        per_need = {u: math.ceil(u / spines) for u in set(needed)}
        per_pair = tuple(map(per_need.__getitem__, needed))
        uplinks = sum(per_pair) * spines
        pair_links = per_pair[needed.index(max(needed))]  # a full leaf
        full_leaf_up = pair_links * spines
    elif tiers == 3:
        # pods of k/2 leaves, each with its own spines (k/2 ports down, k/2 up), every leaf
        # spread evenly over its pod's spines; the cores join the pods' spines
        spines = 0
        uplinks = 0
        pair_links = 0
        top = max(needed)
        for first in range(0, leaves, half):
            pod_spines, pod_pair_links, biggest, full_pair = pods[needed[first : first + half]]
            spines += pod_spines
            uplinks += pod_pair_links * pod_spines
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
        leaf_downlinks=max(loads),
        links_per_leaf_spine=pair_links,
    )


def _tiers_reference(
    uplinks_per_leaf: tuple[int, ...], up_ports: int, radix: int, min_spines: int = 1
) -> tuple[int, int | None, dict[tuple[int, ...], tuple[int, int, int, int]]]:
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
    leaves = len(uplinks_per_leaf)
    half = radix // 2
    if leaves <= radix:
        spines = even_spines(uplinks_per_leaf, up_ports, radix, min_spines)
        if spines is not None:
            return 2, spines, {}
    if leaves <= max_leaves(radix, 3):
        pods: dict[tuple[int, ...], tuple[int, int, int, int]] = {}
        for first in range(0, leaves, half):
            pod = uplinks_per_leaf[first : first + half]
            if pod in pods:
                continue  # most pods are full and alike: each distinct pod once
            pod_spines = even_spines(pod, up_ports, half)
            if pod_spines is None:
                break  # this pod's leaves cannot spread evenly over k/2-port spines
            pod_pairs = [math.ceil(u / pod_spines) for u in pod]
            biggest = max(pod)
            pods[pod] = (pod_spines, sum(pod_pairs), biggest, pod_pairs[pod.index(biggest)])
        else:
            return 3, None, pods
    if leaves <= max_leaves(radix, 4):
        return 4, None, {}
    return 0, None, {}


def _leaf_loads_reference(
    endpoints: int, rails: int, down: int, links_per_rail: int = 1
) -> list[int]:
    """Endpoints on each leaf; each rail fills its own leaves in turn.

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
    if rails > 1 and 2 * per_rail <= leaf_links:
        per_leaf = leaf_links // per_rail
        packed: list[int] = []
        remaining = endpoints
        while remaining > 0:
            load = min(per_leaf * per_rail, remaining)
            packed.append(load)
            remaining -= load
        return packed
    loads: list[int] = []
    remaining = endpoints
    for _ in range(rails):
        rail_endpoints = min(per_rail, remaining)
        remaining -= rail_endpoints
        # full leaves, then the rest of the rail (a list product, not a leaf at a time: a
        # 100,000-GPU cluster has tens of thousands of leaves)
        full, rest = divmod(rail_endpoints, leaf_links)
        loads += [leaf_links] * full
        if rest:
            loads.append(rest)
    return loads


def _outcome(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except (TopologyError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


def test_fabrics_are_sized_as_leaf_by_leaf() -> None:
    rng = random.Random(20261202)
    sized = 0
    for _ in range(600):
        endpoints = rng.choice(
            [rng.randint(1, 300), rng.randint(1, 5000), rng.randint(1, 120_000), 32_768, 100_000]
        )
        radix = rng.choice([8, 16, 32, 36, 48, 64, 128, rng.randrange(4, 130, 2)])
        over = rng.choice([1.0, 1.0, 1.5, 2.0, 3.0, 5.0])
        rails = rng.choice([1, 1, 2, 3, 4, 8])
        links_per_rail = rng.choice([1, 1, 2, 4, 8])
        leaf_spine = rng.random() < 0.3
        min_spines = rng.choice([1, 1, 2, 4, 8])
        if rng.random() < 0.6:
            endpoints -= endpoints % (rails * links_per_rail)
            endpoints = max(endpoints, rails * links_per_rail)
        new = _outcome(
            size_topology,
            endpoints,
            radix,
            over,
            rails=rails,
            leaf_spine=leaf_spine,
            min_spines=min_spines,
            links_per_rail=links_per_rail,
        )
        if isinstance(new, tuple):
            # refused before sizing (checks unchanged) or beyond four tiers: said alike
            if "leaf switches" in new[1]:
                old = _outcome(
                    _one_plane_reference,
                    endpoints,
                    radix,
                    over,
                    rails,
                    leaf_spine,
                    min_spines,
                    links_per_rail,
                )
                assert new == old
            continue
        old = _one_plane_reference(
            endpoints, radix, over, rails, leaf_spine, min_spines, links_per_rail
        )
        assert new == old, (endpoints, radix, over, rails, links_per_rail, leaf_spine)
        sized += 1
        servers = rng.randint(1, 5000)
        per_server = rng.choice([1, 2, 4])
        per_rack = rng.choice([1, 2, 4, 8])
        tor = _outcome(size_tor_fabric, servers, per_server, radix, over, servers_per_rack=per_rack)
        assert tor == _outcome(_tor_reference, servers, per_server, radix, over, per_rack)
    assert sized > 300  # most draws size a fabric (one to four tiers)
