"""How a fabric is laid out for the hardware it carries: Gaudi 3's plies keep every OSFP whole
on one leaf (Intel Gaudi network configuration), and a multi-plane design is evaluated on the
tiers of one plane, not on the single fabric it replaces (docs/MODEL.md 20.3, 20.7).

Assertions are layout facts of the published references, never fitted numbers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from advisor.engine import _laid_out, evaluate, evaluate_typed
from advisor.engine.decision.bom import NetworkParts, check_bom, network_bom
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import DEFAULT_SWITCH_RADIX
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model.design_network import _fabric_for, design_fabric
from advisor.engine.model.placement import Communicator, place
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.topology import TopologyError, size_topology
from advisor.engine.tools.audit import whole_cage_violations

CATALOG = default_catalog()
PARTS = NetworkParts.from_catalog(CATALOG)
GAUDI3_PORTS = PARTS.find("gaudi3-scaleout-200g")


def train(gpu: str, gpus: int, **constraints: Any) -> dict[str, Any]:
    return {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": gpu,
        "gpus": gpus,
        "training": {"total_tokens": 1e12},
        "constraints": constraints,
    }


# ------------------------------------------------------------------------- Gaudi 3 plies


def test_gaudi3_links_form_three_plies_of_eight() -> None:
    """Intel: each card's 3 scale-out ports are 3 separate switch networks (plies); a server's
    24 x 200G come as 6 OSFPs of 4 x 200G, two OSFPs per ply."""
    assert GAUDI3_PORTS.rail_layout(24) == (3, 8)  # type: ignore[union-attr]


def test_a_gaudi3_ply_leaf_of_51t_holds_sixteen_servers() -> None:
    """51.2T leaf at 200G: 256 ports, 128 down at 1:1 = 16 servers x 8 links of one ply; three
    such leaves per 16 servers (Intel's Gaudi 3 sub-cluster: 16 nodes, 3 leaves with half of
    their 64 x 800G ports down)."""
    topo = size_topology(128 * 24, 256, 1.0, rails=3, links_per_rail=8)
    assert topo.leaf_servers == 16
    assert topo.leaf_switches == 3 * 128 // 16
    assert topo.placement_blocks()[0] == 16


@pytest.mark.parametrize("servers", [8, 16, 48, 128, 130, 512, 1024])
def test_every_gaudi3_leaf_takes_whole_osfps(servers: int) -> None:
    """No leaf's load splits a server's OSFP (4 links): every load is whole ply groups."""
    for radix in (256, 512):
        topo = size_topology(servers * 24, radix, 1.0, rails=3, links_per_rail=8, leaf_spine=True)
        assert topo.leaf_downlinks % 8 == 0
        assert topo.endpoint_leaf_links == servers * 24


def test_a_leaf_narrower_than_a_ply_group_is_refused() -> None:
    with pytest.raises(TopologyError, match="fewer ports down"):
        size_topology(64 * 24, 8, 1.0, rails=3, links_per_rail=8)


@pytest.mark.parametrize("gpus", [1024, 4096])
def test_gaudi3_bill_cables_whole_osfps_at_scale(gpus: int) -> None:
    """At >= 1,024 GPUs (one rail's servers fill a leaf) the recommendation's leaves take whole
    plies and the BOM's straight OSFP-to-cage links are what the topology needs."""
    r = evaluate(train("gaudi3", gpus))
    topo = r["recommendation"]["topology"]
    assert topo["tiers"] >= 2 and topo["leaf_downlinks"] % 8 == 0
    assert check_bom(r["bom"], PARTS) == []
    server_modules = sum(
        ln["quantity"]
        for ln in r["bom"]
        if ln["network"] == "compute"
        and ln["role"] == "server-link"
        and ln["category"] == "transceiver"
    )
    assert server_modules == 2 * 6 * gpus // 8  # one module per OSFP at each end
    assert any("ply" in line for line in r["recommendation"]["rationale"])


def test_gaudi3_network_bom_rebuilds_the_ply_topology() -> None:
    lines = network_bom(
        PARTS,
        nodes=128,
        fabric="roce",
        nic_sku="gaudi3-scaleout-200g",
        nics_per_node=24,
        switch_model="tomahawk6-128x800",
    )
    leaves = sum(ln.quantity for ln in lines if ln.role == "leaf")
    assert leaves == 3 * 128 // 32  # 256 ports down at 200G: 32 servers x 8 links per leaf


# ---------------------------------------------------------------- multi-plane hop counts


def test_a_multi_plane_design_is_placed_on_one_planes_tiers() -> None:
    """12,500 servers x 8 rails on 64-port switches: one fabric needs four tiers, eight
    planes of 12,500 ports three; a data-parallel ring across the whole job then crosses a
    plane's pod (5 switches), not a super-pod (7)."""
    one, _ = _fabric_for(12_500, 8, 8, 8, 64, 1.0)
    eight, _ = _fabric_for(12_500, 8, 8, 8, 64, 1.0, 8)
    dp = Communicator(kind="dp", pattern="ring", size=12_500, stride=8)
    assert place(dp, one).hops == 7
    assert place(dp, eight).hops == 5
    assert len(eight.blocks) < len(one.blocks)


def test_design_layout_fields_stay_out_of_a_scenarios_design() -> None:
    design = Design(fabric="roce", nic_gbps=400.0, nics_per_node=8)
    echoed = design.to_dict()
    assert "planes" not in echoed and "links_per_rail" not in echoed
    planes = Design(fabric="roce", nic_gbps=400.0, nics_per_node=8, planes=8)
    assert planes.to_dict()["planes"] == 8
    assert Design.from_dict(planes.to_dict()) == planes


def test_100k_h100_multi_plane_options_carry_their_own_step_time() -> None:
    """The same NICs and switch as one fabric and as planes: the plane design's messages
    cross fewer tiers, so its modelled step is never slower than the deeper single fabric."""
    r = evaluate(train("h100-sxm", 100_000))
    by_layout: dict[tuple[str, str, int], float] = {}
    for o in r["options"]:
        if o["oversubscription"] == 1.0 and o["nics_per_node"] == 8:
            key = (o["fabric"], o["switch_model"], o["planes"])
            by_layout.setdefault(key, o["metrics"]["step_time_s"])
    pairs = [
        (step, by_layout[(fabric, switch, 1)])
        for (fabric, switch, planes), step in by_layout.items()
        if planes > 1 and (fabric, switch, 1) in by_layout
    ]
    assert pairs
    assert all(planed <= single for planed, single in pairs)


# ------------------------------------------------------------------ tier rule by ports


@pytest.mark.parametrize(
    ("endpoints", "rails", "ratio", "tiers"),
    [
        (2048, 8, 1.0, 2),  # DGX SuperPOD 8 SU: 64 leaves, every spine one port per leaf
        (2056, 8, 1.0, 3),  # 257 servers: 72 leaves > k, three tiers
        (3072, 1, 3.0, 2),  # 3:1 leaves keep 48 ports down: k x d = 64 x 48
        (3073, 1, 3.0, 3),
        (65_536, 1, 1.0, 3),  # k x k/2 x k/2
        (65_537, 1, 1.0, 4),
    ],
)
def test_tiers_follow_the_non_blocking_port_arithmetic(
    endpoints: int, rails: int, ratio: float, tiers: int
) -> None:
    """Two tiers while leaves <= k and spines spread evenly, three while pods of k/2 leaves
    fit k pods, then the 4-tree (docs/MODEL.md 11, "Tier rule")."""
    topo = size_topology(endpoints, 64, ratio, rails=rails)
    assert topo.tiers == tiers
    assert endpoints <= topo.max_endpoints


def test_three_tier_pods_spread_evenly_over_their_spines() -> None:
    topo = size_topology(4096 * 8, 64, 1.0, rails=8)
    assert topo.tiers == 3
    # a full leaf of a full pod: 32 uplinks, one to each of its pod's 32 spines
    assert (topo.leaf_uplinks, topo.links_per_leaf_spine) == (32, 1)
    assert topo.spine_switches == topo.leaf_switches  # spines = leaves in a full fat tree


def test_the_audit_catches_a_leaf_that_splits_a_gaudi3_osfp() -> None:
    result = evaluate_typed(train("gaudi3", 1024))
    assert whole_cage_violations("gaudi3 1024", result) == []
    rec = result.recommendation
    split = dataclasses.replace(
        result,
        recommendation=dataclasses.replace(
            rec, topology=dataclasses.replace(rec.topology, leaf_downlinks=130)
        ),
    )
    found = whole_cage_violations("gaudi3 split", split)
    assert [v.prop for v in found] == ["whole-cages"]


def test_a_given_gaudi3_design_is_placed_in_plies_like_the_recommendation() -> None:
    """The scenario's own 24 x 200G RoCE design is laid out in Intel's plies for the
    performance model: a leaf holds servers' 8-link ply groups, not one link per server."""
    scenario = parse_scenario(
        {
            **train("gaudi3", 1024),
            "design": {"fabric": "roce", "nic_gbps": 200, "nics_per_node": 24},
        },
        CATALOG,
    )
    laid = _laid_out(scenario, CATALOG)
    assert laid.links_per_rail == 8 and scenario.design is not None
    assert scenario.design.links_per_rail == 1  # the scenario itself is unchanged
    workload = plan_workload(scenario)
    radix = DEFAULT_SWITCH_RADIX
    leaf_servers = (radix // 2) // 8
    assert design_fabric(scenario, workload, laid).servers_per_block[0] == leaf_servers
    r = evaluate(
        {
            **train("gaudi3", 1024),
            "design": {"fabric": "roce", "nic_gbps": 200, "nics_per_node": 24},
        }
    )
    assert "links_per_rail" not in r["design_evaluation"]["design"]
