"""The result page's what-if endpoints: who may price, the error shape, saving a point."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.scenarios.models import Scenario, ScenarioRun
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


def _post(client: Client, scenario: Scenario, body: Any) -> Any:
    return client.post(
        f"/s/{scenario.pk}/whatif", data=json.dumps(body), content_type="application/json"
    )


def test_the_page_offers_the_what_if_with_the_recommendation_selected() -> None:
    scenario = make_scenario()
    page = Client().get(f"/s/{scenario.pk}/").content.decode()
    assert 'id="whatif"' in page
    assert f'data-url="/s/{scenario.pk}/whatif"' in page
    assert 'name="servers" min="1" step="1" value="64"' in page
    assert "whatif.js" in page


def test_anyone_with_the_link_prices_an_anonymous_scenario() -> None:
    scenario = make_scenario()
    response = _post(Client(), scenario, {"servers": 80, "fabric": "roce"})
    assert response.status_code == 200
    body = response.json()
    assert body["change"]["servers"] == 80
    assert body["point"]["servers"] == 80
    assert body["point"]["feasible"] is True
    assert body["point"]["step_time_s"] > 0
    assert body["baseline"]["servers"] == 64


def test_errors_have_the_api_shape_and_name_the_field() -> None:
    scenario = make_scenario()
    response = _post(Client(), scenario, {"oversubscription": 99})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["fields"]) == ["oversubscription"]
    bad_json = Client().post(f"/s/{scenario.pk}/whatif", data="{", content_type="application/json")
    assert bad_json.status_code == 400
    assert bad_json.json()["error"]["code"] == "parse_error"


def test_a_stranger_gets_404_for_an_owned_scenario(
    customer_user: User, stranger_client: Client
) -> None:
    scenario = make_scenario(owner=customer_user)
    assert _post(stranger_client, scenario, {}).status_code == 404
    assert stranger_client.post(f"/s/{scenario.pk}/whatif/save", {}).status_code == 404


def test_saving_a_point_makes_a_new_scenario_with_that_design_and_computes_it(
    customer_user: User, customer_client: Client
) -> None:
    scenario = make_scenario(owner=customer_user)
    response = customer_client.post(
        f"/s/{scenario.pk}/whatif/save",
        {
            "servers": "32",
            "fabric": "roce",
            "nic_gbps": "200",
            "nics_per_node": "4",
            "oversubscription": "2",
            "global_batch_sequences": "256",
        },
    )
    saved = Scenario.objects.exclude(pk=scenario.pk).get()
    assert response.status_code == 302
    assert response["Location"] == f"/s/{saved.pk}/"
    assert saved.owner == customer_user
    assert saved.cloned_from == scenario
    assert saved.inputs["gpus"] == 256
    assert saved.inputs["training"]["global_batch_sequences"] == 256
    assert saved.inputs["design"] == {
        "fabric": "roce",
        "nic_gbps": 200,
        "nics_per_node": 4,
        "oversubscription": 2,
    }
    assert ScenarioRun.objects.filter(scenario=saved).count() == 1
    assert scenario.inputs["gpus"] == 512  # the original is untouched
