"""The sweep grid: one scenario over servers x fabric x NIC speed x NICs x oversubscription.

A sweep evaluates every point of the cartesian product of its axes with the recommendation's
own candidate rules (PCIe slots, platform NICs, switch cages: recommend.search.design_point)
and the performance model. Points are numbered in AXES order, so a range [start, stop) of
point numbers is a unit of work (the Django side stores one range per chunk).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from advisor.engine.bom import storage_plan
from advisor.engine.catalog import Catalog
from advisor.engine.errors import ScenarioError
from advisor.engine.limits import GPUS_MAX, LIMITS
from advisor.engine.performance import evaluate_design
from advisor.engine.recommend import network_parts
from advisor.engine.recommend.facts import job_facts
from advisor.engine.recommend.pricing import job_cost, life_cost
from advisor.engine.recommend.scaling import design_of
from advisor.engine.recommend.search import design_point
from advisor.engine.scenario import Scenario, parse_scenario
from advisor.engine.workload import WorkloadPlan, plan_workload

# Axis names in the order the design points are numbered (servers outermost, so a range of
# consecutive points spans few server counts and plans each of them once).
AXES: tuple[str, ...] = ("servers", "fabric", "nic_gbps", "nics_per_node", "oversubscription")
MAX_VALUES_PER_AXIS = 200
# The engine's input limits (advisor.engine.limits) bound every axis, as they bound a scenario.
MAX_SERVERS = GPUS_MAX  # servers x gpus_per_node is checked against GPUS_MAX per scenario
MAX_NICS_PER_NODE = int(LIMITS["design.nics_per_node"].high)
MAX_NIC_GBPS = LIMITS["design.nic_gbps"].high
MAX_OVERSUBSCRIPTION = LIMITS["design.oversubscription"].high

# Metrics kept per design point (those the engine reports for the scenario's workload).
TRAINING_METRICS: tuple[str, ...] = (
    "step_time_s",
    "compute_s",
    "exposed_comm_s",
    "scaling_efficiency",
    "gpu_idle_fraction",
    "tflops_per_gpu",
    "run_time_s",
    "gpu_hours",
)
INFERENCE_METRICS: tuple[str, ...] = (
    "ms_per_token",
    "ttft_ms",
    "tokens_per_s_per_server",
    "comm_ms_per_token",
    "gpu_idle_fraction",
)
MONEY: tuple[str, ...] = ("network_capex_usd", "decision_cost_usd", "total_cost_usd")
# Every column a result row may carry, in the order rows and exports show them.
COLUMNS: tuple[str, ...] = (
    "i",
    "servers",
    "gpus",
    *AXES[1:],
    "feasible",
    "reason",
    *dict.fromkeys((*TRAINING_METRICS, *INFERENCE_METRICS)),
    *MONEY,
)


def point_count(axes: Mapping[str, Sequence[Any]]) -> int:
    return math.prod(len(axes[name]) for name in AXES)


def points(
    axes: Mapping[str, Sequence[Any]], start: int, stop: int
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Design points [start, stop) of the grid, numbered in AXES order, as (index, values)."""
    grid = itertools.product(*(axes[name] for name in AXES))
    yield from enumerate(itertools.islice(grid, start, stop), start=start)


def resized(base: Scenario, gpus: int) -> Scenario:
    """The scenario with `gpus` GPUs; an explicit data-parallel degree follows the size."""
    parallelism = base.parallelism
    changes: dict[str, Any] = {"gpus": gpus}
    if parallelism.dp is not None:
        model_parallel = (parallelism.tp or 1) * (parallelism.pp or 1)
        if gpus % model_parallel:
            raise ScenarioError.single(
                "gpus",
                f"{gpus} GPUs cannot hold the explicit tp x pp = {model_parallel} plan",
            )
        changes["parallelism"] = dataclasses.replace(parallelism, dp=gpus // model_parallel)
    return dataclasses.replace(base, **changes)


def finite_or_none(value: Any) -> float | None:
    """A number rounded to 6 significant digits, or None for NaN, infinity and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def evaluate_points(
    inputs: dict[str, Any],
    axes: Mapping[str, Sequence[Any]],
    start: int,
    stop: int,
    *,
    catalog: Catalog,
    tick: Callable[[], None] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Evaluate design points [start, stop); (rows, infeasible count).

    The scenario is parsed once, sized and planned once per distinct server count, and the
    performance model runs once per point. A point the engine refuses (a plan that does not
    fit, a NIC count the server cannot hold) is a result too: a row with `feasible` false and
    the engine's reason. `tick` is called before each point (a chance to stop).
    """
    parts = network_parts(catalog)
    base = parse_scenario(inputs, catalog)
    metric_keys = TRAINING_METRICS if base.is_training else INFERENCE_METRICS
    planned: dict[int, tuple[Scenario, WorkloadPlan] | str] = {}
    rows: list[dict[str, Any]] = []
    infeasible = 0
    for index, (servers, fabric, nic_gbps, nics, oversubscription) in points(axes, start, stop):
        if tick is not None:
            tick()
        if servers not in planned:
            try:
                sized = resized(base, servers * base.gpus_per_node)
                planned[servers] = (sized, plan_workload(sized))
            except ScenarioError as exc:
                planned[servers] = str(exc)
        plan = planned[servers]
        reason: str | None = None
        metrics: dict[str, Any] = {}
        money: dict[str, float | None] = dict.fromkeys(MONEY)
        if isinstance(plan, str):
            reason = plan
        else:
            scenario, workload = plan
            facts = job_facts(scenario, workload, catalog, parts)
            storage = storage_plan(parts, nodes=facts.nodes, spec=facts.platform.storage)
            candidate, reason, capex, power = design_point(
                facts,
                parts,
                storage,
                fabric=fabric,
                nic_gbps=nic_gbps,
                nics_per_node=nics,
                oversubscription=oversubscription,
            )
            if candidate is not None:
                try:
                    metrics = evaluate_design(scenario, workload, design_of(candidate)).to_dict()
                except ScenarioError as exc:
                    reason = str(exc)
                else:
                    money["network_capex_usd"] = finite_or_none(capex)
                    money["decision_cost_usd"] = finite_or_none(
                        life_cost(facts, fabric, metrics, capex, power).total_usd
                    )
                    money["total_cost_usd"] = finite_or_none(
                        job_cost(facts, fabric, metrics, capex, power).total_cost_usd
                    )
        values = {key: finite_or_none(metrics.get(key)) for key in metric_keys}
        if reason is None and all(v is None for v in values.values()):
            reason = "the performance model found no valid timing for this design"
        rows.append(
            {
                "i": index,
                "servers": servers,
                "gpus": servers * base.gpus_per_node,
                "fabric": fabric,
                "nic_gbps": nic_gbps,
                "nics_per_node": nics,
                "oversubscription": oversubscription,
                "feasible": reason is None,
                "reason": reason,
                **values,
                **money,
            }
        )
        infeasible += reason is not None
    return rows, infeasible
