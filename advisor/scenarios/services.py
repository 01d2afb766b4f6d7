"""Writes: every change to scenarios and runs goes through these functions."""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from advisor.scenarios.converters import (
    InvalidScenario,
    current_catalog,
    evaluate_inputs,
    validate_inputs,
)
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.signals import run_finished

logger = logging.getLogger(__name__)

# A RUNNING run whose heartbeat is older than this is presumed orphaned (its worker died).
RUN_STALE_AFTER = timedelta(seconds=getattr(settings, "RUN_STALE_AFTER_S", 120))
# Progress writes are throttled to steps of this many percent.
PROGRESS_STEP_PCT = 5


def _owner_or_none(user: AbstractBaseUser | AnonymousUser | None) -> Any:
    return user if user is not None and user.is_authenticated else None


@transaction.atomic
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
    validate_inputs(inputs)
    return Scenario.objects.create(
        name=name,
        inputs=inputs,
        owner=_owner_or_none(owner),
        customer=customer,
        callback_url=callback_url,
        cloned_from=cloned_from,
    )


@transaction.atomic
def scenario_update(*, scenario: Scenario, **fields: Any) -> Scenario:
    allowed = {"name", "inputs", "customer", "notes", "callback_url"}
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"cannot update {sorted(unknown)}")
    if "inputs" in fields:
        validate_inputs(fields["inputs"])
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
        owner=_owner_or_none(owner),
        customer=scenario.customer,
        notes=scenario.notes,
        cloned_from=scenario,
    )


@transaction.atomic
def run_enqueue(*, scenario: Scenario) -> ScenarioRun:
    """Create a QUEUED run; its task is sent only once this transaction commits."""
    from advisor.scenarios.tasks import run_scenario  # tasks import services: import late

    run = ScenarioRun.objects.create(scenario=scenario, enqueued_at=timezone.now())
    run_scenario.delay_on_commit(str(run.id))
    return run


@transaction.atomic
def scenario_submit(
    *,
    name: str,
    inputs: dict[str, Any],
    owner: AbstractBaseUser | AnonymousUser | None = None,
    customer: str = "",
    callback_url: str = "",
) -> ScenarioRun:
    """Save a scenario and queue its first run (the questionnaire's and the API's path)."""
    scenario = scenario_create(
        name=name, inputs=inputs, owner=owner, customer=customer, callback_url=callback_url
    )
    return run_enqueue(scenario=scenario)


def run_claim(*, run_id: uuid.UUID) -> uuid.UUID | None:
    """Atomically take a run: QUEUED, or RUNNING with an expired heartbeat.

    Returns the claim token, or None when another worker holds it or it has finished
    (a redelivered message then does nothing).
    """
    now = timezone.now()
    token = uuid.uuid4()
    claimable = Q(status=RunStatus.QUEUED) | Q(
        status=RunStatus.RUNNING, heartbeat_at__lt=now - RUN_STALE_AFTER
    )
    claimed = ScenarioRun.objects.filter(claimable, pk=run_id).update(
        status=RunStatus.RUNNING,
        claim_token=token,
        started_at=now,
        heartbeat_at=now,
        progress=0,
        attempts=F("attempts") + 1,
    )
    return token if claimed else None


def run_heartbeat(*, run_id: uuid.UUID, token: uuid.UUID, progress: int) -> bool:
    """Record progress and liveness; False when the claim was lost to another worker."""
    updated = ScenarioRun.objects.filter(
        pk=run_id, claim_token=token, status=RunStatus.RUNNING
    ).update(progress=max(0, min(99, progress)), heartbeat_at=timezone.now())
    return bool(updated)


def _run_finish(*, run_id: uuid.UUID, token: uuid.UUID, status: RunStatus, **fields: Any) -> bool:
    with transaction.atomic():
        finished = ScenarioRun.objects.filter(
            pk=run_id, claim_token=token, status=RunStatus.RUNNING
        ).update(status=status, finished_at=timezone.now(), **fields)
        if finished:
            transaction.on_commit(lambda: run_finished.send(sender=ScenarioRun, run_id=run_id))
    return bool(finished)


def run_execute(*, run_id: uuid.UUID) -> RunStatus | None:
    """Claim a run, evaluate its scenario with the engine, and store the outcome.

    Idempotent: a second delivery of the same message finds the run claimed or finished
    and returns None. Only the claimant can finish a run, so it completes at most once.
    """
    token = run_claim(run_id=run_id)
    if token is None:
        logger.info("run %s not claimable (finished or held by a live worker)", run_id)
        return None
    run = ScenarioRun.objects.select_related("scenario").get(pk=run_id)
    last_pct = [0]

    def report(pct: int) -> None:
        if pct - last_pct[0] >= PROGRESS_STEP_PCT:
            last_pct[0] = pct
            run_heartbeat(run_id=run_id, token=token, progress=pct)

    catalog = current_catalog()
    try:
        result = evaluate_inputs(run.scenario.inputs, catalog=catalog, progress=report)
    except InvalidScenario as exc:
        _run_finish(
            run_id=run_id,
            token=token,
            status=RunStatus.FAILED,
            error=str(exc),
            error_fields=exc.field_errors,
            progress=100,
        )
        return RunStatus.FAILED
    _run_finish(
        run_id=run_id,
        token=token,
        status=RunStatus.SUCCEEDED,
        result=result,
        progress=100,
        engine_version=str(result.get("engine_version", "")),
        catalog_version=str(result.get("catalog_version", "")),
    )
    return RunStatus.SUCCEEDED


def run_fail(*, run_id: uuid.UUID, reason: str) -> bool:
    """Mark an unfinished run FAILED with a reason (engine bug, time limit)."""
    updated = ScenarioRun.objects.filter(
        pk=run_id, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
    ).update(status=RunStatus.FAILED, error=reason, finished_at=timezone.now(), progress=100)
    if updated:
        transaction.on_commit(lambda: run_finished.send(sender=ScenarioRun, run_id=run_id))
    return bool(updated)
