"""Sweep results -> Plotly figures (figure JSON, drawn in the browser by frontend/app.js).

Every chart shows the best design per point of its x axis ("best" = the lowest step time or
milliseconds per token among the feasible points that share that x), so a 10,000-point grid
reads as a handful of lines: how the answer moves with servers, with bandwidth per server,
with oversubscription.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from advisor.engine.facts.formatting import significant
from advisor.engine.facts.vocabulary import fabric_label
from advisor.engine.tools.sweep import SweepPoint
from advisor.reports.charts import FONT, fabric_color

Row = SweepPoint


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str


STEP_TIME = Metric("step_time_s", "Step time", "s")
MS_PER_TOKEN = Metric("ms_per_token", "Time per output token", "ms")


def metric_of(rows: list[Row]) -> Metric:
    """The sweep's headline metric: step time for training, ms per token for inference."""
    return MS_PER_TOKEN if any(row.inference for row in rows) else STEP_TIME


def _speed(row: Row) -> float:
    """The headline metric of a feasible row (`feasible` keeps only rows that have one)."""
    return row.speed or 0.0


def feasible(rows: Iterable[Row]) -> list[Row]:
    return [r for r in rows if r.feasible and r.speed is not None]


def best_by(rows: Iterable[Row], key: Callable[[Row], Hashable]) -> dict[Any, Row]:
    """For each key, the row with the lowest metric (ties: the first in point order)."""
    best: dict[Any, Row] = {}
    for row in rows:
        k = key(row)
        if k not in best or _speed(row) < _speed(best[k]):
            best[k] = row
    return best


def focus_servers(rows: list[Row], scenario_servers: int) -> int:
    """The server count the per-server charts show: the scenario's own, else the largest."""
    counts = {r.servers for r in rows}
    return scenario_servers if scenario_servers in counts else max(counts, default=0)


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    return {
        "title": {"text": title, "font": {**FONT, "size": 14}},
        "font": FONT,
        "margin": {"l": 64, "r": 20, "t": 44, "b": 52},
        "height": 360,
        "xaxis": {"title": {"text": x_title}, "gridcolor": "#eef1f6"},
        "yaxis": {"title": {"text": y_title}, "gridcolor": "#eef1f6", "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": -0.22},
        "plot_bgcolor": "#fff",
        "paper_bgcolor": "#fff",
        **extra,
    }


def _figure(fig: go.Figure) -> dict[str, Any]:
    return dict(json.loads(fig.to_json()))


def _hover(row: Row, metric: Metric) -> str:
    return (
        f"{fabric_label(row.fabric)} {row.nics_per_node}×{row.nic_gbps:g}G, "
        f"{row.oversubscription:g}:1 · {row.servers} servers<br>"
        f"{metric.label}: {significant(_speed(row), 4)} {metric.unit}"
    )


def _best_lines(rows: list[Row], x_of: Callable[[Row], Hashable], metric: Metric) -> go.Figure:
    """A figure with one line per fabric: the best metric at each x."""
    fig = go.Figure()
    for fabric in sorted({row.fabric for row in rows}):
        best = best_by((row for row in rows if row.fabric == fabric), x_of)
        xs = sorted(best)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[_speed(best[x]) for x in xs],
                mode="lines+markers",
                name=fabric_label(fabric),
                line={"color": fabric_color(fabric)},
                hovertext=[_hover(best[x], metric) for x in xs],
                hoverinfo="text",
            )
        )
    return fig


def by_servers_figure(rows: list[Row], metric: Metric) -> dict[str, Any]:
    """Best metric vs number of servers, one line per fabric."""
    fig = _best_lines(rows, lambda row: row.servers, metric)
    fig.update_layout(
        _layout(
            f"Best {metric.label.lower()} by number of servers",
            "Servers",
            f"{metric.label} ({metric.unit})",
        )
    )
    return _figure(fig)


def efficiency_figure(rows: list[Row]) -> dict[str, Any] | None:
    """Training only: the best scaling efficiency vs servers, one line per fabric."""
    with_eff = [(r, r.metrics.scaling_efficiency) for r in rows]
    if not any(efficiency is not None for _, efficiency in with_eff):
        return None
    fig = go.Figure()
    for fabric in sorted({r.fabric for r, efficiency in with_eff if efficiency is not None}):
        best: dict[int, float] = {}
        for r, efficiency in with_eff:
            if r.fabric == fabric and efficiency is not None:
                best[r.servers] = max(best.get(r.servers, 0.0), efficiency)
        xs = sorted(best)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=[100 * best[x] for x in xs],
                mode="lines+markers",
                name=fabric_label(fabric),
                line={"color": fabric_color(fabric)},
            )
        )
    fig.update_layout(
        _layout("Best scaling efficiency by number of servers", "Servers", "Scaling efficiency (%)")
    )
    return _figure(fig)


def bandwidth_figure(rows: list[Row], metric: Metric, servers: int) -> dict[str, Any]:
    """At one server count: best metric vs network bandwidth per server, one line per fabric."""
    at = [r for r in rows if r.servers == servers]
    ticks = sorted({r.bandwidth_gbps for r in at})
    if len(ticks) > 12:
        ticks = ticks[:: len(ticks) // 12 + 1]
    fig = _best_lines(at, lambda row: row.bandwidth_gbps, metric)
    fig.update_layout(
        _layout(
            f"Best {metric.label.lower()} by bandwidth per server ({servers} servers)",
            "Compute-network bandwidth per server (Gb/s)",
            f"{metric.label} ({metric.unit})",
            xaxis={
                "title": {"text": "Compute-network bandwidth per server (Gb/s)"},
                "type": "log",
                "tickvals": ticks,
                "ticktext": [f"{t:g}" for t in ticks],
            },
        )
    )
    return _figure(fig)


def oversubscription_figure(rows: list[Row], metric: Metric, servers: int) -> dict[str, Any]:
    """At one server count: a heatmap of the best metric by NIC speed and oversubscription."""
    at = [r for r in rows if r.servers == servers]
    best = best_by(at, lambda r: (r.nic_gbps, r.oversubscription))
    speeds = sorted({k[0] for k in best})
    ratios = sorted({k[1] for k in best})
    z = [
        [_speed(best[(speed, ratio)]) if (speed, ratio) in best else None for speed in speeds]
        for ratio in ratios
    ]
    fig = go.Figure(
        go.Heatmap(
            x=[f"{speed:g}G" for speed in speeds],
            y=[f"{o:g}:1" for o in ratios],
            z=z,
            colorscale="Blues",
            reversescale=True,
            colorbar={"title": {"text": metric.unit}},
            hovertemplate="%{x} NICs, %{y}: %{z:,.4~r} " + metric.unit + "<extra></extra>",
        )
    )
    fig.update_layout(
        _layout(
            f"Best {metric.label.lower()} by NIC speed and oversubscription ({servers} servers)",
            "NIC speed",
            "Leaf oversubscription",
            yaxis={"title": {"text": "Leaf oversubscription"}, "type": "category"},
            xaxis={"title": {"text": "NIC speed"}, "type": "category"},
        )
    )
    return _figure(fig)


def top_designs(rows: list[Row], limit: int = 15) -> list[Row]:
    return sorted(rows, key=lambda r: (_speed(r), r.i))[:limit]


def sweep_charts(rows: list[Row], *, scenario_servers: int) -> dict[str, Any]:
    """Everything the sweep page draws: figures keyed by name, the focus, the best designs."""
    metric = metric_of(rows)
    good = feasible(rows)
    if not good:
        return {"metric": metric, "figures": {}, "top": [], "servers": None}
    servers = focus_servers(good, scenario_servers)
    figures: dict[str, Any] = {"by_servers": by_servers_figure(good, metric)}
    efficiency = efficiency_figure(good)
    if efficiency is not None:
        figures["efficiency"] = efficiency
    figures["bandwidth"] = bandwidth_figure(good, metric, servers)
    figures["oversubscription"] = oversubscription_figure(good, metric, servers)
    return {
        "metric": metric,
        "figures": figures,
        "top": top_designs([r for r in good if r.servers == servers]),
        "servers": servers,
    }
