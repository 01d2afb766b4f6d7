"""A scenario's page: progress while the worker computes, then the answer; and its exports."""

from __future__ import annotations

import contextlib
import csv
import uuid
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.core.cache.utils import make_template_fragment_key
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from advisor.cache import COUNTER_ERRORS
from advisor.engine.facts.formatting import spreadsheet_cell
from advisor.engine.facts.vocabulary import bom_category_label, bom_role_label, network_label
from advisor.engine.result.records import EngineResult
from advisor.measurements.selectors import run_calibration_label, scenario_calibrations
from advisor.reports import charts, presenters
from advisor.reports.rag import rag_section
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.figures import figures_key
from advisor.scenarios.figures import run_figures as stored_run_figures
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.reports import export_filename, pdf_filename, report_pdf
from advisor.scenarios.results import READ_ERRORS, UnreadableResult, served_result, stored_result
from advisor.scenarios.selectors import (
    run_latest,
    run_of_scenario,
    run_quoted,
    run_quoted_succeeded,
    user_is_sales,
)
from advisor.scenarios.services import RunInProgress, run_start, scenario_clone, scenario_update
from advisor.scenarios.single_flight import KeyedLocks
from frontend import questionnaire as qn
from frontend.access import remember_created_draft, remember_created_scenario, scenario_or_404
from frontend.middleware import unreadable_result_page
from frontend.models import QuestionnaireDraft
from frontend.services import draft_create
from frontend.throttle import anonymous_allowed, too_many
from frontend.whatif import whatif_context

OPTIONS_IN_TABLE = 25


# A finished run's result never changes, so its figures are drawn once per run (and stored
# with it, advisor.scenarios.figures) and kept by each process that shows them.
FIGURES_CACHE_S = 24 * 3600


def cached(key: str) -> Any:
    """A value of the page cache, or None; a cache that cannot be reached (were it moved to
    Redis) is a miss, never an error: reads never need it."""
    try:
        return cache.get(key)
    except COUNTER_ERRORS:
        return None


def cache_keep(key: str, value: Any) -> None:
    with contextlib.suppress(*COUNTER_ERRORS):
        cache.set(key, value, FIGURES_CACHE_S)


# A run's figures being read or drawn, by cache key (advisor.scenarios.single_flight).
_drawing = KeyedLocks()


def _figures_cache_key(run: ScenarioRun | None) -> str | None:
    if run is None or run.pk is None or run.status != RunStatus.SUCCEEDED:
        return None
    return f"frontend:figures:v2:{figures_key(run)}"


def run_figures(result: EngineResult, run: ScenarioRun | None) -> dict[str, Any]:
    """The Plotly figures of a run's result: kept per process, else the run's stored figures,
    else drawn once and stored with the run (advisor.scenarios.figures.run_figures)."""
    key = _figures_cache_key(run)
    if key is None:
        return stored_run_figures(run, result)
    figures: dict[str, Any] | None = cached(key)
    if figures is None:
        with _drawing.hold(key):  # threads showing the same run at once draw it once
            figures = cached(key)
            if figures is None:
                figures = stored_run_figures(run, result)
                cache_keep(key, figures)
    return figures


# The name of results.html's {% cache %} block of a run's figures and details (vary: run.pk); the
# template names it again (the tag takes a literal), so a new version changes both.
RESULT_DETAILS_FRAGMENT = "result-details-v3"
# A run's result page being rendered for the first time in this process, by fragment key.
_rendering = KeyedLocks()


def _render_result_page(
    request: HttpRequest, run: ScenarioRun, context: dict[str, Any]
) -> HttpResponse:
    """Render a finished run's page; threads of a process showing a run whose details this
    process has not rendered yet render them once: the others wait and render the page around
    the cached details. Under a 50-user load run each thread of a worker opening the load
    test's new run at once rendered its details itself (34-77 ms of CPU each, gunicorn hooks
    reading each request's thread CPU; 11-17 ms once they are cached)."""
    fragment = make_template_fragment_key(RESULT_DETAILS_FRAGMENT, [run.pk])
    try:
        rendered = cache.has_key(fragment)
    except COUNTER_ERRORS:
        rendered = False
    if rendered:
        return render(request, "frontend/results.html", context)
    with _rendering.hold(fragment):
        return render(request, "frontend/results.html", context)


def _figure_names(result: EngineResult, run: ScenarioRun | None) -> list[str]:
    """Which figures a result has, without fetching them (a small cache entry per run)."""
    figures_key_ = _figures_cache_key(run)
    key = f"{figures_key_}:names" if figures_key_ is not None else None
    names: list[str] | None = cached(key) if key is not None else None
    if names is None:
        names = list(run_figures(result, run))
        if key is not None:
            cache_keep(key, names)
    return names


class _Lazy:
    """A value computed on first use: the template calls it only where it is rendered, and
    the parts of the page cached per run (results.html) do not render on a cache hit."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._done = False
        self._value: Any = None

    def __call__(self) -> Any:
        if not self._done:
            self._value, self._done = self._make(), True
        return self._value


def result_context(
    result: EngineResult, prefix: str = "chart", *, run: ScenarioRun | None = None
) -> dict[str, Any]:
    """Everything the results templates need from one engine result (``run``: the run it
    is the result of, whose figures are stored; none for a result that is not stored)."""
    figures = _Lazy(lambda: run_figures(result, run))

    def figure(name: str) -> _Lazy:
        return _Lazy(lambda: figures()[name])

    return {
        "result": result,
        "head": presenters.headline(result),
        "rationale": [presenters.plain_sentence(s) for s in result.recommendation.rationale],
        "assumptions": _Lazy(lambda: presenters.assumption_rows(result)),
        "plan_notes": presenters.plan_notes(result),
        "charts": {
            name: {
                "id": f"{prefix}-{name}",
                "script_id": f"fig-{prefix}-{name}",
                "figure": figure(name),
            }
            for name in _figure_names(result, run)
        },
        "bom_groups": _Lazy(lambda: presenters.bom_groups(result)),
        "bom_total": presenters.bom_total(result),
        "options": _Lazy(lambda: presenters.options_rows(result, limit=OPTIONS_IN_TABLE)),
        "options_total": len(result.options),
        "uncertainty": presenters.uncertainty_rows(result),
        "family_accuracy": presenters.family_accuracy(result),
        "number_format": presenters.number_format_words(result),
        "inference": result.is_inference,
        "topology": charts.topology_layout(result),
        "has_scaling": bool(charts.scaling_series(result)),
        "scaling_words": charts.scaling_words(result),
        "has_alternatives": len(result.options) > 1,
        "rag": rag_section(result),
    }


def _failure_errors(run: ScenarioRun, scenario: Scenario) -> list[dict[str, str]]:
    """A failed run's field errors next to the question each one is about."""
    catalog = catalog_current()
    steps = qn.build_steps(catalog)
    answers = qn.inputs_to_answers(scenario.inputs, catalog)
    out = []
    for name, msgs in qn.errors_by_question(run.error_fields or {}, steps, answers).items():
        question = next((q for s in steps for q in s.questions if q.name == name), None)
        for message in msgs:
            out.append({"question": question.label if question else "", "message": message})
    return out


def scenario_detail(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    # Read-only: opening a link remembers nothing (only what this browser created is ever
    # claimed at sign-up, frontend.access), and a GET writes no session row either.
    scenario = scenario_or_404(request, scenario_id)
    # The history table needs no result: never load (and parse) those large JSON columns.
    history = list(scenario.runs.order_by("-created_at").defer("result", "error_fields")[:10])
    # The calibrated runs, read once: the panel lists them and they tell which run is quoted
    # and which label the shown run carries (advisor.measurements.selectors).
    calibrations = scenario_calibrations(scenario_id=scenario.pk)
    # No calibrated run: the quoted run is the newest run, the history's first (run_quoted's
    # rule, without asking the database again).
    quoted = (
        (history[0] if history else None) if not calibrations else run_quoted(scenario=scenario)
    )
    run = _requested_run(request, scenario) or quoted
    is_sales = user_is_sales(request.user)
    catalog_version_now = catalog_current().version
    context: dict[str, Any] = {
        "scenario": scenario,
        "run": run,
        "nav": "list",
        "is_sales_view": is_sales,
        "catalog_version_now": catalog_version_now,
        "runs": history,
        "calibrated_runs": calibrations,
        # Which answer this page shows: the quoted one, or a calibrated side run on request.
        "shown_label": run_calibration_label(run=run, scenario_links=calibrations),
        "is_quoted": run is not None and quoted is not None and run.pk == quoted.pk,
        "run_query": f"?run={run.pk}" if run is not None and run != quoted else "",
    }
    if run is None:
        return render(request, "frontend/scenario_pending.html", context)
    if not run.is_finished:
        context["poll_ms"] = progress_poll_ms(run)
        return render(request, "frontend/scenario_progress.html", context)
    if run.status == RunStatus.FAILED:
        context["errors"] = _failure_errors(run, scenario)
        context["shown_run"] = run_quoted_succeeded(scenario=scenario)
        return render(request, "frontend/scenario_failed.html", context, status=200)
    try:
        result = stored_result(run) or EngineResult()
        context.update(result_context(result, run=run))
        context["whatif"] = whatif_context(scenario, run, result)
        context["stale_catalog"] = run.catalog_version not in ("", catalog_version_now)
        return _render_result_page(request, run, context)
    except READ_ERRORS as exc:
        # A stored result that parses but whose values the page cannot use (a wrong type).
        unreadable = UnreadableResult(run)
        unreadable.__cause__ = exc
        return unreadable_result_page(request, unreadable)


@require_GET
def scenario_progress(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """htmx poll target: the progress bar, or a refresh once the run has finished."""
    scenario = scenario_or_404(request, scenario_id)
    run = run_latest(scenario=scenario)
    if run is None or run.is_finished:
        response = HttpResponse(status=204 if run is None else 200)
        response["HX-Refresh"] = "true"
        return response
    context = {"scenario": scenario, "run": run, "poll_ms": progress_poll_ms(run)}
    return render(request, "frontend/_progress.html", context)


# How often the progress page asks whether its run finished, by the run's age: most runs take
# well under a second, so a fixed 1 s poll made a person wait ~0.5 s more on average (and
# 1 s at the first poll) than the run took; older runs are long ones, polled less often.
PROGRESS_POLLS_MS: tuple[tuple[float, int], ...] = ((5.0, 250), (30.0, 500))
PROGRESS_POLL_SLOW_MS = 1000


def progress_poll_ms(run: ScenarioRun) -> int:
    """The progress bar's next poll, in milliseconds (see PROGRESS_POLLS_MS)."""
    age_s = (timezone.now() - run.created_at).total_seconds() if run.created_at else 0.0
    for younger_than_s, every_ms in PROGRESS_POLLS_MS:
        if age_s < younger_than_s:
            return every_ms
    return PROGRESS_POLL_SLOW_MS


@require_POST
def scenario_rerun(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """Compute the scenario again on the current hardware catalog."""
    scenario = scenario_or_404(request, scenario_id)
    if not anonymous_allowed(request, "run"):
        return too_many(request)
    try:
        run_start(scenario=scenario)  # one unfinished run per scenario, as in the API
    except RunInProgress:
        messages.info(request, "This scenario is already being computed; its answer follows.")
    else:
        messages.info(request, "Computing again on the current hardware catalog.")
    return redirect("scenario_detail", scenario_id=scenario.pk)


@require_POST
def scenario_edit(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """Open the questionnaire on this scenario's answers; submitting changes it and recomputes."""
    scenario = scenario_or_404(request, scenario_id)
    if not anonymous_allowed(request, "draft"):
        return too_many(request)
    # Whoever may open the scenario may open its draft: an anonymous scenario's draft is
    # anonymous too, an owned scenario's draft belongs to the same owner. A draft writes to
    # its scenario only while their owners match (frontend.access.draft_may_write_scenario).
    draft = _draft_of(request, scenario, owner=scenario.owner)
    return redirect("wizard_step", draft_id=draft.pk, step="job")


def _draft_of(
    request: HttpRequest,
    scenario: Scenario,
    *,
    owner: AbstractBaseUser | AnonymousUser | None,
) -> QuestionnaireDraft:
    """A questionnaire draft holding `scenario`'s answers (name and customer included), opened
    at its first step and remembered for this visitor."""
    answers = qn.inputs_to_answers(scenario.inputs, catalog_current())
    answers["name"] = scenario.name
    answers["customer"] = scenario.customer
    draft = draft_create(owner=owner, answers=answers, step="job", scenario=scenario)
    remember_created_draft(request, draft)
    return draft


@require_POST
def scenario_clone_view(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """A copy to change without touching the original (kept with a link back to it)."""
    scenario = scenario_or_404(request, scenario_id)
    if not anonymous_allowed(request, "scenario"):
        return too_many(request)
    clone = scenario_clone(scenario=scenario, owner=request.user)
    remember_created_scenario(request, clone)
    draft = _draft_of(request, clone, owner=request.user)
    messages.success(
        request,
        f"Copied to “{clone.name}”. The notes and quote reference stay with the original. "
        "Change what you need, then compute.",
    )
    return redirect("wizard_step", draft_id=draft.pk, step="job")


@require_POST
def scenario_notes(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """Sales engineers annotate a scenario (and set its customer); htmx or plain POST."""
    scenario = scenario_or_404(request, scenario_id)
    if not user_is_sales(request.user):
        raise Http404("No such page")
    notes = request.POST.get("notes", "")[:20000]
    customer = request.POST.get("customer", scenario.customer)[:200].strip()
    reference = request.POST.get("quote_reference", scenario.quote_reference)[:64].strip()
    scenario_update(scenario=scenario, notes=notes, customer=customer, quote_reference=reference)
    if request.headers.get("HX-Request"):
        return render(request, "frontend/_notes_saved.html", {"scenario": scenario})
    messages.success(request, "Notes saved.")
    return redirect("scenario_detail", scenario_id=scenario.pk)


# ---------------------------------------------------------------------------------------------
# Exports


def _requested_run(request: HttpRequest, scenario: Scenario) -> ScenarioRun | None:
    """The run asked for with ?run=<id> (a calibrated side run), None when none was asked;
    a run of another scenario, or no such run, is a 404."""
    wanted = request.GET.get("run")
    if not wanted:
        return None
    run = run_of_scenario(scenario=scenario, run_id=wanted)
    if run is None:
        raise Http404("No such run of this scenario")
    return run


def _result_or_404(request: HttpRequest, scenario_id: uuid.UUID) -> tuple[Scenario, ScenarioRun]:
    """The scenario and the run an export shows: its quoted answer unless ?run= asks for
    another of its runs (a calibrated one)."""
    scenario = scenario_or_404(request, scenario_id)
    run = _requested_run(request, scenario) or run_quoted_succeeded(scenario=scenario)
    if run is None or stored_result(run) is None:
        raise Http404("This scenario has no result yet")
    return scenario, run


@require_GET
def export_json(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    scenario, run = _result_or_404(request, scenario_id)
    payload = {
        "scenario": {"id": str(scenario.pk), "name": scenario.name, "inputs": scenario.inputs},
        "run": {
            "id": str(run.pk),
            "engine_version": run.engine_version,
            "catalog_version": run.catalog_version,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "shows": run_calibration_label(run=run),
        },
        "result": served_result(run),
    }
    response = JsonResponse(payload, json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="{export_filename(scenario, "json")}"'
    return response


# Columns of the BOM CSV: (header a spreadsheet shows, BomLine field).
BOM_COLUMNS = (
    ("Network", "network"),
    ("Category", "category"),
    ("Part number", "part_number"),
    ("Description", "description"),
    ("For", "role"),
    ("Quantity", "quantity"),
    ("Unit price (USD)", "unit_price_usd"),
    ("Extended price (USD)", "extended_price_usd"),
    ("Power (W)", "power_w"),
    ("Source", "source"),
)


def _bom_cell(line: Any, field: str) -> Any:
    value = getattr(line, field)
    if field == "network":
        return network_label(str(value))
    if field == "category":
        return bom_category_label(str(value))
    if field == "part_number":
        number = presenters.line_part_number(line)
        return "" if number == "–" else number
    if field == "description":
        return spreadsheet_cell(presenters.line_description(line))
    if field == "role":
        return bom_role_label(str(value)) if value else ""
    return spreadsheet_cell(value)


@require_GET
def export_bom_csv(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    scenario, run = _result_or_404(request, scenario_id)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    filename = export_filename(scenario, "bom.csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow([header for header, _field in BOM_COLUMNS])
    result = stored_result(run) or EngineResult()
    for line in result.bom:
        writer.writerow([_bom_cell(line, field) for _header, field in BOM_COLUMNS])
    # The costs, each labelled, after the lines (network capex is the sum of the lines).
    writer.writerow([])
    for row in presenters.cost_figures(result.cost)["rows"]:
        writer.writerow(
            ["", "Cost", "", spreadsheet_cell(row["label"]), "", "", round(row["usd"], 2)]
        )
    writer.writerow(["", "Network model", "", spreadsheet_cell(run_calibration_label(run=run))])
    return response


def person(user: Any) -> tuple[str, str]:
    """A signed-in person's name and e-mail for the report's cover ('' when anonymous)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return "", ""
    name = (user.get_full_name() or "").strip() or user.get_username()
    return name, str(getattr(user, "email", "") or "")


@require_GET
def export_pdf(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    scenario, run = _result_or_404(request, scenario_id)
    # Drawing a PDF takes a web worker for seconds: anonymous visitors get a few per window.
    if not anonymous_allowed(request, "export"):
        return too_many(request)
    name, email = person(request.user)
    if not name and scenario.owner is not None and user_is_sales(scenario.owner):
        name, email = person(scenario.owner)
    pdf = report_pdf(
        scenario,
        run,
        prepared_by=name or "Fabric Advisor (self-service)",
        contact=email,
        link=request.build_absolute_uri(f"/s/{scenario.pk}/"),
    )
    response = HttpResponse(pdf, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{pdf_filename(scenario)}"'
    return response
