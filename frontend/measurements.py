"""Web pages for customer measurements: upload, fit chart, calibrated runs, acceptance plans."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from advisor.engine.calibration.acceptance import (
    AcceptancePlan,
    Grading,
    acceptance_plan,
    grade,
    plan_markdown,
)
from advisor.engine.calibration.fabric_fit import FabricFit, FitPoint
from advisor.engine.calibration.nccl_tests import parse_text
from advisor.engine.facts.constants import FABRIC_IDS
from advisor.measurements.models import TRANSPORTS, Measurement
from advisor.measurements.selectors import (
    calibration_warnings,
    measurement_get,
    measurement_list,
    run_measurement,
)
from advisor.measurements.services import (
    MeasurementInvalid,
    NotQuotable,
    measurement_create,
    scenario_quoted_run_choose,
    scenario_run_calibrated,
    text_max_chars,
)
from advisor.scenarios.models import Scenario
from advisor.scenarios.results import stored_result
from advisor.scenarios.selectors import as_uuid, run_catalog, run_of_scenario, run_quoted_succeeded
from advisor.scenarios.services import RunInProgress
from frontend.access import scenario_or_404

_COLORS = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2")


def _size_label(nbytes: float) -> str:
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= div:
            return f"{nbytes / div:g} {unit}"
    return f"{nbytes:g} B"


# Each fitted term draws three traces per run: (name, mode, bus bandwidth of a point, style).
_FIT_TRACES: tuple[tuple[str, str, Callable[[FitPoint], float], str, dict[str, Any]], ...] = (
    ("measured", "markers", lambda p: p.measured_busbw_gbytes_per_s, "marker", {"size": 7}),
    (
        "default model",
        "lines",
        lambda p: p.default_busbw_gbytes_per_s,
        "line",
        {"dash": "dot", "width": 1.5},
    ),
    ("fitted", "lines", lambda p: p.fitted_busbw_gbytes_per_s, "line", {"width": 2.5}),
)
_TERM_WORDS = {"network": "between servers", "scaleup": "inside one server"}


def fit_figure(fit: FabricFit | None) -> dict[str, Any]:
    """Plotly figure: measured vs default model vs fitted bus bandwidth over message size."""
    data: list[dict[str, Any]] = []
    color_i = 0
    for term in fit.terms if fit is not None else ():
        label = _TERM_WORDS.get(term.kind, term.kind)
        runs: dict[tuple[int, str, int], list[FitPoint]] = {}
        for p in term.points:
            runs.setdefault((p.run, p.op, p.ranks), []).append(p)
        for (_run, op, ranks), points in runs.items():
            points = [p for p in points if p.measured_busbw_gbytes_per_s > 0]
            if not points:
                continue
            color = _COLORS[color_i % len(_COLORS)]
            color_i += 1
            xs = [p.nbytes for p in points]
            name = f"{op}, {ranks} GPUs ({label})"
            for what, mode, busbw, style_key, style in _FIT_TRACES:
                data.append(
                    {
                        "type": "scatter",
                        "mode": mode,
                        "name": f"{what}: {name}",
                        "x": xs,
                        "y": [busbw(p) for p in points],
                        style_key: {"color": color, **style},
                    }
                )
    ticks = [8 * 8**i for i in range(11)]
    return {
        "data": data,
        "layout": {
            "height": 420,
            "margin": {"l": 60, "r": 20, "t": 10, "b": 50},
            "xaxis": {
                "type": "log",
                "title": {"text": "message size (nccl-tests 'size')"},
                "tickvals": ticks,
                "ticktext": [_size_label(t) for t in ticks],
            },
            "yaxis": {"type": "log", "title": {"text": "bus bandwidth, GB/s"}},
            "legend": {"orientation": "h", "y": -0.25},
        },
    }


FORM_FIELDS = ("name", "customer", "fabric", "transport", "nic_gbps", "nics_per_node", "text")
"""The upload form's text fields, shown again as posted when the form has errors."""


def _form_values(request: HttpRequest) -> dict[str, Any]:
    return {name: request.POST.get(name, "") for name in FORM_FIELDS}


def _number(raw: str, field: str, errors: dict[str, list[str]], *, integer: bool) -> Any:
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        errors[field] = ["must be a whole number" if integer else "must be a number"]
        return None
    if not integer and not math.isfinite(value):
        errors[field] = ["must be a finite number"]
        return None
    return value


@login_required
@require_http_methods(["GET", "POST"])
def measurement_index(request: HttpRequest) -> HttpResponse:
    """List the user's measurements; upload a new one (file or pasted text)."""
    form = _form_values(request) if request.method == "POST" else {}
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        upload = request.FILES.get("file")
        text = form["text"]
        if upload is not None:
            if upload.size is not None and upload.size > text_max_chars() * 4:
                errors["file"] = [f"must be at most {text_max_chars()} characters"]
            else:
                try:
                    text = upload.read().decode("utf-8")
                except UnicodeDecodeError:
                    errors["file"] = ["must be a UTF-8 text file (the benchmark's output)"]
        nic_gbps = _number(form["nic_gbps"], "nic_gbps", errors, integer=False)
        nics = _number(form["nics_per_node"], "nics_per_node", errors, integer=True)
        if not errors:
            try:
                m = measurement_create(
                    name=form["name"],
                    text=text,
                    customer=form["customer"],
                    owner=request.user,
                    fabric=form["fabric"],
                    nic_gbps=nic_gbps,
                    nics_per_node=nics,
                    transport=form["transport"],
                )
            except MeasurementInvalid as exc:
                errors.update(exc.fields)
            else:
                messages.success(request, f"Measurement “{m.name}” saved and fitted.")
                return redirect("measurement_detail", measurement_id=m.pk)
    return render(
        request,
        "measurements/index.html",
        {
            "nav": "measurements",
            "measurements": measurement_list(user=request.user)[:100],
            "form": form,
            "errors": errors,
            "fabrics": FABRIC_IDS,
            "transports": [(k, label) for k, (label, _fabric) in TRANSPORTS.items()],
            "max_chars": text_max_chars(),
        },
        status=400 if errors else 200,
    )


def _measurement_or_404(request: HttpRequest, measurement_id: uuid.UUID) -> Measurement:
    m = measurement_get(user=request.user, measurement_id=measurement_id)
    if m is None:
        raise Http404("No such measurement")
    return m


@login_required
@require_GET
def measurement_detail(request: HttpRequest, measurement_id: uuid.UUID) -> HttpResponse:
    m = _measurement_or_404(request, measurement_id)
    fit = FabricFit.from_dict(m.fit) if m.fit else None
    return render(
        request,
        "measurements/detail.html",
        {
            "nav": "measurements",
            "m": m,
            # The parser's and fitter's warnings, then caps and poor fits said plainly.
            "warnings": list(dict.fromkeys([*m.warnings, *calibration_warnings(fit=m.fit)])),
            "fit": fit,
            "terms": fit.terms if fit is not None else (),
            "figure": fit_figure(fit),
            "has_points": fit is not None and bool(fit.terms),
        },
    )


@login_required
@require_POST
def scenario_calibrate(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """Evaluate the scenario again with the chosen measurement's fit."""
    scenario = scenario_or_404(request, scenario_id)
    chosen = request.POST.get("measurement", "")
    if chosen and as_uuid(chosen) is None:
        raise BadRequest("measurement must be a measurement id")  # a 400, not a 500
    m = measurement_get(user=request.user, measurement_id=chosen)
    if m is None:
        messages.error(request, "Choose one of your measurements to calibrate with.")
        return redirect("scenario_detail", scenario_id=scenario.pk)
    try:
        run = scenario_run_calibrated(scenario=scenario, measurement=m)
    except RunInProgress as exc:
        messages.error(request, str(exc))
        return redirect("scenario_detail", scenario_id=scenario.pk)
    messages.info(
        request,
        f"Computing a calibrated run with “{m.name}”. The scenario's quoted answer (its PDF "
        "and CSV) stays the default model's unless you choose this run.",
    )
    return redirect(reverse("scenario_detail", args=[scenario.pk]) + f"?run={run.pk}")


@login_required
@require_POST
def scenario_quote_run(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """Choose a calibrated run as the scenario's quoted answer, or go back to the default."""
    scenario = scenario_or_404(request, scenario_id)
    run = run_of_scenario(scenario=scenario, run_id=request.POST.get("run", ""))
    if run is None or run_measurement(run=run) is None:
        raise Http404("No such calibrated run of this scenario")
    chosen = request.POST.get("choose") == "1"
    try:
        scenario_quoted_run_choose(scenario=scenario, run_id=run.pk if chosen else None)
    except NotQuotable as exc:
        messages.error(request, f"This run {exc}.")
        return redirect("scenario_detail", scenario_id=scenario.pk)
    messages.success(
        request,
        "The calibrated run is now the scenario's quoted answer (page, PDF and CSV)."
        if chosen
        else "The default model's answer is the scenario's quoted answer again.",
    )
    return redirect("scenario_detail", scenario_id=scenario.pk)


def _plan_and_grading(
    request: HttpRequest, scenario: Scenario
) -> tuple[AcceptancePlan, Grading | None]:
    run = run_quoted_succeeded(scenario=scenario)
    result = stored_result(run)
    if run is None or result is None:
        raise Http404("The scenario has no finished evaluation yet")
    try:
        plan = acceptance_plan(
            result,
            catalog=run_catalog(run=run),
            given_design=request.GET.get("design") == "given",
        )
    except ValueError as exc:
        raise Http404(str(exc)) from exc
    grading = None
    mid = request.GET.get("measurement")
    if mid:
        m = measurement_get(user=request.user, measurement_id=mid)
        if m is None:
            raise Http404("No such measurement")
        grading = grade(plan, parse_text(m.text))
    return plan, grading


@require_GET
def acceptance_markdown(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    scenario = scenario_or_404(request, scenario_id)
    plan, grading = _plan_and_grading(request, scenario)
    response = HttpResponse(
        plan_markdown(plan, grading), content_type="text/markdown; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="acceptance-{scenario.pk}.md"'
    return response


def acceptance_pdf_bytes(
    plan: AcceptancePlan, grading: Grading | None, scenario: Scenario | None = None
) -> bytes:
    """The acceptance plan as a PDF in the report's style (advisor.reports.pdf)."""
    from advisor.reports.pdf import build_acceptance_pdf  # matplotlib loads only here

    return build_acceptance_pdf(
        plan,
        grading,
        scenario_name=scenario.name if scenario is not None else "",
        customer=scenario.customer if scenario is not None else "",
        reference=scenario.quote_reference if scenario is not None else "",
    )


@require_GET
def acceptance_pdf(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    scenario = scenario_or_404(request, scenario_id)
    plan, grading = _plan_and_grading(request, scenario)
    pdf = acceptance_pdf_bytes(plan, grading, scenario)
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="acceptance-{scenario.pk}.pdf"'
    return response
