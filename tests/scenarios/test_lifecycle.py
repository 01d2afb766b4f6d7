"""The run lifecycle without services: claim, heartbeat, finish by the claimant, retries.

The engine is replaced by small stand-ins here (its own tests live in tests/engine); what is
tested is what the worker does around it: who may finish a run, what ends FAILED and why,
and what a database error or a second delivery changes (nothing it should not).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError

from advisor.engine.result.records import EngineResult
from advisor.scenarios import services
from advisor.scenarios.claims import WorkInterrupted
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.services import (
    run_claim,
    run_enqueue,
    run_execute,
    run_fail,
    run_heartbeat,
)
from advisor.scenarios.signals import run_finished

pytestmark = pytest.mark.django_db

INPUTS = {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}
RESULT = {"engine_version": "9.9.9", "catalog_version": "cat-1", "recommendation": {}}

Evaluate = Callable[..., dict[str, Any]]


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Evaluate], None]]:
    """Replace the engine call (and the input check) with a stand-in for one test."""
    monkeypatch.setattr(services, "validate_inputs", lambda inputs: None)
    monkeypatch.setattr(services, "catalog_current", lambda: None)

    def use(fake: Evaluate) -> None:
        def typed(*args: Any, **kwargs: Any) -> EngineResult:
            return EngineResult.from_dict(fake(*args, **kwargs))

        monkeypatch.setattr(services, "evaluate_inputs", typed)

    use(lambda inputs, catalog=None, progress=None: dict(RESULT))
    yield use


@pytest.fixture
def finished_signals() -> Iterator[list[uuid.UUID]]:
    """run_finished as sent once the finishing transaction commits (see `committed`)."""
    sent: list[uuid.UUID] = []

    def receiver(sender: object, run_id: uuid.UUID, **kwargs: object) -> None:
        sent.append(run_id)

    run_finished.connect(receiver)
    yield sent
    run_finished.disconnect(receiver)


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """The test's transaction never commits: run what would run on commit, as it would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def queued_run() -> ScenarioRun:
    scenario = Scenario.objects.create(name="Two servers", inputs=INPUTS)
    return ScenarioRun.objects.create(scenario=scenario, enqueued_at=timezone.now())


def test_a_run_is_claimed_once_and_a_second_claim_gets_nothing() -> None:
    run = queued_run()

    first = run_claim(run_id=run.pk)
    second = run_claim(run_id=run.pk)

    assert first is not None
    assert second is None
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.claim_token == first
    assert run.attempts == 1


def test_a_running_run_whose_heartbeat_expired_can_be_claimed_again(
    settings: Any,
) -> None:
    run = queued_run()
    dead_workers_token = run_claim(run_id=run.pk)
    ScenarioRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RUN_STALE_AFTER_S + 1)
    )

    token = run_claim(run_id=run.pk)

    assert token is not None and token != dead_workers_token
    run.refresh_from_db()
    assert run.claim_token == token
    assert run.attempts == 2
    # The dead worker, were it only slow, can no longer touch the run.
    assert run_heartbeat(run_id=run.pk, token=dead_workers_token, progress=50) is False


def test_an_orphan_that_used_every_attempt_is_not_claimed_again(settings: Any) -> None:
    run = queued_run()
    run_claim(run_id=run.pk)
    ScenarioRun.objects.filter(pk=run.pk).update(
        attempts=settings.RUN_MAX_ATTEMPTS,
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RUN_STALE_AFTER_S + 1),
    )

    assert run_claim(run_id=run.pk) is None


def test_a_retry_resumes_its_own_claim_without_counting_an_attempt() -> None:
    run = queued_run()
    token = run_claim(run_id=run.pk)

    assert run_claim(run_id=run.pk, resume_token=token) == token

    run.refresh_from_db()
    assert run.attempts == 1
    assert run.claim_token == token


def test_a_retry_cannot_resume_a_claim_another_worker_took_over(settings: Any) -> None:
    run = queued_run()
    old = run_claim(run_id=run.pk)
    ScenarioRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RUN_STALE_AFTER_S + 1)
    )
    new = run_claim(run_id=run.pk)

    assert run_claim(run_id=run.pk, resume_token=old) is None
    run.refresh_from_db()
    assert run.claim_token == new


def test_a_run_succeeds_with_its_result_and_versions_and_says_so_once(
    engine: Callable[[Evaluate], None],
    finished_signals: list[uuid.UUID],
    committed: Callable[[], Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(services, "PROGRESS_EVERY_S", 0.0)  # as if each step took long
    run = queued_run()
    reported: list[int] = []

    def evaluate(inputs: dict[str, Any], catalog: object = None, progress: Any = None) -> dict:
        for pct in (10, 50, 90):
            progress(pct)
            reported.append(ScenarioRun.objects.get(pk=run.pk).progress)
        return dict(RESULT)

    engine(evaluate)

    with committed():
        assert run_execute(run_id=run.pk) == RunStatus.SUCCEEDED

    run.refresh_from_db()
    assert reported == [10, 50, 90]
    assert run.status == RunStatus.SUCCEEDED
    assert run.progress == 100
    assert run.result == EngineResult.from_dict(RESULT).to_dict()  # stored through the types
    assert (run.engine_version, run.catalog_version) == ("9.9.9", "cat-1")
    assert run.attempts == 1
    assert run.finished_at is not None
    assert finished_signals == [run.pk]


def test_a_quick_run_writes_no_progress_on_its_way(
    engine: Callable[[Evaluate], None],
    committed: Callable[[], Any],
    django_assert_max_num_queries: Any,
) -> None:
    """Progress is written at most every PROGRESS_EVERY_S: a run that takes less (most do)
    costs its claim and its finish, not an UPDATE per 5 % step."""
    run = queued_run()
    reported: list[int] = []

    def evaluate(inputs: dict[str, Any], catalog: object = None, progress: Any = None) -> dict:
        for pct in range(5, 100, 5):
            progress(pct)
        reported.append(ScenarioRun.objects.get(pk=run.pk).progress)
        return dict(RESULT)

    engine(evaluate)
    # claim, read the run, its calibration, the progress read above, finish (+ savepoints)
    with committed(), django_assert_max_num_queries(10) as captured:
        assert run_execute(run_id=run.pk) == RunStatus.SUCCEEDED
    progress_writes = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith('UPDATE "scenarios_scenariorun" SET "heartbeat_at"')
    ]
    assert reported == [0] and progress_writes == []
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.progress == 100


def test_a_second_delivery_of_a_finished_run_changes_nothing(
    engine: Callable[[Evaluate], None],
    finished_signals: list[uuid.UUID],
    committed: Callable[[], Any],
) -> None:
    run = queued_run()
    with committed():
        run_execute(run_id=run.pk)
    run.refresh_from_db()
    before = (run.status, run.attempts, run.finished_at, run.result)

    with committed():
        assert run_execute(run_id=run.pk) is None

    run.refresh_from_db()
    assert (run.status, run.attempts, run.finished_at, run.result) == before
    assert finished_signals == [run.pk]


def test_bad_input_fails_the_run_with_the_fields_and_rules(
    engine: Callable[[Evaluate], None],
) -> None:
    run = queued_run()

    def evaluate(*args: Any, **kwargs: Any) -> dict:
        raise InvalidScenario({"gpus": ["must be a positive integer"]})

    engine(evaluate)

    assert run_execute(run_id=run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error == "gpus: must be a positive integer"
    assert run.error_fields == {"gpus": ["must be a positive integer"]}
    assert run.result is None


def test_an_engine_bug_fails_the_run_with_the_reason_instead_of_leaving_it_running(
    engine: Callable[[Evaluate], None],
) -> None:
    run = queued_run()

    def evaluate(*args: Any, **kwargs: Any) -> dict:
        raise ZeroDivisionError("division by zero")

    engine(evaluate)

    assert run_execute(run_id=run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert run.error == "Engine error: ZeroDivisionError: division by zero"


def test_the_soft_time_limit_fails_the_run_naming_the_limit(
    engine: Callable[[Evaluate], None], settings: Any
) -> None:
    run = queued_run()

    def evaluate(*args: Any, **kwargs: Any) -> dict:
        raise SoftTimeLimitExceeded()

    engine(evaluate)

    assert run_execute(run_id=run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.error == (
        f"The evaluation took longer than the {settings.CELERY_TASK_SOFT_TIME_LIMIT} s allowed."
    )


def test_a_worker_whose_claim_was_taken_over_finishes_nothing(
    engine: Callable[[Evaluate], None], finished_signals: list[uuid.UUID]
) -> None:
    run = queued_run()
    other_token = uuid.uuid4()

    def evaluate(inputs: dict, catalog: object = None, progress: Any = None) -> dict:
        # Meanwhile the reconciler presumed this worker dead and another worker claimed it.
        ScenarioRun.objects.filter(pk=run.pk).update(claim_token=other_token, attempts=2)
        return dict(RESULT)

    engine(evaluate)

    assert run_execute(run_id=run.pk) is None
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.claim_token == other_token
    assert run.result is None
    assert finished_signals == []


def test_a_database_error_after_the_claim_is_retried_holding_the_claim(
    engine: Callable[[Evaluate], None],
) -> None:
    run = queued_run()
    calls = {"n": 0}

    def evaluate(*args: Any, **kwargs: Any) -> dict:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("server closed the connection unexpectedly")
        return dict(RESULT)

    engine(evaluate)

    with pytest.raises(WorkInterrupted) as interrupted:
        run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert interrupted.value.token == run.claim_token

    assert run_execute(run_id=run.pk, resume_token=interrupted.value.token) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert run.attempts == 1


def test_the_task_retries_a_database_error_and_the_retry_finishes_the_run(
    engine: Callable[[Evaluate], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    from advisor.scenarios import tasks

    run = queued_run()
    calls = {"n": 0}

    def evaluate(*args: Any, **kwargs: Any) -> dict:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OperationalError("the database system is shutting down")
        return dict(RESULT)

    engine(evaluate)
    monkeypatch.setattr(tasks, "_backoff_s", lambda retries: 0)

    tasks.run_scenario.apply(args=[str(run.pk)], throw=False)

    run.refresh_from_db()
    assert calls["n"] == 2
    assert run.status == RunStatus.SUCCEEDED
    assert run.attempts == 1


def test_the_task_does_not_retry_bad_input(engine: Callable[[Evaluate], None]) -> None:
    from advisor.scenarios import tasks

    run = queued_run()
    calls = {"n": 0}

    def evaluate(*args: Any, **kwargs: Any) -> dict:
        calls["n"] += 1
        raise InvalidScenario({"model": ["unknown model 'x'"]})

    engine(evaluate)

    result = tasks.run_scenario.apply(args=[str(run.pk)])

    assert result.get() == "failed"
    assert calls["n"] == 1


def test_run_fail_with_a_token_only_fails_that_claim() -> None:
    run = queued_run()
    token = run_claim(run_id=run.pk)

    assert run_fail(run_id=run.pk, reason="x", token=uuid.uuid4()) is False
    assert run_fail(run_id=run.pk, reason="Took too long.", token=token) is True
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.FAILED, "Took too long.")
    assert run_fail(run_id=run.pk, reason="again") is False


def test_a_submission_is_kept_queued_when_the_broker_is_down_at_commit(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from advisor.scenarios import tasks

    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise KombuOperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.run_scenario, "delay", broker_down)
    scenario = Scenario.objects.create(name="Two servers", inputs=INPUTS)

    with django_capture_on_commit_callbacks(execute=True):
        run = run_enqueue(scenario=scenario)

    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    assert run.enqueued_at is None  # marked unsent: the reconciler's next tick sends it
