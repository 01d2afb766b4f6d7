"""Late-2026 hardware and the fabrics architects build with it (issue: B300, GB300 NVL72,
MI355X; even spines; multi-plane and three-tier fabrics at 100k GPUs; premiums; budget cut
order; platform checks; converged storage).

Assertions are design facts from the published references (docs/MODEL.md "Late-2026
hardware"), never fitted numbers.
"""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import evaluate
from advisor.engine.decision.bom import NetworkParts, StorageSpec, check_bom, storage_plan
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.topology import even_spines, size_topology

CATALOG = default_catalog()
PARTS = NetworkParts.from_catalog(CATALOG)


def train(gpu: str, gpus: int, model: str = "llama3-70b", **constraints: Any) -> dict[str, Any]:
    return {
        "workload": "training",
        "model": model,
        "gpu": gpu,
        "gpus": gpus,
        "training": {"total_tokens": 1e12},
        "constraints": constraints,
    }


# ------------------------------------------------------------------------------ catalog


@pytest.mark.parametrize(
    ("gpu_id", "nic", "count", "per_node"),
    [("b300", "cx8-800g", 8, 8), ("gb300-nvl72", "cx8-800g", 4, 4), ("mi355x", "uec-400g", 8, 8)],
)
def test_new_platforms_carry_their_published_nics(
    gpu_id: str, nic: str, count: int, per_node: int
) -> None:
    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    assert gpu.reference_nic_sku == nic and gpu.reference_nic_count == count
    assert gpu.gpus_per_server == per_node
    assert dict(gpu.sources).get("platform")
    assert gpu.memory_gb == 288.0  # DGX B300, GB300 NVL72 and MI355X datasheets


@pytest.mark.parametrize(
    "model_id",
    [
        "llama4-scout",
        "llama4-maverick",
        "qwen3-235b-a22b",
        "qwen3-30b-a3b",
        "gpt-oss-120b",
        "gpt-oss-20b",
        "deepseek-r1",
        "deepseek-v3.1",
        "kimi-k2",
    ],
)
def test_current_open_models_are_presets_with_their_moe_shape(model_id: str) -> None:
    model = CATALOG.model(model_id)
    assert model is not None and model.is_moe
    assert 0 < model.active_params_b < model.params_b
    assert "config.json" in model.source


def test_connectx8_in_ethernet_mode_is_two_400g_links_on_one_card() -> None:
    nic = PARTS.find("cx8-2x400g")
    assert nic.links == 2 and nic.port_gbps == 400  # type: ignore[union-attr]


# ----------------------------------------------------------------- new platforms answer


@pytest.mark.parametrize(
    ("gpu", "gpus", "links", "gbps"),
    [("b300", 576, (8, 16), (800, 400)), ("gb300-nvl72", 576, (4, 8), (800, 400))],
)
def test_blackwell_ultra_gets_800g_per_gpu(
    gpu: str, gpus: int, links: tuple[int, ...], gbps: tuple[int, ...]
) -> None:
    r = evaluate(train(gpu, gpus))
    rec = r["recommendation"]
    assert rec["fabric"] in ("infiniband", "roce")
    assert (rec["nics_per_node"], rec["nic_gbps"]) in set(zip(links, gbps, strict=True))
    assert rec["nic_sku"] in ("cx8-800g", "cx8-2x400g")
    assert rec["field_practice"]
    assert check_bom(r["bom"], PARTS) == []


def test_mi355x_gets_one_400g_ethernet_nic_per_gpu() -> None:
    r = evaluate(train("mi355x", 512))
    rec = r["recommendation"]
    assert rec["fabric"] == "roce" and rec["nics_per_node"] == 8 and rec["nic_gbps"] == 400
    assert check_bom(r["bom"], PARTS) == []


@pytest.mark.parametrize("gpu", ["b300", "gb300-nvl72", "mi355x"])
def test_new_platforms_serve_disaggregated_deepseek_r1(gpu: str) -> None:
    """DeepSeek-R1 disaggregated on 4 eight-GPU servers: its BF16 weights fit one server, so
    every prefill and decode expert group stays inside a server and only KV caches cross the
    network, sized for that stream (RDMA, or TCP where its transfer meets the targets); on two
    GB300 NVL72 racks each rack holds its own deployment, so the KV cache and the all-to-all
    stay on NVLink and no compute fabric is bought (docs/MODEL.md 15)."""
    r = evaluate(
        {
            "workload": "inference",
            "model": "deepseek-r1",
            "gpu": gpu,
            "gpus": 144 if gpu == "gb300-nvl72" else 32,
            "inference": {"deployment": "disaggregated"},
        }
    )
    if gpu == "gb300-nvl72":
        assert r["workload"]["serving"]["kv_inside_domain"] is True
        assert r["workload"]["serving"]["copies"] == 2
        assert r["recommendation"]["needs_compute_fabric"] is False
    else:
        pools = r["workload"]["serving"]["pools"]
        assert all(pool["ep"] <= 8 for pool in pools.values())
        assert r["recommendation"]["needs_compute_fabric"] is True
        assert r["metrics"]["meets_latency_targets"] is True
        assert r["metrics"]["max_requests_per_s_at_target"] > r["metrics"]["requests_per_s"]


def test_hopper_hosts_never_get_a_connectx8() -> None:
    """An 800G card (or 2 x 400G) is more than a PCIe Gen5 x16 slot carries."""
    r = evaluate(train("h100-sxm", 512, prefer="performance"))
    assert all(o["nic_sku"] not in ("cx8-800g", "cx8-2x400g") for o in r["options"])


# ----------------------------------------------------------------------- even spines


@pytest.mark.parametrize("servers", [32, 64, 97, 128, 160, 192, 224, 256])
def test_two_tier_spines_divide_every_leafs_uplinks(servers: int) -> None:
    topo = size_topology(servers * 8, 64, 1.0, rails=8)
    assert topo.tiers == 2
    assert topo.leaf_uplinks % topo.spine_switches == 0
    assert topo.links_per_leaf_spine * topo.spine_switches == topo.leaf_uplinks


def test_97_servers_get_16_spines_with_2_links_per_leaf() -> None:
    """Was 13 spines: 32 uplinks do not divide by 13, some leaf pairs got 75-87 %."""
    topo = size_topology(97 * 8, 64, 1.0, rails=8)
    assert (topo.spine_switches, topo.links_per_leaf_spine) == (16, 2)


def test_576_gb200_gpus_spread_evenly() -> None:
    topo = size_topology(144 * 4, 64, 1.0, rails=4)
    assert topo.leaf_uplinks % topo.spine_switches == 0


def test_even_spines_refuses_a_count_that_does_not_divide() -> None:
    assert even_spines((32, 32, 32), 32, 64) == 2
    assert even_spines((32,) * 64, 32, 64) == 32
    assert even_spines((32,) * 65, 32, 64) is None


def test_superpod_scalable_unit_counts_hold() -> None:
    for servers, spines in ((32, 4), (64, 8), (128, 16), (256, 32)):
        assert size_topology(servers * 8, 64, 1.0, rails=8).spine_switches == spines


# ------------------------------------------------------------- very large, tiers, planes


def test_planes_split_the_fabric_into_equal_independent_fat_trees() -> None:
    one = size_topology(12_500, 256, 1.0, rails=1)
    eight = size_topology(12_500 * 8, 256, 1.0, rails=8, planes=8)
    assert eight.planes == 8 and eight.tiers == one.tiers == 2
    assert eight.total_switches == 8 * one.total_switches


def test_100k_h100_gets_at_most_three_tiers_at_a_published_cost_per_gpu() -> None:
    """Published compute-fabric cost per 400G endpoint: $4.39k (two-tier multi-plane) to
    $7.5k (three-tier fat tree), DeepSeek ISCA'25; about $9k for 131k H100 on three-tier
    InfiniBand (docs/MODEL.md 20.3).  It was a four-tier fabric at $13,556 per GPU."""
    r = evaluate(train("h100-sxm", 100_000, model="llama3.1-405b"))
    topo = r["recommendation"]["topology"]
    assert topo["tiers"] <= 3
    assert r["recommendation"]["field_practice"]
    compute = sum(ln["extended_price_usd"] for ln in r["bom"] if ln["network"] == "compute")
    assert compute / 100_000 <= 9_000


def test_a_four_tier_fabric_is_a_departure() -> None:
    r = evaluate(train("h100-sxm", 100_000, model="llama3.1-405b"))
    for o in r["options"]:
        if o["tiers"] == 4:
            assert not o["field_practice"]


def test_257_servers_name_the_tier_cliff_and_the_size_that_avoids_it() -> None:
    r = evaluate(train("h100-sxm", 257 * 8, team_skills="infiniband"))
    rec = r["recommendation"]
    cliff = rec["topology"]["tier_cliff"]
    assert rec["topology"]["tiers"] == 3
    assert cliff["nearest_servers"] == 256 and cliff["nearest_tiers"] == 2
    assert cliff["fabric_usd_per_gpu"] > cliff["nearest_fabric_usd_per_gpu"]
    assert any(t.startswith("Tier cliff: 257 servers") for t in rec["rationale"])


# ------------------------------------------------------------------------- premiums


def test_a_dearer_pick_states_its_premium_in_dollars_and_percent() -> None:
    r = evaluate(train("h100-sxm", 100_000, model="llama3.1-405b"))
    dec = r["recommendation"]["decision"]
    best = r["options"][0]
    for prem in dec["premium_over"]:
        assert prem["life_pct"] > 100 * 0.05
    for o in r["options"][1:]:
        if o["feasible"] and not o["departures"] and o["why_not"]:
            dearer = best["cost"]["decision_cost_usd"] - o["cost"]["decision_cost_usd"]
            if dearer > 0.05 * best["cost"]["decision_cost_usd"]:
                assert "Tied" not in o["why_not"] and "%" in o["why_not"], o["why_not"]


# ----------------------------------------------------------------------- budget cuts


def test_ten_million_for_1024_h100_keeps_one_nic_per_gpu() -> None:
    r = evaluate(train("h100-sxm", 1024, network_budget_usd=10e6))
    rec = r["recommendation"]
    assert rec["within_budget"] and rec["nics_per_node"] == 8


def test_a_tighter_budget_cuts_storage_then_oversubscribes_before_dropping_nics() -> None:
    r = evaluate(train("h100-sxm", 1024, network_budget_usd=8e6))
    rec = r["recommendation"]
    assert rec["within_budget"] and rec["nics_per_node"] == 8
    assert rec["storage"]["ports_per_server"] == 1
    assert any("storage / in-band network is cut first" in t for t in rec["rationale"])


def test_fewer_nics_only_when_nothing_else_fits() -> None:
    r = evaluate(train("h100-sxm", 1024, network_budget_usd=6e6))
    rec = r["recommendation"]
    if rec["nics_per_node"] < 8:
        fits = [
            o
            for o in r["options"]
            if o["feasible"] and o["nics_per_node"] == 8 and o["nic_gbps"] >= 200
        ]
        assert not fits


# ------------------------------------------------------------------- platform checks


@pytest.mark.parametrize("per_node", [3, 16, 72])
def test_gpus_per_node_must_be_a_server_the_platform_is_built_as(per_node: int) -> None:
    with pytest.raises(ScenarioError) as err:
        evaluate({**train("h100-sxm", per_node * 4), "gpus_per_node": per_node})
    assert "4 or 8" in err.value.field_errors["gpus_per_node"][0]


def test_infiniband_on_gaudi3_is_refused_naming_the_field() -> None:
    scenario = {
        **train("gaudi3", 64),
        "design": {"fabric": "infiniband", "nic_gbps": 200, "nics_per_node": 24},
    }
    with pytest.raises(ScenarioError) as err:
        evaluate(scenario)
    assert "design.fabric" in err.value.field_errors


def test_an_800g_nic_in_a_pcie_gen5_host_is_refused() -> None:
    scenario = {**train("h100-sxm", 64), "design": {"fabric": "infiniband", "nic_gbps": 800}}
    with pytest.raises(ScenarioError) as err:
        evaluate(scenario)
    assert "Gen5" in err.value.field_errors["design.nic_gbps"][0]


def test_part_of_an_nvl72_rack_is_warned_with_the_nearest_whole_racks() -> None:
    r = evaluate(train("gb300-nvl72", 100))
    assert r["warnings"] and "72 or 144 GPUs" in r["warnings"][0]
    assert "warnings" not in evaluate(train("gb300-nvl72", 144))


# --------------------------------------------------------------------------- storage


def test_storage_is_converged_two_ports_per_server_by_default() -> None:
    spec = StorageSpec.for_gpu(CATALOG.gpu("h100-sxm"))
    plan = storage_plan(PARTS, nodes=32, spec=spec)
    assert plan.ports_per_server == 2 and plan.adapters_per_server == 2
    assert check_bom(list(plan.lines), PARTS) == []


def test_checkpoint_time_follows_the_stated_storage_write_rate() -> None:
    fast = evaluate(train("h100-sxm", 256))["recommendation"]["storage"]
    slow = evaluate(train("h100-sxm", 256, storage_write_gbytes_per_s=50))
    storage = slow["recommendation"]["storage"]
    assert storage["cluster_storage_gbytes_per_s"] == 50
    assert storage["checkpoint_write_s"] > fast["checkpoint_write_s"]
    assert "stated 50 GB/s" in storage["statement"]


@pytest.mark.parametrize(("gpu_id", "gpus"), [("b300", 256), ("gb300-nvl72", 288)])
def test_nics_that_ship_on_the_platform_are_not_bought_as_cards(gpu_id: str, gpus: int) -> None:
    """HGX / DGX B300 carries its ConnectX-8s on the GPU board and GB300 NVL72 on its compute
    trays' mezzanines: the quote lists them, at no price and without the PCIe card's part
    number (the page, PDF and CSV say so); the switches and optics around them are bought."""
    r = evaluate(train(gpu_id, gpus))
    rec = r["recommendation"]
    assert rec["nic_sku"] in ("cx8-800g", "cx8-2x400g")
    nics = [line for line in r["bom"] if line["role"] == "compute-nic"]
    assert len(nics) == 1 and nics[0]["quantity"] == gpus
    assert nics[0]["unit_price_usd"] == 0 and nics[0]["part_number"] == "comes with the servers"
    assert nics[0]["description"].endswith(", on the platform's own boards")
    assert any(line["role"] == "leaf" and line["unit_price_usd"] > 0 for line in r["bom"])
    # the BOM check takes the platform's own NICs at no price, and nothing else off its price
    assert check_bom(r["bom"]) == []
    leaf = next(i for i, line in enumerate(r["bom"]) if line["role"] == "leaf")
    cut = [dict(line) for line in r["bom"]]
    cut[leaf].update(unit_price_usd=0.0, extended_price_usd=0.0)
    assert any("is not the catalog's" in problem for problem in check_bom(cut))
    # the card itself keeps its price and part number for the platforms that buy it as a card
    card = PARTS.find(rec["nic_sku"])
    assert card.unit_price_usd > 0 and card.part_number == "900-9X81E-00EX-ST0"


def test_a_platform_with_nics_on_its_boards_is_offered_only_those() -> None:
    """On an H100 server the ConnectX-7s are cards a design buys; a B300 server's GPUs reach the
    fabric through the ConnectX-8 on their own board, so no other NIC is offered (budget cuts
    bought 1,152 ConnectX-7 cards for GB300 trays that have no slots for them)."""
    h100 = evaluate(train("h100-sxm", 256))
    line = next(x for x in h100["bom"] if x["role"] == "compute-nic")
    assert line["unit_price_usd"] > 0 and line["part_number"]
    from advisor.engine.decision.candidates import compute_nics
    from advisor.engine.decision.job_facts import platform_of

    gpu = CATALOG.gpu("b300")
    assert gpu is not None
    offered = {n.sku: n for n in compute_nics(PARTS, platform_of(gpu, PARTS, 8))}
    assert offered["cx8-800g"].unit_price_usd == 0 == offered["cx8-2x400g"].unit_price_usd
    assert set(offered) == {"cx8-800g", "cx8-2x400g"}
    cut = evaluate(train("gb300-nvl72", 1152, "llama3.1-405b", network_budget_usd=1e7))
    assert cut["recommendation"]["within_budget"]
    assert {o["nic_sku"] for o in cut["options"]} <= {"cx8-800g", "cx8-2x400g"}
    line = next(x for x in cut["bom"] if x["role"] == "compute-nic")
    assert line["unit_price_usd"] == 0
    assert any(p["design"].get("nic_sku") == "added NICs" for p in cut["pruned"])


def test_the_quote_tables_keep_the_on_board_words() -> None:
    """The BOM tables read a line's part number and description through fallbacks for stored
    results (the catalog's number when a line has none; the catalog's description when a line
    adds its old role): neither may turn a platform's own NIC back into the card."""
    from advisor.engine import evaluate_typed
    from advisor.reports.presenters import BomRow

    result = evaluate_typed(train("gb300-nvl72", 288))
    row = BomRow.of(next(line for line in result.bom if line.role == "compute-nic"))
    assert row.part_number == "comes with the servers" and row.unit_price_usd == 0
    assert row.description.endswith(", on the platform's own boards")
