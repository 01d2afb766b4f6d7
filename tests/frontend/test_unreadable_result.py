"""A stored result that cannot be read (a wrong-typed field) never gives a 500: its pages and
the API say "this result cannot be read; compute it again", and lists mark its row."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from tests.frontend.conftest import make_scenario
from tests.frontend.sample_result import training_result

pytestmark = pytest.mark.django_db

MESSAGE = "This result cannot be read; compute it again."


def damaged(**changes: Any) -> dict[str, Any]:
    return {**training_result(), **changes}


@pytest.fixture
def broken(sales_user: User) -> Scenario:
    """A scenario whose latest run stored a recommendation that is not an object."""
    return make_scenario(name="Damaged", result=damaged(recommendation="oops"))


@pytest.mark.parametrize(
    "page", ["", "report.pdf", "bom.csv", "result.json", "acceptance.md", "acceptance.pdf"]
)
def test_every_page_of_the_scenario_says_the_result_cannot_be_read(
    sales_client: Client, broken: Scenario, page: str
) -> None:
    response = sales_client.get(f"/s/{broken.pk}/{page}")

    assert response.status_code == 409
    html = response.content.decode()
    assert MESSAGE in html
    assert f"/s/{broken.pk}/rerun" in html  # the way out: compute it again


def test_a_wrong_typed_figure_makes_the_result_unreadable_too(sales_client: Client) -> None:
    scenario = make_scenario(
        name="Damaged figure",
        result=damaged(cost={**training_result()["cost"], "network_capex_usd": "lots"}),
    )

    response = sales_client.get(f"/s/{scenario.pk}/")

    assert response.status_code == 409
    assert MESSAGE in response.content.decode()


def test_the_comparison_says_so_too(sales_client: Client, broken: Scenario) -> None:
    other = make_scenario(name="Fine")

    response = sales_client.get("/compare/", {"s": [str(broken.pk), str(other.pk)]})

    assert response.status_code == 409
    assert MESSAGE in response.content.decode()


def test_computing_it_again_replaces_the_damaged_result(
    sales_client: Client, broken: Scenario, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sales_client.post(f"/s/{broken.pk}/rerun")

    latest = broken.runs.order_by("-created_at").first()
    assert latest is not None and latest.status == RunStatus.SUCCEEDED
    assert sales_client.get(f"/s/{broken.pk}/").status_code == 200


def test_the_list_marks_the_row_and_shows_the_others(sales_client: Client) -> None:
    make_scenario(name="Damaged cost", result=damaged(cost={"network_capex_usd": "lots"}))
    make_scenario(name="Damaged recommendation", result=damaged(recommendation=["x"]))
    make_scenario(name="Fine one")

    response = sales_client.get("/scenarios/")

    assert response.status_code == 200
    html = response.content.decode()
    assert html.count(">result cannot be read<") == 2
    assert "Fine one" in html


@pytest.mark.parametrize(
    "path", ["scenarios/{scenario}/", "runs/{run}/", "scenarios/{scenario}/bom/"]
)
def test_the_api_answers_409_with_the_message(broken: Scenario, path: str) -> None:
    staff = User.objects.create_user("sally", password="unused-in-tests-1", is_staff=True)
    api = APIClient()
    api.force_login(staff)
    run = ScenarioRun.objects.get(scenario=broken)

    response = api.get("/api/v1/" + path.format(scenario=broken.pk, run=run.pk))

    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "result_unreadable",
        "message": MESSAGE,
        "fields": {},
    }
