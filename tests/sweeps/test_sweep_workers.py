"""A 10,000-point sweep on real worker processes: fanned out, counted exactly, finished."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from advisor.scenarios.models import RunStatus, Scenario, Sweep, SweepStatus
from advisor.scenarios.sweeps.selectors import sweep_results
from advisor.scenarios.sweeps.services import sweep_create
from tests.support.workers import WorkerProcess, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

SEVENTY_B_TRAINING = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 64,
    "training": {"global_batch_sequences": 1024, "total_tokens": 1e12},
}
TEN_THOUSAND_POINTS = {
    "servers": list(range(2, 101, 2)),
    "fabric": ["roce", "infiniband"],
    "nic_gbps": [100, 200, 400, 800, 1600],
    "nics_per_node": [1, 2, 4, 8],
    "oversubscription": [1, 1.5, 2, 3, 4],
}


def test_a_ten_thousand_point_sweep_spreads_over_two_workers_and_finishes(
    worker_factory: Callable[..., WorkerProcess], purge_queue: None
) -> None:
    first, second = worker_factory("first"), worker_factory("second")
    scenario = Scenario.objects.create(name="70B on up to 100 servers", inputs=SEVENTY_B_TRAINING)

    sweep = sweep_create(scenario=scenario, axes=TEN_THOUSAND_POINTS)
    seen: list[int] = []

    def finished() -> bool:
        current = Sweep.objects.get(pk=sweep.pk)
        seen.append(current.done_points)
        return current.is_finished

    assert wait_until(finished, timeout_s=300, interval_s=0.1), "\n".join(first.log[-30:])
    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.SUCCEEDED, sweep.error
    assert sweep.total_points == 10_000
    assert (sweep.done_points, sweep.done_chunks) == (10_000, sweep.total_chunks)
    assert sweep.failed_chunks == 0
    assert seen == sorted(seen)  # progress only ever grows
    rows = sweep_results(sweep)
    assert [row.i for row in rows] == list(range(10_000))
    assert sum(row.feasible for row in rows) == 10_000 - sweep.infeasible_points
    assert not sweep.chunks.exclude(status=RunStatus.SUCCEEDED).exists()
    # Both processes took chunks: the work spreads over the workers there are.
    for worker in (first, second):
        assert any("sweep_chunk" in line and "succeeded" in line for line in worker.log)
