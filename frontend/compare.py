"""2 to 4 scenarios side by side: the inputs that differ first, the key figures, one chart per
question with every scenario on the same axes, and the comparison as CSV and PDF."""

from __future__ import annotations

import csv
import hashlib
import json
from typing import Any

from django.contrib import messages
from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from advisor.engine.facts.formatting import spreadsheet_cell
from advisor.reports import charts, presenters
from advisor.scenarios.models import RunStatus
from advisor.scenarios.reports import gpu_names
from advisor.scenarios.results import RESULT_COLUMNS, stored_result
from advisor.scenarios.selectors import as_uuid, scenario_get
from frontend.results import cache_keep, cached, person, run_figures
from frontend.throttle import anonymous_allowed, too_many

COMPARE_MIN = 2
COMPARE_MAX = 4


def _columns(request: HttpRequest) -> list[dict[str, Any]]:
    ids = list(dict.fromkeys(request.GET.getlist("s")))
    if any(as_uuid(i) is None for i in ids):
        raise BadRequest("Each s must be a scenario id.")  # a 400, not a 500
    names = gpu_names()
    columns: list[dict[str, Any]] = []
    for scenario_id in ids[:COMPARE_MAX]:
        scenario = scenario_get(scenario_id=scenario_id, user=request.user)
        if scenario is None:
            continue
        run = (
            scenario.runs.filter(status=RunStatus.SUCCEEDED)
            .defer(*RESULT_COLUMNS)  # loaded only when this process has not read it yet
            .order_by("-created_at")
            .first()
        )
        result = stored_result(run)
        if run is None or result is None:
            continue
        columns.append(
            {
                "scenario": scenario,
                "name": scenario.name,
                "customer": scenario.customer,
                "run": run,
                "result": result,
                "inputs": presenters.input_summary(result, names),
                "metrics": presenters.key_metrics(result),
                "warnings": presenters.warnings(result),
            }
        )
    return columns


def _rows(columns: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Label-aligned rows over every column; `differs` when the values are not all equal."""
    labels: list[str] = []
    for column in columns:
        for label, _ in column[key]:
            if label not in labels:
                labels.append(label)
    rows = []
    for label in labels:
        values = [dict(c[key]).get(label, "—") for c in columns]
        rows.append({"label": label, "values": values, "differs": len(set(values)) > 1})
    return rows


def comparison(request: HttpRequest) -> dict[str, Any] | None:
    columns = _columns(request)
    if len(columns) < COMPARE_MIN:
        return None
    inputs = _rows(columns, "inputs")
    customers = [c["customer"] or "—" for c in columns]
    if len(set(customers)) > 1:
        inputs.insert(0, {"label": "Customer", "values": customers, "differs": True})
    return {
        "columns": columns,
        "inputs": inputs,
        "differences": [r for r in inputs if r["differs"]],
        "table": _rows(columns, "metrics"),
    }


def _refuse(request: HttpRequest, found: int) -> HttpResponse:
    messages.error(
        request,
        f"Pick {COMPARE_MIN} to {COMPARE_MAX} computed scenarios to compare "
        f"({found} usable selected).",
    )
    return redirect("scenario_list")


def compare_figures(columns: list[dict[str, Any]]) -> dict[str, Any]:
    """The comparison's charts, cached by the runs compared and the names they are shown
    under (a finished run's result never changes; a renamed scenario gets new charts)."""
    from advisor.engine import ENGINE_VERSION

    shown = [[str(c["run"].pk), c["run"].catalog_version, c["name"]] for c in columns]
    digest = hashlib.sha256(json.dumps([ENGINE_VERSION, shown]).encode()).hexdigest()
    key = f"frontend:compare-figures:v1:{digest}"
    figures: dict[str, Any] | None = cached(key)
    if figures is None:
        figures = charts.compare_figures([(c["name"], c["result"]) for c in columns])
        cache_keep(key, figures)
    return figures


@require_GET
def compare_view(request: HttpRequest) -> HttpResponse:
    data = comparison(request)
    if data is None:
        return _refuse(request, len(_columns(request)))
    columns = data["columns"]
    for i, column in enumerate(columns):
        topo = run_figures(column["result"], column["run"])["topology"]
        column["topology"] = charts.topology_layout(column["result"])
        column["topology_chart"] = {"id": f"c{i}-topology", "script_id": f"fig-c{i}-topology"}
        column["topology_figure"] = topo
    figures = compare_figures(columns)
    query = request.GET.urlencode()
    return render(
        request,
        "frontend/compare.html",
        {
            "nav": "list",
            **data,
            "n": len(columns),
            "charts": {
                name: {"id": f"compare-{name}", "script_id": f"fig-compare-{name}", "figure": fig}
                for name, fig in figures.items()
            },
            "query": query,
            "one_time_scale": charts.on_one_time_scale([(c["name"], c["result"]) for c in columns]),
        },
    )


@require_GET
def compare_csv(request: HttpRequest) -> HttpResponse:
    data = comparison(request)
    if data is None:
        return _refuse(request, len(_columns(request)))
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="fabric-advisor-comparison.csv"'
    writer = csv.writer(response)
    writer.writerow(
        ["section", "item", *[spreadsheet_cell(c["name"]) for c in data["columns"]], "differs"]
    )
    for row in data["inputs"]:
        writer.writerow(
            [
                "input",
                row["label"],
                *map(spreadsheet_cell, row["values"]),
                "yes" if row["differs"] else "",
            ]
        )
    for row in data["table"]:
        writer.writerow(
            [
                "result",
                row["label"],
                *map(spreadsheet_cell, row["values"]),
                "yes" if row["differs"] else "",
            ]
        )
    for i, column in enumerate(data["columns"]):
        cost = presenters.cost_figures(column["result"].cost)
        for fig in cost["rows"]:
            values = [""] * len(data["columns"])
            values[i] = str(round(fig["usd"], 2))
            writer.writerow(["Cost (USD)", fig["label"], *values, ""])
    return response


@require_GET
def compare_pdf(request: HttpRequest) -> HttpResponse:
    if not anonymous_allowed(request, "export"):
        return too_many(request)
    data = comparison(request)
    if data is None:
        return _refuse(request, len(_columns(request)))
    from advisor.reports.pdf import build_compare_pdf  # matplotlib loads only for PDFs

    name, _email = person(request.user)
    pdf = build_compare_pdf(
        columns=data["columns"],
        differences=data["differences"],
        table=data["table"],
        prepared_by=name,
    )
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = 'attachment; filename="fabric-advisor-comparison.pdf"'
    return response
