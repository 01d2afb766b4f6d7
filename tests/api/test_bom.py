"""Bill of materials: the recommended design, and alternatives by their rank."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.result.records import EngineResult
from advisor.scenarios.models import RunStatus, ScenarioRun
from api.bom import bom_for, option_bom_lines
from tests.api.conftest import Caller, latest_run

pytestmark = pytest.mark.django_db

LINE_KEYS = {
    "part_number",
    "sku",
    "description",
    "category",
    "quantity",
    "unit_price_usd",
    "extended_price_usd",
    "network",
    "source",
}


def test_the_bom_of_the_recommended_design(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    run = latest_run(created["id"])

    response = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/")

    assert response.status_code == 200
    bom = response.json()
    recommendation = run.result["recommendation"]
    assert bom["currency"] == "USD"
    assert bom["scenario_id"] == created["id"]
    assert bom["run_id"] == str(run.pk)
    assert bom["option"] == 1
    assert bom["design"]["fabric"] == recommendation["fabric"]
    assert bom["design"]["nic_sku"] == recommendation["nic_sku"]
    assert [line["sku"] for line in bom["lines"]] == [line["sku"] for line in run.result["bom"]]
    assert all(set(line) == LINE_KEYS for line in bom["lines"])
    for line in bom["lines"]:
        assert line["extended_price_usd"] == pytest.approx(
            line["quantity"] * line["unit_price_usd"]
        )
    expected_total = round(sum(line["extended_price_usd"] for line in run.result["bom"]), 2)
    assert bom["total_usd"] == expected_total
    assert bom["total_usd"] == pytest.approx(run.result["cost"]["network_capex_usd"], abs=0.01)


def test_an_alternative_is_priced_like_the_engine_prices_its_recommendation(
    client_a: Caller, submitted: Any
) -> None:
    created = submitted()
    result = latest_run(created["id"]).result
    second = next(o for o in result["options"] if o["rank"] == 2)

    bom = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/", {"option": 2}).json()

    assert bom["option"] == 2
    assert bom["design"]["nics_per_node"] == second["nics_per_node"]
    assert bom["design"]["switch_model"] == second["switch_model"]
    assert bom["total_usd"] == pytest.approx(second["cost"]["network_capex_usd"], abs=0.01)
    nics = [
        line for line in bom["lines"] if line["network"] == "compute" and line["category"] == "nic"
    ]
    assert {line["sku"] for line in nics} == {second["nic_sku"]}
    assert sum(line["quantity"] for line in nics) == 2 * second["nics_per_node"]


def test_rebuilding_the_recommended_option_gives_the_engines_own_bom(submitted: Any) -> None:
    """Guards the alternative BOM against drifting from how the engine builds its own."""
    result = EngineResult.from_dict(latest_run(submitted()["id"]).result)
    recommended = result.recommended_option
    assert recommended is not None

    rebuilt = option_bom_lines(result=result, option=recommended, catalog=default_catalog())

    assert rebuilt == [line.to_dict() for line in result.bom]


def test_every_option_of_a_larger_cluster_can_be_priced(submitted: Any) -> None:
    inputs = {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 256,
        "training": {"global_batch_sequences": 512, "total_tokens": 1e11},
    }
    result = EngineResult.from_dict(latest_run(submitted(inputs=inputs)["id"]).result)

    for option in result.options:
        bom = bom_for(result=result, option=option.rank, catalog=default_catalog())
        assert bom["total_usd"] == pytest.approx(option.cost.network_capex_usd, abs=0.01)


def test_an_option_that_does_not_exist_is_a_400(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    count = len(latest_run(created["id"]).result["options"])

    response = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/", {"option": 999})

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "option": [f"no option ranked 999; this result has {count} option(s), 1-{count}"]
    }


def test_option_must_be_a_positive_integer(client_a: Caller, submitted: Any) -> None:
    created = submitted()

    response = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/", {"option": "x"})

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"option": ["A valid integer is required."]}


def test_no_bom_before_the_run_succeeded(client_a: Caller, submitted: Any) -> None:
    created = submitted(finish=False)

    response = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/")

    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "result_not_ready",
        "message": "The quoted run is queued; the bill of materials exists once it succeeded.",
        "fields": {},
    }


def test_no_bom_for_a_failed_run(client_a: Caller, submitted: Any) -> None:
    created = submitted(finish=False)
    ScenarioRun.objects.filter(scenario_id=created["id"]).update(
        status=RunStatus.FAILED, error="Engine error"
    )

    response = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/")

    assert response.status_code == 409
    assert "failed" in response.json()["error"]["message"]


def test_an_alternative_is_priced_on_the_catalog_its_run_recorded(
    client_a: Caller, submitted: Any
) -> None:
    """Staff repricing the NIC after the run changes neither the run's options nor their BOMs."""
    from advisor.hardware.models import HardwareItem
    from advisor.hardware.services import catalog_publish, hardware_sync_builtin

    created = submitted()
    run = latest_run(created["id"])
    second = next(o for o in run.result["options"] if o["rank"] == 2)
    hardware_sync_builtin()
    repriced = HardwareItem.objects.filter(sku=second["nic_sku"]).update(unit_price_usd=1_000_000)
    assert repriced == 1
    catalog_publish(note="NIC repriced after the run")

    bom = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/", {"option": 2}).json()

    assert bom["total_usd"] == pytest.approx(second["cost"]["network_capex_usd"], abs=0.01)
    nic_prices = {line["unit_price_usd"] for line in bom["lines"] if line["category"] == "nic"}
    assert 1_000_000 not in nic_prices


def test_an_option_on_a_platform_whose_nics_come_with_it_is_priced_as_the_engine_priced_it(
    submitted: Any,
) -> None:
    """B300 servers carry their ConnectX-8s on the GPU board: the engine prices them at no
    price, and an alternative's BOM rebuilt here must too (it bought them as $4,000 cards)."""
    inputs = {"workload": "training", "model": "llama3-70b", "gpu": "b300", "gpus": 256}
    result = EngineResult.from_dict(latest_run(submitted(inputs=inputs)["id"]).result)
    recommended = result.recommended_option
    assert recommended is not None
    rebuilt = option_bom_lines(result=result, option=recommended, catalog=default_catalog())
    assert rebuilt == [line.to_dict() for line in result.bom]
    for option in result.options:
        bom = bom_for(result=result, option=option.rank, catalog=default_catalog())
        assert bom["total_usd"] == pytest.approx(option.cost.network_capex_usd, abs=0.01)
