"""Celery tasks of the API: thin wrappers that take ids and call services."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from api.services import webhook_attempt_deliver, webhook_deliveries_lost


@shared_task(
    acks_late=True,
    reject_on_worker_lost=True,
    # The database going away is retried by Celery; failed POSTs by the backoff below.
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=8,
)
def webhook_deliver(delivery_id: str, attempt: int = 1) -> str:
    """Attempt `attempt` to POST a run's outcome; schedules the next one with backoff.

    The next attempt is a new message with a countdown (not Celery's retry, so that it also
    runs in eager mode). Attempts are claimed in the database by number, so a duplicated
    or redelivered message never POSTs twice, and WEBHOOK_MAX_ATTEMPTS caps them.
    """
    outcome = webhook_attempt_deliver(delivery_id=delivery_id, attempt=attempt)
    if outcome.retry_in_s is not None:
        webhook_deliver.apply_async(
            (delivery_id,), {"attempt": attempt + 1}, countdown=outcome.retry_in_s
        )
    return outcome.status


@shared_task(acks_late=True, ignore_result=True)
def webhook_sweep() -> int:
    """Beat: send again the deliveries whose message was lost; returns how many."""
    lost = webhook_deliveries_lost()
    for delivery_id, attempt in lost:
        webhook_deliver.delay(delivery_id, attempt=attempt)
    return len(lost)
