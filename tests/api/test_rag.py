"""A retrieval pipeline (RAG) through the API: its inputs, its own answer, its BOM, its errors."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.scenarios.models import Scenario
from tests.api.conftest import Caller

pytestmark = pytest.mark.django_db

RAG_70B: dict[str, Any] = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "inference": {"requests_per_s": 5},
    "rag": {"top_k": 4, "chunk_tokens": 256},
}
RAG_ONE_SERVER: dict[str, Any] = {**RAG_70B, "gpus": 8, "inference": {"requests_per_s": 2}}


def test_a_rag_scenario_gets_its_own_answer_and_its_tier_network_in_the_bom(
    client_a: Caller, submitted: Any
) -> None:
    created = submitted(inputs=RAG_70B, name="RAG on Llama 70B")
    body = client_a.http.get(created["url"]).json()
    assert body["status"] == "succeeded"
    result = body["result"]
    assert result["scenario"]["rag"]["top_k"] == 4
    assert result["recommendation"]["headline"].startswith("RAG pipeline at 5.0 questions/s")
    rag = result["rag"]
    assert [t["role"] for t in rag["tiers"]] == ["embedding", "vector_search", "generation"]
    assert rag["network"]["port_gbps"] == 25
    assert rag["network"]["nic_part_number"] == "MCX631102AN-ADAT"
    assert rag["compute_fabric"] is False
    bom = client_a.http.get(f"/api/v1/scenarios/{created['id']}/bom/").json()
    tier = [ln for ln in bom["lines"] if ln["network"] == "retrieval"]
    assert {ln["part_number"] for ln in tier} >= {"MCX631102AN-ADAT", "MSN2700-CS2F"}
    assert sum(ln["extended_price_usd"] for ln in tier) == pytest.approx(
        rag["network"]["capex_usd"]
    )
    assert bom["total_usd"] == pytest.approx(result["cost"]["network_capex_usd"])


@pytest.mark.parametrize(
    ("rag", "field"),
    [
        ({"top_k": 0}, "inputs.rag.top_k"),
        ({"chunk_tokens": "long"}, "inputs.rag.chunk_tokens"),
        ({"top_k": 8, "chunk_tokens": 512}, "inputs.rag.top_k"),
        ({"reranker": "bge"}, "inputs.rag.reranker"),
        ([], "inputs.rag"),
    ],
)
def test_bad_rag_inputs_are_refused_naming_the_field(
    client_a: Caller, rag: Any, field: str
) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "Bad", "inputs": {**RAG_70B, "rag": rag}}, format="json"
    )
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert Scenario.objects.count() == 0


def test_rag_on_a_training_scenario_is_refused_naming_rag(client_a: Caller) -> None:
    inputs = {k: v for k, v in RAG_70B.items() if k != "inference"} | {"workload": "training"}
    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "Bad", "inputs": inputs}, format="json"
    )
    assert response.status_code == 400
    assert "inference" in " ".join(response.json()["error"]["fields"]["inputs.rag"])


def test_the_quick_evaluate_answers_a_rag_pipeline(client_a: Caller) -> None:
    response = client_a.http.post("/api/v1/evaluate/", {"inputs": RAG_ONE_SERVER}, format="json")
    assert response.status_code == 200, response.json()
    result = response.json()["result"]
    assert result["rag"]["queries_per_s"] == 2
    assert result["recommendation"]["needs_compute_fabric"] is False


def test_the_schema_publishes_the_rag_section(client_a: Caller) -> None:
    schema = client_a.http.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    body = schema["components"]["schemas"]["ScenarioCreateRequest"]["properties"]["inputs"]
    rag = body["properties"]["rag"]["properties"]
    assert rag["top_k"]["default"] == 4
    assert rag["chunk_tokens"]["maximum"] == 1_048_576
    assert set(rag) == {
        "top_k",
        "chunk_tokens",
        "embedding_dims",
        "corpus_chunks",
        "embedding_servers",
        "vector_search_servers",
    }


def test_every_option_of_a_split_generation_tier_carries_the_tier_network(
    submitted: Any,
) -> None:
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.result.records import EngineResult
    from api.bom import bom_for, option_bom_lines
    from tests.api.conftest import latest_run

    inputs = {
        "workload": "inference",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 32,
        "precision": "bf16",
        "inference": {"requests_per_s": 1, "prompt_tokens": 8192},
        "rag": {"top_k": 8, "chunk_tokens": 512},
    }
    result = EngineResult.from_dict(latest_run(submitted(inputs=inputs)["id"]).result)
    assert result.recommendation.needs_compute_fabric is True
    recommended = result.recommended_option
    assert recommended is not None
    rebuilt = option_bom_lines(result=result, option=recommended, catalog=default_catalog())
    assert rebuilt == [line.to_dict() for line in result.bom]
    assert len(result.options) > 1
    for option in result.options:
        bom = bom_for(result=result, option=option.rank, catalog=default_catalog())
        assert any(ln["network"] == "retrieval" for ln in bom["lines"])
        assert bom["total_usd"] == pytest.approx(option.cost.network_capex_usd, abs=0.01)
