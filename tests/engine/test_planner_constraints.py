"""Jobs that differ only in their constraints share one plan (``plans.as_planned``, applied by the
planner and by ``performance.evaluate_design``): the
constraints are the decision's and no model module reads them.  Checked three ways: the
model's source reads no ``constraints`` outside that function, a plan made from a scenario
with constraints equals the one made from it without, and an answer is the same whether its
plan was made for it or taken from a job with other constraints."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, Scenario, parse_scenario
from advisor.engine.model import performance, planner
from advisor.engine.model.plans import WorkloadPlan, as_planned
from advisor.engine.model.serving import deployment
from advisor.engine.result.echo import Constraints
from advisor.engine.result.records import Metrics
from advisor.engine.tools.audit_grid import VARIANT_SIZES, VARIANTS, AuditCase, scenario_for
from tests.support.engine_build import ran_on_source

CATALOG = default_catalog()
MODEL = Path(planner.__file__).resolve().parent


def test_no_model_module_reads_the_constraints() -> None:
    readers = []
    for path in sorted(MODEL.rglob("*.py")):
        tree = ast.parse(path.read_text())
        allowed: set[int] = set()
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name == "as_planned":
                allowed |= {id(n) for n in ast.walk(fn)}
        for node in ast.walk(tree):
            reads = (isinstance(node, ast.Attribute) and node.attr == "constraints") or (
                isinstance(node, ast.Constant) and node.value == "constraints"
            )
            if reads and id(node) not in allowed:
                readers.append(f"{path.relative_to(MODEL)}:{getattr(node, 'lineno', '?')}")
    assert readers == []


JOBS = [
    ("llama3-70b", "h100-sxm", "training", 33),
    ("llama3-8b", "a100-80gb-sxm", "training", 2),
    ("mixtral-8x7b", "mi300x", "inference-split", 3),
    ("llama3.1-405b", "h100-sxm", "inference-split", 257),
]


@pytest.mark.parametrize(("model", "gpu", "workload", "servers"), JOBS)
def test_a_plan_does_not_depend_on_the_constraints(
    model: str, gpu: str, workload: str, servers: int
) -> None:
    assert servers in VARIANT_SIZES
    plans = []
    for variant in VARIANTS:
        if variant == "tight-budget" and workload != "training":
            continue
        s = parse_scenario(scenario_for(AuditCase(model, gpu, workload, variant, servers)), CATALOG)
        planner._PLAN_CACHE.clear()
        uncached = (planner._plan_training if s.is_training else planner._plan_inference)(s)
        assert planner.plan_workload(s) == uncached
        plans.append(uncached)
        assert dataclasses.replace(s, constraints=Constraints()) == as_planned(s)
    assert len(plans) >= 3
    assert all(p == plans[0] for p in plans)


@pytest.mark.parametrize(("model", "gpu", "workload", "servers"), JOBS)
def test_an_answer_is_the_same_with_a_plan_made_for_other_constraints(
    model: str, gpu: str, workload: str, servers: int
) -> None:
    case = AuditCase(model, gpu, workload, "ethernet-team-cost", servers)
    planner._PLAN_CACHE.clear()
    alone = evaluate_typed(scenario_for(case), catalog=CATALOG).to_dict()
    planner._PLAN_CACHE.clear()
    evaluate_typed(scenario_for(dataclasses.replace(case, variant="default")), catalog=CATALOG)
    shared = evaluate_typed(scenario_for(case), catalog=CATALOG).to_dict()
    assert shared == alone


def _forget_plans() -> None:
    """The planner's and the deployment search's plans (a plan keeps its designs' metrics)."""
    planner._PLAN_CACHE.clear()
    for cache in (
        deployment._REPLICA_PLAN_CACHE,
        deployment._FABRIC_FREE_CACHE,
        deployment._SERVING_PLAN_CACHE,
    ):
        cache.clear()


# the training jobs and the first serving job: the 405B serving job's plan object comes from
# the deployment search's cache, warm from the tests above, with its designs' metrics kept
@pytest.mark.parametrize(("model", "gpu", "workload", "servers"), JOBS[:3])
def test_a_job_with_other_constraints_prices_no_design_again(
    model: str,
    gpu: str,
    workload: str,
    servers: int,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """The designs are evaluated for the scenario with the default constraints
    (``recommend.performance_evaluator``), so the metrics a plan keeps per design serve a job
    that differs only in its constraints: none of its designs is priced a second time."""
    # counted by replacing performance._evaluate_design, which compiled performance calls
    # directly: on the compiled build the test runs again on the source
    if ran_on_source(request):
        return
    priced: list[tuple[int, Design, bool]] = []
    evaluate = performance._evaluate_design

    def counted(s: Scenario, w: WorkloadPlan, design: Design, *, bounds: bool = True) -> Metrics:
        priced.append((id(w), design, bounds))
        return evaluate(s, w, design, bounds=bounds)

    monkeypatch.setattr(performance, "_evaluate_design", counted)
    _forget_plans()
    case = AuditCase(model, gpu, workload, "default", servers)
    evaluate_typed(scenario_for(case), catalog=CATALOG)
    first = set(priced)
    assert first
    priced.clear()
    evaluate_typed(
        scenario_for(dataclasses.replace(case, variant="ethernet-team-cost")), catalog=CATALOG
    )
    assert not first & set(priced)


def test_evaluate_design_keeps_one_figure_for_every_constraint_variant() -> None:
    """``performance.evaluate_design`` normalises the scenario itself (one place), so a caller
    that passes a scenario with constraints reads the metrics a caller with the default
    constraints kept, and the other way round: the same object, not a second pricing."""
    case = AuditCase("llama3-70b", "h100-sxm", "training", "ethernet-team-cost", 33)
    s = parse_scenario(scenario_for(case), CATALOG)
    assert s.constraints != Constraints()
    w = planner.plan_workload(s)
    design = Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8)
    first = performance.evaluate_design(s, w, design, bounds=False)
    assert performance.evaluate_design(as_planned(s), w, design, bounds=False) is first
    served = parse_scenario(
        scenario_for(
            AuditCase("mixtral-8x7b", "mi300x", "inference-split", "ethernet-team-cost", 3)
        ),
        CATALOG,
    )
    assert served.constraints != Constraints()
    sw = planner.plan_workload(served)
    kept = performance.evaluate_design(as_planned(served), sw, design)
    assert performance.evaluate_design(served, sw, design) is kept
