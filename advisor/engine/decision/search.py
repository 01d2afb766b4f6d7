"""The search: size, price and evaluate every candidate once (shared work cached)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from advisor.engine.decision.bom import (
    BomError,
    NetworkParts,
    StoragePlan,
    compute_fabric_totals,
    management_lines,
    totals,
)
from advisor.engine.decision.candidates import OVERSUBSCRIPTIONS, Candidate
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.decision.policy import SINGLE_SWITCH_MAX_SERVERS
from advisor.engine.decision.pricing import Scored, price
from advisor.engine.decision.util import clean
from advisor.engine.model.topology import TopologyError, TopologySize, size_compute_fabric
from advisor.engine.result.records import Metrics

Evaluator = Callable[[Candidate], Metrics]
"""Performance of one candidate design (docs/ENGINE_API.md metrics)."""


def score_all(
    facts: JobFacts,
    parts: NetworkParts,
    candidates: list[Candidate],
    storage: StoragePlan,
    evaluate: Evaluator,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[Scored], list[dict[str, Any]]]:
    """Every candidate sized, priced (compute + storage + management) and evaluated."""
    pruned: list[dict[str, Any]] = []
    ns_capex, ns_power = totals(storage.lines)
    ns_switches = storage.topo.total_switches
    metrics_cache: dict[tuple[Any, ...], Metrics] = {}
    mgmt_cache: dict[int, tuple[float, float]] = {}
    scored: list[Scored] = []
    seen_single: set[tuple[str, str, str, int]] = set()
    single_dupes = 0
    step = max(1, len(candidates) // 20)
    for i, cand in enumerate(candidates):
        if progress is not None and i % step == 0:
            progress(min(90, 5 + 85 * i // max(1, len(candidates))))
        try:
            topo = size_compute_fabric(
                facts.nodes * cand.nics_per_node,
                cand.radix,
                cand.oversubscription,
                rails=cand.rails,
                links_per_rail=cand.links_per_rail,
                fabric=cand.fabric,
            )
        except (TopologyError, ValueError) as exc:
            pruned.append({"design": cand.design_dict(), "reason": str(exc)})
            continue
        variants = [topo]
        if topo.tiers == 1:
            key = (cand.fabric, cand.nic.sku, cand.switch.sku, cand.nics_per_node)
            if key in seen_single:
                single_dupes += 1
                continue
            seen_single.add(key)
            cand = cand.varied(oversubscription=1.0)
            if facts.nodes > SINGLE_SWITCH_MAX_SERVERS:
                # field practice past a few servers is a leaf/spine, not one switch
                variants.append(
                    size_compute_fabric(
                        facts.nodes * cand.nics_per_node,
                        cand.radix,
                        1.0,
                        rails=cand.rails,
                        links_per_rail=cand.links_per_rail,
                        fabric=cand.fabric,
                        leaf_spine=True,
                    )
                )
        planed = multi_plane_variant(facts, cand, topo)
        if planed is not None:
            variants.append(planed)
        base = cand
        for topo in variants:
            # a multi-plane variant is its own design: its messages cross one plane's tiers
            cand = base if topo.planes == 1 else base.varied(planes=topo.planes)
            try:
                capex, power = compute_fabric_totals(
                    parts,
                    fabric=cand.fabric,
                    nic=cand.nic,
                    nics_per_node=cand.nics_per_node,
                    nodes=facts.nodes,
                    switch=cand.switch,
                    topo=topo,
                )
                managed = topo.total_switches + ns_switches
                mgmt = mgmt_cache.get(managed)
                if mgmt is None:
                    mgmt = totals(
                        management_lines(parts, nodes=facts.nodes, managed_switches=managed)
                    )
                    mgmt_cache[managed] = mgmt
            except BomError as exc:
                pruned.append({"design": cand.design_dict(), "reason": str(exc)})
                continue
            metrics = metrics_cache.get(cand.design_key)
            if metrics is None:
                metrics = clean(evaluate(cand))
                metrics_cache[cand.design_key] = metrics
            scored.append(
                price(
                    facts,
                    cand,
                    topo,
                    metrics,
                    capex + ns_capex + mgmt[0],
                    power + ns_power + mgmt[1],
                )
            )
    if single_dupes:
        pruned.append(
            {
                "design": {"oversubscription": [r for r in OVERSUBSCRIPTIONS if r > 1.0]},
                "reason": f"{single_dupes} designs whose NIC ports fit one switch: a single "
                "switch is non-blocking, so oversubscription does not apply (kept at 1:1)",
            }
        )
    return scored, pruned


MULTI_PLANE_MIN_GPUS: Final = 32_768
"""Multi-plane designs are priced from this size: where single fat trees of 51.2T switches
need three tiers and the published multi-plane designs start (DeepSeek-V3 ISCA'25: 8 planes
of two-tier fat trees, up to 16,384 GPUs on 64-port switches; Spectrum-X / AMD Pollara
multi-plane Ethernet); below it, only where a single fat tree would need a fourth tier
(``policy`` "extra_tier": no published AI cluster runs four; a multi-plane design is the way
the field avoids it)."""


def multi_plane_variant(
    facts: JobFacts, cand: Candidate, topo: TopologySize
) -> TopologySize | None:
    """The same candidate with every rail on its own fat tree (planes = links per server),
    when that saves a tier: a multi-plane design keeps large clusters shallower.  None when
    the cluster is below ``MULTI_PLANE_MIN_GPUS`` and its single fat tree has at most three
    tiers, the server has one link, or planes save no tier."""
    links = cand.nics_per_node
    if links < 2 or topo.tiers < 3 or cand.nic.integrated:
        return None
    if facts.gpus < MULTI_PLANE_MIN_GPUS and topo.tiers <= 3:
        return None
    try:
        planed = size_compute_fabric(
            facts.nodes * links,
            cand.radix,
            cand.oversubscription,
            rails=links,
            fabric=cand.fabric,
            planes=links,
        )
    except (TopologyError, ValueError):
        return None
    return planed if planed.tiers < topo.tiers else None


def design_point(
    facts: JobFacts,
    parts: NetworkParts,
    storage: StoragePlan,
    *,
    fabric: str,
    nic_gbps: float,
    nics_per_node: int,
    oversubscription: float,
) -> tuple[Candidate | None, str | None, float, float]:
    """One sweep point under the recommendation's candidate rules: (candidate, reason it
    cannot be built or None, network capex USD, network power W).

    The NIC and switch are the ones the recommendation would take for that fabric and
    speed: the platform's reference NIC first, then its published options, then others;
    the switch vendor matching the NIC, then the least expensive.
    """
    from advisor.engine.decision.candidates import enumerate_candidates

    p = facts.platform
    gbps = int(nic_gbps)
    if gbps > p.slot_gbps:
        return (
            None,
            (
                f"{p.gpu_name} servers have PCIe Gen{p.pcie_gen} x16 slots carrying about "
                f"{p.slot_gbps:.0f} Gb/s, too little for a {gbps}G NIC at line rate"
            ),
            0.0,
            0.0,
        )
    if p.integrated and (gbps != p.reference_gbps or nics_per_node != p.reference_count):
        return (
            None,
            (
                f"{p.gpu_name} scales out through its {p.reference_count} x {p.reference_gbps}G "
                "integrated ports; no NICs are added"
            ),
            0.0,
            0.0,
        )
    candidates, _ = enumerate_candidates(parts, p)
    pool = [
        c
        for c in candidates
        if c.fabric == fabric and c.nic_gbps == gbps and c.oversubscription == 1.0
    ]
    if not pool:
        return (
            None,
            f"no {gbps}G {fabric} NIC and switch in the catalog fit this platform",
            0.0,
            0.0,
        )
    pool.sort(
        key=lambda c: (
            p.nic_standing(c.nic),
            c.switch.vendor != c.nic.vendor,
            c.switch.unit_price_usd / max(1, c.radix),
            c.nic.unit_price_usd,
        )
    )
    last_error = ""
    for base in pool:
        cand = dataclasses.replace(
            base, nics_per_node=nics_per_node, oversubscription=oversubscription
        )
        try:
            topo = size_compute_fabric(
                facts.nodes * nics_per_node,
                cand.radix,
                oversubscription,
                rails=cand.rails,
                links_per_rail=cand.links_per_rail,
                fabric=fabric,
            )
            capex, power = compute_fabric_totals(
                parts,
                fabric=fabric,
                nic=cand.nic,
                nics_per_node=nics_per_node,
                nodes=facts.nodes,
                switch=cand.switch,
                topo=topo,
            )
            mgmt = totals(
                management_lines(
                    parts,
                    nodes=facts.nodes,
                    managed_switches=topo.total_switches + storage.topo.total_switches,
                )
            )
        except (TopologyError, BomError, ValueError) as exc:
            last_error = str(exc)
            continue
        ns_capex, ns_power = totals(storage.lines)
        return cand, None, capex + ns_capex + mgmt[0], power + ns_power + mgmt[1]
    return None, last_error or "cannot be built from the catalog", 0.0, 0.0
