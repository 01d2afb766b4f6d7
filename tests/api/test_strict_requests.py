"""The API refuses what it would otherwise ignore: body fields and query parameters it does
not read (as unknown scenario inputs are), an id given as a number, a design it cannot plan."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.scenarios.models import Scenario, ScenarioRun
from tests.api.conftest import TWO_SERVER_TRAINING, Caller

pytestmark = pytest.mark.django_db


@pytest.fixture
def scenario(submitted: Any) -> Scenario:
    """A scenario whose run succeeded."""
    return Scenario.objects.get(pk=submitted()["id"])


def test_an_unknown_field_on_a_rerun_is_refused_and_nothing_is_queued(
    client_a: Caller, scenario: Scenario
) -> None:
    response = client_a.http.post(f"/api/v1/scenarios/{scenario.pk}/runs/", {"measurment": None})

    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert list(fields) == ["measurment"]
    assert "is not a field of this request (the fields are: measurement)" in fields["measurment"]
    assert ScenarioRun.objects.filter(scenario=scenario).count() == 1


def test_an_unknown_field_on_a_submission_is_refused(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/",
        {"name": "Typo", "inputs": TWO_SERVER_TRAINING, "custmer": "Acme"},
    )

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["custmer"]
    assert not Scenario.objects.filter(name="Typo").exists()


def test_a_measurement_id_given_as_a_number_is_refused(
    client_a: Caller, scenario: Scenario
) -> None:
    response = client_a.http.post(f"/api/v1/scenarios/{scenario.pk}/runs/", {"measurement": 1})

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["measurement"]
    assert ScenarioRun.objects.filter(scenario=scenario).count() == 1


def test_an_unknown_query_parameter_is_refused_naming_it(client_a: Caller) -> None:
    response = client_a.http.get("/api/v1/scenarios/", {"custmer": "Acme"})

    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["custmer"]
    assert "customer" in error["fields"]["custmer"][0]  # says what it reads instead


def test_known_query_parameters_still_work(client_a: Caller, scenario: Scenario) -> None:
    assert client_a.http.get("/api/v1/scenarios/", {"customer": "", "limit": 5}).status_code == 400
    assert client_a.http.get("/api/v1/scenarios/", {"limit": 5, "offset": 0}).status_code == 200
    assert client_a.http.get("/api/v1/measurements/", {"customer": "Acme"}).status_code == 200
    assert client_a.http.get(f"/api/v1/scenarios/{scenario.pk}/", {"x": "1"}).status_code == 400


@pytest.mark.parametrize("design", ["bogus", "", "GIVEN"])
def test_an_acceptance_plan_for_a_design_it_cannot_plan_is_refused(
    client_a: Caller, scenario: Scenario, design: str
) -> None:
    response = client_a.http.get(f"/api/v1/scenarios/{scenario.pk}/acceptance/", {"design": design})

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["design"]


def test_the_acceptance_plan_of_the_given_design_is_still_served(
    client_a: Caller, scenario: Scenario
) -> None:
    response = client_a.http.get(
        f"/api/v1/scenarios/{scenario.pk}/acceptance/", {"design": "given"}
    )

    assert response.status_code == 200, response.content
    assert response.json()["checks"]
