"""Shared fixtures: personas, eager tasks for unit tests, real workers for service tests."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.support.db import ConnectionCloses
from tests.support.workers import WorkerProcess, database_url_for, start_worker

SERVICES_REQUIRED = os.environ.get("FABRIC_REQUIRE_SERVICES") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Service tests need the real PostgreSQL and Redis that `make test` starts.

    Under `make test` (FABRIC_REQUIRE_SERVICES=1) they always run; a bare `pytest` without
    those services skips them with the reason, instead of failing for a missing server.
    """
    has_services = bool(os.environ.get("REDIS_URL")) and os.environ.get(
        "DATABASE_URL", ""
    ).startswith("postgres")
    if has_services or SERVICES_REQUIRED:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL, Redis and workers: run `make test`")
    for item in items:
        if "services" in item.keywords or "faults" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _celery_mode(request: pytest.FixtureRequest) -> Iterator[None]:
    """Unit tests run tasks in-process; `services` tests send them to real workers."""
    from advisor.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = not (
        "services" in request.keywords or "faults" in request.keywords
    )
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _fresh_throttle_counters(request: pytest.FixtureRequest) -> None:
    """Each test starts with unused rate limits, in a memory cache of its own.

    Never clear() the shared cache instead: in services mode it is Redis, where clearing
    would flush the broker's queues too. (Engine tests may run without Django: -p no:django.)
    """
    if not request.config.pluginmanager.hasplugin("django"):
        return
    settings = request.getfixturevalue("settings")
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"throttle-{uuid.uuid4()}",
        },
    }


@pytest.fixture(autouse=True)
def _fresh_whatif_answers(request: pytest.FixtureRequest) -> None:
    """Each test prices its what-ifs afresh (a kept answer would hide a stubbed engine or a
    time limit the test sets)."""
    if not request.config.pluginmanager.hasplugin("django"):
        return
    from advisor.scenarios.whatif import priced_clear

    priced_clear()


@pytest.fixture
def worker_factory(
    django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start real Celery worker processes on the test database; all stopped afterwards."""
    from django.db import connection

    started: list[WorkerProcess] = []
    url = database_url_for(connection.settings_dict)

    def start(name: str = "", concurrency: int = 1, **extra_env: str) -> WorkerProcess:
        worker = start_worker(
            name=name or f"w{len(started) + 1}",
            database_url=url,
            concurrency=concurrency,
            extra_env=extra_env,
        )
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def celery_worker(worker_factory: Callable[..., WorkerProcess]) -> WorkerProcess:
    return worker_factory("w1")


@pytest.fixture
def purge_queue() -> Iterator[None]:
    """Start and end with an empty broker queue so tests do not see each other's messages."""
    from advisor.celery import app

    app.control.purge()
    yield
    app.control.purge()


@pytest.fixture
def connection_closes(monkeypatch: pytest.MonkeyPatch) -> ConnectionCloses:
    from django.db import connections

    wrapper = connections["default"]
    original = wrapper.close
    seen = ConnectionCloses()

    def close() -> None:
        seen.calls += 1
        original()

    monkeypatch.setattr(wrapper, "close", close)
    return seen
