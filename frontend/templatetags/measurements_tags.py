"""{% calibration_panel %}: the results page's calibration and acceptance-plan box."""

from __future__ import annotations

from typing import Any

from django import template

from advisor.engine.facts.formatting import duration, milliseconds, usd_whole
from advisor.engine.facts.vocabulary import fabric_label
from advisor.engine.result.records import CalibrationComparison, CalibrationSummary, EngineResult
from advisor.measurements.selectors import (
    calibration_warnings,
    measurements_for_scenario,
    run_measurement,
    scenario_calibrations,
)

register = template.Library()

_TOPOLOGY_WORDS = {
    "single-switch": "single switch",
    "leaf-spine": "leaf-spine",
    "fat-tree": "fat tree",
}


def _design(side: CalibrationSummary) -> str:
    if not side.fabric:
        return "no compute fabric"
    nics = f"{side.nics_per_node} × {side.nic_gbps:g} Gb/s NICs per server"
    return f"{fabric_label(side.fabric)}, {nics}" if side.nic_gbps else fabric_label(side.fabric)


def _topology(side: CalibrationSummary) -> str:
    if not side.topology:
        return "–"
    words = _TOPOLOGY_WORDS.get(side.topology.replace("_", "-"), side.topology.replace("-", " "))
    if side.oversubscription and side.oversubscription > 1:
        return f"{words}, {side.oversubscription:g}:1 oversubscribed"
    return f"{words}, non-blocking"


def calibration_rows(comparison: CalibrationComparison) -> list[tuple[str, str, str]]:
    """The default-vs-calibrated table in words, units and money formats."""
    before, after = comparison.default, comparison.calibrated
    rows = [
        ("Compute fabric", _design(before), _design(after)),
        ("Topology", _topology(before), _topology(after)),
    ]
    if before.step_time_s is not None or after.step_time_s is not None:
        rows.append(
            ("Time per training step", duration(before.step_time_s), duration(after.step_time_s))
        )
    if before.ms_per_token is not None or after.ms_per_token is not None:
        rows.append(
            (
                "Time per generated token",
                milliseconds(before.ms_per_token),
                milliseconds(after.ms_per_token),
            )
        )
    rows.append(
        (
            "Total cost to finish the work",
            usd_whole(before.total_cost_usd),
            usd_whole(after.total_cost_usd),
        )
    )
    return rows


@register.inclusion_tag("measurements/_calibration.html", takes_context=True)
def calibration_panel(
    context: template.Context, scenario: Any, run: Any, result: Any
) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    calibration = result.calibration if isinstance(result, EngineResult) else None
    # the scenario page reads its calibrated runs once (frontend.results.scenario_detail)
    links = context.get("calibrated_runs")
    if links is None:
        links = scenario_calibrations(scenario_id=scenario.pk)
    measurement = run_measurement(run=run, scenario_links=links) if run is not None else None
    inputs = scenario.inputs if isinstance(scenario.inputs, dict) else {}
    fabric = None
    if isinstance(result, EngineResult) and result.recommendation.fabric:
        fabric = result.recommendation.fabric
    choices = (
        measurements_for_scenario(user=user, gpu_id=str(inputs.get("gpu") or ""), fabric=fabric)
        if user is not None and user.is_authenticated
        else []
    )
    return {
        "scenario": scenario,
        "run": run,
        "calibration": calibration,
        "rows": calibration_rows(calibration) if calibration is not None else [],
        "warnings": calibration_warnings(fit=measurement.fit) if measurement else [],
        "calibrated_with": measurement,
        "calibrated_runs": links,
        "measurements": [
            {"m": m, "matches": matches, "note": note, "selected": i == 0}
            for i, (m, matches, note) in enumerate(choices)
        ],
        "signed_in": bool(user and user.is_authenticated),
        "csrf_token": context.get("csrf_token"),
    }
