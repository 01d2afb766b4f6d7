"""Decision logic of the recommendation with a stand-in performance model.

The stand-in makes step time fall with usable NIC bandwidth per server, so the tests pin the
decision rules (constraints, preferences, skills) independently of the real model; the
end-to-end decision table lives in test_recommend_decisions.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import pytest

from advisor.engine.catalog import default_catalog
from advisor.engine.recommend import Candidate, recommend

EFFICIENCY = {"ethernet": 0.5, "roce": 0.92, "infiniband": 0.95}


def fake_training(c: Candidate) -> Mapping[str, Any]:
    gbytes_per_s = c.nic_gbps / 8 * c.nics_per_node * EFFICIENCY[c.fabric]
    gbytes_per_s /= c.oversubscription**0.5
    comm_s = 150.0 / gbytes_per_s
    step = 1.0 + max(0.0, comm_s - 0.2)
    return {
        "step_time_s": step,
        "step_time_s_low": step * 0.95,
        "step_time_s_high": step * 1.1,
        "run_time_s": step * 200_000,
        "gpu_idle_fraction": (step - 1.0) / step,
        "scaling_efficiency": 1.0 / step,
    }


def fake_inference(c: Candidate) -> Mapping[str, Any]:
    latency_ms = {"ethernet": 30.0, "roce": 4.0, "infiniband": 3.0}[c.fabric]
    ms = 20.0 + latency_ms + 50.0 / (c.nic_gbps * c.nics_per_node / 100)
    return {"ms_per_token": ms, "ttft_ms": 10 * ms, "gpu_idle_fraction": (ms - 20) / ms}


def training(nodes: int = 128, **constraints: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    s = {
        "workload": "training",
        "gpus": nodes * 8,
        "gpus_per_node": 8,
        "training": {"total_tokens": 1e12},
        "gpu": {"id": "h100-sxm", "price_usd": 30_000.0, "power_w": 700.0},
        "constraints": {"gpu_pricing": "cloud", "gpu_hour_usd": 2.5, **constraints},
    }
    w = {
        "nodes": nodes,
        "gpus_per_node": 8,
        "spans_servers": nodes > 1,
        "needs_compute_fabric": nodes > 1,
        "plan": {"tp": 8, "pp": 1, "dp": nodes},
    }
    return s, w


def run(s: dict[str, Any], w: dict[str, Any], fake: Any = fake_training) -> dict[str, Any]:
    return recommend(s, w, default_catalog(), None, evaluator=fake)


def test_one_server_needs_no_compute_fabric() -> None:
    s, w = training(nodes=1)
    r = run(s, w)
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is False
    assert rec["fabric"] == "ethernet"
    assert {line["network"] for line in r["bom"]} == {"storage", "management"}
    assert "one server" in rec["rationale"][0]


def test_large_training_gets_an_rdma_fabric_with_a_nic_per_gpu() -> None:
    s, w = training()
    r = run(s, w)
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is True
    assert rec["fabric"] in ("roce", "infiniband")
    assert rec["nics_per_node"] == 8
    assert rec["topology"]["tiers"] >= 2
    assert any("GPU-hours" in sentence for sentence in rec["rationale"])


def test_budget_is_a_hard_constraint() -> None:
    s, w = training()
    unconstrained = run(s, w)
    budget = unconstrained["cost"]["network_capex_usd"] * 0.5
    s["constraints"]["network_budget_usd"] = budget
    r = run(s, w)
    assert r["cost"]["network_capex_usd"] <= budget
    assert any("budget" in sentence for sentence in r["recommendation"]["rationale"])
    for option in r["options"]:
        assert option["feasible"] == (option["cost"]["network_capex_usd"] <= budget)


def test_an_impossible_budget_yields_the_cheapest_network_and_says_so() -> None:
    s, w = training(network_budget_usd=1000.0)
    r = run(s, w)
    cheapest = min(o["cost"]["network_capex_usd"] for o in r["options"])
    assert r["cost"]["network_capex_usd"] == cheapest
    assert any("No design fits" in sentence for sentence in r["recommendation"]["rationale"])


def test_an_ethernet_team_pays_for_infiniband_skills() -> None:
    s, w = training(team_skills="ethernet")
    r = run(s, w)
    ib = [o for o in r["options"] if o["fabric"] == "infiniband"]
    assert all(o["cost"]["operations_cost_usd"] > 0 for o in ib)
    assert r["recommendation"]["fabric"] != "infiniband"


def test_prefer_performance_takes_the_fastest_design() -> None:
    s, w = training(prefer="performance")
    r = run(s, w)
    fastest = min(o["metrics"]["step_time_s"] for o in r["options"] if o["feasible"])
    assert r["metrics"]["step_time_s"] <= fastest * 1.01


def test_prefer_cost_takes_the_cheapest_total() -> None:
    s, w = training(prefer="cost")
    r = run(s, w)
    cheapest = min(o["cost"]["total_cost_usd"] for o in r["options"] if o["feasible"])
    assert r["cost"]["total_cost_usd"] == pytest.approx(cheapest)


def test_split_inference_meets_the_latency_target() -> None:
    s = {
        "workload": "inference",
        "gpus": 16,
        "gpus_per_node": 8,
        "inference": {"independent_replicas": False, "target_ms_per_token": 30.0},
        "gpu": {"id": "h100-sxm", "price_usd": 30_000.0, "power_w": 700.0},
        "constraints": {"gpu_pricing": "cloud", "gpu_hour_usd": 2.5},
    }
    w = {
        "nodes": 2,
        "gpus_per_node": 8,
        "spans_servers": True,
        "needs_compute_fabric": True,
        "plan": {"tp": 16, "pp": 1, "dp": 1},
    }
    r = run(s, w, fake_inference)
    assert r["recommendation"]["needs_compute_fabric"] is True
    assert r["metrics"]["ms_per_token"] <= 30.0
    assert r["recommendation"]["fabric"] != "ethernet"
    assert all(not o["feasible"] for o in r["options"] if o["fabric"] == "ethernet")
    assert "30 ms target" in r["recommendation"]["rationale"][0]


def test_result_is_json_safe_and_has_the_contract_keys() -> None:
    s, w = training()
    r = run(s, w)
    text = json.dumps(r, allow_nan=False)
    assert "NaN" not in text
    assert set(r) >= {
        "recommendation",
        "metrics",
        "bom",
        "cost",
        "options",
        "pruned",
        "break_even",
        "uncertainty",
        "monitoring",
        "assumptions",
        "scaling",
    }
    assert set(r["recommendation"]["topology"]) == {
        "kind",
        "tiers",
        "leaf_switches",
        "spine_switches",
        "core_switches",
        "oversubscription",
        "rail_optimized",
        "switch_model",
    }
    for option in r["options"]:
        assert {
            "rank",
            "fabric",
            "nic_gbps",
            "nics_per_node",
            "oversubscription",
            "switch_model",
            "feasible",
            "recommended",
            "metrics",
            "cost",
            "why_not",
        } <= set(option)
        assert (option["why_not"] is None) == option["recommended"]
    assert sum(o["recommended"] for o in r["options"]) == 1
    assert r["options"][0]["recommended"]
    for entry in r["assumptions"]:
        assert set(entry) == {"name", "value", "unit", "source"}
    assert r["uncertainty"]["step_time_s"]["low"] <= r["metrics"]["step_time_s"]
    assert r["uncertainty"]["total_cost_usd"]["low"] <= r["cost"]["total_cost_usd"]
    assert r["uncertainty"]["total_cost_usd"]["high"] >= r["cost"]["total_cost_usd"]


def test_bom_matches_the_recommended_topology() -> None:
    s, w = training()
    r = run(s, w)
    topo = r["recommendation"]["topology"]
    switches = sum(
        line["quantity"]
        for line in r["bom"]
        if line["network"] == "compute" and line["category"] == "switch"
    )
    assert switches == topo["leaf_switches"] + topo["spine_switches"] + topo["core_switches"]
    nics = sum(
        line["quantity"]
        for line in r["bom"]
        if line["network"] == "compute" and line["category"] == "nic"
    )
    assert nics == 128 * r["recommendation"]["nics_per_node"]
    capex = sum(line["extended_price_usd"] for line in r["bom"])
    assert capex == pytest.approx(r["cost"]["network_capex_usd"], rel=1e-6)


def test_progress_runs_from_zero_to_hundred() -> None:
    s, w = training()
    seen: list[int] = []
    recommend(s, w, default_catalog(), seen.append, evaluator=fake_training)
    assert seen[0] == 0 and seen[-1] == 100
    assert seen == sorted(seen)


def test_monitoring_names_the_fabric_specific_counters() -> None:
    s, w = training(team_skills="ethernet")
    r = run(s, w)
    text = " ".join(r["monitoring"])
    if r["recommendation"]["fabric"] == "roce":
        assert "PFC" in text and "ECN" in text
    assert "Symbol errors" in text or "SymbolError" in text
    assert math.isfinite(r["cost"]["total_cost_usd"])
