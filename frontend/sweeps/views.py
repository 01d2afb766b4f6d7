"""Sweep pages: start one from a scenario, watch its progress, read its charts, export CSV.

Who may see a sweep is who may see its scenario (advisor.scenarios.selectors.scenario_get);
starting one needs an account, since a sweep asks for minutes of worker time.
"""

from __future__ import annotations

import csv
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from advisor.engine.facts.formatting import spreadsheet_cell
from advisor.engine.facts.vocabulary import FABRIC_IDS, FABRIC_LABELS, GBPS, fabric_label
from advisor.engine.tools.sweep import COLUMNS
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import Scenario, Sweep
from advisor.scenarios.selectors import scenario_list, user_is_sales
from advisor.scenarios.sweeps.axes import (
    NUMBER_AXES,
    InvalidSweep,
    axes_from_text,
    scenario_servers,
)
from advisor.scenarios.sweeps.selectors import sweep_get, sweep_results, sweeps_of
from advisor.scenarios.sweeps.services import TooManySweeps, sweep_create
from frontend.access import scenario_or_404
from frontend.sweeps.charts import sweep_charts

LIST_LIMIT = 100
AXIS_LABELS = {
    "servers": "Servers",
    "fabric": "Fabrics",
    "nic_gbps": f"NIC speeds ({GBPS})",
    "nics_per_node": "NICs per server",
    "oversubscription": "Leaf oversubscription (r of r:1)",
}


def sweep_or_404(request: HttpRequest, sweep_id: uuid.UUID) -> Sweep:
    sweep = sweep_get(sweep_id=sweep_id, user=request.user)
    if sweep is None:
        raise Http404("No such sweep")
    return sweep


def _default_form(scenario: Scenario) -> dict[str, Any]:
    """A useful first grid around the scenario: doubling servers up to 4x its size."""
    nodes = scenario_servers(scenario.inputs) or 1
    top = max(2, nodes * 4)
    return {
        "servers": f"1..{top} x2" if nodes > 1 else "1, 2, 4, 8",
        "fabric": list(FABRIC_IDS),
        "nic_gbps": "100, 200, 400, 800",
        "nics_per_node": "1, 2, 4, 8",
        "oversubscription": "1, 2, 3",
    }


@login_required
def sweep_index(request: HttpRequest) -> HttpResponse:
    """The sweeps the person may see, and a way to start one from one of their scenarios."""
    visible = scenario_list(user=request.user)
    chosen = request.GET.get("scenario")
    if chosen:
        try:
            chosen_id = uuid.UUID(chosen)
        except ValueError:
            raise Http404("No such scenario") from None
        return redirect("sweep_new", scenario_id=scenario_or_404(request, chosen_id).pk)
    rows = sweeps_of(visible).select_related("scenario")[:LIST_LIMIT]
    return render(
        request,
        "sweeps/index.html",
        {
            "sweeps": rows,
            "scenarios": visible[:LIST_LIMIT],
            "is_sales_view": user_is_sales(request.user),
            "nav": "sweeps",
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def sweep_new(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    scenario = scenario_or_404(request, scenario_id)
    form: dict[str, Any] = _default_form(scenario)
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        form = {name: request.POST.get(name, "") for name in NUMBER_AXES}
        form["fabric"] = request.POST.getlist("fabric")
        fabrics = [fabric for fabric in request.POST.getlist("fabric") if fabric in FABRIC_IDS]
        axes, errors = axes_from_text(request.POST, fabrics)
        if not errors:
            try:
                sweep = sweep_create(scenario=scenario, axes=axes, owner=request.user)
            except InvalidSweep as exc:
                errors = exc.field_errors
            except InvalidScenario as exc:
                errors = {"scenario": [f"The scenario cannot be evaluated: {exc}"]}
            except TooManySweeps as exc:
                errors = {"axes": [str(exc)]}
            else:
                return redirect("sweep_detail", sweep_id=sweep.pk)
    field_errors = {k.removeprefix("axes."): v for k, v in errors.items()}
    return render(
        request,
        "sweeps/new.html",
        {
            "scenario": scenario,
            "form": form,
            "errors": field_errors,
            "labels": AXIS_LABELS,
            "fabrics": [(fabric, fabric_label(fabric)) for fabric in FABRIC_IDS],
            "max_points": settings.SWEEP_MAX_POINTS,
            "nav": "sweeps",
        },
        status=400 if errors else 200,
    )


def sweep_detail(request: HttpRequest, sweep_id: uuid.UUID) -> HttpResponse:
    sweep = sweep_or_404(request, sweep_id)
    context: dict[str, Any] = {"sweep": sweep, "scenario": sweep.scenario, "nav": "sweeps"}
    if not sweep.is_finished:
        return render(request, "sweeps/progress.html", context)
    rows = sweep_results(sweep)
    servers = scenario_servers(sweep.scenario.inputs) or (sweep.axes.get("servers") or [0])[0]
    charts = sweep_charts(rows, scenario_servers=servers)
    elapsed_s = (
        (sweep.finished_at - sweep.started_at).total_seconds()
        if sweep.started_at and sweep.finished_at
        else None
    )
    context.update(
        {
            "elapsed_s": elapsed_s,
            "rows_count": len(rows),
            "charts": charts,
            "figures": [
                {"id": f"sweep-{name}", "script_id": f"sweep-{name}-data", "figure": figure}
                for name, figure in charts["figures"].items()
            ],
            "labels": AXIS_LABELS,
            "grid": [
                (AXIS_LABELS.get(name, name), ", ".join(_axis_value(v) for v in values))
                for name, values in sweep.axes.items()
            ],
        }
    )
    return render(request, "sweeps/detail.html", context)


def _axis_value(value: Any) -> str:
    """One value of a sweep axis in words: a fabric by its label, a number without ".0"."""
    if isinstance(value, float):
        return f"{value:g}"
    if value in FABRIC_LABELS:
        return fabric_label(value)
    return str(value)


@require_GET
def sweep_progress(request: HttpRequest, sweep_id: uuid.UUID) -> HttpResponse:
    """htmx poll target: the progress bar, or a refresh once the sweep has finished."""
    sweep = sweep_or_404(request, sweep_id)
    if sweep.is_finished:
        response = HttpResponse(status=200)
        response["HX-Refresh"] = "true"
        return response
    return render(request, "sweeps/_progress.html", {"sweep": sweep})


@require_GET
def sweep_results_csv(request: HttpRequest, sweep_id: uuid.UUID) -> HttpResponse:
    sweep = sweep_or_404(request, sweep_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="sweep-{sweep.pk}.csv"'
    writer = csv.writer(response)
    writer.writerow(COLUMNS)
    for point in sweep_results(sweep):
        writer.writerow([spreadsheet_cell(value) for value in point.cells()])
    return response
