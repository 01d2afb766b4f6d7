"""The what-if rule (advisor.engine.tools.whatif, docs/MODEL.md "What-if"): a what-if of the
answer's own design is the engine's answer, so at a scenario's unchanged inputs it shows the
answer's own figures (fabric named, network capex, life cost, step or serving figures) for
every kind of answer, and a changed size or load shows what a new evaluate answers."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.result.records import EngineResult
from advisor.engine.tools.audit_grid import AuditCase, scenario_for
from advisor.engine.tools.sweep import INFERENCE_METRICS, TRAINING_METRICS, SweepPoint
from advisor.engine.tools.whatif import (
    ANSWER,
    FIXED,
    NO_FABRIC,
    DesignChoice,
    answer_deployment,
    answer_design,
    deployment_of,
    design_label,
    whatif_point,
)
from tests.support.fits import roce_fit
from tests.support.scenarios import SERVING_70B_5_RPS

CATALOG = default_catalog()

# Preset models x GPUs x sizes of the audit grid, every kind of answer: training that needs a
# compute fabric and training inside one server, serving replicas (no compute fabric), split
# replicas, disaggregated pools, RAG pipelines (a retrieval-tier network beside the fleet).
GRID: tuple[AuditCase, ...] = tuple(
    AuditCase(model, gpu, workload, "default", servers)
    for model, gpu, workload, servers in (
        ("llama3-8b", "h100-sxm", "training", 1),
        ("llama3-8b", "h100-sxm", "training", 4),
        ("llama3-8b", "l40s", "training", 3),
        ("llama3-8b", "mi300x", "training", 2),
        ("llama3-70b", "h100-sxm", "training", 4),
        ("llama3-70b", "h100-sxm", "training", 33),
        ("llama3-70b", "gb200-nvl72", "training", 18),
        ("llama3-70b", "gaudi3", "training", 2),
        ("mixtral-8x7b", "h100-sxm", "training", 2),
        ("mixtral-8x7b", "mi300x", "training", 4),
        ("llama3-8b", "h100-sxm", "inference-replicas", 2),
        ("llama3-8b", "l40s", "inference-replicas", 3),
        ("llama3-70b", "h100-sxm", "inference-replicas", 2),
        ("llama3-70b", "mi300x", "inference-replicas", 33),
        ("llama3-70b", "l40s", "inference-replicas", 4),
        ("mixtral-8x7b", "h200-sxm", "inference-replicas", 2),
        ("llama3-70b", "h100-sxm", "inference-split", 2),
        ("llama3-70b", "l40s", "inference-split", 3),
        ("llama3.1-405b", "h100-sxm", "inference-split", 2),
        ("mixtral-8x7b", "mi300x", "inference-split", 3),
        ("llama3-70b", "h100-sxm", "inference-disaggregated", 2),
        ("llama3-70b", "h200-sxm", "inference-disaggregated", 4),
        ("mixtral-8x7b", "h100-sxm", "inference-disaggregated", 2),
        ("llama3-8b", "h100-sxm", "inference-rag", 2),
        ("llama3-70b", "h100-sxm", "inference-rag", 2),
        ("llama3-70b", "h100-sxm", "inference-rag", 33),
        ("llama3-70b", "l40s", "inference-rag", 3),
        ("mixtral-8x7b", "mi300x", "inference-rag", 2),
        ("llama3-8b", "gb200-nvl72", "inference-rag", 2),
        ("llama3.1-405b", "h100-sxm", "inference-rag", 2),
        ("deepseek-v3", "h200-sxm", "inference-rag", 2),
    )
) + tuple(
    # Llama 3.1 405B at BF16 spans two H100 servers (unnamed, Meta's FP8 release fits one)
    AuditCase("llama3.1-405b", "h100-sxm", workload, "bf16", 2)
    for workload in ("inference-split", "inference-rag")
)

# The report's own case: Llama 3 70B, 16 H100, 5 requests/s (no compute fabric; the what-if
# once priced a $167k Ethernet compute fabric beside its own $13k), with and without RAG.
SCENARIOS: dict[str, dict[str, Any]] = {
    **{case.label(): scenario_for(case, CATALOG) for case in GRID},
    "llama3-70b/h100/5rps": SERVING_70B_5_RPS,
    "llama3-70b/h100/5rps/rag": {**SERVING_70B_5_RPS, "rag": {}},
}


def _same(point_value: float | None, answer_value: float | None) -> bool:
    """Equal up to the sweep's rounding to 6 significant digits."""
    if answer_value is None:
        return point_value is None
    return point_value is not None and point_value == pytest.approx(answer_value, rel=1e-5)


def _mismatches(point: SweepPoint, answer: EngineResult) -> list[str]:
    rec = answer.recommendation
    out = []
    fabric = rec.fabric if rec.needs_compute_fabric else NO_FABRIC
    if point.fabric != fabric:
        out.append(f"fabric {point.fabric} != {fabric}")
    if point.nic_gbps != rec.nic_gbps or point.nics_per_node != rec.nics_per_node:
        out.append(f"NICs {point.nics_per_node} x {point.nic_gbps} != answer's")
    for name, value in (
        ("network_capex_usd", answer.cost.network_capex_usd),
        ("decision_cost_usd", answer.cost.decision_cost_usd),
        ("total_cost_usd", answer.cost.total_cost_usd),
    ):
        if not _same(getattr(point, name), value):
            out.append(f"{name} {getattr(point, name)} != {value}")
    for key in INFERENCE_METRICS if point.inference else TRAINING_METRICS:
        if not _same(getattr(point.metrics, key), getattr(answer.metrics, key)):
            out.append(f"{key} {getattr(point.metrics, key)} != {getattr(answer.metrics, key)}")
    return out


@cache
def _answer(name: str) -> EngineResult:
    """Every scenario of the grid is answered (none is a refusal), each evaluated once."""
    return evaluate_typed(SCENARIOS[name], catalog=CATALOG)


def test_the_grid_holds_every_kind_of_answer() -> None:
    """The property below runs over a few dozen answers of each kind, not over refusals."""
    results = [_answer(name) for name in SCENARIOS]
    assert len(results) >= 30
    assert any(not r.recommendation.needs_compute_fabric for r in results)
    assert any(r.recommendation.needs_compute_fabric for r in results)
    assert any(r.rag is not None and r.recommendation.needs_compute_fabric for r in results)
    assert any(r.rag is not None and not r.recommendation.needs_compute_fabric for r in results)
    kinds = {r.scenario.workload for r in results}
    assert {"training", "inference"} <= kinds
    assert {answer_design(r).fabric for r in results} >= {NO_FABRIC, "roce"}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_what_if_at_unchanged_inputs_is_the_answer(name: str) -> None:
    """Recomputed through the engine (no stored answer given), the what-if of the answer's
    own design at the scenario's own inputs reproduces the answer's figures."""
    scenario, answer = SCENARIOS[name], _answer(name)
    point, source = whatif_point(scenario, None, catalog=CATALOG)
    assert source == ANSWER
    assert point.feasible
    assert point.servers * int(scenario["gpus_per_node"]) == scenario["gpus"]
    assert _mismatches(point, answer) == []
    # the stored answer given: the same point, without an evaluation
    reused, _ = whatif_point(scenario, None, catalog=CATALOG, answer=answer)
    assert reused == point


@pytest.mark.parametrize(
    "name", sorted(n for n in SCENARIOS if SCENARIOS[n]["workload"] == "inference")
)
def test_the_deployment_a_what_if_names_is_the_answers(name: str) -> None:
    """A serving what-if names the deployment it runs: from an answer's own records, and from
    the plan of a changed scenario; for the grid's unchanged inputs both are the deployment
    the answer's headline names when it falls short."""
    scenario, answer = SCENARIOS[name], _answer(name)
    said = answer_deployment(answer)
    assert said and said == deployment_of(scenario, CATALOG)
    headline = answer.recommendation.headline
    if "Serving falls short with " in headline:
        assert f"Serving falls short with {said} on " in headline


def test_no_compute_fabric_is_named_and_priced_as_the_answer() -> None:
    """The reported case: the answer buys adapters and cables for the existing network; the
    what-if shows that network, not an Ethernet compute fabric."""
    for name in ("llama3-70b/h100/5rps", "llama3-70b/h100/5rps/rag"):
        scenario, answer = SCENARIOS[name], _answer(name)
        assert not answer.recommendation.needs_compute_fabric
        point, _ = whatif_point(scenario, None, catalog=CATALOG)
        assert point.fabric == NO_FABRIC
        assert design_label(point.fabric) == "No compute fabric"
        assert point.network_capex_usd == pytest.approx(answer.cost.network_capex_usd, rel=1e-5)
    plain = _answer("llama3-70b/h100/5rps").cost.network_capex_usd
    rag = _answer("llama3-70b/h100/5rps/rag").cost.network_capex_usd
    assert rag > plain  # the retrieval tiers' network is in both the answer and the what-if


@pytest.mark.parametrize(
    ("name", "servers"),
    [
        ("llama3-70b/h100/5rps", 8),  # more replicas
        ("llama3-70b/h100-sxm/training/default/4srv", 9),
        ("llama3-8b/h100-sxm/inference-rag/default/2srv", 1),
    ],
)
def test_a_changed_size_is_what_a_new_evaluate_answers(name: str, servers: int) -> None:
    scenario = SCENARIOS[name]
    resized = {**scenario, "gpus": servers * int(scenario["gpus_per_node"])}
    point, source = whatif_point(resized, None, catalog=CATALOG)
    assert source == ANSWER
    assert point.servers == servers
    assert _mismatches(point, evaluate_typed(resized, catalog=CATALOG)) == []


def test_a_size_the_model_does_not_fit_is_a_point_with_the_reason() -> None:
    scenario = {
        "workload": "training",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 8,
        "gpus_per_node": 8,
    }
    point, source = whatif_point(scenario, None, catalog=CATALOG)
    assert source == ANSWER
    assert not point.feasible
    assert "does not fit" in (point.reason or "")
    assert point.metrics.step_time_s is None
    with pytest.raises(ScenarioError):  # bad input is still an error naming the field
        whatif_point({**scenario, "gpus": 0}, None, catalog=CATALOG)


def test_a_fixed_design_is_that_design_priced() -> None:
    """A design the user fixed (here an Ethernet compute fabric on the no-fabric answer) is
    priced as a sweep point: the compute fabric costs more than the answer's network."""
    scenario, answer = SERVING_70B_5_RPS, _answer("llama3-70b/h100/5rps")
    fixed = DesignChoice(fabric="ethernet", nic_gbps=400, nics_per_node=8, oversubscription=1.0)
    point, source = whatif_point(scenario, fixed, catalog=CATALOG)
    assert source == FIXED
    assert point.fabric == "ethernet"
    assert point.feasible
    assert (point.network_capex_usd or 0) > answer.cost.network_capex_usd
    no_fabric = DesignChoice(NO_FABRIC, 200, 2, 1.0)
    with pytest.raises(ScenarioError):
        whatif_point(scenario, no_fabric, catalog=CATALOG)


@pytest.mark.parametrize(
    "name", ["llama3-70b/h100/5rps/rag", "mixtral-8x7b/mi300x/training/default/4srv"]
)
def test_the_what_ifs_evaluation_leaves_out_only_the_scaling_chart(name: str) -> None:
    """The what-if evaluates without the scaling chart (two thirds of an evaluation): every
    other part of the answer is the same."""
    full = _answer(name).to_dict()
    quick = evaluate_typed(SCENARIOS[name], catalog=CATALOG, scaling_chart=False).to_dict()
    assert full["scaling"] and not quick.get("scaling")
    assert {k: v for k, v in quick.items() if k != "scaling"} == {
        k: v for k, v in full.items() if k != "scaling"
    }


def test_a_calibrated_answer_keeps_its_fit_in_the_what_if() -> None:
    """A calibrated answer's what-if applies the same fit: at unchanged inputs it is the
    calibrated answer, at a new size the calibrated evaluate, and a fixed RoCE design is
    priced on the measured (slower) fabric."""
    fit = roce_fit(0.25, latency_s=50e-6)  # a quarter of the default bandwidth
    scenario = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "constraints": {"team_skills": "ethernet", "prefer": "cost"},  # a RoCE answer
    }
    calibrated = evaluate_typed(scenario, catalog=CATALOG, calibration=fit)
    assert calibrated.recommendation.fabric == "roce"
    point, _ = whatif_point(scenario, None, catalog=CATALOG, calibration=fit)
    assert _mismatches(point, calibrated) == []
    resized = {**scenario, "gpus": 96}
    point, _ = whatif_point(resized, None, catalog=CATALOG, calibration=fit)
    assert _mismatches(point, evaluate_typed(resized, catalog=CATALOG, calibration=fit)) == []
    uncalibrated, _ = whatif_point(resized, None, catalog=CATALOG)
    assert (point.metrics.step_time_s or 0) > (uncalibrated.metrics.step_time_s or 0)
    roce = DesignChoice(fabric="roce", nic_gbps=400, nics_per_node=8, oversubscription=1.0)
    measured, _ = whatif_point(scenario, roce, catalog=CATALOG, calibration=fit)
    default, _ = whatif_point(scenario, roce, catalog=CATALOG)
    assert (measured.metrics.step_time_s or 0) > (default.metrics.step_time_s or 0)
