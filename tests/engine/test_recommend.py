"""Decision logic of the recommendation with a stand-in performance model.

The stand-in makes step time fall with usable NIC bandwidth per server, so the tests pin the
decision rules (field practice, constraints, preferences, skills, ties) independently of the
real model; the end-to-end decision table lives in test_recommend_decisions.py.  Inputs are
the engine's typed Scenario and WorkloadPlan.
"""

from __future__ import annotations

import json
from typing import Any

from advisor.engine.decision.bom import check_bom
from advisor.engine.decision.recommend import Candidate, recommend
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.result.records import Metrics

EFFICIENCY = {"ethernet": 0.5, "roce": 0.92, "infiniband": 0.95}
CAT = default_catalog()


def fake_training(c: Candidate) -> Metrics:
    gbytes_per_s = c.nic_gbps / 8 * c.nics_per_node * EFFICIENCY[c.fabric]
    gbytes_per_s /= c.oversubscription**0.5
    comm_s = 150.0 / gbytes_per_s
    step = 1.0 + max(0.0, comm_s - 0.2)
    return Metrics(
        step_time_s=step,
        step_time_s_low=step * 0.95,
        step_time_s_high=step * 1.1,
        run_time_s=step * 200_000,
        gpu_idle_fraction=(step - 1.0) / step,
        scaling_efficiency=1.0 / step,
    )


def fake_inference(c: Candidate) -> Metrics:
    latency_ms = {"ethernet": 30.0, "roce": 4.0, "infiniband": 3.0}[c.fabric]
    ms = 20.0 + latency_ms + 50.0 / (c.nic_gbps * c.nics_per_node / 100)
    return Metrics(ms_per_token=ms, ttft_ms=10 * ms, gpu_idle_fraction=(ms - 20) / ms)


def run(
    nodes: int = 128,
    fake: Any = fake_training,
    gpu: str = "h100-sxm",
    model: str = "llama3-70b",
    **constraints: Any,
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "workload": "training",
        "model": model,
        "gpu": gpu,
        "gpus": nodes * 8,
        "training": {"total_tokens": 1e12},
        "constraints": {"gpu_pricing": "cloud", "gpu_hour_usd": 2.5, **constraints},
    }
    s = parse_scenario(raw, CAT)
    return recommend(s, plan_workload(s), CAT, None, evaluator=fake).to_dict()


def inference(**constraints: Any) -> dict[str, Any]:
    raw = {
        "workload": "inference",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 16,
        "parallelism": {"tp": 16, "pp": 1},
        "inference": {"target_ms_per_token": 50},
        "constraints": constraints,
    }
    s = parse_scenario(raw, CAT)
    return recommend(s, plan_workload(s), CAT, None, evaluator=fake_inference).to_dict()


def test_one_server_needs_no_compute_fabric() -> None:
    r = run(nodes=1, model="llama3-8b")
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] is False
    assert rec["fabric"] == "ethernet"
    assert {line["network"] for line in r["bom"]} == {"storage", "management"}
    assert "one server" in rec["rationale"][0]
    assert check_bom(r["bom"]) == []


def test_training_gets_the_platform_reference_design_by_default() -> None:
    r = run()
    rec = r["recommendation"]
    assert rec["fabric"] in ("roce", "infiniband")
    assert rec["nics_per_node"] == 8 and rec["nic_gbps"] == 400
    assert rec["nic_sku"] in ("cx7-400g", "bf3-supernic-400g")  # the platform's NICs
    assert rec["topology"]["oversubscription"] == 1.0
    assert rec["topology"]["spine_switches"] >= 2
    assert rec["field_practice"] is True and rec["departures"] == []
    assert rec["reference_design"]["matches"] is True
    assert "DGX SuperPOD" in rec["reference_design"]["statement"]
    assert any(t.startswith("Reference design:") for t in rec["rationale"])
    assert check_bom(r["bom"]) == []


def test_oversubscription_only_when_asked_for_with_prefer_cost() -> None:
    default = run(prefer="cost")
    assert default["recommendation"]["field_practice"] is True
    asked = run(prefer="cost", allow_oversubscription=True)
    rec = asked["recommendation"]
    cheaper = [o for o in asked["options"] if o["feasible"] and not o["field_practice"]]
    assert cheaper  # priced alternatives exist, with their departures named
    assert all(o["departures"] for o in cheaper)
    assert rec["decision"]["mode"] == "cost_preference"
    if not rec["field_practice"]:
        assert rec["headline"].startswith("Cost-first alternative")
        assert asked["cost"]["decision_cost_usd"] <= default["cost"]["decision_cost_usd"] * 1.05


def test_alternatives_carry_their_risks() -> None:
    r = run()
    alt = next(o for o in r["options"] if o["feasible"] and not o["field_practice"])
    assert alt["why_not"].startswith("Departs from field practice")
    assert "Risks:" in alt["why_not"]


def test_budget_is_a_hard_constraint() -> None:
    base = run()
    reference_capex = base["cost"]["network_capex_usd"]
    r = run(network_budget_usd=0.8 * reference_capex)
    rec = r["recommendation"]
    assert r["cost"]["network_capex_usd"] <= 0.8 * reference_capex
    assert rec["within_budget"] is True
    assert rec["decision"]["mode"] in ("field_practice", "constraints_forced")
    if rec["decision"]["mode"] == "constraints_forced":
        assert rec["headline"].startswith("Only a departure from field practice fits the budget")


def test_an_impossible_budget_is_said_plainly() -> None:
    r = run(network_budget_usd=1000.0)
    rec = r["recommendation"]
    assert rec["within_budget"] is False
    assert rec["headline"].startswith("No design fits the $1,000 network budget")
    assert rec["rationale"][0] == rec["headline"]
    # the answer still meets the job's needs: RDMA, never plain TCP
    assert rec["fabric"] in ("roce", "infiniband")
    assert "least expensive design that meets the job's needs" in rec["headline"]
    assert rec["budget"]["network_budget_usd"] == 1000.0


def test_an_ethernet_team_pays_for_infiniband_skills() -> None:
    r = run(team_skills="ethernet")
    assert r["recommendation"]["fabric"] == "roce"
    ib = [o for o in r["options"] if o["fabric"] == "infiniband"]
    assert ib and all(o["cost"]["life"]["operations_usd"] > 0 for o in ib)


def test_life_cost_is_the_decision_cost_and_the_job_share_is_labelled() -> None:
    r = run()
    cost = r["cost"]
    life = cost["life"]
    parts = (
        life["network_capex_usd"]
        + life["network_power_usd"]
        + life["gpu_time_wasted_usd"]
        + life["operations_usd"]
    )
    assert abs(life["total_usd"] - parts) < 1.0
    assert cost["decision_cost_usd"] == life["total_usd"]
    assert life["network_capex_usd"] == cost["network_capex_usd"]
    assert life["utilization"] == 0.8
    share = cost["job_share"]
    assert share["total_usd"] == cost["total_cost_usd"]
    assert "carries" in share["note"] and "network capex" in share["note"]


def test_prefer_performance_takes_a_design_within_the_band_of_the_fastest() -> None:
    r = run(prefer="performance")
    fastest = min(o["metrics"]["step_time_s"] for o in r["options"] if o["feasible"])
    assert r["metrics"]["step_time_s"] <= fastest * 1.05


def test_split_inference_is_rdma_and_meets_the_latency_target() -> None:
    r = inference()
    rec = r["recommendation"]
    assert rec["fabric"] in ("roce", "infiniband")
    assert r["metrics"]["ms_per_token"] <= 50
    tcp = [o for o in r["options"] if o["fabric"] == "ethernet"]
    assert tcp and not any(o["feasible"] for o in tcp)
    assert any("needs RDMA" in o["why_not"] for o in tcp)


def test_result_is_json_safe_and_has_the_contract_keys() -> None:
    r = run()
    json.dumps(r, allow_nan=False)
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
    rec = r["recommendation"]
    assert set(rec) >= {
        "fabric",
        "needs_compute_fabric",
        "nic_gbps",
        "nics_per_node",
        "nic_sku",
        "topology",
        "headline",
        "rationale",
        "within_budget",
        "reference_design",
        "storage",
        "decision",
    }
    assert r["options"][0]["recommended"] is True
    assert sum(o["recommended"] for o in r["options"]) == 1
    assert rec["storage"]["checkpoint_write_s"] > 0


def test_rationale_never_compares_a_number_with_itself() -> None:
    import re

    for r in (run(), run(team_skills="ethernet"), run(prefer="performance"), inference()):
        for sentence in r["recommendation"]["rationale"]:
            for a, b in re.findall(
                r"(\$[\d.,]+[MK]?|[\d.]+ s/step) (?:vs|instead of) "
                r"(\$[\d.,]+[MK]?|[\d.]+ s/step)",
                sentence,
            ):
                assert a != b, sentence


def test_progress_runs_from_zero_to_hundred() -> None:
    seen: list[int] = []
    raw = {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256}
    s = parse_scenario(raw, CAT)
    recommend(s, plan_workload(s), CAT, seen.append, evaluator=fake_training)
    assert seen[0] == 0 and seen[-1] == 100
    assert seen == sorted(seen)


def test_monitoring_names_the_fabric_specific_counters() -> None:
    r = run(team_skills="ethernet")
    assert r["recommendation"]["fabric"] == "roce"
    text = " ".join(r["monitoring"])
    assert "PFC" in text and "ECN" in text


def test_gaudi3_scales_out_on_its_integrated_ports_without_added_nics() -> None:
    r = run(nodes=64, gpu="gaudi3")
    rec = r["recommendation"]
    assert rec["fabric"] == "roce"
    assert rec["nic_sku"] == "gaudi3-scaleout-200g"
    assert rec["nics_per_node"] == 24 and rec["nic_gbps"] == 200
    nic_lines = [ln for ln in r["bom"] if ln["role"] == "compute-nic"]
    assert all(ln["extended_price_usd"] == 0 for ln in nic_lines)
    assert check_bom(r["bom"]) == []
    assert any("no NICs are added" in p["reason"] for p in r["pruned"])


def test_sweep_points_follow_the_recommendation_candidate_rules() -> None:
    from advisor.engine.decision.bom import storage_plan
    from advisor.engine.decision.job_facts import job_facts
    from advisor.engine.decision.recommend import network_parts
    from advisor.engine.decision.search import design_point

    parts = network_parts(CAT)

    def point(gpu: str, **design: Any) -> tuple[Any, Any, float, float]:
        raw = {"workload": "training", "model": "llama3-70b", "gpu": gpu, "gpus": 256}
        s = parse_scenario(raw, CAT)
        facts = job_facts(s, plan_workload(s), CAT, parts)
        storage = storage_plan(parts, nodes=facts.nodes, spec=facts.platform.storage)
        return design_point(facts, parts, storage, **design)

    cand, reason, _, _ = point(
        "h100-sxm", fabric="roce", nic_gbps=800, nics_per_node=8, oversubscription=1.0
    )
    assert cand is None and reason is not None and "PCIe Gen5" in reason
    cand, reason, capex, _ = point(
        "h100-sxm", fabric="infiniband", nic_gbps=400, nics_per_node=8, oversubscription=1.0
    )
    assert cand is not None and reason is None and capex > 0
    assert cand.nic.sku == "cx7-400g"  # the platform's reference NIC, not another vendor's
    cand, reason, _, _ = point(
        "gaudi3", fabric="roce", nic_gbps=400, nics_per_node=8, oversubscription=1.0
    )
    assert cand is None and reason is not None and "integrated" in reason


def test_a_gpu_without_platform_facts_says_what_it_assumed() -> None:
    from advisor.engine.facts.catalog import Catalog

    raw = CAT.to_dict()
    h100 = next(g for g in raw["gpus"] if g["id"] == "h100-sxm")
    custom = {
        k: v
        for k, v in h100.items()
        if k
        not in (
            "host_pcie_gen",
            "reference_nic_sku",
            "reference_nic_count",
            "reference_fabric",
            "nic_options",
            "storage_nic_sku",
            "reference_design",
        )
    }
    custom["id"] = "staff-gpu"
    raw["gpus"].append(custom)
    cat = Catalog.from_dict(raw)
    s = parse_scenario(
        {"workload": "training", "model": "llama3-70b", "gpu": "staff-gpu", "gpus": 512}, cat
    )
    r = recommend(s, plan_workload(s), cat, None, evaluator=fake_training).to_dict()
    rec = r["recommendation"]
    assert rec["field_practice"] is True  # one 400G NIC per GPU, non-blocking, as on HGX
    pcie = next(a for a in r["assumptions"] if a["name"] == "host_pcie_gen")
    assert "not set" in pcie["source"] and "assumed" in pcie["source"]
    assert check_bom(r["bom"]) == []
