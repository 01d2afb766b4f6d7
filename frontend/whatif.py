"""The result page's live what-if: price a changed design or load without a page load, and
save the chosen point as a new scenario (advisor.scenarios.whatif does the pricing for this
page and for the API alike)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from advisor.engine.errors import ScenarioError
from advisor.engine.result.records import EngineResult
from advisor.engine.tools.whatif import ANSWER, design_label
from advisor.scenarios import whatif
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import Scenario, ScenarioRun
from advisor.scenarios.results import stored_result
from advisor.scenarios.selectors import run_catalog, run_quoted_succeeded
from advisor.scenarios.services import run_enqueue, scenario_create
from advisor.scenarios.timelimit import EvaluationTimeout
from frontend.access import remember_created_scenario, scenario_or_404
from frontend.throttle import TOO_MANY_ATTEMPTS, WINDOW_S, anonymous_allowed, too_many


def _error(
    status: int, code: str, message: str, fields: dict[str, list[str]] | None = None
) -> JsonResponse:
    """The API's one error shape (api/errors.py), for the page's script."""
    body = {"error": {"code": code, "message": message, "fields": fields or {}}}
    return JsonResponse(body, status=status)


def _succeeded(
    request: HttpRequest, scenario_id: uuid.UUID
) -> tuple[Scenario, ScenarioRun, EngineResult]:
    scenario = scenario_or_404(request, scenario_id)
    run = run_quoted_succeeded(scenario=scenario)  # the figures the scenario quotes
    result = stored_result(run) if run is not None else None
    if run is None or result is None:
        raise Http404("This scenario has no result yet")
    return scenario, run, result


def _answer(scenario: Scenario, run: ScenarioRun, result: EngineResult, raw: Any) -> dict[str, Any]:
    catalog = run_catalog(run=run)
    return whatif.answer(
        inputs=scenario.inputs,
        result=result,
        raw=raw,
        catalog=catalog,
        calibration=whatif.calibration_of(run=run, result=result, catalog=catalog),
        run_id=run.pk,
    )


@require_POST
def scenario_whatif(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """POST a JSON what-if (the API's body): the priced point, or the API's error shape."""
    scenario, run, result = _succeeded(request, scenario_id)
    if not anonymous_allowed(request, "whatif"):
        response = _error(429, "throttled", TOO_MANY_ATTEMPTS)
        response["Retry-After"] = str(WINDOW_S)
        return response
    try:
        raw = json.loads(request.body or b"{}")
    except (ValueError, UnicodeDecodeError):
        return _error(400, "parse_error", "The request body is not JSON.")
    try:
        answer = _answer(scenario, run, result, raw)
    except InvalidScenario as exc:
        fields = dict(exc.field_errors)
        return _error(
            400,
            "validation_error",
            f"The what-if is invalid: check {', '.join(sorted(fields))}.",
            fields,
        )
    except EvaluationTimeout as exc:
        return _error(
            503,
            "evaluation_timeout",
            f"The what-if took longer than the {exc.limit_s:g} s allowed in a request.",
        )
    return JsonResponse(answer)


@require_POST
def scenario_whatif_save(request: HttpRequest, scenario_id: uuid.UUID) -> HttpResponse:
    """Save the what-if posted by the page's form as a new scenario (a copy with the change,
    its design fixed) and compute it."""
    scenario, run, result = _succeeded(request, scenario_id)
    if not anonymous_allowed(request, "scenario"):
        return too_many(request)
    raw = {name: request.POST[name] for name in whatif.FIELDS if request.POST.get(name, "") != ""}
    try:
        answer = _answer(scenario, run, result, raw)
    except InvalidScenario as exc:
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.field_errors.items())
        messages.error(request, f"The what-if could not be saved: {problems}")
        return redirect("scenario_detail", scenario_id=scenario.pk)
    except EvaluationTimeout:
        messages.error(request, "The what-if took too long to price; try a smaller change.")
        return redirect("scenario_detail", scenario_id=scenario.pk)
    change = answer["change"]
    size = f"{change['servers']} servers"
    if change["precision"] != answer["baseline"]["precision"]:
        size += f" at {change['precision']}"
    if change["deployment"] != answer["baseline"]["deployment"]:
        size += f", {DEPLOYMENT_LABELS[change['deployment']].lower()}"
    rate, users = change["requests_per_s"], change["concurrent_requests"]
    if rate is not None and rate != answer["baseline"]["requests_per_s"]:
        size += f", {rate:g} requests/s"
    elif users != answer["baseline"]["concurrent_requests"]:
        size += f", {users:,} users"
    name = (
        f"{scenario.name} (what if: {size})"
        if answer["priced_as"] == ANSWER  # the engine's own design: none fixed
        else f"{scenario.name} (what if: {size}, {change['nics_per_node']} x "
        f"{change['nic_gbps']:g}G {change['fabric']}, {change['oversubscription']:g}:1)"
    )
    try:
        with transaction.atomic():
            created = scenario_create(
                name=name[:200],
                inputs=answer["inputs"],
                owner=request.user,
                customer=scenario.customer,
                cloned_from=scenario,
            )
            run_enqueue(scenario=created)
    except InvalidScenario as exc:
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.field_errors.items())
        messages.error(request, f"The what-if could not be saved: {problems}")
        return redirect("scenario_detail", scenario_id=scenario.pk)
    remember_created_scenario(request, created)
    messages.success(request, "Saved the what-if as a new scenario; its answer follows.")
    return redirect("scenario_detail", scenario_id=created.pk)


DEPLOYMENT_LABELS: dict[str, str] = {
    whatif.ENGINE_CHOOSES: "The advisor's choice",
    "replicas": "Independent replicas",
    "split": "One model split across servers",
    "disaggregated": "Separate prompt and answer GPUs",
}
"""The what-if's deployment choices for people (scenario v1's ids stay in the form values)."""


def _choices(values: tuple[float, ...], current: float) -> list[dict[str, Any]]:
    return [
        {"value": f"{v:g}", "selected": v == current}
        for v in sorted({float(v) for v in values} | {float(current)})
    ]


def whatif_context(scenario: Scenario, run: ScenarioRun, result: EngineResult) -> dict[str, Any]:
    """What the result page's what-if card needs: the baseline (the recommendation) and the
    choices its controls offer."""
    catalog = run_catalog(run=run)
    try:
        base = whatif.baseline(scenario.inputs, result, catalog)
    except ScenarioError:  # inputs the current engine refuses: no what-if, the page stands
        return {}
    return {
        "base": base,
        "training": base.global_batch_sequences is not None,
        "precisions": [
            {"value": p, "selected": p == base.precision}
            for p in whatif.precisions(scenario.inputs, catalog)
        ],
        "deployments": [
            {"value": d, "label": DEPLOYMENT_LABELS[d], "selected": d == base.deployment}
            for d in whatif.DEPLOYMENT_CHOICES
        ],
        "fabrics": [
            {"value": f, "label": design_label(f), "selected": f == base.fabric}
            for f in whatif.fabrics(base)
        ],
        "nic_gbps": _choices(tuple(float(v) for v in whatif.NIC_GBPS_CHOICES), base.nic_gbps),
        "nics_per_node": _choices(
            tuple(float(v) for v in whatif.NICS_PER_NODE_CHOICES), float(base.nics_per_node)
        ),
        "oversubscription": _choices(whatif.OVERSUBSCRIPTION_CHOICES, base.oversubscription),
    }
