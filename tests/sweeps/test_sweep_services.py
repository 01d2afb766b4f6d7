"""Sweeps without services: axes, fan-out into chunks, exact progress, failures, reconciler.

Chunks run in-process here (eager Celery); tests/sweeps/test_sweep_workers.py runs them on
real worker processes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import RunStatus, Scenario, Sweep, SweepChunk, SweepStatus
from advisor.scenarios.sweeps import services as sweep_services
from advisor.scenarios.sweeps.axes import InvalidSweep, parse_axis_text
from advisor.scenarios.sweeps.selectors import sweep_results
from advisor.scenarios.sweeps.services import (
    chunk_claim,
    sweep_chunk_execute,
    sweep_create,
    sweeps_reconcile,
)

pytestmark = pytest.mark.django_db

TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}
INFERENCE = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "inference": {"independent_replicas": False},
}


@pytest.fixture
def scenario() -> Scenario:
    return Scenario.objects.create(name="Two-server training", inputs=TRAINING)


@pytest.fixture
def committed(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    """Run what runs once the transaction commits (here: the chunks, eagerly)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def small_chunks(settings: Any) -> Iterator[None]:
    settings.SWEEP_CHUNK_POINTS = 7
    yield


def test_axis_text_reads_lists_ranges_and_doublings() -> None:
    assert parse_axis_text("2, 4, 8") == [2.0, 4.0, 8.0]
    assert parse_axis_text("1-4") == [1.0, 2.0, 3.0, 4.0]
    assert parse_axis_text("1-2 step 0.5") == [1.0, 1.5, 2.0]
    assert parse_axis_text("2..32 x2") == [2.0, 4.0, 8.0, 16.0, 32.0]
    assert parse_axis_text("RoCE, infiniband") == ["roce", "infiniband"]
    with pytest.raises(ValueError, match="cannot read the range '8-2'"):
        parse_axis_text("8-2")


def test_missing_axes_take_the_scenarios_own_values(scenario: Scenario) -> None:
    sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [400, 200, 400]})

    assert sweep.axes == {
        "servers": [2],
        "fabric": ["roce"],
        "nic_gbps": [200.0, 400.0],
        "nics_per_node": [8],
        "oversubscription": [1.0],
    }
    assert sweep.total_points == 2


def test_bad_axes_are_refused_naming_each_axis_and_nothing_is_stored(scenario: Scenario) -> None:
    with pytest.raises(InvalidSweep) as refused:
        sweep_create(
            scenario=scenario,
            axes={"servers": [0, 2.5], "fabric": ["token-ring"], "colour": ["red"]},
        )

    assert refused.value.field_errors == {
        "axes.colour": [
            "unknown axis; known: servers, fabric, nic_gbps, nics_per_node, oversubscription"
        ],
        "axes.servers": ["0 is not between 1 and 16384", "2.5 is not a whole number"],
        "axes.fabric": ["unknown fabric 'token-ring'; known: ethernet, roce, infiniband"],
    }
    assert Sweep.objects.count() == 0


def test_a_sweep_larger_than_the_limit_is_refused(scenario: Scenario, settings: Any) -> None:
    settings.SWEEP_MAX_POINTS = 100

    with pytest.raises(InvalidSweep) as refused:
        sweep_create(scenario=scenario, axes={"servers": list(range(1, 102))})

    assert refused.value.field_errors == {"axes": ["101 design points; at most 100 per sweep"]}


def test_a_sweep_of_a_scenario_the_engine_refuses_is_refused() -> None:
    broken = Scenario.objects.create(name="Broken", inputs={**TRAINING, "gpu": "abacus"})

    with pytest.raises(InvalidScenario):
        sweep_create(scenario=broken, axes={})


def test_a_sweep_fans_out_in_chunks_and_counts_every_point_exactly_once(
    scenario: Scenario, committed: Callable[[], Any], small_chunks: None
) -> None:
    axes = {
        "servers": [2, 4, 8],
        "fabric": ["ethernet", "roce", "infiniband"],
        "nic_gbps": [100, 400],
        "nics_per_node": [1, 8],
        "oversubscription": [1, 2],
    }

    with committed():
        sweep = sweep_create(scenario=scenario, axes=axes)

    sweep.refresh_from_db()
    assert sweep.total_points == 72
    assert sweep.total_chunks == 11  # ceil(72 / 7)
    assert sweep.status == SweepStatus.SUCCEEDED
    assert (sweep.done_points, sweep.done_chunks, sweep.failed_chunks) == (72, 11, 0)
    assert sweep.progress_pct == 100
    rows = sweep_results(sweep)
    assert [row.i for row in rows] == list(range(72))
    assert {(r.servers, r.fabric) for r in rows} == {
        (s, f) for s in (2, 4, 8) for f in ("ethernet", "roce", "infiniband")
    }
    # The engine's candidate rules: the catalog has no 100G InfiniBand NIC, so those points
    # are infeasible with that reason; every other point is priced.
    ib100 = [r for r in rows if r.fabric == "infiniband" and r.nic_gbps == 100]
    assert ib100 and all(not r.feasible and "100G infiniband" in (r.reason or "") for r in ib100)
    rows = [r for r in rows if r not in ib100]
    assert all(row.feasible and (row.metrics.step_time_s or 0) > 0 for row in rows)
    assert all(
        (row.network_capex_usd or 0) > 0 and (row.decision_cost_usd or 0) > 0 for row in rows
    )
    assert all(row.gpus == 8 * row.servers for row in rows)
    # More bandwidth never makes a step slower (same servers, fabric, NIC count, ratio).
    by_design: dict[tuple[int, str, int, float], dict[float, float]] = {
        (r.servers, r.fabric, r.nics_per_node, r.oversubscription): {} for r in rows
    }
    for r in rows:
        design = (r.servers, r.fabric, r.nics_per_node, r.oversubscription)
        by_design[design][r.nic_gbps] = r.metrics.step_time_s or 0.0  # > 0: asserted above
    assert all(t[400.0] <= t[100.0] for t in by_design.values() if 100.0 in t)


def test_an_inference_sweep_reports_milliseconds_per_token(committed: Callable[[], Any]) -> None:
    scenario = Scenario.objects.create(name="Split 70B", inputs=INFERENCE)

    with committed():
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [100, 400]})

    rows = sweep_results(sweep)
    assert [r.nic_gbps for r in rows] == [100.0, 400.0]
    assert all(r.inference and (r.metrics.ms_per_token or 0) > 0 for r in rows)
    # an inference row carries the inference columns only (what the API serves)
    assert all("ms_per_token" in r.to_dict() and "step_time_s" not in r.to_dict() for r in rows)


def test_a_redelivered_chunk_changes_nothing(
    scenario: Scenario, committed: Callable[[], Any], small_chunks: None
) -> None:
    with committed():
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [100, 200, 400, 800]})
    sweep.refresh_from_db()
    before = (sweep.done_points, sweep.done_chunks, sweep.status, sweep.finished_at)
    chunk = sweep.chunks.get()

    assert sweep_chunk_execute(chunk_id=chunk.pk) is None

    sweep.refresh_from_db()
    assert (sweep.done_points, sweep.done_chunks, sweep.status, sweep.finished_at) == before
    assert SweepChunk.objects.get(pk=chunk.pk).attempts == 1


def test_points_the_engine_refuses_are_results_with_the_reason(
    committed: Callable[[], Any],
) -> None:
    explicit = {**TRAINING, "parallelism": {"tp": 8, "pp": 2, "dp": 1}}
    scenario = Scenario.objects.create(name="Explicit plan", inputs=explicit)

    with committed():
        sweep = sweep_create(scenario=scenario, axes={"servers": [1, 2, 4]})

    sweep.refresh_from_db()
    rows = {r.servers: r for r in sweep_results(sweep)}
    assert sweep.status == SweepStatus.SUCCEEDED
    assert rows[2].feasible is True
    assert rows[1].feasible is False
    assert "tp x pp = 16" in (rows[1].reason or "")
    assert rows[1].metrics.step_time_s is None
    assert rows[1].to_dict()["step_time_s"] is None  # the column is there, empty
    assert sweep.infeasible_points == sum(not r.feasible for r in rows.values())


def test_an_engine_bug_fails_its_chunk_and_the_sweep_keeps_the_other_results(
    scenario: Scenario,
    committed: Callable[[], Any],
    small_chunks: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = sweep_services.evaluate_points

    def flaky(inputs: Any, axes: Any, start: int, stop: int, **kwargs: Any) -> Any:
        if start == 7:
            raise ZeroDivisionError("division by zero")
        return real(inputs, axes, start, stop, **kwargs)

    monkeypatch.setattr(sweep_services, "evaluate_points", flaky)

    with committed():
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": list(range(100, 1500, 100))})

    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.FAILED
    assert (sweep.done_chunks, sweep.failed_chunks, sweep.done_points) == (2, 1, 14)
    assert sweep.error.endswith("First error: Engine error: ZeroDivisionError: division by zero")
    assert [r.i for r in sweep_results(sweep)] == list(range(7))


def test_the_reconciler_requeues_an_orphaned_chunk_and_resends_a_lost_one(
    scenario: Scenario,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    small_chunks: None,
    committed: Callable[[], Any],
) -> None:
    published: list[uuid.UUID] = []
    monkeypatch.setattr(
        sweep_services, "_chunks_publish", lambda ids: published.extend(ids) or True
    )
    sweep = sweep_create(scenario=scenario, axes={"nic_gbps": list(range(100, 2200, 100))})
    orphan, lost, fresh = sweep.chunks.order_by("index")
    long_ago = timezone.now() - timedelta(
        seconds=settings.RUN_STALE_AFTER_S + settings.RUN_QUEUED_LOST_AFTER_S + 5
    )
    dead_token = chunk_claim(chunk_id=orphan.pk)
    SweepChunk.objects.filter(pk=orphan.pk).update(heartbeat_at=long_ago)
    SweepChunk.objects.filter(pk=lost.pk).update(enqueued_at=long_ago)
    published.clear()

    with committed():
        report = sweeps_reconcile()

    assert report == {"requeued": 1, "resent": 1, "given_up": 0}
    assert published == [orphan.pk, lost.pk]
    orphan.refresh_from_db()
    assert (orphan.status, orphan.claim_token) == (RunStatus.QUEUED, None)
    assert dead_token is not None
    assert sweep_services.chunk_heartbeat(chunk_id=orphan.pk, token=dead_token) is False
    fresh.refresh_from_db()
    assert fresh.status == RunStatus.QUEUED


def test_the_reconciler_fails_a_chunk_that_lost_its_worker_every_time_and_ends_the_sweep(
    scenario: Scenario, settings: Any, committed: Callable[[], Any]
) -> None:
    sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [100, 400]})
    chunk = sweep.chunks.get()
    SweepChunk.objects.filter(pk=chunk.pk).update(
        status=RunStatus.RUNNING,
        attempts=settings.RUN_MAX_ATTEMPTS,
        claim_token=uuid.uuid4(),
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RUN_STALE_AFTER_S + 5),
    )

    with committed():
        report = sweeps_reconcile()

    assert report == {"requeued": 0, "resent": 0, "given_up": 1}
    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.FAILED
    assert (sweep.done_chunks, sweep.failed_chunks) == (1, 1)
    assert f"Gave up after {settings.RUN_MAX_ATTEMPTS} attempts" in sweep.error


def test_a_chunk_over_the_time_limit_fails_saying_so(
    scenario: Scenario,
    committed: Callable[[], Any],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    from celery.exceptions import SoftTimeLimitExceeded

    def too_slow(*args: Any, **kwargs: Any) -> Any:
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(sweep_services, "evaluate_points", too_slow)

    with committed():
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [100, 400]})

    chunk = sweep.chunks.get()
    assert chunk.status == RunStatus.FAILED
    assert chunk.error == (
        f"These design points took longer than the {settings.CELERY_TASK_SOFT_TIME_LIMIT} s "
        "allowed."
    )


def test_an_embedded_sweep_stops_at_the_in_request_time_limit_and_says_why(
    scenario: Scenario, committed: Callable[[], Any], small_chunks: None, settings: Any
) -> None:
    """Embedded mode runs every chunk inside the request that made the sweep: the request's
    wall-time limit covers them all. A limit already used up fails every chunk at its first
    point, with the reason, instead of computing for minutes inside the request."""
    settings.ENGINE_IN_REQUEST_TIME_LIMIT_S = 0

    with committed():
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [100, 200, 400, 800]})

    sweep.refresh_from_db()
    assert sweep.total_chunks == 1
    chunk = sweep.chunks.get()
    assert chunk.status == RunStatus.FAILED
    assert "longer than the 0 s a web process allows" in chunk.error
    assert sweep.status == SweepStatus.FAILED
    assert "run a worker (services mode)" in sweep.error


def test_an_embedded_sweep_within_the_limit_completes(
    scenario: Scenario, committed: Callable[[], Any], small_chunks: None
) -> None:
    with committed():
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [100, 200, 400, 800]})

    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.SUCCEEDED
