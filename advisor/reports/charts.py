"""Engine result -> charts.

Each chart has two halves: a *series* function that pulls the numbers out of the engine's
result (pure data, shared with the PDF's matplotlib images) and a *figure* function that
turns them into Plotly figure JSON, drawn in the browser by Plotly.newPlot.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import plotly.graph_objects as go

from advisor.engine.facts.constants import over_capacity_ms
from advisor.engine.facts.formatting import milliseconds, percent, significant
from advisor.engine.facts.numbers import finite
from advisor.engine.facts.vocabulary import FABRIC_IDS, fabric_label, topology_label
from advisor.engine.model.performance import MOE_SERVING_KIND
from advisor.engine.result.records import EngineResult, Metrics, Option
from advisor.engine.result.validation_report import ValidationReport
from advisor.reports.presenters import (
    asked_rate,
    decision_cost,
    is_inference,
    option_label,
    part_description,
    pool_label,
    scale_up_words,
)

FABRIC_COLORS = {"ethernet": "#8a94a6", "roce": "#13a37f", "infiniband": "#1f5eff"}
OTHER_COLOR = "#5c6b80"
"""The colour of a series no fabric class names."""


def fabric_color(fabric: str) -> str:
    """The chart colour of a fabric class (every chart, page and PDF alike)."""
    return FABRIC_COLORS.get(fabric, OTHER_COLOR)


RAIL_COLORS = (
    "#1f5eff",
    "#13a37f",
    "#e8833a",
    "#9b51e0",
    "#d6336c",
    "#0ea5c6",
    "#b58900",
    "#5c6b80",
)
PART_COLORS = {"compute": "#1f5eff", "comm": "#e8833a", "idle": "#c9cfdb"}
FONT = {"family": "system-ui, -apple-system, Segoe UI, Roboto, Arial, sans-serif", "size": 12}
MAX_OPTIONS_SHOWN = 8


_num = finite


def _unique_labels(options: list[Option]) -> list[str]:
    """Each option's label, told apart from the others by its switch, then its NIC, where the
    short label alone repeats ("#2" only for options those do not tell apart)."""
    labels = [option_label(o) for o in options]
    for part in ("switch_model", "nic_sku"):
        labels = [
            f"{label} · {part_description(getattr(option, part))}"
            if labels.count(label) > 1 and getattr(option, part)
            else label
            for option, label in zip(options, labels, strict=True)
        ]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def shown_options(result: EngineResult, limit: int = MAX_OPTIONS_SHOWN) -> list[Option]:
    """The recommended option first, then the best-ranked others."""
    options = list(result.options)
    options.sort(key=lambda o: (not o.recommended, _num(o.rank, 1e9)))
    return options[:limit]


def distinct_shapes(result: EngineResult, limit: int = MAX_OPTIONS_SHOWN) -> list[Option]:
    """:func:`shown_options`, one per network shape (fabric, NICs and speed, oversubscription:
    :func:`option_label`): designs that differ only by switch or NIC model spend a token's or a
    step's time alike, and eight equal bars told apart by part names said nothing."""
    seen: set[str] = set()
    out: list[Option] = []
    for option in shown_options(result, limit=len(result.options)):
        label = option_label(option)
        if label not in seen:
            seen.add(label)
            out.append(option)
    return out[:limit]


# ---------------------------------------------------------------------------------------------
# 1. Time breakdown per candidate


@dataclass
class Breakdown:
    labels: list[str]
    compute: list[float]
    comm: list[float]
    idle: list[float]
    recommended: list[bool]
    unit: str
    title: str
    other: str
    """What the rest of the time is (:data:`TRAINING_OTHER`, :data:`SERVING_OTHER`)."""


TRAINING_OTHER = "Other idle (pipeline bubble, stragglers)"
SERVING_OTHER = "Other (prompts in the same steps, load, p95 spread)"
"""A served token's time beyond its decode compute and communication: prompts batched into the
same steps, the wait at the load asked, the 95th percentile's spread."""


def breakdown_series(result: EngineResult) -> Breakdown:
    inference = is_inference(result)
    options = distinct_shapes(result)
    if not options and result.metrics != Metrics():
        rec = result.recommendation
        options = [
            Option(
                fabric=rec.fabric,
                nic_gbps=rec.nic_gbps,
                nics_per_node=rec.nics_per_node,
                metrics=result.metrics,
                recommended=True,
            )
        ]
    labels = _unique_labels(options)
    compute, comm, idle = [], [], []
    for option in options:
        m = option.metrics
        if inference:
            total = _num(m.ms_per_token)
            c = _num(m.compute_ms_per_token)
            x = _num(m.comm_ms_per_token)
        else:
            total = _num(m.step_time_s)
            c = _num(m.compute_s)
            x = _num(m.exposed_comm_s)
        compute.append(c)
        comm.append(x)
        idle.append(max(0.0, total - c - x))
    unit = "ms per token" if inference else "seconds per step"
    title = "Time per generated token" if inference else "Time per training step"
    return _alike_bars_merged(
        Breakdown(
            labels=labels,
            compute=compute,
            comm=comm,
            idle=idle,
            recommended=[o.recommended for o in options],
            unit=unit,
            title=title,
            other=SERVING_OTHER if inference else TRAINING_OTHER,
        )
    )


ALIKE_FRACTION = 0.005
"""Bars whose every part is within this share of the longest bar are alike."""


def _alike_bars_merged(bars: Breakdown) -> Breakdown:
    """One bar when every network spends the time alike, labelled by the first ("InfiniBand
    1×400G and 7 other networks alike"): a serving answer whose network carries only KV caches
    decodes at the same time on every network, and eight equal bars said nothing. Bars that
    differ are all kept."""
    n = len(bars.labels)
    if n < 2:
        return bars
    scale = max(c + x + i for c, x, i in zip(bars.compute, bars.comm, bars.idle, strict=True))
    for series in (bars.compute, bars.comm, bars.idle):
        if max(series) - min(series) > ALIKE_FRACTION * max(scale, 1e-12):
            return bars
    return dataclasses.replace(
        bars,
        labels=[f"{bars.labels[0]} and {n - 1} other network{'s' if n > 2 else ''} alike"],
        compute=bars.compute[:1],
        comm=bars.comm[:1],
        idle=bars.idle[:1],
        recommended=[any(bars.recommended)],
    )


def _layout(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "font": FONT,
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        # Legends above the plot: below it they collide with the x-axis title.
        "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
        "hoverlabel": {"font": FONT},
    }
    base.update(extra)
    return base


GRID_COLOR = "#eef1f6"


def _value_axis(title: str, **extra: Any) -> dict[str, Any]:
    """An axis of amounts from zero (time, cost): titled, light grid, room for its labels."""
    return {
        "title": {"text": title},
        "gridcolor": GRID_COLOR,
        "rangemode": "tozero",
        "automargin": True,
        **extra,
    }


TICK_SPACING = 1.3
"""The least ratio between two labelled server counts on a log axis: 16 and 18 servers drew
their labels over each other."""


def server_ticks(counts: set[float], limit: int = 10) -> list[float]:
    """The server counts a scaling axis labels: at most ``limit``, none within
    :data:`TICK_SPACING` of a larger one kept (the largest, the job's size, always kept)."""
    ticks = sorted(counts)
    if len(ticks) > limit:
        ticks = ticks[:: math.ceil(len(ticks) / limit)] + ticks[-1:]
    kept: list[float] = []
    for tick in reversed(sorted(set(ticks))):
        if not kept or kept[-1] >= tick * TICK_SPACING:
            kept.append(tick)
    return kept[::-1]


def _servers_axis(ticks: list[float]) -> dict[str, Any]:
    """Servers on a log axis, labelled with the plain counts (never 4x10^0)."""
    return {
        "title": {"text": "servers"},
        "type": "log",
        "gridcolor": GRID_COLOR,
        "tickvals": ticks,
        "ticktext": [f"{t:g}" for t in ticks],
        "automargin": True,
    }


EFFICIENCY_AXIS: dict[str, Any] = {
    "title": {"text": "scaling efficiency (%)"},
    "range": [0, 105],
    "gridcolor": GRID_COLOR,
    "automargin": True,
}


def _to_json(fig: go.Figure) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(fig.to_json())
    return out


def breakdown_figure(result: EngineResult) -> dict[str, Any]:
    s = breakdown_series(result)
    labels = [f"★ {lab}" if rec else lab for lab, rec in zip(s.labels, s.recommended, strict=True)]
    fig = go.Figure()
    parts = (
        ("Compute", s.compute, PART_COLORS["compute"]),
        ("Communication not hidden by compute", s.comm, PART_COLORS["comm"]),
        (s.other, s.idle, PART_COLORS["idle"]),
    )
    for name, values, color in parts:
        fig.add_trace(
            go.Bar(
                y=labels,
                x=values,
                name=name,
                orientation="h",
                marker={"color": color},
                hovertemplate="%{y}<br>" + name + ": %{x:,.3~r} " + s.unit + "<extra></extra>",
            )
        )
    fig.update_layout(
        _layout(
            barmode="stack",
            xaxis=_value_axis(s.unit, zeroline=False),
            yaxis={"autorange": "reversed", "automargin": True},
            margin={"l": 10, "r": 10, "t": 10, "b": 40},
        )
    )
    return _to_json(fig)


# ---------------------------------------------------------------------------------------------
# 2. Cost vs speed


@dataclass
class CostPoint:
    label: str
    fabric: str
    speed: float
    total_cost_usd: float
    network_capex_usd: float
    recommended: bool
    why_not: str
    ruled_out: bool = False
    """The engine ruled the design out (``Option.feasible`` false): drawn hollow, its reason in
    the hover (a TCP design capped by its KV transfer reads fast per token at the little it
    serves)."""
    shape: str = ""
    """The design's network shape alone (:func:`option_label`, "RoCE v2 2×400G"): what a label
    beside its point says; ``label`` adds the switch and NIC that tell shapes apart."""


def cost_speed_points(result: EngineResult) -> tuple[list[CostPoint], str]:
    """Each candidate's speed and the cost charged to this job (presenters.job_cost)."""

    inference = is_inference(result)
    options = list(result.options)
    labels = _unique_labels(options)
    points = []
    for option, label in zip(options, labels, strict=True):
        c = option.cost
        speed = option.metrics.speed(inference)
        points.append(
            CostPoint(
                label=label,
                fabric=option.fabric,
                speed=speed,
                total_cost_usd=decision_cost(c)[0],
                network_capex_usd=_num(c.network_capex_usd),
                recommended=option.recommended,
                why_not=option.why_not or "",
                ruled_out=not option.feasible and not option.recommended,
                shape=option_label(option),
            )
        )
    unit = "ms per token" if inference else "seconds per training step"
    return points, unit


def cost_axis_title(result: EngineResult) -> str:
    """What the cost axis shows: the cost the engine ranked by (presenters.decision_cost)."""

    return decision_cost(result.cost)[1].lower() + " (USD)"


def cost_speed_figure(result: EngineResult) -> dict[str, Any]:
    points, unit = cost_speed_points(result)
    fig = go.Figure()
    for fabric, ruled_out in itertools.product(FABRIC_IDS, (False, True)):
        group = [
            p
            for p in points
            if p.fabric == fabric and not p.recommended and p.ruled_out == ruled_out
        ]
        if not group:
            continue
        fig.add_trace(
            go.Scatter(
                x=[p.speed for p in group],
                y=[p.total_cost_usd for p in group],
                mode="markers",
                name=fabric_label(fabric) + (" (ruled out)" if ruled_out else ""),
                marker={
                    "size": 10,
                    "color": FABRIC_COLORS[fabric],
                    "opacity": 0.8,
                    "symbol": "circle-open" if ruled_out else "circle",
                },
                text=[p.label for p in group],
                customdata=[[p.network_capex_usd, p.why_not] for p in group],
                hovertemplate=(
                    "%{text}<br>%{x:,.3~r} "
                    + unit
                    + "<br>$%{y:,.0f}<br>network capex $%{customdata[0]:,.0f}"
                    "<br>%{customdata[1]}<extra></extra>"
                ),
            )
        )
    chosen = [p for p in points if p.recommended]
    if chosen:
        p = chosen[0]
        fig.add_annotation(
            x=p.speed,
            y=p.total_cost_usd,
            text=f"Recommended: {p.label}",
            showarrow=True,
            arrowhead=0,
            ax=60,
            ay=-40,
            bgcolor="rgba(255,255,255,0.85)",
            font={"size": 11},
        )
        fig.add_trace(
            go.Scatter(
                x=[p.speed],
                y=[p.total_cost_usd],
                mode="markers",
                name="Recommended",
                marker={
                    "size": 20,
                    "symbol": "star",
                    "color": "#ffb020",
                    "line": {"color": "#17202e", "width": 1},
                },
                hovertemplate=(
                    "Recommended: "
                    + p.label
                    + "<br>%{x:,.3~r} "
                    + unit
                    + "<br>$%{y:,.0f}<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        _layout(
            xaxis=_value_axis(f"{unit} (lower is faster)"),
            yaxis=_value_axis(cost_axis_title(result), tickprefix="$", separatethousands=True),
            margin={"l": 10, "r": 10, "t": 30, "b": 40},
        )
    )
    return _to_json(fig)


# ---------------------------------------------------------------------------------------------
# 3. Scaling curve


@dataclass(frozen=True)
class ScalingWords:
    """What the scaling chart's figure is, in the page's, the PDF's and the axis' words."""

    title: str
    caption: str
    quantity: str

    @property
    def axis(self) -> str:
        return f"{self.quantity} (%)"


TRAINING_SCALING = ScalingWords(
    title="Scaling efficiency vs number of servers",
    caption="Share of ideal speed-up kept as servers are added, per fabric.",
    quantity="scaling efficiency",
)
SERVING_SCALING = ScalingWords(
    title="Share of a token's time spent computing vs number of servers",
    caption=(
        "Share of each generated token's time the GPUs spend computing, per fabric, for the"
        " deployment the engine picks at each size; the rest is communication they wait for"
        " and other idle time."
    ),
    quantity="computing share of a token's time",
)


def scaling_words(result: EngineResult) -> ScalingWords:
    """The scaling chart's words: training's scaling efficiency, or serving's compute share of a
    token's time (the figure :func:`advisor.engine.decision.scaling.efficiency` gives each)."""
    return SERVING_SCALING if is_inference(result) else TRAINING_SCALING


def _efficiency_axis(result: EngineResult) -> dict[str, Any]:
    return {**EFFICIENCY_AXIS, "title": {"text": scaling_words(result).axis}}


def scaling_series(result: EngineResult) -> dict[str, list[tuple[float, float]]]:
    """fabric -> [(servers, efficiency 0..1)] sorted by servers."""
    out: dict[str, list[tuple[float, float]]] = {}
    for row in result.scaling:
        nodes = _num(row.nodes)
        if nodes <= 0:
            continue
        out.setdefault(row.fabric, []).append((nodes, _num(row.scaling_efficiency)))
    for series in out.values():
        series.sort()
    return out


def _alike_lines_merged(
    series: dict[str, list[tuple[float, float]]], first: str
) -> dict[str, list[tuple[float, float]]]:
    """One line, ``first``'s, when every fabric's line is the same within
    :data:`ALIKE_FRACTION` (a job with no compute fabric at every size: three lines drawn one
    over another, a legend of three and one line seen); lines that differ are all kept."""
    lines = list(series.values())
    if len(lines) < 2 or first not in series:
        return series
    for line in lines[1:]:
        if [n for n, _ in line] != [n for n, _ in lines[0]]:
            return series
        if any(abs(a - b) > ALIKE_FRACTION for (_, a), (_, b) in zip(line, lines[0], strict=True)):
            return series
    return {first: series[first]}


class ScalingLine(NamedTuple):
    """One line of the scaling chart (the page's and the PDF's)."""

    fabric: str
    name: str
    points: list[tuple[float, float]]


def scaling_lines(result: EngineResult) -> list[ScalingLine]:
    """The scaling chart's lines, named for the legend: one per fabric, the recommended one
    said so, or one for all where every fabric draws alike (:func:`_alike_lines_merged`)."""
    drawn = scaling_series(result)
    rec_fabric = result.recommendation.fabric
    series = _alike_lines_merged(drawn, rec_fabric)
    alike = len(drawn) - len(series)
    lines: list[ScalingLine] = []
    for fabric, points in series.items():
        name = fabric_label(fabric) + (" (recommended)" if fabric == rec_fabric else "")
        if alike:
            name += f" and {alike} other network{'s' if alike > 1 else ''} alike"
        lines.append(ScalingLine(fabric, name, points))
    return lines


def scaling_figure(result: EngineResult) -> dict[str, Any]:
    rec_fabric = result.recommendation.fabric
    quantity = scaling_words(result).quantity
    lines = scaling_lines(result)
    series = {line.fabric: line.points for line in lines}
    fig = go.Figure()
    for fabric, name, points in lines:
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] * 100 for p in points],
                mode="lines+markers",
                name=name,
                line={
                    "color": fabric_color(fabric),
                    "width": 3 if fabric == rec_fabric else 2,
                },
                hovertemplate=fabric_label(fabric)
                + f"<br>%{{x}} servers: %{{y:.1f}} % {quantity}<extra></extra>",
            )
        )
    nodes = _num(result.workload.nodes)
    ticks = server_ticks({p[0] for points in series.values() for p in points})
    shapes = []
    if nodes > 0 and series:
        shapes.append(
            {
                "type": "line",
                "x0": nodes,
                "x1": nodes,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"dash": "dot", "color": "#17202e", "width": 1},
            }
        )
    fig.update_layout(
        _layout(
            xaxis=_servers_axis(ticks),
            yaxis=_efficiency_axis(result),
            shapes=shapes,
            annotations=(
                [
                    {
                        "x": math.log10(nodes),
                        "y": 0.02,
                        "yref": "paper",
                        "text": f"your job: {nodes:g} server{'s' if nodes != 1 else ''}",
                        "showarrow": False,
                        "yanchor": "bottom",
                        "xanchor": "right",
                        "xshift": -4,
                        "font": {"size": 11},
                    }
                ]
                if shapes
                else []
            ),
            margin={"l": 10, "r": 10, "t": 24, "b": 40},
        )
    )
    return _to_json(fig)


# ---------------------------------------------------------------------------------------------
# 4. Topology diagram


@dataclass
class TopoNode:
    x: float
    y: float
    kind: str  # server | leaf | spine | core | switch
    label: str
    rail: int | None = None


@dataclass
class TopoLink:
    a: int
    b: int
    rail: int | None = None  # None: an uplink between switches


@dataclass
class Topology:
    nodes: list[TopoNode] = field(default_factory=list)
    links: list[TopoLink] = field(default_factory=list)
    layer_labels: list[tuple[float, str]] = field(default_factory=list)
    rails: int = 0
    title: str = ""
    note: str = ""


SERVERS_DRAWN = 6
SWITCHES_DRAWN = 8


def _spread(count: int, width: float = 10.0) -> list[float]:
    if count <= 0:
        return []
    if count == 1:
        return [width / 2]
    return [width * (i + 0.5) / count for i in range(count)]


def topology_layout(result: EngineResult) -> Topology:
    """A representative drawing: a few servers, every switch layer, rails in colour.

    Real counts are in the layer labels; large fabrics are drawn with a sample of servers
    and switches so that the structure (who connects to whom) stays readable.
    """
    rec = result.recommendation
    topo = rec.topology
    servers = int(_num(result.workload.nodes, 1)) or 1
    nics = int(_num(rec.nics_per_node, 1)) or 1
    gbps = _num(rec.nic_gbps)
    leaves = int(_num(topo.leaf_switches))
    spines = int(_num(topo.spine_switches))
    cores = int(_num(topo.core_switches))
    rail_opt = topo.rail_optimized and nics > 1 and leaves >= nics
    switch = part_description(topo.switch_model)
    out = Topology()

    if not rec.needs_compute_fabric or leaves == 0:
        links, where = scale_up_words(result)
        out.title = f"No GPU compute fabric: the GPUs talk inside {where}"
        drawn = min(servers, SERVERS_DRAWN)
        xs = _spread(drawn)
        for i, x in enumerate(xs):
            out.nodes.append(TopoNode(x, 0, "server", f"server {i + 1}"))
        sw = len(out.nodes)
        out.nodes.append(TopoNode(5, 1, "switch", f"front-end Ethernet switch {switch}".strip()))
        out.links.extend(TopoLink(i, sw) for i in range(drawn))
        more = f" (showing {drawn})" if servers > drawn else ""
        out.layer_labels = [
            (0, f"{servers} server{'s' if servers != 1 else ''}{more}\nGPUs talk over {links}"),
            (1, "standard Ethernet\nusers, storage, management"),
        ]
        return out

    out.rails = nics if rail_opt else 0
    drawn_servers = min(servers, SERVERS_DRAWN)
    for i, x in enumerate(_spread(drawn_servers)):
        out.nodes.append(TopoNode(x, 0, "server", f"server {i + 1}"))

    if rail_opt:
        drawn_leaves = min(leaves, max(nics, 1), SWITCHES_DRAWN)
        leaf_labels = [f"rail {r + 1} leaf" for r in range(drawn_leaves)]
    else:
        drawn_leaves = min(leaves, SWITCHES_DRAWN)
        leaf_labels = [f"leaf {i + 1}" for i in range(drawn_leaves)]
    leaf0 = len(out.nodes)
    for i, x in enumerate(_spread(drawn_leaves)):
        out.nodes.append(TopoNode(x, 1, "leaf", leaf_labels[i], rail=i if rail_opt else None))
    servers_per_leaf = max(1, math.ceil(drawn_servers / drawn_leaves))
    for s in range(drawn_servers):
        if rail_opt:
            for r in range(min(nics, drawn_leaves)):
                out.links.append(TopoLink(s, leaf0 + r, rail=r))
        else:
            leaf = leaf0 + min(drawn_leaves - 1, s // servers_per_leaf)
            out.links.append(TopoLink(s, leaf, rail=None if nics == 1 else 0))

    spine0 = len(out.nodes)
    drawn_spines = min(spines, SWITCHES_DRAWN)
    for i, x in enumerate(_spread(drawn_spines)):
        out.nodes.append(TopoNode(x, 2, "spine", f"spine {i + 1}"))
    for leaf in range(drawn_leaves):
        for sp in range(drawn_spines):
            out.links.append(TopoLink(leaf0 + leaf, spine0 + sp))
    core0 = len(out.nodes)
    drawn_cores = min(cores, SWITCHES_DRAWN)
    for i, x in enumerate(_spread(drawn_cores)):
        out.nodes.append(TopoNode(x, 3, "core", f"core {i + 1}"))
    for sp in range(drawn_spines):
        for c in range(drawn_cores):
            out.links.append(TopoLink(spine0 + sp, core0 + c))

    def shown(real: int, drawn: int) -> str:
        return f"\n(showing {drawn})" if real > drawn else ""

    speed = f" × {gbps:g}G" if gbps else ""
    plural = "s" if servers != 1 else ""
    out.layer_labels.append(
        (
            0,
            f"{servers} server{plural}\n{nics} NIC{'s' if nics != 1 else ''}{speed} each"
            f"{shown(servers, drawn_servers)}",
        )
    )
    single = leaves == 1 and not spines
    leaf_text = ("1 switch" if single else f"{leaves} leaf switches") + (
        f"\n{switch}" if switch else ""
    )
    if rail_opt:
        leaf_text += f", {max(1, leaves // max(nics, 1))} per rail"
    out.layer_labels.append((1, leaf_text + shown(leaves, drawn_leaves)))
    if spines:
        out.layer_labels.append((2, f"{spines} spine\nswitches{shown(spines, drawn_spines)}"))
    if cores:
        out.layer_labels.append((3, f"{cores} core\nswitches{shown(cores, drawn_cores)}"))
    over = _num(topo.oversubscription, 1.0)
    out.title = (
        f"{fabric_label(rec.fabric)}, {topology_label(topo.to_dict())}"
        + (f", {over:g}:1" if not single else "")
        + (", rail-optimized" if rail_opt else "")
    )
    if rail_opt:
        out.note = "NIC i of every server goes to rail i's leaves: same-rail traffic is one hop."
    return out


def topology_figure(result: EngineResult) -> dict[str, Any]:
    topo = topology_layout(result)
    fig = go.Figure()
    # Links: uplinks in grey, server links coloured by rail.
    groups: dict[int | None, list[TopoLink]] = {}
    for link in topo.links:
        groups.setdefault(link.rail, []).append(link)
    for rail, links in sorted(groups.items(), key=lambda kv: (kv[0] is not None, kv[0] or 0)):
        xs: list[float | None] = []
        ys: list[float | None] = []
        for link in links:
            a, b = topo.nodes[link.a], topo.nodes[link.b]
            xs += [a.x, b.x, None]
            ys += [a.y, b.y, None]
        if rail is None:
            name, color, width = "switch-to-switch links", "#b7c0cf", 1
        elif topo.rails:
            name, color, width = f"rail {rail + 1}", RAIL_COLORS[rail % len(RAIL_COLORS)], 2
        else:
            name, color, width = "server links", "#5c6b80", 2
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name=name,
                line={"color": color, "width": width},
                hoverinfo="skip",
                showlegend=rail is not None and bool(topo.rails),
            )
        )
    styles = {
        "server": ("#17202e", "square", 22),
        "leaf": ("#1f5eff", "diamond", 18),
        "spine": ("#13a37f", "diamond", 18),
        "core": ("#9b51e0", "diamond", 18),
        "switch": ("#8a94a6", "diamond", 20),
    }
    for kind, (color, symbol, size) in styles.items():
        nodes = [n for n in topo.nodes if n.kind == kind]
        if not nodes:
            continue
        colors = [
            RAIL_COLORS[n.rail % len(RAIL_COLORS)] if n.rail is not None else color for n in nodes
        ]
        fig.add_trace(
            go.Scatter(
                x=[n.x for n in nodes],
                y=[n.y for n in nodes],
                mode="markers",
                name=kind,
                marker={
                    "symbol": symbol,
                    "size": size,
                    "color": colors,
                    "line": {"color": "#fff", "width": 1},
                },
                text=[n.label for n in nodes],
                hovertemplate="%{text}<extra></extra>",
                showlegend=False,
            )
        )
    annotations = [
        {
            "x": -6.4,
            "y": y,
            "xanchor": "left",
            "text": text.replace("\n", "<br>"),
            "showarrow": False,
            "font": {"size": 11, "color": "#465165"},
            "align": "left",
        }
        for y, text in topo.layer_labels
    ]
    top = max((n.y for n in topo.nodes), default=1)
    fig.update_layout(
        _layout(
            xaxis={"visible": False, "range": [-6.5, 10.3]},
            yaxis={"visible": False, "range": [-0.5, top + 0.5]},
            annotations=annotations,
            legend={"orientation": "h", "y": -0.05, "x": 0},
            margin={"l": 10, "r": 10, "t": 10, "b": 10},
        )
    )
    return _to_json(fig)


def all_figures(result: EngineResult) -> dict[str, dict[str, Any]]:
    figures = {
        "breakdown": breakdown_figure(result),
        "cost": cost_speed_figure(result),
        "scaling": scaling_figure(result),
        "topology": topology_figure(result),
    }
    serving = serving_figure(result)
    if serving is not None:
        figures["serving"] = serving
    return figures


# ---------------------------------------------------------------------------------------------
# Serving: latency vs load per candidate network (advisor.engine.model.serving.load)

MAX_SERVING_CURVES = 4


def serving_curves(result: EngineResult) -> list[dict[str, Any]]:
    """The engine's latency-vs-load curves for the shown candidates (recommended first)."""
    if not is_inference(result) or not result.options:
        return []
    from advisor.engine.errors import ScenarioError
    from advisor.engine.model.serving.results import load_curves_for_result

    shown = shown_options(result, limit=MAX_SERVING_CURVES * 2)
    try:
        curves = load_curves_for_result(result.scenario, shown)
    except (ScenarioError, ValueError, KeyError, TypeError):
        # a result from an older engine whose scenario no longer plans: no chart
        return []
    curves.sort(key=lambda c: not c["recommended"])
    return curves[:MAX_SERVING_CURVES]


@dataclass(frozen=True)
class ServingCurve:
    """One candidate network's latency against load, as the page and the PDF draw it: the
    points within capacity (a queue with no bound has no time to plot)."""

    name: str
    color: str
    requests_per_s: list[float]
    ttft_ms_p95: list[float]
    ms_per_token_p95: list[float]


def serving_series(result: EngineResult) -> list[ServingCurve]:
    """The latency chart's curves, recommended network first (:func:`serving_curves`)."""
    out = []
    for i, curve in enumerate(serving_curves(result)):
        star = "★ " if curve["recommended"] else ""
        name = f"{star}{fabric_label(curve['fabric'])} {curve['label'].split(' ', 1)[-1]}"
        points = [p for p in curve["points"] if not over_capacity_ms(_num(p["ttft_ms_p95"]))]
        out.append(
            ServingCurve(
                name=name + _kv_transfer_words(curve),
                color=RAIL_COLORS[i % len(RAIL_COLORS)],
                requests_per_s=[_num(p["requests_per_s"]) for p in points],
                ttft_ms_p95=[_num(p["ttft_ms_p95"]) for p in points],
                ms_per_token_p95=[_num(p["ms_per_token_p95"]) for p in points],
            )
        )
    return out


def serving_targets(result: EngineResult) -> tuple[float, float]:
    """The scenario's p95 targets in ms: (time to first token, time per token); 0 for none."""
    inference = result.scenario.inference
    if inference is None:
        return 0.0, 0.0
    return _num(inference.target_ttft_ms), _num(inference.target_ms_per_token)


def serving_asked_rate(result: EngineResult) -> float:
    """The asked arrival rate to mark (:func:`presenters.asked_rate`); 0 for a closed loop."""
    return _num(asked_rate(result))


def asked_rate_words(rate: float) -> str:
    """The asked-load line's label on the page and in the PDF: "asked 10 requests/s"."""
    return f"asked {significant(rate)} requests/s"


LOG_HEADROOM = 1.8
"""A serving chart's log axis reaches this factor above its highest curve or target."""
LINEAR_HEADROOM = 1.15
"""A serving chart's linear axis (time per token) reaches this factor above its highest."""


def serving_axis_tops(
    curves: list[ServingCurve], ttft_target: float, token_target: float
) -> tuple[float, float]:
    """The tops of the serving chart's two axes, page and PDF alike: headroom over the highest
    curve or target, so a target at the top is a labelled line inside the plot, not its frame,
    and no curve is clipped under it; 0 for an axis with nothing to show."""
    ttft = max([ttft_target, *(ms for c in curves for ms in c.ttft_ms_p95)], default=0.0)
    token = max([token_target, *(ms for c in curves for ms in c.ms_per_token_p95)], default=0.0)
    return ttft * LOG_HEADROOM, token * LINEAR_HEADROOM


def serving_figure(result: EngineResult) -> dict[str, Any] | None:
    """p95 time to first token (solid) and p95 time per token (dotted) vs arrival rate.

    One colour per candidate network; the legend gives each one's KV transfer
    (:func:`_kv_transfer_words`). Grey lines mark the two targets, each on its own axis, and
    the load asked (:func:`serving_asked_rate`): where the curves stop short of it, the fleet
    cannot carry it."""
    curves = serving_series(result)
    if not curves:
        return None
    fig = go.Figure()
    for i, curve in enumerate(curves):
        fig.add_trace(
            go.Scatter(
                x=curve.requests_per_s,
                y=curve.ttft_ms_p95,
                name=curve.name,
                legendgroup=str(i),
                mode="lines+markers",
                line={"color": curve.color},
                hovertemplate="%{x:,.3~r} req/s: TTFT p95 %{y:,.0f} ms<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=curve.requests_per_s,
                y=curve.ms_per_token_p95,
                name=f"{curve.name}: ms per token",
                legendgroup=str(i),
                showlegend=False,
                mode="lines",
                line={"color": curve.color, "dash": "dot"},
                yaxis="y2",
                hovertemplate="%{x:,.3~r} req/s: %{y:.1f} ms per token p95<extra></extra>",
            )
        )
    ttft_target, token_target = serving_targets(result)
    targets = (("y", ttft_target, "first token"), ("y2", token_target, "per token"))
    ttft_values = [ms for c in curves for ms in c.ttft_ms_p95 if ms > 0]
    ttft_values += [ttft_target] if ttft_target > 0 else []
    ticks = log_tick_values(min(ttft_values), max(ttft_values)) if ttft_values else []
    ttft_top, token_top = serving_axis_tops(curves, ttft_target, token_target)
    # a log axis' range is in log10 units (plotly.js); a little room under the lowest point
    ttft_range = [math.log10(min(ttft_values) / 1.3), math.log10(ttft_top)] if ttft_values else None
    fig.update_layout(
        _layout(
            xaxis={"title": "requests per second", "rangemode": "tozero"},
            # log scale: TTFT grows by orders of magnitude near capacity
            yaxis={
                "title": "time to first token, p95 (ms, log)",
                "type": "log",
                "range": ttft_range,
                "tickvals": ticks,
                "ticktext": [log_tick_text(v) for v in ticks],
            },
            yaxis2={
                "title": "ms per token, p95 (dotted)",
                "overlaying": "y",
                "side": "right",
                "range": [0, token_top] if token_top > 0 else None,
                "rangemode": "tozero",
                # its own round ticks: plotly's default for an overlaying axis ("sync") puts a
                # label at each of the log axis' minor gridlines (27, 56, 80, 101, ... ms)
                "tickmode": "auto",
                "showgrid": False,
            },
            shapes=[_target_line(axis, ms, what) for axis, ms, what in targets if ms > 0]
            + _asked_line(serving_asked_rate(result)),
            margin={"l": 10, "r": 10, "t": 10, "b": 10},
        )
    )
    return _to_json(fig)


def _kv_transfer_words(curve: dict[str, Any]) -> str:
    """A curve's KV transfer in its legend: the transfer and its share of the time to first
    token at the asked load ("1.1 ms, 0.4 %": a whole-percent share read "0 %" for a cache moved
    over NVLink), the transfer alone where that load is over capacity or its first token at the
    load model's over-capacity stand-in (a share of a time with no bound, or of the stand-in,
    read "0 %"); nothing where no cache moves (colocated replicas)."""
    kv_ms = _num(curve.get("kv_transfer_ms"))
    if kv_ms <= 0:
        return ""
    if curve.get("load_saturated") or over_capacity_ms(_num(curve.get("ttft_ms_p95"))):
        return f" (KV transfer {milliseconds(kv_ms)})"
    share = percent(curve["kv_transfer_share_of_ttft"])
    return f" (KV transfer {milliseconds(kv_ms)}, {share} of TTFT)"


def log_tick_text(value: float) -> str:
    """A log axis' tick label on the page and in the PDF: plain figures at 1, 2 and 5 of each
    decade ("2,000", never "2 x 10^3" or plotly's bare minor digits "2 3 4"); "" for the other
    gridlines."""
    if value <= 0:
        return ""
    lead = value / 10 ** math.floor(math.log10(value))
    if not any(abs(lead - k) < 1e-6 for k in (1, 2, 5)):
        return ""
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def log_tick_values(low: float, high: float) -> list[float]:
    """The labelled ticks (:func:`log_tick_text`) of a log axis spanning low..high (> 0), one
    either side so the ends are labelled too."""
    if low <= 0 or high < low:
        return []
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    values = [k * 10.0**d for d in range(first, last + 1) for k in (1, 2, 5)]
    below = [v for v in values if v <= low][-1:]
    above = [v for v in values if v >= high][:1]
    return sorted(set(below + [v for v in values if low < v < high] + above))


def target_words(what: str, ms: float) -> str:
    """A latency target's label on the page and in the PDF: "first token target 2,000 ms"."""
    return f"{what} target {milliseconds(ms)}"


def _target_line(axis: str, ms: float, what: str) -> dict[str, Any]:
    """A latency target across the serving chart, labelled, on its own axis.  Shapes take data
    values on a log axis too (plotly.js: only annotations and axis ranges take log10; plotly.js
    pull request #6194), so the value is the target itself."""
    return {
        "type": "line",
        "xref": "paper",
        "yref": axis,
        "x0": 0,
        "x1": 1,
        "y0": ms,
        "y1": ms,
        "line": {"color": "#8a94a6", "dash": "dash" if axis == "y" else "dot", "width": 1},
        "label": {
            "text": target_words(what, ms),
            "textposition": "end" if axis == "y" else "start",
            # below the line: a target at the top of the plot keeps its label inside it
            "yanchor": "top",
            "font": {"size": 10, "color": "#5b6578"},
        },
    }


def _asked_line(rate: float) -> list[dict[str, Any]]:
    """The asked arrival rate as an upright line across the serving chart, labelled at its
    top; none for a closed loop. A data-referenced shape widens the axis' autorange, so a fleet
    whose curves end at its capacity shows the gap to the ask."""
    if rate <= 0:
        return []
    return [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": rate,
            "x1": rate,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#d6336c", "dash": "dashdot", "width": 1},
            "label": {
                "text": asked_rate_words(rate),
                "textposition": "end",
                "textangle": 0,
                "xanchor": "right",
                "font": {"size": 10, "color": "#d6336c"},
            },
        }
    ]


# ---------------------------------------------------------------------------------------------
# 5. Accuracy: predicted vs measured


KIND_COLORS = {
    "collective": "#1f5eff",
    "all_to_all": "#e8833a",
    "training": "#13a37f",
    "topology": "#9b51e0",
    "serving": "#d6336c",
    MOE_SERVING_KIND: "#8c1d40",
}
"""A colour per family of predictions (a validation row's residual pool)."""


def validation_figure(report: ValidationReport) -> dict[str, Any]:
    """Each published measurement against our prediction, one colour per family of predictions
    (a row's residual pool: MoE serving apart from dense, as the accuracy table and the ranges
    keep them); on the diagonal is exact."""
    rows = [r for r in report.rows if _num(r.measured) > 0 and _num(r.predicted) > 0]
    fig = go.Figure()
    for pool in sorted({r.pool or r.kind for r in rows}):
        group = [r for r in rows if (r.pool or r.kind) == pool]
        fig.add_trace(
            go.Scatter(
                x=[_num(r.measured) for r in group],
                y=[_num(r.predicted) for r in group],
                mode="markers",
                name=pool_label(pool),
                marker={"size": 9, "color": KIND_COLORS.get(pool, "#5c6b80"), "opacity": 0.85},
                text=[f"{r.id}: {r.metric}" for r in group],
                customdata=[[_num(r.error_pct)] for r in group],
                hovertemplate=(
                    "%{text}<br>measured %{x:,.4~r}<br>predicted %{y:,.4~r}"
                    "<br>error %{customdata[0]:.1f} %<extra></extra>"
                ),
            )
        )
    values = [_num(r.measured) for r in rows] + [_num(r.predicted) for r in rows]
    if values:
        low, high = min(values) / 1.5, max(values) * 1.5
        fig.add_trace(
            go.Scatter(
                x=[low, high],
                y=[low, high],
                mode="lines",
                name="prediction = measurement",
                line={"color": "#8a94a6", "dash": "dot", "width": 1},
                hoverinfo="skip",
            )
        )
    fig.update_layout(
        _layout(
            xaxis={
                "title": {"text": "published measurement"},
                "type": "log",
                "gridcolor": GRID_COLOR,
            },
            yaxis={"title": {"text": "our prediction"}, "type": "log", "gridcolor": GRID_COLOR},
            margin={"l": 10, "r": 10, "t": 30, "b": 40},
        )
    )
    return _to_json(fig)


# ---------------------------------------------------------------------------------------------
# 6. The comparison: one chart per question, every scenario in it, on one axis

COMPARE_COLORS = ("#1f5eff", "#e8833a", "#13a37f", "#9b51e0")


def _short(name: str, limit: int = 28) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def compare_figures(columns: list[tuple[str, EngineResult]]) -> dict[str, dict[str, Any]]:
    """(scenario name, result) pairs -> cost vs speed, time breakdown and scaling figures,
    each scenario in its own colour on shared axes that start at zero."""
    names = _unique_names([_short(n) for n, _ in columns])
    return {
        "cost": _compare_cost(columns, names),
        "breakdown": _compare_breakdown(columns, names),
        "scaling": _compare_scaling(columns, names),
    }


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def on_one_time_scale(columns: list[tuple[str, EngineResult]]) -> bool:
    """Whether the compared scenarios' times share a unit: a training step (seconds) and a
    served token (milliseconds) do not, so their charts show each time against the scenario's
    own (its recommendation's, or its own total) instead of on one axis."""
    return len({is_inference(result) for _, result in columns}) <= 1


def _relative(values: list[float], reference: float) -> list[float]:
    return [v / reference if reference > 0 else 0.0 for v in values]


def _compare_cost(columns: list[tuple[str, EngineResult]], names: list[str]) -> dict[str, Any]:
    fig = go.Figure()
    units = set()
    one_scale = on_one_time_scale(columns)
    for i, ((_, result), name) in enumerate(zip(columns, names, strict=True)):
        points, unit = cost_speed_points(result)
        units.add(unit)
        chosen = [p for p in points if p.recommended]
        reference = chosen[0].speed if chosen and not one_scale else 1.0
        color = COMPARE_COLORS[i % len(COMPARE_COLORS)]
        fig.add_trace(
            go.Scatter(
                x=_relative([p.speed for p in points], reference),
                y=[p.total_cost_usd for p in points],
                mode="markers",
                name=name,
                legendgroup=name,
                marker={"size": 9, "color": color, "opacity": 0.55},
                text=[p.label for p in points],
                customdata=[p.speed for p in points],
                hovertemplate=name
                + "<br>%{text}<br>%{customdata:,.3~r} "
                + unit
                + "<br>this job $%{y:,.0f}<extra></extra>",
            )
        )
        if chosen:
            fig.add_trace(
                go.Scatter(
                    x=_relative([chosen[0].speed], reference),
                    y=[chosen[0].total_cost_usd],
                    mode="markers",
                    name=f"{name}: recommended",
                    legendgroup=name,
                    showlegend=False,
                    marker={
                        "size": 18,
                        "symbol": "star",
                        "color": color,
                        "line": {"color": "#17202e", "width": 1},
                    },
                    hovertemplate=name + ": recommended<br>" + chosen[0].label + "<extra></extra>",
                )
            )
    axis = (
        f"{units.pop()} (lower is faster)"
        if one_scale
        else "time relative to the pick (1 = recommended)"
    )
    fig.update_layout(
        _layout(
            xaxis=_value_axis(axis),
            yaxis=_value_axis(
                cost_axis_title(columns[0][1]) if columns else "cost (USD)",
                tickprefix="$",
                separatethousands=True,
            ),
            margin={"l": 10, "r": 10, "t": 30, "b": 40},
        )
    )
    return _to_json(fig)


def _compare_breakdown(columns: list[tuple[str, EngineResult]], names: list[str]) -> dict[str, Any]:
    """Each scenario's recommended design as one bar: compute, communication, other idle."""
    rows: list[tuple[str, tuple[float, float, float], str]] = []
    for (_, result), name in zip(columns, names, strict=True):
        s = breakdown_series(result)
        idx = s.recommended.index(True) if True in s.recommended else 0
        if not s.labels:
            continue
        rows.append((name, (s.compute[idx], s.comm[idx], s.idle[idx]), s.unit))
    units = {unit for _, _, unit in rows}
    one_scale = on_one_time_scale(columns)
    fig = go.Figure()
    parts = (
        ("Compute", PART_COLORS["compute"]),
        ("Communication not hidden by compute", PART_COLORS["comm"]),
        ("Other idle", PART_COLORS["idle"]),
    )
    for k, (label, color) in enumerate(parts):
        fig.add_trace(
            go.Bar(
                y=[name for name, _, _ in rows],
                # a step and a token share no scale: each bar as shares of its own time
                x=[
                    times[k] if one_scale else 100 * _relative([times[k]], sum(times))[0]
                    for _, times, _ in rows
                ],
                name=label,
                orientation="h",
                marker={"color": color},
                customdata=[f"{times[k]:,.3g} {unit}" for _, times, unit in rows],
                hovertemplate="%{y}<br>" + label + ": %{customdata}<extra></extra>",
            )
        )
    axis = units.pop() if one_scale and len(units) == 1 else "share of the scenario's own time (%)"
    fig.update_layout(
        _layout(
            barmode="stack",
            xaxis=_value_axis(axis),
            yaxis={"autorange": "reversed", "automargin": True},
            margin={"l": 10, "r": 10, "t": 10, "b": 40},
            height=140 + 60 * max(1, len(rows)),
        )
    )
    return _to_json(fig)


def _compare_scaling_axis(columns: list[tuple[str, EngineResult]]) -> str:
    """The comparison's scaling axis: the columns' own words when they agree."""
    words = {scaling_words(result) for _, result in columns}
    if len(words) == 1:
        return words.pop().axis
    return "efficiency or compute share (%)"


def _fabric_or_none(result: EngineResult) -> str:
    """A scenario's recommended compute fabric, or that it needs none (as its answer says)."""
    rec = result.recommendation
    return fabric_label(rec.fabric) if rec.needs_compute_fabric else "no compute fabric"


def _compare_scaling(columns: list[tuple[str, EngineResult]], names: list[str]) -> dict[str, Any]:
    """Each scenario's recommended fabric: efficiency as servers are added."""
    fig = go.Figure()
    ticks: set[float] = set()
    for i, ((_, result), name) in enumerate(zip(columns, names, strict=True)):
        series = scaling_series(result)
        fabric = result.recommendation.fabric
        points = series.get(fabric) or next(iter(series.values()), [])
        if not points:
            continue
        ticks.update(p[0] for p in points)
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] * 100 for p in points],
                mode="lines+markers",
                name=f"{name} ({_fabric_or_none(result)})",
                line={"color": COMPARE_COLORS[i % len(COMPARE_COLORS)], "width": 2},
                hovertemplate=name + "<br>%{x} servers: %{y:.1f} %<extra></extra>",
            )
        )
    fig.update_layout(
        _layout(
            xaxis=_servers_axis(server_ticks(ticks)),
            yaxis={**EFFICIENCY_AXIS, "title": {"text": _compare_scaling_axis(columns)}},
            margin={"l": 10, "r": 10, "t": 24, "b": 40},
        )
    )
    return _to_json(fig)
