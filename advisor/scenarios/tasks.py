"""Celery tasks: thin wrappers that take ids and call services."""

from __future__ import annotations

import logging
import uuid

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError

from advisor.scenarios.services import run_execute, run_fail

logger = logging.getLogger(__name__)

# Only the database or the broker going away is worth a retry; bad input never is.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError)


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT_ERRORS,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=8,
)
def run_scenario(self: object, run_id: str) -> str | None:
    """Evaluate one ScenarioRun. Safe to deliver twice: the claim lets one worker in."""
    try:
        status = run_execute(run_id=uuid.UUID(run_id))
    except SoftTimeLimitExceeded:
        run_fail(run_id=uuid.UUID(run_id), reason="The evaluation took longer than allowed.")
        return "failed"
    except TRANSIENT_ERRORS:
        raise
    except Exception as exc:  # an engine bug must end the run with a reason, not leave it stuck
        logger.exception("run %s failed in the engine", run_id)
        run_fail(run_id=uuid.UUID(run_id), reason=f"Engine error: {type(exc).__name__}: {exc}")
        return "failed"
    return status.value if status else None
