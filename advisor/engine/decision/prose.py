"""Everything the recommendation says in words: headline, rationale, reference-design line,
``why_not`` of every option, break-even statements and the uncertainty ranges.

Rules: a sentence never contradicts the pick, never compares a number with itself
(figures that print the same are called the same), and a break-even is quoted only when it
lies outside the price (+-20 %) and performance (+-5 %) uncertainty.
"""

from __future__ import annotations

import math
from typing import Final

from advisor.engine.decision.candidates import Candidate, fabric_title
from advisor.engine.decision.cost import PRICE_UNCERTAINTY, gpu_hour_cost_usd
from advisor.engine.decision.job_facts import JobFacts, ServingAsk
from advisor.engine.decision.policy import (
    RISKS,
    Choice,
    cost_first,
    departure_phrase,
    premium,
    price_lists_differ,
    skills_gap,
    tie_phrase,
    tied,
    unit_cost_per_server,
    vendor_score,
)
from advisor.engine.decision.pricing import Scored
from advisor.engine.decision.util import num, rounded
from advisor.engine.facts.constants import over_capacity_ms
from advisor.engine.facts.formatting import (
    first_token_over_capacity,
    megabytes,
    percent_in_text,
    significant,
    usd,
    usd_cents,
)
from advisor.engine.facts.vocabulary import (
    TEAM_SKILLS,
    fabric_label,
    scale_up_domain,
    tiers_in_words,
)
from advisor.engine.model.topology import TopologySize
from advisor.engine.result.records import (
    Band,
    BreakEven,
    Budget,
    Metrics,
    ReferenceDesign,
    Uncertainty,
)

MAX_PRICE_FACTOR: Final = 2.0
"""A network price break-even is quoted only up to a doubling of prices (beyond that it is
not a plausible market move)."""


def team(facts: JobFacts) -> str:
    return TEAM_SKILLS[facts.team_skills].team


def perf_str(facts: JobFacts, perf: float) -> str:
    return f"{perf:.1f} ms/token" if facts.inference else f"{perf:.2f} s/step"


def same_text(facts: JobFacts, first: float, second: float) -> bool:
    return perf_str(facts, first) == perf_str(facts, second)


def topo_phrase(topo: TopologySize) -> str:
    if topo.tiers == 1:
        return "single switch"
    rail = "rail-optimized " if topo.rail_optimized else ""
    ratio = (
        "non-blocking"
        if topo.oversubscription <= 1.0
        else f"{topo.oversubscription:g}:1 oversubscribed"
    )
    planes = f"{topo.planes}-plane " if topo.planes > 1 else ""
    return f"{ratio} {rail}{planes}{tiers_in_words(topo.tiers)}"


def _layout_phrase(topo: TopologySize) -> str:
    """The fabric's shape and switch count ("non-blocking rail-optimized leaf-spine with 8 leaf
    and 4 spine switches"); one switch is said once ("single switch", not "with 1 switch")."""
    if topo.tiers == 1 and topo.leaf_switches <= 1:
        return topo_phrase(topo)
    if topo.tiers == 1:
        per_plane = ", one per plane" if topo.planes == topo.leaf_switches else ""
        return f"{switch_counts(topo)}{per_plane}"
    return f"{topo_phrase(topo)} with {switch_counts(topo)}"


def spread_sentence(topo: TopologySize) -> str:
    """How each full leaf's ports are used and spread over the spines (two tiers or more)."""
    if topo.tiers < 2:
        return ""
    plane = " of its plane" if topo.planes > 1 else ""
    links = topo.links_per_leaf_spine
    rate = (
        "every leaf pair gets line rate"
        if topo.oversubscription <= 1.0
        else f"every leaf pair gets 1/{topo.oversubscription:g} of line rate"
    )
    ply = ""
    if topo.links_per_rail > 1:
        ply = (
            f" Each server puts its {topo.links_per_rail} links of a rail (ply) on one leaf as "
            f"whole multi-link cages, {topo.leaf_servers} servers per full leaf, so no cage is "
            "split over leaves."
        )
    return (
        f" Each full leaf has {topo.leaf_downlinks} ports down and {topo.leaf_uplinks} up, "
        f"{links} link{'s' if links != 1 else ''} to every spine{plane}, so {rate}.{ply}"
    )


def departures_phrase(facts: JobFacts, design: Scored) -> str:
    """Every way the design departs from field practice, in words, joined by semicolons."""
    return "; ".join(departure_phrase(facts, design, departure) for departure in design.departures)


def switch_counts(topo: TopologySize) -> str:
    leaf, spine, core = topo.leaf_switches, topo.spine_switches, topo.core_switches
    if topo.tiers == 1:
        return "1 switch" if leaf <= 1 else f"{leaf:,} switches"
    if topo.tiers == 2:
        return f"{leaf:,} leaf and {spine:,} spine switches"
    superspine = topo.superspine_switches
    if superspine:
        return (
            f"{leaf:,} leaf, {spine:,} spine, {core:,} core and {superspine:,} super-spine switches"
        )
    return f"{leaf:,} leaf, {spine:,} spine and {core:,} core switches"


def design_phrase(scored: Scored) -> str:
    candidate = scored.cand
    nic = candidate.nic.description.split(" (")[0]
    return (
        f"{fabric_title(candidate.fabric, candidate.nic_gbps)}, "
        f"{candidate.nics_per_node} x {candidate.nic_gbps}G per server ({nic}) on a "
        f"{topo_phrase(scored.topo)} of {candidate.switch.description.split(' (')[0]}"
    )


# --------------------------------------------------------------------- reference design


def reference_design(facts: JobFacts, scored: Scored) -> ReferenceDesign:
    platform = facts.platform
    phrases = [departure_phrase(facts, scored, code) for code in scored.departures]
    notes: list[str] = []
    if scored.cand.fabric != platform.reference_fabric:
        notes.append(
            f"{fabric_label(scored.cand.fabric)} where the reference uses "
            f"{fabric_label(platform.reference_fabric)} (both are field practice)"
        )
    if scored.topo.tiers == 1:
        notes.append("one switch: no spine redundancy at this size")
    c = scored.cand
    # fewer or slower NICs are no departure for a serving fabric sized by its traffic, but the
    # answer does not match the (training) reference: said, not flagged
    sized = facts.serving_sized and below_training_fabric(facts, c) and not phrases
    if sized:
        text = (
            f"Reference design: {platform.reference_design}; this serving fabric is sized for "
            f"its traffic and differs in its NICs: {c.nics_per_node} x {c.nic_gbps}G per server "
            f"instead of {platform.reference_count} x {platform.reference_gbps}G (one NIC per "
            "GPU, for training)" + (f" ({'; '.join(notes)})." if notes else ".")
        )
    elif phrases:
        text = (
            f"Reference design: departs from {platform.reference_design}: "
            + "; ".join(phrases)
            + "."
        )
    else:
        text = f"Reference design: matches {platform.reference_design}" + (
            f" ({'; '.join(notes)})." if notes else "."
        )
    return ReferenceDesign(
        name=platform.reference_design,
        matches=not phrases and not sized,
        departures=tuple(phrases),
        notes=tuple(notes),
        statement=text,
        sized_for_serving=sized,
    )


def no_fabric_reference(facts: JobFacts) -> ReferenceDesign:
    """The reference design of an answer without a compute fabric, in the platform's own words:
    the job's scale-up domain and links, and the compute fabric the platform's reference takes
    once a job spans domains (it read "an NVLink domain stays on NVLink" on AMD and Intel)."""
    domain = scale_up_domain(max(facts.domain_gpus, facts.gpus_per_node), facts.gpus_per_node)
    return ReferenceDesign(
        name="no compute fabric: storage / in-band and out-of-band networks only",
        matches=True,
        departures=(),
        notes=(),
        statement=f"Reference design: a job inside one scale-up domain (here one {domain}, its "
        f"GPUs joined by {facts.platform.scale_up}) or independent replicas needs only the "
        "storage / in-band and management networks, each a separate network (NVIDIA DGX "
        "SuperPOD reference architecture); a job spanning domains takes the platform's "
        f"compute fabric: {facts.platform.reference_design}.",
    )


def below_training_fabric(facts: JobFacts, cand: Candidate) -> bool:
    """Whether a design's NIC bandwidth per server is below the platform's training
    reference (one NIC per GPU at the reference speed)."""
    p = facts.platform
    return cand.nics_per_node * cand.nic_gbps < p.reference_count * p.reference_gbps


# ------------------------------------------------------------------------------ headline


def _seconds(value_s: float) -> str:
    return f"{value_s:,.0f} s" if value_s >= 100 else f"{significant(value_s)} s"


def _needed_rate(ask: ServingAsk) -> float:
    """The requests/s the asked load needs within the latency targets: the asked rate, or a
    closed loop's users each completing a request in TTFT + output x time per token at the
    targets (docs/MODEL.md 15.2)."""
    if ask.requests_per_s is not None:
        return ask.requests_per_s
    cycle_s = ask.target_ttft_ms / 1e3 + ask.output_tokens * ask.target_ms_per_token / 1e3
    return ask.users / cycle_s


def serving_shortfall(facts: JobFacts, metrics: Metrics) -> str:
    """The headline's serving sentence when the recommended design serves less than asked or
    misses a latency target (docs/MODEL.md 15.2): the numbers, and what would meet them."""
    ask = facts.serving
    if ask is None or metrics.meets_latency_targets is None:
        return ""
    saturated = bool(metrics.load_saturated)
    meets = bool(metrics.meets_latency_targets)
    if meets and not saturated:
        return ""
    served = float(metrics.requests_per_s or 0.0)
    at_target = float(metrics.max_requests_per_s_at_target or 0.0)
    ttft = float(metrics.ttft_ms_p95 or 0.0)
    tpot = float(metrics.ms_per_token_p95 or 0.0)
    parts: list[str] = []
    if saturated:
        asked = (
            f"of the {significant(ask.requests_per_s)} asked"
            if ask.requests_per_s is not None
            else f"for {ask.users:,} users"
        )
        parts.append(f"it serves {significant(served)} requests/s {asked}, at capacity")
    if over_capacity_ms(ttft):
        parts.append(first_token_over_capacity(ask.closed_loop))
    elif ttft > ask.target_ttft_ms:
        parts.append(
            f"p95 time to first token {_seconds(ttft / 1e3)} against the "
            f"{_seconds(ask.target_ttft_ms / 1e3)} target"
        )
    if tpot > ask.target_ms_per_token:
        parts.append(
            f"p95 {tpot:,.0f} ms per token against the {ask.target_ms_per_token:,g} ms target"
        )
    if not parts:
        return ""
    servers_text = f"{facts.nodes:,} server{'s' if facts.nodes != 1 else ''}"
    text = f"Serving falls short with {ask.shape} on {servers_text}: " + "; ".join(parts)
    need = _needed_rate(ask)
    if at_target > 0:
        servers = max(facts.nodes + 1, math.ceil(facts.nodes * need / at_target))
        servers = math.ceil(servers / ask.servers_per_copy) * ask.servers_per_copy
        load = (
            f"{significant(need)} requests/s"
            if ask.requests_per_s is not None
            else f"the {ask.users:,} users ({significant(need)} requests/s at the targets)"
        )
        text += (
            f". Within the targets it serves up to {significant(at_target)} requests/s; "
            f"about {servers:,} servers of the same deployment would carry {load}"
        )
    else:
        # a wider tensor-parallel group only where the scenario fixed its own: the search
        # weighed every wider replica it had and none served more within the targets
        smaller = (
            f", a smaller precision ({ask.smaller_precision})" if ask.smaller_precision else ""
        )
        wider = (
            f"a larger tensor-parallel group (TP{2 * ask.tp}) or a faster GPU than the "
            f"{ask.gpu_name}"
            if ask.tp_given and ask.tp < facts.gpus_per_node
            else f"a faster GPU than the {ask.gpu_name}{smaller} or shorter prompts"
        )
        text += f". No load meets the targets with this deployment: {wider} would"
    return text + _release_clause(facts, at_target) + "."


def _release_clause(facts: JobFacts, at_target: float) -> str:
    """The shortfall's clause naming the publisher's smaller release (``ServingAsk.release``,
    ``decision.release``) where it serves more within the targets on the same servers."""
    ask = facts.serving
    assert ask is not None
    served = ask.release_served
    if not ask.release or served is None or served.rate <= at_target:
        return ""
    servers = (
        "the same server serves" if facts.nodes == 1 else f"the same {facts.nodes:,} servers serve"
    )
    return (
        f"; serving the publisher's {ask.release} release instead (precision {ask.release}), "
        f"{servers} up to {significant(served.rate)} requests/s within them"
        + (
            " with no GPU compute fabric"
            if facts.needs_compute_fabric and not served.needs_fabric
            # the release's own deployment spans servers: said, where this answer buys none
            else ", its deployment across servers needing a GPU compute fabric this answer "
            "does not buy"
            if served.needs_fabric and not facts.needs_compute_fabric
            else ""
        )
    )


HEADROOM_FACTOR: Final = 2.0
"""A serving answer says its headroom when the fleet serves at least this many times the asked
rate within both p95 targets (more than half of what it can serve at target stands idle)."""


def serving_headroom(facts: JobFacts, metrics: Metrics) -> str:
    """The rationale's sentence for a serving fleet far larger than its load
    (:data:`HEADROOM_FACTOR`), the mirror of :func:`serving_shortfall`: what it serves within
    the targets against the load (the asked rate, or the rate a closed loop's users ask of
    this fleet, the first screen's "Users at once"), and the whole copies of the same
    deployment (``ServingAsk.servers_per_copy``) that would carry it, when fewer than the
    cluster's servers (docs/MODEL.md 15.2, "Headroom"). Empty for an answer that falls short,
    a fleet with no copy to spare, or a deployment that is not whole copies
    (``ServingAsk.whole_copies``: fewer servers do not serve proportionally less)."""
    ask = facts.serving
    if ask is None or not ask.whole_copies:
        return ""
    if metrics.load_saturated or not metrics.meets_latency_targets:
        return ""
    at_target = float(metrics.max_requests_per_s_at_target or 0.0)
    need = ask.requests_per_s if ask.requests_per_s is not None else num(metrics.requests_per_s)
    if need <= 0 or at_target < HEADROOM_FACTOR * need:
        return ""
    copy = ask.servers_per_copy
    servers = max(copy, math.ceil(math.ceil(facts.nodes * need / at_target) / copy) * copy)
    if servers >= facts.nodes:
        return ""
    load = (
        f"the {significant(need)} asked"
        if ask.requests_per_s is not None
        else f"the {significant(need)} requests/s the {ask.users:,} users ask of them"
    )
    fleet = (
        f"Headroom: within both p95 targets these {facts.nodes:,} servers serve up to "
        f"{significant(at_target)} requests/s, {at_target / need:,.1f} x {load}"
    )
    carried = (
        f"{significant(need)} requests/s within them"
        if ask.requests_per_s is not None
        else "the users within the targets"
    )
    return (
        f"{fleet}; about {servers:,} server{'s' if servers != 1 else ''} of the same "
        f"deployment would carry {carried}."
    )


def headline(facts: JobFacts, choice: Choice, budget_info: Budget | None) -> str:
    scored = choice.best
    life = scored.life
    base = (
        f"{design_phrase(scored)}: {usd(scored.capex_usd)} of network; "
        f"{usd(life.total_usd)} over its {life.years:g}-year life"
    )
    if choice.mode == "over_budget" and facts.network_budget_usd is not None:
        buys = ""
        if budget_info is not None and budget_info.budget_buys is not None:
            second = budget_info.budget_buys
            buys = f" The budget would buy {second.design} ({second.slowdown_text})."
        elif budget_info is not None:
            buys = (
                " The budget does not cover even the storage and management networks "
                f"({usd(num(budget_info.north_south_capex_usd))})."
            )
        return _with_shortfall(
            facts,
            scored,
            f"No design fits the {usd(facts.network_budget_usd)} network budget: the least "
            f"expensive design that meets the job's needs is {design_phrase(scored)} at "
            f"{usd(scored.capex_usd)} of network.{buys}",
        )
    if choice.mode == "cost_preference" and scored.departures:
        return _with_shortfall(
            facts,
            scored,
            "Cost-first alternative (prefer=cost, allow_oversubscription), departing from field "
            f"practice ({departures_phrase(facts, scored)}): {base}.",
        )
    if choice.mode == "constraints_forced" and scored.departures:
        why = "the budget" if facts.network_budget_usd is not None else "the constraints"
        return _with_shortfall(
            facts,
            scored,
            f"Only a departure from field practice fits {why} "
            f"({departures_phrase(facts, scored)}): {base}.",
        )
    return _with_shortfall(facts, scored, f"{base}.")


def _with_shortfall(facts: JobFacts, scored: Scored, head: str) -> str:
    note = serving_shortfall(facts, scored.metrics)
    return f"{head} {note}" if note else head


# ----------------------------------------------------------------------------- rationale


def _kv_sizing_sentence(facts: JobFacts, best: Scored) -> str:
    """Disaggregated serving whose instances each fit a domain: only KV caches cross servers,
    so the fabric is sized by that stream at the offered load (docs/MODEL.md 15.2)."""
    ask = facts.serving
    rate = num(best.metrics.requests_per_s)
    kv_bytes = ask.kv_bytes_per_request if ask is not None else 0.0
    per_server = rate * kv_bytes / max(1, facts.nodes)
    kv_ms = num(best.metrics.kv_transfer_ms)
    c = best.cand
    text = (
        f"Prefill and decode run on {ask.pools if ask is not None else 'separate servers'}, "
        f"so each request's KV cache ({megabytes(kv_bytes)}) crosses the network once, not "
        f"every token: {significant(per_server / 1e9, 2)} GB/s per server at "
        f"{significant(rate)} requests/s. "
        + (
            f"The fabric is sized for that serving traffic: {c.nics_per_node} x {c.nic_gbps}G "
            f"{fabric_label(c.fabric)} per server moves a cache in {kv_ms:,.0f} ms"
            if not over_capacity_ms(kv_ms)
            else f"The fabric, {c.nics_per_node} x {c.nic_gbps}G {fabric_label(c.fabric)} per "
            "server, cannot move the caches as fast as the asked load sends them (their queue "
            "grows without bound; the headline says what would carry the load)"
        )
        + f" and decodes at {best.perf:.1f} ms per token"
        + (
            f" against the {facts.target_ms_per_token:,g} ms target."
            if facts.target_ms_per_token
            else "."
        )
    )
    return text + _training_alternative(facts, best)


def _pipeline_sizing_sentence(facts: JobFacts, best: Scored) -> str:
    """A split model whose instances cross servers only between pipeline stages: per token a
    stage's activations cross, so the RDMA fabric is sized by that traffic at the offered load
    (docs/MODEL.md 15.2)."""
    ask = facts.serving
    shape = f" ({ask.shape})" if ask is not None else ""
    c = best.cand
    at_target = best.metrics.max_requests_per_s_at_target
    text = (
        f"The model is split across servers only between pipeline stages{shape}: per generated "
        "token a stage's activations cross the network, so the fabric must be RDMA and is "
        f"sized for that serving traffic: {c.nics_per_node} x {c.nic_gbps}G "
        f"{fabric_label(c.fabric)} per server decodes at {best.perf:.1f} ms per token"
        + (
            f" against the {facts.target_ms_per_token:,g} ms target"
            if facts.target_ms_per_token
            else ""
        )
        + (
            f" and serves up to {significant(num(at_target))} requests/s within the targets."
            if at_target is not None
            else "."
        )
    )
    return text + _training_alternative(facts, best)


def _training_alternative(facts: JobFacts, best: Scored) -> str:
    """The training fabric named beside a serving fabric with fewer or slower NICs."""
    p = facts.platform
    if not below_training_fabric(facts, best.cand):
        return ""
    return (
        f" If this cluster will also train, buy the training fabric instead: "
        f"{p.reference_count} x {p.reference_gbps}G RDMA per server (one NIC per GPU)."
    )


def rationale(facts: JobFacts, choice: Choice, scored: list[Scored]) -> list[str]:
    best = choice.best
    candidate = best.cand
    out: list[str] = []
    if facts.inference and facts.kv_only:
        out.append(_kv_sizing_sentence(facts, best))
    elif facts.inference and facts.pipeline_only:
        out.append(_pipeline_sizing_sentence(facts, best))
    elif facts.inference:
        out.append(
            f"The model is split across servers ({facts.nodes:,} servers, {facts.gpus:,} GPUs), so "
            "every generated token crosses the network and the fabric must be RDMA: the "
            f"recommended design decodes at {best.perf:.1f} ms per token"
            + (
                f" against the {facts.target_ms_per_token:,g} ms target."
                if facts.target_ms_per_token
                else "."
            )
        )
    else:
        out.append(
            f"The job spans {facts.nodes:,} servers ({facts.gpus:,} GPUs), so it needs an RDMA "
            f"compute fabric: the recommended design runs a step in {best.perf:.2f} s and "
            f"finishes the {best.cost.work} in {best.cost.gpu_hours:,.0f} GPU-hours."
        )
    out.append(reference_design(facts, best).statement)
    life = best.life
    out.append(
        f"Decision cost over the cluster's {life.years:g}-year life at "
        f"{facts.utilization * 100:.0f}% utilization: {usd(life.network_capex_usd)} network "
        f"capex + {usd(life.network_power_usd)} power + {usd(life.gpu_time_wasted_usd)} of GPU "
        f"time waiting on the network "
        f"({percent_in_text(best.metrics.gpu_idle_fraction)} idle)"
        + (f" + {usd(life.operations_usd)} operations" if life.operations_usd > 0.5 else "")
        + f" = {usd(life.total_usd)}."
    )
    topo = best.topo
    switch_name = candidate.switch.display_name
    out.append(
        f"{topo.endpoints:,} NIC ports on {switch_name} ({candidate.radix} ports at "
        f"{candidate.nic_gbps}G): {_layout_phrase(topo)}." + spread_sentence(topo)
    )
    out.extend(_class_sentences(facts, choice, scored))
    out.extend(_alternative_sentences(facts, best, scored))
    if best.ops_usd > 0.5:
        out.append(
            f"Team skills ({facts.team_skills}): {fabric_label(candidate.fabric)} carries "
            f"{usd(best.ops_usd)} of ramp-up and risk for {team(facts)}, included above."
        )
    if facts.network_budget_usd is not None and choice.mode != "over_budget":
        out.append(budget_sentence(facts.network_budget_usd, best, scored))
    return out


def budget_sentence(budget_usd: float, best: Scored, scored: list[Scored]) -> str:
    """What a binding network budget rules out, and what it costs: the field-practice design
    only the budget rules out that costs least over the life, where the pick costs more than
    it beyond the tie band (:func:`policy.premium`) - the GPU time the cheaper network leaves
    waiting. 1,024 B300 on a $3M budget wait 39 % of the time on 2 x 400G a server."""
    over = [design for design in scored if design.capex_usd > budget_usd]
    text = (
        f"The {usd(budget_usd)} network budget rules out {len(over)} of {len(scored)} designs; "
        f"the recommended network costs {usd(best.capex_usd)}."
    )
    priced_out = [d for d in over if only_the_budget(d) and not d.departures]
    if not priced_out:
        return text
    alt = min(priced_out, key=lambda design: design.decision_usd)
    cost = premium(best, alt)
    if cost is None:
        return text
    return (
        f"{text} Without it, {design_phrase(alt)} ({usd(alt.capex_usd)} of network) would cost "
        f"{usd(cost.life_usd)} less over the life: its GPUs wait on the network "
        f"{percent_in_text(alt.metrics.gpu_idle_fraction)} of the time, against "
        f"{percent_in_text(best.metrics.gpu_idle_fraction)}."
    )


def only_the_budget(scored: Scored) -> bool:
    """A design the network budget alone rules out."""
    return bool(scored.violations) and all("budget" in v for v in scored.violations)


def _class_sentences(facts: JobFacts, choice: Choice, scored: list[Scored]) -> list[str]:
    """One sentence per other fabric class, against its best field-practice design."""
    best = choice.best
    out: list[str] = []
    for fabric, alt in sorted(best_per_fabric(scored).items(), key=lambda kv: kv[0]):
        if fabric == best.cand.fabric:
            continue
        aname = f"{fabric_title(fabric, alt.cand.nic_gbps)} ({alt.cand.nics_per_node} x "
        aname += f"{alt.cand.nic_gbps}G, {alt.cand.switch.display_name})"
        if alt.violations:
            # a rule every design of the class breaks alike rules out the class, not one design
            alike = all(d.violations == alt.violations for d in scored if d.cand.fabric == fabric)
            name = fabric_label(fabric) if alike else aname
            out.append(f"{name} is ruled out: " + "; ".join(alt.violations) + ".")
            continue
        out.append(compare(facts, best, alt, aname))
    return out


def premium_sentence(facts: JobFacts, best: Scored, alt: Scored, aname: str) -> str | None:
    """The pick's premium over a cheaper design it was chosen over, in dollars and percent,
    with the reason; None when the pick is not dearer beyond the tie band."""
    prem = premium(best, alt)
    if prem is None:
        return None
    life = f"{usd(prem.life_usd)} ({prem.life_pct:.0f}%) more over the life"
    # the alternative is cheaper over the life; up front it can cost more (it wastes less GPU
    # time later): "is cheaper" beside "the recommendation costs less capex" read as a slip
    costs = (
        f"{aname} is cheaper: the recommendation costs {usd(prem.capex_usd)} "
        f"({prem.capex_pct:.0f}%) more network capex and {life}"
        if prem.capex_usd > 0.5
        else f"{aname} costs less over the life: the recommendation costs {life}, though "
        f"{usd(-prem.capex_usd)} less network capex"
    )
    speed = ""
    if not same_text(facts, alt.perf, best.perf):
        speed = f"; it runs at {perf_str(facts, alt.perf)} against {perf_str(facts, best.perf)}"
    why = tie_reason(facts, best, alt)
    noise = (
        f", and the two bills come from different price lists, each good to "
        f"+-{PRICE_UNCERTAINTY * 100:.0f}%"
        if price_lists_differ(best, alt)
        else ""
    )
    return (
        f"{costs}{speed}. That premium is paid for {why}{noise}; choose "
        f"{aname.split(' (')[0]} to save it."
    )


def compare(facts: JobFacts, best: Scored, alt: Scored, aname: str) -> str:
    """A sentence comparing an alternative with the pick that never contradicts it."""
    d_life = alt.decision_usd - best.decision_usd
    stated = premium_sentence(facts, best, alt, aname)
    if stated is not None:
        return stated
    if tied(best, alt):
        reason = tie_reason(facts, best, alt)
        return (
            f"{aname} is tied with the recommendation {tie_phrase(best, alt)} "
            f"(life cost {usd(alt.decision_usd)} vs {usd(best.decision_usd)}, "
            + (
                f"the same {perf_str(facts, best.perf)}"
                if same_text(facts, alt.perf, best.perf)
                else f"{perf_str(facts, alt.perf)} vs {perf_str(facts, best.perf)}"
            )
            + f"); the tie goes to the recommendation on {reason}."
        )
    speed = ""
    if not same_text(facts, alt.perf, best.perf):
        pct_slower = (alt.perf / best.perf - 1.0) * 100.0 if best.perf > 0 else 0.0
        speed = (
            f", {abs(pct_slower):.0f}% {'slower' if pct_slower > 0 else 'faster'} "
            f"({perf_str(facts, alt.perf)} vs {perf_str(facts, best.perf)})"
        )
    if d_life > 0:
        return f"{aname} would cost {usd(d_life)} more over the life{speed}."
    if alt.departures and not best.departures:
        return (
            f"{aname} would cost {usd(-d_life)} less over the life{speed}, but departs from "
            "field practice: " + departures_phrase(facts, alt) + "."
        )
    return (
        f"{aname} would cost {usd(-d_life)} less over the life{speed}; "
        f"prefer={facts.prefer} keeps the faster design."
    )


def tie_reason(facts: JobFacts, best: Scored, alt: Scored) -> str:
    if cost_first(facts) and round(best.decision_usd, 2) < round(alt.decision_usd, 2):
        return "life cost (the scenario prefers cost and allows oversubscription)"
    if len(best.departures) < len(alt.departures):
        return "field practice"
    if skills_gap(facts, alt.cand.fabric) > skills_gap(facts, best.cand.fabric):
        return f"team skills ({team(facts)})"
    if vendor_score(facts, best) < vendor_score(facts, alt):
        ref = facts.platform.reference_design.split(":")[0]
        return f"vendor match with the platform's reference design ({ref})"
    unit_best, unit_alt = unit_cost_per_server(best), unit_cost_per_server(alt)
    if round(unit_best, 2) < round(unit_alt, 2):
        return (
            f"unit cost ({usd(unit_alt - unit_best)} less per server in NICs and switch ports, "
            "at any cluster size)"
        )
    if best.cand.radix > alt.cand.radix:
        return (
            f"switch radix ({best.cand.radix} ports at {best.cand.nic_gbps}G against "
            f"{alt.cand.radix}: it grows further before another tier)"
        )
    if round(best.capex_usd, 2) < round(alt.capex_usd, 2):
        return f"network capex ({usd(alt.capex_usd - best.capex_usd)} less)"
    return "cost"


def _alternative_sentences(facts: JobFacts, best: Scored, scored: list[Scored]) -> list[str]:
    """The cheapest priced alternative that departs from field practice, with its risks."""
    if best.departures:
        out = []
        for code in best.departures:
            phrase = departure_phrase(facts, best, code)
            out.append(f"Risk of the chosen departure ({phrase}): {RISKS.get(code, code)}.")
        return out
    alts = [
        design
        for design in scored
        if design.departures
        and design.feasible
        and design.cand.fabric == best.cand.fabric
        and design.capex_usd < best.capex_usd
    ]
    if not alts:
        return []
    alt = min(alts, key=lambda design: (design.decision_usd, design.capex_usd))
    saving = best.capex_usd - alt.capex_usd
    d_life = alt.decision_usd - best.decision_usd
    verdict = (
        f"costs {usd(d_life)} more over the life in GPU time"
        if d_life > 0.5
        else f"would save {usd(-d_life)} over the life"
    )
    speed = (
        f"runs at the same {perf_str(facts, alt.perf)}"
        if same_text(facts, alt.perf, best.perf)
        else f"runs at {perf_str(facts, alt.perf)} instead of {perf_str(facts, best.perf)}"
    )
    risks = "; ".join(RISKS[code] for code in alt.departures if code in RISKS)
    return [
        "Priced alternative: "
        + departures_phrase(facts, alt)
        + f" saves {usd(saving)} of network, {speed} and {verdict}. Risks: {risks}. "
        "It is recommended only with prefer=cost and constraints.allow_oversubscription, or "
        "when the budget leaves no other way."
    ]


def best_per_fabric(scored: list[Scored]) -> dict[str, Scored]:
    """Each fabric class's representative: its cheapest feasible field-practice design, else
    its cheapest feasible design, else the one closest to feasible."""
    best: dict[str, tuple[tuple[int, int, float], Scored]] = {}
    for design in scored:
        cur = best.get(design.cand.fabric)
        key = class_key(design)
        if cur is None or key < cur[0]:
            best[design.cand.fabric] = (key, design)
    return {fabric: design for fabric, (_, design) in best.items()}


def class_key(scored: Scored) -> tuple[int, int, float]:
    if scored.feasible:
        return (0, len(scored.departures), scored.decision_usd)
    if only_the_budget(scored):
        return (1, len(scored.departures), scored.capex_usd)
    return (2 + len(scored.violations), 0, scored.perf)


# ------------------------------------------------------------------------------ why not


def why_not(facts: JobFacts, scored: Scored, choice: Choice) -> str | None:
    best = choice.best
    if scored is best:
        return None
    if scored.violations:
        return "Ruled out: " + "; ".join(scored.violations) + "."
    name = "This design"
    stated = premium_sentence(facts, best, scored, name)
    if stated is not None and not scored.departures:
        return stated
    if scored in choice.tied:
        return (
            f"Tied with the recommendation {tie_phrase(best, scored)} (life cost "
            f"{usd(scored.decision_usd)} vs {usd(best.decision_usd)}); the tie goes to the "
            f"recommendation on {tie_reason(facts, best, scored)}."
        )
    if scored.departures and not best.departures:
        risks = "; ".join(RISKS[code] for code in scored.departures if code in RISKS)
        d_life = scored.decision_usd - best.decision_usd
        money = (
            f"costs {usd(d_life)} more over the life"
            if d_life > 0.5
            else f"would save {usd(-d_life)} over the life"
        )
        return (
            "Departs from field practice ("
            + departures_phrase(facts, scored)
            + f"); {money}. Risks: {risks}."
        )
    return compare(facts, best, scored, name)


# ------------------------------------------------------------------------- break-even etc.


def break_even(facts: JobFacts, choice: Choice, scored: list[Scored]) -> list[BreakEven]:
    """GPU-hour price and network price at which another design would win, quoted only when
    outside the uncertainty (price +-20 %)."""
    best = choice.best
    out: list[BreakEven] = []
    rate = gpu_hour_cost_usd(facts.costs)
    if rate <= 0:
        return out
    for fabric, alt in best_per_fabric(scored).items():
        if fabric == best.cand.fabric or alt.violations or tied(best, alt):
            continue
        # life = fixed + rate * k  (GPU waste and risk scale with the GPU-hour price)
        k_best = (best.life.gpu_time_wasted_usd + _risk(best)) / rate
        k_alt = (alt.life.gpu_time_wasted_usd + _risk(alt)) / rate
        f_best = best.decision_usd - rate * k_best
        f_alt = alt.decision_usd - rate * k_alt
        if abs(k_best - k_alt) < 1e-9:
            continue
        price = (f_alt - f_best) / (k_best - k_alt)
        if not math.isfinite(price) or price <= 0:
            continue
        if abs(price / rate - 1.0) <= PRICE_UNCERTAINTY or not rate / 10 <= price <= rate * 10:
            continue
        name = fabric_title(fabric, alt.cand.nic_gbps)
        side = "Below" if k_alt > k_best else "Above"
        out.append(
            BreakEven(
                statement=f"{side} {usd_cents(price)} per GPU-hour "
                f"(now {usd_cents(rate)}), {name} "
                "would cost less over the life than the recommendation.",
                parameter="gpu_hour_usd",
                value=round(price, 4),
            )
        )
    feasible = [
        design
        for design in scored
        if design.feasible and design is not best and design.capex_usd < best.capex_usd
    ]
    same_class = [design for design in feasible if len(design.departures) <= len(best.departures)]
    same_class = [design for design in same_class if not tied(best, design)]
    runner = min(same_class, key=lambda design: design.decision_usd, default=None)
    if runner is not None and runner.decision_usd > best.decision_usd:
        factor = 1.0 + (runner.decision_usd - best.decision_usd) / (
            best.capex_usd - runner.capex_usd
        )
        if PRICE_UNCERTAINTY < factor - 1.0 <= MAX_PRICE_FACTOR - 1.0:
            out.append(
                BreakEven(
                    statement="The recommendation holds unless its network prices rise "
                    f"{(factor - 1) * 100:.0f}% (x{factor:.2f}, beyond the "
                    f"+-{PRICE_UNCERTAINTY * 100:.0f}% price uncertainty) while the "
                    f"alternative's do not; then {design_phrase(runner)} becomes cheaper over "
                    "the life.",
                    parameter="network_price_factor",
                    value=round(factor, 4),
                )
            )
    if facts.inference and facts.target_ms_per_token is not None:
        slower_cheaper = [
            design
            for design in scored
            if design.perf > facts.target_ms_per_token
            and design.decision_usd < best.decision_usd
            and not design.departures
            and all("target" in violation for violation in design.violations)
            and design.violations
        ]
        if slower_cheaper and best.perf <= facts.target_ms_per_token:
            alt = min(slower_cheaper, key=lambda design: design.decision_usd)
            out.append(
                BreakEven(
                    statement=f"With a latency target of {alt.perf:.1f} ms per token or "
                    f"more (now {facts.target_ms_per_token:g} ms), {design_phrase(alt)} would "
                    f"do and save {usd(best.decision_usd - alt.decision_usd)} over the life.",
                    parameter="target_ms_per_token",
                    value=round(alt.perf, 3),
                )
            )
    return out


def _risk(scored: Scored) -> float:
    """The GPU-price-proportional part of operations (the risk premium)."""
    return scored.operations_risk_usd


def uncertainty(facts: JobFacts, best: Scored) -> Uncertainty:
    low, high = perf_range(best.metrics, facts.inference, best.perf)
    cost = best.cost
    gpu = cost.gpu_cost_usd
    if not facts.inference and best.perf > 0:
        gpu_low, gpu_high = gpu * low / best.perf, gpu * high / best.perf
    else:
        gpu_low = gpu_high = gpu
    net = cost.network_capex_share_usd + cost.network_power_cost_usd
    other = cost.total_usd - gpu - net
    life = best.life
    idle = num(best.metrics.gpu_idle_fraction)
    waste_low, waste_high = wasted_band(
        life.gpu_time_wasted_usd, best.perf, (low, high), idle, facts.speed_error
    )
    fixed = life.network_capex_usd + life.network_power_usd
    speed = Band(low=rounded(low), high=rounded(high))
    return Uncertainty(
        ms_per_token=speed if facts.inference else None,
        step_time_s=None if facts.inference else speed,
        total_cost_usd=Band(
            low=rounded(gpu_low + net * (1 - PRICE_UNCERTAINTY) + other),
            high=rounded(gpu_high + net * (1 + PRICE_UNCERTAINTY) + other),
        ),
        decision_cost_usd=Band(
            low=rounded(fixed * (1 - PRICE_UNCERTAINTY) + waste_low + life.operations_usd),
            high=rounded(fixed * (1 + PRICE_UNCERTAINTY) + waste_high + life.operations_usd),
        ),
    )


def wasted_band(
    wasted_usd: float,
    perf: float,
    speed: tuple[float, float],
    idle: float,
    speed_error: tuple[float, float],
) -> tuple[float, float]:
    """The GPU time wasted waiting on the network at the speed range's ends. The range is
    the network's own spread (placement, jitter) times the model's error (``speed_error``):
    the network's spread is all waiting, the model's error scales the waiting with the rest
    of the step. Until 2026-12-07 the whole range was read as waiting: 512 H100 at 2.5 %
    idle put the life cost at $4.66M-$28.26M around $6.66M."""
    if perf <= 0 or idle <= 0:
        return wasted_usd, wasted_usd
    free = perf * (1 - idle)  # the step without the wait
    ends = []
    for bound, error in zip(speed, speed_error, strict=True):
        network_only = bound / error if error > 0 else bound
        ends.append(wasted_usd * max(0.0, network_only - free) / (perf * idle) * error)
    return min(wasted_usd, ends[0]), max(wasted_usd, ends[1])


def perf_range(metrics: Metrics, inference: bool, point: float) -> tuple[float, float]:
    """The speed figure's (low, high) bounds; ``point`` where the model gave none."""
    if inference:
        low, high = metrics.ms_per_token_low, metrics.ms_per_token_high
    else:
        low, high = metrics.step_time_s_low, metrics.step_time_s_high
    if low is None and high is None:
        return point, point
    return num(low, point), num(high, point)
