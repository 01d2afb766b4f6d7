"""Field practice as explicit policy, hard constraints, and the choice with ties.

Policy (docs/MODEL.md "Field practice"; sources in /work/shared/FIELD_PRACTICE.md):

1. A job whose GPUs talk across servers (multi-server training, a model split across
   servers for inference) gets RDMA (RoCE v2 or InfiniBand): NCCL over TCP sockets reaches
   40-60 % of wire speed (NVIDIA/nccl #209, #450) and a split model pays tens of microseconds
   per message on every token.  TCP designs stay in ``options``, ruled out with that reason.
2. Training and split-model compute fabrics are built as the published designs build them
   (DGX SuperPOD, Spectrum-X RA, Azure ND H100 v5, Meta SIGCOMM'24, Alibaba HPN, ByteDance
   MegaScale): non-blocking (1:1) leaves, rail-optimized, one NIC per GPU at the platform's
   reference speed (its own reference NIC first), at least two spines.  A design that departs
   (oversubscribed leaves, fewer or slower NICs, another vendor's NIC) is a priced
   alternative with its risks written out, recommended only when the customer asks for it
   (``prefer: cost`` with ``allow_oversubscription: true``) or when no field-practice design
   meets the hard constraints (the budget); the headline then says so.
3. Ties are ties: designs within ``TIE_BAND`` (+-5 %, the model's uncertainty until the
   engine publishes its bands) in performance whose life costs are within 5 % too, or
   whose costs that do not follow from performance (capex, power, operations) differ by
   less than 5 % of the life cost (their wasted-GPU-time difference is inside the
   performance uncertainty), are tied; designs of different fabric classes are tied too
   when their life costs differ by less than that band plus the +-20 % price uncertainty
   of the larger capex (different vendors' price lists).  At a tied life cost a design
   faster beyond the band is better, not tied.  Ties break by a fixed order: field
   practice, team skills, vendor match (the platform's reference NIC, fabric and switch
   vendor), network capex, then life cost.  So the fabric class does not flip between
   neighbouring sizes on cost noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from advisor.engine.catalog.network import ETHERNET
from advisor.engine.cost import PRICE_UNCERTAINTY
from advisor.engine.recommend.facts import JobFacts
from advisor.engine.recommend.pricing import SKILL_GAP, Scored
from advisor.engine.recommend.util import num, usd

SINGLE_SWITCH_MAX_SERVERS = 8
"""Largest compute fabric published on one switch at the platform's full speed (DGX BasePOD:
one QM9700 for up to 8 DGX nodes at NDR400; larger published designs are leaf-spine SUs)."""
TIE_BAND = 0.05
"""Relative difference below which life cost or performance count as equal."""

RISKS: dict[str, str] = {
    "oversubscribed": "an oversubscribed leaf slows every collective that crosses leaves by up "
    "to its ratio when uplinks are busy; it fragments placement (a job runs at full speed "
    "only inside one leaf group), lets jobs contend for the same uplinks, concentrates ECMP "
    "hash collisions on fewer links, and a failed spine removes a larger share of the "
    "bisection",
    "fewer_nics": "GPUs share NICs, so the NIC becomes the bottleneck of all-reduce and "
    "all-to-all (multi-node bus bandwidth ~ min(NVLink, NICs x NIC speed), aliyun/SimAI); "
    "the next, larger model or an MoE job pays it in full",
    "nic_speed": "a NIC below the platform's reference speed caps every collective that "
    "leaves the server at that speed",
    "nic_vendor": "a NIC the platform vendor does not ship: driver, firmware and support "
    "qualification fall on the customer",
    "single_switch": "one switch carries every server's traffic: its failure stops the whole "
    "cluster, and one more server means rebuilding the fabric as a leaf-spine",
}


def departures(facts: JobFacts, sc: Scored) -> list[str]:
    """Codes of the ways a compute-fabric design departs from field practice."""
    p = facts.platform
    c = sc.cand
    out: list[str] = []
    if sc.topo.tiers > 1 and c.oversubscription > 1.0:
        out.append("oversubscribed")
    if sc.topo.tiers == 1 and facts.nodes > SINGLE_SWITCH_MAX_SERVERS:
        out.append("single_switch")
    if c.nics_per_node < p.reference_count:
        out.append("fewer_nics")
    if c.nic_gbps < p.reference_gbps:
        out.append("nic_speed")
    if p.reference_nic is not None and p.nic_standing(c.nic) == 2:
        out.append("nic_vendor")
    return out


def departure_phrase(facts: JobFacts, sc: Scored, code: str) -> str:
    p = facts.platform
    c = sc.cand
    if code == "oversubscribed":
        return f"{c.oversubscription:g}:1 oversubscribed leaves instead of non-blocking"
    if code == "fewer_nics":
        return (
            f"{c.nics_per_node} compute NIC port{'s' if c.nics_per_node > 1 else ''} per server "
            f"instead of {p.reference_count}"
        )
    if code == "nic_speed":
        return f"{c.nic_gbps}G NICs instead of the platform's {p.reference_gbps}G"
    if code == "single_switch":
        return f"one switch for {facts.nodes} servers instead of a leaf-spine"
    if code == "nic_vendor":
        ref = p.reference_nic.description if p.reference_nic else "its reference NIC"
        return f"{c.nic.description} instead of the platform's {ref}"
    return code


def check_constraints(
    facts: JobFacts, scored: list[Scored], target_ttft_ms: float | None
) -> list[str]:
    """Mark hard-constraint violations and departures; return notes for unmeetable targets.

    A latency target that no design reaches (the GPUs' own time is above it) cannot tell
    networks apart, so it is reported instead of ruling everything out.  The p95
    time-to-first-token target rules a design out only beyond the model's uncertainty
    (``TIE_BAND``): TTFT is dominated by prefill and queueing at the operating point, and a
    few percent either side of it does not separate networks.
    """
    notes: list[str] = []
    budget = facts.network_budget_usd
    target = facts.target_ms_per_token
    latency_applies = facts.inference and target is not None
    rdma = [sc for sc in scored if sc.cand.fabric != ETHERNET]
    if latency_applies and target is not None and all(sc.perf > target for sc in scored):
        fastest = min(scored, key=lambda sc: sc.perf)
        compute_ms = num(fastest.metrics.get("compute_ms_per_token"))
        notes.append(
            f"No network design reaches the {target:g} ms per token target: the fastest "
            f"decodes at {fastest.perf:.1f} ms, of which {compute_ms:.1f} ms is GPU compute "
            "and memory time, so the target needs more or faster GPUs per replica rather "
            "than a faster network."
        )
        latency_applies = False
    ttft_applies = facts.inference and target_ttft_ms is not None
    ttfts = [num(sc.metrics.get("ttft_ms_p95"), math.nan) for sc in scored]
    if ttft_applies and not any(math.isfinite(t) for t in ttfts):
        ttft_applies = False
    if ttft_applies and target_ttft_ms is not None:
        finite = [t for t in ttfts if math.isfinite(t)]
        if finite and min(finite) > target_ttft_ms * (1.0 + TIE_BAND):
            notes.append(
                f"No network design reaches the {target_ttft_ms:g} ms p95 time-to-first-token "
                f"target (the best is {min(finite):,.0f} ms): prefill compute and queueing "
                "dominate, so it needs more GPUs rather than a faster network."
            )
            ttft_applies = False
    for sc in scored:
        sc.departures = departures(facts, sc)
        if not math.isfinite(sc.perf):
            sc.violations.append("the performance model found no valid timing for it")
        if facts.needs_compute_fabric and sc.cand.fabric == ETHERNET and rdma:
            sc.violations.append(
                "disaggregated serving moves every request's KV cache between servers: TCP "
                "reaches a fraction of wire speed and adds tens of microseconds per message"
                if facts.inference and facts.kv_only
                else "a model split across servers needs RDMA: every token crosses the network "
                "and TCP adds tens of microseconds per message"
                if facts.inference
                else "multi-server training needs RDMA: NCCL over TCP sockets reaches only "
                "40-60 % of wire speed (NVIDIA/nccl #209, #450)"
            )
        if latency_applies and target is not None and sc.perf > target:
            sc.violations.append(f"{sc.perf:.1f} ms per token misses the {target:g} ms target")
        ttft = num(sc.metrics.get("ttft_ms_p95"), math.nan)
        if (
            ttft_applies
            and target_ttft_ms is not None
            and math.isfinite(ttft)
            and ttft > target_ttft_ms * (1.0 + TIE_BAND)
        ):
            sc.violations.append(
                f"{ttft:,.0f} ms p95 time to first token misses the {target_ttft_ms:g} ms target"
            )
        if budget is not None and sc.capex_usd > budget:
            sc.violations.append(
                f"its network costs {usd(sc.capex_usd)}, over the {usd(budget)} budget"
            )
    return notes


def only_budget(sc: Scored) -> bool:
    return bool(sc.violations) and all("budget" in v for v in sc.violations)


@dataclass
class Choice:
    best: Scored
    mode: str
    """field_practice | cost_preference | constraints_forced | over_budget | fallback"""
    tied: list[Scored] = field(default_factory=list)
    """Designs tied with the pick (other than it)."""


def skills_gap(facts: JobFacts, fabric: str) -> float:
    """How far the fabric is from the team's skills: its risk premium (0 when it runs it);
    an Ethernet team is nearer RoCE (Ethernet + RDMA tuning) than InfiniBand."""
    one_time, risk = SKILL_GAP.get(facts.team_skills, SKILL_GAP["both"]).get(fabric, (0.0, 0.0))
    return risk + (1e-9 if one_time > 0 else 0.0)


def vendor_score(facts: JobFacts, sc: Scored) -> int:
    p = facts.platform
    c = sc.cand
    score = p.nic_standing(c.nic)
    if c.fabric != p.reference_fabric:
        score += 1
    if c.switch.vendor != c.nic.vendor and c.switch.vendor != p.vendor:
        score += 1
    return score


def tie_key(facts: JobFacts, sc: Scored) -> tuple[int, float, int, float, float]:
    """Documented tie-break order: field practice, team skills, vendor match, network capex,
    then life cost.

    Vendor match (the platform's reference NIC and fabric) does not depend on the cluster's
    size, so it keeps the fabric class from flipping between neighbouring sizes where the
    classes' capex lines cross at their tier boundaries (capex first flipped 14 of the 234
    model x GPU training ladders of the audit, vendor match first 3).
    """
    return (
        len(sc.departures),
        skills_gap(facts, sc.cand.fabric),
        vendor_score(facts, sc),
        round(sc.capex_usd, 2),
        sc.decision_usd,
    )


def tied(a: Scored, b: Scored) -> bool:
    """Performance within the tie band, and either the life costs within the band or the
    costs that do not follow from performance (network capex, power, operations) within
    the band of the life cost.

    The GPU time a design wastes comes from its performance, so once two designs' step times
    are within the model's uncertainty their wasted-GPU-time difference is within it too and
    is not counted again.
    """
    return _within(a.perf, b.perf) and cost_tied(a, b)


def cost_tied(a: Scored, b: Scored) -> bool:
    """The cost half of :func:`tied`: life costs equal within the model's uncertainty."""
    if _within(a.decision_usd, b.decision_usd):
        return True
    fixed_a = a.decision_usd - a.life.gpu_time_wasted_usd
    fixed_b = b.decision_usd - b.life.gpu_time_wasted_usd
    scale = max(abs(a.decision_usd), abs(b.decision_usd), 1e-12)
    if abs(fixed_a - fixed_b) <= TIE_BAND * scale:
        return True
    if a.cand.fabric != b.cand.fabric:
        # Different fabric classes come from different vendors' price lists, each good to
        # +-PRICE_UNCERTAINTY: a capex difference inside that band is not a difference.
        band = TIE_BAND * scale + PRICE_UNCERTAINTY * max(a.capex_usd, b.capex_usd)
        return abs(a.decision_usd - b.decision_usd) <= band
    return False


def _within(x: float, y: float) -> bool:
    if not (math.isfinite(x) and math.isfinite(y)):
        return x == y
    return abs(x - y) <= TIE_BAND * max(abs(x), abs(y), 1e-12)


def choose(facts: JobFacts, scored: list[Scored]) -> Choice:
    feasible = [sc for sc in scored if sc.feasible]
    practice = [sc for sc in feasible if sc.field_practice]
    if facts.prefer == "cost" and facts.allow_oversubscription and feasible:
        pool, mode = feasible, "cost_preference"
    elif practice:
        pool, mode = practice, "field_practice"
    elif feasible:
        pool, mode = feasible, "constraints_forced"
    else:
        needs = [sc for sc in scored if only_budget(sc)]
        # what the job needs: RDMA and its targets, built as the published designs build it
        needs = [sc for sc in needs if sc.field_practice] or needs
        if needs and facts.network_budget_usd is not None:
            least = min(sc.capex_usd for sc in needs)
            band = [sc for sc in needs if sc.capex_usd <= least * (1 + 1e-9)]
            best = min(band, key=lambda sc: tie_key(facts, sc))
            return Choice(best, "over_budget")
        fewest = min(len(sc.violations) for sc in scored)
        pool = [sc for sc in scored if len(sc.violations) == fewest]
        best = min(pool, key=lambda sc: (sc.capex_usd, tie_key(facts, sc)))
        return Choice(best, "fallback")
    if facts.prefer == "performance":
        anchor = min(pool, key=lambda sc: (sc.perf, sc.decision_usd))
        band = [sc for sc in pool if _within(sc.perf, anchor.perf)]
    else:
        # the least life cost, and every design whose life cost ties with it; among those
        # the fastest group (a design faster beyond the uncertainty at a tied cost is better,
        # not tied), then the tie-break order
        anchor = min(pool, key=lambda sc: (sc.decision_usd, sc.perf))
        same_cost = [sc for sc in pool if sc is anchor or cost_tied(sc, anchor)]
        fastest = min(same_cost, key=lambda sc: (sc.perf, sc.decision_usd))
        band = [sc for sc in same_cost if _within(sc.perf, fastest.perf)]
    best = min(band, key=lambda sc: tie_key(facts, sc))
    return Choice(best, mode, [sc for sc in band if sc is not best])
