"""The typed engine result (advisor.engine.result.records): round trips, older results, new keys."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from advisor.engine import evaluate, evaluate_typed
from advisor.engine.result.base import ResultFormatError
from advisor.engine.result.records import Band, Cost, EngineResult, Metrics, Option

SCENARIOS: dict[str, dict[str, Any]] = {
    "training": {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256},
    "training_with_design": {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
    },
    "one_server": {"workload": "fine_tuning", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8},
    "over_budget": {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 512,
        "constraints": {"network_budget_usd": 100000},
    },
    "inference_replicas": {
        "workload": "inference",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "inference": {"deployment": "replicas"},
    },
    "inference_split": {
        "workload": "inference",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "inference": {"deployment": "split", "independent_replicas": False},
    },
    "inference_disaggregated": {
        "workload": "inference",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 32,
        "inference": {
            "deployment": "disaggregated",
            "prompt_tokens": 16000,
            "output_tokens": 500,
            "requests_per_s": 0.5,
        },
    },
}


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Any]]:
    return {name: evaluate(raw) for name, raw in SCENARIOS.items()}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_round_trip_both_ways(results: dict[str, dict[str, Any]], name: str) -> None:
    raw = results[name]
    typed = EngineResult.from_dict(raw)
    # the dict the API serves is the engine's, key for key and type for type
    assert json.dumps(typed.to_dict(), sort_keys=True) == json.dumps(raw, sort_keys=True)
    assert EngineResult.from_dict(typed.to_dict()) == typed


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_key_has_a_field(results: dict[str, dict[str, Any]], name: str) -> None:
    """Nothing of today's result falls through to ``extra``: each key is typed."""
    typed = EngineResult.from_dict(results[name])
    leftovers: list[str] = []

    def walk(value: Any, path: str) -> None:
        extra = getattr(value, "extra", None)
        if extra:
            leftovers.append(f"{path}: {sorted(extra)}")
        for key in getattr(value, "__dataclass_fields__", {}):
            if key != "extra":
                walk(getattr(value, key), f"{path}.{key}")
        if isinstance(value, tuple):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")

    walk(typed, "result")
    assert leftovers == []


def test_evaluate_typed_is_evaluate_read_through_the_types() -> None:
    raw = SCENARIOS["inference_replicas"]
    typed = evaluate_typed(raw)
    assert typed.to_dict() == evaluate(raw)
    assert typed.is_inference
    assert typed.metrics.ms_per_token is not None and typed.metrics.step_time_s is None
    assert typed.recommended_option is not None
    assert typed.recommended_option.fabric == typed.recommendation.fabric


def test_typed_fields_read_what_the_dict_holds(results: dict[str, dict[str, Any]]) -> None:
    raw = results["over_budget"]
    typed = EngineResult.from_dict(raw)
    assert typed.recommendation.budget is not None
    assert (
        typed.recommendation.budget.within_budget
        is raw["recommendation"]["budget"]["within_budget"]
    )
    assert (
        typed.recommendation.topology.leaf_switches
        == (raw["recommendation"]["topology"]["leaf_switches"])
    )
    assert typed.cost.life is not None
    assert typed.cost.life.total_usd == raw["cost"]["life"]["total_usd"]
    assert typed.cost.job_total_usd == raw["cost"]["job_share"]["total_usd"]
    assert [line.sku for line in typed.bom] == [line["sku"] for line in raw["bom"]]
    assert typed.uncertainty.step_time_s is not None
    assert next(key for key, _ in typed.uncertainty.bands()) == "step_time_s"
    disagg = EngineResult.from_dict(results["inference_disaggregated"])
    assert disagg.workload.serving is not None
    assert disagg.workload.serving.pools.prefill is not None
    assert disagg.workload.serving.pools.serve is None
    assert disagg.metrics.kv_transfer_ms is not None


def test_an_older_result_without_newer_keys_loads_with_defaults(
    results: dict[str, dict[str, Any]],
) -> None:
    old = copy.deepcopy(results["training"])
    for key in ("constants_version", "uncertainty", "scaling"):
        del old[key]
    for key in ("life", "job_share", "decision_cost_usd", "decision_basis"):
        del old["cost"][key]
    for key in ("reference_design", "decision", "storage", "budget", "within_budget"):
        del old["recommendation"][key]
    for option in old["options"]:
        del option["cost"]["life"], option["cost"]["job_share"]
    typed = EngineResult.from_dict(old)
    assert typed.constants_version is None
    assert typed.cost.life is None and typed.cost.job_share is None
    assert typed.cost.job_total_usd == old["cost"]["total_cost_usd"]
    assert typed.recommendation.within_budget is True
    assert typed.recommendation.reference_design is None
    assert typed.uncertainty == EngineResult().uncertainty
    assert typed.scaling == ()
    # keys the engine leaves out stay out; defaulted scalars appear with their default
    back = typed.to_dict()
    assert "constants_version" not in back and "life" not in back["cost"]
    assert back["recommendation"]["within_budget"] is True
    assert EngineResult.from_dict(back) == typed


def test_a_key_this_module_does_not_know_is_kept() -> None:
    raw = {"metrics": {"step_time_s": 1.5, "new_metric": 3}, "future": {"x": [1, 2]}}
    typed = EngineResult.from_dict(raw)
    assert typed.metrics.step_time_s == 1.5
    assert typed.metrics.extra == {"new_metric": 3}
    back = typed.to_dict()
    assert back["metrics"] == {"step_time_s": 1.5, "new_metric": 3}
    assert back["future"] == {"x": [1, 2]}


def test_values_are_not_coerced() -> None:
    option = Option.from_dict({"nic_gbps": 400, "oversubscription": 2.0})
    assert isinstance(option.nic_gbps, int)
    assert option.to_dict()["nic_gbps"] == 400 and "400.0" not in json.dumps(option.to_dict())


def test_a_wrong_shape_names_the_path() -> None:
    with pytest.raises(ResultFormatError, match=r"EngineResult\.options\[1\]"):
        EngineResult.from_dict({"options": [{}, "not an option"]})
    with pytest.raises(ResultFormatError, match=r"EngineResult\.cost"):
        EngineResult.from_dict({"cost": [1]})


def test_constructed_results_round_trip() -> None:
    typed = EngineResult(
        metrics=Metrics(step_time_s=2.0, gpu_idle_fraction=0.1),
        cost=Cost(network_capex_usd=1e6, total_cost_usd=5.0),
        options=(Option(rank=1, fabric="roce", nic_gbps=400, recommended=True),),
    )
    assert EngineResult.from_dict(typed.to_dict()) == typed
    assert list(typed.uncertainty.bands()) == []
    assert Band.from_dict(None) == Band()


def test_a_custom_model_is_typed() -> None:
    raw = {
        "workload": "training",
        "model": {"params_b": 7, "layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000},
        "gpu": "h100-sxm",
        "gpus": 16,
    }
    result = evaluate(raw)
    typed = EngineResult.from_dict(result)
    assert not isinstance(typed.scenario.model, str)
    assert typed.scenario.model.params_b == 7
    assert typed.to_dict() == result


def test_the_acceptance_plan_reads_a_stored_result_through_its_types(
    results: dict[str, dict[str, Any]],
) -> None:
    from advisor.engine.calibration.acceptance import acceptance_plan

    typed = EngineResult.from_dict(results["training_with_design"])  # as a stored run loads
    recommended = acceptance_plan(typed)
    assert recommended.fabric == typed.recommendation.fabric
    given = acceptance_plan(typed, given_design=True)
    assert given.fabric == "roce"


def test_a_calibrated_result_round_trips_with_its_comparison() -> None:
    from tests.measurements.test_calibrated_evaluate import SCENARIO
    from tests.support.fits import roce_fit

    raw = evaluate(SCENARIO, calibration=roce_fit(0.25, latency_s=50e-6))
    typed = EngineResult.from_dict(raw)
    assert typed.calibration is not None
    assert typed.calibration.calibration.fabric == "roce"
    assert typed.calibration.default.fabric == raw["calibration"]["default"]["fabric"]
    assert typed.calibration.calibrated.design_metrics is not None
    assert typed.calibration.calibration.extra == {}
    assert typed.calibration.default.extra == {}
    assert json.dumps(typed.to_dict(), sort_keys=True) == json.dumps(raw, sort_keys=True)
    assert EngineResult.from_dict(typed.to_dict()) == typed


def test_the_validation_report_round_trips_typed() -> None:
    from advisor.engine.result.validation_report import ValidationReport
    from advisor.engine.tools.validation import validation_report

    raw = validation_report()
    typed = ValidationReport.from_dict(raw)
    assert typed.to_dict() == raw
    assert len(typed.rows) == len(raw["rows"]) and typed.passed is raw["passed"]
    assert all(row.extra == {} for row in typed.rows)


def test_a_wrong_typed_number_text_or_flag_is_refused_naming_its_path() -> None:
    from advisor.engine.result.base import ResultFormatError
    from advisor.engine.result.records import EngineResult

    good = {"cost": {"network_capex_usd": 1200, "work": "training"}}
    assert EngineResult.from_dict(good).cost.network_capex_usd == 1200
    for damaged, path in (
        ({"cost": {"network_capex_usd": "lots"}}, "EngineResult.cost.network_capex_usd"),
        ({"cost": {"network_capex_usd": True}}, "EngineResult.cost.network_capex_usd"),
        ({"cost": {"work": 5}}, "EngineResult.cost.work"),
    ):
        with pytest.raises(ResultFormatError, match=path):
            EngineResult.from_dict(damaged)


def test_flags_stored_as_one_or_zero_read_as_booleans_and_other_numbers_are_refused() -> None:
    # results stored before meets_target / load_saturated / meets_latency_targets were JSON
    # booleans carry 1.0 / 0.0; they read as the same truth value
    from advisor.engine.result.base import ResultFormatError
    from advisor.engine.result.records import Metrics

    old = Metrics.from_dict({"meets_target": 1.0, "load_saturated": 0.0, "ms_per_token": 12.5})
    assert old.meets_target is True and old.load_saturated is False
    assert old.to_dict() == {"meets_target": True, "load_saturated": False, "ms_per_token": 12.5}
    with pytest.raises(ResultFormatError, match=r"Metrics\.meets_latency_targets"):
        Metrics.from_dict({"meets_latency_targets": 0.5})
    fresh = evaluate_typed(
        {"workload": "inference", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8}
    )
    assert isinstance(fresh.metrics.meets_target, bool)


ECHOED: dict[str, dict[str, Any]] = {
    "custom_model_on_cloud": {
        "workload": "training",
        "model": {"params_b": 30, "layers": 48, "hidden": 6144, "heads": 48, "kv_heads": 8},
        "gpu": "h100-sxm",
        "gpus": 64,
        "parallelism": {"tp": 8},
        "constraints": {"cloud": "aws-p5", "network_budget_usd": 500000},
    },
    "pools_and_rag": {
        "workload": "inference",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 32,
        "inference": {
            "deployment": "disaggregated",
            "prompt_tokens": 8000,
            "requests_per_s": 1,
            "pools": {"prefill": {"servers": 2}, "decode": {}},
        },
        "rag": {"top_k": 8},
    },
    **{name: SCENARIOS[name] for name in ("training_with_design", "inference_split")},
}


@pytest.mark.parametrize("name", sorted(ECHOED))
def test_the_echoes_are_built_from_the_typed_scenario_and_plan(name: str) -> None:
    """``result.scenario`` / ``result.workload`` are written from the parsed scenario and the
    workload plan field by field: every key typed, a typed round trip, what was given kept."""
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.input.echo import scenario_echo
    from advisor.engine.input.scenario import parse_scenario
    from advisor.engine.model.echo import workload_info
    from advisor.engine.model.planner import plan_workload
    from advisor.engine.result.echo import ScenarioEcho, WorkloadInfo

    s = parse_scenario(ECHOED[name], default_catalog())
    w = plan_workload(s)
    scenario, workload = scenario_echo(s), workload_info(w, s)
    assert ScenarioEcho.from_dict(scenario.to_dict()) == scenario
    assert WorkloadInfo.from_dict(workload.to_dict()) == workload
    assert scenario.extra == {} and scenario.constraints.extra == {} and workload.extra == {}
    assert workload.plan.tp == w.plan.tp and workload.memory.fits == w.memory.fits
    assert workload.traffic.communicators == tuple(
        c for c in workload.traffic.communicators if c.size > 1
    )
    typed = evaluate_typed(ECHOED[name])
    assert typed.scenario == scenario and typed.workload == workload
    if name == "custom_model_on_cloud":
        assert scenario.constraints.cloud == "aws-p5"
        assert scenario.to_dict()["constraints"]["cloud"] == "aws-p5"
        assert scenario.parallelism["tp"] == 8 and not isinstance(scenario.model, str)
        assert scenario.model.layers == 48
    if name == "pools_and_rag":
        assert scenario.inference is not None and scenario.rag is not None
        assert scenario.inference.pools == {"prefill": {"servers": 2}}
        assert scenario.rag.top_k == 8
        assert workload.serving is not None and workload.serving.pools.prefill is not None
