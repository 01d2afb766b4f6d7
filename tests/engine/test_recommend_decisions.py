"""The decision table of issue 4, end to end through ``advisor.engine.evaluate``.

Each row is a situation whose answer a network architect would agree with (DOMAIN.md §1);
each test asserts the decision and that the rationale quotes the number that drove it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor.engine import evaluate

PRETRAIN: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 1024,
    "training": {"total_tokens": 1e12},
}


def _rationale(result: dict[str, Any]) -> str:
    return " ".join(result["recommendation"]["rationale"])


def _money(x: float) -> str:
    return f"${x / 1e6:,.2f}M" if x >= 1e6 else f"${x:,.0f}"


@pytest.fixture(scope="module")
def pretraining() -> dict[str, Any]:
    return evaluate(PRETRAIN)


def test_single_node_fine_tuning_needs_no_compute_fabric() -> None:
    r = evaluate({"workload": "fine_tuning", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8})
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is False
    assert rec["fabric"] == "ethernet"
    assert "one server (8 GPUs" in _rationale(r)
    assert {line["network"] for line in r["bom"]} == {"storage", "management"}
    assert r["break_even"][0]["parameter"] == "gpus_per_job"
    assert r["break_even"][0]["value"] == 8


def test_independent_inference_replicas_need_no_compute_fabric() -> None:
    r = evaluate(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 64,
            "inference": {"independent_replicas": True},
        }
    )
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is False
    assert rec["fabric"] == "ethernet"
    assert "8 servers serve requests independently" in _rationale(r)
    # the front-end / storage network is still sized for all eight servers
    nics = sum(ln["quantity"] for ln in r["bom"] if ln["category"] == "nic")
    assert nics == 8


def test_a_model_too_big_for_one_server_gets_a_low_latency_fabric() -> None:
    r = evaluate({"workload": "inference", "model": "llama3.1-405b", "gpu": "h100-sxm", "gpus": 16})
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is True
    assert rec["fabric"] in ("roce", "infiniband")
    ms = r["metrics"]["ms_per_token"]
    assert f"{ms:.1f} ms per token" in _rationale(r)
    cost = r["cost"]["total_cost_usd"]
    tcp = [o for o in r["options"] if o["fabric"] == "ethernet"]
    assert all(
        o["metrics"]["ms_per_token"] > ms for o in tcp if o["cost"]["total_cost_usd"] <= cost
    )


def test_tensor_parallel_across_servers_rules_out_tcp_by_the_latency_target() -> None:
    r = evaluate(
        {
            "workload": "inference",
            "model": "llama3.1-405b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "parallelism": {"tp": 16, "pp": 1},
            "inference": {"target_ms_per_token": 50},
        }
    )
    rec = r["recommendation"]
    assert rec["fabric"] in ("roce", "infiniband")
    assert r["metrics"]["ms_per_token"] <= 50
    tcp = [o for o in r["options"] if o["fabric"] == "ethernet"]
    assert tcp and not any(o["feasible"] for o in tcp)
    best_tcp = min(o["metrics"]["ms_per_token"] for o in tcp)
    assert f"{best_tcp:.1f} ms per token misses the 50 ms target" in _rationale(r)


def test_large_pretraining_gets_a_non_blocking_rdma_fabric(pretraining: dict[str, Any]) -> None:
    r = pretraining
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is True
    assert rec["fabric"] in ("roce", "infiniband")
    assert rec["topology"]["oversubscription"] == 1.0
    step = r["metrics"]["step_time_s"]
    text = _rationale(r)
    assert f"{step:.2f} s" in text
    assert f"{r['cost']['gpu_hours']:,.0f} GPU-hours" in text
    tcp = [o for o in r["options"] if o["fabric"] == "ethernet" and o["feasible"]]
    assert tcp and min(o["metrics"]["step_time_s"] for o in tcp) > step


def test_an_ethernet_only_team_is_not_handed_infiniband() -> None:
    r = evaluate({**PRETRAIN, "constraints": {"team_skills": "ethernet"}})
    rec = r["recommendation"]
    assert rec["fabric"] == "roce"
    ib = [o for o in r["options"] if o["fabric"] == "infiniband" and o["feasible"]]
    cheapest_ib = min(ib, key=lambda o: o["cost"]["total_cost_usd"])
    ramp = cheapest_ib["cost"]["operations_cost_usd"]
    assert ramp > 0
    assert _money(ramp) in _rationale(r)


def test_a_tight_budget_is_never_exceeded_when_a_design_fits(
    pretraining: dict[str, Any],
) -> None:
    budget = 0.5 * pretraining["cost"]["network_capex_usd"]
    budget = max(budget, 1.2 * min(o["cost"]["network_capex_usd"] for o in pretraining["options"]))
    r = evaluate({**PRETRAIN, "constraints": {"network_budget_usd": budget}})
    assert r["cost"]["network_capex_usd"] <= budget
    assert _money(budget) in _rationale(r)
    assert r["recommendation"]["needs_compute_fabric"] is True
    over = [o for o in r["options"] if o["cost"]["network_capex_usd"] > budget]
    assert over and not any(o["feasible"] for o in over)


def test_the_result_is_json_and_every_price_is_in_the_catalog(
    pretraining: dict[str, Any],
) -> None:
    from advisor.engine.catalog import default_catalog

    json.dumps(pretraining, allow_nan=False)
    cat = default_catalog()
    prices = {
        i.sku: i.unit_price_usd for i in (*cat.nics, *cat.switches, *cat.transceivers, *cat.cables)
    }
    for line in pretraining["bom"]:
        assert prices[line["sku"]] == line["unit_price_usd"]
    capex = sum(line["extended_price_usd"] for line in pretraining["bom"])
    assert capex == pytest.approx(pretraining["cost"]["network_capex_usd"])
    assert pretraining["scaling"]
    assert {p["fabric"] for p in pretraining["scaling"]} == {"ethernet", "roce", "infiniband"}
