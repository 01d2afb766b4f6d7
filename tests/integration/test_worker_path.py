"""The real path: service -> Redis -> a separate Celery worker process -> PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection

from advisor import engine
from advisor.scenarios.models import RunStatus, ScenarioRun
from advisor.scenarios.services import scenario_submit
from advisor.scenarios.tasks import run_scenario
from tests.support.workers import WorkerProcess, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

TWO_SERVER_TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "gpus_per_node": 8,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}


def finished(run_id: object) -> bool:
    return ScenarioRun.objects.filter(
        pk=run_id, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]
    ).exists()


def test_a_submitted_scenario_is_evaluated_by_a_separate_worker_and_stored_in_postgres(
    celery_worker: WorkerProcess, purge_queue: None
) -> None:
    assert connection.vendor == "postgresql"

    run = scenario_submit(name="Two-server training", inputs=TWO_SERVER_TRAINING)

    assert wait_until(lambda: finished(run.pk), timeout_s=90), "\n".join(celery_worker.log[-30:])
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert run.progress == 100
    assert run.attempts == 1
    assert run.engine_version == engine.ENGINE_VERSION
    assert run.result["recommendation"]["needs_compute_fabric"] is True
    assert run.result["recommendation"]["fabric"] in {"roce", "infiniband", "ethernet"}
    # The worker process, not this one, did the work.
    assert any(str(run.pk) in line and "succeeded" in line for line in celery_worker.log)


def test_a_redelivered_message_for_a_finished_run_changes_nothing(
    celery_worker: WorkerProcess, purge_queue: None
) -> None:
    run = scenario_submit(name="Two-server training", inputs=TWO_SERVER_TRAINING)
    assert wait_until(lambda: finished(run.pk), timeout_s=90)
    run.refresh_from_db()
    first_finish = run.finished_at

    run_scenario.delay(str(run.pk))
    assert wait_until(
        lambda: sum(f"{run.pk}" in line and "succeeded" in line for line in celery_worker.log) >= 2,
        timeout_s=60,
    )

    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert run.attempts == 1
    assert run.finished_at == first_finish


def test_a_worker_keeps_its_database_connection_from_one_run_to_the_next(
    celery_worker: WorkerProcess, purge_queue: None
) -> None:
    """A worker process treats each task as Django treats a request (advisor.celery): its
    connection is kept settings.DATABASE_CONN_MAX_AGE seconds unless it broke, where Celery's
    Django fix-up closed it before and after every task, so each run opened a new PostgreSQL
    session (a backend process and its authentication)."""

    def sessions() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
            )
            return int(cursor.fetchone()[0])

    first = scenario_submit(name="Two-server training", inputs=TWO_SERVER_TRAINING)
    assert wait_until(lambda: finished(first.pk), timeout_s=90), "\n".join(celery_worker.log[-30:])
    before = sessions()
    for i in range(4):
        run = scenario_submit(name=f"Two-server training {i}", inputs=TWO_SERVER_TRAINING)
        assert wait_until(lambda: finished(run.pk), timeout_s=90)  # noqa: B023
        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED, run.error
    opened = sessions() - before
    assert opened <= 1, f"{opened} PostgreSQL sessions opened for 4 runs"
