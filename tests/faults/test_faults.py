"""Fault tests against real processes: workers killed with kill -9, Redis restarted,
PostgreSQL stopped under running work, a message delivered twice.

Every test ends the same way: each submitted scenario has SUCCEEDED (or FAILED with a reason
when its input is invalid) and nothing is left QUEUED or RUNNING. Waits are polls with
generous timeouts; the only sleeps are the length of an outage, never an assertion.

FABRIC_TEST_EVAL_DELAY_S (a test-only hook, refused in production) holds each evaluation in
flight for that many seconds so a fault can land in the middle of a run deterministically.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from django.db import close_old_connections, connection
from django.test import override_settings

from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun, Sweep, SweepStatus
from advisor.scenarios.services import run_enqueue, scenario_submit
from advisor.scenarios.sweeps.selectors import sweep_results
from advisor.scenarios.sweeps.services import sweep_create
from advisor.scenarios.tasks import run_scenario
from tests.faults.conftest import FAULT_ENV, RECOVERY_S
from tests.support.services import (
    postgres_start,
    postgres_stop,
    redis_flush,
    redis_start,
    redis_stop,
    redis_up,
)
from tests.support.workers import WorkerProcess, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]

SETTLE_TIMEOUT_S = 150

TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "gpus_per_node": 8,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}
# Valid when saved, invalid for the engine (a GPU count it cannot split over servers):
# such a run must end FAILED with the engine's reason, never be retried.
UNEVALUABLE = {**TRAINING, "gpus": 12}

Factory = Callable[..., WorkerProcess]


def submit(n: int, name: str = "Two-server training") -> list[ScenarioRun]:
    return [scenario_submit(name=f"{name} {i}", inputs=TRAINING) for i in range(n)]


def submit_unevaluable() -> ScenarioRun:
    """A saved scenario whose inputs the engine refuses (saved before a rule changed)."""
    scenario = Scenario.objects.create(name="Uneven servers", inputs=UNEVALUABLE)
    return run_enqueue(scenario=scenario)


def status_of(run: ScenarioRun) -> str:
    return ScenarioRun.objects.values_list("status", flat=True).get(pk=run.pk)


def unsettled() -> int:
    return ScenarioRun.objects.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).count()


def logs(*processes: WorkerProcess) -> str:
    return "\n".join(line for p in processes for line in p.log[-60:])


def assert_settled(
    runs: list[ScenarioRun], *processes: WorkerProcess, invalid: tuple[ScenarioRun, ...] = ()
) -> None:
    """Every run SUCCEEDED, the invalid ones FAILED with a reason; none QUEUED or RUNNING."""
    assert wait_until(lambda: unsettled() == 0, timeout_s=SETTLE_TIMEOUT_S), logs(*processes)
    invalid_ids = {r.pk for r in invalid}
    for run in [*runs, *invalid]:
        run.refresh_from_db()
        if run.pk in invalid_ids:
            assert run.status == RunStatus.FAILED
            assert "gpus" in (run.error_fields or {}), run.error
            assert run.error
        else:
            assert run.status == RunStatus.SUCCEEDED, f"{run.pk}: {run.error}\n{logs(*processes)}"
            assert run.result is not None
            assert run.progress == 100
    assert ScenarioRun.objects.count() == len(runs) + len(invalid)


def successes_logged(run: ScenarioRun, *processes: WorkerProcess) -> int:
    return sum(f"run {run.pk} succeeded" in line for p in processes for line in p.log)


def test_a_worker_killed_mid_run_has_its_message_redelivered_to_another_worker(
    worker_factory: Factory, clean_broker: None
) -> None:
    """acks_late: the killed worker never acknowledged, so Redis hands the message out again
    after the visibility timeout; the run's heartbeat has stopped, so the new worker claims it.
    (No beat here: the broker alone. The visibility timeout is shortened from production's
    600 s, but kept above the default staleness of 30 s: a message handed out again before
    the claim looks stale would find the run still held and do nothing.)"""
    env = {**FAULT_ENV, "CELERY_VISIBILITY_TIMEOUT_S": "35"}
    doomed = worker_factory("doomed", **env, FABRIC_TEST_EVAL_DELAY_S="300")
    (run,) = submit(1)
    assert wait_until(lambda: status_of(run) == RunStatus.RUNNING, timeout_s=60), logs(doomed)

    doomed.kill()
    rescuer = worker_factory("rescuer", **env)

    assert_settled([run], doomed, rescuer)
    run.refresh_from_db()
    assert run.attempts == 2
    assert successes_logged(run, doomed) == 0
    assert successes_logged(run, rescuer) == 1


def test_runs_of_a_killed_worker_are_requeued_by_the_reconciler_within_a_minute(
    worker_factory: Factory, beat_factory: Factory, clean_broker: None
) -> None:
    """With production's long visibility timeout the broker would wait 10 minutes: the
    reconciler sees the heartbeats stop, revokes the claims and sends the runs again, within
    RECOVERY_S of the kill at the default settings (stale after 30 s, a tick every 10 s)."""
    doomed = worker_factory("doomed", concurrency=2, **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="300")
    runs = submit(2)
    invalid = submit_unevaluable()
    assert wait_until(lambda: all(status_of(r) == RunStatus.RUNNING for r in runs), timeout_s=60), (
        logs(doomed)
    )
    # The rest of the deployment is up when the worker dies, as in production.
    rescuer = worker_factory("rescuer", concurrency=2, **FAULT_ENV)
    beat = beat_factory(**FAULT_ENV)

    doomed.kill()
    killed_at = time.monotonic()

    assert wait_until(lambda: unsettled() == 0, timeout_s=RECOVERY_S), logs(rescuer, beat)
    recovered_s = time.monotonic() - killed_at
    print(f"killed worker's runs recovered {recovered_s:.1f} s after the kill")
    assert_settled(runs, doomed, rescuer, beat, invalid=(invalid,))
    for run in runs:
        run.refresh_from_db()
        assert run.attempts == 2
        assert successes_logged(run, rescuer) == 1
    assert any("orphaned runs requeued" in line for line in rescuer.log)


def test_runs_queued_when_the_broker_loses_its_queue_complete_within_a_minute(
    worker_factory: Factory, beat_factory: Factory, clean_broker: None
) -> None:
    """Redis empties (a restart without its append-only file, a flush) while runs wait in the
    queue: the reconciler's sentinel key went with it, so the next tick resends every queued
    run instead of waiting for them to look lost."""
    import redis
    from django.conf import settings

    from advisor.scenarios.claims import BROKER_SENTINEL_KEY

    broker = redis.Redis.from_url(settings.REDIS_URL)
    worker = worker_factory("w1", concurrency=1, **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="3")
    beat = beat_factory(**FAULT_ENV)
    assert wait_until(lambda: broker.exists(BROKER_SENTINEL_KEY) == 1, timeout_s=60), logs(beat)
    runs = submit(4)
    assert wait_until(lambda: status_of(runs[0]) == RunStatus.RUNNING, timeout_s=60)

    redis_flush()  # the queued messages are gone
    lost_at = time.monotonic()

    assert wait_until(lambda: unsettled() == 0, timeout_s=RECOVERY_S), logs(worker, beat)
    print(f"runs of a lost queue recovered {time.monotonic() - lost_at:.1f} s after the loss")
    assert_settled(runs, worker, beat)
    assert any("the broker lost its queues" in line for line in worker.log)
    broker.close()


def test_the_api_reads_and_accepts_while_redis_is_down_and_the_run_succeeds_after(
    worker_factory: Factory, beat_factory: Factory, clean_broker: None, settings: Any
) -> None:
    """Redis stops: the API still reads (200) and accepts (202) with its throttles' counters
    unreachable, the submission is stored unsent, and it succeeds within RECOVERY_S of Redis
    coming back."""
    from django.conf import settings as live

    from tests.api.conftest import token_caller

    settings.CACHES = {
        **live.CACHES,
        live.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": live.REDIS_URL,
            "KEY_PREFIX": "api-throttle",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    worker = worker_factory("w1", **FAULT_ENV)
    beat = beat_factory(**FAULT_ENV)
    caller = token_caller("quotes-during-outage")

    redis_stop()
    try:
        read = caller.http.get("/api/v1/scenarios/")
        accepted = caller.http.post(
            "/api/v1/scenarios/",
            {"name": "Submitted while Redis was down", "inputs": TRAINING},
            format="json",
        )
    finally:
        redis_start()
    back_at = time.monotonic()

    assert read.status_code == 200, read.content
    assert accepted.status_code == 202, accepted.content
    run = ScenarioRun.objects.get(scenario__name="Submitted while Redis was down")
    assert wait_until(lambda: status_of(run) == RunStatus.SUCCEEDED, timeout_s=RECOVERY_S), logs(
        worker, beat
    )
    print(f"run accepted during the outage succeeded {time.monotonic() - back_at:.1f} s after")
    assert redis_up()


def test_runs_queued_across_a_redis_restart_all_complete(
    worker_factory: Factory, beat_factory: Factory, clean_broker: None
) -> None:
    """Queued messages survive a restart (append-only file); the worker reconnects; a run
    submitted while Redis was down (its message never left) is resent by the reconciler."""
    worker = worker_factory("w1", concurrency=2, **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="2")
    beat = beat_factory(**FAULT_ENV)
    runs = submit(6)
    invalid = submit_unevaluable()

    redis_stop()
    submitted_during_outage = submit(1, name="Submitted while Redis was down")
    time.sleep(3)  # the outage
    redis_start()

    assert_settled(runs + submitted_during_outage, worker, beat, invalid=(invalid,))
    for run in runs + submitted_during_outage:
        assert successes_logged(run, worker) == 1
    assert any(re.search(r"[1-9]\d* lost messages resent", line) for line in worker.log)


def test_runs_in_flight_when_postgresql_stops_complete_after_it_returns(
    worker_factory: Factory, beat_factory: Factory, clean_broker: None
) -> None:
    """The database goes away under running evaluations: finishing fails, the task retries
    with backoff holding its claim, and completes once PostgreSQL is back (or the reconciler
    re-runs it when the claim went stale meanwhile)."""
    worker = worker_factory("w1", concurrency=2, **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="3")
    beat = beat_factory(**FAULT_ENV)
    runs = submit(4)
    assert wait_until(
        lambda: sum(status_of(r) == RunStatus.RUNNING for r in runs) == 2, timeout_s=60
    ), logs(worker)

    connection.close()
    postgres_stop()
    time.sleep(5)  # the outage, longer than the evaluations still in flight
    postgres_start()
    close_old_connections()

    assert_settled(runs, worker, beat)
    assert any("interrupted by a database error; retrying" in line for line in worker.log)
    for run in runs:
        assert successes_logged(run, worker) == 1


def test_the_same_message_delivered_twice_produces_one_result(
    worker_factory: Factory, clean_broker: None
) -> None:
    """Two workers receive the same message at the same time: the claim lets one in."""
    first = worker_factory("first", **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="3")
    second = worker_factory("second", **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="3")
    scenario = Scenario.objects.create(name="Delivered twice", inputs=TRAINING)
    run = ScenarioRun.objects.create(scenario=scenario)
    task_id = str(uuid.uuid4())

    for _ in range(2):
        run_scenario.apply_async(args=[str(run.pk)], task_id=task_id)

    assert_settled([run], first, second)
    assert wait_until(
        lambda: (
            sum(f"run {run.pk} not claimed" in line for p in (first, second) for line in p.log) == 1
        ),
        timeout_s=60,
    ), logs(first, second)
    run.refresh_from_db()
    assert run.attempts == 1
    assert successes_logged(run, first, second) == 1
    finished_at = run.finished_at

    # A third, late delivery of the same message changes nothing either.
    run_scenario.apply_async(args=[str(run.pk)], task_id=task_id)
    assert wait_until(
        lambda: (
            sum(f"run {run.pk} not claimed" in line for p in (first, second) for line in p.log) == 2
        ),
        timeout_s=60,
    )
    run.refresh_from_db()
    assert (run.status, run.attempts, run.finished_at) == (RunStatus.SUCCEEDED, 1, finished_at)


def test_a_sweep_whose_worker_is_killed_completes_with_every_point_counted_once(
    worker_factory: Factory, beat_factory: Factory, clean_broker: None
) -> None:
    """A chunk orphaned by kill -9 is requeued by the reconciler and evaluated again; the
    sweep's counters, added by each chunk's finishing transaction, count it exactly once."""
    doomed = worker_factory("doomed", **FAULT_ENV, FABRIC_TEST_EVAL_DELAY_S="300")
    scenario = Scenario.objects.create(name="Sweep under fire", inputs=TRAINING)
    with override_settings(SWEEP_CHUNK_POINTS=10):
        sweep = sweep_create(
            scenario=scenario,
            axes={"fabric": ["roce", "infiniband"], "nic_gbps": [100, 200, 400, 800, 1600]},
        )
    assert sweep.total_chunks == 1
    assert wait_until(
        lambda: sweep.chunks.filter(status=RunStatus.RUNNING).exists(), timeout_s=60
    ), logs(doomed)

    doomed.kill()
    rescuer = worker_factory("rescuer", **FAULT_ENV)
    beat = beat_factory(**FAULT_ENV)

    assert wait_until(
        lambda: Sweep.objects.get(pk=sweep.pk).is_finished, timeout_s=SETTLE_TIMEOUT_S
    ), logs(doomed, rescuer, beat)
    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.SUCCEEDED, sweep.error
    assert (sweep.done_points, sweep.done_chunks) == (10, 1)
    assert sweep.chunks.get().attempts == 2
    assert [row.i for row in sweep_results(sweep)] == list(range(10))
