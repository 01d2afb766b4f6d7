"""Engine result -> Plotly figures (and the shared series the PDF draws)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.result.records import EngineResult
from advisor.reports import charts
from tests.frontend.sample_result import single_server_result, training_result


def _training() -> EngineResult:
    return EngineResult.from_dict(training_result())


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def test_breakdown_splits_each_candidates_step_into_compute_comm_and_idle() -> None:
    s = charts.breakdown_series(_training())
    assert s.labels[0] == "RoCE v2 8×400G" and s.recommended[0]
    assert s.compute[0] == 3.80
    assert s.comm[0] == pytest.approx(0.21)
    assert s.idle[0] == pytest.approx(4.12 - 3.80 - 0.21)
    fig = charts.breakdown_figure(_training())
    assert fig["data"][0]["name"] == "Compute"
    assert fig["data"][0]["y"][0].startswith("★")


def test_cost_vs_speed_marks_the_recommended_candidate() -> None:
    fig = charts.cost_speed_figure(_training())
    star = next(t for t in fig["data"] if t["name"] == "Recommended")
    assert star["marker"]["symbol"] == "star"
    assert star["x"] == [4.12]
    plotted = sum(len(t["x"]) for t in fig["data"])
    assert plotted == len(training_result()["options"])


def test_scaling_curve_has_one_line_per_fabric_and_marks_the_job() -> None:
    fig = charts.scaling_figure(_training())
    names = [t["name"] for t in fig["data"]]
    assert names == ["Ethernet (TCP)", "RoCE v2 (recommended)", "InfiniBand"]
    assert fig["data"][1]["y"][-1] == pytest.approx(90.0)
    assert fig["layout"]["shapes"][0]["x0"] == 64


def test_topology_draws_servers_leaves_spines_and_rails() -> None:
    topo = charts.topology_layout(_training())
    kinds = [n.kind for n in topo.nodes]
    assert kinds.count("server") == 6  # a sample of the 64
    assert kinds.count("leaf") == 8  # one leaf per rail drawn
    assert kinds.count("spine") == 4
    assert topo.rails == 8
    rails = {link.rail for link in topo.links if link.rail is not None}
    assert rails == set(range(8))
    labels = " ".join(text for _, text in topo.layer_labels)
    assert "64 servers" in labels and "8 leaf switches" in labels and "4 spine" in labels
    fig = charts.topology_figure(_training())
    assert any(t["name"] == "rail 1" for t in fig["data"])


def test_one_server_is_drawn_without_a_compute_fabric() -> None:
    topo = charts.topology_layout(EngineResult.from_dict(single_server_result()))
    assert "No GPU compute fabric" in topo.title
    assert [n.kind for n in topo.nodes] == ["server", "switch"]


@pytest.mark.parametrize(
    "scenario",
    [
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 1024},
        {"workload": "training", "model": "deepseek-v3", "gpu": "h800-sxm", "gpus": 2048},
        {"workload": "fine_tuning", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8},
        {
            "workload": "inference",
            "model": "llama3.1-405b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "inference": {"independent_replicas": False},
        },
        {"workload": "inference", "model": "llama3-8b", "gpu": "l40s", "gpus": 32},
    ],
)
def test_real_engine_results_make_finite_json_figures(scenario: dict[str, Any]) -> None:
    result = evaluate_typed(scenario)
    figures = charts.all_figures(result)
    expected = {"breakdown", "cost", "scaling", "topology"}
    if scenario["workload"] == "inference":
        expected.add("serving")  # latency vs load per candidate network
    assert set(figures) == expected
    for name, fig in figures.items():
        json.dumps(fig, allow_nan=False)
        assert _finite(fig), name
        if name != "scaling" or result.workload.spans_servers:
            assert fig["data"], name
    assert sum(len(t["x"]) for t in figures["cost"]["data"]) >= 1
    assert sum(len(t["x"]) for t in figures["breakdown"]["data"]) >= 1
