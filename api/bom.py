"""The bill of materials of one design in a stored engine result.

The recommended design's BOM is in the result (`result.bom`). Alternatives in
`result.options` carry no BOM of their own, so theirs is priced on the run's catalog by
the engine's `network_bom`, exactly the way the engine prices the recommended design
(compute fabric + storage/front-end + management networks); a RAG pipeline's retrieval-tier
network is the same in every design, so an option carries the result's own lines for it.
"""

from __future__ import annotations

from typing import Any

from advisor.engine.decision.bom import BomError, NetworkParts, StorageSpec, network_bom
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.vocabulary import RETRIEVAL
from advisor.engine.model.topology import TopologyError
from advisor.engine.result.records import EngineResult, Option

LINE_KEYS = (
    "sku",
    "part_number",
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
    *, result: EngineResult, option: Option, catalog: Catalog
) -> list[dict[str, Any]]:
    """Price an option of a stored result as the engine prices its recommended design."""
    gpu = catalog.gpu(result.scenario.gpu)
    try:
        lines = network_bom(
            NetworkParts.from_catalog(catalog),
            nodes=int(result.workload.nodes),
            fabric=option.fabric,
            nic_sku=option.nic_sku,
            nics_per_node=int(option.nics_per_node),
            switch_model=option.switch_model,
            oversubscription=float(option.oversubscription),
            storage=StorageSpec.for_gpu(gpu),
            leaf_spine=option.spine_switches > 0,
            on_board_nics=gpu.on_board_nic_skus if gpu is not None else (),
        )
    except KeyError as exc:
        raise BomUnavailable(
            f"the parts of option {option.rank} are no longer in the catalog; re-run the scenario"
        ) from exc
    except (TopologyError, BomError, ValueError) as exc:
        raise BomUnavailable(f"option {option.rank} cannot be priced: {exc}") from exc
    # where the engine puts them: after the front-end network, before management
    tiers = [line.to_dict() for line in result.bom if line.network == RETRIEVAL]
    out = [line.to_dict() for line in lines]
    at = next((i for i, ln in enumerate(out) if ln["network"] == "management"), len(out))
    return [*out[:at], *tiers, *out[at:]]


def bom_for(*, result: EngineResult, option: int | None, catalog: Catalog) -> dict[str, Any]:
    """{"option", "design", "currency", "lines", "total_usd"} of the recommended design, or
    of the option ranked `option` in result.options."""
    options = result.options
    recommended = result.recommended_option
    recommended_rank = int(recommended.rank) if recommended else 1
    chosen: Option | None
    if option is None or option == recommended_rank:
        chosen = recommended
        raw_lines = [line.to_dict() for line in result.bom]
        rank = recommended_rank
    else:
        chosen = next((o for o in options if o.rank == option), None)
        if chosen is None:
            ranks = len(options)
            raise BomUnavailable(
                f"no option ranked {option}; this result has {ranks} option(s), 1-{ranks}"
                if ranks
                else "this result has no options"
            )
        raw_lines = option_bom_lines(result=result, option=chosen, catalog=catalog)
        rank = option
    lines = [{key: line[key] for key in LINE_KEYS} for line in raw_lines]
    total = round(sum(float(line["extended_price_usd"] or 0) for line in lines), 2)
    design = chosen.to_dict() if chosen is not None else {}
    return {
        "option": rank,
        "design": {key: design[key] for key in DESIGN_KEYS if key in design},
        "currency": "USD",
        "lines": lines,
        "total_usd": total,
    }
