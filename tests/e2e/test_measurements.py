"""A customer's own nccl-tests log in, a fitted chart, a calibrated scenario, an acceptance plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from advisor.measurements.models import Measurement, RunCalibration
from advisor.scenarios.models import RunStatus
from advisor.scenarios.services import scenario_submit

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-horse-battery"
LOG = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "nccl"
    / "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt"
)


@pytest.fixture
def engineer(transactional_db: Any) -> User:
    return User.objects.create_user("erin.engineer", password=PASSWORD)


def test_upload_a_real_log_calibrate_a_scenario_and_download_its_acceptance_plan(
    new_page: Any, live_server: Any, engineer: User
) -> None:
    run = scenario_submit(
        name="32 x H100 pre-training",
        owner=engineer,
        inputs={
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "h100-sxm",
            "gpus": 32,
            "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
        },
    )
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    scenario = run.scenario

    user = new_page()
    page = user.page
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "erin.engineer")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("#login-form button[type=submit]")

    # Upload the real two-server nccl-tests log (a file) and see the fitted chart drawn.
    page.goto(live_server.url + "/measurements/")
    page.fill("#id_name", "A3 Mega pair")
    page.fill("#id_customer", "Acme AI")
    page.set_input_files("#id_file", str(LOG))
    page.click("#measurement-form summary")
    page.select_option("#id_fabric", "roce")
    with page.expect_navigation():
        page.click("#measurement-submit")
    page.wait_for_selector("#fit-chart[data-drawn]")
    traces = page.evaluate("document.getElementById('fit-chart')._fullData.map(t => t.name)")
    assert any(t.startswith("measured: all_reduce, 16 GPUs") for t in traces)
    assert any(t.startswith("fitted: ") for t in traces)
    assert any(t.startswith("default model: ") for t in traces)
    assert "network per server" in page.inner_text("#fit-terms")
    user.check("40-measurement-fit")
    measurement = Measurement.objects.get()

    # Evaluate the scenario calibrated with it: default vs calibrated side by side.
    page.goto(live_server.url + f"/s/{scenario.pk}/")
    page.wait_for_selector("#headline")
    page.select_option("#calibrate-measurement", str(measurement.pk))
    with page.expect_navigation():
        page.click("#calibrate-button")
    page.wait_for_selector("#calibration-compare", timeout=60_000)
    assert "Your measurement (roce" in page.inner_text("#calibration-why")
    assert RunCalibration.objects.filter(measurement=measurement).count() == 1
    user.check("41-calibrated-result")

    # Download the acceptance plan as Markdown and PDF, and the plan graded with the log.
    with page.expect_download() as info:
        page.click("#acceptance-md")
    text = Path(info.value.path()).read_text()
    assert text.startswith("# Acceptance test plan: 32 x NVIDIA H100")
    assert "### 2 servers: all-reduce" in text and "-b 8 -e 8G" in text
    with page.expect_download() as info:
        page.click("#acceptance-pdf")
    assert Path(info.value.path()).read_bytes().startswith(b"%PDF")
    with page.expect_download() as info:
        page.click("#acceptance-graded")
    assert "**Result:" in Path(info.value.path()).read_text()
