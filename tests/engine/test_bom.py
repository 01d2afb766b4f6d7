from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.engine.decision.bom import (
    NetworkParts,
    StorageSpec,
    check_bom,
    compute_fabric_lines,
    compute_fabric_totals,
    line,
    management_lines,
    storage_lines,
    storage_topology,
    totals,
)
from advisor.engine.facts.catalog.network import Nic, Switch
from advisor.engine.model.topology import TopologyError, size_topology

PARTS = NetworkParts()


def _nic(sku: str) -> Nic:
    item = PARTS.find(sku)
    assert isinstance(item, Nic)
    return item


def _switch(sku: str) -> Switch:
    item = PARTS.find(sku)
    assert isinstance(item, Switch)
    return item


def _qty(lines: list, sku: str) -> int:  # type: ignore[type-arg]
    return sum(ln.quantity for ln in lines if ln.sku == sku)


def test_superpod_style_ndr_fabric_quantities_follow_the_topology() -> None:
    nodes, nics = 128, 8
    topo = size_topology(nodes * nics, 64, 1.0, rails=nics)
    lines = compute_fabric_lines(
        PARTS,
        fabric="infiniband",
        nic=_nic("cx7-400g"),
        nics_per_node=nics,
        nodes=nodes,
        switch=_switch("quantum2-qm9700"),
        topo=topo,
    )
    assert _qty(lines, "cx7-400g") == 1024
    assert _qty(lines, "quantum2-qm9700") == topo.total_switches == 48
    # One fiber per optical link; single-port optic at each NIC; twin-port optics at switches.
    links = topo.endpoint_leaf_links + topo.leaf_spine_links
    assert _qty(lines, "fiber-mpo-mmf") == links
    assert _qty(lines, "osfp-400g-sr4") == topo.endpoint_leaf_links
    switch_ends = topo.endpoint_leaf_links + 2 * topo.leaf_spine_links
    assert _qty(lines, "osfp-2x400g-sr8") == math.ceil(switch_ends / 2)
    assert all(ln.network == "compute" for ln in lines)


def test_servers_in_one_rack_on_one_switch_use_copper() -> None:
    topo = size_topology(4, 64, 1.0, rails=1)
    lines = compute_fabric_lines(
        PARTS,
        fabric="roce",
        nic=_nic("cx7-400g"),
        nics_per_node=1,
        nodes=4,
        switch=_switch("spectrum4-sn5600"),
        topo=topo,
    )
    # single-port OSFP NICs meet the switch's twin-port OSFP cages through 1-to-2 splitters
    assert _qty(lines, "dac-osfp-2x400g-split") == 2
    assert not [ln for ln in lines if ln.category == "transceiver"]


def test_every_bom_price_is_traceable_to_the_catalog() -> None:
    topo = size_topology(256, 128, 2.0, rails=4)
    lines = [
        *compute_fabric_lines(
            PARTS,
            fabric="roce",
            nic=_nic("bf3-supernic-400g"),
            nics_per_node=4,
            nodes=64,
            switch=_switch("spectrum4-sn5600"),
            topo=topo,
        ),
        *storage_lines(PARTS, nodes=64),
        *management_lines(PARTS, nodes=64, managed_switches=20),
    ]
    for ln in lines:
        item = PARTS.find(ln.sku)
        assert ln.unit_price_usd == item.unit_price_usd
        assert ln.source == item.source
        assert ln.category == item.category
        assert ln.part_number == item.part_number
        assert ln.extended_price_usd == pytest.approx(ln.quantity * item.unit_price_usd)
        assert ln.power_w == pytest.approx(ln.quantity * item.power_w)
        assert set(ln.to_dict()) == {
            "sku",
            "part_number",
            "description",
            "category",
            "quantity",
            "unit_price_usd",
            "extended_price_usd",
            "source",
            "network",
            "power_w",
            "role",
        }


def test_storage_network_is_separate_and_keeps_ports_for_targets_and_uplinks() -> None:
    lines = storage_lines(PARTS, nodes=64)
    topo, switch = storage_topology(PARTS, nodes=64)
    assert {ln.network for ln in lines} == {"storage"}
    assert _qty(lines, switch.sku) == topo.total_switches
    assert _qty(lines, "cx6dx-100g") == 64  # one dual-port card per server
    roles = {ln.role for ln in lines}
    assert {"server-link", "target-link", "core-uplink"} <= roles
    target_links = sum(ln.quantity for ln in lines if ln.role == "target-link")
    assert target_links == 64  # 128 server storage ports, targets at half their bandwidth
    assert check_bom(lines) == []


def test_platform_storage_adapters_are_used() -> None:
    from advisor.engine.facts.catalog import default_catalog

    gpu = default_catalog().gpu("b200")
    lines = storage_lines(PARTS, nodes=4, spec=StorageSpec.for_gpu(gpu))
    # DGX B200: two dual-port 400G BlueField-3 per server for storage and in-band
    assert _qty(lines, "bf3-dpu-2x400g") == 8
    assert check_bom(lines) == []


def test_one_rack_of_storage_uses_copper_to_a_single_switch() -> None:
    lines = storage_lines(PARTS, nodes=2)
    assert _qty(lines, "dac-100g-3m") == 4 + 2  # 4 server ports and 2 storage-target ports
    assert _qty(lines, "tor-100g-32") == 1


def test_management_network_has_an_aggregation_layer() -> None:
    lines = management_lines(PARTS, nodes=100, managed_switches=30)
    assert _qty(lines, "mgmt-1g-48") == 3
    assert sum(ln.quantity for ln in lines if ln.role == "aggregation") == 1
    assert _qty(lines, "cat6-3m") == 131  # servers, switches and the aggregation switch
    assert check_bom(lines) == []


def test_check_bom_finds_parts_that_do_not_plug_together() -> None:
    nic = _nic("cx7-400g")
    qm9700 = _switch("quantum2-qm9700")
    bad = [
        line(nic, 8, "compute", role="compute-nic"),
        line(qm9700, 1, "compute", role="leaf"),
        # QSFP56 200G AOCs cannot plug into OSFP NICs or a QM9700's twin-port OSFP cages
        line(PARTS.find("aoc-200g-30m"), 8, "compute", role="server-link"),
    ]
    problems = check_bom(bad)
    assert any("aoc-200g-30m" in p for p in problems)
    # a QSFP112 NIC with OSFP single-port optics
    bf3 = _nic("bf3-supernic-400g")
    sn5600 = _switch("spectrum4-sn5600")
    bad2 = [
        line(bf3, 2, "compute", role="compute-nic"),
        line(sn5600, 1, "compute", role="leaf"),
        line(PARTS.find("osfp-400g-sr4"), 2, "compute", role="server-link"),
        line(PARTS.find("osfp-2x400g-sr8"), 1, "compute", role="server-link"),
        line(PARTS.find("fiber-mpo-mmf"), 2, "compute", role="server-link"),
    ]
    assert any("osfp-400g-sr4" in p for p in check_bom(bad2))
    # the same links with QSFP112 optics at the NIC end are buildable
    good2 = [
        *bad2[:2],
        line(PARTS.find("qsfp112-400g-sr4"), 2, "compute", role="server-link"),
        *bad2[3:],
    ]
    assert check_bom(good2) == []


def test_check_bom_finds_missing_storage_reserves_and_aggregation() -> None:
    tor = _switch("tor-100g-32")
    storage = [
        line(_nic("cx6dx-100g"), 16, "storage", role="storage-nic"),
        line(tor, 1, "storage", role="storage-switch"),
        line(PARTS.find("dac-100g-3m"), 32, "storage", role="server-link"),
    ]
    problems = check_bom(storage)
    assert any("storage targets" in p for p in problems)
    assert any("uplinks" in p for p in problems)
    mgmt = [
        line(_switch("mgmt-1g-48"), 3, "management", role="oob-switch"),
        line(PARTS.find("cat6-3m"), 130, "management", role="mgmt-link"),
    ]
    assert any("aggregation" in p for p in check_bom(mgmt))
    assert any("SKU not in the catalog" in p for p in check_bom([{"sku": "nope", "quantity": 1}]))


@given(
    nodes=st.integers(min_value=1, max_value=600),
    nics=st.sampled_from([1, 2, 4, 8]),
    over=st.sampled_from([1.0, 2.0, 3.0]),
    sku=st.sampled_from(["quantum2-qm9700", "spectrum4-sn5600", "quantum-qm8700"]),
)
def test_totals_match_lines_and_are_never_negative(
    nodes: int, nics: int, over: float, sku: str
) -> None:
    switch = _switch(sku)
    nic = _nic("cx6-hdr-200g" if sku == "quantum-qm8700" else "cx7-400g")
    fabric = "roce" if switch.serves("roce") else "infiniband"
    radix = switch.radix_at(nic.port_gbps)
    assert radix
    try:
        topo = size_topology(nodes * nics, radix, over, rails=nics)
    except TopologyError:
        return
    kwargs = dict(fabric=fabric, nic=nic, nics_per_node=nics, nodes=nodes, switch=switch, topo=topo)
    lines = compute_fabric_lines(PARTS, **kwargs)  # type: ignore[arg-type]
    capex, power = totals(lines)
    fast_capex, fast_power = compute_fabric_totals(PARTS, **kwargs)  # type: ignore[arg-type]
    # the same cents-rounded lines added in the same order: equal to the last bit
    assert (capex, power) == (fast_capex, fast_power)
    assert capex > 0 and power > 0
    assert all(ln.quantity > 0 for ln in lines)


def test_network_bom_of_an_option_matches_its_capex() -> None:
    from advisor.engine import evaluate
    from advisor.engine.decision.bom import network_bom

    r = evaluate({"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256})
    from advisor.engine.facts.catalog import default_catalog

    spec = StorageSpec.for_gpu(default_catalog().gpu("h100-sxm"))
    assert check_bom(r["bom"]) == []
    for option in r["options"][:5]:
        lines = network_bom(
            PARTS,
            nodes=r["workload"]["nodes"],
            fabric=option["fabric"],
            nic_sku=option["nic_sku"],
            nics_per_node=option["nics_per_node"],
            switch_model=option["switch_model"],
            oversubscription=option["oversubscription"],
            storage=spec,
            # a leaf-spine priced where one switch would hold every NIC port
            leaf_spine=option["spine_switches"] > 0,
        )
        assert totals(lines)[0] == pytest.approx(option["cost"]["network_capex_usd"])
    recommended = [
        ln.to_dict()
        for ln in network_bom(
            PARTS,
            nodes=r["workload"]["nodes"],
            fabric=r["recommendation"]["fabric"],
            nic_sku=r["recommendation"]["nic_sku"],
            nics_per_node=r["recommendation"]["nics_per_node"],
            switch_model=r["recommendation"]["topology"]["switch_model"],
            oversubscription=r["recommendation"]["topology"]["oversubscription"],
            storage=spec,
        )
    ]
    assert recommended == r["bom"]


@pytest.mark.parametrize(
    ("fabric", "nic", "switch", "nodes"),
    [
        ("infiniband", "cx7-400g", "quantum2-qm9700", 1024),  # three tiers: leaf, spine and core
        ("roce", "bf3-supernic-400g", "spectrum4-sn5600", 64),
    ],
)
def test_a_bom_line_reads_the_catalogs_description_and_its_role_is_its_own_field(
    fabric: str, nic: str, switch: str, nodes: int
) -> None:
    from advisor.engine.decision.bom import network_bom
    from advisor.engine.facts.vocabulary import BOM_ROLE_LABELS

    lines = network_bom(
        PARTS,
        nodes=nodes,
        fabric=fabric,
        nic_sku=nic,
        nics_per_node=8,
        switch_model=switch,
    )
    roles = {ln.role for ln in lines}
    assert {"compute-nic", "leaf", "spine", "server-link", "storage-nic", "oob-switch"} <= roles
    for ln in lines:
        # the text customers read is the catalog's, never the line's purpose
        assert ln.description == PARTS.find(ln.sku).description, ln
        assert ln.role in BOM_ROLE_LABELS, ln.role
        assert not ln.description.endswith((" (leaf)", " (spine)", " (core)", "links)")), ln
