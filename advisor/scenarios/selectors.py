"""Reads: who may see which scenario, its latest run, and the catalog a run was priced on."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import BooleanField, ExpressionWrapper, OuterRef, Q, QuerySet, Subquery
from django.db.models.fields.json import KeyTransform
from django.db.models.functions import Coalesce

from advisor.engine.facts.catalog import Catalog
from advisor.scenarios.catalog_store import catalog_recorded
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.results import RESULT_COLUMNS, summary_kept

_SALES_ATTR = "_fabric_is_sales"
SALES_GROUP = "sales"


def user_is_sales(user: Any) -> bool:
    """Sales engineers are staff (or members of the 'sales' group); they see every scenario.
    Asked once per user object (a request's user): a page asks several times."""
    if user is None or not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    known = getattr(user, _SALES_ATTR, None)
    if known is None:
        known = bool(user.groups.filter(name=SALES_GROUP).exists())
        user_is_sales_known(user, is_sales=known)
    return bool(known)


def user_is_sales_known(user: Any, *, is_sales: bool) -> None:
    """Record on a request's user object what a query already said about user_is_sales (the
    API's token lookup asks it in the same query as the key)."""
    # A user object that takes no attributes is asked every time.
    with contextlib.suppress(AttributeError):
        setattr(user, _SALES_ATTR, bool(is_sales))


def scenario_list(*, user: Any) -> QuerySet[Scenario]:
    qs = Scenario.objects.select_related("owner").order_by("-created_at")
    if user_is_sales(user):
        return qs
    if user is None or not user.is_authenticated:
        return qs.none()
    return qs.filter(owner=user)


def as_uuid(value: object) -> uuid.UUID | None:
    """`value` as a UUID, or None when it is not one (a malformed id is "no such thing", never
    a query that raises: a UUIDField refuses it with a ValidationError, a 500 in a view)."""
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def scenario_get(*, scenario_id: uuid.UUID | str, user: Any) -> Scenario | None:
    """A scenario the user may see. Anonymous owners' scenarios open by their link alone."""
    pk = as_uuid(scenario_id)
    if pk is None:
        return None
    try:
        scenario = Scenario.objects.select_related("owner").get(pk=pk)
    except Scenario.DoesNotExist:
        return None
    if scenario.owner_id is None or user_is_sales(user):
        return scenario
    if user is not None and user.is_authenticated and scenario.owner_id == user.pk:
        return scenario
    return None


# A calibrated run (advisor.measurements RunCalibration) is a labelled side run: it never
# becomes the scenario's quoted answer unless someone chose it (chosen_at). The quoted run is
# the newest default run or chosen calibrated run, a choice counting from when it was made.
_QUOTABLE = Q(calibration__isnull=True) | Q(calibration__chosen_at__isnull=False)


def _newest_quotable(runs: QuerySet[ScenarioRun]) -> QuerySet[ScenarioRun]:
    return (
        runs.filter(_QUOTABLE)
        .annotate(quoted_at=Coalesce("calibration__chosen_at", "created_at"))
        .order_by("-quoted_at", "-created_at")
    )


# Reads of one run leave its large JSON columns in the database: a succeeded run's typed
# result usually comes from the per-process cache (advisor.scenarios.results.stored_result,
# which loads the column on a miss), so most requests never fetch or decode it.
def _runs(scenario: Scenario) -> QuerySet[ScenarioRun]:
    return scenario.runs.defer(*RESULT_COLUMNS)


def run_quoted(*, scenario: Scenario) -> ScenarioRun | None:
    """The run whose answer the scenario quotes (page, PDF, CSV, API), whatever its status:
    the newest default run, or a calibrated run chosen since."""
    return _newest_quotable(_runs(scenario)).first()


def run_quoted_succeeded(*, scenario: Scenario) -> ScenarioRun | None:
    """The newest quotable run that has a result."""
    runs = _runs(scenario).filter(status=RunStatus.SUCCEEDED, result__isnull=False)
    return _newest_quotable(runs).first()


def run_of_scenario(*, scenario: Scenario, run_id: Any) -> ScenarioRun | None:
    """One run of this scenario by id (a calibrated side run shown on request), or None."""
    try:
        return _runs(scenario).filter(pk=run_id).first()
    except (ValueError, TypeError, ValidationError):
        return None


def scenarios_with_latest_run(scenarios: QuerySet[Scenario]) -> QuerySet[Scenario]:
    """`scenarios`, each annotated with its quoted run's `latest_run_id`, `latest_run_status`
    and `latest_run_progress` (subqueries in the one query: no run and no result loaded)."""
    latest = _newest_quotable(ScenarioRun.objects.filter(scenario=OuterRef("pk")))
    return scenarios.annotate(
        latest_run_id=Subquery(latest.values("id")[:1]),
        latest_run_status=Subquery(latest.values("status")[:1]),
        latest_run_progress=Subquery(latest.values("progress")[:1]),
    )


def runs_latest_of(scenarios: list[Scenario]) -> dict[uuid.UUID, ScenarioRun]:
    """The newest run of each of `scenarios` (annotated by scenarios_with_latest_run), by
    scenario id. The large result column stays in the database: a run whose recommendation
    and cost this process has not kept (advisor.scenarios.results.stored_summary) carries
    just these two parts (``summary_recommendation``, ``summary_cost``,
    ``summary_has_result``), read in a second query only when some are missing."""
    wanted = {getattr(s, "latest_run_id", None): s.pk for s in scenarios}
    wanted.pop(None, None)
    runs = ScenarioRun.objects.defer(*RESULT_COLUMNS, "error_fields").in_bulk(list(wanted))
    missing = [pk for pk, run in runs.items() if not summary_kept(run)]
    if missing:
        parts = ScenarioRun.objects.filter(pk__in=missing).values_list(
            "pk",
            KeyTransform("recommendation", "result"),
            KeyTransform("cost", "result"),
            ExpressionWrapper(Q(result__isnull=False), output_field=BooleanField()),
        )
        for pk, recommendation, cost, has_result in parts:
            runs[pk].__dict__.update(
                summary_recommendation=recommendation,
                summary_cost=cost,
                summary_has_result=has_result,
            )
    return {wanted[run_id]: run for run_id, run in runs.items()}


def run_latest(*, scenario: Scenario) -> ScenarioRun | None:
    """The scenario's newest run, whatever its status (the web and the API show this one)."""
    return _runs(scenario).order_by("-created_at").first()


def run_latest_succeeded(*, scenario: Scenario) -> ScenarioRun | None:
    """The scenario's newest run that has a result."""
    return (
        _runs(scenario)
        .filter(status=RunStatus.SUCCEEDED, result__isnull=False)
        .order_by("-created_at")
        .first()
    )


def run_catalog(*, run: ScenarioRun) -> Catalog:
    """The catalog the run recorded: what its options, BOMs and plans are priced on."""
    return catalog_recorded(run.catalog_version)
