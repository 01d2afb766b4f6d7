from __future__ import annotations

import json

from advisor.engine.facts.catalog.network import (
    CABLES,
    NICS,
    SWITCHES,
    TRANSCEIVERS,
    Cable,
    Nic,
    Switch,
    Transceiver,
)
from advisor.engine.facts.vocabulary import FABRIC_IDS


def test_every_item_round_trips_through_json() -> None:
    for group, cls in (
        (NICS, Nic),
        (SWITCHES, Switch),
        (TRANSCEIVERS, Transceiver),
        (CABLES, Cable),
    ):
        for item in group:
            raw = json.loads(json.dumps(item.to_dict()))
            assert cls.from_dict(raw) == item  # type: ignore[attr-defined]


def test_every_item_has_a_source_a_price_and_known_fabrics() -> None:
    skus: set[str] = set()
    for item in (*NICS, *SWITCHES, *TRANSCEIVERS, *CABLES):
        assert item.sku not in skus
        skus.add(item.sku)
        assert item.source
        assert item.power_w >= 0
        if isinstance(item, Nic) and item.integrated:
            # built into the accelerator: no price of its own, and that is a fact
            assert item.unit_price_usd == 0 and not item.price_is_estimate
            continue
        assert item.unit_price_usd > 0
        assert item.price_is_estimate
        assert set(item.fabrics) <= set(FABRIC_IDS)


def test_the_catalog_holds_the_required_switch_classes() -> None:
    by_sku = {s.sku: s for s in SWITCHES}
    assert by_sku["spectrum4-sn5600"].radix_at(800) == 64
    assert by_sku["spectrum4-sn5600"].radix_at(400) == 128
    assert by_sku["quantum-qm8700"].radix_at(200) == 40
    assert by_sku["quantum2-qm9700"].radix_at(400) == 64
    assert by_sku["quantum-x800-q3400"].radix_at(800) == 144
    assert by_sku["tomahawk5-64x800"].radix_at(800) == 64
    assert by_sku["tor-100g-32"].radix_at(100) == 32


def test_nics_cover_25g_to_800g() -> None:
    assert {n.port_gbps for n in NICS} >= {25, 100, 200, 400, 800}


def test_every_switch_lists_a_cage_for_every_speed() -> None:
    for switch in SWITCHES:
        for speed, ports in switch.radix_by_gbps:
            cage = switch.cage_at(speed)
            assert cage is not None, (switch.sku, speed)
            assert ports % cage[1] == 0, (switch.sku, speed)


def test_every_cable_has_connectors_and_breakouts_divide_evenly() -> None:
    for cable in CABLES:
        if cable.kind == "fiber":
            continue
        assert cable.form_factor, cable.sku
        assert cable.links % cable.legs == 0, cable.sku
