"""Serving inputs through the API: deployment, load, targets and pools (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.scenarios.models import Scenario
from tests.api.conftest import Caller

pytestmark = pytest.mark.django_db

DISAGGREGATED: dict[str, Any] = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 32,
    "inference": {
        "deployment": "disaggregated",
        "prompt_tokens": 16000,
        "output_tokens": 500,
        "requests_per_s": 0.5,
        "target_ttft_ms": 2000,
        "prefix_cache_hit_rate": 0.25,
        "pools": {"prefill": {"servers": 3}, "decode": {"servers": 1}},
    },
}


def test_a_disaggregated_serving_scenario_is_evaluated_with_load_metrics(
    client_a: Caller, submitted: Any
) -> None:
    created = submitted(inputs=DISAGGREGATED, name="Disaggregated Llama 70B")
    body = client_a.http.get(created["url"]).json()
    assert body["status"] == "succeeded"
    result = body["result"]
    assert result["workload"]["serving"]["deployment"] == "disaggregated"
    assert result["workload"]["serving"]["pools"]["prefill"]["servers"] == 3
    metrics = result["metrics"]
    for key in ("ttft_ms_p50", "ttft_ms_p95", "ms_per_token_p50", "ms_per_token_p95"):
        assert metrics[key] > 0, key
    assert metrics["kv_transfer_ms"] > 0
    assert result["recommendation"]["fabric"] in ("roce", "infiniband")


@pytest.mark.parametrize(
    ("inference", "field"),
    [
        ({"deployment": "sharded"}, "inputs.inference.deployment"),
        ({"requests_per_s": 0}, "inputs.inference.requests_per_s"),
        ({"prefix_cache_hit_rate": 2}, "inputs.inference.prefix_cache_hit_rate"),
        ({"pools": {"prefill": {"servers": 0}}}, "inputs.inference.pools.prefill.servers"),
    ],
)
def test_bad_serving_inputs_are_refused_naming_the_field(
    client_a: Caller, inference: dict[str, Any], field: str
) -> None:
    bad = {**DISAGGREGATED, "inference": {**DISAGGREGATED["inference"], **inference}}
    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "Bad", "inputs": bad}, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert Scenario.objects.count() == 0


def test_the_schema_documents_the_serving_fields(client_a: Caller) -> None:
    schema = client_a.http.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    body = schema["components"]["schemas"]["ScenarioCreateRequest"]["properties"]["inputs"]
    inference = body["properties"]["inference"]["properties"]
    for name in ("deployment", "requests_per_s", "target_ttft_ms", "prefix_cache_hit_rate"):
        assert name in inference, name
    assert inference["deployment"]["enum"] == ["replicas", "split", "disaggregated"]
    assert "pools" in inference
