"""With Redis (services mode) a request's rate limit is counted in one round trip, atomically
(api.throttling._SLIDING_LOG); tests/api/test_throttling.py checks the limits it enforces."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from django.conf import settings as live_settings
from django.core.cache import caches
from redis import Redis
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from api.throttling import AnonymousThrottle, counter_client
from tests.api.conftest import Caller

pytestmark = [pytest.mark.django_db, pytest.mark.services]


def test_a_request_is_counted_in_one_round_trip_in_a_sorted_set_that_expires(
    client_a: Caller, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": live_settings.REDIS_URL,
            "KEY_PREFIX": f"throttle-test-{uuid.uuid4()}",
        },
    }
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "client": "3/minute"},
    }
    sent: list[str] = []
    execute: Any = Redis.execute_command

    def recorded(self: Redis, *args: Any, **options: Any) -> Any:
        sent.append(str(args[0]))
        return execute(self, *args, **options)

    monkeypatch.setattr(Redis, "execute_command", recorded)
    assert client_a.http.get("/api/v1/scenarios/").status_code == 200
    assert sent == ["EVAL"]
    monkeypatch.setattr(Redis, "execute_command", execute)

    cache = caches[live_settings.API_THROTTLE_CACHE]
    client = counter_client()
    (key,) = client.keys(cache.make_key("throttle_client_*"))
    assert client.type(key) == b"zset"
    assert client.zcard(key) == 1
    assert 0 < client.ttl(key) <= 60
    # a refused request is not counted: the window holds the three counted ones
    statuses = [client_a.http.get("/api/v1/scenarios/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert client.zcard(key) == 3


def test_server_threads_count_on_one_shared_redis_connection(settings: Any) -> None:
    """A web process's threads share one client and pool (api.throttling.counter_client):
    Django's cache objects are per thread, so each server thread made its own pool and opened
    a connection of its own inside its first request (12 at once in `make load`'s first
    second). Requests counted one after the other from four new threads open one at most."""
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": live_settings.REDIS_URL,
            "KEY_PREFIX": f"throttle-test-{uuid.uuid4()}",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    observer = Redis.from_url(live_settings.REDIS_URL)

    def connections_received() -> int:
        return int(observer.info("stats")["total_connections_received"])

    counted: list[bool] = []

    def one_request() -> None:
        request = Request(APIRequestFactory().get("/api/v1/scenarios/"), authenticators=())
        counted.append(AnonymousThrottle().allow_request(request, view=None))

    before = connections_received()
    for _ in range(4):
        thread = threading.Thread(target=one_request)
        thread.start()
        thread.join()
    opened = connections_received() - before
    assert counted == [True] * 4
    assert opened <= 1, f"{opened} connections for 4 requests"
