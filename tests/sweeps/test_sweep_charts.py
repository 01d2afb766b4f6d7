"""Sweep charts: each line is the best design per x; the focus is the scenario's own size."""

from __future__ import annotations

from advisor.engine.result.records import Metrics
from advisor.engine.tools.sweep import SweepPoint
from frontend.sweeps.charts import MS_PER_TOKEN, STEP_TIME, metric_of, sweep_charts


def row(i: int, servers: int, fabric: str, gbps: float, step_s: float | None) -> SweepPoint:
    return SweepPoint(
        i=i,
        servers=servers,
        gpus=8 * servers,
        fabric=fabric,
        nic_gbps=gbps,
        nics_per_node=8,
        oversubscription=1.0,
        reason=None if step_s is not None else "does not fit",
        inference=False,
        metrics=Metrics(step_time_s=step_s, scaling_efficiency=0.9 if step_s else None),
    )


ROWS = [
    row(0, 2, "roce", 100, 4.0),
    row(1, 2, "roce", 400, 3.0),
    row(2, 4, "roce", 100, 2.5),
    row(3, 4, "roce", 400, 1.5),
    row(4, 2, "infiniband", 400, 2.8),
    row(5, 4, "infiniband", 400, None),
]


def test_each_line_holds_the_best_feasible_design_per_server_count() -> None:
    charts = sweep_charts(ROWS, scenario_servers=2)

    lines = {t["name"]: t for t in charts["figures"]["by_servers"]["data"]}
    assert lines["RoCE v2"]["x"] == [2, 4]
    assert lines["RoCE v2"]["y"] == [3.0, 1.5]
    assert lines["InfiniBand"]["x"] == [2]  # its 4-server point was infeasible
    assert charts["servers"] == 2
    assert [r.i for r in charts["top"]] == [4, 1, 0]


def test_the_focus_falls_back_to_the_largest_size_swept() -> None:
    assert sweep_charts(ROWS, scenario_servers=64)["servers"] == 4


def test_inference_sweeps_chart_milliseconds_per_token() -> None:
    assert (
        metric_of(
            [SweepPoint.from_dict({**row(0, 2, "roce", 100, None).to_dict(), "ms_per_token": 12.0})]
        )
        == MS_PER_TOKEN
    )
    assert metric_of(ROWS) == STEP_TIME


def test_a_sweep_with_no_feasible_point_has_no_charts() -> None:
    charts = sweep_charts([row(0, 2, "roce", 100, None)], scenario_servers=2)

    assert charts["figures"] == {}
    assert charts["top"] == []
