"""Submitting, listing and reading scenarios."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from tests.api.conftest import TWO_SERVER_TRAINING, Caller, latest_run

pytestmark = pytest.mark.django_db


def test_a_client_submits_a_scenario_and_gets_202_with_the_queued_run(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/",
        {"name": "Two-server training", "inputs": TWO_SERVER_TRAINING, "customer": "ACME"},
        format="json",
    )

    assert response.status_code == 202
    body = response.json()
    scenario = Scenario.objects.get()
    run = ScenarioRun.objects.get()
    assert body == {
        "id": str(scenario.pk),
        "status": "queued",
        "run": {"id": str(run.pk), "status": "queued", "progress": 0},
        "url": f"http://testserver/api/v1/scenarios/{scenario.pk}/",
    }
    assert response["Location"] == body["url"]
    assert scenario.owner == client_a.user
    assert scenario.customer == "ACME"
    assert scenario.inputs == TWO_SERVER_TRAINING


def test_the_run_is_evaluated_and_the_scenario_shows_the_full_result(
    client_a: Caller, submitted: Any
) -> None:
    created = submitted()

    response = client_a.http.get(created["url"])

    assert response.status_code == 200
    body = response.json()
    run = latest_run(created["id"])
    assert body["status"] == "succeeded"
    assert body["progress"] == 100
    assert body["inputs"] == TWO_SERVER_TRAINING
    assert body["run"]["id"] == str(run.pk)
    assert body["run"]["status"] == "succeeded"
    assert body["run"]["engine_version"] == run.engine_version != ""
    assert body["result"] == run.result
    assert body["result"]["recommendation"]["fabric"] in {"ethernet", "roce", "infiniband"}
    assert body["bom_url"] == f"http://testserver/api/v1/scenarios/{created['id']}/bom/"


def test_a_queued_scenario_has_no_result_yet(client_a: Caller, submitted: Any) -> None:
    created = submitted(finish=False)

    body = client_a.http.get(created["url"]).json()

    assert body["status"] == "queued"
    assert body["progress"] == 0
    assert body["result"] is None


def test_inputs_are_validated_by_the_engine_with_one_message_per_field(
    client_a: Caller,
) -> None:
    bad = {**TWO_SERVER_TRAINING, "gpus": -3, "gpu": "no-such-gpu"}

    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "Bad", "inputs": bad}, format="json"
    )

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert error["fields"]["inputs.gpus"] == ["must be a positive integer"]
    assert error["fields"]["inputs.gpu"][0].startswith("unknown GPU id 'no-such-gpu'; known:")
    assert Scenario.objects.count() == 0


def test_nested_input_errors_are_keyed_by_their_dotted_path(client_a: Caller) -> None:
    bad = {**TWO_SERVER_TRAINING, "training": {"global_batch_sequences": 0}}

    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "Bad", "inputs": bad}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "inputs.training.global_batch_sequences": ["must be a positive integer"]
    }


def test_inputs_that_are_not_an_object_are_refused(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "Bad", "inputs": [1, 2]}, format="json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"inputs": ["must be a JSON object (scenario v1)"]}


def test_missing_name_and_inputs_are_both_reported(client_a: Caller) -> None:
    response = client_a.http.post("/api/v1/scenarios/", {}, format="json")

    assert response.status_code == 400
    assert response.json() == {
        "error": {
            "code": "validation_error",
            "message": "The request is invalid: check inputs, name.",
            "fields": {
                "name": ["This field is required."],
                "inputs": ["This field is required."],
            },
        }
    }


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://example.com/hook", "must be an http:// or https:// URL"),
        ("http://169.254.169.254/latest/meta-data", "must not point at a cloud metadata service"),
        ("http://[fe80::1]/hook", "must not point at a link-local address"),
        ("http://127.0.0.1:9/hook", "must not point at a loopback or private address"),
        ("http://10.0.0.7/hook", "must not point at a loopback or private address"),
        ("http://metadata.google.internal/x", "must not point at a cloud metadata service"),
    ],
)
def test_unsafe_callback_urls_are_refused_at_submission(
    client_a: Caller, url: str, message: str
) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/",
        {"name": "Hook", "inputs": TWO_SERVER_TRAINING, "callback_url": url},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"callback_url": [message]}
    assert Scenario.objects.count() == 0


def test_a_staff_user_cannot_set_a_callback_without_a_signing_secret(staff: Caller) -> None:
    response = staff.http.post(
        "/api/v1/scenarios/",
        {"name": "Hook", "inputs": TWO_SERVER_TRAINING, "callback_url": "https://example.com/h"},
        format="json",
    )

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "callback_url": ["needs an API client: webhooks are signed with the client's secret"]
    }


# --- Listing ---------------------------------------------------------------------------------


def test_the_list_shows_only_the_callers_scenarios_newest_first(
    client_a: Caller, client_b: Caller, submitted: Any
) -> None:
    first = submitted(name="First")
    second = submitted(name="Second", finish=False)
    submitted(client_b, name="Someone else's")

    body = client_a.http.get("/api/v1/scenarios/").json()

    assert body["count"] == 2
    assert body["next"] is None
    assert [(s["id"], s["name"], s["status"]) for s in body["results"]] == [
        (second["id"], "Second", "queued"),
        (first["id"], "First", "succeeded"),
    ]
    assert body["results"][1]["progress"] == 100
    assert body["results"][1]["url"] == first["url"]


def test_staff_see_every_clients_scenarios(
    client_a: Caller, client_b: Caller, staff: Caller, submitted: Any
) -> None:
    submitted(client_a, name="A's", finish=False)
    submitted(client_b, name="B's", finish=False)

    body = staff.http.get("/api/v1/scenarios/").json()

    assert sorted(s["name"] for s in body["results"]) == ["A's", "B's"]


def test_the_list_filters_by_customer_status_and_creation_time(
    client_a: Caller, submitted: Any
) -> None:
    acme_done = submitted(name="ACME done", customer="ACME")
    submitted(name="ACME queued", customer="ACME", finish=False)
    submitted(name="Globex done", customer="Globex")
    Scenario.objects.filter(pk=acme_done["id"]).update(
        created_at=timezone.now() - timedelta(days=10)
    )

    def names(**params: str) -> list[str]:
        response = client_a.http.get("/api/v1/scenarios/", params)
        assert response.status_code == 200, response.json()
        return sorted(s["name"] for s in response.json()["results"])

    assert names(customer="ACME") == ["ACME done", "ACME queued"]
    assert names(status="succeeded") == ["ACME done", "Globex done"]
    assert names(customer="ACME", status="queued") == ["ACME queued"]
    week_ago = (timezone.now() - timedelta(days=7)).isoformat()
    assert names(created_before=week_ago) == ["ACME done"]
    assert names(created_after=week_ago) == ["ACME queued", "Globex done"]


def test_bad_filters_are_a_400_naming_the_parameter(client_a: Caller) -> None:
    response = client_a.http.get(
        "/api/v1/scenarios/", {"status": "done", "created_after": "yesterday"}
    )

    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert set(fields) == {"status", "created_after"}
    assert fields["status"] == ['"done" is not a valid choice.']


def test_the_list_is_paginated(client_a: Caller, submitted: Any) -> None:
    for i in range(3):
        submitted(name=f"S{i}", finish=False)

    page = client_a.http.get("/api/v1/scenarios/", {"limit": 2}).json()
    rest = client_a.http.get(page["next"]).json()

    assert page["count"] == 3
    assert [s["name"] for s in page["results"]] == ["S2", "S1"]
    assert [s["name"] for s in rest["results"]] == ["S0"]
    assert rest["next"] is None


# --- Re-runs and runs --------------------------------------------------------------------------


def test_a_rerun_queues_a_new_run_that_becomes_the_latest(
    client_a: Caller, submitted: Any, run_tasks: Any
) -> None:
    created = submitted()
    first_run = latest_run(created["id"])

    with run_tasks():
        response = client_a.http.post(f"/api/v1/scenarios/{created['id']}/runs/")

    assert response.status_code == 202
    body = response.json()
    new_run = latest_run(created["id"])
    assert new_run.pk != first_run.pk
    assert body["id"] == str(new_run.pk)
    assert body["scenario_id"] == created["id"]
    assert body["url"] == f"http://testserver/api/v1/runs/{new_run.pk}/"
    assert client_a.http.get(created["url"]).json()["run"]["id"] == str(new_run.pk)
    assert ScenarioRun.objects.filter(scenario_id=created["id"]).count() == 2


def test_a_rerun_while_a_run_is_still_queued_is_a_409_and_queues_nothing(
    client_a: Caller, submitted: Any
) -> None:
    created = submitted(finish=False)

    response = client_a.http.post(f"/api/v1/scenarios/{created['id']}/runs/")

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "run_in_progress"
    assert ScenarioRun.objects.filter(scenario_id=created["id"]).count() == 1


def test_a_run_shows_its_status_and_result(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    run = latest_run(created["id"])

    body = client_a.http.get(f"/api/v1/runs/{run.pk}/").json()

    assert body["id"] == str(run.pk)
    assert body["scenario_id"] == created["id"]
    assert body["status"] == RunStatus.SUCCEEDED
    assert body["progress"] == 100
    assert body["attempts"] == 1
    assert body["error"] == ""
    assert body["result"] == run.result


@pytest.mark.parametrize(
    ("params", "field"),
    [({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"offset": -1}, "offset")],
)
def test_a_page_size_or_offset_out_of_range_is_a_400(
    client_a: Caller, params: dict[str, int], field: str
) -> None:
    response = client_a.http.get("/api/v1/scenarios/", params)

    assert response.status_code == 400
    assert set(response.json()["error"]["fields"]) == {field}


def test_an_empty_filter_is_refused_rather_than_ignored(client_a: Caller) -> None:
    response = client_a.http.get("/api/v1/scenarios/", {"status": "", "customer": "ACME"})

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "status": ["may not be blank; leave the parameter out instead"]
    }


def test_a_submission_asks_the_database_only_what_it_needs(
    client_a: Caller, django_assert_num_queries: Any
) -> None:
    """The caller's key, the current catalog (the serializer's check of the inputs and the
    service's), the scenario and its run in the API's one transaction (a savepoint here,
    inside the test's transaction; none per service), and in embedded mode, as here, the run
    read again to show how it ended. It took 14 (three more nested savepoints, the run read
    again also when a worker runs it)."""
    body = {"name": "Two-server training", "inputs": TWO_SERVER_TRAINING}
    client_a.http.post("/api/v1/scenarios/", body, format="json")  # the client's first call

    with django_assert_num_queries(8):
        response = client_a.http.post("/api/v1/scenarios/", body, format="json")

    assert response.status_code == 202
    assert Scenario.objects.count() == ScenarioRun.objects.count() == 2
