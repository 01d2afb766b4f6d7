"""The recommendation: which network to buy, why, and what the alternatives would cost.

``recommend(s, w, catalog, progress)`` enumerates candidate designs with the platform's rules
(:mod:`.candidates`), sizes, prices and evaluates each once (:mod:`.search`,
:mod:`.pricing`), applies field practice, the hard constraints and the tie rules
(:mod:`.policy`) and writes the answer (:mod:`.prose`, :mod:`.monitoring`,
:mod:`.assumptions`, :mod:`.scaling`).  The returned dict holds the result keys of
docs/ENGINE_API.md: recommendation, metrics, bom, cost, options, pruned, break_even,
uncertainty, monitoring, assumptions, scaling.  Formulas and constants: docs/MODEL.md,
sections "Recommendation", "Field practice", "Decision cost", "Platform facts".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final

from advisor.engine.decision.assumptions import assumptions
from advisor.engine.decision.bom import (
    NetworkParts,
    StoragePlan,
    compute_fabric_lines,
    compute_fabric_totals,
    management_lines,
    storage_plan,
    totals,
)
from advisor.engine.decision.candidates import (
    OVERSUBSCRIPTIONS,
    Candidate,
    enumerate_candidates,
    fabric_title,
    full_links,
)
from advisor.engine.decision.job_facts import JobFacts, job_facts
from advisor.engine.decision.monitoring import monitoring
from advisor.engine.decision.policy import (
    TIE_BAND,
    TIE_BREAK_ORDER,
    Choice,
    check_constraints,
    choice_pool,
    choose,
    departure_phrase,
    premium,
    rate_capped,
    serving_rate_short,
    strictly_tied,
)
from advisor.engine.decision.pricing import Scored, cost_record, price
from advisor.engine.decision.prose import (
    best_per_fabric,
    break_even,
    design_phrase,
    headline,
    no_fabric_reference,
    perf_str,
    rationale,
    reference_design,
    serving_headroom,
    serving_shortfall,
    topo_phrase,
    uncertainty,
    why_not,
)
from advisor.engine.decision.rag import (
    TierNetwork,
    add_rag_answer,
    rag_assumptions,
    tier_lines_of,
    tier_network,
    with_tier_network,
)
from advisor.engine.decision.release import with_release_rate
from advisor.engine.decision.scaling import design_of, scaling
from advisor.engine.decision.search import Evaluator, score_all
from advisor.engine.decision.util import clean, num, usd
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.catalog.network import ETHERNET
from advisor.engine.facts.formatting import significant
from advisor.engine.facts.vocabulary import RETRIEVAL, fabric_label, scale_up_domain
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.plans import WorkloadPlan, as_planned
from advisor.engine.model.serving.pools import kv_design
from advisor.engine.model.serving.pools import reference_design as serving_reference_design
from advisor.engine.model.topology import TopologyError, TopologySize, size_compute_fabric
from advisor.engine.result.records import (
    BreakEven,
    Budget,
    BudgetBuys,
    Decision,
    EngineResult,
    Metrics,
    Option,
    Pruned,
    Recommendation,
    ScalingPoint,
    Storage,
    TierCliff,
    Topology,
)

__all__ = [
    "OVERSUBSCRIPTIONS",
    "Candidate",
    "Evaluator",
    "enumerate_candidates",
    "fabric_title",
    "recommend",
]

ScalingChart = Callable[[Scenario, JobFacts, dict[str, Candidate]], list[ScalingPoint]]
"""The scaling chart of a job (scenario, job facts, a design per fabric class): by default
:func:`advisor.engine.decision.scaling.scaling`."""

MAX_OPTIONS: Final = 60
"""Options listed: the pick, then the best-ranked designs (each fabric class's best always)."""
CHECKPOINT_BYTES_PER_PARAM: Final = 14.0
"""A full training checkpoint: bf16 weights (2 B) + fp32 master weights, Adam m and v
(4 + 4 + 4 B) per parameter (Rajbhandari et al., ZeRO, SC'20, section 3.1: 16 B/param of
model state, of which the 2 B of gradients are not saved)."""
EXISTING_NETWORK_MAX_SERVERS: Final = 4
"""Jobs with no compute fabric on at most this many servers plug into the data centre's
existing network: a few servers' 2-4 storage / in-band ports and a BMC port each fit the spare
ports of the leaf and management switches every data centre runs, so an architect buys no
switch for them (docs/MODEL.md 12, "Existing network")."""
EXISTING_TOPOLOGY = Topology(
    kind="existing",
    tiers=0,
    leaf_switches=0,
    spine_switches=0,
    core_switches=0,
    superspine_switches=0,
    oversubscription=1.0,
    rail_optimized=False,
    switch_model="",
    planes=1,
    leaf_downlinks=0,
    leaf_uplinks=0,
    links_per_leaf_spine=0,
)
"""The topology of a job on the existing network: no switch of ours."""

STORAGE_LINK_EFFICIENCY: Final = 0.9
"""Share of the storage links' line rate a large sequential write reaches (estimate)."""


def recommend(
    s: Scenario,
    w: WorkloadPlan,
    catalog: Catalog,
    progress: Callable[[int], None] | None = None,
    *,
    evaluator: Evaluator | None = None,
    scaling_chart: bool = True,
    chart: ScalingChart | None = None,
) -> EngineResult:
    """Choose the network for scenario ``s`` with plan ``w``; see the module docstring.

    The answer is the result's own record with the decision's parts filled (recommendation,
    metrics, BOM, cost, options, pruned, break-even, bounds, monitoring, the decision's
    assumptions, scaling, RAG); :func:`advisor.engine.evaluate_typed` adds the versions, the
    echoes, the given design's evaluation and the model's assumptions.

    ``scaling_chart=False`` leaves the scaling chart out (``scaling`` empty): it plans the
    workload at other sizes (about two thirds of an evaluation) and changes no other figure;
    the what-if (:mod:`advisor.engine.tools.whatif`) shows none.

    ``chart`` replaces the scaling chart's function (tests see what the decision hands it: a
    compiled engine calls :func:`scaling` past a module attribute a test replaced).

    ``evaluator`` overrides the performance model (tests); by default each distinct design
    is evaluated once with :func:`advisor.engine.model.performance.evaluate_design`.  A RAG
    scenario's retrieval tiers (:mod:`advisor.engine.decision.rag`) are priced with the
    front-end network of every design and named in the answer.
    """
    parts = network_parts(catalog)
    tiers = tier_network(parts, s, w) if s.rag is not None else None
    result = _recommend(
        s, w, catalog, parts, progress, evaluator, tiers, scaling_chart, chart or scaling
    )
    if tiers is not None:
        rec, answer = add_rag_answer(result.recommendation, result.metrics, tiers, s)
        result = dataclasses.replace(
            result,
            recommendation=rec,
            rag=answer,
            assumptions=(*result.assumptions, *rag_assumptions()),
        )
    return result


def _recommend(
    s: Scenario,
    w: WorkloadPlan,
    catalog: Catalog,
    parts: NetworkParts,
    progress: Callable[[int], None] | None,
    evaluator: Evaluator | None,
    tiers: TierNetwork | None,
    scaling_chart: bool,
    scaling_points: ScalingChart,
) -> EngineResult:
    facts = job_facts(s, w, catalog, parts)

    def chart(reps: dict[str, Candidate]) -> tuple[ScalingPoint, ...]:
        return tuple(scaling_points(s, facts, reps)) if scaling_chart else ()

    evaluate = evaluator or performance_evaluator(s, w)
    # every candidate is scored without its step bounds; the chosen design gets them below
    score = evaluator or performance_evaluator(s, w, bounds=False)
    _report(progress, 0)
    storage = storage_plan(parts, nodes=facts.nodes, spec=facts.platform.storage)
    if tiers is not None:
        storage = with_tier_network(storage, tiers)
    candidates, pruned = enumerate_candidates(parts, facts.platform)
    if not facts.needs_compute_fabric:
        result = _no_fabric(s, facts, parts, evaluate, storage, candidates)
        result = dataclasses.replace(result, scaling=chart(_representatives(facts, candidates)))
        _report(progress, 100)
        return result
    scored, more = score_all(facts, parts, candidates, storage, score, progress)
    pruned.extend(more)
    if facts.inference and scored and score is not evaluate:
        # the constraints read the fastest serving design's rates within the targets
        fastest = min(scored, key=lambda sc: sc.perf)
        fastest.metrics = clean(evaluate(fastest.cand))
    _report(progress, 90)
    if not scored:
        result = _no_fabric(s, facts, parts, evaluate, storage, candidates)
        result = dataclasses.replace(
            result,
            pruned=(*_pruned(pruned), *result.pruned),
            scaling=chart(_representatives(facts, candidates)),
        )
        _report(progress, 100)
        return result
    ttft = s.inference.target_ttft_ms if s.inference is not None else None
    serving_reference = _serving_reference(facts, s, scored, evaluate)
    if facts.tp_crosses and serving_reference is not None:
        # tensor-parallel groups across servers are held to InfiniBand's rate; "a wider design
        # is never slower" covers only designs of the reference's own class, so every
        # field-practice design's rate within the targets is computed and each that caps the
        # deployment is ruled out with its figures (not offered as a tie)
        for sc in scored:
            if sc.field_practice and sc.metrics.max_requests_per_s_at_target is None:
                sc.metrics = clean(evaluate(sc.cand))
    notes = check_constraints(facts, scored, ttft, serving_reference)
    if facts.network_budget_usd is not None and not any(
        sc.feasible and sc.field_practice for sc in scored
    ):
        trimmed = _trim_storage(facts, parts, storage, scored)
        if trimmed is not None:
            storage, scored, note = trimmed
            notes = [note, *check_constraints(facts, scored, ttft, serving_reference)]
    choice = _forced_rate_kept(facts, scored, choose(facts, scored), evaluate)
    if score is not evaluate:
        choice.best.metrics = clean(evaluate(choice.best.cand))
        choice = _serving_rate_kept(facts, scored, choice, evaluate, serving_reference)
    # where the pools run, unless the rationale's first sentence (sized for KV caches) says it
    pools = facts.serving.pools if facts.serving is not None and not facts.kv_only else ""
    closed_loop = facts.serving is not None and facts.serving.closed_loop
    kv = _kv_transfer_sentence(choice.best, scored, ttft, pools, closed_loop)
    facts = with_release_rate(s, facts, choice.best.cand, choice.best.metrics)
    result = _build(facts, parts, choice, scored, pruned, storage, notes, kv)
    reps = {f: sc.cand for f, sc in best_per_fabric(scored).items()}
    result = dataclasses.replace(result, scaling=chart(reps))
    _report(progress, 100)
    return result


def _serving_reference(
    facts: JobFacts, s: Scenario, scored: list[Scored], evaluate: Evaluator
) -> Metrics | None:
    """The metrics, rates within the targets computed, of the design a fabric sized by its
    serving traffic is held to (:func:`advisor.engine.decision.policy.serving_rate_short`):
    for KV caches alone the network its pools were weighed on and the decision buys for their
    KV stream (:func:`advisor.engine.model.serving.pools.kv_design`: RDMA, one NIC per server
    at the reference speed), for pipeline activations the network the deployment was planned
    on (one NIC per GPU, :func:`advisor.engine.model.serving.pools.reference_design`), as the
    scored non-blocking RDMA design with the least NIC bandwidth per server at least that; for
    tensor-parallel groups across servers the same on the reference's own fabric
    (InfiniBand: their all-reduces wait on its latency, which RoCE's efficiency and jitter
    lengthen).
    Every RDMA design at least as wide serves at least its rate (more bandwidth is never
    slower), so the rule rules out only TCP, slower NICs or oversubscription that cap the
    deployment.  None when the fabric is not sized by serving
    traffic or no such design is scored (then only TCP is weighed, or nothing)."""
    if not (facts.held_to_reference and facts.needs_compute_fabric and scored):
        return None
    reference = kv_design(s) if facts.kv_only else serving_reference_design(s)
    floor_gbps = reference.nic_gbps * reference.nics_per_node

    def gbps(sc: Scored) -> float:
        d = design_of(sc.cand)
        return d.nic_gbps * d.nics_per_node

    planned = [
        sc
        for sc in scored
        if sc.cand.fabric != ETHERNET
        and (sc.cand.fabric == reference.fabric or not facts.tp_crosses)
        and sc.cand.oversubscription <= 1.0
        and gbps(sc) >= floor_gbps * (1.0 - 1e-9)
    ]
    if not planned:
        return None
    bar = min(planned, key=gbps)
    if bar.metrics.max_requests_per_s_at_target is None:
        bar.metrics = clean(evaluate(bar.cand))
    return bar.metrics


def _forced_rate_kept(
    facts: JobFacts, scored: list[Scored], choice: Choice, evaluate: Evaluator
) -> Choice:
    """The rule for departures forced on a serving fleet
    (:func:`advisor.engine.decision.policy.rate_capped`): when no field-practice design meets
    the constraints, every design of the pool the choice is made among gets its rate within
    the targets computed; those that serve beyond the tie band less than the best of their
    fabric class in it are ruled out with the figures and the choice is made again (each
    class's best stays in the pool, so the mode and the cut do not change).  A KV-only
    deployment is held to its own rule instead (:func:`_serving_rate_kept`)."""
    if not facts.inference or facts.serving_sized or choice.mode != "constraints_forced":
        return choice
    chosen = choice_pool(facts, scored)
    if chosen is None:
        return choice
    pool = chosen[0]
    for sc in pool:
        if sc.metrics.max_requests_per_s_at_target is None:
            sc.metrics = clean(evaluate(sc.cand))
    capped = False
    for sc in pool:
        reason = rate_capped(facts, sc, pool)
        if reason is not None:
            sc.violations.append(reason)
            capped = True
    return choose(facts, scored) if capped else choice


def _serving_rate_kept(
    facts: JobFacts,
    scored: list[Scored],
    choice: Choice,
    evaluate: Evaluator,
    reference: Metrics | None,
) -> Choice:
    """The serving-traffic rule (:func:`advisor.engine.decision.policy.serving_rate_short`, which
    :func:`check_constraints` applied to every design whose rate was known) on the picks: a
    pick that serves less than ``reference`` beyond the tie band is ruled out and the choice
    made again, each new pick with its rate computed; a pick already ruled out ends the
    loop."""
    while True:
        reason = serving_rate_short(facts, choice.best, reference)
        if reason is None or reason in choice.best.violations:
            return choice
        choice.best.violations.append(reason)
        choice = choose(facts, scored)
        choice.best.metrics = clean(evaluate(choice.best.cand))


def _pruned(pruned: list[dict[str, Any]]) -> tuple[Pruned, ...]:
    """The designs left out before pricing (their design keys vary: a mapping each)."""
    return tuple(Pruned(design=p["design"], reason=p["reason"]) for p in pruned)


def _trim_storage(
    facts: JobFacts, parts: NetworkParts, storage: StoragePlan, scored: list[Scored]
) -> tuple[StoragePlan, list[Scored], str] | None:
    """The first cut under a budget: the storage / in-band network down to one converged
    port per server; every design re-priced with it (None when nothing is saved)."""
    spec = storage.spec.trimmed()
    if spec == storage.spec:
        return None
    trimmed = storage_plan(parts, nodes=facts.nodes, spec=spec)
    trimmed = dataclasses.replace(trimmed, lines=(*trimmed.lines, *tier_lines_of(storage)))
    old_capex, old_power = totals(storage.lines)
    new_capex, new_power = totals(trimmed.lines)
    if new_capex >= old_capex:
        return None
    mgmt: dict[int, tuple[float, float]] = {}

    def mgmt_totals(switches: int) -> tuple[float, float]:
        if switches not in mgmt:
            mgmt[switches] = totals(
                management_lines(parts, nodes=facts.nodes, managed_switches=switches)
            )
        return mgmt[switches]

    repriced = []
    for sc in scored:
        before = mgmt_totals(sc.topo.total_switches + storage.topo.total_switches)
        after = mgmt_totals(sc.topo.total_switches + trimmed.topo.total_switches)
        capex = sc.capex_usd - old_capex + new_capex - before[0] + after[0]
        power = sc.power_w - old_power + new_power - before[1] + after[1]
        repriced.append(price(facts, sc.cand, sc.topo, sc.metrics, capex, power))
    note = (
        f"No design built as the published references build it fits the "
        f"{usd(facts.network_budget_usd or 0.0)} network budget, so the storage / in-band "
        f"network is cut first: {spec.storage_ports} converged {trimmed.gbps}G port per server "
        f"instead of {storage.ports_per_server}, saving {usd(old_capex - new_capex)} before the "
        "compute fabric is touched."
    )
    return trimmed, repriced, note


_PARTS_CACHE: dict[Catalog, NetworkParts] = {}


def network_parts(catalog: Catalog) -> NetworkParts:
    """NetworkParts of a catalog, by the catalog's value (keeps the link-kit and cabling
    caches warm across evaluations, also of equal catalogs read again), bounded."""
    hit = _PARTS_CACHE.get(catalog)
    if hit is not None:
        return hit
    parts = NetworkParts.from_catalog(catalog)
    if len(_PARTS_CACHE) > 16:
        _PARTS_CACHE.clear()
    _PARTS_CACHE[catalog] = parts
    return parts


def _report(progress: Callable[[int], None] | None, pct: int) -> None:
    if progress is not None:
        progress(pct)


def performance_evaluator(s: Scenario, w: WorkloadPlan, *, bounds: bool = True) -> Evaluator:
    """``bounds=False``: a training design's metrics without the low and high step bounds
    (:func:`advisor.engine.model.performance.evaluate_design`, which evaluates every design
    for the scenario with the default constraints), for scoring every candidate.  The
    scenario is put in that form once here, not once per design."""
    from advisor.engine.model.performance import evaluate_design

    planned = as_planned(s)

    def run(cand: Candidate) -> Metrics:
        return evaluate_design(planned, w, design_of(cand), bounds=bounds)

    return run


# ------------------------------------------------------------------------------ output


def _build(
    facts: JobFacts,
    parts: NetworkParts,
    choice: Choice,
    scored: list[Scored],
    pruned: list[dict[str, Any]],
    storage: StoragePlan,
    notes: list[str],
    kv: str | None = None,
) -> EngineResult:
    best = choice.best
    cand = best.cand
    lines = compute_fabric_lines(
        parts,
        fabric=cand.fabric,
        nic=cand.nic,
        nics_per_node=cand.nics_per_node,
        nodes=facts.nodes,
        switch=cand.switch,
        topo=best.topo,
    )
    mgmt = management_lines(
        parts,
        nodes=facts.nodes,
        managed_switches=best.topo.total_switches + storage.topo.total_switches,
    )
    budget_info = _budget_info(facts, choice, scored, storage, mgmt)
    text = rationale(facts, choice, scored) + notes
    headroom = serving_headroom(facts, best.metrics)
    if headroom:
        text.append(headroom)
    cliff = tier_cliff(facts, parts, best)
    if cliff is not None:
        text.append(cliff.statement)
    if budget_info is not None and choice.mode == "over_budget":
        text.insert(0, headline(facts, choice, budget_info))
    if kv:
        text.insert(1, kv)
    ranked = _ranked(choice, scored)
    return EngineResult(
        recommendation=Recommendation(
            fabric=cand.fabric,
            needs_compute_fabric=True,
            nic_gbps=cand.nic_gbps,
            nics_per_node=cand.nics_per_node,
            nic_sku=cand.nic.sku,
            topology=dataclasses.replace(
                topology_record(best.topo, cand.switch.sku), tier_cliff=cliff
            ),
            headline=headline(facts, choice, budget_info),
            rationale=tuple(text),
            within_budget=choice.mode != "over_budget",
            budget=budget_info,
            field_practice=best.field_practice,
            departures=tuple(departure_phrase(facts, best, d) for d in best.departures),
            reference_design=reference_design(facts, best),
            decision=_decision(facts, choice),
            storage=storage_summary(facts, storage),
        ),
        metrics=best.metrics,
        bom=(*lines, *storage.lines, *mgmt),
        cost=cost_record(facts, best),
        options=tuple(_option(facts, i + 1, sc, choice) for i, sc in enumerate(ranked)),
        pruned=_pruned(pruned),
        break_even=tuple(break_even(facts, choice, scored)),
        uncertainty=uncertainty(facts, best),
        monitoring=tuple(monitoring(cand.fabric, True)),
        assumptions=tuple(assumptions(facts, storage)),
    )


TIER_CLIFF_SPAN: Final = 1.5
"""A tier cliff is named when the cluster is at most this many times the largest size that
keeps one tier fewer (256 -> 257 servers is the classic cliff of a 64-port two-tier fabric)."""


def _fabric_capex(facts: JobFacts, parts: NetworkParts, sc: Scored, servers: int) -> float:
    c = sc.cand
    topo = size_compute_fabric(
        servers * c.nics_per_node,
        c.radix,
        c.oversubscription,
        rails=c.rails,
        links_per_rail=c.links_per_rail,
        fabric=c.fabric,
        planes=sc.topo.planes,
    )
    return compute_fabric_totals(
        parts,
        fabric=c.fabric,
        nic=c.nic,
        nics_per_node=c.nics_per_node,
        nodes=servers,
        switch=c.switch,
        topo=topo,
    )[0]


def tier_cliff(facts: JobFacts, parts: NetworkParts, sc: Scored) -> TierCliff | None:
    """The tier cliff the pick sits just above: the largest cluster that keeps one tier fewer
    on the same switch, NICs and planes, and what the extra tier costs per GPU.  None when the
    fabric has fewer than three tiers or the cluster is far above the cliff."""
    topo = sc.topo
    if topo.tiers < 3:
        return None
    c = sc.cand

    def tiers_at(servers: int) -> int:
        try:
            return size_compute_fabric(
                servers * c.nics_per_node,
                c.radix,
                c.oversubscription,
                rails=c.rails,
                links_per_rail=c.links_per_rail,
                fabric=c.fabric,
                planes=topo.planes,
            ).tiers
        except (TopologyError, ValueError):
            return 99

    low, high = 0, facts.nodes  # tiers_at(high) == topo.tiers
    while high - low > 1:
        mid = (low + high) // 2
        if tiers_at(mid) < topo.tiers:
            low = mid
        else:
            high = mid
    if low < 1 or facts.nodes > TIER_CLIFF_SPAN * low or tiers_at(low) != topo.tiers - 1:
        return None
    per_server_gpus = facts.gpus_per_node
    here = _fabric_capex(facts, parts, sc, facts.nodes)
    below = _fabric_capex(facts, parts, sc, low)
    per_gpu_here = here / max(1, facts.gpus)
    per_gpu_below = below / max(1, low * per_server_gpus)
    extra = here - below * facts.nodes / low
    pct = 100.0 * (per_gpu_here / per_gpu_below - 1.0) if per_gpu_below > 0 else 0.0
    statement = (
        f"Tier cliff: {facts.nodes:,} servers need a {topo.tiers}-tier fabric of "
        f"{c.switch.description.split(' (')[0]}; {low:,} servers "
        f"({low * per_server_gpus:,} GPUs) fit in {topo.tiers - 1} tiers. The compute fabric "
        f"costs {usd(per_gpu_here)} per GPU here "
        f"against {usd(per_gpu_below)} at {low:,} servers ({pct:+.0f}%): the extra tier adds "
        f"{usd(extra)}. {low:,} servers is the nearest size that avoids it; a higher-radix "
        "switch or a multi-plane design moves the cliff."
    )
    return TierCliff(
        servers=facts.nodes,
        tiers=topo.tiers,
        nearest_servers=low,
        nearest_gpus=low * per_server_gpus,
        nearest_tiers=topo.tiers - 1,
        fabric_usd_per_gpu=round(per_gpu_here, 2),
        nearest_fabric_usd_per_gpu=round(per_gpu_below, 2),
        extra_tier_usd=round(extra, 2),
        extra_pct=round(pct, 1),
        statement=statement,
    )


def _decision(facts: JobFacts, choice: Choice) -> Decision:
    return Decision(
        mode=choice.mode,
        basis="life cost: network capex + power + GPU time wasted + operations",
        tie_band=TIE_BAND,
        tie_break_order=tuple(TIE_BREAK_ORDER),
        # designs named as the headline and the break-even name them (display names, never
        # the catalog's ids: the API's quoting clients print these)
        tied_with=tuple(
            [design_phrase(sc) for sc in choice.tied if strictly_tied(choice.best, sc)][:10]
        ),
        premium_over=tuple(
            [
                dataclasses.replace(
                    prem,
                    design=design_phrase(sc),
                    capex_usd=round(prem.capex_usd, 2),
                    capex_pct=round(prem.capex_pct, 1),
                    life_usd=round(prem.life_usd, 2),
                    life_pct=round(prem.life_pct, 1),
                )
                for sc in choice.tied
                if (prem := premium(choice.best, sc)) is not None
            ][:10]
        ),
    )


def _ranked(choice: Choice, scored: list[Scored]) -> list[Scored]:
    best = choice.best
    order = sorted(
        scored,
        key=lambda sc: (
            sc is not best,
            not sc.feasible,
            len(sc.departures),
            sc.decision_usd,
        ),
    )
    keep = order[:MAX_OPTIONS]
    for rep in best_per_fabric(scored).values():
        if rep not in keep:
            keep.append(rep)
    return keep


def _option(
    facts: JobFacts, rank: int, sc: Scored, choice: Choice, own_switches: bool = True
) -> Option:
    """One weighed design; on the existing network (not ``own_switches``), no switch of ours."""
    c = sc.cand
    return Option(
        rank=rank,
        fabric=c.fabric,
        nic_gbps=c.nic_gbps,
        nics_per_node=c.nics_per_node,
        oversubscription=sc.topo.leaf_oversubscription,
        switch_model=c.switch.sku if own_switches else "",
        nic_sku=c.nic.sku,
        feasible=sc.feasible,
        recommended=sc is choice.best,
        field_practice=sc.field_practice,
        departures=tuple(departure_phrase(facts, sc, d) for d in sc.departures),
        spine_switches=sc.topo.spine_switches,
        tiers=sc.topo.tiers if own_switches else 0,
        planes=sc.topo.planes,
        metrics=option_metrics(facts, sc.metrics),
        cost=cost_record(facts, sc),
        why_not=why_not(facts, sc, choice),
    )


OPTION_METRICS_TRAINING: tuple[str, ...] = (
    "step_time_s",
    "compute_s",
    "exposed_comm_s",
    "bubble_s",
    "straggler_s",
    "tflops_per_gpu",
    "scaling_efficiency",
    "gpu_idle_fraction",
    "run_time_s",
    "gpu_hours",
)
OPTION_METRICS_INFERENCE: tuple[str, ...] = (
    "ms_per_token",
    "ttft_ms",
    "ttft_ms_p95",
    "tokens_per_s_per_server",
    "comm_ms_per_token",
    "compute_ms_per_token",
    "gpu_idle_fraction",
    "requests_per_s",
    "load_saturated",
)
"""Options carry the ENGINE_API metric keys only (the recommendation's ``metrics`` has all); a
serving option its served rate and whether it is over capacity (what its reason and the audit
read)."""


def option_metrics(facts: JobFacts, metrics: Metrics) -> Metrics:
    keys = OPTION_METRICS_INFERENCE if facts.inference else OPTION_METRICS_TRAINING
    return Metrics(**{k: getattr(metrics, k) for k in keys})


def topology_record(topo: TopologySize, switch_sku: str) -> Topology:
    return Topology(
        kind=topo.kind,
        tiers=topo.tiers,
        leaf_switches=topo.leaf_switches,
        spine_switches=topo.spine_switches,
        core_switches=topo.core_switches,
        superspine_switches=topo.superspine_switches,
        oversubscription=topo.leaf_oversubscription,
        rail_optimized=topo.rail_optimized,
        switch_model=switch_sku,
        planes=topo.planes,
        leaf_downlinks=topo.leaf_downlinks,
        leaf_uplinks=topo.leaf_uplinks,
        links_per_leaf_spine=topo.links_per_leaf_spine,
    )


def _budget_info(
    facts: JobFacts,
    choice: Choice,
    scored: list[Scored],
    storage: StoragePlan,
    mgmt: list[Any],
) -> Budget | None:
    budget = facts.network_budget_usd
    if budget is None:
        return None
    best = choice.best
    ns = totals(storage.lines)[0] + totals(mgmt)[0] if best.topo else 0.0
    buys: BudgetBuys | None = None
    if choice.mode == "over_budget":
        affordable = [sc for sc in scored if sc.capex_usd <= budget]
        if affordable:
            buy = min(affordable, key=lambda sc: (sc.perf, sc.capex_usd))
            factor = buy.perf / best.perf if best.perf > 0 else float("inf")
            buys = BudgetBuys(
                design=design_phrase(buy),
                capex_usd=round(buy.capex_usd, 2),
                perf=round(buy.perf, 6),
                slowdown=round(factor, 4),
                slowdown_text=f"{factor:.1f}x slower: {perf_str(facts, buy.perf)} instead of "
                f"{perf_str(facts, best.perf)}",
                violations=tuple(buy.violations),
            )
    return Budget(
        network_budget_usd=budget,
        within_budget=choice.mode != "over_budget",
        recommended_capex_usd=round(best.capex_usd, 2),
        north_south_capex_usd=round(ns, 2),
        budget_buys=buys,
    )


def storage_summary(facts: JobFacts, plan: StoragePlan, *, existing: bool = False) -> Storage:
    """Storage / in-band adapters per server and the time to write a full checkpoint: the
    cluster's data at the slower of the storage network and the storage system's stated
    write rate (``constraints.storage_write_gbytes_per_s``; the network's alone when unset)."""
    spec = plan.spec
    gbps = plan.gbps
    server_gbytes = spec.storage_ports * gbps / 8.0 * STORAGE_LINK_EFFICIENCY
    target_gbytes = plan.target_ports * gbps / 8.0 * STORAGE_LINK_EFFICIENCY
    network = min(server_gbytes * facts.nodes, target_gbytes)
    system = facts.storage_write_gbytes_per_s
    cluster = min(network, system) if system else network
    if facts.inference:
        size = facts.loaded_weight_bytes
        copies = (
            f"; {size / 1e9:,.0f} GB in all, each {facts.weight_copy_holder} holding its own copy"
            if size > facts.served_weight_bytes * 1.01
            else ""
        )
        what = f"load the model weights ({facts.served_weight_bytes / 1e9:,.0f} GB{copies})"
    else:
        size = facts.params * CHECKPOINT_BYTES_PER_PARAM
        what = f"write a full checkpoint (weights + optimizer state, {size / 1e9:,.0f} GB)"
    seconds = size / (cluster * 1e9) if cluster > 0 else 0.0
    limit = (
        f"the storage system's stated {system:,.0f} GB/s write rate (the network carries "
        f"{network:,.0f} GB/s)"
        if system and system < network
        else f"the storage network's {network:,.0f} GB/s"
        + (
            f" (the storage system's stated {system:,.0f} GB/s is faster)"
            if system
            else " (the storage system's write rate is not stated; it is usually the limit)"
        )
    )
    converged = " converged storage / in-band" if spec.converged else ""
    switches = (
        "your existing switches"
        if existing
        else f"a single {plan.switch.display_name} switch"
        if plan.topo.tiers == 1 and plan.topo.leaf_switches <= 1
        else f"{plan.switch.display_name} leaves"
    )
    return Storage(
        adapter_sku=plan.nic.sku,
        adapters_per_server=plan.adapters_per_server,
        ports_per_server=plan.ports_per_server,
        storage_ports_per_server=spec.storage_ports,
        port_gbps=gbps,
        storage_gbytes_per_s_per_server=round(server_gbytes, 3),
        cluster_storage_gbytes_per_s=round(cluster, 3),
        network_storage_gbytes_per_s=round(network, 3),
        storage_write_gbytes_per_s=system,
        checkpoint_bytes=round(size, 0),
        checkpoint_write_s=round(seconds, 3),
        statement=f"Storage / in-band: {plan.adapters_per_server} x "
        f"{plan.nic.description.split(' (')[0]} per server, {plan.ports_per_server} x {gbps}G"
        f"{converged} port{'s' if plan.ports_per_server != 1 else ''} cabled on "
        f"{switches}; "
        f"to {what} at {limit} takes {_seconds(seconds)}.",
    )


def _seconds(seconds: float) -> str:
    """A duration for a sentence: tenths below 10 s (a checkpoint can take 0.2 s), "under 0.1 s"
    below that (131,072 GPUs' storage network writes a checkpoint in hundredths: "0.0 s")."""
    if seconds < 0.05:
        return "under 0.1 s"
    return f"{seconds:,.1f} s" if seconds < 10 else f"{seconds:,.0f} s"


# ----------------------------------------------------------------------- no fabric needed


def _representatives(facts: JobFacts, candidates: list[Candidate]) -> dict[str, Candidate]:
    """Per fabric class, the platform's reference design (for the scaling chart)."""
    out: dict[str, Candidate] = {}
    p = facts.platform
    for c in candidates:
        if c.nics_per_node != full_links(p, c.nic) or c.oversubscription != 1.0:
            continue
        cur = out.get(c.fabric)
        key = (p.nic_standing(c.nic), -c.nic_gbps, not c.adaptive_routing, c.switch.sku)
        if cur is None or key < (
            p.nic_standing(cur.nic),
            -cur.nic_gbps,
            not cur.adaptive_routing,
            cur.switch.sku,
        ):
            out[c.fabric] = c
    return out


def _no_fabric(
    s: Scenario,
    facts: JobFacts,
    parts: NetworkParts,
    evaluate: Evaluator,
    storage: StoragePlan,
    candidates: list[Candidate],
) -> EngineResult:
    cand = Candidate(
        fabric=ETHERNET,
        nic=storage.nic,
        nics_per_node=storage.ports_per_server,
        oversubscription=2.0,
        switch=storage.switch,
        adaptive_routing=None,
        in_network_reduction=False,
    )
    metrics = clean(evaluate(cand))
    facts = with_release_rate(s, facts, cand, metrics)
    existing = facts.nodes <= EXISTING_NETWORK_MAX_SERVERS
    if existing:
        # The data centre's existing network takes these few servers: buy only what is
        # theirs (the platform's storage / in-band adapters and a BMC patch cable each),
        # plugged into switch ports the customer already has.
        mgmt = [
            ln
            for ln in management_lines(parts, nodes=facts.nodes, managed_switches=0)
            if ln.role == "mgmt-link"
        ]
        lines = [
            *(ln for ln in storage.lines if ln.role == "storage-nic" or ln.network == RETRIEVAL),
            *mgmt,
        ]
    else:
        mgmt = management_lines(
            parts, nodes=facts.nodes, managed_switches=storage.topo.total_switches
        )
        lines = [*storage.lines, *mgmt]
    capex, power = totals(lines)
    own_capex = capex - totals(tier_lines_of(storage))[0]  # the retrieval tiers are said apart
    sc = price(facts, cand, storage.topo, metrics, capex, power)
    within = facts.network_budget_usd is None or capex <= facts.network_budget_usd
    if not within and facts.network_budget_usd is not None:
        sc.violations.append(
            f"even the storage and management networks cost {usd(capex)}, over the "
            f"{usd(facts.network_budget_usd)} budget"
        )
    choice = Choice(sc, "no_fabric")
    reason = facts.why_no_fabric or "no traffic of the job crosses servers"
    nic_name = storage.nic.display_name
    switch_name = storage.switch.display_name
    servers = "this server's" if facts.nodes == 1 else f"these {facts.nodes:,} servers'"
    network_sentence = (
        f"Your existing network is enough: plug {servers} {storage.ports_per_server} x "
        f"{storage.gbps}G storage / in-band ports ({nic_name}) and BMC port into switch ports "
        f"your data centre already has; buy only the adapters and patch cables ({usd(own_capex)}). "
        f"New storage switches would add {usd(totals(storage.lines)[0] - capex)} for "
        f"{facts.nodes} server{'s' if facts.nodes > 1 else ''}."
        if existing
        else f"Standard Ethernet carries storage, data loading, checkpoints and users: "
        f"{storage.ports_per_server} x {storage.gbps}G per server ({nic_name}, "
        f"{facts.platform.storage.standing}) on {storage.topo.total_switches:,} x {switch_name} "
        f"({topo_phrase(storage.topo)}), plus 1 GbE out-of-band management; network capex "
        f"{usd(own_capex)}."
    )
    rationale_text = [
        f"No GPU compute fabric: {reason}; GPU-to-GPU traffic stays on {facts.platform.scale_up}"
        + (
            f" inside {'each' if facts.gpus > facts.domain_gpus else 'the'} "
            f"{scale_up_domain(facts.domain_gpus, facts.gpus_per_node)}"
            if facts.domain_gpus > facts.gpus_per_node
            else (" inside each server" if facts.nodes > 1 else "")
        )
        + ".",
        network_sentence,
        f"A compute fabric (e.g. {facts.platform.reference_count} x "
        f"{facts.platform.reference_gbps}G per server) would add NICs, switches and optics "
        f"without speeding up this job; {_the_work(facts, sc)} costs "
        f"{usd(sc.cost.total_usd)}, of which {usd(sc.cost.gpu_cost_usd)} is GPU time "
        f"({sc.cost.gpu_hours:,.0f} GPU-hours).",
    ]
    if facts.inference and facts.nodes > 1:
        # the serving answer buys no compute fabric; training on the same servers would
        p = facts.platform
        rationale_text[-1] += (
            f" If this cluster will also train, buy the training fabric instead: "
            f"{p.reference_count} x {p.reference_gbps}G RDMA per server"
            + (" (one NIC per GPU)." if p.reference_count == facts.gpus_per_node else ".")
        )
    if sc.violations:
        rationale_text.append("Note: " + "; ".join(sc.violations) + ".")
    if (
        facts.inference
        and facts.nodes > 1
        and (facts.serving is None or facts.serving.deployment == "replicas")
    ):
        rationale_text.append(
            f"Scale by adding replicas: {facts.whole_request_units} serves whole "
            "requests, so throughput grows linearly without east-west traffic"
            + (
                " (the headline says how many would carry the load)."
                if serving_shortfall(facts, metrics)
                else "."
            )
        )
    if within and existing:
        head = (
            f"No GPU compute fabric needed: your existing network is enough "
            f"({storage.ports_per_server} x {storage.gbps}G per server for storage and front "
            f"end); {usd(own_capex)} of adapters and cables to buy."
        )
    elif within:
        head = (
            f"No GPU compute fabric needed: standard Ethernet ({storage.ports_per_server} x "
            f"{storage.gbps}G per server) for storage and front end, {usd(own_capex)} of network."
        )
    else:
        head = (
            f"No design fits the {usd(num(facts.network_budget_usd))} network budget: this job "
            f"needs no GPU compute fabric, and the least expensive network it needs (storage "
            f"and management) costs {usd(capex)}."
        )
    shortfall = serving_shortfall(facts, metrics)
    if shortfall:
        head = f"{head} {shortfall}"
        rationale_text.append(shortfall)
    headroom = serving_headroom(facts, metrics)
    if headroom:
        rationale_text.append(headroom)
    bound = max(facts.gpus_per_node, facts.domain_gpus)
    storage_info = storage_summary(facts, storage, existing=existing)
    reference = no_fabric_reference(facts)
    rationale_text.extend((storage_info.statement, reference.statement))
    return EngineResult(
        recommendation=Recommendation(
            fabric=ETHERNET,
            needs_compute_fabric=False,
            nic_gbps=storage.gbps,
            nics_per_node=storage.ports_per_server,
            nic_sku=storage.nic.sku,
            topology=EXISTING_TOPOLOGY
            if existing
            else topology_record(storage.topo, storage.switch.sku),
            headline=head,
            rationale=tuple(rationale_text),
            within_budget=within,
            budget=None
            if facts.network_budget_usd is None
            else Budget(
                network_budget_usd=facts.network_budget_usd,
                within_budget=within,
                recommended_capex_usd=round(capex, 2),
                north_south_capex_usd=round(capex, 2),
                budget_buys=None,
            ),
            field_practice=True,
            departures=(),
            reference_design=reference,
            decision=_decision(facts, choice),
            storage=storage_info,
        ),
        metrics=metrics,
        bom=tuple(lines),
        cost=cost_record(facts, sc),
        options=(_option(facts, 1, sc, choice, own_switches=not existing),),
        pruned=(Pruned(design={"fabric": "compute fabric"}, reason=f"not needed: {reason}"),),
        break_even=(
            BreakEven(
                statement=f"A GPU compute fabric (RoCE or InfiniBand) becomes necessary "
                f"once one job or one model replica needs more than {bound} GPUs, i.e. spans "
                f"more than one {scale_up_domain(bound, facts.gpus_per_node)}.",
                parameter="gpus_per_job",
                value=bound,
            ),
            *(() if shortfall else _serving_load_edge(facts, metrics)),
        ),
        uncertainty=uncertainty(facts, sc),
        monitoring=tuple(monitoring(ETHERNET, False)),
        assumptions=tuple(assumptions(facts, storage)),
    )


def _serving_load_edge(facts: JobFacts, metrics: Metrics) -> tuple[BreakEven, ...]:
    """A serving answer that meets its load without a compute fabric (the caller leaves out
    one that falls short, whose headline says so): the rate at which it stops meeting its
    targets, past which the deployment search weighs deployments across servers on a fabric
    (docs/MODEL.md 15.2, "Pools only where the load needs them")."""
    rate = metrics.max_requests_per_s_at_target
    if not facts.inference or not rate:
        return ()
    servers = "this server falls" if facts.nodes == 1 else f"these {facts.nodes:,} servers fall"
    return (
        BreakEven(
            statement=f"Above {significant(rate)} requests/s, what this deployment serves "
            f"within both p95 targets, {servers} short: more servers, or a deployment across "
            "servers on a compute fabric (prefill and decode pools, expert parallelism), "
            "would carry more.",
            parameter="requests_per_s",
            value=round(rate, 4),
        ),
    )


def _the_work(facts: JobFacts, sc: Scored) -> str:
    return "a month (30 days) of serving" if facts.inference else f"the {sc.cost.work}"


def _kv_transfer_sentence(
    best: Scored,
    scored: list[Scored],
    target_ttft_ms: float | None,
    pools: str,
    closed_loop: bool,
) -> str | None:
    """Disaggregated serving: the KV-cache transfer with its numbers, on the recommended
    network and on the best TCP design (the disaggregated prefill/decode model of
    advisor.engine.model.serving)."""
    from advisor.engine.model.serving.load import kv_transfer_sentence

    def label(sc: Scored) -> str:
        return f"{fabric_label(sc.cand.fabric)} {sc.cand.nics_per_node} x {sc.cand.nic_gbps}G"

    # the best a TCP fabric can do: the Ethernet design with the shortest time to first token,
    # and of designs that tie on it (all saturated, say) the one with the most bandwidth
    tcp_designs = [sc for sc in scored if sc.cand.fabric == ETHERNET]
    tcp = min(
        tcp_designs,
        key=lambda sc: (num(sc.metrics.ttft_ms_p95), -sc.cand.nics_per_node * sc.cand.nic_gbps),
        default=None,
    )
    return kv_transfer_sentence(
        label(best),
        best.metrics,
        label(tcp) if tcp is not None else None,
        tcp.metrics if tcp is not None else None,
        target_ttft_ms,
        pools,
        closed_loop,
    )
