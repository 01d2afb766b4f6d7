"""Rate limits per client and per address for anonymous callers, counted in a process's memory
(tests, embedded mode: DRF's own code) and in Redis (services mode: api.throttling's script)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.conf import settings as live_settings
from rest_framework.test import APIClient

from tests.api.conftest import Caller

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True, params=["memory", pytest.param("redis", marks=pytest.mark.services)])
def counter_store(request: pytest.FixtureRequest, settings: Any) -> str:
    """Every test here runs against both stores; the Redis one under its own key prefix."""
    if request.param == "redis":
        settings.CACHES = {
            **settings.CACHES,
            settings.API_THROTTLE_CACHE: {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": live_settings.REDIS_URL,
                "KEY_PREFIX": f"throttle-test-{uuid.uuid4()}",
            },
        }
    return str(request.param)


@pytest.fixture
def tight_limits(settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "client": "3/minute"},
    }


def test_a_client_over_its_rate_gets_429_with_retry_after(
    client_a: Caller, tight_limits: None
) -> None:
    statuses = [client_a.http.get("/api/v1/scenarios/").status_code for _ in range(4)]

    assert statuses == [200, 200, 200, 429]
    response = client_a.http.get("/api/v1/scenarios/")
    assert response.json()["error"]["code"] == "throttled"
    assert response.json()["error"]["message"].startswith("Request was throttled.")
    assert 0 < int(response["Retry-After"]) <= 60


def test_one_clients_traffic_does_not_throttle_another(
    client_a: Caller, client_b: Caller, tight_limits: None
) -> None:
    for _ in range(4):
        client_a.http.get("/api/v1/scenarios/")

    assert client_b.http.get("/api/v1/scenarios/").status_code == 200


def test_anonymous_callers_are_limited_per_address_even_when_refused(
    anonymous: Caller, tight_limits: None
) -> None:
    statuses = [anonymous.http.get("/api/v1/scenarios/").status_code for _ in range(3)]

    assert statuses == [401, 401, 429]
    elsewhere = APIClient(REMOTE_ADDR="192.0.2.10")
    assert elsewhere.get("/api/v1/scenarios/").status_code == 401


def test_a_forged_forwarded_for_header_does_not_reset_the_anonymous_limit(
    anonymous: Caller, tight_limits: None
) -> None:
    for i in range(2):
        anonymous.http.get("/api/v1/schema/", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}")

    response = anonymous.http.get("/api/v1/schema/", HTTP_X_FORWARDED_FOR="198.51.100.99")

    assert response.status_code == 429


def test_wrong_tokens_count_against_the_anonymous_limit(tight_limits: None) -> None:
    guesser = APIClient()
    guesser.credentials(HTTP_AUTHORIZATION="Token abc.guess")

    statuses = [guesser.get("/api/v1/scenarios/").status_code for _ in range(3)]

    assert statuses == [401, 401, 429]
