"""Every endpoint, every persona: the owner, another client, an anonymous caller, staff.

Another client's object is a 404, exactly like an object that does not exist, so existence
never leaks; and a refused request changes nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from advisor.scenarios.models import Scenario, ScenarioRun
from tests.api.conftest import TWO_SERVER_TRAINING, Caller, latest_run

pytestmark = pytest.mark.django_db

SMALL_EVALUATION = {"inputs": TWO_SERVER_TRAINING}


@pytest.fixture
def owned(submitted: Any) -> dict[str, str]:
    """A finished scenario of client A, with the URLs of its objects."""
    created = submitted()
    run = latest_run(created["id"])
    return {
        "scenario": f"/api/v1/scenarios/{created['id']}/",
        "bom": f"/api/v1/scenarios/{created['id']}/bom/",
        "runs": f"/api/v1/scenarios/{created['id']}/runs/",
        "run": f"/api/v1/runs/{run.pk}/",
    }


def persona(request: pytest.FixtureRequest, name: str) -> Caller:
    return request.getfixturevalue(name)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("who", "expected"),
    [("client_a", 200), ("client_b", 404), ("anonymous", 401), ("staff", 200)],
)
@pytest.mark.parametrize("what", ["scenario", "bom", "run"])
def test_reading_a_clients_objects(
    request: pytest.FixtureRequest, owned: dict[str, str], who: str, what: str, expected: int
) -> None:
    response = persona(request, who).http.get(owned[what])

    assert response.status_code == expected
    if expected != 200:
        assert set(response.json()) == {"error"}


@pytest.mark.parametrize(
    ("who", "expected"), [("client_b", 404), ("anonymous", 401), ("customer_user", 403)]
)
def test_only_the_owner_or_staff_can_rerun_and_refusals_queue_nothing(
    request: pytest.FixtureRequest, owned: dict[str, str], who: str, expected: int
) -> None:
    runs_before = ScenarioRun.objects.count()

    response = persona(request, who).http.post(owned["runs"])

    assert response.status_code == expected
    assert ScenarioRun.objects.count() == runs_before


@pytest.mark.parametrize("who", ["client_a", "staff"])
def test_the_owner_and_staff_can_rerun(
    request: pytest.FixtureRequest, owned: dict[str, str], who: str
) -> None:
    assert persona(request, who).http.post(owned["runs"]).status_code == 202


def test_another_clients_object_looks_exactly_like_a_missing_one(
    client_b: Caller, owned: dict[str, str]
) -> None:
    missing = f"/api/v1/scenarios/{uuid.uuid4()}/"

    theirs = client_b.http.get(owned["scenario"])
    nothing = client_b.http.get(missing)

    assert theirs.status_code == nothing.status_code == 404
    assert theirs.json() == nothing.json()
    assert theirs.json() == {
        "error": {"code": "not_found", "message": "No such scenario.", "fields": {}}
    }


def test_an_anonymous_questionnaire_scenario_is_not_reachable_through_the_api(
    client_a: Caller,
) -> None:
    ownerless = Scenario.objects.create(name="From the web", inputs=TWO_SERVER_TRAINING)

    assert client_a.http.get(f"/api/v1/scenarios/{ownerless.pk}/").status_code == 404


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("client_a", 200),
        ("client_b", 200),
        ("anonymous", 401),
        ("staff", 200),
        ("customer_user", 403),
    ],
)
@pytest.mark.parametrize(
    ("method", "url", "body", "success"),
    [
        ("get", "/api/v1/scenarios/", None, 200),
        ("post", "/api/v1/scenarios/", {"name": "P", "inputs": TWO_SERVER_TRAINING}, 202),
        ("post", "/api/v1/evaluate/", SMALL_EVALUATION, 200),
        ("get", "/api/v1/catalog/", None, 200),
    ],
)
def test_collection_endpoints(
    request: pytest.FixtureRequest,
    who: str,
    expected: int,
    method: str,
    url: str,
    body: dict[str, Any] | None,
    success: int,
) -> None:
    scenarios_before = Scenario.objects.count()

    response = getattr(persona(request, who).http, method)(url, body, format="json")

    assert response.status_code == (success if expected == 200 else expected)
    if expected != 200:
        assert Scenario.objects.count() == scenarios_before


@pytest.mark.parametrize("who", ["client_a", "anonymous", "staff"])
@pytest.mark.parametrize("url", ["/api/v1/schema/", "/api/v1/docs/"])
def test_the_schema_and_docs_are_public(request: pytest.FixtureRequest, who: str, url: str) -> None:
    assert persona(request, who).http.get(url).status_code == 200
