"""Done when: a client made with the management command submits the scenario contract, polls
to succeeded, fetches the BOM, and a second client gets 404 for it.

Twice: on the real stack (PostgreSQL, Redis, a separate Celery worker process delivering the
webhook too) and in-process with eager tasks for a fast local loop.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from api.models import ApiClient, DeliveryStatus, WebhookDelivery
from tests.api.conftest import TWO_SERVER_TRAINING, Receiver
from tests.support.workers import WorkerProcess, wait_until

# The scenario contract of docs/ENGINE_API.md, as a quoting system would send it.
CONTRACT = {
    "name": "ACME 16-GPU fine-tune",
    "customer": "ACME",
    "inputs": TWO_SERVER_TRAINING,
}


def client_from_the_command(name: str) -> APIClient:
    out = StringIO()
    call_command("create_api_client", name, stdout=out)
    key = next(ln for ln in out.getvalue().splitlines() if "token:" in ln).split()[-1]
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return http


def webhook_secret(name: str) -> str:
    return ApiClient.objects.get(name=name).webhook_secret


def the_quoting_flow(
    submit: Callable[[APIClient, dict[str, Any]], Any],
    wait_for_success: Callable[[APIClient, str], dict[str, Any]],
) -> dict[str, Any]:
    quotes = client_from_the_command("acme-quotes")
    other = client_from_the_command("globex-quotes")

    created = submit(quotes, CONTRACT)
    assert created.status_code == 202, created.json()
    url = created.json()["url"]

    scenario = wait_for_success(quotes, url)
    assert scenario["status"] == "succeeded"
    assert scenario["progress"] == 100
    assert scenario["result"]["recommendation"]["fabric"] in {"ethernet", "roce", "infiniband"}

    bom = quotes.get(scenario["bom_url"])
    assert bom.status_code == 200
    assert bom.json()["currency"] == "USD"
    assert bom.json()["lines"]
    assert bom.json()["total_usd"] == pytest.approx(
        sum(line["extended_price_usd"] for line in bom.json()["lines"]), abs=0.01
    )

    for path in (url, scenario["bom_url"], scenario["run"]["url"]):
        assert other.get(path).status_code == 404
    assert other.get("/api/v1/scenarios/").json()["count"] == 0
    return scenario


@pytest.mark.services
@pytest.mark.django_db(transaction=True)
def test_the_quoting_flow_on_postgres_redis_and_a_real_worker(
    worker_factory: Callable[..., WorkerProcess],
    purge_queue: None,
    receiver: Receiver,
) -> None:
    assert connection.vendor == "postgresql"
    worker = worker_factory("api-w1", WEBHOOK_ALLOW_PRIVATE="1", WEBHOOK_BACKOFF_BASE_S="1")
    receiver.answers = [503]  # the worker's first webhook attempt fails; its retry succeeds

    def submit(http: APIClient, body: dict[str, Any]) -> Any:
        return http.post("/api/v1/scenarios/", {**body, "callback_url": receiver.url})

    def wait_for_success(http: APIClient, url: str) -> dict[str, Any]:
        finished = wait_until(
            lambda: http.get(url).json()["status"] in {"succeeded", "failed"}, timeout_s=120
        )
        assert finished, "\n".join(worker.log[-30:])
        return dict(http.get(url).json())

    scenario = the_quoting_flow(submit, wait_for_success)

    assert wait_until(
        lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists(),
        timeout_s=60,
    ), "\n".join(worker.log[-30:])
    delivery = WebhookDelivery.objects.get()
    assert delivery.attempts == 2
    # Each attempt is signed as api/README.md tells a receiver to check it:
    # t=<unix seconds>,v1=HMAC-SHA256(secret, "<t>." + body), with t close to now.
    secret = webhook_secret("acme-quotes").encode()
    for r in receiver.received:
        fields = dict(item.split("=", 1) for item in r.headers["X-Fabric-Signature"].split(","))
        assert abs(time.time() - int(fields["t"])) < 300
        mac = hmac.new(secret, f"{fields['t']}.".encode() + r.body, hashlib.sha256).hexdigest()
        assert fields["v1"] == mac
    assert json.loads(receiver.received[-1].body)["scenario"]["id"] == scenario["id"]


@pytest.mark.django_db
def test_the_quoting_flow_in_process(run_tasks: Callable[[], Any]) -> None:
    def submit(http: APIClient, body: dict[str, Any]) -> Any:
        with run_tasks():
            return http.post("/api/v1/scenarios/", body)

    def wait_for_success(http: APIClient, url: str) -> dict[str, Any]:
        return dict(http.get(url).json())  # eager: finished before the POST returned

    the_quoting_flow(submit, wait_for_success)
