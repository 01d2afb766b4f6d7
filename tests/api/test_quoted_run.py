"""Choosing the run a scenario quotes: a calibrated run is a labelled side run until chosen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from advisor.measurements.models import RunCalibration
from advisor.scenarios.models import RunStatus, ScenarioRun
from tests.api.conftest import Caller
from tests.frontend.pdfread import pdf_text

pytestmark = pytest.mark.django_db

H100_2 = (
    Path(__file__).resolve().parent.parent
    / "data"
    / "nccl"
    / "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt"
).read_text()


def calibrated(caller: Caller, scenario: dict[str, Any], run_tasks: Callable[[], Any]) -> str:
    """A finished calibrated run of `scenario`; its id."""
    measurement = caller.http.post(
        "/api/v1/measurements/",
        {"name": "A3 pair", "text": H100_2, "fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
        format="json",
    ).json()
    with run_tasks():
        response = caller.http.post(
            f"/api/v1/scenarios/{scenario['id']}/runs/",
            {"measurement": measurement["id"]},
            format="json",
        )
    assert response.status_code == 202, response.json()
    return str(response.json()["id"])


def quote(caller: Caller, scenario: dict[str, Any], run: str | None) -> Any:
    return caller.http.post(
        f"/api/v1/scenarios/{scenario['id']}/quoted-run/", {"run": run}, format="json"
    )


def test_the_owner_chooses_the_calibrated_run_and_goes_back(
    client_a: Caller, submitted: Callable[..., dict[str, Any]], run_tasks: Callable[[], Any]
) -> None:
    scenario = submitted()
    default_bom = client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/bom/").json()
    default_pdf = client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/report.pdf")
    run = calibrated(client_a, scenario, run_tasks)
    # Unchosen, the calibrated run is a side run: the BOM and the report stay the default's.
    bom = client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/bom/").json()
    assert bom["run_id"] == default_bom["run_id"] != run

    chosen = quote(client_a, scenario, run)

    assert chosen.status_code == 200, chosen.json()
    assert chosen.json() == {"scenario_id": scenario["id"], "run": run, "quoted_run_id": run}
    assert client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/bom/").json()["run_id"] == run
    pdf = client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/report.pdf")
    assert pdf.status_code == 200
    assert "Network model Calibrated with “A3 pair”" in pdf_text(pdf.content)
    assert "Network model Default model" in pdf_text(default_pdf.content)

    back = quote(client_a, scenario, None)

    assert back.status_code == 200, back.json()
    assert back.json() == {
        "scenario_id": scenario["id"],
        "run": None,
        "quoted_run_id": default_bom["run_id"],
    }
    assert client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/bom/").json() == default_bom
    assert RunCalibration.objects.get().chosen_at is None


def test_a_stranger_gets_a_404_and_changes_nothing(
    client_a: Caller,
    client_b: Caller,
    submitted: Callable[..., dict[str, Any]],
    run_tasks: Callable[[], Any],
) -> None:
    scenario = submitted()
    run = calibrated(client_a, scenario, run_tasks)

    response = quote(client_b, scenario, run)

    assert response.status_code == 404
    assert RunCalibration.objects.get().chosen_at is None


def test_a_run_that_cannot_be_quoted_is_a_400_naming_run(
    client_a: Caller, submitted: Callable[..., dict[str, Any]], run_tasks: Callable[[], Any]
) -> None:
    scenario, other = submitted(), submitted(name="Other")
    foreign = calibrated(client_a, other, run_tasks)
    default_run = client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/bom/").json()["run_id"]

    for run, why in (
        (foreign, "is not a calibrated run of this scenario"),  # another scenario's run
        (default_run, "is not a calibrated run of this scenario"),  # not calibrated
        ("5d3c6a58-0000-4000-8000-000000000000", "is not a calibrated run of this scenario"),
        ("not-a-uuid", "Must be a valid UUID."),
    ):
        response = quote(client_a, scenario, run)
        assert response.status_code == 400, response.json()
        assert response.json()["error"]["fields"]["run"] == [why], run
    missing = client_a.http.post(
        f"/api/v1/scenarios/{scenario['id']}/quoted-run/", {}, format="json"
    )
    assert missing.status_code == 400 and "run" in missing.json()["error"]["fields"]
    assert RunCalibration.objects.get().chosen_at is None


def test_an_unfinished_calibrated_run_cannot_be_quoted(
    client_a: Caller, submitted: Callable[..., dict[str, Any]], run_tasks: Callable[[], Any]
) -> None:
    scenario = submitted()
    run = calibrated(client_a, scenario, run_tasks)
    ScenarioRun.objects.filter(pk=run).update(status=RunStatus.RUNNING)

    response = quote(client_a, scenario, run)

    assert response.status_code == 400
    assert response.json()["error"]["fields"]["run"] == [
        "has not finished: only a finished calibrated run can be quoted"
    ]


def test_the_scenario_detail_and_acceptance_plan_show_the_quoted_run(
    client_a: Caller, submitted: Callable[..., dict[str, Any]], run_tasks: Callable[[], Any]
) -> None:
    scenario = submitted()
    url = f"/api/v1/scenarios/{scenario['id']}/"
    default_run = client_a.http.get(f"{url}bom/").json()["run_id"]
    default_plan = client_a.http.get(f"{url}acceptance/").json()
    run = calibrated(client_a, scenario, run_tasks)
    assert (
        ScenarioRun.objects.get(pk=run).created_at
        > ScenarioRun.objects.get(pk=default_run).created_at
    )  # the calibrated run is the newest run

    # Unchosen, the newer calibrated run is a side run: the detail shows the quoted default.
    detail = client_a.http.get(url).json()
    assert detail["run"]["id"] == default_run
    assert "calibration" not in detail["result"]
    assert client_a.http.get(f"{url}acceptance/").json() == default_plan

    assert quote(client_a, scenario, run).status_code == 200

    # Chosen, the detail, its result and the acceptance plan are the calibrated run's,
    # as the BOM and the PDF are.
    detail = client_a.http.get(url).json()
    assert detail["run"]["id"] == run == client_a.http.get(f"{url}bom/").json()["run_id"]
    assert detail["result"]["calibration"]["calibration"]["source"]
    assert (
        detail["result"]["recommendation"]
        == (ScenarioRun.objects.get(pk=run).result["recommendation"])
    )
