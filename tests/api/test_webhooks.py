"""Webhooks: a run's outcome POSTed to the callback_url, signed, retried, every attempt kept."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from typing import Any

import pytest

from advisor.scenarios.models import RunStatus
from api.models import DeliveryStatus, WebhookAttempt, WebhookDelivery
from api.services import webhook_backoff_s, webhook_delivery_create
from api.webhooks import (
    UnsafeWebhookUrl,
    check_address,
    check_url_syntax,
    signature,
    signature_valid,
)
from tests.api.conftest import TWO_SERVER_TRAINING, Caller, Receiver, latest_run

pytestmark = pytest.mark.django_db


def expected_signature(header: str, body: bytes, secret: str) -> str:
    """What a receiver computes (api/README.md): the header's time, then the HMAC."""
    t = header.split(",")[0].removeprefix("t=")
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def test_a_finished_run_is_posted_signed_and_retried_after_a_failure(
    client_a: Caller, receiver: Receiver, submitted: Any
) -> None:
    receiver.answers = [500]  # the first attempt fails, the retry succeeds (204)

    created = submitted(callback_url=receiver.url)  # runs the evaluation and webhook eagerly

    run = latest_run(created["id"])
    assert run.status == RunStatus.SUCCEEDED
    assert len(receiver.received) == 2
    assert client_a.api_client is not None
    secret = client_a.api_client.webhook_secret
    for request in receiver.received:
        assert request.path == "/hooks/fabric"
        assert request.headers["Content-Type"] == "application/json"
        header = request.headers["X-Fabric-Signature"]
        assert header == expected_signature(header, request.body, secret)
        assert signature_valid(header, request.body, secret)
        assert request.headers["X-Fabric-Event"] == "run.finished"
    assert receiver.received[0].body == receiver.received[1].body  # the same bytes, re-sent
    payload = json.loads(receiver.received[1].body)
    delivery = WebhookDelivery.objects.get()
    assert payload["event"] == "run.finished"
    assert payload["delivery_id"] == str(delivery.pk)
    assert payload["scenario"]["id"] == created["id"]
    assert payload["scenario"]["url"] == f"http://localhost:8000/api/v1/scenarios/{created['id']}/"
    assert payload["run"]["id"] == str(run.pk)
    assert payload["run"]["status"] == "succeeded"
    assert payload["bom_url"].endswith(f"/api/v1/scenarios/{created['id']}/bom/")
    assert payload["headline"] == run.result["recommendation"]["headline"]
    assert delivery.status == DeliveryStatus.DELIVERED
    assert delivery.attempts == 2
    assert delivery.last_status_code == 204
    assert delivery.delivered_at is not None
    assert list(WebhookAttempt.objects.values_list("number", "status_code", "error")) == [
        (1, 500, "HTTP 500"),
        (2, 204, ""),
    ]


def test_delivery_gives_up_after_the_last_allowed_attempt(
    receiver: Receiver, submitted: Any, settings: Any
) -> None:
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    receiver.answers = [503, 503, 503, 503]

    submitted(callback_url=receiver.url)

    delivery = WebhookDelivery.objects.get()
    assert len(receiver.received) == 3
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 3
    assert delivery.last_status_code == 503
    assert delivery.delivered_at is None


@pytest.mark.parametrize("answer", [410, 302])
def test_an_answer_that_will_not_change_is_not_retried(
    receiver: Receiver, submitted: Any, answer: int
) -> None:
    receiver.answers = [answer]

    submitted(callback_url=receiver.url)

    delivery = WebhookDelivery.objects.get()
    assert len(receiver.received) == 1
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.last_error == f"HTTP {answer}"


def test_an_unreachable_receiver_is_retried_and_recorded(submitted: Any, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    submitted(callback_url="http://127.0.0.1:9/closed")  # the discard port: nothing listens

    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 2
    assert delivery.last_status_code is None
    assert "ConnectionRefusedError" in delivery.last_error


def test_private_addresses_are_refused_at_delivery_unless_allowed(
    receiver: Receiver, submitted: Any, settings: Any, run_tasks: Any
) -> None:
    created = submitted(callback_url=receiver.url)  # accepted while private addresses are allowed
    WebhookDelivery.objects.all().delete()
    receiver.received.clear()
    settings.WEBHOOK_ALLOW_PRIVATE = False

    with run_tasks():
        webhook_delivery_create(run_id=latest_run(created["id"]).pk)

    delivery = WebhookDelivery.objects.get()
    assert receiver.received == []
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 1
    assert delivery.last_error == (
        "refused: callback_url must not point at a loopback or private address"
    )


def test_a_failed_run_is_reported_too(
    receiver: Receiver, client_a: Caller, run_tasks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_engine(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr("advisor.scenarios.services.evaluate_inputs", broken_engine)

    with run_tasks():
        client_a.http.post(
            "/api/v1/scenarios/",
            {"name": "Breaks", "inputs": TWO_SERVER_TRAINING, "callback_url": receiver.url},
            format="json",
        )

    payload = json.loads(receiver.received[0].body)
    assert payload["run"]["status"] == "failed"
    assert payload["run"]["error"] == "Engine error: ZeroDivisionError: bug"
    assert "bom_url" not in payload


def test_no_callback_url_no_delivery(submitted: Any) -> None:
    submitted()

    assert WebhookDelivery.objects.count() == 0


def test_a_second_signal_for_the_same_run_posts_nothing_more(
    receiver: Receiver, submitted: Any
) -> None:
    created = submitted(callback_url=receiver.url)

    again = webhook_delivery_create(run_id=latest_run(created["id"]).pk)

    assert again is None
    assert WebhookDelivery.objects.count() == 1
    assert len(receiver.received) == 1


def test_a_revoked_clients_webhooks_are_not_sent(
    receiver: Receiver, client_a: Caller, submitted: Any, run_tasks: Any
) -> None:
    created = submitted(callback_url=receiver.url)
    WebhookDelivery.objects.all().delete()
    receiver.received.clear()
    assert client_a.api_client is not None
    client_a.api_client.revoked_at = client_a.api_client.created_at
    client_a.api_client.save()

    with run_tasks():
        webhook_delivery_create(run_id=latest_run(created["id"]).pk)

    assert receiver.received == []
    assert WebhookDelivery.objects.get().last_error == (
        "the scenario's owner has no active API client"
    )


# --- The rules, one by one --------------------------------------------------------------------


def test_the_signature_is_an_hmac_sha256_of_the_time_and_the_raw_body() -> None:
    assert signature(b'{"a":1}', "s3cret", timestamp=1700000000) == (
        "t=1700000000,v1=" + hmac.new(b"s3cret", b'1700000000.{"a":1}', hashlib.sha256).hexdigest()
    )


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "169.254.1.1",
        "fe80::1",
        "::ffff:169.254.169.254",
        "::ffff:0:169.254.169.254",  # SIIT-translated (RFC 7915)
        "fd00:ec2::254",
    ],
)
def test_link_local_and_metadata_addresses_are_refused_even_when_private_is_allowed(
    settings: Any, address: str
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True

    with pytest.raises(UnsafeWebhookUrl):
        check_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.5",
        "::1",
        "fc00::5",
        "::ffff:0:7f00:1",  # SIIT-translated 127.0.0.1
        "::ffff:0:a01:203",  # SIIT-translated 10.1.2.3
    ],
)
def test_loopback_and_private_addresses_need_the_setting(settings: Any, address: str) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = False
    with pytest.raises(UnsafeWebhookUrl, match="loopback or private"):
        check_address(ipaddress.ip_address(address))

    settings.WEBHOOK_ALLOW_PRIVATE = True
    check_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "gopher://x", "https://user:pw@example.com/", "http:///nohost"],
)
def test_only_plain_http_and_https_urls_are_accepted(url: str) -> None:
    with pytest.raises(UnsafeWebhookUrl):
        check_url_syntax(url)


def test_public_addresses_are_accepted(settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = False

    check_url_syntax("https://93.184.216.34/hook")
    check_url_syntax("https://quotes.example.com/hook")
    check_url_syntax("https://[::ffff:0:5db8:d822]/hook")  # SIIT form of 93.184.216.34


def test_the_backoff_doubles_and_is_capped(settings: Any) -> None:
    settings.WEBHOOK_BACKOFF_BASE_S = 30
    settings.WEBHOOK_BACKOFF_MAX_S = 300

    assert [webhook_backoff_s(n) for n in range(1, 7)] == [30, 60, 120, 240, 300, 300]


def test_a_duplicated_message_for_an_attempt_posts_once(
    receiver: Receiver, submitted: Any, run_tasks: Any
) -> None:
    created = submitted(callback_url=receiver.url)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == DeliveryStatus.DELIVERED

    from api.tasks import webhook_deliver

    assert webhook_deliver.delay(str(delivery.pk), attempt=1).get() == "skipped"
    assert webhook_deliver.delay(str(delivery.pk), attempt=2).get() == "skipped"
    assert len(receiver.received) == 1
    assert latest_run(created["id"]).webhook_deliveries.get().attempts == 1


# --- Lost messages ----------------------------------------------------------------------------


def overdue_by(seconds: int) -> Any:
    from datetime import timedelta

    from django.utils import timezone

    return timezone.now() - timedelta(seconds=seconds)


def test_a_delivery_whose_first_message_was_lost_is_sent_by_the_sweep(
    receiver: Receiver, submitted: Any, settings: Any
) -> None:
    from api.tasks import webhook_sweep

    created = submitted(callback_url=receiver.url)
    WebhookDelivery.objects.all().delete()
    receiver.received.clear()
    lost = WebhookDelivery.objects.create(
        run=latest_run(created["id"]), url=receiver.url, payload={"event": "run.finished"}
    )
    WebhookDelivery.objects.filter(pk=lost.pk).update(
        created_at=overdue_by(settings.WEBHOOK_LOST_AFTER_S + 1)
    )

    assert webhook_sweep.delay().get() == 1

    lost.refresh_from_db()
    assert lost.status == DeliveryStatus.DELIVERED
    assert lost.attempts == 1
    assert len(receiver.received) == 1


def test_a_lost_retry_is_sent_again_with_the_next_attempt_number(
    receiver: Receiver, submitted: Any, settings: Any
) -> None:
    from api.tasks import webhook_sweep

    settings.WEBHOOK_MAX_ATTEMPTS = 1  # the first attempt would give up, were it not lost
    submitted(callback_url=receiver.url)
    delivery = WebhookDelivery.objects.get()
    receiver.received.clear()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.PENDING,
        attempts=1,
        next_attempt_at=overdue_by(settings.WEBHOOK_LOST_AFTER_S + 1),
    )
    settings.WEBHOOK_MAX_ATTEMPTS = 3

    assert webhook_sweep.delay().get() == 1

    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert delivery.attempts == 2
    assert len(receiver.received) == 1


def test_the_sweep_leaves_deliveries_on_schedule_alone(receiver: Receiver, submitted: Any) -> None:
    from api.tasks import webhook_sweep

    submitted(callback_url=receiver.url)  # delivered
    WebhookDelivery.objects.update(
        status=DeliveryStatus.PENDING, attempts=1, next_attempt_at=overdue_by(-60)
    )  # a retry due in a minute

    assert webhook_sweep.delay().get() == 0
    assert len(receiver.received) == 1


def test_the_delivery_is_recorded_in_the_transaction_that_finishes_the_run(
    submitted: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that dies right after the run's end commits cannot lose its webhook."""
    from advisor.scenarios.services import run_execute

    created = submitted(finish=False, callback_url="https://quotes.example.com/hook")
    run = latest_run(created["id"])
    # As in services mode: the POST goes to a worker (embedded mode leaves it to the
    # deliverer process, tests/security/test_api_hardening.py).
    monkeypatch.setattr("api.services.tasks_run_in_process", lambda: False)

    with django_capture_on_commit_callbacks(execute=False) as after_commit:
        run_execute(run_id=run.pk)

    delivery = WebhookDelivery.objects.get(run=run)  # written before any on-commit work
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.payload["run"]["status"] == RunStatus.SUCCEEDED
    assert len(after_commit) == 1  # only the enqueue of the POST waits for the commit
