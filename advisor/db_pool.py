"""A web process's PostgreSQL connection pool (settings.DATABASE_POOL): closed before a fork,
filled before the process answers anyone.

Django keeps one pool per process and database alias (psycopg_pool, opened on first use). Its
connections and its background threads must not cross a fork: gunicorn's master, which warms
the app before forking the workers (preload_app), closes its pool after the warm-up
(`close_pools`, from advisor.warm.run_steps), and each worker opens its own.

Without a pool, each gunicorn thread opened its own connection inside its first request: a new
PostgreSQL backend process and SCRAM authentication, on all twelve threads of `make load`'s
three workers at once as the 50 users' first requests arrived together. gunicorn's post_fork
hook (gunicorn.conf.py) calls `fill_pools` with the worker's thread count, so that many
connections are open before the worker accepts a request.

A Celery worker uses plain connections (`use_plain_connections`, from advisor.celery).
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import connections

logger = logging.getLogger(__name__)


def close_pools() -> None:
    """Close every connection of this process, and its pools with them (no-op without one)."""
    for conn in connections.all(initialized_only=True):
        conn.close()
        close_pool = getattr(conn, "close_pool", None)  # PostgreSQL's wrapper has one
        if close_pool is not None and getattr(conn, "pool", None) is not None:
            close_pool()


def fill_pools(connections_wanted: int) -> int:
    """Open up to `connections_wanted` connections in each pool (its max_size at most) and
    leave them idle in it; returns how many were opened in all. A database that does not
    answer is logged, not raised: the pool opens connections on demand then, as without this."""
    opened = 0
    for conn in connections.all():
        pool = getattr(conn, "pool", None)
        if pool is None:
            continue
        started = time.perf_counter()
        held = []
        try:
            pool.open()
            for _ in range(min(connections_wanted, pool.max_size)):
                held.append(pool.getconn(timeout=5))
        except Exception:  # a warm-up never stops a server from starting
            logger.exception("could not fill the %s connection pool", conn.alias)
        finally:
            for pg in held:
                pool.putconn(pg)
        opened += len(held)
        logger.info(
            "%s pool: %d connections open in %.0f ms",
            conn.alias,
            len(held),
            (time.perf_counter() - started) * 1000,
        )
    return opened


def use_plain_connections() -> None:
    """Turn this process's pools off: each thread opens its own connection and keeps it
    settings.DATABASE_CONN_MAX_AGE seconds, as without DATABASE_POOL (a Celery worker, whose
    Django fix-up would close a pool around every task: advisor.celery)."""
    close_pools()
    for alias in connections:
        options = connections.settings[alias].get("OPTIONS", {})
        if options.pop("pool", None) is not None:
            connections.settings[alias]["CONN_MAX_AGE"] = settings.DATABASE_CONN_MAX_AGE
