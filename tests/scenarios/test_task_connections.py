"""advisor.celery closes a worker's database connection around each task as Django closes one
around a request, but never the caller's connection around a task run eagerly (in-process)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.db import connection

from advisor.celery import _database_as_for_a_request
from tests.support.db import ConnectionCloses

pytestmark = pytest.mark.django_db


def _task(*, eager: bool) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(is_eager=eager))


def test_an_eager_task_leaves_the_callers_connection_usable(
    connection_closes: ConnectionCloses,
) -> None:
    connection.ensure_connection()
    connection.close_at = 0.0  # obsolete: only the eager path keeps it
    before = connection.connection
    _database_as_for_a_request(task=_task(eager=True))  # type: ignore[arg-type]
    assert connection.connection is before
    assert connection_closes.calls == 0
    assert not connection.closed_in_transaction
    with connection.cursor() as cursor:  # the caller's next query
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_a_worker_task_closes_an_obsolete_connection(connection_closes: ConnectionCloses) -> None:
    connection.ensure_connection()
    connection.close_at = 0.0  # older than DATABASE_CONN_MAX_AGE
    _database_as_for_a_request(task=_task(eager=False))  # type: ignore[arg-type]
    assert connection_closes.calls == 1
    # inside the test's transaction Django marks it closed rather than dropping it (PostgreSQL;
    # SQLite's in-memory test database is never closed: tests.support.db)
    if connection.vendor != "sqlite":
        assert connection.closed_in_transaction or connection.connection is None
