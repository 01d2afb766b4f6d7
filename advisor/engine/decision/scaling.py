"""Scaling chart: efficiency vs servers for one design per fabric class."""

from __future__ import annotations

import dataclasses
import math

from advisor.engine.decision.candidates import Candidate
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.decision.util import num, rounded
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.result.records import ScalingPoint

SCALING_MAX_POINTS = 7
"""Points of the scaling chart (servers 1, 2, 4, ... up to the job's size)."""
SCALING_MIN_SERVERS = 8
"""The chart reaches at least this many servers, so a one-server job shows what scaling out
would cost in efficiency on each fabric class."""


def scaling(
    scenario: Scenario, facts: JobFacts, per_fabric: dict[str, Candidate]
) -> list[ScalingPoint]:
    try:
        return _points(scenario, facts, per_fabric)
    except Exception:  # the chart is optional; never fail the evaluation
        return []


def _points(
    scenario: Scenario, facts: JobFacts, per_fabric: dict[str, Candidate]
) -> list[ScalingPoint]:
    from advisor.engine.model.performance import evaluate_design
    from advisor.engine.model.planner import plan_workload

    if not per_fabric:
        return []
    max_nodes = max(SCALING_MIN_SERVERS, facts.nodes)
    node_counts: list[int] = []
    count = 1
    while count < max_nodes and len(node_counts) < SCALING_MAX_POINTS - 1:
        node_counts.append(count)
        count *= 2
    node_counts.append(max_nodes)
    out: list[ScalingPoint] = []
    for nodes in node_counts:
        try:
            sized = resize(scenario, nodes * facts.gpus_per_node)
            plan = plan_workload(sized)
        except Exception:  # noqa: S112 - a size the planner cannot place is skipped
            continue
        for fabric, candidate in sorted(per_fabric.items()):
            metrics = evaluate_design(sized, plan, design_of(candidate), bounds=False)
            if metrics.scaling_efficiency is not None:
                eff = num(metrics.scaling_efficiency, math.nan)
            else:
                token_ms = num(metrics.ms_per_token, math.nan)
                compute_ms = num(metrics.compute_ms_per_token, math.nan)
                eff = min(1.0, compute_ms / token_ms) if token_ms > 0 else math.nan
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


def resize(scenario: Scenario, gpus: int) -> Scenario:
    """The scenario with ``gpus`` GPUs and the data-parallel degree adjusted."""
    parallelism = scenario.parallelism
    if parallelism.dp is not None:
        tp = parallelism.tp or 1
        pp = parallelism.pp or 1
        if gpus % (tp * pp):
            raise ValueError("size incompatible with the explicit plan")
        return dataclasses.replace(
            scenario, gpus=gpus, parallelism=dataclasses.replace(parallelism, dp=gpus // (tp * pp))
        )
    return dataclasses.replace(scenario, gpus=gpus)
