"""evaluate(scenario, calibration=fit): default vs calibrated side by side."""

from __future__ import annotations

from advisor.engine import evaluate
from tests.support.fits import roce_fit

SCENARIO = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 64,
    "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
}


def test_a_slow_measured_roce_fabric_slows_the_roce_design_and_says_so():
    default = evaluate(SCENARIO)
    calibrated = evaluate(SCENARIO, calibration=roce_fit(0.25, latency_s=50e-6))
    before = default["design_evaluation"]["metrics"]
    after = calibrated["design_evaluation"]["metrics"]
    assert after["network_comm_s"] > before["network_comm_s"] * 2
    assert after["step_time_s"] > before["step_time_s"]
    cmp = calibrated["calibration"]
    assert cmp["calibration"]["net_bandwidth_scale"] == 0.25
    assert cmp["calibration"]["fabric"] == "roce"
    assert cmp["default"]["design_metrics"]["step_time_s"] == before["step_time_s"]
    assert cmp["calibrated"]["design_metrics"]["step_time_s"] == after["step_time_s"]
    assert isinstance(cmp["recommendation_changed"], bool)
    assert "roce bandwidth x0.25" in cmp["why"]


def test_a_fit_that_matches_the_default_changes_nothing():
    default = evaluate(SCENARIO)
    calibrated = evaluate(SCENARIO, calibration=roce_fit(1.0))
    assert calibrated["metrics"] == default["metrics"]
    assert calibrated["calibration"]["recommendation_changed"] is False
    assert "does not change the recommendation" in calibrated["calibration"]["why"]


def test_without_calibration_the_result_has_no_calibration_block():
    assert "calibration" not in evaluate(SCENARIO)
