"""Field practice as explicit policy, hard constraints, and the choice with ties.

Policy (docs/MODEL.md "Field practice", which lists the published designs and figures behind it):

1. A job whose GPUs talk across servers (multi-server training, a model split across
   servers for inference) gets RDMA (RoCE v2 or InfiniBand): NCCL over TCP sockets reaches
   40-60 % of wire speed (NVIDIA/nccl #209, #450) and a split model pays tens of microseconds
   per message on every token.  TCP designs stay in ``options``, ruled out with that reason.
   Disaggregated serving that moves only KV caches is sized by that stream instead: TCP and
   fewer or slower NICs are allowed when the design serves, within the targets, what the
   deployment serves on one RDMA NIC per server (:func:`serving_rate_short`, the one rule); TCP
   there is a departure (the published serving stacks move KV caches over RDMA).  A split
   model whose instances cross servers only between pipeline stages (tensor-parallel and expert
   groups inside a domain) is sized by its traffic too: fewer or slower RDMA NICs are allowed
   when the design serves, within the targets, what the deployment serves on one NIC per GPU.
2. Training and split-model compute fabrics are built as the published designs build them
   (DGX SuperPOD, Spectrum-X RA, Azure ND H100 v5, Meta SIGCOMM'24, Alibaba HPN, ByteDance
   MegaScale): non-blocking (1:1) leaves, rail-optimized, one NIC per GPU at the platform's
   reference speed (its own reference NIC first), at least two spines.  A design that departs
   (oversubscribed leaves, fewer or slower NICs, another vendor's NIC) is a priced
   alternative with its risks written out, recommended only when the customer asks for it
   (``prefer: cost`` with ``allow_oversubscription: true``) or when no field-practice design
   meets the hard constraints (the budget); the headline then says so.  Departures forced
   on a serving fleet are compared on the rate they keep within the targets too: one that
   serves beyond the tie band less than its fabric class's best departure is ruled out
   (:func:`rate_capped`).
3. Ties are ties: designs within ``TIE_BAND`` (+-5 %, the model's uncertainty until the
   engine publishes its bands) in performance whose life costs are within 5 % too, or
   whose costs that do not follow from performance (capex, power, operations) differ by
   less than 5 % of the life cost (their wasted-GPU-time difference is inside the
   performance uncertainty), are tied; designs of different fabric classes are tied too
   when their life costs differ by less than that band plus the +-20 % price uncertainty
   of the larger capex (different vendors' price lists).  At a tied life cost a design
   faster beyond the band is better, not tied.  Ties break by a fixed order,
   :data:`TIE_BREAK_ORDER` (its keys before network capex do not depend on the cluster's
   size), so the fabric class does not flip between neighbouring sizes on cost noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from advisor.engine.decision.candidates import card_gbps, full_links
from advisor.engine.decision.cost import PRICE_UNCERTAINTY
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.decision.pricing import Scored, skill_cost
from advisor.engine.decision.util import num, usd
from advisor.engine.facts.catalog.network import ETHERNET
from advisor.engine.facts.constants import over_capacity_ms
from advisor.engine.facts.formatting import first_token, first_token_over_capacity, significant
from advisor.engine.facts.vocabulary import fabric_label
from advisor.engine.result.records import Metrics, Premium

MAX_PUBLISHED_TIERS: Final = 3
"""Deepest compute fabric in the published AI cluster designs: three tiers (the 100k-GPU
Spectrum-X cluster; DGX SuperPOD cores; Meta's 24k-GPU clusters).  A four-tier fabric is a
departure: a higher-radix switch, a multi-plane design or the other fabric class reaches the
size in three tiers or fewer."""
SINGLE_SWITCH_MAX_SERVERS: Final = 8
"""Largest compute fabric published on one switch at the platform's full speed (DGX BasePOD:
one QM9700 for up to 8 DGX nodes at NDR400; larger published designs are leaf-spine SUs)."""
TIE_BAND: Final = 0.05
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
    "extra_tier": "every tier adds two switch hops of latency, a third more optics per "
    "endpoint and another layer to cable, monitor and fail; no published AI cluster runs "
    "four tiers",
    "kv_tcp": "the published disaggregated serving stacks move KV caches over RDMA "
    "(NVIDIA Dynamo's NIXL, Mooncake's transfer engine; GPUDirect, TCP only as their "
    "fallback): over TCP every cache is copied through the host and reaches a fraction of "
    "wire speed, so the time to first token grows with the prompt and the load",
}


def departures(facts: JobFacts, sc: Scored) -> list[str]:
    """Codes of the ways a compute-fabric design departs from field practice."""
    p = facts.platform
    c = sc.cand
    out: list[str] = []
    if sc.topo.leaf_oversubscription > 1.0:
        out.append("oversubscribed")
    if sc.topo.tiers == 1 and facts.nodes > SINGLE_SWITCH_MAX_SERVERS:
        out.append("single_switch")
    # a serving-only fabric that carries only KV caches or pipeline activations is sized by
    # that traffic, not by the training reference (docs/MODEL.md 15.2): fewer or slower NICs
    # are not a departure there; a design too small for it is ruled out by serving_rate_short
    serving_kv = facts.inference and facts.kv_only
    if c.nics_per_node < full_links(p, c.nic) and not facts.serving_sized:
        out.append("fewer_nics")
    if not facts.serving_sized and (
        (c.nic.integrated and c.nic_gbps < p.reference_gbps)
        or (not c.nic.integrated and card_gbps(c.nic) < p.reference_card_gbps)
    ):
        out.append("nic_speed")
    if serving_kv and c.fabric == ETHERNET:
        # not ruled out when it carries the stream (serving_rate_short), but the published serving
        # stacks move KV caches over RDMA: a departure, never bought on a tie with RoCE
        out.append("kv_tcp")
    if sc.topo.tiers > MAX_PUBLISHED_TIERS:
        out.append("extra_tier")
    if p.reference_nic is not None and p.nic_standing(c.nic) == 2:
        out.append("nic_vendor")
    return out


def departure_phrase(facts: JobFacts, sc: Scored, code: str) -> str:
    p = facts.platform
    c = sc.cand
    if code == "oversubscribed":
        return f"{sc.topo.leaf_oversubscription:g}:1 oversubscribed leaves instead of non-blocking"
    if code == "fewer_nics":
        full = full_links(p, c.nic)
        links = max(1, c.nic.links)
        count = f"{c.nics_per_node} compute NIC port{'s' if c.nics_per_node > 1 else ''}"
        if links == 1:
            return f"{count} per server instead of {full}"
        cards = c.nics_per_node // links
        kind = {2: "dual-port", 4: "quad-port"}.get(links, f"{links}-port")
        return (
            f"{count} per server on {cards} {kind} card{'s' if cards > 1 else ''} "
            f"instead of {full} on {full // links}"
        )
    if code == "nic_speed":
        return f"{card_gbps(c.nic)}G NICs instead of the platform's {p.reference_card_gbps}G"
    if code == "extra_tier":
        return (
            f"a {sc.topo.tiers}-tier fabric instead of at most {MAX_PUBLISHED_TIERS} tiers "
            "(higher-radix switches or a multi-plane design)"
        )
    if code == "kv_tcp":
        return "TCP for the KV transfer instead of RDMA"
    if code == "single_switch":
        return f"one switch for {facts.nodes:,} servers instead of a leaf-spine"
    if code == "nic_vendor":
        ref = p.reference_nic.description if p.reference_nic else "its reference NIC"
        return f"{c.nic.description} instead of the platform's {ref}"
    return code


def check_constraints(
    facts: JobFacts,
    scored: list[Scored],
    target_ttft_ms: float | None,
    serving_reference: Metrics | None = None,
) -> list[str]:
    """Mark hard-constraint violations and departures; return notes for unmeetable targets.

    ``serving_reference``: the serving metrics, rates within the targets included, of the
    design a fabric sized by its serving traffic is held to (:func:`serving_rate_short`); the
    rule is applied here to every design whose rate is known, and by the caller to each pick
    it computes the rate of.

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
    # a design that serves less than another reads its latencies at its own, lower rate: the
    # targets are judged on the designs that serve the most (most_served)
    serving = most_served(facts, scored)
    kept = {id(sc) for sc in serving}  # by identity: Scored compares field by field
    most = max(serving, key=lambda sc: num(sc.metrics.requests_per_s)) if serving else None
    if latency_applies and target is not None and all(sc.perf > target for sc in serving):
        fastest = min(serving, key=lambda sc: sc.perf)
        at_target = fastest.metrics.max_requests_per_s_at_target
        if fastest.metrics.load_saturated or (at_target is not None and at_target > 0):
            # the time is load (queueing, prefill sharing the GPUs, a full batch), not the
            # GPUs' own speed: a lone request would meet the target
            served = num(fastest.metrics.requests_per_s)
            # what the designs serve within the target (the fastest at the asked load may be
            # saturated, with none of its own: "up to 0 requests/s" beside 0.0125 elsewhere)
            best = max(num(sc.metrics.max_requests_per_s_at_target) for sc in serving)
            within = (
                f": within the target it serves up to {significant(best)} requests/s, so it"
                if best > 0
                else ", so it"
            )
            notes.append(
                f"No network design reaches the {target:g} ms per token target at this load: "
                f"the fastest reads {fastest.perf:.1f} ms at {significant(served)} requests/s, "
                f"and the time is load (batching, prefill sharing the GPUs, queueing){within} "
                "needs more servers or replicas rather than a faster network or faster GPUs."
            )
        else:
            compute_ms = num(fastest.metrics.compute_ms_per_token)
            notes.append(
                f"No network design reaches the {target:g} ms per token target: the fastest "
                f"decodes at {fastest.perf:.1f} ms, of which {compute_ms:.1f} ms is GPU compute "
                "and memory time, so the target needs more or faster GPUs per replica rather "
                "than a faster network."
            )
        latency_applies = False
    ttft_applies = facts.inference and target_ttft_ms is not None
    over_capacity_wait = first_token_over_capacity(
        facts.serving is not None and facts.serving.closed_loop
    )
    ttfts = [num(sc.metrics.ttft_ms_p95, math.nan) for sc in serving]
    if ttft_applies and not any(math.isfinite(t) for t in ttfts):
        ttft_applies = False
    if ttft_applies and target_ttft_ms is not None:
        finite = [t for t in ttfts if math.isfinite(t)]
        if finite and min(finite) > target_ttft_ms * (1.0 + TIE_BAND):
            notes.append(
                f"No network design reaches the {target_ttft_ms:,g} ms p95 time-to-first-token "
                + (
                    f"target: every design is over capacity and {over_capacity_wait}"
                    if over_capacity_ms(min(finite))
                    else f"target (the best is {first_token(min(finite))}): prefill compute and "
                    "queueing dominate"
                )
                + ", so it needs more GPUs rather than a faster network."
            )
            ttft_applies = False
    for sc in scored:
        sc.departures = departures(facts, sc)
        if not math.isfinite(sc.perf):
            sc.violations.append("the performance model found no valid timing for it")
        # a network that carries only KV caches may run over TCP: it is held, as every
        # KV-only design is, to the rate on one RDMA NIC per server (serving_rate_short)
        if (
            facts.needs_compute_fabric
            and sc.cand.fabric == ETHERNET
            and rdma
            and not (facts.inference and facts.kv_only)
        ):
            sc.violations.append(
                "a model split across servers needs RDMA: every token crosses the network "
                "and TCP adds tens of microseconds per message"
                if facts.inference
                else "multi-server training needs RDMA: NCCL over TCP sockets reaches only "
                "40-60 % of wire speed (NVIDIA/nccl #209, #450)"
            )
        short = serving_rate_short(facts, sc, serving_reference)
        if short is not None:
            sc.violations.append(short)
        elif most is not None and id(sc) not in kept:
            sc.violations.append(served_short(sc, most))
        if latency_applies and target is not None and sc.perf > target:
            sc.violations.append(f"{sc.perf:.1f} ms per token misses the {target:,g} ms target")
        ttft = num(sc.metrics.ttft_ms_p95, math.nan)
        if (
            ttft_applies
            and target_ttft_ms is not None
            and math.isfinite(ttft)
            and ttft > target_ttft_ms * (1.0 + TIE_BAND)
        ):
            sc.violations.append(
                f"{first_token(ttft)} p95 time to first token misses the {target_ttft_ms:,g} ms "
                "target"
                if not over_capacity_ms(ttft)
                else f"at the asked load {over_capacity_wait} (target {target_ttft_ms:,g} ms)"
            )
        if budget is not None and sc.capex_usd > budget:
            sc.violations.append(
                f"its network costs {usd(sc.capex_usd)}, over the {usd(budget)} budget"
            )
    return notes


CUT_ORDER: dict[str, int] = {
    "oversubscribed": 1,
    "single_switch": 1,
    "extra_tier": 1,
    "nic_vendor": 1,
    "kv_tcp": 1,
    "nic_speed": 2,
    "fewer_nics": 3,
}
"""What an architect gives up, in order, when the budget rules out field practice (after
trimming the storage / in-band network, done before candidates are compared): first
oversubscription above the rail-local leaf (Meta oversubscribes between zones, Llama 3
paper 7:1), then NIC speed, and only last one NIC per GPU (FIELD_PRACTICE "Budgets")."""


def cut_level(sc: Scored) -> int:
    """How deep a design cuts into field practice (0: none; see :data:`CUT_ORDER`)."""
    return max((CUT_ORDER.get(code, 1) for code in sc.departures), default=0)


def fastest_nics(pool: list[Scored]) -> list[Scored]:
    """NIC speed is cut only as far as the budget needs: of designs that cut it, those with
    the fastest NIC that still fits (FIELD_PRACTICE "Budgets": one NIC per GPU kept, NIC speed
    cut last; 8 x 200G before 16 x 25G, which the tie band alone would let win on unit cost)."""
    top = max(sc.cand.nic_gbps for sc in pool)
    return [sc for sc in pool if sc.cand.nic_gbps == top]


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
    one_time, risk = skill_cost(facts, fabric)
    return risk + (1e-9 if one_time > 0 else 0.0)


def vendor_key(facts: JobFacts, sc: Scored) -> tuple[int, int, int]:
    """Vendor match, best first, as a tuple that does not depend on the cluster's size.

    1. the platform's reference fabric class, where the platform's vendor makes the
       reference NIC (NVIDIA servers: the DGX / Spectrum-X design; MI325X: AMD Pollara on
       Ethernet; Gaudi 3: its integrated RoCE ports).  Where the reference NIC comes from
       another vendor (MI300X: ConnectX-7, used on InfiniBand by Azure and on RoCE by other
       clouds; AMD publishes Ethernet NICs too), the platform does not fix the class;
    2. the NIC: the platform's reference (0), a NIC its vendor publishes (1), another (2);
    3. the switch: of the NIC's or the platform's vendor (0), another (1).
    """
    p = facts.platform
    c = sc.cand
    own = p.reference_nic is not None and p.reference_nic.vendor == p.vendor
    return (
        1 if own and c.fabric != p.reference_fabric else 0,
        p.nic_standing(c.nic),
        1 if c.switch.vendor not in (c.nic.vendor, p.vendor) else 0,
    )


def vendor_score(facts: JobFacts, sc: Scored) -> int:
    """:func:`vendor_key` as one number with the same order (lower matches better)."""
    fabric, nic, switch = vendor_key(facts, sc)
    return fabric * 6 + nic * 2 + switch


LEAF_SPINE_PORTS: Final = 3
"""Switch ports a non-blocking two-tier fabric spends per endpoint (leaf down, leaf up, spine
down); at r:1 oversubscription 1 + 2/r."""


def unit_cost_per_server(sc: Scored) -> float:
    """The design family's network price per server, independent of the cluster's size:
    its compute links x (the NIC's price per link + the switch's price per port x the ports a
    two-tier leaf/spine spends per endpoint).  Optics and cables are left out (every family
    at one speed needs the same two links per endpoint in a two-tier fabric)."""
    c = sc.cand
    per_link_nic = c.nic.unit_price_usd / max(1, c.nic.links)
    per_port = c.switch.unit_price_usd / max(1, c.radix)
    ports = 1.0 + 2.0 / max(1.0, c.oversubscription)
    return c.nics_per_node * (per_link_nic + per_port * ports)


_TIE_KEYS: tuple[tuple[str, Callable[[JobFacts, Scored], Any]], ...] = (
    ("field practice", lambda facts, sc: len(sc.departures)),
    ("team skills", lambda facts, sc: skills_gap(facts, sc.cand.fabric)),
    ("vendor match", vendor_key),
    ("unit cost per server", lambda facts, sc: round(unit_cost_per_server(sc), 2)),
    # higher radix first: it grows further in fewer tiers
    ("switch radix", lambda facts, sc: -sc.cand.radix),
    ("network capex", lambda facts, sc: round(sc.capex_usd, 2)),
    ("life cost", lambda facts, sc: sc.decision_usd),
)
TIE_BREAK_ORDER: tuple[str, ...] = tuple(name for name, _ in _TIE_KEYS)
"""The documented tie-break order (docs/MODEL.md 14.5), each name with its key above.

The keys before network capex do not depend on the cluster's size, so among tied designs the
same family wins at every size: the fabric class changes only where the designs stop being
tied (one is faster or cheaper beyond the bands), not where two families' capex lines cross
at their tier boundaries (capex first flipped 14 of the audit's training ladders)."""


def tie_key(facts: JobFacts, sc: Scored) -> tuple[Any, ...]:
    """The design's tie-break key, in :data:`TIE_BREAK_ORDER` (smaller is better)."""
    return tuple(key(facts, sc) for _, key in _TIE_KEYS)


def tied(a: Scored, b: Scored) -> bool:
    """Performance within the tie band and costs within the cost bands (:func:`cost_tied`).

    The GPU time a design wastes comes from its performance, so once two designs' step times
    are within the model's uncertainty their wasted-GPU-time difference is within it too and
    is not counted again.
    """
    return perf_tied(a, b) and cost_tied(a, b)


def strictly_tied(a: Scored, b: Scored) -> bool:
    """Tied in the plain sense: performance within the tie band and life costs within
    ``TIE_BAND`` of each other (no price-list allowance).  Only these are called "tied";
    a pick that costs more than that is stated as a premium (:func:`premium`)."""
    if not perf_tied(a, b):
        return False
    scale = max(abs(a.decision_usd), abs(b.decision_usd), 1e-12)
    return abs(a.decision_usd - b.decision_usd) <= TIE_BAND * scale


def premium(best: Scored, cheaper: Scored) -> Premium | None:
    """The pick's premium over ``cheaper`` when it costs more over the life beyond the tie
    band (None when it does not): capex and life cost, in USD and %, unrounded (the result's
    ``decision.premium_over`` rounds them and names the design)."""
    d_life = best.decision_usd - cheaper.decision_usd
    if d_life <= TIE_BAND * max(abs(best.decision_usd), abs(cheaper.decision_usd), 1e-12):
        return None
    d_capex = best.capex_usd - cheaper.capex_usd
    return Premium(
        capex_usd=d_capex,
        capex_pct=100.0 * d_capex / cheaper.capex_usd if cheaper.capex_usd > 0 else 0.0,
        life_usd=d_life,
        life_pct=100.0 * d_life / cheaper.decision_usd if cheaper.decision_usd > 0 else 0.0,
    )


def perf_tied(a: Scored, b: Scored) -> bool:
    """Performance equal within the model's uncertainty.

    Designs of one fabric class share every efficiency constant of the performance model
    and differ only in structure (NICs, oversubscription, tiers), so the +-``TIE_BAND``
    applies to their difference.  Designs of different classes rest on separately
    calibrated constants (RoCE vs InfiniBand bus bandwidth, in-network reduction, congestion
    control), each good to +-``TIE_BAND``: their estimates are equal while the two
    intervals overlap (|a - b| <= band x (a + b)).  Published measurements find tuned RoCE
    and InfiniBand equal (Meta SIGCOMM'24; the H20 RoCE vs InfiniBand test, 0.5 %)."""
    if a.cand.fabric == b.cand.fabric:
        return _within(a.perf, b.perf)
    x, y = a.perf, b.perf
    if not (math.isfinite(x) and math.isfinite(y)):
        return x == y
    return abs(x - y) <= TIE_BAND * (abs(x) + abs(y))


def tie_phrase(a: Scored, b: Scored) -> str:
    """The bands that make ``a`` and ``b`` tied, in words."""
    perf = f"+-{TIE_BAND * 100:.0f}% performance" + (
        " each" if a.cand.fabric != b.cand.fabric else ""
    )
    prices = f", +-{PRICE_UNCERTAINTY * 100:.0f}% prices" if price_lists_differ(a, b) else ""
    return f"within the model's uncertainty ({perf}{prices})"


TIE_RULE = (
    "designs are tied when their performance is within +-5 % (designs of different fabric "
    "classes: while their +-5 % intervals overlap) and their life costs within 5 %, plus "
    "+-20 % of the larger capex when their bills price different NIC or switch models (not "
    "between designs of different tiers above 65,536 NIC ports); at "
    "a tied life cost a design faster beyond that wins; ties break by "
    f"{', '.join(TIE_BREAK_ORDER[:-1])}, then {TIE_BREAK_ORDER[-1]} (docs/MODEL.md 14.5)"
)
"""The tie rule in one sentence (result assumptions)."""


def price_lists_differ(a: Scored, b: Scored) -> bool:
    """The two designs' bills price different NIC or switch models (separate estimates)."""
    return a.cand.nic.sku != b.cand.nic.sku or a.cand.switch.sku != b.cand.switch.sku


def cost_band(a: Scored, b: Scored) -> float:
    """How far apart two designs' life costs may be and still be equal: ``TIE_BAND`` of the
    larger life cost, plus ``PRICE_UNCERTAINTY`` of the larger capex when their bills price
    different NIC or switch models (each catalog price is an estimate good to +-20 %; two
    designs built from the same models differ only in quantities, which are exact)."""
    scale = max(abs(a.decision_usd), abs(b.decision_usd), 1e-12)
    band = TIE_BAND * scale
    if price_lists_differ(a, b) and not structural_saving(a, b):
        band += PRICE_UNCERTAINTY * max(a.capex_usd, b.capex_usd)
    return band


STRUCTURAL_MIN_ENDPOINTS: Final = 65_537
"""Above the largest three-tier fat tree of 64-port switches (k^3/4 = 65,536 NIC ports), a
design with fewer switch tiers is compared on cost without the price-list allowance
(``structural_saving``)."""


def structural_saving(a: Scored, b: Scored) -> bool:
    """The two designs differ in structure, not only in list prices: at very large sizes (at
    least ``STRUCTURAL_MIN_ENDPOINTS`` NIC ports) one needs fewer switch tiers, saving a tier
    of switches and optics for every endpoint, which +-20 % price noise does not undo; the
    published clusters of that size chose the shallower fabric (the 100k-GPU Spectrum-X
    cluster at three tiers where 64-port InfiniBand needs four; multi-plane fat trees)."""
    big = max(a.topo.endpoints, b.topo.endpoints) >= STRUCTURAL_MIN_ENDPOINTS
    return big and a.topo.tiers != b.topo.tiers


def cost_tied(a: Scored, b: Scored) -> bool:
    """The cost half of :func:`tied`, symmetric in ``a`` and ``b``: the life costs, or the
    costs that do not follow from performance (network capex, power, operations), differ by
    less than :func:`cost_band`."""
    band = cost_band(a, b)
    if abs(a.decision_usd - b.decision_usd) <= band:
        return True
    fixed_a = a.decision_usd - a.life.gpu_time_wasted_usd
    fixed_b = b.decision_usd - b.life.gpu_time_wasted_usd
    return abs(fixed_a - fixed_b) <= band


def _within(x: float, y: float) -> bool:
    if not (math.isfinite(x) and math.isfinite(y)):
        return x == y
    return abs(x - y) <= TIE_BAND * max(abs(x), abs(y), 1e-12)


def fastest_group(pool: list[Scored]) -> list[Scored]:
    """The designs performance-tied with the fastest of ``pool`` and with the fastest of their
    own fabric class (a design tied with another class's fastest through the two classes'
    overlapping intervals, but slower beyond the band than a design of its own class, is
    not tied: that design of its class is better)."""
    fastest = min(pool, key=lambda sc: (sc.perf, sc.decision_usd))
    by_class: dict[str, Scored] = {}
    for sc in pool:
        top = by_class.get(sc.cand.fabric)
        if top is None or sc.perf < top.perf:
            by_class[sc.cand.fabric] = sc
    return [sc for sc in pool if perf_tied(sc, fastest) and perf_tied(sc, by_class[sc.cand.fabric])]


def serving_rate_short(facts: JobFacts, sc: Scored, reference: Metrics | None) -> str | None:
    """The one rule for a fabric sized by its serving traffic (:attr:`JobFacts.serving_sized`),
    or None when the design keeps it: it must serve, within the targets and within the tie
    band, what the same deployment serves on the reference network (``reference``, the
    caller's metrics of it): for KV caches alone the network the decision buys for that stream
    and weighs the pools on, one RDMA NIC per server at the reference speed
    (:func:`advisor.engine.model.serving.pools.kv_design`); for pipeline activations, whose
    deployment was planned on one NIC per GPU, that network (docs/MODEL.md 15.2, "A serving
    fabric sized for serving traffic").  TCP, fewer or slower NICs and oversubscription are
    allowed only so far: a cheaper KV fabric that caps the deployment would serve less on more
    servers than a smaller cluster.  When the reference serves nothing within the targets (the
    GPUs miss them at any rate, said in the notes), the rate it serves at the offered load is
    the bar instead.  None too while the design's figure is not computed (the rate within the
    targets is computed only for the designs the caller asks about)."""
    if reference is None or not (facts.held_to_reference and facts.needs_compute_fabric):
        return None
    bar = reference.max_requests_per_s_at_target
    rate = sc.metrics.max_requests_per_s_at_target
    what = "within the targets"
    if bar is not None and bar <= 0.0:
        bar = reference.requests_per_s
        rate = sc.metrics.requests_per_s
        what = "at the offered load"
    if rate is None or bar is None or bar <= 0.0 or rate >= (1.0 - TIE_BAND) * bar:
        return None
    if facts.tp_crosses:
        return (
            f"it serves {significant(rate)} requests/s {what}, against {significant(bar)} on "
            "one InfiniBand NIC per GPU: its network slows the tensor-parallel all-reduces "
            "between the servers, which every token waits for"
        )
    if not facts.kv_only:
        return (
            f"it serves {significant(rate)} requests/s {what}, against {significant(bar)} on "
            "one RDMA NIC per GPU: its network caps the pipeline between the servers"
        )
    return (
        f"it serves {significant(rate)} requests/s {what}, against {significant(bar)} on one "
        f"RDMA NIC per server: its KV transfer{' over TCP' if sc.cand.fabric == ETHERNET else ''} "
        "caps the deployment"
    )


def cost_first(facts: JobFacts) -> bool:
    """The customer asks for the least cost and allows oversubscription: the choice is made
    among every feasible design by life cost (mode ``cost_preference``)."""
    return facts.prefer == "cost" and facts.allow_oversubscription


def choice_pool(facts: JobFacts, scored: list[Scored]) -> tuple[list[Scored], str] | None:
    """The designs the choice is made among and its mode (:class:`Choice`), or None when no
    design is feasible (the choice is then over budget or a fallback)."""
    feasible = [sc for sc in scored if sc.feasible]
    practice = [sc for sc in feasible if sc.field_practice]
    if cost_first(facts) and feasible:
        return feasible, "cost_preference"
    if practice:
        return practice, "field_practice"
    if not feasible:
        return None
    # the shallowest cut that fits: oversubscription before NIC speed before NIC count
    level = min(cut_level(sc) for sc in feasible)
    pool = [sc for sc in feasible if cut_level(sc) == level]
    if level == CUT_ORDER["nic_speed"]:
        pool = fastest_nics(pool)
    return pool, "constraints_forced"


def rate_capped(facts: JobFacts, sc: Scored, pool: list[Scored]) -> str | None:
    """The rule for the departures the constraints force on a serving fleet, or None when
    ``sc`` keeps it: of the departures the choice is made among (``pool``, mode
    ``constraints_forced``: no field-practice design meets the constraints), a design must
    serve, within the p95 targets, within ``TIE_BAND`` of the best of them on its own fabric
    class.  Designs of one class share every efficiency constant and differ only in structure
    (oversubscription, NICs, tiers, planes), so a gap beyond the band is what the departure
    costs the fleet (:func:`perf_tied`; between classes, the cost comparison decides as
    before).  Life cost prices the GPU time a network wastes at the offered load; a departure
    that meets the targets at that load but not a little above it caps the fleet's rate within
    them, and the servers above that rate serve nothing within the targets.  DeepSeek-V3 on
    16,384 A100 servers, where no three-tier non-blocking fabric of 40-port HDR switches fits:
    the 2:1 three-tier design serves 11,908 requests/s within the targets, the non-blocking
    four-tier one 43,351 (8,192 servers: 21,676); docs/MODEL.md 14.5.  A deployment whose
    only cross-server traffic is KV caches or pipeline activations keeps its own rule
    (:func:`serving_rate_short`, held to its reference network), so None for it,
    and None too while a rate is not computed."""
    rate = sc.metrics.max_requests_per_s_at_target
    if not facts.inference or facts.serving_sized or rate is None:
        return None
    same = [
        d
        for d in pool
        if d.cand.fabric == sc.cand.fabric and d.metrics.max_requests_per_s_at_target is not None
    ]
    if not same:
        return None
    best = max(same, key=lambda d: num(d.metrics.max_requests_per_s_at_target))
    bar = num(best.metrics.max_requests_per_s_at_target)
    if bar <= 0.0 or rate >= (1.0 - TIE_BAND) * bar:
        return None
    own = [code for code in sc.departures if code not in best.departures]
    what = (
        "the departure"
        + ("s (" if len(own) > 1 else " (")
        + "; ".join(departure_phrase(facts, sc, code) for code in own)
        + (") cap" if len(own) > 1 else ") caps")
        if own
        else "its structure caps"
    )
    return (
        f"it serves {significant(rate)} requests/s within the targets, against "
        f"{significant(bar)} on the {fabric_label(best.cand.fabric)} design with "
        f"{'; '.join(departure_phrase(facts, best, code) for code in best.departures)}: "
        f"{what} the fleet's rate"
    )


def most_served(facts: JobFacts, scored: list[Scored]) -> list[Scored]:
    """Of serving designs that all fall short, those that serve the most requests/s at the
    offered load (within ``TIE_BAND`` of the best): a fleet that falls short is judged first by
    what it serves, and only then by how many targets it misses and by its price.  A design
    that saturates earlier reads a shorter time per token at its own, lower served rate, so
    counting missed targets alone picked it: GPT-3 175B disaggregated on 3 H100 PCIe servers
    took 2 x 25G TCP serving 0.259 requests/s (its KV links full) over 1 x 400G InfiniBand
    serving 0.742 (docs/MODEL.md 15.2).  Training designs (and serving designs without a
    served rate) are all kept."""
    rates = [num(sc.metrics.requests_per_s) for sc in scored]
    if not facts.inference or max(rates, default=0.0) <= 0.0:
        return scored
    bar = (1.0 - TIE_BAND) * max(rates)
    return [sc for sc, rate in zip(scored, rates, strict=True) if rate >= bar]


def served_short(sc: Scored, best: Scored) -> str:
    """Why a serving design that serves beyond ``TIE_BAND`` less than ``best``, the design
    that serves the most at the offered load (:func:`most_served`), is ruled out, with the
    figures."""
    return (
        f"it serves {significant(num(sc.metrics.requests_per_s))} requests/s at the offered "
        f"load, against {significant(num(best.metrics.requests_per_s))} on the "
        f"{fabric_label(best.cand.fabric)} design: its network caps the fleet"
    )


def choose(facts: JobFacts, scored: list[Scored]) -> Choice:
    chosen = choice_pool(facts, scored)
    if chosen is not None:
        pool, mode = chosen
    else:
        needs = [sc for sc in scored if only_budget(sc)]
        # what the job needs: RDMA and its targets, built as the published designs build it
        needs = [sc for sc in needs if sc.field_practice] or needs
        if needs and facts.network_budget_usd is not None:
            least = min(sc.capex_usd for sc in needs)
            band = [sc for sc in needs if sc.capex_usd <= least * (1 + 1e-9)]
            best = min(band, key=lambda sc: tie_key(facts, sc))
            return Choice(best, "over_budget")
        pool = most_served(facts, scored)
        fewest = min(len(sc.violations) for sc in pool)
        pool = [sc for sc in pool if len(sc.violations) == fewest]
        best = min(pool, key=lambda sc: (sc.capex_usd, tie_key(facts, sc)))
        return Choice(best, "fallback")
    if facts.prefer == "performance":
        band = fastest_group(pool)
    else:
        # the least life cost, and every design whose life cost ties with it; among those
        # the fastest group (a design faster beyond the uncertainty at a tied cost is better,
        # not tied), then the tie-break order
        anchor = min(pool, key=lambda sc: (sc.decision_usd, sc.perf))
        band = fastest_group([sc for sc in pool if sc is anchor or cost_tied(sc, anchor)])
    if mode == "cost_preference":
        # the customer asked for the least cost and allowed departures: the tied design that
        # costs least over the life, the tie-break order only between equal costs (field
        # practice first would hand every tie back to the non-blocking design: docs/MODEL.md
        # 14.3)
        best = min(band, key=lambda sc: (round(sc.decision_usd, 2), tie_key(facts, sc)))
    else:
        best = min(band, key=lambda sc: tie_key(facts, sc))
    return Choice(best, mode, [sc for sc in band if sc is not best])
