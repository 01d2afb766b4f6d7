"""More servers never serve the same load worse (issue 16 follow-up, docs/MODEL.md 15.9).

DeepSeek-V3 on H20 at the default load (64 users, 2,048 / 512 tokens) got a memory-starved
disaggregated plan at 4 servers (4 KV slots for 64 users: p95 TTFT 94.6 s) and 3.6 s p95 TTFT
at 8 and 16 servers (expert-parallel replicas whose one-GPU prefill takes 3.6 s), against
568 ms at 3 servers.  The engine now weighs the split, disaggregated and smaller deployments
on the reference network and keeps the one that serves the load best."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import plan_workload

SIZES = (3, 4, 6, 8, 16)


def _raw(model: str, servers: int, **inference: Any) -> dict[str, Any]:
    return {
        "workload": "inference",
        "model": model,
        "gpu": "h20",
        "gpus": servers * 8,
        "inference": {"independent_replicas": False, **inference},
    }


@pytest.mark.parametrize("model", ["deepseek-v3", "llama3.1-405b"])
def test_more_servers_never_serve_the_same_load_slower(model: str) -> None:
    served = []
    for servers in SIZES:
        metrics = evaluate(_raw(model, servers))["metrics"]
        served.append((servers, metrics["requests_per_s"], metrics["ttft_ms_p95"]))
    for (n0, rps0, ttft0), (n1, rps1, ttft1) in itertools.pairwise(served):
        # 1 %: the recommended design's own communication is priced after the choice
        assert rps1 >= rps0 * 0.99, (model, n0, n1, served)
        assert ttft1 <= ttft0 * 1.01, (model, n0, n1, served)
    # 16 servers serve at least twice what 3 do (5 copies of the 3-server replica fit)
    assert served[-1][1] >= 2 * served[0][1]


def test_the_engine_does_not_pick_a_disaggregated_plan_without_kv_room_for_its_users() -> None:
    scenario = parse_scenario(_raw("deepseek-v3", 4), default_catalog())
    w = plan_workload(scenario)
    assert w.inference is not None and w.inference.serving is not None
    sp = w.inference.serving
    slots = sp.decode.instances * sp.decode.max_batch_per_instance
    assert sp.deployment != "disaggregated" or slots >= sp.concurrent_requests
    # the forced disaggregated plan is the starved one, and the notes say why it lost
    forced = plan_workload(
        parse_scenario(_raw("deepseek-v3", 4, deployment="disaggregated"), default_catalog())
    )
    assert forced.inference is not None and forced.inference.serving is not None
    dec = forced.inference.serving.decode
    assert dec.instances * dec.max_batch_per_instance < 64
    assert any("disaggregated 2 prefill + 2 decode servers" in n for n in w.notes)
    assert any("1 of the 4 servers stays idle" in n for n in w.notes)


def test_an_explicit_deployment_is_planned_as_given() -> None:
    w = plan_workload(parse_scenario(_raw("deepseek-v3", 4, deployment="split"), default_catalog()))
    assert w.inference is not None and w.inference.serving is not None
    assert w.inference.serving.deployment == "split"
    assert w.plan.dp * max(w.plan.ep, w.plan.tp * w.plan.pp) == 32  # all four servers
