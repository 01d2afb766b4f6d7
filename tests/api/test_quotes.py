"""Synchronous evaluation for quick quotes, and the hardware catalog."""

from __future__ import annotations

import pytest

from advisor.engine import ENGINE_VERSION
from advisor.engine.facts.catalog import default_catalog
from advisor.scenarios.models import Scenario
from tests.api.conftest import TWO_SERVER_TRAINING, Caller

pytestmark = pytest.mark.django_db


def test_a_small_scenario_is_evaluated_in_the_request_and_nothing_is_saved(
    client_a: Caller,
) -> None:
    response = client_a.http.post(
        "/api/v1/evaluate/", {"inputs": TWO_SERVER_TRAINING}, format="json"
    )

    assert response.status_code == 200
    result = response.json()["result"]
    assert result["engine_version"] == ENGINE_VERSION
    assert result["recommendation"]["needs_compute_fabric"] is True
    assert result["bom"]
    assert result["scenario"]["gpus"] == 16
    assert Scenario.objects.count() == 0


def test_a_large_scenario_is_sent_to_the_asynchronous_path(
    client_a: Caller, settings: object
) -> None:
    settings.API_SYNC_EVALUATE_MAX_GPUS = 8  # type: ignore[attr-defined]

    response = client_a.http.post(
        "/api/v1/evaluate/", {"inputs": TWO_SERVER_TRAINING}, format="json"
    )

    assert response.status_code == 413
    assert response.json() == {
        "error": {
            "code": "too_large_for_sync",
            "message": "Scenarios with more than 8 GPUs are evaluated asynchronously: submit "
            "them with POST /api/v1/scenarios/ and poll the returned url.",
            "fields": {"inputs.gpus": ["must be at most 8 for POST /api/v1/evaluate/"]},
        }
    }


def test_bad_inputs_are_a_400_per_field(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/evaluate/",
        {"inputs": {**TWO_SERVER_TRAINING, "workload": "gaming", "gpus": 12}},
        format="json",
    )

    assert response.status_code == 400
    fields = response.json()["error"]["fields"]
    assert fields["inputs.workload"] == ["must be one of training, fine_tuning, inference"]
    assert fields["inputs.gpus"] == ["must be a multiple of gpus_per_node (8): whole servers only"]


def test_the_catalog_lists_the_hardware_with_prices_and_sources(client_a: Caller) -> None:
    response = client_a.http.get("/api/v1/catalog/")

    assert response.status_code == 200
    catalog = response.json()
    builtin = default_catalog()
    assert catalog["version"] == builtin.version
    assert {g["id"] for g in catalog["gpus"]} == set(builtin.gpu_ids)
    assert len(catalog["nics"]) == len(builtin.nics)
    assert len(catalog["switches"]) == len(builtin.switches)
    assert len(catalog["transceivers"]) == len(builtin.transceivers)
    for item in (*catalog["nics"], *catalog["switches"], *catalog["transceivers"]):
        # integrated scale-out ports (Gaudi 3) are part of the accelerator: no price of their own
        assert item["unit_price_usd"] > 0 or item.get("integrated") is True
        assert item["source"]
