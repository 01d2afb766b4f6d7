"""The engine refuses a catalog whose items break the rules, naming the item and the field:
no negative or absurd price, no zero or negative count, no GPU server size it cannot split."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.catalog.rules import CatalogError

BUILTIN = default_catalog().to_dict()


def edited(kind: str, key: str, sku: str, **changes: Any) -> dict[str, Any]:
    data = {k: (list(v) if isinstance(v, list) else v) for k, v in BUILTIN.items()}
    data[kind] = [{**item, **changes} if item[key] == sku else item for item in BUILTIN[kind]]
    return data


def test_the_built_in_catalog_obeys_every_rule() -> None:
    assert Catalog.from_dict(BUILTIN) == default_catalog()


@pytest.mark.parametrize(
    ("kind", "key", "sku", "changes", "named"),
    [
        ("switches", "sku", "spectrum4-sn5600", {"unit_price_usd": -868000}, "unit_price_usd"),
        ("switches", "sku", "spectrum4-sn5600", {"unit_price_usd": 1e308}, "unit_price_usd"),
        ("switches", "sku", "spectrum4-sn5600", {"unit_price_usd": 0}, "unit_price_usd"),
        ("switches", "sku", "spectrum4-sn5600", {"radix_by_gbps": [[800, 0]]}, "radix_by_gbps"),
        ("switches", "sku", "spectrum4-sn5600", {"radix_by_gbps": [[800, -64]]}, "radix_by_gbps"),
        ("switches", "sku", "spectrum4-sn5600", {"radix_by_gbps": []}, "radix_by_gbps"),
        ("switches", "sku", "spectrum4-sn5600", {"switching_tbps": 0}, "switching_tbps"),
        ("switches", "sku", "spectrum4-sn5600", {"power_w": -5}, "power_w"),
        ("nics", "sku", "cx7-400g", {"ports": 0}, "ports"),
        ("nics", "sku", "cx7-400g", {"port_gbps": 400.5}, "port_gbps"),
        ("nics", "sku", "cx7-400g", {"unit_price_usd": "2400"}, "unit_price_usd"),
        ("gpus", "id", "h100-sxm", {"gpus_per_server": 0}, "gpus_per_server"),
        ("gpus", "id", "h100-sxm", {"gpus_per_server": 6}, "gpus_per_server"),
        ("gpus", "id", "h100-sxm", {"price_usd": -1}, "price_usd"),
        ("gpus", "id", "h100-sxm", {"cloud_usd_per_hour": 0}, "cloud_usd_per_hour"),
        ("cables", "sku", "fiber-mpo-mmf", {"reach_m": 0}, "reach_m"),
    ],
)
def test_an_item_breaking_a_rule_is_refused_naming_item_and_field(
    kind: str, key: str, sku: str, changes: dict[str, Any], named: str
) -> None:
    with pytest.raises(CatalogError) as refused:
        Catalog.from_dict(edited(kind, key, sku, **changes))

    assert f"{kind}[{sku}].{named}" in str(refused.value)


def test_built_in_ports_may_cost_nothing() -> None:
    integrated = next(n for n in BUILTIN["nics"] if n["integrated"])
    assert integrated["unit_price_usd"] == 0
    Catalog.from_dict(BUILTIN)  # accepted
