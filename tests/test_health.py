from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client


@pytest.mark.django_db
def test_healthz_reports_database_broker_and_mode(client: Client) -> None:
    response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert body["mode"] == settings.RUN_MODE
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True


@pytest.mark.django_db
def test_healthz_answers_503_when_the_broker_is_unreachable(
    client: Client, settings: object
) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # type: ignore[attr-defined]
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
