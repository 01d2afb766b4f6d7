"""An API process pays its first read's one-off costs before its first request (api.warm)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from advisor.scenarios.catalog_store import catalog_current
from api import warm
from api.apis import quotes
from tests.support.db import ConnectionCloses

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_warm_up_keeps_the_served_catalog_and_writes_nothing(
    monkeypatch: pytest.MonkeyPatch, connection_closes: ConnectionCloses
) -> None:
    quotes._CATALOG_SERVED.clear()
    sql: list[str] = []
    with CaptureQueriesContext(connection) as captured:
        took = warm.warm_up()
        sql = [q["sql"] for q in captured.captured_queries]
    assert set(took) == set(warm.STEPS)
    # the token lookup and the scenario list ran their queries, and nothing was written
    assert any('"api_apiclient"' in q for q in sql)
    assert any('"scenarios_scenario"' in q for q in sql)
    assert not [q for q in sql if q.split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]
    # no database connection is left for processes forked after the warm-up
    assert connection_closes.released()

    # the catalog as served is kept: the first GET /api/v1/catalog/ does not write it again
    def written_again(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the served catalog was not kept by the warm-up")

    catalog = catalog_current()
    monkeypatch.setattr(quotes.CatalogApi, "OutputSerializer", written_again)
    assert quotes.catalog_served(catalog)["version"] == catalog.version


def test_a_failing_step_is_logged_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("no such table")

    steps: dict[str, Any] = {"broken": broken, "after": lambda: ran.append("after")}
    monkeypatch.setattr(warm, "STEPS", steps)
    with caplog.at_level(logging.ERROR, logger="api.warm"):
        took = warm.warm_up()
    assert "API warm-up step 'broken' failed" in caplog.text
    assert ran == ["after"]
    assert set(took) == {"broken", "after"}


def test_a_forked_worker_runs_the_steps_again_keeping_its_pool_and_counting_no_limit(
    settings: Any, connection_closes: ConnectionCloses
) -> None:
    """gunicorn's post_fork (gunicorn.conf.py): the steps again in the worker, its connections
    given back (not its pool closed), no request served and no rate limit counted."""
    from django.core.cache import caches

    import advisor.warm

    closed: list[int] = []
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(advisor.warm, "close_pools", lambda: closed.append(1))
    try:
        quotes._CATALOG_SERVED.clear()
        took = warm.warm_worker()
    finally:
        monkeypatch.undo()

    assert set(took) == set(warm.STEPS)
    assert quotes._CATALOG_SERVED  # the steps ran in this process
    assert closed == []  # the worker's pool stays open
    assert connection_closes.released()  # its connection given back
    throttle = caches[settings.API_THROTTLE_CACHE]
    assert getattr(throttle, "_cache", {}) == {}
