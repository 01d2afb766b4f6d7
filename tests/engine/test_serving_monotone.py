"""An explicit disaggregated deployment never serves less within the targets, or buys a
cheaper network, on more servers (the audit's serving-worse-with-more-servers and capex-falls
properties on the whole grid, docs/MODEL.md 15)."""

from __future__ import annotations

import pytest

from advisor.engine.tools.audit import (
    SERVING_RATE_TOLERANCE,
    AuditCase,
    placement_violations,
    run_case,
    series_violations,
)


@pytest.mark.parametrize("model", ["llama3-70b", "llama3-8b", "qwen3-30b-a3b"])
def test_two_nvl72_racks_serve_no_less_than_one(model: str) -> None:
    """GB300 NVL72, 33 trays (a full rack and 15 trays) against 18 (one rack): the pools
    planned across both racks sent every KV cache over the network, which then chose TCP for
    it (the KV stream met the targets at the scenario's 64 users) and served 176 / 493 / 794
    requests/s within the targets against 190 / 1,254 / 1,474 on one rack; copies placed whole
    inside a rack were priced as if their KV cache crossed the network too.  Each rack now
    holds its own deployment, the KV cache stays on NVLink and no compute fabric is bought."""
    outcomes = [
        run_case(AuditCase(model, "gb300-nvl72", "inference-disaggregated", "default", n))
        for n in (18, 33)
    ]
    one, two = (o.result for o in outcomes)
    assert one is not None and two is not None
    rate_one = one["metrics"]["max_requests_per_s_at_target"]
    rate_two = two["metrics"]["max_requests_per_s_at_target"]
    assert rate_two >= rate_one * (1 - SERVING_RATE_TOLERANCE), (rate_one, rate_two)
    # two racks serve well beyond one (the second holds 15 more trays)
    assert rate_two >= 1.5 * rate_one, (rate_one, rate_two)
    serving = two["workload"]["serving"]
    assert serving["kv_inside_domain"] is True
    assert two["recommendation"]["needs_compute_fabric"] is False
    assert placement_violations("two racks", two) == []
    assert series_violations(outcomes) == []


def test_a_dense_deployment_per_rack_uses_the_partial_rack_too() -> None:
    """Llama 3 8B on 33 GB300 trays: one deployment in the full rack and one in the 15 trays
    of the second, side by side (no tray idle)."""
    r = run_case(
        AuditCase("llama3-8b", "gb300-nvl72", "inference-disaggregated", "default", 33)
    ).result
    assert r is not None
    pools = r["workload"]["serving"]["pools"]
    assert pools["prefill"]["servers"] + pools["decode"]["servers"] == 33
    assert any("one disaggregated deployment per 72-GPU" in n for n in r["workload"]["notes"])
