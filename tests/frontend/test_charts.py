"""Engine result -> Plotly figures (and the shared series the PDF draws)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.result.records import EngineResult
from advisor.reports import charts
from advisor.reports.presenters import option_label, part_description
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
    assert len(s.labels) > 1  # bars that differ are each drawn
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


def test_scaling_lines_every_network_draws_alike_are_one_line() -> None:
    """Llama 3.1 405B on two GB300 NVL72 racks needs no compute fabric at any size: the three
    fabrics' lines lay one over another under a legend of three; one line is drawn, named for
    the others. Lines that differ (the training sample) are all kept."""
    result = evaluate_typed(
        {"workload": "inference", "model": "llama3.1-405b", "gpu": "gb300-nvl72", "gpus": 144}
    )
    assert len(charts.scaling_series(result)) == 3
    fig = charts.scaling_figure(result)
    assert [t["name"] for t in fig["data"]] == [
        "Ethernet (TCP) (recommended) and 2 other networks alike"
    ]
    assert len(charts.scaling_figure(_training())["data"]) == 3
    # the hover names the chart's own figure: a serving line is not "% efficient"
    (line,) = fig["data"]
    assert "% computing share of a token's time" in line["hovertemplate"]
    training = charts.scaling_figure(_training())["data"][0]["hovertemplate"]
    assert "% scaling efficiency" in training


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
            "precision": "bf16",  # split over both servers (FP8 fits one)
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


OVERLOADED_SERVING = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 64,
    "inference": {"requests_per_s": 200},
}
"""Llama 3 70B on 8 H100 servers at 200 requests/s: an InfiniBand answer with RoCE ties that
differ only by NIC, and a TCP design ruled out (its KV transfer caps what it serves)."""


def test_pictures_name_parts_as_customers_read_them_and_mark_ruled_out_designs() -> None:
    result = evaluate_typed(OVERLOADED_SERVING)
    rec = result.recommendation
    # the topology names the switch by its display name, never its catalog id
    labels = " ".join(text for _, text in charts.topology_layout(result).layer_labels)
    switch = part_description(rec.topology.switch_model)
    assert rec.topology.switch_model and rec.topology.switch_model not in labels
    assert switch in labels
    # one bar per network shape: the RoCE designs that differ only by switch and NIC model
    # spend a token's time alike (eight equal bars, labelled by part names, said nothing)
    shown = [option_label(o) for o in charts.distinct_shapes(result)]
    shapes = {option_label(o) for o in result.options}
    assert len(set(shown)) == len(shown) == min(len(shapes), charts.MAX_OPTIONS_SHOWN)
    assert "RoCE v2 1×400G" in shown and "InfiniBand 1×400G" in shown
    # and the shapes decode a token alike (the network carries only KV caches): one bar
    bars = charts.breakdown_series(result)
    assert bars.labels == [f"{shown[0]} and {len(shown) - 1} other networks alike"]
    assert bars.recommended == [True]
    # the cost chart's hover names each design: shapes told apart by switch, then NIC, not "#2"
    labels = [p.label for p in charts.cost_speed_points(result)[0]]
    assert len(set(labels)) == len(labels) and not [label for label in labels if "#" in label]
    assert any("Tomahawk-5" in label and "BlueField-3" in label for label in labels)
    # a ruled-out design is drawn hollow, apart from the designs that stand
    ruled_out = [o for o in result.options if not o.feasible]
    assert ruled_out, "the scenario's TCP design is ruled out"
    fig = charts.cost_speed_figure(result)
    hollow = [t for t in fig["data"] if t["marker"].get("symbol") == "circle-open"]
    assert sum(len(t["x"]) for t in hollow) == len(ruled_out)
    assert all(t["name"].endswith("(ruled out)") for t in hollow)


def test_a_comparison_of_training_and_serving_puts_no_step_and_token_on_one_axis() -> None:
    """The comparison drew a 1.9 s training step beside a 39 ms served token on one axis
    labelled "time": each bar is now shares of its own time, each candidate's time relative to
    its scenario's recommendation."""
    training = _training()
    serving = evaluate_typed(OVERLOADED_SERVING)
    columns = [("train", training), ("serve", serving)]
    assert not charts.on_one_time_scale(columns)
    figures = charts.compare_figures(columns)
    bars = figures["breakdown"]["data"]
    for row in range(2):
        assert sum(t["x"][row] for t in bars) == pytest.approx(100.0)
    assert (
        "share of the scenario's own time"
        in figures["breakdown"]["layout"]["xaxis"]["title"]["text"]
    )
    stars = [t for t in figures["cost"]["data"] if t["name"].endswith(": recommended")]
    assert [t["x"] for t in stars] == [[1.0], [1.0]]
    # the hover keeps each time in its own unit
    assert "ms per token" in figures["cost"]["data"][-2]["hovertemplate"]
    # scenarios of one kind keep the common axis
    same = charts.compare_figures([("a", training), ("b", training)])
    assert same["breakdown"]["layout"]["xaxis"]["title"]["text"] == "seconds per step"
