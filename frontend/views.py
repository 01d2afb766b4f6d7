"""Home, scenario lists (a customer's own, the sales workspace), comparison, accuracy, accounts."""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.views.decorators.http import require_http_methods

from advisor.engine.facts.vocabulary import fabric_label
from advisor.reports import charts, presenters
from advisor.scenarios.models import Scenario
from advisor.scenarios.results import READ_ERRORS, UnreadableResult, stored_summary
from advisor.scenarios.selectors import (
    runs_latest_of,
    scenario_get,
    scenario_list,
    scenarios_with_latest_run,
    user_is_sales,
)
from frontend.access import (
    created_draft_ids,
    created_scenario_ids,
    remembered_draft_ids,
    remembered_scenario_ids,
)
from frontend.example import home_example
from frontend.models import QuestionnaireDraft
from frontend.services import account_claim_session
from frontend.signup import NOT_CREATED, QuietSignUpForm
from frontend.throttle import (
    TOO_MANY_ATTEMPTS,
    CountersUnavailable,
    attempt_allowed,
    unavailable,
)

LIST_LIMIT = 200


def _with_latest_runs(scenarios: list[Scenario]) -> list[dict[str, Any]]:
    latest = runs_latest_of(scenarios)
    rows = []
    for scenario in scenarios:
        run = latest.get(scenario.pk)
        fabric, capex, unreadable = "", None, False
        try:
            summary = stored_summary(run)
            if summary is not None:
                rec, cost = summary
                fabric = (
                    fabric_label(rec.fabric) if rec.needs_compute_fabric else "No compute fabric"
                )
                capex = float(cost.network_capex_usd)
        except (UnreadableResult, *READ_ERRORS):
            # One damaged result marks its row; it never takes the whole list down.
            fabric, capex, unreadable = "", None, True
        row = {"scenario": scenario, "run": run, "fabric": fabric, "capex": capex}
        rows.append({**row, "unreadable": unreadable})
    return rows


def home(request: HttpRequest) -> HttpResponse:
    recent: list[Scenario] = []
    if request.user.is_authenticated:
        recent = list(scenario_list(user=request.user)[:5])
    else:
        ids = remembered_scenario_ids(request)[:5]
        recent = [
            s
            for s in (scenario_get(scenario_id=i, user=request.user) for i in ids)
            if s is not None
        ]
    drafts = _my_drafts(request)[:3]
    return render(
        request,
        "frontend/home.html",
        {
            "run_mode": settings.RUN_MODE,
            "recent": recent,
            "drafts": drafts,
            "nav": "home",
            "example": home_example(),
        },
    )


def _my_drafts(request: HttpRequest) -> list[QuestionnaireDraft]:
    qs = QuestionnaireDraft.objects.filter(scenario__isnull=True).order_by("-updated_at")
    if request.user.is_authenticated:
        return list(qs.filter(owner=request.user)[:10])
    ids = remembered_draft_ids(request)
    return list(qs.filter(pk__in=ids, owner__isnull=True)[:10])


def scenario_list_view(request: HttpRequest) -> HttpResponse:
    """Sales: every scenario, searchable and filterable by customer. Others: their own."""
    is_sales = user_is_sales(request.user)
    query = request.GET.get("q", "").strip()
    customer = request.GET.get("customer", "").strip()
    customers: list[str] = []
    if request.user.is_authenticated:
        qs = scenarios_with_latest_run(scenario_list(user=request.user))
        if is_sales:
            customers = sorted(
                {
                    c
                    for c in Scenario.objects.exclude(customer="").values_list(
                        "customer", flat=True
                    )
                }
            )
        if query:
            qs = qs.filter(
                Q(name__icontains=query) | Q(customer__icontains=query) | Q(notes__icontains=query)
            )
        if customer:
            qs = qs.filter(customer=customer)
        scenarios = list(qs[:LIST_LIMIT])
    else:
        ids = remembered_scenario_ids(request)
        found = scenarios_with_latest_run(Scenario.objects.filter(pk__in=ids, owner__isnull=True))
        by_id = {str(s.pk): s for s in found}
        scenarios = [by_id[i] for i in ids if i in by_id]
    return render(
        request,
        "frontend/scenario_list.html",
        {
            "nav": "list",
            "rows": _with_latest_runs(scenarios),
            "query": query,
            "customer": customer,
            "customers": customers,
            "is_sales_view": is_sales,
            "drafts": _my_drafts(request),
        },
    )


def accuracy(request: HttpRequest) -> HttpResponse:
    """The engine's predictions next to published measurements, each with its source."""
    from advisor.engine import ENGINE_VERSION

    # A copy: template tags may assign into the top context dict.
    return render(request, "frontend/accuracy.html", dict(_accuracy_context(ENGINE_VERSION)))


@functools.lru_cache(maxsize=2)
def _accuracy_context(engine_version: str) -> dict[str, Any]:
    """The report depends only on the engine's code and calibration data: build it once."""
    from advisor.engine.result.validation_report import ValidationReport
    from advisor.engine.tools.validation import validation_report

    report = ValidationReport.from_dict(validation_report())
    rows = list(report.rows)
    groups = []
    for kind in sorted({r.kind for r in rows}, key=_kind_order):
        members = [r for r in rows if r.kind == kind]
        errors = sorted(abs(_float(r.error_pct)) for r in members)
        groups.append(
            {
                "kind": kind,
                "label": presenters.kind_label(kind),
                "rows": members,
                "passed": sum(1 for r in members if r.passed),
                "median_error": errors[len(errors) // 2] if errors else None,
                "max_error": errors[-1] if errors else None,
            }
        )
    measured = sorted(abs(_float(r.error_pct)) for r in rows if r.kind != "topology")
    figure = charts.validation_figure(report)
    bands, coverage = _residual_bands()
    summary = report.summary
    by_use = summary.mae_by_use
    return {
        "nav": "accuracy",
        "engine_version": engine_version,
        "report": report,
        "groups": groups,
        "passed": sum(1 for r in rows if r.passed),
        "total": len(rows),
        "median_error": measured[len(measured) // 2] if measured else None,
        "measured_count": len(measured),
        "figure": figure,
        "bands": bands,
        "coverage": coverage,
        "held_out": {
            "mae_pct": summary.held_out_mae_pct,
            "lines": summary.held_out_lines,
            "rows": summary.held_out_rows,
            "within_tolerance": summary.held_out_within_tolerance,
            "loo_inside": summary.held_out_loo_inside,
            "loo_share_pct": _pct(summary.held_out_loo_coverage),
            "baseline_mae_pct": summary.held_out_baseline_mae_pct,
        },
        # held-out rows no model change was aimed at, nor made after their prediction was seen
        "unseen": {
            "mae_pct": summary.held_out_unseen_mae_pct,
            "lines": summary.held_out_unseen_lines,
            "rows": summary.held_out_unseen_rows,
            "loo_inside": summary.held_out_unseen_loo_inside,
            "loo_share_pct": _pct(summary.held_out_unseen_loo_coverage),
            "looked_at_rows": summary.held_out_looked_at_rows,
        },
        "uses": [
            {"use": use, "label": USE_LABELS[use], **by_use[use]}
            for use in ("held_out", "development", "fitted")
            if use in by_use
        ],
        "kinds": [
            {"kind": presenters.kind_label(kind), **entry}
            for kind, entry in summary.mae_by_kind.items()
        ],
        # held-out error per family of predictions, worst first: where the model is weak
        "pools": sorted(
            (
                {"pool": pool, "label": presenters.pool_label(pool), **entry}
                for pool, entry in summary.held_out_mae_by_pool.items()
            ),
            key=lambda p: -_float(p["mae_pct"]),
        ),
        "arithmetic": summary.arithmetic_checks,
    }


USE_LABELS = {
    "held_out": "Held out: never used to set or choose anything",
    "development": "Development: watched while the model changed",
    "fitted": "Fitted: a constant was set on the row",
    "arithmetic": "Topology arithmetic (exact, not accuracy)",
}


def _pct(share: Any) -> float | None:
    return None if share is None else _float(share) * 100.0


def _residual_bands() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The calibration residuals by kind and GPU generation, and the band each sets on results
    (advisor.engine.tools.validation.model_error_band), with the share of held-out measurements
    inside the same band computed without their own row (leave-one-out)."""
    import math

    from advisor.engine.tools.validation import band_coverage, model_error_band, residual_table

    table = residual_table()
    bands = []
    # keyed by residual pool (a kind, MoE serving apart): named as the accuracy table names them
    for (pool, gen), values in sorted(table.items()):
        if gen == "*" or not values:
            continue
        low, high = model_error_band(pool, gen)
        bands.append(
            {
                "kind": presenters.pool_label(pool),
                "generation": gen,
                "count": len(values),
                "fastest_pct": (math.exp(min(values)) - 1.0) * 100.0,
                "slowest_pct": (math.exp(max(values)) - 1.0) * 100.0,
                "band_low_pct": (low - 1.0) * 100.0,
                "band_high_pct": (high - 1.0) * 100.0,
            }
        )
    cov = band_coverage("held_out")
    return bands, {"inside": cov["inside"], "total": cov["total"], "share": cov["share"] * 100.0}


def _kind_order(kind: str) -> tuple[int, str]:
    order = ("collective", "all_to_all", "training", "topology")
    return (order.index(kind) if kind in order else len(order), kind)


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


# ---------------------------------------------------------------------------------------------
# Accounts


class PasswordChangeView(auth_views.PasswordChangeView):
    """Every account (customers, sales engineers, staff) changes its own password here.

    The old password is asked first; a wrong one counts against the same per-address limit
    as sign-up, so a stolen session cannot be used to guess it.
    """

    template_name = "registration/password_change_form.html"
    success_url = reverse_lazy("password_change_done")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            allowed = attempt_allowed(request, "password_change")
        except CountersUnavailable:
            return unavailable(request, self.template_name)
        if not allowed:
            context = self.get_context_data(throttled=TOO_MANY_ATTEMPTS)
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)


class SignInView(LoginView):
    """Sign-in. Failed attempts are limited per client address by django-axes
    (settings.AXES_*, frontend.throttle.locked_out), here and on the admin's login alike."""

    template_name = "registration/login.html"
    form_class = AuthenticationForm
    redirect_authenticated_user = True

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        # Only what this browser *created* is claimed, never what it merely opened.
        ids = created_scenario_ids(self.request)
        draft_ids = created_draft_ids(self.request)
        response = super().form_valid(form)
        # login() rotates the session; what this browser made anonymously moves with it.
        claimed = account_claim_session(
            user=self.request.user,  # type: ignore[arg-type]
            scenario_ids=ids,
            draft_ids=draft_ids,
        )
        if claimed:
            messages.success(
                self.request, f"{claimed} scenario(s) from this browser are now yours."
            )
        return response


def _create_user(form: QuietSignUpForm) -> User | None:
    """The new account, or None when another sign-up took the name a moment ago."""
    try:
        with transaction.atomic():
            return form.save()
    except IntegrityError:
        return None


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("scenario_list")
    form = QuietSignUpForm(request.POST or None)
    if request.method == "POST":
        try:
            allowed = attempt_allowed(request, "signup")
        except CountersUnavailable:
            return unavailable(request, "registration/signup.html")
        if not allowed:
            context = {"form": QuietSignUpForm(), "throttled": TOO_MANY_ATTEMPTS}
            return render(request, "registration/signup.html", context, status=429)
    if request.method == "POST" and form.is_valid():
        ids = created_scenario_ids(request)
        draft_ids = created_draft_ids(request)
        user = None if form.taken else _create_user(form)
        if user is None:
            # Same page, same status and the same form as any other refused sign-up.
            return render(
                request,
                "registration/signup.html",
                {
                    "form": QuietSignUpForm(initial={"username": form.cleaned_data["username"]}),
                    "not_created": NOT_CREATED,
                },
            )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        claimed = account_claim_session(user=user, scenario_ids=ids, draft_ids=draft_ids)
        note = f" Your {claimed} scenario(s) from this browser are saved to it." if claimed else ""
        messages.success(request, "Welcome! Your account is ready." + note)
        return redirect("scenario_list")
    return render(request, "registration/signup.html", {"form": form})
