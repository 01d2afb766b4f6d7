"""Scaling chart: efficiency vs servers for one design per fabric class."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from advisor.engine.recommend.candidates import Candidate
from advisor.engine.recommend.facts import JobFacts
from advisor.engine.recommend.util import num, rounded
from advisor.engine.scenario import Scenario

SCALING_MAX_POINTS = 7
"""Points of the scaling chart (servers 1, 2, 4, ... up to the job's size)."""
SCALING_MIN_SERVERS = 8
"""The chart reaches at least this many servers, so a one-server job shows what scaling out
would cost in efficiency on each fabric class."""


def scaling(s: Scenario, facts: JobFacts, per_fabric: dict[str, Candidate]) -> list[dict[str, Any]]:
    try:
        return _points(s, facts, per_fabric)
    except Exception:  # the chart is optional; never fail the evaluation
        return []


def _points(s: Scenario, facts: JobFacts, per_fabric: dict[str, Candidate]) -> list[dict[str, Any]]:
    from advisor.engine.performance import evaluate_design
    from advisor.engine.workload import plan_workload

    if not per_fabric:
        return []
    max_nodes = max(SCALING_MIN_SERVERS, facts.nodes)
    node_counts: list[int] = []
    n = 1
    while n < max_nodes and len(node_counts) < SCALING_MAX_POINTS - 1:
        node_counts.append(n)
        n *= 2
    node_counts.append(max_nodes)
    out: list[dict[str, Any]] = []
    for nodes in node_counts:
        try:
            sized = resize(s, nodes * facts.gpus_per_node)
            plan = plan_workload(sized)
        except Exception:  # noqa: S112 - a size the planner cannot place is skipped
            continue
        for fabric, c in sorted(per_fabric.items()):
            m = evaluate_design(sized, plan, design_of(c)).to_dict()
            if "scaling_efficiency" in m:
                eff = num(m.get("scaling_efficiency"), math.nan)
            else:
                token_ms = num(m.get("ms_per_token"), math.nan)
                compute_ms = num(m.get("compute_ms_per_token"), math.nan)
                eff = min(1.0, compute_ms / token_ms) if token_ms > 0 else math.nan
            if math.isfinite(eff):
                out.append({"fabric": fabric, "nodes": nodes, "scaling_efficiency": rounded(eff)})
    return out


def design_of(c: Candidate) -> Any:
    """The performance model's Design of a candidate (switch radix included when known)."""
    from advisor.engine.performance import Design

    kwargs: dict[str, Any] = {
        "fabric": c.fabric,
        "nic_gbps": float(c.nic_gbps),
        "nics_per_node": c.nics_per_node,
        "oversubscription": c.oversubscription,
        "adaptive_routing": c.adaptive_routing,
        "in_network_reduction": c.in_network_reduction,
    }
    if "switch_radix" in {f.name for f in dataclasses.fields(Design)} and c.radix:
        kwargs["switch_radix"] = c.radix
    return Design(**kwargs)


def resize(s: Scenario, gpus: int) -> Scenario:
    """The scenario with ``gpus`` GPUs and the data-parallel degree adjusted."""
    par = s.parallelism
    if par.dp is not None:
        tp = par.tp or 1
        pp = par.pp or 1
        if gpus % (tp * pp):
            raise ValueError("size incompatible with the explicit plan")
        return dataclasses.replace(
            s, gpus=gpus, parallelism=dataclasses.replace(par, dp=gpus // (tp * pp))
        )
    return dataclasses.replace(s, gpus=gpus)
