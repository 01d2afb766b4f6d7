"""A calibrated run on the real path: Redis -> a separate Celery worker -> PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection

from advisor.measurements.services import measurement_create, scenario_run_calibrated
from advisor.scenarios.models import RunStatus, ScenarioRun
from advisor.scenarios.services import scenario_submit
from tests.support.workers import WorkerProcess, wait_until

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

LOG = (
    Path(__file__).resolve().parent.parent / "data" / "nccl" / "amd_mi300x_2x8_all_reduce_roce.txt"
)
INPUTS = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "mi300x",
    "gpus": 16,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
    "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
}


def finished(run_id: object) -> bool:
    return ScenarioRun.objects.filter(
        pk=run_id, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]
    ).exists()


def test_a_worker_evaluates_a_calibrated_run_with_the_measurements_fit(
    celery_worker: WorkerProcess, purge_queue: None
) -> None:
    assert connection.vendor == "postgresql"
    owner = User.objects.create_user("wes.worker", password="unused-in-tests-1")
    first = scenario_submit(name="16 x MI300X", inputs=INPUTS, owner=owner)
    assert wait_until(lambda: finished(first.pk), timeout_s=90), "\n".join(celery_worker.log[-30:])
    m = measurement_create(name="MI300X pair", text=LOG.read_text(), owner=owner)

    run = scenario_run_calibrated(scenario=first.scenario, measurement=m)

    assert wait_until(lambda: finished(run.pk), timeout_s=120), "\n".join(celery_worker.log[-30:])
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    cmp = run.result["calibration"]
    assert cmp["calibration"]["fabric"] == "roce"
    assert cmp["calibration"]["net_latency_delta_us"] > 50  # the log's ~220 us small-size time
    default_design = cmp["default"]["design_metrics"]
    calibrated_design = cmp["calibrated"]["design_metrics"]
    assert calibrated_design["network_comm_s"] >= default_design["network_comm_s"]
    assert any(str(run.pk) in line and "succeeded" in line for line in celery_worker.log)
