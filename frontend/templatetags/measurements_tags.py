"""{% calibration_panel %}: the results page's calibration and acceptance-plan box."""

from __future__ import annotations

from typing import Any

from django import template

from advisor.engine.result.records import EngineResult
from advisor.measurements.selectors import measurement_list, run_measurement

register = template.Library()


@register.inclusion_tag("measurements/_calibration.html", takes_context=True)
def calibration_panel(
    context: template.Context, scenario: Any, run: Any, result: Any
) -> dict[str, Any]:
    request = context.get("request")
    user = getattr(request, "user", None)
    calibration = result.calibration if isinstance(result, EngineResult) else None
    return {
        "scenario": scenario,
        "calibration": calibration,
        "calibrated_with": run_measurement(run=run) if run is not None else None,
        "measurements": list(measurement_list(user=user)[:50]) if user else [],
        "signed_in": bool(user and user.is_authenticated),
        "csrf_token": context.get("csrf_token"),
    }
