"""The reconciler: what it resends, what it requeues, what it gives up on, what it leaves alone."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from advisor.scenarios import services
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.services import run_claim, runs_reconcile

pytestmark = pytest.mark.django_db

INPUTS = {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}


@pytest.fixture
def sent(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> Iterator[list[uuid.UUID]]:
    """The run ids the reconciler sends to the broker (nothing really sent)."""
    published: list[uuid.UUID] = []

    def publish(run_id: uuid.UUID) -> bool:
        published.append(run_id)
        return True

    monkeypatch.setattr(services, "_run_publish", publish)
    with django_capture_on_commit_callbacks(execute=True):
        yield published


def run(status: RunStatus = RunStatus.QUEUED, **fields: Any) -> ScenarioRun:
    scenario = Scenario.objects.create(name="Two servers", inputs=INPUTS)
    return ScenarioRun.objects.create(scenario=scenario, status=status, **fields)


def seconds_ago(seconds: float) -> Any:
    return timezone.now() - timedelta(seconds=seconds)


def test_a_queued_run_whose_message_was_lost_is_sent_again(
    sent: list[uuid.UUID], settings: Any
) -> None:
    lost = run(enqueued_at=seconds_ago(settings.RUN_QUEUED_LOST_AFTER_S + 5))

    report = runs_reconcile()

    assert report == {"requeued": 0, "resent": 1, "given_up": 0}
    lost.refresh_from_db()
    assert lost.status == RunStatus.QUEUED
    assert lost.enqueued_at > seconds_ago(5)


def test_a_recently_queued_run_is_left_to_its_message(sent: list[uuid.UUID]) -> None:
    run(enqueued_at=seconds_ago(1))

    assert runs_reconcile() == {"requeued": 0, "resent": 0, "given_up": 0}


def test_a_running_run_whose_worker_died_goes_back_to_the_queue_with_its_claim_revoked(
    sent: list[uuid.UUID], settings: Any
) -> None:
    orphan = run()
    dead_token = run_claim(run_id=orphan.pk)
    ScenarioRun.objects.filter(pk=orphan.pk).update(
        heartbeat_at=seconds_ago(settings.RUN_STALE_AFTER_S + 5),
        enqueued_at=seconds_ago(settings.RUN_STALE_AFTER_S + 5),
        progress=40,
    )

    report = runs_reconcile()

    assert report == {"requeued": 1, "resent": 0, "given_up": 0}
    orphan.refresh_from_db()
    assert orphan.status == RunStatus.QUEUED
    assert orphan.claim_token is None
    assert orphan.progress == 0
    assert orphan.attempts == 1
    assert services.run_heartbeat(run_id=orphan.pk, token=dead_token) is False
    # Sent once: the second tick finds a freshly queued run.
    assert runs_reconcile() == {"requeued": 0, "resent": 0, "given_up": 0}


def test_a_run_with_a_live_heartbeat_is_left_alone(sent: list[uuid.UUID]) -> None:
    live = run()
    token = run_claim(run_id=live.pk)

    assert runs_reconcile() == {"requeued": 0, "resent": 0, "given_up": 0}
    live.refresh_from_db()
    assert (live.status, live.claim_token) == (RunStatus.RUNNING, token)


def test_a_run_that_lost_its_worker_every_time_is_failed_with_the_reason(
    sent: list[uuid.UUID], settings: Any
) -> None:
    doomed = run(
        RunStatus.RUNNING,
        attempts=settings.RUN_MAX_ATTEMPTS,
        claim_token=uuid.uuid4(),
        heartbeat_at=seconds_ago(settings.RUN_STALE_AFTER_S + 5),
    )

    report = runs_reconcile()

    assert report == {"requeued": 0, "resent": 0, "given_up": 1}
    doomed.refresh_from_db()
    assert doomed.status == RunStatus.FAILED
    assert doomed.error == (
        f"Gave up after {settings.RUN_MAX_ATTEMPTS} attempts: the worker evaluating this "
        "scenario stopped responding each time."
    )
    assert sent == []


def test_finished_runs_are_never_touched(sent: list[uuid.UUID], settings: Any) -> None:
    old = seconds_ago(settings.RUN_QUEUED_LOST_AFTER_S + settings.RUN_STALE_AFTER_S + 5)
    done = run(RunStatus.SUCCEEDED, enqueued_at=old, heartbeat_at=old, result={"ok": True})
    failed = run(RunStatus.FAILED, enqueued_at=old, heartbeat_at=old, error="bad input")

    assert runs_reconcile() == {"requeued": 0, "resent": 0, "given_up": 0}
    done.refresh_from_db()
    failed.refresh_from_db()
    assert (done.status, done.result) == (RunStatus.SUCCEEDED, {"ok": True})
    assert (failed.status, failed.error) == (RunStatus.FAILED, "bad input")
    assert sent == []


def test_the_reconcile_task_skips_a_tick_when_the_database_is_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import OperationalError

    from advisor.scenarios import tasks

    def down(**kwargs: Any) -> dict[str, int]:
        raise OperationalError("connection refused")

    monkeypatch.setattr(tasks, "runs_reconcile", down)

    assert tasks.reconcile.apply().get() == {}


def test_beat_runs_the_reconciler_on_the_configured_interval(settings: Any) -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["reconcile-runs-and-sweeps"]

    assert entry["task"] == "advisor.scenarios.tasks.reconcile"
    assert entry["schedule"] == float(settings.RUN_RECONCILE_EVERY_S)
    from advisor.celery import app

    app.loader.import_default_modules()
    assert "advisor.scenarios.tasks.reconcile" in app.tasks


def test_when_the_broker_lost_its_queues_every_queued_run_is_sent_again_at_once(
    sent: list[uuid.UUID],
) -> None:
    recent = run(enqueued_at=seconds_ago(1))
    running = run(RunStatus.RUNNING, heartbeat_at=seconds_ago(1), enqueued_at=seconds_ago(1))

    report = runs_reconcile(broker_lost=True)

    assert report == {"requeued": 0, "resent": 1, "given_up": 0}
    recent.refresh_from_db()
    assert recent.enqueued_at > seconds_ago(1)  # sent again now, not when it was queued
    running.refresh_from_db()
    assert running.status == RunStatus.RUNNING


def test_a_run_marked_unsent_goes_out_on_the_next_tick(sent: list[uuid.UUID]) -> None:
    unsent = run(enqueued_at=None)

    report = runs_reconcile()

    assert report["resent"] == 1
    unsent.refresh_from_db()
    assert unsent.enqueued_at > seconds_ago(5)


@pytest.mark.services
def test_the_reconciler_notices_a_broker_that_lost_its_data(settings: Any) -> None:
    """The sentinel key lives in the broker's database: gone with it, so its absence says
    every queued message is gone too."""
    import redis

    from advisor.scenarios.claims import BROKER_SENTINEL_KEY, broker_lost_its_queue

    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(BROKER_SENTINEL_KEY)  # what a restart without persistence or a flush does

    assert broker_lost_its_queue() is True
    assert broker_lost_its_queue() is False
    assert broker_lost_its_queue() is False
    client.close()


def test_the_reconcile_task_resends_everything_queued_when_the_broker_lost_it(
    monkeypatch: pytest.MonkeyPatch, sent: list[uuid.UUID]
) -> None:
    from advisor.scenarios import tasks

    recent = run(enqueued_at=seconds_ago(1))
    monkeypatch.setattr(tasks, "broker_lost_its_queue", lambda: True)

    report = tasks.reconcile.apply().get()

    assert report["runs"]["resent"] == 1
    recent.refresh_from_db()
    assert recent.enqueued_at > seconds_ago(1)
