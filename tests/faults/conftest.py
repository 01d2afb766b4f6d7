"""Fixtures for the fault tests: short reliability thresholds, beat, a clean broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import redis_flush, redis_start, redis_up
from tests.support.workers import WorkerProcess, database_url_for, start_beat

# Seconds, shrunk from production's defaults so each fault resolves within a test's patience:
# a worker is presumed dead 4 s after its last heartbeat, a queued message lost after 6 s,
# beat reconciles every 2 s. The heartbeat (1 s) stays well under the staleness.
FAULT_ENV = {
    "RUN_STALE_AFTER_S": "4",
    "RUN_HEARTBEAT_EVERY_S": "1",
    "RUN_QUEUED_LOST_AFTER_S": "6",
    "RUN_RECONCILE_EVERY_S": "2",
    "RUN_RETRY_BACKOFF_MAX_S": "4",
    "LOG_LEVEL": "INFO",
}


@pytest.fixture
def clean_broker() -> Iterator[None]:
    """Each fault test starts and ends with an empty Redis (no message of another test)."""
    if not redis_up():
        redis_start()
    redis_flush()
    yield
    if not redis_up():
        redis_start()
    redis_flush()


@pytest.fixture
def beat_factory(
    django_db_setup: Any, django_db_blocker: Any, tmp_path: Path
) -> Iterator[Callable[..., WorkerProcess]]:
    """Start `celery beat` on the test database (stopped afterwards)."""
    from django.db import connection

    started: list[WorkerProcess] = []

    def start(**extra_env: str) -> WorkerProcess:
        beat = start_beat(
            database_url=database_url_for(connection.settings_dict),
            schedule_path=str(tmp_path / f"celerybeat-{len(started)}"),
            extra_env=extra_env,
        )
        started.append(beat)
        return beat

    yield start
    for beat in started:
        beat.stop()
