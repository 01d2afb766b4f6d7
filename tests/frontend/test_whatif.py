"""The result page's what-if endpoints: who may price, the error shape, saving a point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.measurements.selectors import measurement_fit
from advisor.measurements.services import (
    measurement_create,
    scenario_quoted_run_choose,
    scenario_run_calibrated,
)
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.services import scenario_submit
from tests.frontend.conftest import make_scenario
from tests.support.scenarios import SERVING_70B_5_RPS

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


def test_a_saved_serving_what_if_names_its_changed_load(
    customer_user: User, customer_client: Client
) -> None:
    """A closed loop's users changed on the page: the saved scenario's name says how many, and
    its inputs hold them (a changed rate is named as a rate)."""
    closed = {**SERVING_70B_5_RPS, "inference": {}}
    scenario, _ = _answered(closed)
    scenario.owner = customer_user
    scenario.save()
    customer_client.post(f"/s/{scenario.pk}/whatif/save", {"concurrent_requests": "500"})
    saved = Scenario.objects.exclude(pk=scenario.pk).get()
    assert saved.name == "70B serving (what if: 2 servers, 500 users)"
    assert saved.inputs["inference"]["concurrent_requests"] == 500
    customer_client.post(f"/s/{scenario.pk}/whatif/save", {"requests_per_s": "3"})
    rated = Scenario.objects.exclude(pk__in=(scenario.pk, saved.pk)).get()
    assert rated.name == "70B serving (what if: 2 servers, 3 requests/s)"


def _answered(inputs: dict[str, Any]) -> tuple[Scenario, dict[str, Any]]:
    """A scenario whose run holds the engine's real answer for its inputs."""
    result = evaluate(inputs)
    scenario = Scenario.objects.create(name="70B serving", inputs=inputs)
    ScenarioRun.objects.create(
        scenario=scenario,
        status=RunStatus.SUCCEEDED,
        progress=100,
        result=result,
        engine_version=result["engine_version"],
        catalog_version=result["catalog_version"],
    )
    return scenario, result


@pytest.mark.parametrize("rag", [False, True])
def test_a_no_fabric_answer_what_if_shows_the_answers_own_figures(rag: bool) -> None:
    """Llama 3 70B on 16 H100 at 5 requests/s needs no compute fabric: the what-if at the
    scenario's own inputs names no compute fabric and shows the answer's network capex and
    serving figures (RAG: its retrieval tiers' network included), not an Ethernet fabric."""
    inputs = {**SERVING_70B_5_RPS, **({"rag": {}} if rag else {})}
    scenario, result = _answered(inputs)
    assert result["recommendation"]["needs_compute_fabric"] is False
    page = Client().get(f"/s/{scenario.pk}/").content.decode()
    assert '<option value="none" selected>No compute fabric</option>' in page
    assert 'data-whatif="fabric_label"' in page

    nothing = _post(Client(), scenario, {}).json()
    assert nothing["priced_as"] == "answer"
    assert nothing["baseline"]["fabric"] == "none"
    point = nothing["point"]
    assert point["fabric"] == "none"
    assert point["fabric_label"] == "No compute fabric"
    assert point["network_capex_usd"] == pytest.approx(result["cost"]["network_capex_usd"])
    assert point["decision_cost_usd"] == pytest.approx(result["cost"]["decision_cost_usd"])
    for key in ("ms_per_token", "ttft_ms", "tokens_per_s_per_server"):
        assert point[key] == pytest.approx(result["metrics"][key], rel=1e-5)
    # the page's script posts every control at its value: the same point
    controls = {k: v for k, v in nothing["baseline"].items() if v is not None}
    assert _post(Client(), scenario, controls).json()["point"] == point

    # a design the user fixes is that design: an Ethernet compute fabric costs more
    fixed = _post(Client(), scenario, {"fabric": "ethernet", "nic_gbps": 400, "nics_per_node": 8})
    assert fixed.json()["priced_as"] == "fixed"
    assert fixed.json()["point"]["network_capex_usd"] > point["network_capex_usd"]


def test_a_changed_size_shows_what_a_new_evaluate_answers() -> None:
    scenario, _ = _answered(SERVING_70B_5_RPS)
    body = _post(Client(), scenario, {"servers": 4}).json()
    assert body["priced_as"] == "answer"
    assert "design" not in body["inputs"]  # saved, it gets the engine's own answer
    fresh = evaluate({**SERVING_70B_5_RPS, "gpus": 32})
    point = body["point"]
    assert point["network_capex_usd"] == pytest.approx(fresh["cost"]["network_capex_usd"])
    assert point["ms_per_token"] == pytest.approx(fresh["metrics"]["ms_per_token"], rel=1e-5)
    nic = _post(Client(), scenario, {"nic_gbps": 100})
    assert nic.status_code == 400
    assert "choose one first" in nic.json()["error"]["fields"]["nic_gbps"][0]


NCCL_LOG = (
    Path(__file__).resolve().parent.parent / "data" / "nccl" / "amd_mi300x_2x8_all_reduce_roce.txt"
)
MI300X_ROCE = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "mi300x",
    "gpus": 16,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
    "constraints": {"team_skills": "ethernet", "prefer": "cost"},
}


def test_a_quoted_calibrated_answers_what_if_applies_the_measurements_fit(
    customer_user: User, django_capture_on_commit_callbacks: Any
) -> None:
    """The what-if of a calibrated answer the customer chose evaluates with its fit: a new
    size shows what a calibrated evaluate of that size answers, not the default model."""
    with django_capture_on_commit_callbacks(execute=True):
        scenario = scenario_submit(name="MI300X", inputs=MI300X_ROCE, owner=customer_user).scenario
    measurement = measurement_create(
        name="MI300X pair", text=NCCL_LOG.read_text(), owner=customer_user
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = scenario_run_calibrated(scenario=scenario, measurement=measurement)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    scenario_quoted_run_choose(scenario=scenario, run_id=run.pk)
    client = Client()
    client.force_login(customer_user)
    body = _post(client, scenario, {"servers": 16}).json()
    fit = measurement_fit(measurement=measurement, catalog=default_catalog())
    resized = {**MI300X_ROCE, "gpus": 128}
    calibrated = evaluate(resized, calibration=fit)
    default = evaluate(resized)
    assert body["point"]["step_time_s"] == pytest.approx(
        calibrated["metrics"]["step_time_s"], rel=1e-5
    )
    assert calibrated["metrics"]["step_time_s"] != pytest.approx(
        default["metrics"]["step_time_s"], rel=1e-5
    )
