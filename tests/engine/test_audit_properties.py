"""A fast random subset of the audit grid (``make audit`` runs all of it).

Each example is one case of ``advisor.engine.tools.audit.grid()`` or one short series of the same
job at growing sizes; the properties are the audit's own, so a failure here is a violation
``make audit`` would also report.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.result.echo import Plan, ScenarioEcho, Traffic, WorkloadInfo
from advisor.engine.result.records import Cost, EngineResult, Metrics, Recommendation
from advisor.engine.tools.audit import (
    Outcome,
    audit,
    checked,
    cost_first_violations,
    expected_crossings,
    pick_violations,
    placement_violations,
    point_violations,
    run_case,
    series_violations,
)
from advisor.engine.tools.audit_grid import LADDER_SERVERS, SIZES_SERVERS, AuditCase, grid

CATALOG = default_catalog()
GRID = grid(CATALOG)
FAST = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@FAST
@given(st.sampled_from(GRID))
def test_every_sampled_case_keeps_the_single_answer_properties(case: AuditCase) -> None:
    outcome = run_case(case, CATALOG)
    assert point_violations(outcome) == []


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    st.sampled_from(CATALOG.model_ids),
    st.sampled_from(CATALOG.gpu_ids),
    st.sampled_from(("training", "fine_tuning", "inference-split")),
)
def test_a_growing_cluster_never_slows_the_step_or_cheapens_the_network(
    model: str, gpu: str, workload: str
) -> None:
    sizes = sorted({*SIZES_SERVERS[:12], *LADDER_SERVERS[:7]})
    outcomes = [run_case(AuditCase(model, gpu, workload, "default", n), CATALOG) for n in sizes]
    assert series_violations(outcomes) == []


# --- the checks themselves must be able to fail --------------------------------------------


def _result(plan: Plan, traffic: Traffic, *, per_node: int = 8) -> EngineResult:
    return EngineResult(
        scenario=ScenarioEcho(workload="training", gpu="h100-sxm", gpus=64),
        workload=WorkloadInfo(nodes=8, gpus_per_node=per_node, plan=plan, traffic=traffic),
        recommendation=Recommendation(fabric="infiniband"),
    )


def test_pipeline_stages_on_different_servers_must_cross_the_network() -> None:
    # issue 10's example: tp2/pp64/dp1 puts 4 stages per server; stage edges join servers
    result = _result(
        Plan(tp=2, pp=32, dp=1),
        Traffic(pipeline_bytes=1.37e11, pipeline_crosses_network=False),
    )
    assert expected_crossings(result)["pipeline"] is True
    assert [v.prop for v in placement_violations("case", result)] == ["placement"]


def test_tensor_parallel_inside_a_server_must_not_cross() -> None:
    result = _result(
        Plan(tp=8, pp=1, dp=8),
        Traffic(tensor_parallel_bytes=1e9, tensor_parallel_crosses_network=True),
    )
    assert expected_crossings(result)["tensor_parallel"] is False
    assert [v.prop for v in placement_violations("case", result)] == ["placement"]


def test_a_data_parallel_group_that_straddles_servers_crosses() -> None:
    result = _result(Plan(tp=4, pp=1, dp=16), Traffic())
    assert expected_crossings(result) == {
        "tensor_parallel": False,
        "data_parallel": True,
        "expert": False,
        "pipeline": False,
    }


def _answer(servers: int, step_s: float, capex: float, fabric: str) -> Outcome:
    case = AuditCase("m", "g", "training", "default", servers)
    result = EngineResult(
        metrics=Metrics(step_time_s=step_s),
        cost=Cost(network_capex_usd=capex),
        recommendation=Recommendation(fabric=fabric),
        workload=WorkloadInfo(nodes=servers),
    )
    return Outcome(case, result=result)


def test_series_checks_catch_a_slower_step_falling_capex_and_flipping_fabrics() -> None:
    outcomes = [
        _answer(2, 10.0, 100.0, "roce"),
        _answer(4, 10.5, 200.0, "infiniband"),
        _answer(8, 9.0, 150.0, "roce"),
        _answer(16, 8.0, 400.0, "infiniband"),
    ]
    props = sorted(v.prop for v in series_violations(outcomes))
    assert props == ["capex-falls", "fabric-flips", "step-slows"]
    # what a worker of make audit sends back (no result) gives the same violations and report
    slim = [checked(o) for o in outcomes]
    assert all(o.result is None for o in slim)
    assert series_violations(slim) == series_violations(outcomes)
    assert audit(slim).to_dict() == audit(outcomes).to_dict()


def test_a_checked_outcome_keeps_its_single_answer_violations() -> None:
    case = AuditCase("llama3-70b", "a100-80gb-sxm", "training", "default", 2)
    result = EngineResult(
        scenario=ScenarioEcho(workload="training", gpu="a100-80gb-sxm", gpus=16),
        workload=WorkloadInfo(nodes=2, gpus_per_node=8),
        recommendation=Recommendation(fabric="ethernet"),
    )
    full = Outcome(case, result=result)
    slim = checked(full)
    assert [v.prop for v in point_violations(slim)] == ["no-rdma"]
    assert audit([slim]).to_dict() == audit([full]).to_dict()
    refused = Outcome(case, refusal={"gpus": ["too few"]})
    assert audit([checked(refused)]).to_dict() == audit([refused]).to_dict()


@pytest.mark.parametrize(
    ("fabric", "workload", "nodes", "expected"),
    [("ethernet", "training", 2, ["no-rdma"]), ("roce", "training", 2, []),
     ("ethernet", "training", 1, [])],
)  # fmt: skip
def test_multi_server_training_needs_rdma(
    fabric: str, workload: str, nodes: int, expected: list[str]
) -> None:
    case = AuditCase("llama3-70b", "a100-80gb-sxm", workload, "default", nodes)
    result = EngineResult(
        scenario=ScenarioEcho(workload=workload, gpu="a100-80gb-sxm", gpus=8 * nodes),
        workload=WorkloadInfo(nodes=nodes, gpus_per_node=8),
        recommendation=Recommendation(fabric=fabric),
    )
    assert [v.prop for v in point_violations(Outcome(case, result=result))] == expected


def test_training_inside_one_nvl72_rack_needs_no_fabric() -> None:
    # 8 GB200 compute trays of 4 GPUs share one NVLink domain of 72: no network in the step
    case = AuditCase("llama3-70b", "gb200-nvl72", "training", "default", 8)
    result = EngineResult(
        scenario=ScenarioEcho(workload="training", gpu="gb200-nvl72", gpus=32),
        workload=WorkloadInfo(nodes=8, gpus_per_node=4),
        recommendation=Recommendation(fabric="ethernet"),
    )
    assert point_violations(Outcome(case, result=result)) == []
    result = dataclasses.replace(result, scenario=dataclasses.replace(result.scenario, gpus=144))
    assert [v.prop for v in point_violations(Outcome(case, result=result))] == ["no-rdma"]


def test_an_exception_is_a_violation_and_a_named_refusal_is_not() -> None:
    case = AuditCase("m", "g", "training", "default", 1)
    assert [v.prop for v in point_violations(Outcome(case, error="KeyError: x"))] == ["exception"]
    named = Outcome(case, refusal={"gpus": ["must be >= 1 and <= 131,072 GPUs"]})
    assert point_violations(named) == []
    assert [v.prop for v in point_violations(Outcome(case, refusal={}))] == ["refusal-unnamed"]


def test_the_recommended_option_names_the_answers_network() -> None:
    """The options table and the answer name one design: the no-fabric answer's option had
    carried the storage candidate's 2:1 beside the single switch's 1:1 of the answer."""
    result = evaluate_typed(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 64,
            "inference": {"requests_per_s": 20},
        }
    )
    assert result.recommendation.topology.tiers == 1
    assert pick_violations("70b", result) == []
    pick = next(o for o in result.options if o.recommended)
    assert pick.oversubscription == 1.0
    told = dataclasses.replace(pick, oversubscription=2.0, nic_gbps=200.0)
    found = pick_violations("70b", dataclasses.replace(result, options=[told]))
    assert [v.detail.split(":")[0] for v in found] == ["nic_gbps", "oversubscription"]
    assert {v.prop for v in found} == {"pick-is-answer"}


def test_on_the_existing_network_the_option_names_no_switch_of_ours() -> None:
    """A few servers plug into the data centre's switches: the answer buys no switch, and its
    option (the alternatives table's row) names none beside a capex without one."""
    result = evaluate_typed(
        {"workload": "inference", "model": "llama3-8b", "gpu": "l40s", "gpus": 4}
    )
    assert result.recommendation.topology.kind == "existing"
    (pick,) = result.options
    assert (pick.switch_model, pick.tiers) == ("", 0)
    assert pick_violations("8b", result) == []
    named = dataclasses.replace(pick, switch_model="spectrum4-sn5400", tiers=1)
    found = pick_violations("8b", dataclasses.replace(result, options=[named]))
    assert sorted(v.detail.split(":")[0] for v in found) == ["switch_model", "tiers"]


def test_a_cost_first_pick_is_never_dearer_than_a_design_as_fast() -> None:
    """``cost-first``: prefer cost with oversubscription allowed picks the least life cost of
    the designs at least as fast; made to pick the non-blocking design, the property fires."""
    result = evaluate_typed(
        {
            "workload": "training",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 512,
            "constraints": {"prefer": "cost", "allow_oversubscription": True},
        },
        scaling_chart=False,
    )
    assert result.recommendation.decision is not None
    assert result.recommendation.decision.mode == "cost_preference"
    assert cost_first_violations("cost", result) == []
    pick = next(o for o in result.options if o.recommended)
    dearer = next(
        o
        for o in result.options
        if o.feasible
        and o.oversubscription == 1.0
        and (o.cost.decision_cost_usd or 0) > (pick.cost.decision_cost_usd or 0)
    )
    # the cheaper design made exactly as fast as the dearer one the answer now picks
    as_fast = dataclasses.replace(pick, recommended=False, metrics=dearer.metrics)
    swapped = [dataclasses.replace(dearer, recommended=True), as_fast]
    found = cost_first_violations("cost", dataclasses.replace(result, options=swapped))
    assert [v.prop for v in found] == ["cost-first"]
