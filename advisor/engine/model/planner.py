"""Workload planner: the parallelism plan of a scenario (searched for training, chosen for
serving) with its memory fit, stage times and traffic volumes.

Everything here depends on the scenario only, never on the network design, so
:func:`plan_workload` runs once per scenario and
:func:`advisor.engine.model.performance.evaluate_design` reuses its numbers for every candidate
network (precomputed in the plan).

Units: bytes, seconds, FLOPs (not FLOP/s) unless the name says otherwise.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Final

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.formatting import significant
from advisor.engine.facts.limits import GPUS_MAX
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.memory import _fits, training_memory
from advisor.engine.model.plan_estimate import (
    MID_REFERENCE_GPU_NET_BYTES_PER_S as MID_REFERENCE_GPU_NET_BYTES_PER_S,
)
from advisor.engine.model.plan_estimate import (
    REFERENCE_GPU_NET_BYTES_PER_S as REFERENCE_GPU_NET_BYTES_PER_S,
)
from advisor.engine.model.plan_estimate import (
    SLOW_REFERENCE_GPU_NET_BYTES_PER_S as SLOW_REFERENCE_GPU_NET_BYTES_PER_S,
)
from advisor.engine.model.plan_estimate import _estimate_step_s as _estimate_step_s
from advisor.engine.model.plan_search import (
    RECOMPUTE_ORDER,
    VIRTUAL_STAGES,
    _Candidate,
    _search_training,
    _shape_rows,
    _shapes,
    _sharding_options,
    _SizeMemo,
    _tp_overlap,
    fewer_gpus_floor_s,
    sequence_gpu_seconds,
)
from advisor.engine.model.plans import (
    FewerGpuPlans,
    Plan,
    TrainingPlan,
    WorkloadPlan,
    a2a_overlap_runs,
    as_planned,
    domain_gpus,
    moe_software,
)
from advisor.engine.model.serving.deployment import _plan_inference
from advisor.engine.model.stage_time import _microbatches, _stage_split, _training_costs
from advisor.engine.model.training_step import (
    plan_floor_s,
    training_step_above,
    training_step_time_s,
)
from advisor.engine.result.echo import Memory

# ----------------------------------------------------------------------------- planner


def plan_workload(scenario: Scenario) -> WorkloadPlan:
    """Choose (or check) the parallelism plan and precompute its design-independent costs.

    Raises :class:`ScenarioError` when an explicit plan is inconsistent or when the model
    cannot fit even at maximum parallelism.
    """
    planned = as_planned(scenario)
    hit = _PLAN_CACHE.get(planned)
    if hit is None:
        hit = _plan_training(planned) if planned.is_training else _plan_inference(planned)
        if len(_PLAN_CACHE) > 256:
            _PLAN_CACHE.clear()
        _PLAN_CACHE[planned] = hit
    return hit


_PLAN_CACHE: dict[Scenario, WorkloadPlan] = {}
"""Plans by scenario: planning is a pure function of the (frozen) scenario, and the same plan
object lets :func:`advisor.engine.model.performance.evaluate_design` reuse its design metrics
(training) and the scaling chart's point at the cluster's own size reuse the request's plan
(a serving deployment search is the costliest part of planning)."""


def _explicit_stages(scenario: Scenario, pp: int) -> tuple[int, int, int]:
    """Stage split of an explicit plan (first/last stage layers honoured)."""
    p = scenario.parallelism
    layers = scenario.model.layers
    if p.first_stage_layers is None and p.last_stage_layers is None:
        split = _stage_split(layers, pp, scenario.model.mtp_layers)
        if split is None:
            raise ScenarioError.single(
                "parallelism.pp", f"must be <= the model's layers ({layers})"
            )
        return split
    if pp < 2:
        raise ScenarioError.single(
            "parallelism.first_stage_layers", "needs a pipeline of at least 2 stages (pp >= 2)"
        )
    first = p.first_stage_layers
    last = p.last_stage_layers
    given = [v for v in (first, last) if v is not None]
    rest = layers - sum(given)
    inner_stages = pp - len(given)
    if (
        rest < inner_stages
        or (inner_stages and rest % inner_stages != 0)
        or (not inner_stages and rest != 0)
    ):
        raise ScenarioError.single(
            "parallelism.first_stage_layers",
            f"the layers left after the first/last stages ({rest}) must split evenly over the "
            f"other {inner_stages} stages",
        )
    inner = rest // inner_stages if inner_stages else max(given)
    return (first if first is not None else inner, inner, last if last is not None else inner)


def _check_explicit_training(scenario: Scenario) -> tuple[int, int, int, int, int]:
    p = scenario.parallelism
    errors: dict[str, list[str]] = {}
    tp = p.tp or 1
    pp = p.pp or 1
    ep = p.ep or 1
    cp = p.cp or 1
    mp = tp * pp * cp
    if p.dp is not None:
        dp = p.dp
        if mp * dp != scenario.gpus:
            errors["parallelism"] = [
                f"tp x cp x pp x dp = {tp} x {cp} x {pp} x {dp} = {mp * dp} must equal "
                f"gpus ({scenario.gpus})"
            ]
    else:
        if scenario.gpus % mp != 0:
            errors["parallelism"] = [f"tp x cp x pp = {mp} must divide gpus ({scenario.gpus})"]
        dp = max(1, scenario.gpus // mp)
    m = scenario.model
    if m.heads % tp != 0:
        errors.setdefault("parallelism.tp", []).append(f"must divide the model's heads ({m.heads})")
    if pp > m.layers:
        errors.setdefault("parallelism.pp", []).append(
            f"must be <= the model's layers ({m.layers})"
        )
    if cp > 1 and scenario.sequence_length % (2 * cp) != 0:
        errors.setdefault("parallelism.cp", []).append(
            f"2 x cp must divide the sequence length ({scenario.sequence_length})"
        )
    if ep > 1:
        if not m.is_moe:
            errors.setdefault("parallelism.ep", []).append("must be 1 for a dense model")
        elif m.moe_experts % ep != 0:
            errors.setdefault("parallelism.ep", []).append(
                f"must divide the number of experts ({m.moe_experts})"
            )
        elif (tp * dp * cp) % ep != 0:
            # the experts' ranks are tp x dp x cp (MoE parallel folding, placement.expert_tp)
            errors.setdefault("parallelism.ep", []).append(
                f"must divide tp x dp x cp ({tp * dp * cp})"
            )
    if errors:
        raise ScenarioError(errors)
    return tp, pp, dp, ep, cp


def _any_plan_fits(scenario: Scenario) -> bool:
    """Whether the planner's search of this size finds any plan, without searching: with no
    plan found yet it prices nothing and takes the first shape that fits at its smallest
    footprint (last sharding and recomputation, no interleaving) and fits under some sharding
    and recomputation at its first interleaving (the one given, else none)."""
    assert scenario.training is not None
    p = scenario.parallelism
    recomputes = (p.recompute,) if p.recompute else RECOMPUTE_ORDER
    shardings = _sharding_options(scenario)
    vp = p.virtual_stages or 1
    for tp, cp, pp, ep, mb, dp, mcount, stages, _ in _shape_rows(scenario):
        if not _fits(
            scenario, tp, pp, dp, ep, mb, shardings[-1], recomputes[-1], mcount, cp, 1, stages
        ):
            continue
        for sharding in shardings:
            for rc in recomputes:
                if _fits(scenario, tp, pp, dp, ep, mb, sharding, rc, mcount, cp, vp, stages):
                    return True
    return False


FIT_SEARCH_DOUBLINGS: Final = 6
"""A training refusal names the smallest cluster that holds the job among 2, 4, ... 64 times
the GPUs asked (:func:`_gpus_that_fit`)."""


def _gpus_that_fit(scenario: Scenario) -> int | None:
    """The first of the scenario's GPUs doubled, up to :data:`FIT_SEARCH_DOUBLINGS` times and at
    most ``GPUS_MAX``, on which some plan holds the job (:func:`_any_plan_fits`); ``None``."""
    gpus = scenario.gpus
    for _ in range(FIT_SEARCH_DOUBLINGS):
        gpus *= 2
        if gpus > GPUS_MAX:
            return None
        if _any_plan_fits(replace(scenario, gpus=gpus)):
            return gpus
    return None


def _does_not_fit(scenario: Scenario) -> ScenarioError:
    """The refusal of a training job no plan holds: the rule, the smallest cluster of the same
    servers that holds it (:func:`_gpus_that_fit`), and for fine-tuning that every weight is
    trained (adapters such as LoRA are not modelled)."""
    gpus = _gpus_that_fit(scenario)
    servers = -(-gpus // scenario.gpus_per_node) if gpus else 0
    holds = (
        f"; {gpus:,} x {scenario.gpu.name} ({servers:,} server{'s' if servers != 1 else ''}) "
        "would hold it"
        if gpus
        else ""
    )
    tuned = (
        " (fine-tuning trains every weight, with its gradients and optimizer state; adapters "
        "such as LoRA are not modelled)"
        if scenario.workload == "fine_tuning"
        else ""
    )
    return ScenarioError.single(
        "gpus",
        f"{scenario.model.name} does not fit on {scenario.gpus} x {scenario.gpu.name} "
        "even with maximum tensor, pipeline, context and expert parallelism, full "
        f"recomputation and zero3 sharding{tuned}{holds}; add GPUs or pick a GPU with more "
        "memory",
    )


def check_workload(scenario: Scenario) -> None:
    """Raise the :class:`ScenarioError` :func:`plan_workload` would raise, for the checks of
    a submitted scenario (the worker plans it again in its own process): a training plan the
    planner searches is refused only when no plan of the cluster's size fits
    (:func:`_any_plan_fits`, a few ms where the plan itself searches every smaller size); an
    explicit training plan and a serving deployment are planned as :func:`plan_workload`
    plans them."""
    if scenario.is_training and not scenario.parallelism.given and scenario not in _PLAN_CACHE:
        if not _any_plan_fits(scenario):
            raise _does_not_fit(scenario)
        return
    plan_workload(scenario)


"""Per cluster size: its fastest plan on the reference design and its planner's contenders."""
"""The planner's best plan of a power-of-two number of servers (shared by the sizes above
it, and by the scaling curve's sizes)."""

REFERENCE_DESIGN = Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8)
"""The design the planner uses to compare its best plans of different sizes: one 400G
InfiniBand NIC per GPU, non-blocking (the fabric of :data:`REFERENCE_GPU_NET_BYTES_PER_S`)."""


PLAN_CONTENDERS: Final = 4
"""The planner's best plans by its step estimate that the full step model then prices: the
estimate leaves out per-hop latency, placement and stragglers and can rank two plans a few per
cent apart the wrong way round (llama3-70b on 70 H100 servers picked tp8/pp2/dp35 at 6.03 s
over tp4/pp2/dp69 at 5.79 s), and the full model decides."""

SLOW_PLAN_CONTENDERS: Final = 2
"""The planner's best plans by its estimate on :data:`SLOW_REFERENCE_GPU_NET_BYTES_PER_S`,
carried beside the :data:`PLAN_CONTENDERS` so every design, fast or slow, weighs a plan made
for a network like its own (llama3-70b on A100 over one 25G TCP NIC per server: 347 s per step
on 13 servers with tp8/dp13, 4,262 s on 16 servers, whose contenders were all data-parallel
ZeRO-3 plans made for 400G per GPU)."""


MID_PLAN_CONTENDERS: Final = 2
"""The planner's best plans by its estimate on :data:`MID_REFERENCE_GPU_NET_BYTES_PER_S` (one
NIC per four GPUs), carried beside the others for the designs between the two references."""


def _ranked_contenders(scenario: Scenario) -> tuple[_Candidate, ...]:
    """The planner's contenders of one cluster size, best by the reference estimate first:
    its :data:`PLAN_CONTENDERS` best for the reference network, then its
    :data:`MID_PLAN_CONTENDERS` best for one NIC per four GPUs and its
    :data:`SLOW_PLAN_CONTENDERS` best for the slow network (each once)."""

    hit = _CONTENDERS_CACHE.get(scenario)
    if hit is not None:
        return hit

    def rank(found: list[_Candidate]) -> list[_Candidate]:
        return sorted(found, key=lambda c: (c.estimate_s, c.tp * c.pp * c.cp * c.dp))

    shapes = _shapes(scenario)
    memo = _SizeMemo(scenario)
    found_fast, found_mid, found_slow = _search_training(
        scenario,
        (
            (REFERENCE_GPU_NET_BYTES_PER_S, PLAN_CONTENDERS),
            (MID_REFERENCE_GPU_NET_BYTES_PER_S, MID_PLAN_CONTENDERS),
            (SLOW_REFERENCE_GPU_NET_BYTES_PER_S, SLOW_PLAN_CONTENDERS),
        ),
        shapes,
        shared=memo,
    )
    kept = list(rank(found_fast)[:PLAN_CONTENDERS])
    seen = {_plan_key(c) for c in kept}
    for found, count in ((found_mid, MID_PLAN_CONTENDERS), (found_slow, SLOW_PLAN_CONTENDERS)):
        extra = [c for c in rank(found) if _plan_key(c) not in seen][:count]
        seen.update(_plan_key(c) for c in extra)
        kept.extend(extra)
    out = tuple(_with_memory(scenario, c) for c in kept)
    if len(_CONTENDERS_CACHE) > 2048:
        _CONTENDERS_CACHE.clear()
    _CONTENDERS_CACHE[scenario] = out
    return out


_CONTENDERS_CACHE: dict[Scenario, tuple[_Candidate, ...]] = {}


def _with_memory(scenario: Scenario, c: _Candidate) -> _Candidate:
    """``c`` with its :func:`training_memory` (the search keeps
    :data:`plan_search._MEMORY_PENDING`)."""
    assert scenario.training is not None
    mcount = _microbatches(scenario.training.global_batch_sequences, c.dp, c.mb)
    mem = training_memory(
        scenario, c.tp, c.pp, c.dp, c.ep, c.mb, c.sharding, c.recompute, mcount,
        cp=c.cp, vp=c.vp, stages=c.stages,
    )  # fmt: skip
    # the candidate with its memory (dataclasses.replace without its walk over the fields)
    return _Candidate(
        c.tp, c.pp, c.cp, c.dp, c.ep, c.mb, c.vp, c.sharding, c.recompute, c.stages, mem,
        c.estimate_s,
    )  # fmt: skip


def _plan_key(c: _Candidate) -> tuple[Any, ...]:
    return (c.tp, c.pp, c.cp, c.dp, c.ep, c.mb, c.vp, c.sharding, c.recompute, c.stages)


def _reference_step_s(scenario: Scenario, c: _Candidate) -> float:
    """A candidate's step on the full model and the reference design (its own servers)."""
    plan = _candidate_plan(scenario, c, "planner")
    return training_step_time_s(
        scenario, _training_workload(scenario, plan, c.mem, notes=()), REFERENCE_DESIGN
    )


def _priced_steps(
    plans: Sequence[tuple[Plan, Memory]],
    scenario: Scenario,
    workloads: Sequence[WorkloadPlan | None] = (),
    first: int | None = None,
    least: float = math.inf,
) -> list[float]:
    """The full step of each plan on :data:`REFERENCE_DESIGN` (each on its own servers), or
    ``inf`` for a plan that cannot be the fastest: branch and bound on its compute floor
    (:func:`training_step.plan_floor_s`, a lower bound of its step that needs neither its
    workload nor the network).  Plans are priced lowest floor first (``first``, if given,
    before all), and one whose floor is above the least step priced so far is not priced:
    its step is at least its floor, so above the least, and a ``min`` over ``(step, ...)``
    picks the same plan as over the priced steps of every plan.  ``workloads``: the plans'
    workloads where already built (the others are built when priced); ``least``: the least
    step of the plans priced before these (a plan whose step is above it keeps ``inf``)."""
    floors = [plan_floor_s(scenario, plan) for plan, _ in plans]
    order = sorted(range(len(plans)), key=lambda i: (i != first, floors[i], i))
    steps = [math.inf] * len(plans)
    for i in order:
        if floors[i] > least and i != first:
            break  # sorted by floor: no later plan can be below the least either
        workload = workloads[i] if i < len(workloads) else None
        if workload is None:
            plan, mem = plans[i]
            workload = _training_workload(scenario, plan, mem, notes=())
        if i == first or least == math.inf:
            steps[i] = training_step_time_s(scenario, workload, REFERENCE_DESIGN)
        else:
            # above the least it keeps ``inf`` too (its network-crossing gradients unpriced)
            steps[i] = training_step_above(scenario, workload, REFERENCE_DESIGN, least)
        least = min(least, steps[i])
    return steps


def _smaller_sizes(scenario: Scenario) -> list[int]:
    """GPUs of every smaller power-of-two number of servers (1, 2, 4, ... below the cluster),
    largest first."""
    gpn = scenario.gpus_per_node
    sizes: list[int] = []
    servers = 1
    while servers * gpn < scenario.gpus:
        sizes.append(servers * gpn)
        servers *= 2
    sizes.reverse()
    return sizes


def _fastest_on_fewer_gpus(
    scenario: Scenario,
    chosen: _Candidate,
    notes: list[str],
    others: list[WorkloadPlan],
    *,
    contenders: Sequence[_Candidate] = (),
) -> tuple[_Candidate, FewerGpuPlans | None]:
    """Monotone by construction: the best plan of this cluster, or the best plan of any
    smaller power-of-two number of servers if that predicts a faster step (its extra GPUs
    idle).  The candidates are compared with the full step model
    (:func:`advisor.engine.model.training_step.training_step_time_s`) on :data:`REFERENCE_DESIGN`,
    each on the contiguous sub-fabric its own servers need, so a plan predicts the same step
    on any larger cluster: the candidates of a cluster include every power-of-two size below
    it, and its predicted step never exceeds theirs.

    A smaller size is searched only when it can win (MODEL.md 5.3, "Smaller sizes searched
    when they can win"): when :func:`plan_search.fewer_gpus_floor_s`, a lower bound of the
    compute floor of every plan it can find, is at most the least step so far (a plan whose
    floor is above the least keeps ``inf`` in :func:`_priced_steps` and cannot be chosen).
    The bound falls as the sizes grow, so they are tried largest first and the first above
    the least ends the search.  The plans not chosen go to ``others``: each design also
    evaluates them (a design unlike the reference may rank them differently); the sizes not
    searched are returned for the designs that need them (slower ones, whose step to beat is
    above their bound: :func:`training_step.alternatives_below`).
    """
    sizes = _smaller_sizes(scenario)
    if not contenders and not sizes:
        return chosen, None
    per_sequence_s = sequence_gpu_seconds(scenario) if sizes else 0.0
    bounds = [(fewer_gpus_floor_s(scenario, per_sequence_s, n), n) for n in sizes]
    unique: dict[tuple[Any, ...], tuple[_Candidate, WorkloadPlan]] = {}

    def added(found: Sequence[_Candidate]) -> list[tuple[_Candidate, WorkloadPlan]]:
        new: list[tuple[_Candidate, WorkloadPlan]] = []
        for c in found:
            key = _plan_key(c)
            if key not in unique:
                plan = _candidate_plan(scenario, c, "planner")
                unique[key] = (c, _training_workload(scenario, plan, c.mem, notes=()))
                new.append(unique[key])
        return new

    # the chosen plan is always priced (its step is the note's); a plan whose floor is above
    # the least step priced keeps ``inf`` and loses the ``min`` as it would with its step
    priced = added([chosen, *contenders])
    steps = _priced_steps(
        [(w.plan, c.mem) for c, w in priced], scenario, [w for _, w in priced], first=0
    )
    least = min(steps)
    searched = 0
    for bound, gpus in bounds:
        if bound > least:
            break  # no plan of this size or a smaller one can be below the least
        searched += 1
        new = added(_ranked_contenders(replace(scenario, gpus=gpus)))
        new_steps = _priced_steps(
            [(w.plan, c.mem) for c, w in new], scenario, [w for _, w in new], least=least
        )
        priced.extend(new)
        steps.extend(new_steps)
        least = min([least, *new_steps])
    best = min(range(len(priced)), key=lambda i: (steps[i], priced[i][1].plan.gpus_used))
    others.extend(w for i, (_, w) in enumerate(priced) if i != best)
    fewer = _fewer_gpu_plans(scenario, bounds[searched:], set(unique))
    best_c, best_w = priced[best]
    if best_c is not chosen:
        if best_w.plan.gpus_used >= priced[0][1].plan.gpus_used:
            return best_c, fewer  # a plan of this cluster the estimate had ranked lower
        notes.append(
            f"a plan on {best_w.plan.gpus_used:,} GPUs predicts a faster step "
            f"({significant(steps[best], 4)} s) than the best "
            f"plan using more of the {scenario.gpus:,} GPUs "
            f"({significant(steps[0], 4)} s on the reference "
            "400G-per-GPU InfiniBand fabric, each on the contiguous servers it needs): the "
            "planner keeps it and leaves the other GPUs idle, so adding servers never slows "
            "the step"
        )
    return best_c, fewer


def _fewer_gpu_plans(
    scenario: Scenario, bounds: list[tuple[float, int]], seen: set[tuple[Any, ...]]
) -> FewerGpuPlans | None:
    """The sizes :func:`_fastest_on_fewer_gpus` did not search, for the designs that need
    them: each searched once, its contenders as plans of ``scenario`` (a plan already weighed,
    ``seen`` by key, is not repeated)."""
    if not bounds:
        return None
    made: dict[int, tuple[WorkloadPlan, ...]] = {}
    # a cached plan is shared by the web's threads: one search at a time, so a size is
    # searched once and ``seen`` read and written by one of them
    lock = threading.Lock()

    def search(gpus: int) -> tuple[WorkloadPlan, ...]:
        with lock:
            hit = made.get(gpus)
            if hit is None:
                out: list[WorkloadPlan] = []
                for c in _ranked_contenders(replace(scenario, gpus=gpus)):
                    key = _plan_key(c)
                    if key not in seen:
                        seen.add(key)
                        plan = _candidate_plan(scenario, c, "planner")
                        out.append(_training_workload(scenario, plan, c.mem, notes=()))
                hit = made[gpus] = tuple(out)
            return hit

    return FewerGpuPlans(bounds=tuple(bounds), search=search)


def _candidate_plan(scenario: Scenario, c: _Candidate, source: str) -> Plan:
    first, _, last = c.stages
    even = first == last == c.stages[1]
    software = moe_software(scenario)
    return Plan(
        tp=c.tp,
        pp=c.pp,
        dp=c.dp,
        ep=c.ep,
        micro_batch=c.mb,
        virtual_stages=c.vp,
        sharding=c.sharding,
        recompute=c.recompute,
        source=source,
        cp=c.cp,
        first_stage_layers=0 if even else first,
        last_stage_layers=0 if even else last,
        tp_comm_overlap=_tp_overlap(scenario),
        ep_overlap=_ep_overlap(software.overlap, c, source),
        moe_dispatcher=software.dispatcher,
        gpus_used=c.tp * c.cp * c.pp * c.dp,
    )


def _ep_overlap(overlap: str, c: _Candidate, source: str) -> str:
    """The plan's expert all-to-all overlap from the scenario's (:func:`plans.moe_software`):
    as given on an explicit plan; on a chosen one, Megatron-Core's 1F1B overlap only where it
    runs (:func:`plans.a2a_overlap_runs`), none elsewhere."""
    if source == "explicit" or overlap != "a2a_1f1b":
        return overlap
    return overlap if a2a_overlap_runs(c.ep, c.pp, c.vp, c.recompute) else "none"


def _moe_software_notes(scenario: Scenario, plan: Plan) -> list[str]:
    """What the answer assumed of the MoE training stack where the scenario left it open
    (:func:`plans.moe_software`)."""
    p = scenario.parallelism
    notes: list[str] = []
    if p.moe_dispatcher is None:
        notes.append(
            "expert dispatch assumed as NVIDIA's MoE training recipes run it: DeepEP "
            "(Megatron-Core's flex dispatcher; a token crosses the network once per destination "
            "server, over RDMA, and is forwarded over NVLink inside it)"
            if plan.moe_dispatcher == "deepep"
            else "expert dispatch assumed to be NCCL's all-to-all (Megatron-Core's alltoall "
            "dispatcher; DeepEP needs NVIDIA Hopper or Blackwell GPUs joined by NVLink, not "
            f"the {scenario.gpu.name})"
        )
    if p.ep_overlap is None:
        notes.append(
            "the expert all-to-all assumed overlapped with another micro-batch's compute "
            "(Megatron-Core's 1F1B all-to-all overlap, as NVIDIA's MoE recipes enable it)"
            if plan.ep_overlap == "a2a_1f1b"
            else "the expert all-to-all is not overlapped: Megatron-Core's 1F1B all-to-all "
            "overlap needs no pipeline or an interleaved one, and no full recomputation"
        )
    return notes


def _idle_gpus_note(scenario: Scenario, plan: Plan, batch: int) -> str:
    """Why a plan leaves GPUs idle. With one micro-batch a rank more ranks have nothing to
    take; otherwise the ranks it has reach the fewest micro-batches a rank the cluster's GPUs
    allow (docs/MODEL.md 9, "dp is the fewest ranks"): one fewer takes
    ``ceil(B / ((m - 1) x mb))`` ranks, said where the cluster cannot hold them; where it
    could, the planner priced those ranks slower (the faster-on-fewer-GPUs note says so)."""
    used, idle = plan.gpus_used, scenario.gpus - plan.gpus_used
    head = (
        f"the plan uses {used:,} of {scenario.gpus:,} GPUs (tp {plan.tp} x cp {plan.cp} "
        f"x pp {plan.pp} x dp {plan.dp:,}); {idle:,} GPU{'s' if idle != 1 else ''} idle: "
        f"with a global batch of {batch:,} sequences"
    )
    per_rank = _microbatches(batch, plan.dp, plan.micro_batch)
    if per_rank == 1:
        servers = math.ceil(used / scenario.gpus_per_node)
        return (
            f"{head}, every data-parallel rank holds one micro-batch, so more ranks would not "
            f"shorten the step (it stops improving beyond {servers:,} servers for this plan)"
        )
    ep = max(1, plan.ep)
    fewer = math.ceil(math.ceil(batch / ((per_rank - 1) * plan.micro_batch)) / ep) * ep
    if plan.model_parallel * fewer <= scenario.gpus:
        return f"{head}, more data-parallel ranks would not shorten this plan's step"
    servers = math.ceil(plan.model_parallel * fewer / scenario.gpus_per_node)
    return (
        f"{head}, each data-parallel rank runs {per_rank} micro-batches, as it would with up to "
        f"{fewer - 1:,} ranks; one micro-batch fewer a rank takes {fewer:,} ranks "
        f"({servers:,} servers), more than this cluster has"
    )


def _plan_training(scenario: Scenario) -> WorkloadPlan:
    assert scenario.training is not None
    p = scenario.parallelism
    batch = scenario.training.global_batch_sequences
    notes: list[str] = []
    others: list[WorkloadPlan] = []
    fewer: FewerGpuPlans | None = None
    if p.given:
        tp, pp, dp, ep, cp = _check_explicit_training(scenario)
        stages = _explicit_stages(scenario, pp)
        mb = p.micro_batch or 1
        m_count = _microbatches(batch, dp, mb)
        vps: tuple[int, ...] = (p.virtual_stages,) if p.virtual_stages else (1,)
        if not p.virtual_stages and pp > 1:
            vps = tuple(v for v in VIRTUAL_STAGES if stages[1] % v == 0 and m_count >= pp) or (1,)
        recomputes = (p.recompute,) if p.recompute else RECOMPUTE_ORDER
        tp_overlap = _tp_overlap(scenario)
        options: list[_Candidate] = []
        best_mem: Memory | None = None
        for vp in vps:
            for sharding in _sharding_options(scenario):
                for rc in recomputes:
                    mem = training_memory(
                        scenario,
                        tp,
                        pp,
                        dp,
                        ep,
                        mb,
                        sharding,
                        rc,
                        m_count,
                        cp=cp,
                        vp=vp,
                        stages=stages,
                    )
                    best_mem = best_mem or mem
                    if mem.fits:
                        est = _estimate_step_s(
                            scenario, tp, pp, cp, dp, ep, mb, vp, rc, stages, tp_overlap, sharding
                        )
                        options.append(
                            _Candidate(tp, pp, cp, dp, ep, mb, vp, sharding, rc, stages, mem, est)
                        )
                        break
        if not options:
            assert best_mem is not None
            raise ScenarioError.single(
                "parallelism",
                f"the plan needs {best_mem.total_gb:.0f} GB per GPU but the {scenario.gpu.name} "
                f"has {best_mem.usable_gb:.0f} GB usable; raise tp, pp, cp or ep, recompute, or "
                "shard (zero3)",
            )
        chosen = min(options, key=lambda c: c.estimate_s)
        source = "explicit"
    else:
        fitting = _ranked_contenders(scenario)
        if not fitting:
            raise _does_not_fit(scenario)
        chosen, fewer = _fastest_on_fewer_gpus(
            scenario, fitting[0], notes, others, contenders=fitting[1:]
        )
        source = "planner"
    plan = _candidate_plan(scenario, chosen, source)
    used = plan.gpus_used
    if source == "planner":
        full_dp = math.ceil(batch / plan.micro_batch)
        full_dp = math.ceil(full_dp / max(1, plan.ep)) * max(1, plan.ep)
        limit = math.ceil(plan.model_parallel * full_dp / scenario.gpus_per_node)
        notes.append(
            f"with this plan's model parallelism (tp {plan.tp} x cp {plan.cp} x pp {plan.pp}) "
            f"more servers stop shortening the step beyond {limit:,} servers, where every "
            f"data-parallel rank holds one micro-batch of the {batch:,}-sequence global batch"
        )
    if used < scenario.gpus:
        notes.append(_idle_gpus_note(scenario, plan, batch))
    dp, mb = plan.dp, plan.micro_batch
    if batch < dp * mb:
        notes.append(
            f"global batch raised from {batch:,} to {dp * mb:,} sequences "
            f"(at least one micro-batch per data-parallel rank)"
        )
    elif batch % (dp * mb) != 0:
        notes.append(
            f"global batch rounded to {_microbatches(batch, dp, mb) * dp * mb:,} sequences "
            f"(a multiple of dp x micro_batch = {dp * mb:,})"
        )
    if source == "planner" and plan.ep > 1:
        notes.extend(_moe_software_notes(scenario, plan))
    if others or fewer is not None:
        notes.append(
            "a design on which another of the planner's plans predicts a faster step uses it "
            "instead (another plan for this cluster, or one for a smaller power-of-two number "
            "of servers, the other GPUs idle), so adding servers never slows a design's step"
        )
    workload = _training_workload(scenario, plan, chosen.mem, notes=tuple(notes))
    return replace(workload, alternatives=tuple(others), fewer=fewer)


def _training_workload(
    scenario: Scenario, plan: Plan, mem: Memory, *, notes: tuple[str, ...]
) -> WorkloadPlan:
    """The WorkloadPlan of a training scenario under one parallelism plan."""
    dom = domain_gpus(scenario)
    return WorkloadPlan(
        plan=plan,
        memory=mem,
        nodes=scenario.nodes,
        gpus_per_node=scenario.gpus_per_node,
        domain_gpus=dom,
        domains=max(1, (plan.gpus_used or scenario.gpus) // dom),
        spans_servers=scenario.nodes > 1,
        needs_compute_fabric=scenario.gpus > dom,
        training=_plan_costs(scenario, plan, dom),
        inference=None,
        notes=notes,
    )


_COSTS_CACHE: dict[tuple[Any, ...], TrainingPlan] = {}
"""A training plan's :class:`TrainingPlan` by value: the planner's levels, the cluster's own
size and the scaling chart's sizes build the workload of the same plan again (~2 of 3 builds
of an evaluation), and :func:`stage_time._training_costs` of a plan that states the GPUs it
uses reads the scenario's GPU, model, precision, sequence, training, parallelism and scale-up
domain, not its GPU count (``tests/engine/test_planner.py`` holds it to that), bounded."""
_COSTS_CACHE_MAX: Final = 4096


def _plan_costs(scenario: Scenario, plan: Plan, dom: int) -> TrainingPlan:
    """:func:`stage_time._training_costs` of ``plan`` (``dom``: the scenario's scale-up domain),
    kept in :data:`_COSTS_CACHE` when the plan states the GPUs it uses."""
    if not plan.gpus_used:
        return _training_costs(scenario, plan)
    key = (
        scenario.gpu,
        scenario.model,
        scenario.precision,
        scenario.sequence_length,
        scenario.training,
        scenario.parallelism,
        scenario.calibration,
        scenario.gpus_per_node,
        dom,
        plan,
    )
    hit = _COSTS_CACHE.get(key)
    if hit is None:
        if len(_COSTS_CACHE) >= _COSTS_CACHE_MAX:
            _COSTS_CACHE.clear()
        hit = _COSTS_CACHE[key] = _training_costs(scenario, plan)
    return hit
