"""Celery tasks of the API: thin wrappers that take ids and call services."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from api.services import webhook_attempt_deliver


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # The database going away is retried by Celery; failed POSTs by the backoff below.
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=None,
)
def webhook_deliver(self: object, delivery_id: str) -> str:
    """One attempt to POST a run's outcome; schedules the next one with exponential backoff.

    Attempts are counted in the database (WebhookDelivery.attempts), which also caps them at
    settings.WEBHOOK_MAX_ATTEMPTS, so a redelivered message never exceeds the budget.
    """
    outcome = webhook_attempt_deliver(delivery_id=delivery_id)
    if outcome.retry_in_s is not None:
        raise self.retry(countdown=outcome.retry_in_s)  # type: ignore[attr-defined]
    return outcome.status
