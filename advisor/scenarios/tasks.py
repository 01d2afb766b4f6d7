"""Celery tasks: thin wrappers that take ids and call services.

Every task here is safe to deliver twice (acks_late + reject_on_worker_lost redeliver the
message of a worker that died; the reconciler may resend one): the services' atomic claims
let one delivery do the work. Only transient errors (database or broker connection) are
retried, with capped exponential backoff and jitter; bad input and engine errors end the
run FAILED with the reason.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from advisor.scenarios.claims import (
    BROKER_ERRORS,
    TRANSIENT_DB_ERRORS,
    WorkInterrupted,
    broker_lost_its_queue,
)
from advisor.scenarios.services import run_execute, run_fail, runs_reconcile
from advisor.scenarios.sweeps.services import sweep_chunk_execute, sweeps_reconcile

logger = logging.getLogger(__name__)

TRANSIENT_ERRORS: tuple[type[Exception], ...] = (*TRANSIENT_DB_ERRORS, *BROKER_ERRORS)


def _backoff_s(retries: int) -> int:
    return (
        int(
            get_exponential_backoff_interval(
                factor=2,
                retries=retries,
                maximum=settings.RUN_RETRY_BACKOFF_MAX_S,
                full_jitter=True,
            )
        )
        + 1
    )


def _uuid_or_none(value: str | None) -> uuid.UUID | None:
    return uuid.UUID(value) if value else None


_Outcome = TypeVar("_Outcome")


def _execute_retrying(
    task: Task,
    what: str,
    work_id: str,
    resume_token: str | None,
    execute: Callable[[uuid.UUID, uuid.UUID | None], _Outcome],
) -> _Outcome:
    """Execute one piece of claimed work (a run, a sweep chunk); the one retry rule of both.

    A database error inside the work retries holding the claim (the retry resumes it unless
    the reconciler moved on); a transient database or broker error before it retries afresh.
    Both back off exponentially with jitter."""
    try:
        return execute(uuid.UUID(work_id), _uuid_or_none(resume_token))
    except WorkInterrupted as exc:
        logger.warning("%s %s interrupted by a database error; retrying", what, work_id)
        raise task.retry(
            args=[work_id],
            kwargs={"resume_token": str(exc.token)},
            countdown=_backoff_s(task.request.retries),
            exc=exc,
        ) from exc
    except TRANSIENT_ERRORS as exc:
        logger.warning("%s %s: transient %s; retrying", what, work_id, type(exc).__name__)
        raise task.retry(countdown=_backoff_s(task.request.retries), exc=exc) from exc


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=settings.RUN_TRANSIENT_RETRIES,
)
def run_scenario(self: Task, run_id: str, resume_token: str | None = None) -> str | None:
    """Evaluate one ScenarioRun. Safe to deliver twice: the claim lets one worker in."""
    try:
        status = _execute_retrying(
            self,
            "run",
            run_id,
            resume_token,
            lambda pk, token: run_execute(run_id=pk, resume_token=token),
        )
    except SoftTimeLimitExceeded:
        # Outside the evaluation (which fails its own run on the soft limit): fail it here.
        run_fail(run_id=uuid.UUID(run_id), reason="The evaluation took longer than allowed.")
        return "failed"
    return status.value if status else None


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=settings.RUN_TRANSIENT_RETRIES,
)
def sweep_chunk(self: Task, chunk_id: str, resume_token: str | None = None) -> str | None:
    """Evaluate one chunk of a sweep's design points; the last chunk to finish ends the sweep."""
    return _execute_retrying(
        self,
        "sweep chunk",
        chunk_id,
        resume_token,
        lambda pk, token: sweep_chunk_execute(chunk_id=pk, resume_token=token),
    )


@shared_task(acks_late=True, soft_time_limit=60, time_limit=90)
def reconcile() -> dict[str, Any]:
    """Celery beat's periodic backstop: resend lost messages, requeue orphaned work."""
    try:
        lost = broker_lost_its_queue()
    except BROKER_ERRORS:
        lost = False  # this tick came through the broker, which just went away again
    if lost:
        logger.warning("reconciler: the broker lost its queues; resending every queued item")
    try:
        return {
            "runs": runs_reconcile(broker_lost=lost),
            "sweeps": sweeps_reconcile(broker_lost=lost),
        }
    except TRANSIENT_ERRORS:
        # The database or broker is down: nothing can be repaired now; the next tick will.
        logger.warning("reconciler skipped: database or broker unreachable", exc_info=True)
        return {}
