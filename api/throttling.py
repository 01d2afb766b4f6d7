"""Rate limits: per API client (or staff user) and per address for anonymous callers.

Rates are read from settings on every request (so tests and operators can change them) and
counted in settings.API_THROTTLE_CACHE, shared by every web process.

The counters are a side service: when Redis is unreachable a throttle lets the request through
(fails open, logged) rather than turning every read and submission into a 500. A submission
made then is stored and left to the reconciler (advisor.scenarios.claims).

With Redis, a request is counted in one round trip (`_SLIDING_LOG`, a Lua script Redis runs
atomically: https://redis.io/docs/latest/develop/interact/programmability/eval-intro/) with
DRF's own rule, a sliding window of the last `duration` seconds holding at most
`num_requests` counted requests, refused requests not counted. DRF's SimpleRateThrottle reads
the whole window's list of timestamps and writes it back (two round trips, up to 600 pickled
timestamps each way for a client, and two web processes could both read the same list and
both let a request through past the limit). Another cache (tests, embedded mode) is counted
by DRF's code.

The script runs on one Redis client per process and cache configuration (`counter_client`,
redis-py's public client on a connection pool of its own, thread-safe), built from the
cache's settings. Django's cache objects are per thread and keep their client private, so
each server thread made its own pool and opened its own connection in its first request.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.utils.module_loading import import_string
from redis import ConnectionPool, Redis
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from advisor.cache import COUNTER_ERRORS, counter_unavailable
from api.permissions import api_client_of

# KEYS[1] a sorted set of the window's counted requests (score: time), ARGV: now, the window's
# seconds, its limit, a unique member for this request. Drops what left the window (score <=
# now - window, as DRF), counts this request if there is room, and answers
# {counted 1/0, requests in the window, the oldest one's time as a string}.
_SLIDING_LOG = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local counted = 0
if n < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('EXPIRE', KEYS[1], math.ceil(window))
  n = n + 1
  counted = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {counted, n, oldest[2] or ARGV[1]}
"""


_CLIENTS: dict[tuple[str, tuple[tuple[str, str], ...]], Redis] = {}
_CLIENTS_LOCK = threading.Lock()


def counter_client() -> Redis:
    """The process's Redis client for the rate-limit counters, on a pool of its own (built
    as Django's RedisCache builds its pools: ConnectionPool.from_url of the cache's first
    LOCATION, which takes the writes, with its OPTIONS), shared by every thread. Another
    configuration (a test's settings) gets its own client."""
    config: Any = settings.CACHES[settings.API_THROTTLE_CACHE]
    location = config["LOCATION"]
    if isinstance(location, str):
        location = location.split(",")
    url = str(location[0]).strip()
    options: dict[str, Any] = dict(config.get("OPTIONS", {}))
    key = (url, tuple(sorted((k, repr(v)) for k, v in options.items())))
    client = _CLIENTS.get(key)
    if client is None:
        with _CLIENTS_LOCK:
            client = _CLIENTS.get(key)
            if client is None:
                client = Redis(connection_pool=_pool(url, options))
                _CLIENTS[key] = client
    return client


def _pool(url: str, options: dict[str, Any]) -> ConnectionPool:
    """A pool as Django's RedisCacheClient makes one from a cache's OPTIONS (its own
    `serializer`, `pool_class` and `parser_class` options read as it reads them)."""
    options.pop("serializer", None)  # the script's arguments and answer are not pickled
    pool_class = options.pop("pool_class", None) or ConnectionPool
    if isinstance(pool_class, str):
        pool_class = import_string(pool_class)
    parser_class = options.get("parser_class")
    if isinstance(parser_class, str):
        options["parser_class"] = import_string(parser_class)
    pool: ConnectionPool = pool_class.from_url(url, **options)
    return pool


class _ApiThrottle(SimpleRateThrottle):
    def __init__(self) -> None:
        self.cache = caches[settings.API_THROTTLE_CACHE]
        super().__init__()
        # Redis's answer for wait(): (limit, window s, requests in it, the oldest one's time)
        self._window: tuple[int, int, int, float] | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            if isinstance(self.cache, RedisCache):
                return self._allow_counted_in_redis(self.cache, request, view)
            return super().allow_request(request, view)
        except COUNTER_ERRORS as exc:
            counter_unavailable(f"API throttle {self.scope}", exc)
            return True

    def _allow_counted_in_redis(self, cache: RedisCache, request: Request, view: Any) -> bool:
        """DRF's allow_request with the window kept in Redis and counted in one round trip."""
        num_requests, duration = self.parse_rate(self.rate)
        if num_requests is None or duration is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        key = cache.make_and_validate_key(self.key)
        counted, in_window, oldest = counter_client().eval(
            _SLIDING_LOG, 1, key, repr(self.now), duration, num_requests, uuid.uuid4().hex
        )
        self._window = (num_requests, duration, int(in_window), float(oldest))
        return bool(counted)

    def wait(self) -> float | None:
        """Seconds until a request would be counted again (Retry-After), as DRF's wait()."""
        if self._window is None:
            return super().wait()
        num_requests, duration, in_window, oldest = self._window
        available = num_requests - in_window + 1
        if available <= 0:
            return None
        return (duration - (self.now - oldest)) / available

    def get_rate(self) -> str | None:
        rest_framework: dict[str, Any] = settings.REST_FRAMEWORK
        rate = rest_framework.get("DEFAULT_THROTTLE_RATES", {}).get(str(self.scope))
        return str(rate) if rate else None


class AnonymousThrottle(_ApiThrottle):
    """Callers without credentials, by address (the schema, the docs, and every 401)."""

    scope = "anon"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ClientThrottle(_ApiThrottle):
    """Each API client by its id; a staff user in the browser by user id."""

    scope = "client"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        client = api_client_of(request)
        ident = f"client-{client.pk}" if client is not None else f"user-{request.user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
