"""Writes for the API: clients and their keys, idempotent submissions, re-runs, webhooks."""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from advisor.scenarios.claims import send_task_by_name, tasks_run_in_process
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.results import stored_result
from advisor.scenarios.selectors import run_latest
from advisor.scenarios.services import RunInProgress, run_start, scenario_submit
from api import webhooks
from api.errors import ApplicationError
from api.models import (
    ApiClient,
    DeliveryStatus,
    IdempotencyRecord,
    WebhookAttempt,
    WebhookDelivery,
)
from api.selectors import key_hash

logger = logging.getLogger(__name__)

CLIENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
# The Celery task (api.tasks) that POSTs a delivery, sent by name.
WEBHOOK_DELIVER_TASK = "api.tasks.webhook_deliver"
# last_used_at is a hint for operators, not an audit log: write it at most this often.
TOUCH_EVERY = timedelta(minutes=1)


# --- API clients --------------------------------------------------------------------------


@dataclass(frozen=True)
class IssuedClient:
    """A new client and the secrets shown once (only the key's hash is stored)."""

    client: ApiClient
    key: str
    webhook_secret: str


def _new_key() -> tuple[str, str]:
    prefix = secrets.token_hex(6)
    return prefix, f"{prefix}.{secrets.token_urlsafe(32)}"


@transaction.atomic
def api_client_create(*, name: str) -> IssuedClient:
    """Create a client, its user (owner of its scenarios) and a key; raises ValueError."""
    if not CLIENT_NAME_RE.match(name):
        raise ValueError(
            "name must be 1-100 letters, digits, '.', '-' or '_', starting with a letter or digit"
        )
    if ApiClient.objects.filter(name=name).exists():
        raise ValueError(f"an API client named {name!r} already exists")
    user_model = get_user_model()
    username = f"api-client.{name}"[:150]
    if user_model.objects.filter(username=username).exists():
        raise ValueError(f"a user named {username!r} already exists")
    user = user_model.objects.create_user(username=username)
    user.set_unusable_password()
    user.save(update_fields=["password"])
    prefix, key = _new_key()
    webhook_secret = secrets.token_urlsafe(32)
    client = ApiClient.objects.create(
        name=name,
        user=user,
        key_prefix=prefix,
        key_hash=key_hash(key),
        webhook_secret=webhook_secret,
    )
    return IssuedClient(client=client, key=key, webhook_secret=webhook_secret)


def api_client_revoke(*, name: str) -> ApiClient:
    """Revoke a client's key (its scenarios stay); raises ApiClient.DoesNotExist."""
    client = ApiClient.objects.get(name=name)
    ApiClient.objects.filter(pk=client.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    client.refresh_from_db()
    return client


def api_client_touch(*, client: ApiClient) -> None:
    now = timezone.now()
    if client.last_used_at is None or now - client.last_used_at > TOUCH_EVERY:
        ApiClient.objects.filter(pk=client.pk).update(last_used_at=now)
        client.last_used_at = now


# --- Scenarios and runs ---------------------------------------------------------------------


def request_hash(payload: dict[str, Any]) -> str:
    """A fingerprint of a request body that ignores key order and whitespace."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Submission:
    scenario: Scenario
    run: ScenarioRun
    replayed: bool


def _replay(record: IdempotencyRecord, fingerprint: str) -> Submission:
    if record.request_hash != fingerprint:
        raise ApplicationError(
            "This Idempotency-Key was already used with a different request body; "
            "use a new key for a new scenario.",
            code="idempotency_conflict",
            status_code=409,
            fields={"Idempotency-Key": ["already used with a different request body"]},
        )
    run = run_latest(scenario=record.scenario)
    assert run is not None  # every submitted scenario has its first run
    return Submission(scenario=record.scenario, run=run, replayed=True)


def scenario_submit_api(
    *,
    owner: Any,
    name: str,
    inputs: dict[str, Any],
    customer: str = "",
    callback_url: str = "",
    idempotency_key: str = "",
) -> Submission:
    """Save a scenario and queue its run, once per (owner, Idempotency-Key).

    The same key and body return the first submission; the same key with another body is a
    409. Two concurrent requests with one key race on the unique (owner, key) constraint:
    the loser's scenario is rolled back (its run never enqueued) and it replays the winner's.
    """
    payload = {"name": name, "inputs": inputs, "customer": customer, "callback_url": callback_url}
    fingerprint = request_hash(payload)
    if idempotency_key:
        existing = (
            IdempotencyRecord.objects.select_related("scenario")
            .filter(owner=owner, key=idempotency_key)
            .first()
        )
        if existing is not None:
            return _replay(existing, fingerprint)
    try:
        with transaction.atomic():
            run = scenario_submit(
                name=name,
                inputs=inputs,
                owner=owner,
                customer=customer,
                callback_url=callback_url,
                draw_figures=False,  # most API runs are never shown as a page
            )
            if idempotency_key:
                IdempotencyRecord.objects.create(
                    owner=owner,
                    key=idempotency_key,
                    request_hash=fingerprint,
                    scenario=run.scenario,
                )
    except IntegrityError:
        if not idempotency_key:
            raise
        record = IdempotencyRecord.objects.select_related("scenario").get(
            owner=owner, key=idempotency_key
        )
        return _replay(record, fingerprint)
    return Submission(scenario=run.scenario, run=run, replayed=False)


def scenario_rerun(*, scenario: Scenario) -> ScenarioRun:
    """Queue a new run of a scenario (it evaluates with the catalog current at that time).

    One unfinished run per scenario, through the service the web uses too (run_start). Its
    figures are drawn on a page's first view, if a page ever shows it (ScenarioRun.draw_figures).
    """
    try:
        return run_start(scenario=scenario, draw_figures=False)
    except RunInProgress as exc:
        raise ApplicationError(str(exc), code="run_in_progress", status_code=409) from exc


# --- Webhooks -------------------------------------------------------------------------------


def absolute_url(path: str) -> str:
    return f"{settings.API_PUBLIC_BASE_URL}{path}"


def webhook_payload(*, run: ScenarioRun) -> dict[str, Any]:
    """What a callback receives when a run finishes: the outcome and where to read more."""
    scenario = run.scenario
    payload: dict[str, Any] = {
        "event": "run.finished",
        "scenario": {
            "id": str(scenario.pk),
            "name": scenario.name,
            "customer": scenario.customer,
            "url": absolute_url(reverse("api:scenario-detail", args=[scenario.pk])),
        },
        "run": {
            "id": str(run.pk),
            "status": run.status,
            "progress": run.progress,
            "error": run.error,
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "url": absolute_url(reverse("api:run-detail", args=[run.pk])),
        },
    }
    if run.status == RunStatus.SUCCEEDED:
        payload["bom_url"] = absolute_url(reverse("api:scenario-bom", args=[scenario.pk]))
        result = stored_result(run)
        payload["headline"] = result.recommendation.headline if result is not None else ""
    return payload


def webhook_delivery_create(*, run_id: Any) -> WebhookDelivery | None:
    """Record the delivery of a finished run's outcome and enqueue it; None if no callback.

    At most one delivery per run (unique constraint), so a repeated signal posts once.
    """
    run = ScenarioRun.objects.select_related("scenario").filter(pk=run_id).first()
    if run is None or not run.is_finished or not run.scenario.callback_url:
        return None
    try:
        with transaction.atomic():
            delivery = WebhookDelivery.objects.create(
                run=run, url=run.scenario.callback_url, payload=webhook_payload(run=run)
            )
            # Embedded mode runs tasks in the web process: a POST there (and its retries,
            # seconds apart) would hold the request that finished the run. The delivery
            # stays pending for the embedded deliverer (manage.py deliver_webhooks).
            if not tasks_run_in_process():
                transaction.on_commit(
                    partial(send_task_by_name, WEBHOOK_DELIVER_TASK, str(delivery.pk))
                )
    except IntegrityError:
        logger.info("webhook for run %s already recorded", run_id)
        return None
    return delivery


def webhook_deliveries_due(*, now: Any = None) -> list[tuple[str, int]]:
    """(delivery id, attempt number) of pending deliveries whose next attempt is due."""
    now = now or timezone.now()
    pending = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING)
    first = pending.filter(attempts=0, last_attempt_at__isnull=True)
    retry = pending.filter(attempts__gt=0, next_attempt_at__lte=now)
    due = [(str(pk), 1) for pk in first.order_by("created_at").values_list("pk", flat=True)]
    due += [
        (str(pk), n + 1)
        for pk, n in retry.order_by("next_attempt_at").values_list("pk", "attempts")
    ]
    return due


def webhook_deliver_due(*, now: Any = None) -> int:
    """The embedded deliverer's tick: make every attempt that is due, here; returns how many.

    Runs in its own process (manage.py deliver_webhooks, started by `make run` in embedded
    mode), never in a web request. Attempts are claimed by number, as in the Celery path.
    """
    made = 0
    for delivery_id, attempt in webhook_deliveries_due(now=now):
        outcome = webhook_attempt_deliver(delivery_id=delivery_id, attempt=attempt)
        made += outcome.status != "skipped"
    return made


def webhook_attempt_claim(*, delivery_id: Any, attempt: int) -> bool:
    """Take attempt number `attempt` of a pending delivery; False if it is not ours to make.

    A redelivered or duplicated message for the same attempt finds it taken and stops, so
    each attempt POSTs once, unless its worker died mid-attempt (taken long ago, never
    recorded): then it may be taken again.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=2 * settings.WEBHOOK_TIMEOUT_S + 60)
    claimable = Q(attempts=attempt - 1) | Q(attempts=attempt, last_attempt_at__lt=stale)
    return bool(
        WebhookDelivery.objects.filter(
            claimable, pk=delivery_id, status=DeliveryStatus.PENDING
        ).update(attempts=attempt, last_attempt_at=now, next_attempt_at=None)
    )


def webhook_attempt_record(
    *,
    delivery: WebhookDelivery,
    attempt: int,
    started_at: Any,
    duration_ms: int,
    status_code: int | None,
    error: str,
    delivered: bool,
    final: bool,
    next_attempt_in_s: int | None = None,
) -> WebhookDelivery:
    """Log one attempt and move the delivery on: delivered, failed for good, or pending."""
    now = timezone.now()
    with transaction.atomic():
        WebhookAttempt.objects.update_or_create(
            delivery=delivery,
            number=attempt,
            defaults={
                "status_code": status_code,
                "error": error[:2000],
                "started_at": started_at,
                "duration_ms": duration_ms,
            },
        )
        fields: dict[str, Any] = {
            "last_status_code": status_code,
            "last_error": error[:2000],
            "next_attempt_at": None,
        }
        if delivered:
            fields.update(status=DeliveryStatus.DELIVERED, delivered_at=now)
        elif final:
            fields.update(status=DeliveryStatus.FAILED)
        else:
            fields.update(next_attempt_at=now + timedelta(seconds=next_attempt_in_s or 0))
        WebhookDelivery.objects.filter(pk=delivery.pk).update(**fields)
    delivery.refresh_from_db()
    return delivery


@dataclass(frozen=True)
class AttemptOutcome:
    status: str
    retry_in_s: int | None = None


# Receiver answers below 500 that are worth another try.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def webhook_backoff_s(attempt: int) -> int:
    """Seconds to wait after failed attempt number `attempt` (1-based): doubling, capped."""
    base: int = settings.WEBHOOK_BACKOFF_BASE_S
    cap: int = settings.WEBHOOK_BACKOFF_MAX_S
    return int(min(cap, base * 2 ** max(0, attempt - 1)))


def webhook_secret_for(*, delivery: WebhookDelivery) -> str | None:
    owner_id = delivery.run.scenario.owner_id
    if owner_id is None:
        return None
    client = ApiClient.objects.filter(user_id=owner_id, revoked_at__isnull=True).first()
    return client.webhook_secret if client is not None else None


def webhook_attempt_deliver(*, delivery_id: Any, attempt: int = 1) -> AttemptOutcome:
    """Make attempt number `attempt` to POST a delivery, record it, say whether to retry.

    Safe to call twice for one attempt, or for a delivery already delivered or failed: the
    claim lets one caller through and the others do nothing.
    """
    if not webhook_attempt_claim(delivery_id=delivery_id, attempt=attempt):
        logger.info("webhook %s attempt %s already taken or finished", delivery_id, attempt)
        return AttemptOutcome(status="skipped")
    delivery = WebhookDelivery.objects.select_related("run__scenario").get(pk=delivery_id)
    started = timezone.now()
    last_allowed = attempt >= settings.WEBHOOK_MAX_ATTEMPTS

    def record(
        status_code: int | None, error: str, *, delivered: bool, give_up: bool
    ) -> AttemptOutcome:
        retry_in = None if (delivered or give_up) else webhook_backoff_s(attempt)
        updated = webhook_attempt_record(
            delivery=delivery,
            attempt=attempt,
            started_at=started,
            duration_ms=int((timezone.now() - started).total_seconds() * 1000),
            status_code=status_code,
            error=error,
            delivered=delivered,
            final=give_up,
            next_attempt_in_s=retry_in,
        )
        return AttemptOutcome(status=str(updated.status), retry_in_s=retry_in)

    secret = webhook_secret_for(delivery=delivery)
    if secret is None:
        return record(
            None, "the scenario's owner has no active API client", delivered=False, give_up=True
        )
    body = webhooks.encode_payload({**delivery.payload, "delivery_id": str(delivery.pk)})
    headers = {
        "Content-Type": "application/json",
        "User-Agent": webhooks.USER_AGENT,
        "X-Fabric-Event": str(delivery.payload.get("event", "")),
        "X-Fabric-Delivery": str(delivery.pk),
        webhooks.SIGNATURE_HEADER: webhooks.signature(body, secret),  # t=now,v1=...
    }
    try:
        target = webhooks.resolve_target(delivery.url)
        status_code = webhooks.post(target, body, headers, timeout_s=settings.WEBHOOK_TIMEOUT_S)
    except webhooks.UnsafeWebhookUrl as exc:
        return record(None, f"refused: callback_url {exc}", delivered=False, give_up=True)
    except (OSError, http.client.HTTPException) as exc:
        return record(None, f"{type(exc).__name__}: {exc}", delivered=False, give_up=last_allowed)
    if 200 <= status_code < 300:
        return record(status_code, "", delivered=True, give_up=False)
    # Server errors and a few "try later" answers may recover; redirects (never followed)
    # and other client errors will not.
    retryable = status_code >= 500 or status_code in RETRYABLE_STATUS
    return record(
        status_code, f"HTTP {status_code}", delivered=False, give_up=last_allowed or not retryable
    )


def webhook_deliveries_lost(*, now: Any = None) -> list[tuple[str, int]]:
    """(delivery id, attempt number) of pending deliveries whose next message never came.

    Three ways to be lost: never attempted (the first message was not sent), a retry overdue
    (its message was lost), or an attempt claimed long ago and never recorded (its worker
    died mid-POST; the claim lets it be taken again).
    """
    now = now or timezone.now()
    overdue = now - timedelta(seconds=settings.WEBHOOK_LOST_AFTER_S)
    pending = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING)
    never = pending.filter(attempts=0, created_at__lt=overdue)
    retry = pending.filter(attempts__gt=0, next_attempt_at__lt=overdue)
    stuck = pending.filter(
        attempts__gt=0, next_attempt_at__isnull=True, last_attempt_at__lt=overdue
    )
    lost = [(str(pk), 1) for pk in never.values_list("pk", flat=True)]
    lost += [(str(pk), n + 1) for pk, n in retry.values_list("pk", "attempts")]
    lost += [(str(pk), n) for pk, n in stuck.values_list("pk", "attempts")]
    return lost
