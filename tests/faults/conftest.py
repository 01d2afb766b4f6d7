"""Fixtures for the fault tests: short reliability thresholds, beat, a clean broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.services import redis_flush, redis_start, redis_up
from tests.support.workers import WorkerProcess, database_url_for, start_beat

# The fault tests run at production's default reliability settings (advisor/settings.py:
# stale after 30 s, heartbeat every 7 s, lost after 45 s, a reconciler tick every 10 s), so
# what they show about recovery times holds for a default deployment. Only the transient
# retries' backoff is capped lower, so a retry after a database outage is not a minute away.
FAULT_ENV = {
    "RUN_RETRY_BACKOFF_MAX_S": "4",
    "LOG_LEVEL": "INFO",
}
# What "recovered within a minute" means in these tests: from the fault (a worker killed, the
# broker's queue lost, Redis back after an outage) to every run finished.
RECOVERY_S = 60


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
