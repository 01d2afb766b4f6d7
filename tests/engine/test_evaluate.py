"""The public entry point: evaluate(scenario) -> JSON-compatible dict."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine import ENGINE_VERSION, ScenarioError, evaluate, json_safe
from advisor.engine.facts.catalog import default_catalog


def scenario(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
    }
    raw.update(overrides)
    return raw


def _walk_numbers(value: Any) -> list[float]:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _walk_numbers(v)]
    assert isinstance(value, list), type(value)
    return [n for v in value for n in _walk_numbers(v)]


def test_result_has_the_documented_sections() -> None:
    result = evaluate(scenario())
    assert result["engine_version"] == ENGINE_VERSION
    assert result["catalog_version"] == default_catalog().version
    workload = result["workload"]
    assert {"model", "memory", "plan", "nodes", "gpus_per_node", "spans_servers", "traffic"} <= (
        workload.keys()
    )
    assert {"tp", "pp", "dp", "ep", "micro_batch", "sharding"} <= workload["plan"].keys()
    metrics = result["design_evaluation"]["metrics"]
    assert {"step_time_s", "tflops_per_gpu", "scaling_efficiency", "gpu_idle_fraction"} <= (
        metrics.keys()
    )
    assert result["design_evaluation"]["design"]["fabric"] == "roce"
    assert all({"name", "value", "unit", "source"} <= a.keys() for a in result["assumptions"])


def test_result_is_plain_json_without_nan() -> None:
    result = evaluate(scenario())
    text = json.dumps(result, allow_nan=False)
    assert json.loads(text) == result


def test_inference_design_evaluation_reports_token_latency() -> None:
    result = evaluate(scenario(workload="inference", model="llama3.1-405b", gpus=16))
    metrics = result["design_evaluation"]["metrics"]
    assert metrics["ms_per_token"] > 0 and metrics["ttft_ms"] > 0


def test_without_a_design_there_is_no_design_evaluation() -> None:
    raw = scenario()
    del raw["design"]
    assert "design_evaluation" not in evaluate(raw)


def test_bad_input_raises_scenario_error_only() -> None:
    with pytest.raises(ScenarioError) as info:
        evaluate(scenario(gpus=-1, gpu="nope"))
    assert set(info.value.field_errors) >= {"gpus", "gpu"}


def test_progress_reaches_100() -> None:
    seen: list[int] = []
    evaluate(scenario(), progress=seen.append)
    assert seen and seen[-1] == 100
    assert all(0 <= p <= 100 for p in seen)


def test_json_safe_refuses_non_finite_numbers() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        json_safe({"a": [1.0, math.inf]})
    with pytest.raises(ValueError, match="non-finite"):
        json_safe({"a": math.nan})
    assert json_safe({"t": (1, 2)}) == {"t": [1, 2]}


@settings(max_examples=25, deadline=None)
@given(
    model=st.sampled_from(("llama3-8b", "llama3-70b", "mixtral-8x7b", "gpt3-175b")),
    gpu=st.sampled_from(("h100-sxm", "h200-sxm", "b200", "mi300x", "a100-80gb-sxm")),
    nodes=st.sampled_from((1, 2, 4, 16, 64)),
    workload=st.sampled_from(("training", "fine_tuning", "inference")),
    fabric=st.sampled_from(("ethernet", "roce", "infiniband")),
)
def test_no_output_number_is_nan_or_infinite(
    model: str, gpu: str, nodes: int, workload: str, fabric: str
) -> None:
    raw = scenario(
        model=model,
        gpu=gpu,
        gpus=8 * nodes,
        workload=workload,
        design={"fabric": fabric, "nic_gbps": 200, "nics_per_node": 4},
    )
    try:
        result = evaluate(raw)
    except ScenarioError:
        return  # does not fit: refused cleanly
    assert all(math.isfinite(n) for n in _walk_numbers(result))


def test_the_recommended_design_carries_its_step_bounds() -> None:
    # candidates are scored without the step bounds; the chosen design gets them (the
    # metrics and the uncertainty of the answer)
    result = evaluate(scenario(design=None))
    metrics = result["metrics"]
    assert metrics["step_time_s_low"] <= metrics["step_time_s"] <= metrics["step_time_s_high"]
    assert metrics["run_time_s_low"] <= metrics["run_time_s"] <= metrics["run_time_s_high"]
    band = result["uncertainty"]["step_time_s"]
    assert band["low"] < band["high"]
    assert band["low"] == pytest.approx(metrics["step_time_s_low"], abs=1e-6)


def test_the_wasted_gpu_time_moves_with_the_networks_spread_and_the_models_error() -> None:
    """The model's error scales the wait with the step; the network's own spread is all wait."""
    from advisor.engine.decision.prose import wasted_band

    perf, idle, wasted = 6.2, 0.025, 900_000.0
    # the model's error alone: the wait scales with the step
    low, high = wasted_band(wasted, perf, (perf * 0.9, perf * 1.5), idle, (0.9, 1.5))
    assert (low, high) == pytest.approx((wasted * 0.9, wasted * 1.5))
    # the network's spread alone: 0.1 s more of a 0.155 s wait
    low, high = wasted_band(wasted, perf, (perf, perf + 0.1), idle, (1.0, 1.0))
    assert (low, high) == pytest.approx((wasted, wasted * (1 + 0.1 / (perf * idle))))
    # no wait, no band
    assert wasted_band(0.0, perf, (5.0, 9.0), 0.0, (0.9, 1.5)) == (0.0, 0.0)


def test_the_life_cost_range_is_not_the_whole_step_range_read_as_waiting() -> None:
    """Llama 3 70B on 512 H100 for an Ethernet team, 2.5 % of GPU time waiting on the
    network: the life cost read "$4.66M to $28.26M" around $6.66M, the step's whole +57 %
    (mostly the model's error on computing) counted as waiting."""
    result = evaluate(
        {
            "workload": "training",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 512,
            "constraints": {"team_skills": "ethernet"},
        }
    )
    life = result["cost"]["life"]
    band = result["uncertainty"]["decision_cost_usd"]
    assert result["metrics"]["step_time_s_high"] > 1.4 * result["metrics"]["step_time_s"]
    assert band["low"] <= life["total_usd"] <= band["high"] < 1.5 * life["total_usd"]
    fixed = life["network_capex_usd"] + life["network_power_usd"]
    assert band["high"] - 1.2 * fixed - life["operations_usd"] > life["gpu_time_wasted_usd"]


def test_a_serving_answer_states_its_compute_and_load_assumptions() -> None:
    """A serving answer names the model it was priced with (the per-layer roofline, not the
    catalog's flat compute fraction no serving path uses) and how it reads its load: random
    arrivals, the 95th-percentile targets and the router the queue assumes."""
    from advisor.engine.model.serving.compute import TARGET_QUANTILE

    result = evaluate(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 64,
            "inference": {"requests_per_s": 20},
        }
    )
    rows = {a["name"]: a for a in result["assumptions"]}
    assert "compute efficiency" not in rows
    assert rows["compute model"]["value"] == "GEMM and attention roofline per layer"
    assert "NVIDIA H100" in rows["compute model"]["source"]
    assert rows["latency targets"]["value"] == round(TARGET_QUANTILE * 100) == 95
    assert "Poisson" in rows["request arrivals"]["value"]
    assert rows["request routing"]["value"] == "to the least-loaded replica"
    training = {a["name"] for a in evaluate(scenario())["assumptions"]}
    assert "compute efficiency" in training
    assert not training & {
        "compute model",
        "latency targets",
        "request arrivals",
        "request routing",
    }
