"""The serving deployment choice: the inference plan of a scenario (replicas, split or
disaggregated) and the smaller deployments run on the whole cluster it is compared with.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from typing import Final

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.formatting import significant
from advisor.engine.facts.weights import served_weight_bytes
from advisor.engine.input.number_format import fit_remedy
from advisor.engine.input.scenario import ParallelismSpec, Scenario
from advisor.engine.model.memory import GB, _moe_ep_memory, inference_memory
from advisor.engine.model.placement import whole_groups
from advisor.engine.model.plans import (
    Plan,
    WorkloadPlan,
    _largest_divisor_at_most,
    _largest_pow2_dividing,
    _powers_of_two_up_to,
    domain_gpus,
    smaller_server_counts,
)
from advisor.engine.model.serving.compute import ServingPlan, kv_shards
from advisor.engine.model.serving.disaggregated import copied_plan, inference_costs
from advisor.engine.model.serving.disaggregated import disaggregated_on as _disaggregated_on
from advisor.engine.model.serving.held_requests import (
    largest_batch_held,
    no_replica_fits,
    queued_memory,
)
from advisor.engine.model.serving.pools import (
    alike,
    colocated_plan,
    expert_parallel_widths,
    in_server_units,
    joined,
    kv_design,
    least_pool_servers,
    plan_disaggregated,
    redundant_experts_note,
)
from advisor.engine.model.serving.scoring import (
    DENSE_NOT_WEIGHED,
    MOE_NOT_WEIGHED,
    ServingScore,
    below,
    best_of,
    by_capacity,
    chosen_note,
    idle_note,
    not_weighed_note,
    reaches,
    serving_score,
    unit_shape,
)
from advisor.engine.result.echo import Memory, parallel_shape, replicas_shape

# ----------------------------------------------------------------------------- inference


def _fit_remedy(s: Scenario) -> str:
    return fit_remedy(s.model, s.gpu, s.gpus, s.gpus_per_node, s.precision)


def _plan_inference(scenario: Scenario, *, searching: bool = False) -> WorkloadPlan:
    """The serving plan of ``scenario``: its own parallelism when given (a replica whose KV
    memory holds fewer than the requests in flight serves what it holds and queues the rest,
    docs/MODEL.md 15.2), else the deployment search's, the first shape that holds every
    request in flight or, when none does, the first that holds the weights and one request
    (``searching``: a MoE model's own replicas, without :func:`_moe_by_load`)."""
    assert scenario.inference is not None
    inf = scenario.inference
    m = scenario.model
    p = scenario.parallelism
    dom = domain_gpus(scenario)
    notes: list[str] = []

    def replica_memory(tp: int, ep: int, r: int, batch: int) -> Memory:
        """Memory of a replica of ``r`` GPUs holding ``batch`` requests; with experts over it,
        attention is data-parallel over the group: each GPU holds the dense weights and its
        share of the requests' KV cache."""
        if ep > 1:
            return _moe_ep_memory(scenario, r, batch)
        return inference_memory(scenario, r, batch, kv_shards(m, tp, r // tp))

    deployment = _choose_deployment(scenario, dom)
    if deployment == "disaggregated":
        return _plan_disaggregated(scenario, dom)
    if deployment == "compare":
        return _best_serving_plan(scenario)
    may_span = m.is_moe and scenario.nodes > 1 and not inf.independent_replicas
    if deployment is None and may_span and not (searching or p.given):
        return _moe_by_load(scenario)
    if deployment == "split" and not (searching or p.given or m.is_moe) and scenario.nodes > 1:
        return _best_split(scenario, dom)
    if deployment in (None, "replicas") and not p.given:
        by_load = _replicas_by_load(scenario, dom)
        if by_load is not None:
            return by_load if searching or deployment else _split_if_held_fewer(scenario, by_load)

    chosen: tuple[int, int, int, int, Memory] | None = None  # tp, pp, ep, r, mem
    # a replica whose KV memory holds fewer requests than are in flight (held by the fit
    # rule) queues the rest, as the runtime does (docs/MODEL.md 15.2)
    queued, held = False, 0
    if p.given:
        tp, pp, ep = p.tp or 1, p.pp or 1, p.ep or 1
        r = tp * pp if ep <= 1 else max(ep, tp * pp)
        errors: dict[str, list[str]] = {}
        if p.dp is not None and p.dp * r != scenario.gpus:
            errors["parallelism"] = [
                f"replicas (dp={p.dp}) x GPUs per replica ({r}) must equal gpus ({scenario.gpus})"
            ]
        elif scenario.gpus % r != 0 and not (searching and r <= dom):
            # (the search places replicas whole in each scale-up domain, the rest idle)
            errors["parallelism"] = [f"GPUs per replica ({r}) must divide gpus ({scenario.gpus})"]
        if m.heads % tp != 0:
            errors["parallelism.tp"] = [f"must divide the model's heads ({m.heads})"]
        if ep > 1 and not m.is_moe:
            errors["parallelism.ep"] = ["must be 1 for a dense model"]
        elif ep > 1 and ep > m.moe_experts:
            errors["parallelism.ep"] = [f"must be <= the number of experts ({m.moe_experts})"]
        if not errors and deployment == "split" and r <= dom:
            errors["inference.deployment"] = [
                f"'split' spreads one replica over several servers, but the plan's replica "
                f"(tp x pp = {r} GPUs) fits one scale-up domain of {dom} GPUs: use 'replicas' "
                "or a plan larger than the domain"
            ]
        if errors:
            raise ScenarioError(errors)
        replicas = max(1, whole_groups(r, dom, scenario.gpus))
        batch = math.ceil(inf.concurrent_requests / replicas)

        def memory_at(b: int) -> Memory:
            # ep need not divide the experts: redundant copies fill every GPU equally
            return replica_memory(tp, ep, r, b)

        mem = memory_at(batch)
        held = batch if mem.fits else largest_batch_held(memory_at, batch)
        if 0 < held < batch:
            # the weights and a request fit: the runtime admits what its KV memory holds and
            # queues the rest, as TensorRT-LLM and vLLM do (said below, by the runtime's own
            # KV sizing); the load model's capacity and headline say what is served
            mem = memory_at(held)
            queued = True
        if not mem.fits:
            raise ScenarioError.single(
                "parallelism",
                f"the plan needs {mem.total_gb:.0f} GB per GPU but the {scenario.gpu.name} has "
                f"{mem.usable_gb:.0f} GB usable",
            )
        chosen = (tp, pp, ep, r, mem)
        source = "explicit"
    else:
        # replica sizes: whole servers or domains, or powers of two; a remainder of the
        # cluster too small for another replica stays idle (said in the notes)
        sizes = [r for r in _powers_of_two_up_to(scenario.gpus_per_node) if scenario.gpus % r == 0]
        sizes += [
            k * dom for k in range(1, scenario.gpus // dom + 1) if k * dom > scenario.gpus_per_node
        ]
        sizes += [
            k * scenario.gpus_per_node
            for k in range(2, scenario.gpus // scenario.gpus_per_node + 1)
            if scenario.gpus % (k * scenario.gpus_per_node) == 0
            and k * scenario.gpus_per_node > dom
        ]
        sizes += [r for r in _powers_of_two_up_to(scenario.gpus) if r > dom]
        # a scale-up domain of several servers (an NVL72 slice) also holds power-of-two replicas
        # of whole servers that do not divide it (TP16 on 5 trays, 4 GPUs idle)
        sizes += [
            r
            for r in _powers_of_two_up_to(dom)
            if dom > scenario.gpus_per_node and r > scenario.gpus_per_node
        ]
        if inf.independent_replicas or deployment == "replicas":
            sizes = [r for r in sizes if r <= dom]
        if deployment == "split":
            # honoured as asked: one replica over two or more scale-up domains
            sizes = [r for r in sizes if r > dom]
            if not sizes:
                raise ScenarioError.single(
                    "inference.deployment",
                    f"'split' spreads one replica over several servers, but the {scenario.gpus} "
                    f"GPUs form one scale-up domain of {dom} GPUs: use 'replicas' (each replica "
                    "inside the domain) or add servers",
                )
        # replicas that use every GPU first, then the smallest that fits
        ordered = sorted(set(sizes), key=lambda size: (scenario.gpus % size != 0, size))
        # then, when no replica of those shapes fits, replicas inside the domain of the largest
        # power of two dividing both the heads and the replica, the rest pipeline stages
        # (TP4 x PP3 on three 4-GPU trays), smallest first
        shapes = [(r, False) for r in ordered] + [(r, True) for r in sorted(set(sizes)) if r <= dom]
        # the first shape that holds the weights and a request, when none holds every request
        queueing: tuple[tuple[int, int, int, int, Memory], int] | None = None
        for r, staged in shapes:
            replicas = scenario.gpus // r
            batch = math.ceil(inf.concurrent_requests / replicas)
            if r <= dom:
                tp_c = min(r, _largest_pow2_dividing(m.heads, r))
                if staged:
                    tp_c = _largest_pow2_dividing(math.gcd(m.heads, r), r)
                    if tp_c * (r // tp_c) != r or r // tp_c == 1:
                        continue  # no pipeline shape, or one tried above
                tp, pp, ep = tp_c, r // tp_c, 1
            else:
                tp = min(dom, _largest_pow2_dividing(m.heads, dom))
                pp = r // tp
                ep = 1
                if m.is_moe and _largest_divisor_at_most(m.moe_experts, r) == r:
                    # experts over the replica first, else tensor x pipeline groups (MODEL.md)
                    moe = replica_memory(1, r, r, batch)
                    if moe.fits:
                        chosen = (1, 1, r, r, moe)
                        break
            if tp * pp * ep != r:
                continue  # a replica is whole tensor x pipeline (or expert) groups
            mem = replica_memory(tp, ep, r, batch)
            if mem.fits:
                chosen = (tp, pp, ep, r, mem)
                break
            if queueing is None:
                kept = largest_batch_held(partial(replica_memory, tp, ep, r), batch)
                if kept:
                    queueing = ((tp, pp, ep, r, replica_memory(tp, ep, r, kept)), kept)
        if chosen is None and queueing is not None:
            (chosen, held), queued = queueing, True
        if chosen is None:
            raise no_replica_fits(scenario, dom, deployment)
        source = "planner"
    tp, pp, ep, r, mem = chosen
    # a replica that fits a scale-up domain never straddles two (4 TP16 per NVL72 rack)
    replicas = max(1, whole_groups(r, dom, scenario.gpus))
    if replicas * r < scenario.gpus:
        notes.append(
            f"{replicas:,} replica(s) of {r} GPUs use {replicas * r:,} of {scenario.gpus:,} GPUs; "
            f"the other {scenario.gpus - replicas * r:,} are too few for another replica "
            f"inside one {dom}-GPU scale-up domain and idle"
        )
    batch = math.ceil(inf.concurrent_requests / replicas)
    # a queueing replica's step runs the requests its KV memory holds, not all in flight
    step_batch = min(batch, held) if queued else batch
    independent = r <= dom
    if (inf.independent_replicas is False or deployment == "split") and independent:
        inside = "server" if r <= scenario.gpus_per_node else f"{dom}-GPU NVLink domain"
        notes.append(f"each replica fits one {inside}, so replicas are independent anyway")
    plan = Plan(
        tp=tp,
        pp=pp,
        dp=replicas,
        ep=ep,
        micro_batch=step_batch,
        virtual_stages=1,
        sharding="none",
        recompute="none",
        source=source,
    )
    inference = inference_costs(scenario, plan, r, step_batch, dom)
    inference = replace(
        inference,
        serving=colocated_plan(
            scenario,
            "replicas" if independent else "split",
            tp,
            pp,
            ep,
            # the design's own communication is added per design (performance.py)
            legacy_comm_s=0.0,
        ),
    )
    if queued:
        assert inference.serving is not None
        mem, held_note = queued_memory(scenario, inference.serving.decode, batch, held, ep, mem)
        notes.extend(held_note)
    return WorkloadPlan(
        plan=plan,
        memory=mem,
        nodes=scenario.nodes,
        gpus_per_node=scenario.gpus_per_node,
        domain_gpus=dom,
        domains=max(1, scenario.gpus // dom),
        spans_servers=scenario.nodes > 1,
        needs_compute_fabric=not independent,
        training=None,
        inference=inference,
        notes=tuple(notes),
    )


_REPLICA_PLAN_CACHE: dict[Scenario, WorkloadPlan | None] = {}
_WITHIN = " requests/s within the targets"  # after a rate in the deployment note


def _replicas_by_load(scenario: Scenario, dom: int) -> WorkloadPlan | None:
    """Replicas of a model that fits one scale-up domain, their shape chosen by how they
    serve the scenario's load (docs/MODEL.md 15.2): every power-of-two TP (and, for a MoE
    model, expert-parallel size) up to the domain that holds the weights and the users' KV
    cache, scored by :func:`serving_score` on the reference network (the smaller replica on
    a tie).  ``None`` when no replica fits one domain (the split planner below takes over)."""
    if scenario in _REPLICA_PLAN_CACHE:
        return _REPLICA_PLAN_CACHE[scenario]
    inf = scenario.inference
    assert inf is not None
    best, tried = _fabric_free_best(scenario, dom)
    load_met = False
    if inf.deployment is None and not inf.independent_replicas and best is not None:
        if _in_server_units(scenario):
            # pools whose KV cache needs a fabric are weighed only when the load needs them
            load_met = scenario.nodes >= 2 and best[0].meets_load()
            if not load_met:
                best = _with_pools(scenario, dom, best, _FABRIC_FREE)
        serving = best[1].inference.serving if best[1].inference is not None else None
        if serving is not None and not serving.colocated:
            tried.append(f"{unit_shape(best[1])}: {significant(best[0].rate)}{_WITHIN}")
    chosen: WorkloadPlan | None = None
    if best is not None:
        wp = best[1]
        assert wp.inference is not None and wp.inference.serving is not None
        kind = (
            f"{parallel_shape(wp.plan.tp, 1, wp.plan.ep)} replicas"
            if wp.inference.serving.colocated
            else f"{unit_shape(wp)} in every server"
            if wp.inference.serving.kv_inside_domain
            else f"disaggregated pools of {unit_shape(wp)}"
        )
        note = (
            f"deployment chosen by the load: {kind} serve the most requests/s within the p95 "
            f"targets ({'; '.join(tried)})"
            if len(tried) > 1
            else ""
        )
        if load_met:
            note += ("; " if note else "") + not_weighed_note(DENSE_NOT_WEIGHED, kind, best[0].rate)
        serving = wp.inference.serving
        slots = redundant_experts_note(serving.decode) if serving.colocated else ""
        chosen = replace(
            wp,
            plan=replace(wp.plan, source="planner"),
            notes=wp.notes + tuple(text for text in (note, slots) if text),
        )
    if len(_REPLICA_PLAN_CACHE) > 256:
        _REPLICA_PLAN_CACHE.clear()
    _REPLICA_PLAN_CACHE[scenario] = chosen
    return chosen


_FABRIC_FREE_CACHE: dict[
    Scenario, tuple[tuple[ServingScore, WorkloadPlan] | None, tuple[str, ...]]
] = {}


def _fabric_free_best(
    scenario: Scenario, dom: int
) -> tuple[tuple[ServingScore, WorkloadPlan] | None, list[str]]:
    """The best deployment of a model that fits one scale-up domain that needs no fabric:
    replicas at every power-of-two TP and (when the engine chooses) the disaggregated units
    inside each server, scored on the reference network (:func:`serving_score`, the smaller
    TP on a tie); with what each TP served, for the answer's note."""
    hit = _FABRIC_FREE_CACHE.get(scenario)
    if hit is not None:
        return hit[0], list(hit[1])
    inf = scenario.inference
    assert inf is not None
    best: tuple[ServingScore, WorkloadPlan] | None = None
    tried: list[str] = []
    for shape, wp in _fabric_free_replicas(scenario, dom):
        score = serving_score(scenario, wp)
        idle = "" if best is None else idle_note(scenario, score, wp, *best)
        tried.append(f"{shape}: {significant(score.rate)}{_WITHIN}{idle}")
        if best is None or (not idle and score > best[0]):
            best = (score, wp)
    if inf.deployment is None and not inf.independent_replicas and best is not None:
        # disaggregated prefill and decode pools inside each server (KV over NVLink)
        for unit in by_capacity(scenario, _in_server_units(scenario)):
            if below(scenario, unit, best[0].rate):
                break  # no rate within the targets exceeds the capacity
            score = serving_score(scenario, unit)
            if score.beats(best[0]):
                best = (score, _unit_plan(scenario, unit))
    if len(_FABRIC_FREE_CACHE) > 256:
        _FABRIC_FREE_CACHE.clear()
    _FABRIC_FREE_CACHE[scenario] = (best, tuple(tried))
    return best, tried


def _fabric_free_replicas(scenario: Scenario, dom: int) -> list[tuple[str, WorkloadPlan]]:
    """Replicas at every power-of-two TP up to the domain that hold the model and, for a MoE
    model, at every power-of-two expert-parallel size (attention data-parallel, the experts
    spread over the replica's GPUs: the wide-EP serving of SGLang and TensorRT-LLM), by shape
    (the replicas :func:`_fabric_free_best` weighs)."""
    inf, m = scenario.inference, scenario.model
    assert inf is not None
    out: list[tuple[str, WorkloadPlan]] = []
    # (GPUs per replica, tp, ep), smallest replica first (a tie keeps it), TP before EP
    shapes = [(r, r, 1) for r in _powers_of_two_up_to(dom)]
    if m.is_moe:
        shapes += [(r, 1, r) for r in expert_parallel_widths(scenario, dom)]
        shapes.sort(key=lambda shape: shape[0])
    for r, tp, ep in shapes:
        # a replica that does not divide the cluster runs on the whole servers it fills (TP8
        # on 33 NVL72 trays: 16 replicas on 32), unless fewer GPUs would cut the racks so that
        # fewer replicas fit whole (EP64 on two racks: 128 GPUs hold one, the two racks two);
        # the servers no replica of the plan holds are said idle (TP16 on two racks: 4 of 36)
        used = scenario.gpus // r * r
        if r > scenario.gpus or m.heads % tp:
            continue
        if whole_groups(r, dom, scenario.gpus) > whole_groups(
            r, domain_gpus(replace(scenario, gpus=used)), used
        ):
            used = scenario.gpus
        if used % scenario.gpus_per_node:
            continue
        fixed = replace(
            scenario,
            gpus=used,
            parallelism=ParallelismSpec(tp=tp, pp=1, ep=ep),
            inference=replace(inf, deployment="replicas"),
        )
        try:
            wp = _plan_inference(fixed, searching=True)
        except ScenarioError:
            continue
        assert wp.inference is not None and wp.inference.serving is not None
        held = wp.inference.serving.decode.placed_gpus // scenario.gpus_per_node
        if held < scenario.nodes:
            wp = _with_idle_servers(scenario, wp, held)
        out.append((parallel_shape(tp, 1, ep), wp))
    return out


def _fabric_free_plans(scenario: Scenario) -> list[WorkloadPlan | ServingPlan]:
    """Every deployment :func:`_fabric_free_best` weighs on ``scenario``: the rate within the
    targets of each is at most :func:`_fabric_free_rate` (the units it skips by capacity
    serve less than the best it found)."""
    inf = scenario.inference
    assert inf is not None
    replicas: list[WorkloadPlan | ServingPlan] = [
        wp for _, wp in _fabric_free_replicas(scenario, domain_gpus(scenario))
    ]
    weighs_units = inf.deployment is None and not inf.independent_replicas
    return replicas + (list(_in_server_units(scenario)) if replicas and weighs_units else [])


def _fabric_free_rate(scenario: Scenario) -> float:
    """Requests/s within the targets of the engine's deployment that needs no fabric
    (:func:`_fabric_free_best`) on ``scenario``'s servers; 0 when none fits."""
    best, _ = _fabric_free_best(scenario, domain_gpus(scenario))
    return best[0].rate if best is not None else 0.0


def _units_rate(scenario: Scenario) -> float:
    """Requests/s within the targets of the best disaggregated unit inside each server."""
    units = _in_server_units(scenario)
    return serving_score(scenario, best_of(scenario, units)).rate if units else 0.0


FabricFree = tuple[
    Callable[[Scenario], float], Callable[[Scenario], list[WorkloadPlan | ServingPlan]]
]
"""A deployment that needs no fabric on a cluster: its rate within the targets, and the plans
it is the best of (each one's rate within the targets at most that)."""


_IN_SERVER_CACHE: dict[Scenario, tuple[ServingPlan, ...]] = {}


def _in_server_units(scenario: Scenario) -> list[ServingPlan]:
    """Every disaggregated unit of one server (pools.in_server_units) copied onto each of the
    cluster's servers: the KV cache stays on the server's NVLink, so the copies serve
    independently and need no compute fabric.  Their serving plans, what the search scores
    (the plan of the one chosen is :func:`_unit_plan`); kept by scenario, bounded (the search
    asks for a cluster's units from the fabric-free best, its pools' decision and its rate)."""
    hit = _IN_SERVER_CACHE.get(scenario)
    if hit is None:
        hit = tuple(
            copied_plan(unit, scenario.nodes, scenario.nodes) for unit in in_server_units(scenario)
        )
        if len(_IN_SERVER_CACHE) > 256:
            _IN_SERVER_CACHE.clear()
        _IN_SERVER_CACHE[scenario] = hit
    return list(hit)


def _unit_plan(scenario: Scenario, unit: ServingPlan) -> WorkloadPlan:
    """The plan of an in-server unit of :func:`_in_server_units` on ``scenario``'s cluster."""
    return _disaggregated_on(scenario, domain_gpus(scenario), unit)


def _in_server_units_list(scenario: Scenario) -> list[WorkloadPlan | ServingPlan]:
    """:func:`_in_server_units` as the plans a :data:`FabricFree` gives."""
    return list(_in_server_units(scenario))


_FABRIC_FREE: FabricFree = (_fabric_free_rate, _fabric_free_plans)
_UNITS: FabricFree = (_units_rate, _in_server_units_list)


def _choose_deployment(scenario: Scenario, dom: int) -> str | None:
    """``inference.deployment``; or ``compare`` for a model too big for one scale-up domain on
    two or more servers with no explicit plan (:func:`_best_serving_plan` weighs split,
    disaggregated and smaller deployments); ``None`` leaves replicas vs split to the planner
    below (a model that fits one domain runs independent replicas: more servers multiply)."""
    inf = scenario.inference
    assert inf is not None
    if inf.deployment is not None:
        return inf.deployment
    if scenario.parallelism.given or inf.independent_replicas is True or scenario.nodes < 2:
        return None
    m = scenario.model
    weights = served_weight_bytes(m, scenario.precision)
    too_big = weights > dom * scenario.gpu.usable_bytes
    return "compare" if too_big else None


_SERVING_PLAN_CACHE: dict[Scenario, WorkloadPlan] = {}


def _tp_across_servers(scenario: Scenario, dom: int) -> WorkloadPlan | None:
    """A dense replica whose tensor-parallel group spans two servers (TP16 on two 8-GPU
    servers), the multi-node TP that TensorRT-LLM and vLLM run: a token passes one stage
    instead of the split planner's TP x PP stages, at the price of each layer's two
    all-reduces crossing the network (priced per design, performance._inference_times).
    None when the shape does not apply or does not fit (the split planner's answer stands)."""
    tp = 2 * dom
    m = scenario.model
    if m.is_moe or dom != scenario.gpus_per_node or m.heads % tp or scenario.gpus % tp:
        return None
    try:
        given = replace(scenario, parallelism=ParallelismSpec(tp=tp, pp=1))
        wp = _plan_inference(given, searching=True)
    except ScenarioError:
        return None
    return replace(wp, plan=replace(wp.plan, source="planner"))


def _split_if_held_fewer(scenario: Scenario, replicas: WorkloadPlan) -> WorkloadPlan:
    """Replicas of a dense model whose KV memory holds fewer than their share of the requests in
    flight queue the rest; a replica split over servers (the split planner's TP x PP) holds the
    weights once and more requests: the split deployment when it serves clearly more within
    the p95 targets (or, the replicas serving none within them, more at the asked load;
    docs/MODEL.md 15.2, "Users beyond what the KV memory holds")."""
    inf, wp = scenario.inference, replicas.inference
    assert inf is not None and wp is not None and wp.serving is not None
    if scenario.nodes < 2 or inf.independent_replicas or scenario.model.is_moe:
        return replicas
    # a queueing replica's plan runs the batch its KV memory holds (_plan_inference)
    in_flight = math.ceil(inf.concurrent_requests / replicas.plan.dp)
    if not wp.serving.colocated or replicas.plan.micro_batch >= in_flight:
        return replicas
    try:
        split = _plan_inference(
            replace(scenario, inference=replace(inf, deployment="split")), searching=True
        )
    except ScenarioError:
        return replicas
    theirs, mine = serving_score(scenario, split), serving_score(scenario, replicas)
    if not (_clearly_more(theirs.rate, mine.rate) or (mine.rate == 0 and theirs.beats(mine))):
        return replicas
    note = chosen_note(scenario, (theirs, split), [(mine, replicas)], scenario.nodes)
    return replace(split, notes=(*split.notes, *note))


def _best_split(scenario: Scenario, dom: int) -> WorkloadPlan:
    """An asked split deployment of a dense model: the split planner's TP x PP replicas, or
    TP across two servers (:func:`_tp_across_servers`) when it serves more within the p95
    targets on the reference network (a tie keeps the planner's)."""
    planned = _plan_inference(scenario, searching=True)
    wide = _tp_across_servers(scenario, dom)
    if wide is None:
        return planned
    theirs, mine = serving_score(scenario, wide), serving_score(scenario, planned)
    if not theirs.beats(mine):
        return planned
    note = chosen_note(scenario, (theirs, wide), [(mine, planned)], scenario.nodes)
    return replace(wide, notes=(*wide.notes, *note))


def _lift(scenario: Scenario, sub: Scenario, wp: WorkloadPlan) -> WorkloadPlan | None:
    """A deployment planned on ``sub`` (fewer servers) run on ``scenario``'s cluster: a split
    replica, or a whole disaggregated deployment, is copied onto every whole copy's worth of
    servers (as more servers of the same job would be used); the remaining servers stay idle.
    A larger cluster can thus always run what a smaller one runs."""
    assert scenario.inference is not None and wp.inference is not None
    assert wp.inference.serving is not None
    if not wp.inference.serving.colocated:
        return _disaggregated_copies(scenario, sub.nodes, wp.inference.serving)
    p = wp.plan
    r = max(p.ep, p.tp * p.pp) if p.ep > 1 else p.tp * p.pp
    copies = scenario.gpus // r
    if (copies * r) % scenario.gpus_per_node != 0:
        return None
    wider = replace(
        scenario,
        gpus=copies * r,
        parallelism=ParallelismSpec(tp=p.tp, pp=p.pp, ep=p.ep),
        inference=replace(scenario.inference, deployment="split"),
    )
    try:
        wp = _plan_inference(wider, searching=True)
    except ScenarioError:
        return None
    return _with_idle_servers(scenario, wp, wider.nodes)


def _with_idle_servers(scenario: Scenario, wp: WorkloadPlan, used: int) -> WorkloadPlan:
    """``wp``, planned on ``used`` of ``scenario``'s servers, as the whole cluster's plan: the
    other servers idle (said in the notes)."""
    assert wp.inference is not None and wp.inference.serving is not None
    idle = scenario.nodes - used
    serving = replace(wp.inference.serving, servers=scenario.nodes)
    return replace(
        wp,
        plan=replace(wp.plan, source="planner"),
        nodes=scenario.nodes,
        domain_gpus=domain_gpus(scenario),
        domains=max(1, scenario.gpus // domain_gpus(scenario)),
        inference=replace(wp.inference, serving=serving),
        notes=tuple(n for n in wp.notes if "idle" not in n)
        + (
            (f"{idle:,} of the {scenario.nodes:,} servers {'stays' if idle == 1 else 'stay'} idle",)
            if idle
            else ()
        ),
    )


def _best_serving_plan(scenario: Scenario) -> WorkloadPlan:
    """The engine's own deployment for a model that spans servers: the split planner's plan,
    a disaggregated one (MoE), and the same on fewer servers copied over the cluster (the rest
    idle, as the training planner leaves GPUs idle), scored by :func:`serving_score` on the
    reference network (requests/s within both p95 targets first); walking server counts
    upward, a candidate replaces the incumbent only when it scores higher, so a tie keeps the
    smaller deployment.  Every smaller deployment weighed here is a candidate of the larger
    cluster too, so more servers never serve fewer requests/s within the targets."""
    hit = _SERVING_PLAN_CACHE.get(scenario)
    if hit is not None:
        return hit
    inf = scenario.inference
    assert inf is not None
    nodes, gpn = scenario.nodes, scenario.gpus_per_node
    smaller = set(smaller_server_counts(nodes))
    first_error: ScenarioError | None = None
    best: tuple[ServingScore, WorkloadPlan, int] | None = None
    beaten: list[tuple[ServingScore, WorkloadPlan]] = []
    for n in sorted(n for n in smaller | {nodes} if n >= 1):
        sub = scenario if n == nodes else replace(scenario, gpus=n * gpn)
        sub_dom = domain_gpus(sub)
        tries: list[partial[WorkloadPlan] | partial[WorkloadPlan | None]] = []
        if scenario.model.is_moe and n >= 2:
            tries.append(partial(_disaggregated_whole, sub, sub_dom))
        split_sub = replace(sub, inference=replace(inf, deployment="split"))
        tries.append(partial(_plan_inference, split_sub, searching=True))
        if n >= 2:
            tries.append(partial(_tp_across_servers, split_sub, sub_dom))
        for make in tries:
            try:
                wp = make()
            except ScenarioError as exc:
                # on the whole cluster the split planner's refusal (the ordinary deployment) is
                # the one said when nothing fits, unless it only says split does not apply
                if n == nodes and (
                    first_error is None
                    or (
                        make.func is _plan_inference
                        and "inference.deployment" not in exc.field_errors
                    )
                ):
                    first_error = exc
                continue
            if wp is None:
                continue  # the shape does not apply here
            lifted = wp if n == nodes else _lift(scenario, sub, wp)
            if lifted is None:
                continue
            score = serving_score(scenario, lifted)
            if best is None or score.beats(best[0]):
                if best is not None and best[2] == nodes:
                    beaten.append(best[:2])
                best = (score, lifted, n)
            elif n == nodes:
                beaten.append((score, lifted))
    if best is None:
        assert first_error is not None
        if any(f.startswith("inference.pools") for f in first_error.field_errors):
            # no deployment was asked for: say what does not fit, not the disaggregated pools
            weights_gb = served_weight_bytes(scenario.model, scenario.precision) / GB
            usable_gb = scenario.gpu.usable_bytes / GB * scenario.gpus
            raise ScenarioError.single(
                "gpus",
                f"{scenario.model.name} does not fit on {scenario.gpus} x {scenario.gpu.name}: "
                f"its {scenario.precision} weights take {weights_gb:,.0f} GB"
                + (
                    f" against {usable_gb:,.0f} GB usable on all {scenario.gpus:,} GPUs"
                    if weights_gb >= usable_gb
                    else f" and no split replica leaves room for the KV cache of "
                    f"{inf.concurrent_requests} requests"
                )
                + f" ({_fit_remedy(scenario)}); "
                + " ".join(m for msgs in first_error.field_errors.values() for m in msgs),
            ) from first_error
        raise first_error
    chosen = best[1]
    note = chosen_note(scenario, best[:2], beaten, nodes)
    chosen = replace(chosen, notes=(*chosen.notes, *note)) if note else chosen
    if len(_SERVING_PLAN_CACHE) > 256:
        _SERVING_PLAN_CACHE.clear()
    _SERVING_PLAN_CACHE[scenario] = chosen
    return chosen


def _moe_by_load(scenario: Scenario) -> WorkloadPlan:
    """A MoE model that fits one scale-up domain: the planner's replicas, or, when they miss
    the asked load within both p95 targets, :func:`_best_serving_plan`'s deployment across
    servers (on a fabric) if :func:`_clearly_more` (docs/MODEL.md 15.2)."""
    # the replica shape the load chooses; else the planner's replicas, whose refusal (the
    # users' KV cache does not fit) names the servers that would hold them
    dom = domain_gpus(scenario)
    replicas = _replicas_by_load(scenario, dom) or _plan_inference(scenario, searching=True)
    mine = serving_score(scenario, replicas)
    if mine.meets_load():
        kind = f"{parallel_shape(replicas.plan.tp, 1, replicas.plan.ep)} replicas"
        said = not_weighed_note(MOE_NOT_WEIGHED, kind, mine.rate)
        return replace(replicas, notes=(*replicas.notes, said))
    try:
        wider = _best_serving_plan(scenario)
    except ScenarioError:
        return replicas
    theirs = serving_score(scenario, wider).rate
    if not _clearly_more(theirs, mine.rate):
        return replicas
    why = (
        "deployment chosen by the load: replicas inside each "
        + ("server" if dom <= scenario.gpus_per_node else f"{dom}-GPU NVLink domain")
        + f" serve {significant(mine.rate)} requests/s within the p95 targets, short of the "
        "asked load; "
        f"this deployment across servers serves {significant(theirs)} (reference network)"
    )
    return replace(wider, notes=(*wider.notes, why))


def _smaller_pools(scenario: Scenario) -> Iterator[tuple[int, ServingPlan]]:
    """Disaggregated pools planned on each smaller server count from 2
    (:func:`~advisor.engine.model.plans.smaller_server_counts`) on which they can be planned:
    what copies of a smaller deployment are built from."""
    gpn = scenario.gpus_per_node
    for n in smaller_server_counts(scenario.nodes):
        if n < 2:
            continue
        try:
            pools = plan_disaggregated(replace(scenario, gpus=n * gpn))
        except ScenarioError:
            continue
        yield n, pools


def _plan_disaggregated(scenario: Scenario, dom: int) -> WorkloadPlan:
    """A dense model whose prefill and decode instances fit one server: the best disaggregated unit
    inside a server, copied onto every server (pools.in_server_units).  Otherwise the disaggregated
    deployment on all servers, or copies of the one planned on fewer servers (the rest idle) when
    those serve more requests/s within the p95 targets (:func:`serving_score`): more servers never
    serve worse.  Pools given in ``inference.pools`` are planned as given."""
    inf = scenario.inference
    assert inf is not None
    if scenario.parallelism.given:
        raise ScenarioError.single(
            "parallelism",
            "a disaggregated deployment takes its parallelism from inference.pools",
        )
    if inf.prefill_pool or inf.decode_pool:
        return _disaggregated_whole(scenario, dom)
    hit = _DISAGG_PLAN_CACHE.get(scenario)
    if hit is None:
        hit = _search_disaggregated(scenario, dom)
        if len(_DISAGG_PLAN_CACHE) > 256:
            _DISAGG_PLAN_CACHE.clear()
        _DISAGG_PLAN_CACHE[scenario] = hit
    return hit


def _search_disaggregated(scenario: Scenario, dom: int) -> WorkloadPlan:
    """The search of :func:`_plan_disaggregated` for pools it is not given."""
    units = _in_server_units(scenario)
    if units:
        # a dense model whose prefill and decode instances fit one server: the units inside
        # every server (KV cache over NVLink, no fabric) beside whole-server pools (KV cache
        # over the fabric), the one serving the most within the targets
        unit = best_of(scenario, units)
        chosen = (serving_score(scenario, unit), _unit_plan(scenario, unit))
        return _with_pools(scenario, dom, chosen, _UNITS)[1]
    per_domain = _per_domain_plans(scenario, dom)
    if per_domain:
        # a cluster of several NVL72 racks whose deployment fits one rack keeps both pools in
        # every rack (KV cache and expert all-to-all over NVLink, no fabric), as one rack does
        return best_of(scenario, per_domain)
    try:
        whole = _disaggregated_whole(scenario, dom)
    except ScenarioError as err:
        raise _with_alternatives(scenario, err) from err
    best: tuple[ServingScore, WorkloadPlan] = (serving_score(scenario, whole), whole)
    candidates: list[WorkloadPlan] = []
    for n, sub_sp in _smaller_pools(scenario):
        lifted = _disaggregated_copies(scenario, n, sub_sp)
        if lifted is not None:
            candidates.append(lifted)
    for lifted in by_capacity(scenario, candidates):
        if below(scenario, lifted, best[0].rate):
            break  # no rate within the targets exceeds the capacity
        score = serving_score(scenario, lifted)
        if score.beats(best[0]):
            rate_whole = serving_score(scenario, whole).rate
            why = (
                f"chosen over the deployment planned on all {scenario.nodes:,} servers: "
                f"{significant(score.rate)} against {significant(rate_whole)} requests/s "
                "within the p95 targets"
                + ("" if score.rate > rate_whole else " (decided at the scenario's load)")
            )
            best = (score, replace(lifted, notes=(*lifted.notes, why)))
    return best[1]


POOLS_MARGIN: Final = 0.05
"""Whole-server pools, whose KV cache needs a fabric, replace a deployment that needs none only
when they serve more than this fraction more within the targets (the decision's tie band)."""
POOLS_DECIDED_UP_TO: Final = 8
"""Servers up to which whole-server pools are weighed against the deployment that needs no
fabric (:func:`_pools_adopted`); a larger cluster repeats the decision of the largest of them
(its pools include copies of theirs)."""


def _clearly_more(rate: float, than: float) -> bool:
    """Whether ``rate`` (needing a fabric) beats ``than`` (needing none) by POOLS_MARGIN."""
    return rate > than * (1.0 + POOLS_MARGIN)


_POOLS_WIN_CACHE: dict[Scenario, bool] = {}


def _with_pools(
    scenario: Scenario,
    dom: int,
    best: tuple[ServingScore, WorkloadPlan],
    fabric_free: FabricFree,
) -> tuple[ServingScore, WorkloadPlan]:
    """``best`` (a deployment that needs no fabric), or the best whole-server pools, weighed
    on the KV network the decision buys for them (:func:`pools.kv_design`, one RDMA NIC per
    server), when :func:`_pools_adopted`."""
    if not _pools_adopted(scenario, dom, best[0].rate, fabric_free):
        return best
    pools = _whole_server_pools(scenario, dom)
    if not pools:
        return best
    kv = kv_design(scenario)
    top = best_of(scenario, pools, kv)
    return serving_score(scenario, top, kv), top


def _pools_adopted(
    scenario: Scenario,
    dom: int,
    fabric_free_here: float,
    fabric_free: FabricFree,
) -> bool:
    """Whether whole-server pools replace the deployment that needs no fabric: on some
    cluster of n servers, 2 <= n <= min(servers, POOLS_DECIDED_UP_TO), the pools balanced on
    all n serve, within the targets on :func:`pools.kv_design`, more than POOLS_MARGIN more
    than that deployment does on the n servers.  The sizes weighed at N include those weighed
    at every smaller size, so once pools are adopted they stay adopted as servers are added:
    the fabric (and its cost) never comes and goes with the cluster size (docs/MODEL.md 15.2).
    ``fabric_free`` gives that deployment on a smaller cluster."""
    gpn = scenario.gpus_per_node
    for n in range(2, min(scenario.nodes, POOLS_DECIDED_UP_TO) + 1):
        sub = scenario if n == scenario.nodes else replace(scenario, gpus=n * gpn)
        hit = _POOLS_WIN_CACHE.get(sub)
        if hit is None:
            rate: float | None = None
            with contextlib.suppress(ScenarioError):
                sub_dom = dom if n == scenario.nodes else domain_gpus(sub)
                pools = _disaggregated_whole(sub, sub_dom)
                rate = serving_score(sub, pools, kv_design(sub)).rate
            if rate is None:
                hit = False
            elif n == scenario.nodes:
                hit = _clearly_more(rate, fabric_free_here)
            else:
                hit = not _serves_near(sub, rate, fabric_free)
            if len(_POOLS_WIN_CACHE) > 256:
                _POOLS_WIN_CACHE.clear()
            _POOLS_WIN_CACHE[sub] = hit
        if hit:
            return True
    return False


def _serves_near(sub: Scenario, rate: float, fabric_free: FabricFree) -> bool:
    """Whether the deployment that needs no fabric on ``sub`` serves, within the targets, at
    least ``rate`` / (1 + POOLS_MARGIN): one of the plans it is the best of that does proves
    it (scoring.reaches); when none does, its own rate decides."""
    exact, plans = fabric_free
    known = exact is _fabric_free_rate and sub in _FABRIC_FREE_CACHE
    margin = 1.0 + POOLS_MARGIN
    return (not known and reaches(sub, plans(sub), rate, margin)) or rate <= exact(sub) * margin


def _whole_server_pools(scenario: Scenario, dom: int) -> list[WorkloadPlan]:
    """Disaggregated pools of whole servers (prefill servers : decode servers balanced by the
    load model, pools.plan_disaggregated) of a dense model whose units fit one server, weighed
    beside the units inside each server (docs/MODEL.md 15.2): the pools planned on all of the
    cluster's servers and copies of those planned on fewer (the rest idle), so that what a
    smaller cluster serves this way a larger one serves too.  Each request's KV cache crosses
    the scale-out fabric (priced per design, as for every multi-server pool); none on one."""
    if scenario.nodes < 2:
        return []
    out: list[WorkloadPlan] = []
    with contextlib.suppress(ScenarioError):
        out.append(_disaggregated_whole(scenario, dom))
    units = in_server_units(replace(scenario, gpus=scenario.gpus_per_node))
    for n, sub_sp in _smaller_pools(scenario):
        lifted = _disaggregated_copies(scenario, n, sub_sp)
        if lifted is not None:
            out.append(lifted)
        out.extend(_pools_and_units(scenario, dom, n, sub_sp, units))
    return out


def _pools_and_units(
    scenario: Scenario, dom: int, n: int, sub_sp: ServingPlan, units: list[ServingPlan]
) -> list[WorkloadPlan]:
    """Copies of the whole-server pools planned on ``n`` servers, the servers left over each
    running a unit inside the server whose instances are alike (one pool of each role, side
    by side), rather than idle: a cluster one server larger than the pools' serves what they
    serve and a unit's more.  Every KV cache is priced as crossing the fabric (the units'
    moves over NVLink: conservative) and the leftover servers count in the prefill pool."""
    copies = scenario.nodes // n
    rest = scenario.nodes - copies * n
    if rest == 0:
        return []
    out: list[WorkloadPlan] = []
    base = copied_plan(sub_sp, copies, scenario.nodes)
    for unit in units:
        if not alike(sub_sp, unit):
            continue
        extra = copied_plan(unit, rest, rest)
        merged = replace(
            base,
            prefill=replace(
                joined(base.prefill, extra.prefill), servers=base.prefill.servers + rest
            ),
            decode=replace(joined(base.decode, extra.decode), servers=base.decode.servers),
            copies=copies,
            copy_servers=n,
            kv_inside_domain=False,
        )
        wp = _disaggregated_on(scenario, dom, merged)
        note = (
            f"{copies:,} cop{'y' if copies == 1 else 'ies'} of the {n}-server disaggregated "
            f"deployment ({sub_sp.prefill.servers:,} prefill + {sub_sp.decode.servers:,} decode "
            f"servers); the other {rest:,} server{'s' if rest != 1 else ''} each run "
            f"{unit.prefill.units} x {unit.prefill.shape} prefill + "
            f"{unit.decode.units} x {unit.decode.shape} decode, their instances in the same "
            "pools"
        )
        out.append(replace(wp, notes=(*wp.notes, note)))
    return out


def _with_alternatives(scenario: Scenario, err: ScenarioError) -> ScenarioError:
    """A disaggregated deployment refused on this cluster, with what would serve the model:
    the engine's own deployment on the same servers, and fp8 weights (fewer servers per pool)
    when the GPU runs fp8."""
    inf = scenario.inference
    assert inf is not None
    if len(err.field_errors) != 1:
        return err
    field, messages = next(iter(err.field_errors.items()))
    if not field.startswith("inference.pools"):
        return err
    extra: list[str] = []
    try:
        own = _plan_inference(replace(scenario, inference=replace(inf, deployment=None)))
    except ScenarioError:
        own = None
    if own is not None and own.inference is not None and own.inference.serving is not None:
        p, kind = own.plan, own.inference.serving.deployment
        shape = replicas_shape(p.dp, p.tp, p.pp, p.ep, split=kind == "split")
        extra.append(
            f"on these {scenario.nodes:,} servers {shape} serve{'s' if p.dp == 1 else ''} it "
            f"(inference.deployment '{kind}' or left out)"
        )
    if scenario.precision == "bf16" and scenario.gpu.fp8_dense_tflops > 0:
        need = least_pool_servers(replace(scenario, precision="fp8"))
        if need is not None:
            extra.append(
                f"with fp8 weights disaggregated serving needs {need[0]:,} prefill + {need[1]:,} "
                "decode servers"
            )
    if not extra:
        return err
    return ScenarioError({field: [*messages[:-1], f"{messages[-1]}; " + "; ".join(extra)]})


def _per_domain_plans(scenario: Scenario, dom: int) -> list[WorkloadPlan]:
    """Disaggregated deployments of a cluster of several scale-up domains that span servers
    (NVL72 racks of 18 trays), every one whole inside one domain so that its KV cache and its
    expert all-to-all move over NVLink, never the network (docs/MODEL.md 15): copies of the
    deployment planned on each n = 2 .. 18 trays placed per rack (placement.whole_groups, the
    trays left over idle), and one deployment per rack (each full rack's plan and the partial
    rack's own) when their instances are alike.  Empty on other platforms, inside one domain,
    or when no deployment fits one domain (then the pools span racks)."""
    gpn = scenario.gpus_per_node
    if dom <= gpn or scenario.gpus <= dom or scenario.gpus % gpn:
        return []
    per = dom // gpn
    out: list[WorkloadPlan] = []
    plans: dict[int, ServingPlan] = {}
    for n in range(2, per + 1):
        try:
            plans[n] = plan_disaggregated(replace(scenario, gpus=n * gpn))
        except ScenarioError:
            continue
        lifted = _disaggregated_copies(scenario, n, plans[n])
        if lifted is not None:
            out.append(lifted)
    racks, rest = divmod(scenario.nodes, per)
    rack, partial = plans.get(per), plans.get(rest)
    if rack is not None and partial is not None and alike(rack, partial):
        # one deployment per rack: the full racks' and the partial rack's, pools side by side
        merged = copied_plan(rack, racks, scenario.nodes)
        merged = replace(
            merged,
            prefill=joined(merged.prefill, partial.prefill),
            decode=joined(merged.decode, partial.decode),
            copies=racks + 1,
            copy_servers=per,
            kv_inside_domain=True,
        )
        wp = _disaggregated_on(scenario, dom, merged)
        note = (
            f"one disaggregated deployment per {dom}-GPU scale-up domain: "
            f"{rack.prefill.servers:,} prefill + {rack.decode.servers:,} decode servers in each of "
            f"the {racks:,} full one{'s' if racks != 1 else ''}, {partial.prefill.servers} + "
            f"{partial.decode.servers} in the last {rest} servers"
        )
        out.append(replace(wp, notes=(*wp.notes, note)))
    return out


def _disaggregated_copies(scenario: Scenario, n: int, sub_sp: ServingPlan) -> WorkloadPlan | None:
    """As many copies of the disaggregated deployment ``sub_sp`` planned on ``n`` servers as
    ``scenario``'s cluster holds, the rest of its servers idle (said in the notes).

    On a platform whose scale-up domain spans servers (an NVL72 rack of 18 trays) a copy that
    fits one domain is placed whole inside one (placement.whole_groups: ``18 // n`` copies per
    full rack and ``rest // n`` in a partial one), so no copy straddles two racks and its
    communicators stay where the plan says; the trays left over in each rack idle.  A copy
    larger than one domain is not taken there (``None``): copies laid side by side would put
    decode expert groups across rack boundaries that the plan's traffic counts inside one (the
    audit's ``placement`` property); the deployment planned on the whole cluster is weighed
    beside the copies."""
    dom = domain_gpus(scenario)
    gpn = scenario.gpus_per_node
    if dom > gpn and n * gpn > dom:
        return None
    copies = whole_groups(n * gpn, dom, scenario.nodes * gpn) if dom > gpn else scenario.nodes // n
    copied = replace(
        copied_plan(sub_sp, copies, scenario.nodes),
        copies=copies,
        copy_servers=n,
        # each copy sits whole inside one NVLink domain: its KV cache never leaves it
        kv_inside_domain=dom > gpn or sub_sp.kv_inside_domain,
    )
    lifted = _disaggregated_on(scenario, dom, copied)
    idle = scenario.nodes - n * copies
    note = (
        f"{copies:,} cop{'y' if copies == 1 else 'ies'} of the {n}-server disaggregated deployment"
    )
    if dom > gpn and scenario.gpus > dom:
        per = dom // gpn
        note += (
            f", each whole inside one {per}-server scale-up domain ({per // n} per full domain; "
            "none straddles two)"
        )
    if idle:
        note += f"; {idle} server{'s stay' if idle != 1 else ' stays'} idle"
    return replace(lifted, notes=(*lifted.notes, note))


_DISAGG_PLAN_CACHE: dict[Scenario, WorkloadPlan] = {}


def _disaggregated_whole(scenario: Scenario, dom: int) -> WorkloadPlan:
    """The disaggregated deployment planned on all of ``scenario``'s servers."""
    return _disaggregated_on(scenario, dom, plan_disaggregated(scenario))
