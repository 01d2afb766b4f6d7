"""With Redis (services mode) a request's rate limit is counted in one round trip, atomically
(api.throttling._SLIDING_LOG); tests/api/test_throttling.py checks the limits it enforces."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.conf import settings as live_settings
from django.core.cache import caches
from redis import Redis

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
    client = cache._cache.get_client(write=False)  # type: ignore[attr-defined]
    (key,) = client.keys(cache.make_key("throttle_client_*"))
    assert client.type(key) == b"zset"
    assert client.zcard(key) == 1
    assert 0 < client.ttl(key) <= 60
    # a refused request is not counted: the window holds the three counted ones
    statuses = [client_a.http.get("/api/v1/scenarios/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert client.zcard(key) == 3
