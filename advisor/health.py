"""GET /healthz: can we reach the database and the broker, and in which mode do we run."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET


def _database_ok() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure to reach it is "down", reported, never raised
        return False, type(exc).__name__
    return True, connection.vendor


def _broker_ok() -> tuple[bool, str]:
    if not settings.REDIS_URL:
        return True, "in-process (eager)"
    import redis

    try:
        client = redis.Redis.from_url(
            settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1
        )
        client.ping()
    except redis.RedisError as exc:
        return False, type(exc).__name__
    return True, "redis"


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    db_ok, db_detail = _database_ok()
    broker_ok, broker_detail = _broker_ok()
    body: dict[str, Any] = {
        "status": "ok" if db_ok and broker_ok else "unavailable",
        "mode": settings.RUN_MODE,
        "database": {"ok": db_ok, "detail": db_detail},
        "broker": {"ok": broker_ok, "detail": broker_detail},
    }
    return JsonResponse(body, status=200 if db_ok and broker_ok else 503)
