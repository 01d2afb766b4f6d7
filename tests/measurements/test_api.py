"""Measurements, calibrated runs and acceptance plans through /api/v1/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from advisor.measurements.models import Measurement, RunCalibration
from advisor.scenarios.models import ScenarioRun
from tests.api.conftest import Caller

DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"
MI300X_2 = (DATA / "amd_mi300x_2x8_all_reduce_roce.txt").read_text()
H100_2 = (DATA / "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt").read_text()


def upload(caller: Caller, text: str = MI300X_2, **extra: Any) -> Any:
    body = {"name": "2 x MI300X RoCE", "text": text, "customer": "Acme", **extra}
    return caller.http.post("/api/v1/measurements/", body, format="json")


def test_upload_parses_fits_and_reads_back(client_a: Caller):
    response = upload(client_a)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["Location"] == body["url"]
    (run,) = body["runs"]
    assert (run["op"], run["ranks"], run["nodes"], run["gpus_per_node"]) == (
        "all_reduce",
        16,
        2,
        8,
    )
    assert run["gpu"] == "AMD Instinct MI300X"
    assert run["peak_busbw_GBps"] == 357.46
    last = run["rows"][-1]
    assert last["bytes"] == 17179869184
    assert last["in_place"] == {"time_us": 90127.0, "algbw_GBps": 190.62, "busbw_GBps": 357.41}
    assert body["fit"]["network"]["latency_identified"] is True
    assert any("scale-up" in w for w in body["warnings"])
    again = client_a.http.get(body["url"])
    assert again.status_code == 200
    assert again.json()["fit"] == body["fit"]
    listed = client_a.http.get("/api/v1/measurements/?customer=Acme").json()
    assert [m["id"] for m in listed] == [body["id"]]


def test_text_that_is_not_benchmark_output_is_a_400_naming_the_line(client_a: Caller):
    response = upload(client_a, text="Dear team,\nthe cluster is ready.\n")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"]["text"][0].startswith("line 1:")
    assert "Dear team" in error["fields"]["text"][0]
    assert Measurement.objects.count() == 0


def test_a_malformed_row_names_its_line(client_a: Caller):
    lines = MI300X_2.splitlines()
    n = next(i for i, line in enumerate(lines) if line.strip().startswith("4096 "))
    lines[n] = "        4096          1024     float     sum      -1    slow"
    response = upload(client_a, text="\n".join(lines))
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["text"][0].startswith(f"line {n + 1}:")


@override_settings(MEASUREMENT_TEXT_MAX_CHARS=1000)
def test_text_over_the_size_limit_is_refused(client_a: Caller):
    response = upload(client_a)
    assert response.status_code == 400
    assert "at most 1000 characters" in response.json()["error"]["fields"]["text"][0]
    assert Measurement.objects.count() == 0


@override_settings(MEASUREMENT_OWNER_QUOTA_CHARS=len(MI300X_2) + 10)
def test_each_client_has_a_quota_of_stored_text(client_a: Caller, client_b: Caller):
    assert upload(client_a).status_code == 201
    second = upload(client_a)
    assert second.status_code == 413
    assert second.json()["error"]["code"] == "quota_exceeded"
    assert upload(client_b).status_code == 201  # another client's quota is its own


def test_bad_fields_name_the_field_and_rule(client_a: Caller):
    response = upload(client_a, name="", fabric="token-ring", nic_gbps=-1)
    fields = response.json()["error"]["fields"]
    assert response.status_code == 400
    assert set(fields) >= {"name", "fabric", "nic_gbps"}


def test_another_client_cannot_see_a_measurement(client_a: Caller, client_b: Caller):
    url = upload(client_a).json()["url"]
    assert client_b.http.get(url).status_code == 404
    assert client_b.http.get("/api/v1/measurements/").json() == []


def test_anonymous_callers_cannot_upload(anonymous: Caller):
    assert upload(anonymous).status_code == 401


def test_calibrated_run_shows_default_and_calibrated_side_by_side(
    client_a: Caller,
    submitted: Callable[..., dict[str, Any]],
    run_tasks: Callable[[], Any],
):
    scenario = submitted()
    measurement = upload(client_a, text=H100_2, fabric="roce", nic_gbps=400, nics_per_node=8).json()
    with run_tasks():
        response = client_a.http.post(
            f"/api/v1/scenarios/{scenario['id']}/runs/",
            {"measurement": measurement["id"]},
            format="json",
        )
    assert response.status_code == 202, response.json()
    run = client_a.http.get(response.json()["url"]).json()
    assert run["status"] == "succeeded", run
    cmp = run["result"]["calibration"]
    assert cmp["calibration"]["fabric"] == "roce"
    assert 0.02 <= cmp["calibration"]["net_bandwidth_scale"] < 1.0
    assert set(cmp["default"]) == set(cmp["calibrated"])
    assert isinstance(cmp["recommendation_changed"], bool)
    assert cmp["why"].startswith("Your measurement (roce bandwidth x")
    link = RunCalibration.objects.get()
    assert str(link.run_id) == run["id"] and str(link.measurement_id) == measurement["id"]


def test_calibrated_run_with_someone_elses_measurement_is_refused(
    client_a: Caller, client_b: Caller, submitted: Callable[..., dict[str, Any]]
):
    scenario = submitted()
    foreign = upload(client_b).json()
    before = ScenarioRun.objects.count()
    response = client_a.http.post(
        f"/api/v1/scenarios/{scenario['id']}/runs/", {"measurement": foreign["id"]}, format="json"
    )
    assert response.status_code == 400
    assert "measurement" in response.json()["error"]["fields"]
    assert ScenarioRun.objects.count() == before


def test_plain_rerun_still_works_without_a_body(
    client_a: Caller, submitted: Callable[..., dict[str, Any]]
):
    scenario = submitted()
    response = client_a.http.post(f"/api/v1/scenarios/{scenario['id']}/runs/")
    assert response.status_code == 202
    assert RunCalibration.objects.count() == 0


def test_acceptance_plan_and_grading(client_a: Caller, submitted: Callable[..., dict[str, Any]]):
    scenario = submitted()
    url = f"/api/v1/scenarios/{scenario['id']}/acceptance/"
    plan = client_a.http.get(url)
    assert plan.status_code == 200, plan.json()
    checks = plan.json()["checks"]
    assert {c["op"] for c in checks} == {"all_reduce", "all_gather", "reduce_scatter", "alltoall"}
    first = checks[0]
    assert set(first) >= {"op", "nodes", "gpus", "bytes", "expected_busbw_GBps", "command"}
    assert first["expected_busbw_GBps"]["low"] <= first["expected_busbw_GBps"]["high"]
    assert {c["bytes"] for c in checks} >= {8, 8 << 30}
    assert first["command"].startswith("mpirun -np 16 -N 8")

    measurement = upload(client_a, text=H100_2).json()
    graded = client_a.http.post(url, {"measurement": measurement["id"]}, format="json")
    assert graded.status_code == 200, graded.json()
    body = graded.json()
    measured = [c for c in body["checks"] if c["passed"] is not None]
    assert measured and all(c["op"] == "all_reduce" and c["nodes"] == 2 for c in measured)
    assert all(c["measured_busbw_GBps"] > 0 for c in measured if c["bytes"] >= 1 << 20)
    assert body["passed"] is (not any(c["passed"] is False for c in measured))
    failed = [c for c in measured if c["passed"] is False]
    assert all(c["look_at"] for c in failed)


def test_acceptance_of_a_scenario_still_running_is_a_409(
    client_a: Caller, submitted: Callable[..., dict[str, Any]]
):
    scenario = submitted(finish=False)
    response = client_a.http.get(f"/api/v1/scenarios/{scenario['id']}/acceptance/")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_ready"


@pytest.mark.parametrize("method", ["get", "post"])
def test_acceptance_of_another_clients_scenario_is_a_404(
    method: str, client_b: Caller, submitted: Callable[..., dict[str, Any]]
):
    scenario = submitted()
    response = getattr(client_b.http, method)(
        f"/api/v1/scenarios/{scenario['id']}/acceptance/", {}, format="json"
    )
    assert response.status_code == 404


def test_uploads_count_against_the_clients_rate_limit(client_a: Caller, settings: Any):
    from django.core.cache import caches

    caches[settings.API_THROTTLE_CACHE].clear()
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "client": "2/minute"},
    }
    statuses = [upload(client_a).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]
    assert Measurement.objects.count() == 2
