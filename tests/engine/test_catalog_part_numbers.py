"""Every catalog NIC, switch and transceiver that names a specific vendor product carries that
product's orderable part number, the number the customer's bill of materials shows instead of
the catalog id (docs/MODEL.md "Part numbers").  The items left without one are listed below by
id with the reason, so a missing number is said here, not hidden."""

from __future__ import annotations

import re

from advisor.engine.facts.catalog import default_catalog

# Left empty on purpose: a class of products or ports built into something else, so there is
# no one part to order.  Each description says so ("class", "integrated") or names no vendor.
EMPTY_ON_PURPOSE: dict[str, str] = {
    # "UEC-ready 400GbE AI NIC (AMD Pensando Pollara 400 class)": a class of UEC NICs.  AMD's
    # own card prints POLLARA-1Q400P ("POLLARA 1x400G QSFP112", ROCm Systems Profiler docs);
    # it would belong here only if the item were narrowed to that one card.
    "uec-400g": "class of UEC-ready 400G NICs",
    # Gaudi 3's scale-out ports are on the accelerator: nothing to buy.
    "gaudi3-scaleout-200g": "integrated in the accelerator",
    # "Broadcom Tomahawk 6 class": a switch ASIC class, not a switch product.
    "tomahawk6-128x800": "class of Tomahawk 6 switches",
    # Generic 800G SR8 MSA modules, no vendor named.
    "osfp-800g-sr8": "generic 800G SR8 MSA module",
    "osfp-800g-sr8-4x200g": "generic 800G SR8 MSA module run as 4 x 200G",
    # A single-port 800G DR8 (2 fibres, 8 x 100G) class: NVIDIA's XDR single-port module
    # (MMS4A20, 980-9IAT0-00XM00) is a 1 x MPO DR4 at 200G a lane, not this module.
    "osfp-800g-2xdr4": "class of single-port 800G DR4 modules",
}

# Specific vendor products whose orderable number no stored public source was found to state:
# missing, to be filled when a source is found (then delete the line).
NOT_FOUND: dict[str, str] = {
    # AMD announced Vulcano (800G UEC AI NIC, PCIe Gen6) for the MI400 / Helios rack; no
    # orderable part number was found in any stored source.
    "vulcano-800g": "AMD Pensando Vulcano 800G: no published ordering number",
    # NVIDIA's ConnectX-7 user manual lists no stand-up dual-port 400G QSFP112 card (dual-port
    # QSFP112 cards are 100/200G); the DGX H100 storage card shows up only as the firmware part
    # MCX755206AS-NEAT-N, which no stored source describes as an orderable product.
    "cx7-2x400g-qsfp112": "DGX H100 storage ConnectX-7: no orderable number with a description",
}

_PART_NUMBER = re.compile(r"^[A-Z0-9][A-Z0-9-]{3,30}$")
_VENDORS = ("NVIDIA", "Broadcom", "AMD", "Intel", "Arista")

# The numbers this pass added, each stated by the source its catalog item cites.
_ADDED = {
    "bf3-supernic-400g": "900-9D3D4-00EN-HA0",
    "cx8-800g": "900-9X81E-00EX-ST0",
    "cx8-2x400g": "900-9X81E-00EX-ST0",
    "thor2-400g": "BCM957608-P1400GDF00",
    "bf3-2x200g": "900-9D3B6-00CV-AA0",
    "bf3-dpu-2x400g": "900-9D3B6-00CN-AB0",
    "quantum-x800-q3400": "920-9B36F-00RX-8S0",
    "osfp-2x800g-dr8": "980-9IAH1-00XM00",
}


def _items():
    catalog = default_catalog()
    return [*catalog.nics, *catalog.switches, *catalog.transceivers]


def test_every_named_vendor_product_carries_a_part_number() -> None:
    missing = [
        f"{item.sku} ({item.description})"
        for item in _items()
        if not item.part_number and item.sku not in EMPTY_ON_PURPOSE and item.sku not in NOT_FOUND
    ]
    assert not missing, f"vendor products without a part number: {missing}"
    for item in _items():
        if item.part_number:
            assert _PART_NUMBER.match(item.part_number), (item.sku, item.part_number)


def test_the_items_left_empty_are_listed_with_a_reason_and_still_empty() -> None:
    by_sku = {item.sku: item for item in _items()}
    assert not set(EMPTY_ON_PURPOSE) & set(NOT_FOUND)
    for sku, reason in {**EMPTY_ON_PURPOSE, **NOT_FOUND}.items():
        assert sku in by_sku, f"{sku} is listed but not in the catalog"
        assert reason
        # once a number is found, the item leaves the list
        assert by_sku[sku].part_number == "", f"{sku} now has a part number: drop it from the list"


def test_only_classes_and_integrated_ports_are_empty_on_purpose() -> None:
    # an item left empty on purpose says it is a class or integrated, or names no vendor at all
    by_sku = {item.sku: item for item in _items()}
    for sku in EMPTY_ON_PURPOSE:
        text = by_sku[sku].description
        generic = "class" in text or "integrated" in text
        assert generic or not any(vendor in text for vendor in _VENDORS), (sku, text)
    # and every item still missing its number does name its vendor's product
    for sku in NOT_FOUND:
        assert any(vendor in by_sku[sku].description for vendor in _VENDORS), sku


def test_the_numbers_found_in_public_sources_are_named_in_their_sources() -> None:
    by_sku = {item.sku: item for item in _items()}
    assert {sku: by_sku[sku].part_number for sku in _ADDED} == _ADDED
    for sku, number in _ADDED.items():
        # the source names the number and says where it is stated
        assert number in by_sku[sku].source and "part number" in by_sku[sku].source, sku
