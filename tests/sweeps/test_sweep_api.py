"""The sweep API: start, follow, page through results; strangers get 404 for everything."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from advisor.scenarios.models import Scenario, Sweep
from tests.api.conftest import Caller

pytestmark = pytest.mark.django_db

TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}
AXES = {"servers": [2, 4], "fabric": ["roce", "infiniband"], "nic_gbps": [200, 400, 800]}


@pytest.fixture
def run_tasks(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    return lambda: django_capture_on_commit_callbacks(execute=True)


def scenario_of(caller: Caller) -> Scenario:
    return Scenario.objects.create(name="Two servers", inputs=TRAINING, owner=caller.user)


def start(caller: Caller, scenario: Scenario, axes: dict[str, Any] = AXES) -> Any:
    return caller.http.post(
        "/api/v1/sweeps/", {"scenario_id": str(scenario.pk), "axes": axes}, format="json"
    )


def test_an_api_client_starts_a_sweep_follows_it_and_reads_every_point(
    client_a: Caller, run_tasks: Callable[[], Any]
) -> None:
    scenario = scenario_of(client_a)

    with run_tasks():
        started = start(client_a, scenario)

    assert started.status_code == 202, started.json()
    body = started.json()
    assert started["Location"] == body["url"]
    assert body["total_points"] == 12
    assert body["axes"] == {
        "servers": [2, 4],
        "fabric": ["infiniband", "roce"],
        "nic_gbps": [200.0, 400.0, 800.0],
        "nics_per_node": [8],
        "oversubscription": [1.0],
    }
    detail = client_a.http.get(body["url"]).json()
    assert (detail["status"], detail["progress"], detail["done_points"]) == ("succeeded", 100, 12)
    page = client_a.http.get(body["results_url"] + "?limit=5&offset=10").json()
    assert page["count"] == 12
    assert [p["i"] for p in page["results"]] == [10, 11]
    assert page["results"][0]["step_time_s"] > 0
    listed = client_a.http.get("/api/v1/sweeps/").json()
    assert [s["id"] for s in listed["results"]] == [body["id"]]


def test_bad_axes_answer_400_naming_each_axis_and_store_nothing(client_a: Caller) -> None:
    scenario = scenario_of(client_a)

    response = start(client_a, scenario, {"servers": [0], "fabric": ["token-ring"]})

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert set(error["fields"]) == {"axes.servers", "axes.fabric"}
    assert error["fields"]["axes.servers"] == ["0 is not between 1 and 16384"]
    assert Sweep.objects.count() == 0


def test_a_sweep_over_the_point_limit_answers_400(client_a: Caller, settings: Any) -> None:
    settings.SWEEP_MAX_POINTS = 10

    response = start(client_a, scenario_of(client_a), {"servers": list(range(1, 12))})

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "axes": ["11 design points; at most 10 per sweep"]
    }


def test_too_many_unfinished_sweeps_answer_409(client_a: Caller, settings: Any) -> None:
    settings.SWEEP_MAX_ACTIVE_PER_USER = 1
    scenario = scenario_of(client_a)
    assert start(client_a, scenario).status_code == 202  # never run: stays queued

    refused = start(client_a, scenario)

    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "too_many_sweeps"
    assert Sweep.objects.count() == 1


def test_a_stranger_can_neither_start_nor_see_nor_read_anothers_sweep(
    client_a: Caller, client_b: Caller, run_tasks: Callable[[], Any]
) -> None:
    scenario = scenario_of(client_a)
    with run_tasks():
        body = start(client_a, scenario).json()

    assert start(client_b, scenario).status_code == 404
    assert client_b.http.get(body["url"]).status_code == 404
    assert client_b.http.get(body["results_url"]).status_code == 404
    assert client_b.http.get("/api/v1/sweeps/").json()["results"] == []
    assert Sweep.objects.count() == 1


def test_staff_see_every_sweep(
    client_a: Caller, staff: Caller, run_tasks: Callable[[], Any]
) -> None:
    with run_tasks():
        body = start(client_a, scenario_of(client_a)).json()

    assert staff.http.get(body["url"]).json()["id"] == body["id"]


def test_anonymous_callers_get_401(anonymous: Caller, client_a: Caller) -> None:
    assert anonymous.http.get("/api/v1/sweeps/").status_code == 401
    assert start(anonymous, scenario_of(client_a)).status_code == 401
