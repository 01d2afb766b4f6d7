"""Writes: every change to scenarios and runs goes through these functions."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from advisor.measurements.selectors import run_calibration_fit
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.claims import (
    BROKER_ERRORS,
    NOT_ENGINE_ERRORS,
    RUN_TASK,
    TRANSIENT_DB_ERRORS,
    UNFINISHED,
    ClaimLost,
    heartbeating,
    mark_unsent,
    send_task_by_name,
    tasks_run_in_process,
    work_claim,
    work_execute,
    work_heartbeat,
    work_reconcile,
)
from advisor.scenarios.engine_calls import InvalidScenario, evaluate_inputs, validate_inputs
from advisor.scenarios.figures import Figures, draw_ahead, store_finished
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.results import result_json
from advisor.scenarios.signals import run_finished
from advisor.scenarios.timelimit import EvaluationTimeout, wall_time_limit

logger = logging.getLogger(__name__)

# Progress writes are throttled to steps of this many percent, and to one per
# PROGRESS_EVERY_S seconds of the evaluation: a run done in a fraction of a second (most of
# them) writes no progress at all, where a 5 % step alone made ~13 UPDATEs of its row (each a
# commit the database and the run's wall time pay, under load as much as the engine's work);
# the page polls its progress every few seconds, so nothing a person could see is lost.
PROGRESS_STEP_PCT = 5
PROGRESS_EVERY_S = 0.5


def owner_or_none(user: AbstractBaseUser | AnonymousUser | None) -> Any:
    """The user to record as owner: None for an anonymous visitor."""
    return user if user is not None and user.is_authenticated else None


# No transaction of its own: the checks write nothing and the scenario is one INSERT; a
# caller that writes more (the saved what-if) holds it in its own, without a savepoint.
def scenario_create(
    *,
    name: str,
    inputs: dict[str, Any],
    owner: AbstractBaseUser | AnonymousUser | None = None,
    customer: str = "",
    callback_url: str = "",
    cloned_from: Scenario | None = None,
) -> Scenario:
    """Save a scenario after checking its inputs; bad inputs raise InvalidScenario."""
    validate_inputs(inputs, catalog=catalog_current())
    return Scenario.objects.create(
        name=name,
        inputs=inputs,
        owner=owner_or_none(owner),
        customer=customer,
        callback_url=callback_url,
        cloned_from=cloned_from,
    )


@transaction.atomic
def scenario_update(*, scenario: Scenario, **fields: Any) -> Scenario:
    allowed = {"name", "inputs", "customer", "notes", "quote_reference", "callback_url"}
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"cannot update {sorted(unknown)}")
    if "inputs" in fields:
        validate_inputs(fields["inputs"], catalog=catalog_current())
    for key, value in fields.items():
        setattr(scenario, key, value)
    scenario.save(update_fields=[*fields, "updated_at"])
    return scenario


@transaction.atomic
def scenario_clone(
    *, scenario: Scenario, owner: AbstractBaseUser | AnonymousUser | None, name: str = ""
) -> Scenario:
    return Scenario.objects.create(
        name=name or f"{scenario.name} (copy)",
        inputs=scenario.inputs,
        owner=owner_or_none(owner),
        customer=scenario.customer,
        # Notes and the quote reference belong to the original's quote, not to the copy.
        cloned_from=scenario,
    )


def run_enqueue(*, scenario: Scenario, draw_figures: bool = True) -> ScenarioRun:
    """Create a QUEUED run; its task is sent only once this transaction commits (at once
    when called outside one: the run's single INSERT has committed by then). No transaction
    of its own, so a caller's holds it without a savepoint. ``draw_figures``: the worker draws
    the run's figures as it finishes it (a run asked for from the pages; the API passes False:
    ``ScenarioRun.draw_figures``)."""
    run = ScenarioRun.objects.create(
        scenario=scenario, enqueued_at=timezone.now(), draw_figures=draw_figures
    )
    # delay_on_commit, made robust: a broker that is down at commit time must not turn a saved
    # submission into an error; the run stays QUEUED and the reconciler sends it again.
    transaction.on_commit(partial(_run_publish, run.id))
    return run


class RunInProgress(Exception):
    """The scenario already has an unfinished run; `run` is that run."""

    def __init__(self, run: ScenarioRun) -> None:
        self.run = run
        super().__init__(
            f"Run {run.pk} of this scenario is still {run.status}; "
            "wait for it to finish before starting another."
        )


@transaction.atomic
def run_start(*, scenario: Scenario, draw_figures: bool = True) -> ScenarioRun:
    """Queue a new run of a scenario, unless one is unfinished (raises RunInProgress).

    One unfinished run per scenario, for the web and the API alike: the scenario row is
    locked (PostgreSQL: SELECT ... FOR UPDATE; SQLite: every transaction takes the write lock
    when it begins) so two concurrent requests cannot both see "nothing in progress".
    ``draw_figures``: as :func:`run_enqueue`'s.
    """
    Scenario.objects.select_for_update().only("pk").get(pk=scenario.pk)
    active = (
        ScenarioRun.objects.filter(scenario_id=scenario.pk, status__in=UNFINISHED)
        .order_by("-created_at")
        .first()
    )
    if active is not None:
        raise RunInProgress(active)
    return run_enqueue(scenario=scenario, draw_figures=draw_figures)


def scenario_submit(
    *,
    name: str,
    inputs: dict[str, Any],
    owner: AbstractBaseUser | AnonymousUser | None = None,
    customer: str = "",
    callback_url: str = "",
    draw_figures: bool = True,
) -> ScenarioRun:
    """Save a scenario and queue its first run (the questionnaire's and the API's path;
    ``draw_figures``: as :func:`run_enqueue`'s).

    Bad inputs raise InvalidScenario before anything is written; the scenario and its run
    are then written together, in the caller's transaction when there is one (the API's
    idempotent submission) without a savepoint of their own: a database error there ends
    the caller's transaction anyway."""
    validate_inputs(inputs, catalog=catalog_current())
    with transaction.atomic(savepoint=False):
        scenario = Scenario.objects.create(
            name=name,
            inputs=inputs,
            owner=owner_or_none(owner),
            customer=customer,
            callback_url=callback_url,
        )
        return run_enqueue(scenario=scenario, draw_figures=draw_figures)


# --- Run lifecycle ---------------------------------------------------------------------------
# A run is ClaimedWork: claimed, heartbeated, executed and reconciled by advisor.scenarios.claims.


def _runs_publish(run_ids: Sequence[uuid.UUID]) -> None:
    for run_id in run_ids:
        _run_publish(run_id)


def _run_publish(run_id: uuid.UUID) -> bool:
    """Send the run's message; a broker outage is logged and left to the reconciler (the run
    is marked unsent, so its next tick sends it)."""
    try:
        send_task_by_name(RUN_TASK, str(run_id))
    except BROKER_ERRORS:
        logger.warning(
            "run %s not sent (broker unreachable); the reconciler will resend it", run_id
        )
        mark_unsent(ScenarioRun, [run_id])
        return False
    return True


def run_claim(*, run_id: uuid.UUID, resume_token: uuid.UUID | None = None) -> uuid.UUID | None:
    """Atomically take a run: QUEUED, or RUNNING with an expired heartbeat.

    `resume_token` lets a retry after a database blip continue its own claim (nobody else has
    taken the run meanwhile). Returns the claim token, or None when another worker holds the
    run or it has finished (a redelivered message then does nothing).
    """
    return work_claim(ScenarioRun, pk=run_id, resume_token=resume_token, progress=0)


def run_heartbeat(*, run_id: uuid.UUID, token: uuid.UUID, progress: int | None = None) -> bool:
    """Record liveness (and progress); False when the claim was lost to another worker."""
    fields: dict[str, Any] = {} if progress is None else {"progress": max(0, min(99, progress))}
    return work_heartbeat(ScenarioRun, pk=run_id, token=token, **fields)


def _run_finish(
    *,
    run_id: uuid.UUID,
    token: uuid.UUID,
    status: RunStatus,
    figures: Figures | None = None,
    **fields: Any,
) -> bool:
    """Finish a claimed run with ``fields``; ``figures`` (drawn ahead, :func:`_run_evaluate`)
    are stored in the same transaction, so a page that sees the run finished finds them."""
    finished_at = timezone.now()
    with transaction.atomic():
        finished = ScenarioRun.objects.filter(
            pk=run_id, claim_token=token, status=RunStatus.RUNNING
        ).update(status=status, finished_at=finished_at, **fields)
        if finished:
            if figures is not None:
                store_finished(
                    run_id,
                    finished_at=finished_at,
                    engine_version=fields["engine_version"],
                    catalog_version=fields["catalog_version"],
                    figures=figures,
                )
            run_finished.send(sender=ScenarioRun, run_id=run_id)
    return bool(finished)


@contextmanager
def _in_request_limit() -> Iterator[Callable[[Callable[[int], None]], Callable[[int], None]]]:
    """Embedded mode evaluates inside the web request: bound its wall time there."""
    if not tasks_run_in_process():  # a worker: Celery's own time limits apply
        yield lambda report: report
        return
    with wall_time_limit(settings.ENGINE_IN_REQUEST_TIME_LIMIT_S) as deadline:
        yield deadline.progress


def _run_evaluate(*, run_id: uuid.UUID, token: uuid.UUID) -> dict[str, Any]:
    """Evaluate a claimed run; return the fields that finish it (SUCCEEDED or FAILED)."""
    run = ScenarioRun.objects.select_related("scenario").get(pk=run_id)
    last_pct = 0
    last_write = time.monotonic()

    def report(pct: int) -> None:
        nonlocal last_pct, last_write
        if heartbeat.lost:
            raise ClaimLost
        if pct - last_pct < PROGRESS_STEP_PCT:
            return
        now = time.monotonic()
        if now - last_write < PROGRESS_EVERY_S:
            return
        last_pct, last_write = pct, now
        try:
            alive = run_heartbeat(run_id=run_id, token=token, progress=pct)
        except TRANSIENT_DB_ERRORS:
            # A progress write is not worth abandoning the evaluation for; finishing retries.
            logger.warning("run %s: progress not recorded (database error)", run_id)
            return
        if not alive:
            raise ClaimLost

    with heartbeating(ScenarioRun, pk=run_id, token=token) as heartbeat:
        try:
            with _in_request_limit() as deadline:
                catalog = catalog_current()
                # A run queued with a customer's measurement evaluates with its fit.
                calibration = run_calibration_fit(run=run, catalog=catalog)
                extra: dict[str, Any] = {"calibration": calibration} if calibration else {}
                result = evaluate_inputs(
                    run.scenario.inputs, catalog=catalog, progress=deadline(report), **extra
                )
            stored = result_json(result)
            # A run its person waits to see on a page: its figures are drawn now, by the
            # worker, and stored as it finishes (advisor.scenarios.figures).
            figures = draw_ahead(stored) if run.draw_figures else None
        except InvalidScenario as exc:
            return {
                "status": RunStatus.FAILED,
                "error": str(exc),
                "error_fields": exc.field_errors,
                "progress": 100,
            }
        except SoftTimeLimitExceeded:
            limit_s = settings.CELERY_TASK_SOFT_TIME_LIMIT
            return {
                "status": RunStatus.FAILED,
                "error": f"The evaluation took longer than the {limit_s} s allowed.",
                "progress": 100,
            }
        except EvaluationTimeout as exc:
            return {
                "status": RunStatus.FAILED,
                "error": (
                    f"The evaluation took longer than the {exc.limit_s:g} s a web process "
                    "allows (embedded mode computes inside the request); run a worker "
                    "(services mode) for scenarios this large."
                ),
                "progress": 100,
            }
        except NOT_ENGINE_ERRORS:
            raise
        except Exception as exc:  # an engine bug must end the run with a reason, not leave it stuck
            logger.exception("run %s failed in the engine", run_id)
            return {
                "status": RunStatus.FAILED,
                "error": f"Engine error: {type(exc).__name__}: {exc}",
                "progress": 100,
            }
    if heartbeat.lost:
        raise ClaimLost
    return {
        "status": RunStatus.SUCCEEDED,
        "result": stored,
        "figures": figures,
        "progress": 100,
        "error": "",
        "error_fields": None,
        "engine_version": result.engine_version,
        "catalog_version": result.catalog_version,
    }


def run_execute(*, run_id: uuid.UUID, resume_token: uuid.UUID | None = None) -> RunStatus | None:
    """Claim a run, evaluate its scenario with the engine, and store the outcome.

    Idempotent: a second delivery of the same message finds the run claimed or finished
    and returns None. Only the claimant can finish a run, so it completes at most once.
    A database error after the claim raises WorkInterrupted carrying the claim token, so the
    task's retry resumes this claim instead of waiting for it to go stale.
    """

    def perform(token: uuid.UUID) -> RunStatus | None:
        outcome = _run_evaluate(run_id=run_id, token=token)
        if not _run_finish(run_id=run_id, token=token, **outcome):
            return None
        return RunStatus(outcome["status"])

    status = work_execute(
        ScenarioRun, pk=run_id, resume_token=resume_token, perform=perform, progress=0
    )
    if status is not None:
        logger.info("run %s %s", run_id, status.value)
    return status


def run_fail(*, run_id: uuid.UUID, reason: str, token: uuid.UUID | None = None) -> bool:
    """Mark an unfinished run FAILED with a reason (engine bug, time limit, gave up).

    With `token`, only while that claim still holds it (a worker failing its own run).
    """
    unfinished = ScenarioRun.objects.filter(pk=run_id, status__in=UNFINISHED)
    if token is not None:
        unfinished = unfinished.filter(claim_token=token)
    return _runs_fail(unfinished, reason=reason) > 0


def _runs_fail(runs: QuerySet[ScenarioRun], *, reason: str) -> int:
    return sum(
        _run_fail_one(runs, run_id, reason) for run_id in list(runs.values_list("pk", flat=True))
    )


def _run_fail_one(runs: QuerySet[ScenarioRun], run_id: uuid.UUID, reason: str) -> bool:
    with transaction.atomic():
        # Re-filter per row: the row may have finished since it was listed.
        updated = runs.filter(pk=run_id).update(
            status=RunStatus.FAILED, error=reason, finished_at=timezone.now(), progress=100
        )
        if updated:
            run_finished.send(sender=ScenarioRun, run_id=run_id)
    return bool(updated)


def runs_reconcile(
    *, now: datetime | None = None, limit: int = 500, broker_lost: bool = False
) -> dict[str, int]:
    """The backstop behind the broker for runs (advisor.scenarios.claims.work_reconcile)."""
    return work_reconcile(
        ScenarioRun,
        kind="runs",
        give_up=_run_fail_one,
        gave_up_reason=(
            f"Gave up after {settings.RUN_MAX_ATTEMPTS} attempts: the worker evaluating this "
            "scenario stopped responding each time."
        ),
        publish=_runs_publish,
        broker_lost=broker_lost,
        now=now,
        limit=limit,
        progress=0,
    )


@transaction.atomic
def scenario_claim_anonymous(
    *, user: AbstractBaseUser, scenario_ids: list[str] | list[uuid.UUID]
) -> int:
    """Give a newly signed-up (or signed-in) person the anonymous scenarios they made.

    Only scenarios without an owner are taken, so nobody can claim someone else's work;
    the ids must be those the person's own session *created* (never those it merely
    opened: frontend.access.created_scenario_ids). Returns how many were claimed.
    """
    valid: list[uuid.UUID] = []
    for raw in scenario_ids:
        try:
            valid.append(raw if isinstance(raw, uuid.UUID) else uuid.UUID(str(raw)))
        except ValueError:
            continue
    if not valid or not user.is_authenticated:
        return 0
    return Scenario.objects.filter(pk__in=valid, owner__isnull=True).update(owner=user)
