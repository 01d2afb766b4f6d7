"""Scaling chart: efficiency vs servers for one design per fabric class."""

from __future__ import annotations

import math
from typing import Final

from advisor.engine.decision.candidates import Candidate
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.decision.util import num, rounded
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.plans import WorkloadPlan, as_planned, resized
from advisor.engine.result.records import Metrics, ScalingPoint

SCALING_MAX_POINTS: Final = 7
"""Points of the scaling chart (servers 1, 2, 4, ... up to the job's size)."""
SCALING_MIN_SERVERS: Final = 8
"""The chart reaches at least this many servers, so a one-server job shows what scaling out
would cost in efficiency on each fabric class."""


def scaling(
    scenario: Scenario, facts: JobFacts, per_fabric: dict[str, Candidate]
) -> list[ScalingPoint]:
    try:
        return _points(scenario, facts, per_fabric)
    except Exception:  # the chart is optional; never fail the evaluation
        return []


def chart_sizes(facts: JobFacts) -> list[int]:
    """Servers of the chart's points: 1, 2, 4, ... and the job's own size (at least
    :data:`SCALING_MIN_SERVERS`), :data:`SCALING_MAX_POINTS` at most."""
    max_nodes = max(SCALING_MIN_SERVERS, facts.nodes)
    node_counts: list[int] = []
    count = 1
    while count < max_nodes and len(node_counts) < SCALING_MAX_POINTS - 1:
        node_counts.append(count)
        count *= 2
    node_counts.append(max_nodes)
    return node_counts


def fabric_free(sized: Scenario, plan: WorkloadPlan) -> bool:
    """Whether the chart's figure at this size is the same on every design: the planned job
    needs no compute fabric (every communicator, KV stream and replica inside one scale-up
    domain, :attr:`WorkloadPlan.needs_compute_fabric`) and no calibration (a customer's fit is
    applied per fabric kind).  ``tests/engine/test_scaling_chart.py`` holds the shared figure
    to the per-design one over random scenarios and many designs."""
    return not plan.needs_compute_fabric and sized.calibration is None


def efficiency(metrics: Metrics) -> float:
    """The chart's figure of one design: training's scaling efficiency, or serving's share of a
    token's time spent computing (NaN when the model could not say)."""
    if metrics.scaling_efficiency is not None:
        return num(metrics.scaling_efficiency, math.nan)
    token_ms = num(metrics.ms_per_token, math.nan)
    compute_ms = num(metrics.compute_ms_per_token, math.nan)
    return min(1.0, compute_ms / token_ms) if token_ms > 0 else math.nan


def _points(
    scenario: Scenario,
    facts: JobFacts,
    per_fabric: dict[str, Candidate],
    *,
    share_fabric_free: bool = True,
) -> list[ScalingPoint]:
    """The chart's points.  A size that needs no compute fabric (:func:`fabric_free`) is
    evaluated on one design and its figure given to every fabric kind (``share_fabric_free``;
    False evaluates it once per fabric, the reference the tests hold the shared figure to).
    Each size's plan and metrics are those of the scenario with the default constraints
    (:func:`advisor.engine.model.plans.as_planned`, applied by the planner and by
    :func:`advisor.engine.model.performance.evaluate_design`)."""
    from advisor.engine.model.performance import evaluate_design
    from advisor.engine.model.planner import plan_workload

    if not per_fabric:
        return []
    # the default constraints once, not in each size's planning and evaluation (the same
    # scenario they would put in that form)
    planned = as_planned(scenario)
    out: list[ScalingPoint] = []
    for nodes in chart_sizes(facts):
        try:
            sized = resized(planned, nodes * facts.gpus_per_node)
            plan = plan_workload(sized)
        except Exception:  # noqa: S112 - a size the planner cannot place is skipped
            continue
        shared = share_fabric_free and fabric_free(sized, plan)
        eff = math.nan
        for i, (fabric, candidate) in enumerate(sorted(per_fabric.items())):
            if not (shared and i):
                eff = efficiency(evaluate_design(sized, plan, design_of(candidate), bounds=False))
            if math.isfinite(eff):
                out.append(
                    ScalingPoint(fabric=fabric, nodes=nodes, scaling_efficiency=rounded(eff))
                )
    return out


def design_of(candidate: Candidate) -> Design:
    """The performance model's Design of a candidate (switch radix included when known)."""
    return Design(
        fabric=candidate.fabric,
        nic_gbps=float(candidate.nic_gbps),
        nics_per_node=candidate.nics_per_node,
        oversubscription=candidate.oversubscription,
        adaptive_routing=candidate.adaptive_routing,
        in_network_reduction=candidate.in_network_reduction,
        switch_radix=candidate.radix or None,
        planes=candidate.planes,
        links_per_rail=candidate.links_per_rail,
    )
