"""Retrieval pipelines (RAG): the scenario's ``rag`` section, the tiers' model and the answer.

A RAG pipeline is a serving fleet with an embedding tier and a vector-search tier in front:
the tiers get ordinary low-latency Ethernet sized for their traffic, the generation tier is
answered exactly as the same fleet without retrieval, and a GPU compute fabric is bought only
where generation itself needs one (docs/MODEL.md section 21).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import pytest

from advisor.engine import evaluate, evaluate_typed
from advisor.engine.decision.bom import NetworkParts, check_bom
from advisor.engine.decision.rag import _leaf_shape, tier_network, tier_nic
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import (
    EMBEDDING_BYTES_PER_DIM,
    HNSW_BYTES_PER_LINK,
    HNSW_LINKS,
    TEXT_BYTES_PER_TOKEN,
    VECTOR_INDEX_MEMORY_HEADROOM,
    VECTOR_SERVER_MEMORY_BYTES,
)
from advisor.engine.input.echo import scenario_echo
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.rag import index_bytes, network_s, plan_rag, query_rate
from advisor.engine.result.echo import RagInput
from advisor.engine.result.records import EngineResult

CATALOG = default_catalog()

SERVING_70B: dict[str, Any] = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "inference": {"requests_per_s": 5},
}
RAG_70B: dict[str, Any] = {**SERVING_70B, "rag": {}}
RAG_405B_SPLIT: dict[str, Any] = {
    "workload": "inference",
    "model": "llama3.1-405b",
    "gpu": "h100-sxm",
    "gpus": 32,
    "precision": "bf16",
    "inference": {"requests_per_s": 1, "prompt_tokens": 8192},
    "rag": {"top_k": 8, "chunk_tokens": 512},
}


@cache
def _answer(name: str) -> dict[str, Any]:
    scenarios = {"serving": SERVING_70B, "rag": RAG_70B, "rag-405b": RAG_405B_SPLIT}
    return evaluate(scenarios[name])


@cache
def _typed(name: str) -> EngineResult:
    """The same answer as the engine's typed records (what the audit reads)."""
    scenarios = {"serving": SERVING_70B, "rag": RAG_70B, "rag-405b": RAG_405B_SPLIT}
    return evaluate_typed(scenarios[name])


def _errors(raw: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(raw, CATALOG)
    return {field: " ".join(msgs) for field, msgs in info.value.field_errors.items()}


# ---------------------------------------------------------------------------------- input


def test_an_empty_rag_section_takes_every_default_and_round_trips() -> None:
    s = parse_scenario(RAG_70B, CATALOG)
    assert s.rag == RagInput()
    echoed = scenario_echo(s).to_dict()
    assert echoed["rag"] == {
        "top_k": 4,
        "chunk_tokens": 256,
        "embedding_dims": 1024,
        "corpus_chunks": 10_000_000,
    }
    assert parse_scenario(echoed, CATALOG) == s


def test_a_scenario_without_rag_has_none() -> None:
    s = parse_scenario(SERVING_70B, CATALOG)
    assert s.rag is None
    assert "rag" not in scenario_echo(s).to_dict()


@pytest.mark.parametrize(
    ("rag", "field", "words"),
    [
        ({"top_k": 0}, "rag.top_k", "positive integer"),
        ({"chunk_tokens": "long"}, "rag.chunk_tokens", "positive integer"),
        ({"embedding_dims": 1.5}, "rag.embedding_dims", "positive integer"),
        ({"corpus_chunks": 1e13}, "rag.corpus_chunks", "<="),
        ({"vector_search_servers": -2}, "rag.vector_search_servers", "positive integer"),
        ({"rerank": True}, "rag.rerank", "unknown field"),
        ({"top_k": 8, "chunk_tokens": 512}, "rag.top_k", "inference.prompt_tokens"),
    ],
)
def test_bad_rag_input_names_the_field(rag: dict[str, Any], field: str, words: str) -> None:
    errors = _errors({**SERVING_70B, "rag": rag})
    assert field in errors, errors
    assert words in errors[field]


def test_rag_is_refused_for_training_naming_rag() -> None:
    errors = _errors({**SERVING_70B, "workload": "training", "inference": None, "rag": {}})
    assert "inference" in errors["rag"]


def test_rag_must_be_an_object() -> None:
    assert "object" in _errors({**SERVING_70B, "rag": [4, 256]})["rag"]


# ---------------------------------------------------------------------------------- model


def test_index_memory_is_the_published_hnsw_formula() -> None:
    rag = RagInput(embedding_dims=768, corpus_chunks=1_000_000)
    expected = 1e6 * (768 * EMBEDDING_BYTES_PER_DIM + HNSW_LINKS * HNSW_BYTES_PER_LINK)
    assert index_bytes(rag) == pytest.approx(expected * VECTOR_INDEX_MEMORY_HEADROOM)


def test_a_closed_loop_asks_the_rate_its_users_settle_at_on_the_fleet() -> None:
    """100 users on Llama 3 70B (16 H100): the retrieval tiers were sized by Little's law at the
    latency targets (100 / (2 s + 500 x 50 ms) = 3.7 questions/s) while the answer's first
    screen and headroom read the rate the load model's closed loop settles at (9.0: the fleet
    answers faster than the targets); both now read that one."""
    raw = {**RAG_70B, "inference": {"concurrent_requests": 100, "output_tokens": 500}}
    result = evaluate(raw)
    rag, asked = result["rag"], result["metrics"]["requests_per_s"]
    assert rag["queries_per_s"] == pytest.approx(asked)
    assert asked > 2 * 100 / (2.0 + 500 * 0.050)
    assert "Little's law" in rag["rate_basis"]
    assert result["recommendation"]["headline"].startswith(f"RAG pipeline at {asked:.2g}")
    s = parse_scenario(raw, CATALOG)
    assert s.inference is not None
    with pytest.raises(ValueError, match="offered load"):
        query_rate(s.inference, None)


def test_a_closed_loop_beyond_the_fleet_asks_no_more_than_it_serves() -> None:
    """100,000 users with 0.01 ms first-token targets asked 19.5 million questions/s of the
    retrieval tiers (17,234 servers) by Little's law at the targets; the closed loop settles at
    what the generation fleet serves, and the tiers are sized for that."""
    inference = {"concurrent_requests": 100_000, "output_tokens": 500, "target_ms_per_token": 20}
    result = evaluate({**RAG_70B, "inference": {**inference, "target_ttft_ms": 0.01}})
    assert result["rag"]["queries_per_s"] == pytest.approx(result["metrics"]["requests_per_s"])
    assert result["rag"]["queries_per_s"] < 1_000
    retrieval = [t for t in result["rag"]["tiers"] if t["role"] != "generation"]
    assert sum(t["servers"] for t in retrieval) <= 4


def test_flows_carry_the_question_vector_chunks_and_answer_bytes() -> None:
    plan = plan_rag(parse_scenario(RAG_70B, CATALOG), None)
    flows = {f.name: f for f in plan.flows}
    assert flows["query vector"].bytes_per_query == 1024 * EMBEDDING_BYTES_PER_DIM
    assert flows["retrieved chunks"].bytes_per_query == 4 * 256 * TEXT_BYTES_PER_TOKEN
    assert flows["question"].bytes_per_query == (2048 - 1024) * TEXT_BYTES_PER_TOKEN
    assert flows["answer"].bytes_per_query == 512 * TEXT_BYTES_PER_TOKEN
    for flow in plan.flows:
        assert flow.gbits_per_s == pytest.approx(5 * flow.bytes_per_query * 8 / 1e9)


def test_vector_tier_grows_with_the_index_and_the_load() -> None:
    small = plan_rag(parse_scenario(RAG_70B, CATALOG), None).tier("vector_search").servers
    big_corpus = {**RAG_70B, "rag": {"corpus_chunks": 1_000_000_000}}
    shards = math.ceil(index_bytes(RagInput(corpus_chunks=10**9)) / VECTOR_SERVER_MEMORY_BYTES)
    assert plan_rag(parse_scenario(big_corpus, CATALOG), None).tier("vector_search").servers == (
        shards * small
    )
    busy = {**RAG_70B, "inference": {"requests_per_s": 30_000}}
    assert plan_rag(parse_scenario(busy, CATALOG), None).tier("vector_search").servers > small
    assert small == 2  # one shard, N+1 replicas


def test_given_tier_sizes_are_kept() -> None:
    raw = {**RAG_70B, "rag": {"embedding_servers": 3, "vector_search_servers": 7}}
    plan = plan_rag(parse_scenario(raw, CATALOG), None)
    assert (plan.tier("embedding").servers, plan.tier("vector_search").servers) == (3, 7)
    assert plan.retrieval_servers == 10


def test_a_faster_tier_link_is_never_slower() -> None:
    plan = plan_rag(parse_scenario(RAG_70B, CATALOG), None)
    times = [network_s(plan, gbps) for gbps in (1, 10, 25, 100, 400)]
    assert times == sorted(times, reverse=True)
    assert all(t > 0 for t in times)


def test_the_tier_nic_is_the_slowest_port_that_carries_the_busiest_server_twice() -> None:
    parts = NetworkParts()
    assert tier_nic(parts, 0.01).port_gbps == 25
    assert tier_nic(parts, 20.0).port_gbps == 100  # 2 x 20 Gb/s does not fit a 25G port


def test_each_leaf_uplinks_its_own_servers_share_of_the_traffic() -> None:
    """Questions of 1M tokens at 100,000 a second: the tiers move 6.4 Tb/s.  Each leaf
    uplinked the whole traffic (128 x 100G against a 32-port top-of-rack switch), so no port
    was left for a server and the answer was a BomError, not an answer; each leaf now uplinks
    its own servers' share, and one leaf pair still carries the whole traffic."""
    heavy = {
        "workload": "inference",
        "model": "gpt-oss-120b",
        "gpu": "h100-sxm",
        "gpus": 144,
        "inference": {"requests_per_s": 100_000, "prompt_tokens": 1_000_000},
        "rag": {},
    }
    scenario = parse_scenario(heavy, CATALOG)
    net = tier_network(NetworkParts(), scenario, plan_workload(scenario))
    plan = net.plan
    radix = net.switch.radix_at(net.gbps) or 0
    pairs = net.leaves // 2
    per_leaf = math.ceil(plan.retrieval_servers / pairs)
    assert per_leaf + net.uplinks_per_leaf * (net.uplink_gbps // net.gbps) <= radix
    share = sum(f.gbits_per_s for f in plan.flows) * 2 * per_leaf / plan.retrieval_servers
    assert net.uplinks_per_leaf * net.uplink_gbps >= share
    assert "RAG pipeline at 100,000.0 questions/s" in evaluate(heavy)["recommendation"]["headline"]
    # a single leaf pair: its uplinks carry the whole traffic, as before
    light_scenario = parse_scenario(RAG_70B, CATALOG)
    light = tier_network(NetworkParts(), light_scenario, plan_workload(light_scenario))
    assert light.leaves == 2 and light.uplinks_per_leaf == 2
    # no server's share fits a leaf's uplinks: no shape, which tier_network refuses by field
    assert _leaf_shape(plan, radix=4, nic_gbps=100, uplink_gbps=400) == (0, 0)


# ---------------------------------------------------------------------------------- answer


def test_a_rag_pipeline_gets_its_own_answer() -> None:
    r = _answer("rag")
    rec = r["recommendation"]
    assert rec["headline"].startswith("RAG pipeline at 5.0 questions/s: 2 x 25G Ethernet")
    assert rec["rationale"][0].startswith("Retrieval tiers on ordinary low-latency Ethernet")
    assert rec["needs_compute_fabric"] is False
    rag = r["rag"]
    assert [t["role"] for t in rag["tiers"]] == ["embedding", "vector_search", "generation"]
    assert rag["network"]["port_gbps"] == 25
    assert rag["compute_fabric"] is False
    assert rag["meets_target"] is True
    assert rag["first_token_ms"] == pytest.approx(rag["retrieval_ms"] + r["metrics"]["ttft_ms_p95"])
    # customer-facing words: display names and part numbers, never catalog ids
    text = " ".join([rec["headline"], *rag["statements"]])
    assert "MCX631102AN-ADAT" in text and "MSN2700-CS2F" in text
    assert "cx6lx-25g" not in text and "tor-100g-32" not in text


def test_retrieval_that_pushes_the_first_token_over_its_target_is_said_in_the_headline() -> None:
    tight = {**SERVING_70B, "inference": {"requests_per_s": 5, "target_ttft_ms": 195}, "rag": {}}
    r = evaluate(tight)
    rag = r["rag"]
    assert r["metrics"]["meets_latency_targets"] is True  # the generation tier alone meets it
    assert rag["meets_target"] is False
    assert rag["first_token_ms"] > 195 > rag["generation_ttft_ms"]
    assert r["recommendation"]["headline"].endswith(
        f"With retrieval the first token comes after {rag['first_token_ms']:,.0f} ms, over the "
        "195 ms target."
    )


def test_the_tier_network_is_in_the_bom_and_the_capex() -> None:
    r = _answer("rag")
    tier = [ln for ln in r["bom"] if ln["network"] == "retrieval"]
    skus = {ln["sku"]: ln["quantity"] for ln in tier}
    assert skus["cx6lx-25g"] == 4  # 2 embedding + 2 vector-search servers, one adapter each
    assert skus["tor-100g-32"] == 2  # dual-homed: two leaves
    assert sum(ln["extended_price_usd"] for ln in tier) == pytest.approx(
        r["rag"]["network"]["capex_usd"]
    )
    assert check_bom(r["bom"]) == []
    assert sum(ln["extended_price_usd"] for ln in r["bom"]) == pytest.approx(
        r["cost"]["network_capex_usd"]
    )


def test_the_generation_tier_is_answered_as_the_same_fleet_without_retrieval() -> None:
    rag, serving = _answer("rag"), _answer("serving")
    assert rag["metrics"] == serving["metrics"]
    assert rag["recommendation"]["fabric"] == serving["recommendation"]["fabric"]
    assert rag["cost"]["network_capex_usd"] == pytest.approx(
        serving["cost"]["network_capex_usd"] + rag["rag"]["network"]["capex_usd"]
    )
    generation = serving["recommendation"]["headline"]
    assert generation.startswith("No GPU compute fabric needed")
    assert f"generation tier: n{generation[1:]}" in rag["recommendation"]["headline"]


def test_a_model_split_across_servers_gets_a_compute_fabric_and_the_tiers_stay_ethernet() -> None:
    r = _answer("rag-405b")
    assert r["recommendation"]["needs_compute_fabric"] is True
    assert r["rag"]["compute_fabric"] is True
    assert "GPU compute fabric of its own" in r["rag"]["statements"][-1]
    tier_nics = {ln["sku"] for ln in r["bom"] if ln["network"] == "retrieval"}
    assert "cx6lx-25g" in tier_nics
    assert check_bom(r["bom"]) == []


def test_the_typed_result_reads_the_rag_record() -> None:
    r = _answer("rag")
    typed = EngineResult.from_dict(r)
    assert typed.to_dict() == r
    assert typed.rag is not None and typed.rag.network.nic_part_number == "MCX631102AN-ADAT"
    assert typed.scenario.rag is not None and typed.scenario.rag.top_k == 4
    assert EngineResult.from_dict(_answer("serving")).rag is None


# ---------------------------------------------------------------------------------- audit


def test_the_audit_finds_nothing_wrong_with_a_rag_answer() -> None:
    from advisor.engine.tools.audit import rag_violations

    assert rag_violations("case", _typed("rag")) == []
    assert rag_violations("case", _typed("rag-405b")) == []
    assert rag_violations("case", _typed("serving")) == []  # no pipeline, nothing to check


def test_the_audit_catches_an_unnamed_pipeline_a_needless_fabric_and_an_unpriced_tier() -> None:
    from dataclasses import replace

    from advisor.engine.tools.audit import rag_violations

    def props(result: EngineResult) -> set[str]:
        return {v.prop for v in rag_violations("case", result)}

    answer = _typed("rag")
    assert answer.rag is not None
    rec = answer.recommendation
    unnamed = replace(answer, recommendation=replace(rec, headline="No GPU compute fabric needed."))
    assert props(unnamed) == {"rag-unnamed"}
    needless = replace(answer, recommendation=replace(rec, needs_compute_fabric=True))
    assert props(needless) == {"rag-fabric-without-split"}
    silent = replace(answer, rag=replace(answer.rag, meets_target=False))
    assert props(silent) == {"rag-silent"}
    unpriced = replace(answer, bom=tuple(ln for ln in answer.bom if ln.network != "retrieval"))
    assert props(unpriced) == {"rag-tier-network"}


def test_a_sweep_or_what_if_point_prices_the_tier_network_as_the_answer_does() -> None:
    from advisor.engine.tools.sweep import evaluate_points

    axes: dict[str, list[Any]] = {
        "servers": [2, 4],
        "fabric": ["roce"],
        "nic_gbps": [400],
        "nics_per_node": [8],
        "oversubscription": [1.0],
    }
    with_rag, _ = evaluate_points(RAG_70B, axes, 0, 2, catalog=CATALOG)
    without, _ = evaluate_points(SERVING_70B, axes, 0, 2, catalog=CATALOG)
    for a, b in zip(with_rag, without, strict=True):
        assert a.network_capex_usd is not None and b.network_capex_usd is not None
        assert a.network_capex_usd - b.network_capex_usd == pytest.approx(
            _answer("rag")["rag"]["network"]["capex_usd"], abs=1.0
        )
        assert a.metrics == b.metrics  # the generation tier is the same fleet


def test_given_tiers_too_small_for_the_load_are_said_with_what_would_carry_it() -> None:
    raw = {
        **RAG_70B,
        "inference": {"requests_per_s": 10_000},
        "rag": {"embedding_servers": 1, "vector_search_servers": 3},
    }
    r = evaluate(raw)
    head = r["recommendation"]["headline"]
    assert (
        "Retrieval tiers fall short: 1 embedding tier server where 3 carry 10,000.0 "
        "questions/s; 3 vector-search tier servers where 7 carry 10,000.0 questions/s." in head
    )
    tiers = {t["role"]: t for t in r["rag"]["tiers"]}
    assert (tiers["embedding"]["servers"], tiers["embedding"]["needed_servers"]) == (1, 3)
    assert EngineResult.from_dict(r).to_dict() == r
    # the engine's own sizing never falls short
    assert "fall short" not in _answer("rag")["recommendation"]["headline"]
