"""Scoring serving deployments for the deployment search (docs/MODEL.md 15, 15.2): the rate
within the p95 targets of a plan on a network, its capacity, and the best of several plans."""

from __future__ import annotations

from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.plans import WorkloadPlan
from advisor.engine.model.serving.load import serving_model
from advisor.engine.model.serving.pools import reference_design

ServingScore = tuple[float, float, float, float]
"""(requests/s within both p95 targets, meets both targets at the scenario's load, requests/s
served at the load, -p95 TTFT at the load): one objective, the rate within the targets, and the
scenario's own load only to break its ties (docs/MODEL.md 15)."""


def serving_score(
    scenario: Scenario, wp: WorkloadPlan, design: Design | None = None
) -> ServingScore:
    """:data:`ServingScore` of a plan on ``design``, by default the reference network
    (advisor.engine.model.serving.pools.reference_design), rates to 3 significant digits so
    that near-equal rates are decided by the next key (and, walking server counts upward, by
    the smaller deployment: the cheaper one)."""
    assert wp.inference is not None and wp.inference.serving is not None
    sp = wp.inference.serving
    model = serving_model(scenario, sp, design or reference_design(scenario), "point")
    point = model.operating_point()
    return (
        float(f"{model.max_rate_at_target():.3g}"),
        1.0 if point.meets(sp) else 0.0,
        float(f"{point.requests_per_s:.3g}"),
        -float(f"{point.ttft_p95_s:.3g}"),
    )


def capacity_rps(scenario: Scenario, wp: WorkloadPlan, design: Design | None = None) -> float:
    """Requests/s a plan sustains on ``design`` (by default the reference network): an upper
    bound of its rate within the targets (a few step times, where the rate within the targets
    bisects the load model)."""
    assert wp.inference is not None and wp.inference.serving is not None
    sp = wp.inference.serving
    net = design or reference_design(scenario)
    return serving_model(scenario, sp, net, "point").capacity_rps()


def by_capacity(
    scenario: Scenario, plans: list[WorkloadPlan], design: Design | None = None
) -> list[WorkloadPlan]:
    """``plans`` by capacity, largest first (stable), so the search can stop at the first one
    whose capacity is below the best rate within the targets found so far."""
    return sorted(plans, key=lambda wp: -capacity_rps(scenario, wp, design))


def below(
    scenario: Scenario, wp: WorkloadPlan, best_rate: float, design: Design | None = None
) -> bool:
    """Whether ``wp`` cannot reach ``best_rate`` (3 significant digits) within the targets:
    its capacity bounds its rate within the targets from above."""
    return capacity_rps(scenario, wp, design) < best_rate * (1.0 - 5e-3)


def best_of(
    scenario: Scenario, plans: list[WorkloadPlan], design: Design | None = None
) -> WorkloadPlan:
    """The plan of ``plans`` with the highest :func:`serving_score` on ``design`` (by default
    the reference network; the first on a tie), largest capacity first, stopping where
    capacity falls below the best rate so far."""
    best: tuple[ServingScore, WorkloadPlan] | None = None
    for wp in by_capacity(scenario, plans, design):
        if best is not None and below(scenario, wp, best[0][0], design):
            break
        score = serving_score(scenario, wp, design)
        if best is None or score > best[0]:
            best = (score, wp)
    assert best is not None
    return best[1]
