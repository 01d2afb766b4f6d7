"""Rate limits: per API client (or staff user) and per address for anonymous callers.

Rates are read from settings on every request (so tests and operators can change them) and
counted in settings.API_THROTTLE_CACHE, shared by every web process.

The counters are a side service: when Redis is unreachable a throttle lets the request through
(fails open, logged) rather than turning every read and submission into a 500. A submission
made then is stored and left to the reconciler (advisor.scenarios.claims).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from advisor.cache import COUNTER_ERRORS, counter_unavailable
from api.permissions import api_client_of


class _ApiThrottle(SimpleRateThrottle):
    def __init__(self) -> None:
        self.cache = caches[settings.API_THROTTLE_CACHE]
        super().__init__()

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except COUNTER_ERRORS as exc:
            counter_unavailable(f"API throttle {self.scope}", exc)
            return True

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
