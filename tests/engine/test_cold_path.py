"""The cold path's shared work (value-keyed memos within and across design evaluations) never
changes an answer: a design priced after others equals the same design priced first."""

from __future__ import annotations

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model import design_network, planner
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload

DESIGNS = [
    Design(fabric=fabric, nic_gbps=gbps, nics_per_node=nics, oversubscription=over)
    for fabric in ("infiniband", "roce")
    for gbps, nics in ((400, 8), (200, 4))
    for over in (1.0, 2.0)
]


def _metrics_in_order(raw: dict[str, object], order: list[Design]) -> dict[Design, object]:
    planner._PLAN_CACHE.clear()
    design_network._net.cache_clear()
    design_network._OPS_CACHE.clear()
    scenario = parse_scenario(raw, default_catalog())
    workload = plan_workload(scenario)
    return {d: evaluate_design(scenario, workload, d) for d in order}


def test_a_design_priced_after_others_equals_it_priced_first() -> None:
    raw: dict[str, object] = {
        "workload": "training",
        "model": "mixtral-8x7b",
        "gpu": "h100-sxm",
        "gpus": 256,
    }
    forward = _metrics_in_order(raw, DESIGNS)
    backward = _metrics_in_order(raw, DESIGNS[::-1])
    assert forward == backward
    alone = {d: _metrics_in_order(raw, [d])[d] for d in DESIGNS[:3]}
    assert all(alone[d] == forward[d] for d in alone)
    # designs that differ only in oversubscription share the in-leaf domains' figures
    assert len(design_network._OPS_CACHE) > 0


def test_the_ops_memo_is_bounded() -> None:
    design_network._OPS_CACHE.clear()
    raw: dict[str, object] = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "h100-sxm",
        "gpus": 64,
    }
    limit = design_network._OPS_CACHE_MAX
    try:
        design_network._OPS_CACHE_MAX = 2
        _metrics_in_order(raw, DESIGNS)
        assert len(design_network._OPS_CACHE) <= 2
    finally:
        design_network._OPS_CACHE_MAX = limit
