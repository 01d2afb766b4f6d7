"""The what-if rule: one changed design or load of a scenario, priced the way its answer is.

A what-if starts from an answer (``EngineResult``) and its scenario and may change the size
(servers), the load (training batch, serving request rate) and the design (fabric, NIC speed,
NICs per server, oversubscription). One rule, here, says which figures it shows
(docs/MODEL.md, "What-if"):

* **The answer's own design** (no design field changed): the figures are the engine's answer
  for the changed scenario, through the same decision path as every answer
  (:func:`advisor.engine.evaluate_typed`): the fabric it names (none when the job needs no
  compute fabric), its network capex (retrieval tiers, existing network and all), its step or
  serving figures and its costs. Nothing changed at all: the answer itself, not recomputed.
* **A design the user fixed** (a design field changed): that one design priced as a sweep
  prices a design point (:func:`advisor.engine.tools.sweep.evaluate_points`: the
  recommendation's candidate rules for its NIC and switch, the performance model, the prices).

A point is a :class:`~advisor.engine.tools.sweep.SweepPoint` either way, so the page and the
API read one shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.engine import evaluate_typed
from advisor.engine.calibration.fabric_fit import FabricFit
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.vocabulary import FABRIC_CHOICES, fabric_label
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.result.echo import deployment_shape
from advisor.engine.result.records import EngineResult, Metrics
from advisor.engine.tools.sweep import (
    INFERENCE_METRICS,
    TRAINING_METRICS,
    SweepPoint,
    evaluate_points,
    six_digits,
)

NO_FABRIC = "none"
"""The what-if's fabric of an answer that needs no GPU compute fabric (storage / in-band and
management networks only, or the data centre's existing network)."""
NO_FABRIC_LABEL = "No compute fabric"
WHATIF_FABRIC_CHOICES: tuple[tuple[str, str], ...] = (*FABRIC_CHOICES, (NO_FABRIC, NO_FABRIC_LABEL))
"""(id, label) of the fabrics a what-if may name: every fabric, and none (the API's enum)."""
ANSWER = "answer"
"""A point's source: the engine's answer for the (changed) scenario, its own design."""
FIXED = "fixed"
"""A point's source: the design the user fixed, priced as a sweep point."""


@dataclass(frozen=True)
class DesignChoice:
    """A what-if's design: the answer's own (``fabric`` NO_FABRIC when it needs none) or one
    the user fixed."""

    fabric: str
    nic_gbps: float
    nics_per_node: int
    oversubscription: float


def answer_design(result: EngineResult) -> DesignChoice:
    """The design an answer recommends, as the what-if's controls show it."""
    rec = result.recommendation
    return DesignChoice(
        fabric=rec.fabric if rec.needs_compute_fabric else NO_FABRIC,
        nic_gbps=float(rec.nic_gbps or 400),
        nics_per_node=int(rec.nics_per_node or 1),
        oversubscription=float(rec.topology.oversubscription or 1.0),
    )


def design_label(fabric: str) -> str:
    """The fabric a point names, for people."""
    if not fabric:
        return "–"
    return NO_FABRIC_LABEL if fabric == NO_FABRIC else fabric_label(fabric)


def answer_point(result: EngineResult) -> SweepPoint:
    """An answer's own figures as a what-if point: its design, the metrics of the workload's
    kind and the three prices the sweep reports (network capex, the network's life cost,
    the job's share), rounded as a sweep rounds them."""
    design = answer_design(result)
    inference = result.scenario.workload == "inference"
    keys = INFERENCE_METRICS if inference else TRAINING_METRICS
    rounded: dict[str, Any] = {key: six_digits(getattr(result.metrics, key)) for key in keys}
    metrics = Metrics(**rounded)
    reason = None
    if all(getattr(metrics, key) is None for key in keys):
        reason = "the performance model found no valid timing for this design"
    gpus = int(result.scenario.gpus)
    return SweepPoint(
        i=0,
        servers=max(1, gpus // max(1, int(result.scenario.gpus_per_node))),
        gpus=gpus,
        fabric=design.fabric,
        nic_gbps=design.nic_gbps,
        nics_per_node=design.nics_per_node,
        oversubscription=design.oversubscription,
        reason=reason,
        inference=inference,
        metrics=metrics,
        network_capex_usd=six_digits(result.cost.network_capex_usd),
        decision_cost_usd=six_digits(result.cost.decision_cost_usd),
        total_cost_usd=six_digits(result.cost.total_cost_usd),
    )


def answer_deployment(result: EngineResult) -> str | None:
    """A serving answer's deployment in words, as its headline says it (``2 x TP4 replicas``,
    ``disaggregated 4 x TP2 prefill + 2 x TP4 decode``); None for training."""
    serving = result.workload.serving
    if serving is None:
        return None
    pools = serving.pools
    prefill = pools.prefill or pools.serve
    decode = pools.decode or pools.serve
    return deployment_shape(serving.deployment, result.workload.plan, prefill, decode)


def deployment_of(inputs: Mapping[str, Any], catalog: Catalog) -> str | None:
    """The deployment the engine plans for scenario v1 ``inputs`` (the what-if's changed
    scenario; its design does not change a serving plan, which is searched on the reference
    network), in the words of :func:`answer_deployment`; None for training or a scenario the
    planner refuses.  The plan is the one the what-if's evaluation made (kept by value)."""
    scenario = {k: v for k, v in inputs.items() if k != "design"}
    try:
        parsed = parse_scenario(dict(scenario), catalog)
        if parsed.inference is None:
            return None
        plan = plan_workload(parsed)
    except ScenarioError:
        return None
    serving = plan.inference.serving if plan.inference is not None else None
    if serving is None:
        return None
    return deployment_shape(serving.deployment, plan.plan, serving.prefill, serving.decode)


def _refused(scenario: Scenario, reason: str) -> SweepPoint:
    """The answer's own design at a size or load the engine refuses: no design, the reason."""
    return SweepPoint(
        i=0,
        servers=max(1, scenario.gpus // scenario.gpus_per_node),
        gpus=scenario.gpus,
        fabric="",
        nic_gbps=0.0,
        nics_per_node=0,
        oversubscription=1.0,
        reason=reason,
        inference=not scenario.is_training,
        metrics=Metrics(),
    )


def whatif_point(
    inputs: Mapping[str, Any],
    design: DesignChoice | None,
    *,
    catalog: Catalog,
    answer: EngineResult | None = None,
    tick: Callable[[], None] | None = None,
    calibration: FabricFit | None = None,
) -> tuple[SweepPoint, str]:
    """The what-if of scenario v1 ``inputs`` (the changed size and load, no ``design``):
    (point, source).

    ``design`` None: the answer's own design, i.e. the engine's answer for ``inputs``;
    ``answer`` is that answer when the caller already has it (the stored answer of unchanged
    inputs), else it is evaluated here. A ``design``: that design, fixed, priced as a sweep
    point. ``calibration``: a calibrated answer's fit, applied either way. Raises
    :class:`advisor.engine.errors.ScenarioError` for inputs the engine refuses.
    """
    scenario = {k: v for k, v in inputs.items() if k != "design"}
    if design is None:
        if answer is not None:
            return answer_point(answer), ANSWER
        parsed = parse_scenario(dict(scenario), catalog)  # bad input raises, as a sweep's does
        try:
            answer = evaluate_typed(
                dict(scenario),
                catalog=catalog,
                progress=None if tick is None else (lambda _pct: tick()),
                calibration=calibration,
                scaling_chart=False,  # the what-if shows no scaling chart
            )
        except ScenarioError as exc:  # a size the plan cannot hold: a point, as in a sweep
            return _refused(parsed, str(exc)), ANSWER
        return answer_point(answer), ANSWER
    if design.fabric == NO_FABRIC:
        raise ScenarioError.single(
            "design.fabric", "no compute fabric is the answer's own design, not one to fix"
        )
    per_server = int(scenario.get("gpus_per_node") or 1)
    axes: dict[str, list[Any]] = {
        "servers": [max(1, int(scenario["gpus"]) // per_server)],
        "fabric": [design.fabric],
        "nic_gbps": [design.nic_gbps],
        "nics_per_node": [design.nics_per_node],
        "oversubscription": [design.oversubscription],
    }
    rows, _ = evaluate_points(
        dict(scenario), axes, 0, 1, catalog=catalog, tick=tick, calibration=calibration
    )
    return rows[0], FIXED
