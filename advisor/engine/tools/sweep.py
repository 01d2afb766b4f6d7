"""The sweep grid: one scenario over servers x fabric x NIC speed x NICs x oversubscription.

A sweep evaluates every point of the cartesian product of its axes with the recommendation's
own candidate rules (PCIe slots, platform NICs, switch cages: recommend.search.design_point)
and the performance model. Points are numbered in AXES order, so a range [start, stop) of
point numbers is a unit of work (the Django side stores one range per chunk).

Each point is a :class:`SweepPoint`. It is its own record, not a part of
:class:`advisor.engine.result.records.EngineResult`: a point is one fixed design's metrics and
prices (no recommendation, options, BOM or uncertainty), stored by the thousand as flat rows, so its
dict form is one flat row of :data:`COLUMNS`. Its metrics are the result's own
:class:`~advisor.engine.result.records.Metrics` record.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.engine.calibration.fabric_fit import FabricFit
from advisor.engine.decision.bom import storage_plan
from advisor.engine.decision.job_facts import job_facts
from advisor.engine.decision.pricing import job_cost, life_cost
from advisor.engine.decision.rag import tier_network, with_tier_network
from advisor.engine.decision.recommend import network_parts
from advisor.engine.decision.scaling import design_of
from advisor.engine.decision.search import design_point
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.limits import GPUS_MAX, LIMITS
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import WorkloadPlan, resized
from advisor.engine.result.base import stored, stored_object, stored_optional
from advisor.engine.result.records import Metrics

# Axis names in the order the design points are numbered (servers outermost, so a range of
# consecutive points spans few server counts and plans each of them once).
AXES: tuple[str, ...] = ("servers", "fabric", "nic_gbps", "nics_per_node", "oversubscription")
MAX_VALUES_PER_AXIS = 200
# The engine's input limits (advisor.engine.facts.limits) bound every axis, as they bound a
# scenario.
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


@dataclass(frozen=True)
class SweepPoint:
    """One evaluated design point: the grid values, why it is infeasible (or None), the
    performance model's metrics of the workload's kind and the three prices."""

    i: int
    servers: int
    gpus: int
    fabric: str
    nic_gbps: float
    nics_per_node: int
    oversubscription: float
    reason: str | None
    inference: bool
    """Which metric columns the point carries: INFERENCE_METRICS, else TRAINING_METRICS."""
    metrics: Metrics
    network_capex_usd: float | None = None
    decision_cost_usd: float | None = None
    """The network's life cost (the recommendation's decision figure)."""
    total_cost_usd: float | None = None
    """This job's share of the cost."""

    @property
    def feasible(self) -> bool:
        return self.reason is None

    @property
    def metric_keys(self) -> tuple[str, ...]:
        return INFERENCE_METRICS if self.inference else TRAINING_METRICS

    @property
    def speed(self) -> float | None:
        """The headline figure: ms per token (inference) or step time in s (training)."""
        return self.metrics.ms_per_token if self.inference else self.metrics.step_time_s

    @property
    def bandwidth_gbps(self) -> float:
        """Compute-network bandwidth per server."""
        return self.nic_gbps * self.nics_per_node

    def to_dict(self) -> dict[str, Any]:
        """The flat row the sweep stores and the API serves: the grid values, `feasible`,
        `reason`, every metric column of the workload's kind (None where the model has none)
        and the three prices, in COLUMNS order."""
        return {
            "i": self.i,
            "servers": self.servers,
            "gpus": self.gpus,
            "fabric": self.fabric,
            "nic_gbps": self.nic_gbps,
            "nics_per_node": self.nics_per_node,
            "oversubscription": self.oversubscription,
            "feasible": self.feasible,
            "reason": self.reason,
            **{key: getattr(self.metrics, key) for key in self.metric_keys},
            "network_capex_usd": self.network_capex_usd,
            "decision_cost_usd": self.decision_cost_usd,
            "total_cost_usd": self.total_cost_usd,
        }

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> SweepPoint:
        """A stored row (to_dict's shape) as a point; an inference row is one that carries
        the `ms_per_token` column (to_dict writes it, None or not, for every inference row).
        A value of the wrong type raises ResultFormatError naming it (``point.servers``)."""
        row = stored_object(row, "point")
        inference = "ms_per_token" in row
        keys = INFERENCE_METRICS if inference else TRAINING_METRICS
        return cls(
            i=stored(row, "i", int, "point"),
            servers=stored(row, "servers", int, "point"),
            gpus=stored(row, "gpus", int, "point"),
            fabric=stored(row, "fabric", str, "point"),
            nic_gbps=stored(row, "nic_gbps", float, "point"),
            nics_per_node=stored(row, "nics_per_node", int, "point"),
            oversubscription=stored(row, "oversubscription", float, "point"),
            reason=stored_optional(row, "reason", str, "point"),
            inference=inference,
            metrics=Metrics.from_dict({key: row[key] for key in keys if row.get(key) is not None}),
            network_capex_usd=stored_optional(row, "network_capex_usd", float, "point"),
            decision_cost_usd=stored_optional(row, "decision_cost_usd", float, "point"),
            total_cost_usd=stored_optional(row, "total_cost_usd", float, "point"),
        )

    def cells(self) -> list[Any]:
        """The point's values in COLUMNS order ("" for a column of the other workload kind):
        one CSV line."""
        row = self.to_dict()
        return [row.get(column, "") for column in COLUMNS]


def point_count(axes: Mapping[str, Sequence[Any]]) -> int:
    return math.prod(len(axes[name]) for name in AXES)


def points(
    axes: Mapping[str, Sequence[Any]], start: int, stop: int
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Design points [start, stop) of the grid, numbered in AXES order, as (index, values)."""
    grid = itertools.product(*(axes[name] for name in AXES))
    yield from enumerate(itertools.islice(grid, start, stop), start=start)


def six_digits(value: Any) -> float | None:
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
    calibration: FabricFit | None = None,
) -> tuple[list[SweepPoint], int]:
    """Evaluate design points [start, stop); (rows, infeasible count).

    The scenario is parsed once, sized and planned once per distinct server count, and the
    performance model runs once per point. A point the engine refuses (a plan that does not
    fit, a NIC count the server cannot hold) is a result too: a row with `feasible` false and
    the engine's reason. `tick` is called before each point (a chance to stop).
    `calibration`: a customer's fit, applied as a calibrated evaluation applies it.
    """
    parts = network_parts(catalog)
    base = parse_scenario(inputs, catalog)
    if calibration is not None:
        base = dataclasses.replace(base, calibration=calibration.calibration())
    inference = not base.is_training
    metric_keys = INFERENCE_METRICS if inference else TRAINING_METRICS
    planned: dict[int, tuple[Scenario, WorkloadPlan] | str] = {}
    rows: list[SweepPoint] = []
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
        metrics = Metrics()
        money: dict[str, float | None] = dict.fromkeys(MONEY)
        if isinstance(plan, str):
            reason = plan
        else:
            scenario, workload = plan
            facts = job_facts(scenario, workload, catalog, parts)
            storage = storage_plan(parts, nodes=facts.nodes, spec=facts.platform.storage)
            if scenario.rag is not None:  # priced with every design, as the recommendation does
                storage = with_tier_network(storage, tier_network(parts, scenario, workload))
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
                    design_metrics = evaluate_design(scenario, workload, design_of(candidate))
                except ScenarioError as exc:
                    reason = str(exc)
                else:
                    rounded: dict[str, Any] = {
                        key: six_digits(getattr(design_metrics, key)) for key in metric_keys
                    }
                    metrics = Metrics(**rounded)
                    money["network_capex_usd"] = six_digits(capex)
                    money["decision_cost_usd"] = six_digits(
                        life_cost(facts, fabric, design_metrics, capex, power).total_usd
                    )
                    money["total_cost_usd"] = six_digits(
                        job_cost(facts, fabric, design_metrics, capex, power).total_usd
                    )
        if reason is None and all(getattr(metrics, key) is None for key in metric_keys):
            reason = "the performance model found no valid timing for this design"
        rows.append(
            SweepPoint(
                i=index,
                servers=servers,
                gpus=servers * base.gpus_per_node,
                fabric=fabric,
                nic_gbps=nic_gbps,
                nics_per_node=nics,
                oversubscription=oversubscription,
                reason=reason,
                inference=inference,
                metrics=metrics,
                network_capex_usd=money["network_capex_usd"],
                decision_cost_usd=money["decision_cost_usd"],
                total_cost_usd=money["total_cost_usd"],
            )
        )
        infeasible += reason is not None
    return rows, infeasible
