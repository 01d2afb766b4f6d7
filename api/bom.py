"""The bill of materials of one design in a stored engine result.

The recommended design's BOM is in the result (`result["bom"]`). Alternatives in
`result["options"]` carry no BOM of their own, so theirs is priced here with the engine's
own BOM and topology functions, on the current catalog, exactly the way the engine prices the
recommended design (compute fabric + storage/front-end + management networks).
"""

from __future__ import annotations

from typing import Any

from advisor.engine.bom import (
    BomError,
    NetworkParts,
    compute_fabric_lines,
    management_lines,
    storage_lines,
    storage_topology,
)
from advisor.engine.catalog import Catalog, Nic, Switch
from advisor.engine.topology import TopologyError, size_topology

LINE_KEYS = (
    "sku",
    "description",
    "category",
    "quantity",
    "unit_price_usd",
    "extended_price_usd",
    "network",
    "source",
)
DESIGN_KEYS = ("fabric", "nic_gbps", "nics_per_node", "oversubscription", "switch_model", "nic_sku")


class BomUnavailable(ValueError):
    """No bill of materials for the requested option; the message says why."""


def option_bom_lines(
    *, result: dict[str, Any], option: dict[str, Any], catalog: Catalog
) -> list[dict[str, Any]]:
    """Price an option of a stored result as the engine prices its recommended design."""
    parts = NetworkParts.from_catalog(catalog)
    nodes = int(result["workload"]["nodes"])
    try:
        nic = parts.find(str(option["nic_sku"]))
        switch = parts.find(str(option["switch_model"]))
    except (KeyError, BomError) as exc:
        raise BomUnavailable(
            f"the parts of option {option.get('rank')} are no longer in the catalog; "
            "re-run the scenario"
        ) from exc
    if not isinstance(nic, Nic) or not isinstance(switch, Switch):
        raise BomUnavailable(f"option {option.get('rank')} names parts of the wrong kind")
    nics_per_node = int(option["nics_per_node"])
    radix = switch.radix_at(nic.port_gbps) or 0
    try:
        topo = size_topology(
            nodes * nics_per_node,
            radix,
            float(option["oversubscription"]),
            rails=nics_per_node,
        )
        compute = compute_fabric_lines(
            parts,
            fabric=str(option["fabric"]),
            nic=nic,
            nics_per_node=nics_per_node,
            nodes=nodes,
            switch=switch,
            topo=topo,
        )
        north_south = storage_lines(parts, nodes=nodes)
        ns_topo, _ = storage_topology(parts, nodes=nodes)
        mgmt = management_lines(
            parts, nodes=nodes, managed_switches=topo.total_switches + ns_topo.total_switches
        )
    except (TopologyError, BomError, ValueError) as exc:
        raise BomUnavailable(f"option {option.get('rank')} cannot be priced: {exc}") from exc
    return [line.to_dict() for line in (*compute, *north_south, *mgmt)]


def bom_for(*, result: dict[str, Any], option: int | None, catalog: Catalog) -> dict[str, Any]:
    """{"option", "design", "currency", "lines", "total_usd"} of the recommended design, or
    of the option ranked `option` in result["options"]."""
    options: list[dict[str, Any]] = list(result.get("options") or [])
    recommended = next((o for o in options if o.get("recommended")), None)
    recommended_rank = int(recommended["rank"]) if recommended else 1
    if option is None or option == recommended_rank:
        chosen = recommended or {}
        raw_lines = list(result.get("bom") or [])
        rank = recommended_rank
    else:
        found = next((o for o in options if o.get("rank") == option), None)
        if found is None:
            ranks = len(options)
            raise BomUnavailable(
                f"no option ranked {option}; this result has {ranks} option(s), 1-{ranks}"
                if ranks
                else "this result has no options"
            )
        chosen = found
        raw_lines = list(chosen.get("bom") or []) or option_bom_lines(
            result=result, option=chosen, catalog=catalog
        )
        rank = option
    lines = [{key: line.get(key, "") for key in LINE_KEYS} for line in raw_lines]
    total = round(sum(float(line["extended_price_usd"] or 0) for line in lines), 2)
    return {
        "option": rank,
        "design": {key: chosen[key] for key in DESIGN_KEYS if key in chosen},
        "currency": "USD",
        "lines": lines,
        "total_usd": total,
    }
