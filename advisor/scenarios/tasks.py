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
from typing import Any

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from advisor.scenarios.claims import BROKER_ERRORS, TRANSIENT_DB_ERRORS, WorkInterrupted
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


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=settings.RUN_TRANSIENT_RETRIES,
)
def run_scenario(self: Task, run_id: str, resume_token: str | None = None) -> str | None:
    """Evaluate one ScenarioRun. Safe to deliver twice: the claim lets one worker in."""
    try:
        status = run_execute(run_id=uuid.UUID(run_id), resume_token=_uuid_or_none(resume_token))
    except WorkInterrupted as exc:
        # Retry holding the claim: the retry resumes it unless the reconciler moved on.
        logger.warning("run %s interrupted by a database error; retrying", run_id)
        raise self.retry(
            args=[run_id],
            kwargs={"resume_token": str(exc.token)},
            countdown=_backoff_s(self.request.retries),
            exc=exc,
        ) from exc
    except TRANSIENT_ERRORS as exc:
        logger.warning("run %s: transient %s; retrying", run_id, type(exc).__name__)
        raise self.retry(countdown=_backoff_s(self.request.retries), exc=exc) from exc
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
    try:
        outcome = sweep_chunk_execute(
            chunk_id=uuid.UUID(chunk_id), resume_token=_uuid_or_none(resume_token)
        )
    except WorkInterrupted as exc:
        logger.warning("sweep chunk %s interrupted by a database error; retrying", chunk_id)
        raise self.retry(
            args=[chunk_id],
            kwargs={"resume_token": str(exc.token)},
            countdown=_backoff_s(self.request.retries),
            exc=exc,
        ) from exc
    except TRANSIENT_ERRORS as exc:
        logger.warning("sweep chunk %s: transient %s; retrying", chunk_id, type(exc).__name__)
        raise self.retry(countdown=_backoff_s(self.request.retries), exc=exc) from exc
    return outcome


@shared_task(acks_late=True, soft_time_limit=60, time_limit=90)
def reconcile() -> dict[str, Any]:
    """Celery beat's periodic backstop: resend lost messages, requeue orphaned work."""
    try:
        return {"runs": runs_reconcile(), "sweeps": sweeps_reconcile()}
    except TRANSIENT_ERRORS:
        # The database or broker is down: nothing can be repaired now; the next tick will.
        logger.warning("reconciler skipped: database or broker unreachable", exc_info=True)
        return {}
