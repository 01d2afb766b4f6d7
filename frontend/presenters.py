"""The engine's result arranged for people: headline facts first, details after.

Shared by the results page, the comparison page, and the PDF report, so that all three say
the same thing in the same words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from frontend.charts import fabric_label, is_inference, option_label, topology_name

NETWORK_LABELS = {
    "compute": "GPU compute fabric",
    "storage": "Storage network",
    "management": "Management network",
    "frontend": "Front-end network",
}


def _f(value: Any, default: float = 0.0) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def money(value: Any) -> str:
    number = _f(value)
    if abs(number) >= 1e9:
        return f"${number / 1e9:.2f}B"
    if abs(number) >= 1e6:
        return f"${number / 1e6:.2f}M"
    if abs(number) >= 1e4:
        return f"${number / 1e3:.0f}k"
    return f"${number:,.0f}"


def seconds(value: Any) -> str:
    s = _f(value)
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    if s < 172800:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} days"


def topology_text(rec: dict[str, Any]) -> str:
    topo = rec.get("topology") or {}
    if not rec.get("needs_compute_fabric", True):
        return "no compute fabric (front-end Ethernet only)"
    name = topology_name(topo)
    parts = [name]
    if name != "single switch":
        if topo.get("rail_optimized"):
            parts.append("rail-optimized")
        over = _f(topo.get("oversubscription"), 1.0)
        parts.append(f"{over:g}:1" + (" non-blocking" if over == 1 else " oversubscribed"))
    return ", ".join(p for p in parts if p)


@dataclass
class Fact:
    key: str
    value: str
    sub: str = ""


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The answer in one line plus the handful of numbers that back it."""
    rec = result.get("recommendation") or {}
    cost = result.get("cost") or {}
    metrics = result.get("metrics") or {}
    workload = result.get("workload") or {}
    needs_fabric = bool(rec.get("needs_compute_fabric", True))
    fabric = fabric_label(str(rec.get("fabric", "")))
    nics = int(_f(rec.get("nics_per_node")))
    gbps = _f(rec.get("nic_gbps"))
    topo = topology_text(rec)
    capex = money(cost.get("network_capex_usd"))
    if needs_fabric:
        title = f"{fabric} · {nics} × {gbps:g} Gb/s NICs per server · {topo} · network {capex}"
    else:
        title = f"No compute fabric needed · standard Ethernet · network {capex}"
    if needs_fabric:
        facts = [
            Fact(
                "NICs per server",
                f"{nics} × {gbps:g}G" if nics else "—",
                str(rec.get("nic_sku") or ""),
            ),
            Fact("Topology", topo.split(",")[0] if topo else "—", ", ".join(topo.split(", ")[1:])),
        ]
    else:
        facts = [
            Fact(
                "Front-end NICs",
                f"{nics} × {gbps:g}G" if nics else "—",
                str(rec.get("nic_sku") or ""),
            ),
            Fact("Compute fabric", "None", "GPUs talk over NVLink / PCIe"),
        ]
    facts.append(Fact("Network cost", capex, "NICs, switches, optics, cables"))
    if is_inference(result):
        facts.append(
            Fact(
                "Per token",
                f"{_f(metrics.get('ms_per_token')):.3g} ms",
                f"first token {_f(metrics.get('ttft_ms')):.3g} ms",
            )
        )
    else:
        facts.append(
            Fact(
                "Step time",
                seconds(metrics.get("step_time_s")),
                f"{_f(metrics.get('scaling_efficiency')) * 100:.0f} % scaling efficiency",
            )
        )
    facts.append(
        Fact(
            "GPUs idle on the network",
            f"{_f(metrics.get('gpu_idle_fraction')) * 100:.1f} %",
            f"{money(cost.get('idle_cost_usd'))} of GPU time",
        )
    )
    facts.append(
        Fact(
            "Total cost of the work", money(cost.get("total_cost_usd")), str(cost.get("work") or "")
        )
    )
    warning = ""
    if is_inference(result) and metrics.get("meets_target") in (0, 0.0, False):
        target = _f(
            ((result.get("scenario") or {}).get("inference") or {}).get("target_ms_per_token")
        )
        warning = (
            f"No design meets your target of {target:g} ms per token: this one decodes at "
            f"{_f(metrics.get('ms_per_token')):.3g} ms. The reasons are below."
        )
    return {
        "title": title,
        "warning": warning,
        "sentence": str(rec.get("headline") or ""),
        "facts": facts,
        "needs_fabric": needs_fabric,
        "servers": int(_f(workload.get("nodes"))),
    }


def bom_groups(result: dict[str, Any]) -> list[dict[str, Any]]:
    """BOM lines grouped by network, each group with its subtotal."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for line in result.get("bom") or []:
        if isinstance(line, dict):
            groups.setdefault(str(line.get("network") or "compute"), []).append(line)
    order = [k for k in NETWORK_LABELS if k in groups] + [
        k for k in groups if k not in NETWORK_LABELS
    ]
    return [
        {
            "network": key,
            "label": NETWORK_LABELS.get(key, key.title()),
            "lines": groups[key],
            "subtotal": sum(_f(line.get("extended_price_usd")) for line in groups[key]),
            # The engine's power_w on a BOM line is the whole line's (quantity included).
            "power_w": sum(_f(line.get("power_w")) for line in groups[key]),
        }
        for key in order
    ]


def bom_total(result: dict[str, Any]) -> float:
    return sum(
        _f(line.get("extended_price_usd"))
        for line in result.get("bom") or []
        if isinstance(line, dict)
    )


def options_rows(result: dict[str, Any], limit: int | None = None) -> list[dict[str, Any]]:
    """The candidates by rank (the first `limit` of them), in words."""
    inference = is_inference(result)
    rows = []
    ranked = sorted(result.get("options") or [], key=lambda o: _f(o.get("rank"), 1e9))
    for option in ranked[:limit]:
        m = option.get("metrics") or {}
        c = option.get("cost") or {}
        rows.append(
            {
                "rank": option.get("rank"),
                "label": option_label(option),
                "switch": option.get("switch_model") or "",
                "speed": (
                    f"{_f(m.get('ms_per_token')):.3g} ms/token"
                    if inference
                    else seconds(m.get("step_time_s"))
                ),
                "idle": f"{_f(m.get('gpu_idle_fraction')) * 100:.1f} %",
                "capex": money(c.get("network_capex_usd")),
                "total": money(c.get("total_cost_usd")),
                "recommended": bool(option.get("recommended")),
                "feasible": option.get("feasible", True),
                "why_not": option.get("why_not") or "",
            }
        )
    return rows


def uncertainty_rows(result: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    names = {
        "step_time_s": ("Step time", seconds),
        "ms_per_token": ("Time per token", lambda v: f"{_f(v):.3g} ms"),
        "total_cost_usd": ("Total cost of the work", money),
    }
    for key, band in (result.get("uncertainty") or {}).items():
        if not isinstance(band, dict):
            continue
        label, fmt = names.get(key, (key.replace("_", " "), lambda v: f"{_f(v):.3g}"))
        rows.append({"label": label, "low": fmt(band.get("low")), "high": fmt(band.get("high"))})
    return rows


def key_metrics(result: dict[str, Any]) -> list[tuple[str, str]]:
    """Rows for the side-by-side comparison."""
    rec = result.get("recommendation") or {}
    metrics = result.get("metrics") or {}
    cost = result.get("cost") or {}
    scenario = result.get("scenario") or {}
    workload = result.get("workload") or {}
    model = scenario.get("model")
    model_name = (workload.get("model") or {}).get("name") or (
        model if isinstance(model, str) else "custom"
    )
    rows = [
        ("Workload", str(scenario.get("workload", "")).replace("_", "-")),
        ("Model", str(model_name)),
        ("GPUs", f"{scenario.get('gpus', '—')} × {scenario.get('gpu', '')}"),
        ("Servers", str(workload.get("nodes", "—"))),
        (
            "Fabric",
            fabric_label(str(rec.get("fabric", "")))
            if rec.get("needs_compute_fabric", True)
            else "none needed (Ethernet)",
        ),
        ("NICs per server", f"{rec.get('nics_per_node', '—')} × {_f(rec.get('nic_gbps')):g}G"),
        ("Topology", topology_text(rec)),
        ("Network cost", money(cost.get("network_capex_usd"))),
    ]
    if is_inference(result):
        rows.append(("Time per token", f"{_f(metrics.get('ms_per_token')):.3g} ms"))
    else:
        rows.append(("Step time", seconds(metrics.get("step_time_s"))))
        rows.append(("Scaling efficiency", f"{_f(metrics.get('scaling_efficiency')) * 100:.0f} %"))
    rows += [
        ("GPUs idle on network", f"{_f(metrics.get('gpu_idle_fraction')) * 100:.1f} %"),
        ("Idle GPU cost", money(cost.get("idle_cost_usd"))),
        ("Total cost of the work", money(cost.get("total_cost_usd"))),
    ]
    return rows
