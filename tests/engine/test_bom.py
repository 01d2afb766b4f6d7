from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.engine.bom import (
    NetworkParts,
    compute_fabric_lines,
    compute_fabric_totals,
    management_lines,
    storage_lines,
    storage_topology,
    totals,
)
from advisor.engine.catalog.network import Nic, Switch
from advisor.engine.topology import TopologyError, size_topology, size_tor_fabric

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
    assert _qty(lines, "dac-400g-2m") == 4
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
        assert ln.extended_price_usd == pytest.approx(ln.quantity * item.unit_price_usd)
        assert ln.power_w == pytest.approx(ln.quantity * item.power_w)
        assert set(ln.to_dict()) == {
            "sku",
            "description",
            "category",
            "quantity",
            "unit_price_usd",
            "extended_price_usd",
            "source",
            "network",
            "power_w",
        }


def test_storage_network_is_separate_and_takes_the_cheaper_layout() -> None:
    lines = storage_lines(PARTS, nodes=64)
    topo, switch = storage_topology(PARTS, nodes=64)
    assert {ln.network for ln in lines} == {"storage"}
    assert _qty(lines, switch.sku) == topo.total_switches
    assert _qty(lines, "cx6dx-100g") == 64  # one dual-port card per server
    # A leaf in each of the 16 racks would need 16 leaves; shared leaves are cheaper here.
    tor = size_tor_fabric(64, 2, 32, 2.0)
    assert tor.leaf_switches == 16
    assert topo.total_switches <= tor.total_switches


def test_one_rack_of_storage_uses_copper_to_a_single_switch() -> None:
    lines = storage_lines(PARTS, nodes=2)
    assert _qty(lines, "dac-100g-3m") == 4
    assert _qty(lines, "tor-100g-32") == 1


def test_management_network_counts_servers_and_switches() -> None:
    lines = management_lines(PARTS, nodes=100, managed_switches=30)
    assert _qty(lines, "cat6-3m") == 130
    assert _qty(lines, "mgmt-1g-48") == 3


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
    assert capex == pytest.approx(fast_capex)
    assert power == pytest.approx(fast_power)
    assert capex > 0 and power > 0
    assert all(ln.quantity > 0 for ln in lines)


def test_network_bom_of_an_option_matches_its_capex() -> None:
    from advisor.engine import evaluate
    from advisor.engine.bom import network_bom

    r = evaluate({"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256})
    for option in r["options"][:5]:
        lines = network_bom(
            PARTS,
            nodes=r["workload"]["nodes"],
            fabric=option["fabric"],
            nic_sku=option["nic_sku"],
            nics_per_node=option["nics_per_node"],
            switch_model=option["switch_model"],
            oversubscription=option["oversubscription"],
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
        )
    ]
    assert recommended == r["bom"]
