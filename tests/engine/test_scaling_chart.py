"""The scaling chart gives a size that needs no compute fabric one figure on every fabric kind
(``decision.scaling.fabric_free``): it evaluates that size on one design instead of three.

This holds only if such a figure does not depend on the design, which these tests check rather
than assume: over a seeded random sample of audit-grid jobs, each fabric-free size of the chart
is evaluated on many designs (every fabric kind, NIC speed and count, oversubscription,
routing, in-network reduction, switch radix, planes), all of which must give the same figure
bit for bit, and the shared chart must equal the chart evaluated once per fabric.  The last
test shows the check can fail: a figure made to depend on the design is caught.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from typing import Any
from unittest import mock

import pytest

import advisor.engine.decision.recommend as recommend
import advisor.engine.model.performance as performance
from advisor.engine import evaluate
from advisor.engine.decision import scaling
from advisor.engine.decision.candidates import Candidate
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, Scenario, parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import WorkloadPlan, resized
from advisor.engine.result.records import EngineResult, Metrics, ScalingPoint
from advisor.engine.tools.audit_grid import AuditCase, grid, scenario_for
from tests.support.engine_build import ran_on_source

CATALOG = default_catalog()

DESIGNS: tuple[Design, ...] = tuple(
    Design(
        fabric=fabric,
        nic_gbps=gbps,
        nics_per_node=nics,
        oversubscription=over,
        adaptive_routing=routing,
        in_network_reduction=sharp,
        switch_radix=radix,
        planes=planes,
    )
    for fabric, gbps, nics, over, routing, sharp, radix, planes in itertools.product(
        ("infiniband", "roce", "ethernet"),
        (25.0, 100.0, 400.0, 800.0),
        (1, 8),
        (1.0, 3.0),
        (None, True),
        (False, True),
        (None, 32),
        (1, 2),
    )
)
"""Designs far apart in every field the performance model reads (768 of them)."""

ChartInputs = tuple[Scenario, JobFacts, dict[str, Candidate]]


def _evaluated(scenario: dict[str, Any]) -> tuple[EngineResult, ChartInputs] | None:
    """The recommendation of the job (parsed and planned as ``evaluate_typed`` does) and what
    it hands the chart (scenario, job facts, a design per fabric), seen through the chart
    function it is given (a compiled recommendation calls its own ``scaling`` past a module
    attribute a test replaced)."""
    seen: list[ChartInputs] = []

    def spy(s: Scenario, facts: JobFacts, reps: dict[str, Candidate]) -> list[ScalingPoint]:
        seen.append((s, facts, reps))
        return scaling.scaling(s, facts, reps)

    try:
        s = parse_scenario(scenario, CATALOG)
        result = recommend.recommend(s, plan_workload(s), CATALOG, chart=spy)
    except ScenarioError:  # a refused job has no chart
        return None
    assert len(seen) == 1
    return result, seen[0]


def _fabric_free_sizes(inputs: ChartInputs) -> list[tuple[Scenario, WorkloadPlan]]:
    scenario, facts, _ = inputs
    out = []
    for nodes in scaling.chart_sizes(facts):
        try:
            sized = resized(scenario, nodes * facts.gpus_per_node)
            plan = plan_workload(sized)
        except Exception:  # noqa: S112 - the chart skips a size it cannot plan
            continue
        if scaling.fabric_free(sized, plan):
            out.append((sized, plan))
    return out


def _figures(sized: Scenario, plan: WorkloadPlan, designs: tuple[Design, ...]) -> set[str]:
    """The chart's figure of each design, as exact text (NaN included)."""
    return {
        repr(scaling.efficiency(performance.evaluate_design(sized, plan, d, bounds=False)))
        for d in designs
    }


def _check(scenario: dict[str, Any], designs: tuple[Design, ...]) -> int:
    """The fabric-free sizes of the job's chart give every design the same figure, and the
    shared chart is the chart evaluated once per fabric.  Returns the sizes checked."""
    evaluated = _evaluated(scenario)
    if evaluated is None:
        return 0
    result, inputs = evaluated
    s, facts, reps = inputs
    per_fabric = scaling._points(s, facts, reps, share_fabric_free=False)
    assert tuple(per_fabric) == result.scaling
    free = _fabric_free_sizes(inputs)
    reps_designs = tuple(scaling.design_of(c) for c in reps.values())
    for sized, plan in free:
        figures = _figures(sized, plan, reps_designs + designs)
        assert len(figures) == 1, (sized.gpus, figures)
    return len(free)


def _sample() -> list[AuditCase]:
    """A seeded random sample of audit-grid jobs small enough to evaluate quickly: per kind of
    work (training, fine-tuning, every kind of serving, RAG) four of any preset model and
    platform and four of models that fit one server, whose chart starts with fabric-free
    sizes."""
    rnd = random.Random(24)
    small = [c for c in grid(CATALOG) if c.variant == "default" and c.servers <= 64]
    out: list[AuditCase] = []
    for workload in sorted({c.workload for c in small}):
        pool = [c for c in small if c.workload == workload]
        fits = [c for c in pool if c.model in ("llama3-8b", "mixtral-8x7b", "llama3-70b")]
        out += rnd.sample(pool, 4) + rnd.sample(fits, 4)
    return out


@pytest.mark.parametrize("case", _sample(), ids=AuditCase.label)
def test_a_fabric_free_size_has_the_same_figure_on_every_design(case: AuditCase) -> None:
    _check(scenario_for(case, CATALOG), DESIGNS[case.servers % 16 :: 16])


KNOWN_FREE = {
    # (scenario, chart sizes that need no fabric)
    "training-one-server": (
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16},
        1,
    ),
    "training-nvl72-trays": (
        {"workload": "training", "model": "llama3-70b", "gpu": "gb200-nvl72", "gpus": 72,
         "gpus_per_node": 4},
        5,
    ),
    "serving-replicas": (
        {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64,
         "inference": {"independent_replicas": True}},
        4,
    ),
    "serving-disaggregated-in-a-rack": (
        {"workload": "inference", "model": "llama3-70b", "gpu": "gb200-nvl72", "gpus": 64,
         "gpus_per_node": 4, "inference": {"deployment": "disaggregated"}},
        4,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(KNOWN_FREE))
def test_known_fabric_free_sizes_agree_on_every_design(name: str) -> None:
    """Training inside one server or one NVL72 rack, serving replicas on many servers and
    disaggregated pools inside one rack: not vacuous (their fabric-free sizes are counted)."""
    scenario, at_least = KNOWN_FREE[name]
    assert _check(scenario, DESIGNS[::4]) >= at_least


def test_a_calibrated_job_is_never_shared() -> None:
    """A customer's fit is applied per fabric kind, so a calibrated size is evaluated on each."""
    evaluated = _evaluated(KNOWN_FREE["training-one-server"][0])
    assert evaluated is not None
    s = evaluated[1][0]
    sized = resized(s, 8)
    plan = plan_workload(sized)
    assert scaling.fabric_free(sized, plan)
    calibrated = dataclasses.replace(sized, calibration=mock.sentinel.calibration)
    assert not scaling.fabric_free(calibrated, plan)


def test_the_check_fails_on_a_figure_that_depends_on_the_design(
    request: pytest.FixtureRequest,
) -> None:
    """With the efficiency made to depend on the fabric, the NIC and the oversubscription,
    both halves of the check see it: the designs disagree, and the shared chart differs from
    the one evaluated per fabric."""
    # made to depend by replacing performance.evaluate_design, which compiled scaling calls
    # directly: on the compiled build the test runs again on the source
    if ran_on_source(request):
        return
    real = performance.evaluate_design
    skew = {"infiniband": 1.0, "roce": 0.97, "ethernet": 0.94}

    def dependent(s: Scenario, w: WorkloadPlan, d: Design, *, bounds: bool = True) -> Metrics:
        m = real(s, w, d, bounds=bounds)
        factor = skew[d.fabric] * (1.0 - d.nic_gbps / 1e5) / d.oversubscription
        if m.scaling_efficiency is not None:
            return dataclasses.replace(m, scaling_efficiency=m.scaling_efficiency * factor)
        assert m.ms_per_token is not None
        return dataclasses.replace(m, ms_per_token=m.ms_per_token / factor)

    for scenario, _ in KNOWN_FREE.values():
        evaluated = _evaluated(scenario)
        assert evaluated is not None
        inputs = evaluated[1]
        free = _fabric_free_sizes(inputs)
        assert free
        with mock.patch.object(performance, "evaluate_design", dependent):
            sized, plan = free[0]
            assert len(_figures(sized, plan, DESIGNS[::4])) > 1
            shared = scaling._points(*inputs)
            per_fabric = scaling._points(*inputs, share_fabric_free=False)
        assert shared != per_fabric
        assert all(math.isfinite(p.scaling_efficiency) for p in per_fabric)


def test_an_explicit_plan_with_context_parallelism_keeps_its_scaling_chart() -> None:
    """Llama 3 8B on 32 H100 as TP2 x CP2 x DP8: a resized scenario's data-parallel degree is
    the GPUs over tp x cp x pp, as the planner checks it.  Over tp x pp alone every other size
    read dp twice too large, the planner refused each, and the answer had no scaling chart."""
    raw = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "h100-sxm",
        "gpus": 32,
        "parallelism": {"tp": 2, "pp": 1, "cp": 2, "dp": 8},
        "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
    }
    scenario = parse_scenario(raw, CATALOG)
    assert resized(scenario, 64).parallelism.dp == 16
    with pytest.raises(ScenarioError, match="tp x cp x pp = 4"):
        resized(scenario, 66)
    result = evaluate(raw)
    assert {point["nodes"] for point in result["scaling"]} >= {2, 4}
