"""The MoE training stack a planned job runs where the scenario leaves it open (plans.moe_software):
DeepEP and Megatron-Core's 1F1B all-to-all overlap, as NVIDIA's MoE recipes run them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model.collectives import expert_all_to_all_time_s, make_domain
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import a2a_overlap_runs, moe_software
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.model.training_step import all_alternatives

IB_PER_GPU = Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=4)


def _scenario(gpu: str, gpus: int, model: str = "deepseek-v3", **parallelism: Any) -> Any:
    raw: dict[str, Any] = {
        "workload": "training",
        "model": model,
        "gpu": gpu,
        "gpus": gpus,
        "precision": "fp8" if gpu != "a100-80gb-sxm" else "bf16",
    }
    if parallelism:
        raw["parallelism"] = parallelism
    return parse_scenario(raw, default_catalog())


def test_a_planned_moe_job_on_nvl72_runs_deepep_with_the_overlap_and_says_so() -> None:
    """DeepSeek-V3 on 256 GB200: the plan used to assume Megatron-Core's plain NCCL all-to-all
    with nothing overlapped (10.1 s a step, NVIDIA's own recipe plan priced 6.8 s)."""
    s = _scenario("gb200-nvl72", 256)
    w = plan_workload(s)
    assert (w.plan.moe_dispatcher, w.plan.ep_overlap) == ("deepep", "a2a_1f1b")
    assert any("DeepEP" in n for n in w.notes)
    assert any("overlapped" in n for n in w.notes)
    plain = _scenario("gb200-nvl72", 256, moe_dispatcher="alltoall", ep_overlap="none")
    wp = plan_workload(plain)
    assert (wp.plan.moe_dispatcher, wp.plan.ep_overlap) == ("alltoall", "none")
    assert not any("DeepEP" in n for n in wp.notes)
    step = evaluate_design(s, w, IB_PER_GPU, bounds=False).step_time_s
    plain_step = evaluate_design(plain, wp, IB_PER_GPU, bounds=False).step_time_s
    assert step < 0.8 * plain_step


@pytest.mark.parametrize(
    ("gpu", "gpus", "dispatcher"),
    [
        ("h100-sxm", 1024, "deepep"),
        ("h800-sxm", 2048, "deepep"),
        ("b200", 256, "deepep"),
        ("mi300x", 1048, "alltoall"),  # DeepEP is NVIDIA's: NVSHMEM, NVLink
        ("h100-pcie", 512, "alltoall"),  # no NVLink between the server's GPUs
    ],
)
def test_the_dispatcher_is_deepep_only_where_it_runs(gpu: str, gpus: int, dispatcher: str) -> None:
    s = _scenario(gpu, gpus, model="mixtral-8x7b")
    assert moe_software(s).dispatcher == dispatcher
    w = plan_workload(s)
    assert w.plan.moe_dispatcher == dispatcher
    if dispatcher == "alltoall" and w.plan.ep > 1:
        assert any("not the " + s.gpu.name in n for n in w.notes)


def test_what_the_scenario_sets_and_an_explicit_plan_keep_megatron_defaults() -> None:
    given_plan = _scenario("gb200-nvl72", 256, tp=1, pp=4, ep=64, virtual_stages=4)
    assert moe_software(given_plan) == ("alltoall", "none")
    w = plan_workload(given_plan)
    assert (w.plan.moe_dispatcher, w.plan.ep_overlap) == ("alltoall", "none")
    assert not any("DeepEP" in n for n in w.notes)
    dual = _scenario("h800-sxm", 2048, ep_overlap="dualpipe")
    assert moe_software(dual) == ("deepep", "dualpipe")
    assert plan_workload(dual).plan.ep_overlap == "dualpipe"
    # a dense model has no expert dispatch to choose
    dense = _scenario("h100-sxm", 1024, model="llama3-70b")
    assert moe_software(dense) == ("alltoall", "none")
    assert (plan_workload(dense).plan.moe_dispatcher, plan_workload(dense).plan.ep_overlap) == (
        "alltoall",
        "none",
    )


def test_the_overlap_rule_is_megatrons_argument_checks() -> None:
    assert a2a_overlap_runs(8, 1, 1, "none")
    assert a2a_overlap_runs(8, 8, 2, "selective")
    assert not a2a_overlap_runs(8, 8, 1, "none")  # "only supported with vpp"
    assert not a2a_overlap_runs(8, 1, 1, "full")  # "disable full recomputation"
    assert not a2a_overlap_runs(1, 1, 1, "none")  # expert parallelism only


@pytest.mark.parametrize(
    ("gpu", "gpus", "model"),
    [
        ("h100-sxm", 1024, "deepseek-v3"),
        ("h100-sxm", 256, "mixtral-8x7b"),
        ("gb200-nvl72", 256, "qwen3-235b-a22b"),
        ("b200", 64, "gpt-oss-120b"),
    ],
)
def test_every_planned_plan_overlaps_only_where_megatron_runs_it(
    gpu: str, gpus: int, model: str
) -> None:
    """The chosen plan and every alternative the designs may take."""
    w = plan_workload(_scenario(gpu, gpus, model=model))
    for plan in [w.plan, *(a.plan for a in all_alternatives(w))]:
        runs = a2a_overlap_runs(plan.ep, plan.pp, plan.virtual_stages, plan.recompute)
        assert plan.ep_overlap == ("a2a_1f1b" if runs else "none"), plan


def _ep_domain(fabric: str) -> Any:
    return make_domain(
        nodes=4,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82, nvls=False),
        fabric_id=fabric,
        nic_gbps=400,
        nics_per_node=8,
    )


@settings(max_examples=40, deadline=None)
@given(nbytes=st.floats(1e6, 4e9), top_k=st.integers(2, 8))
def test_deepep_needs_rdma_between_servers(nbytes: float, top_k: int) -> None:
    """Over NCCL's TCP sockets DeepEP's internode kernels do not run: the dispatch is the
    all-to-all of every copy; over InfiniBand or RoCE it sends a token once per server."""
    tcp = _ep_domain("ethernet")
    assert not tcp.rdma
    assert expert_all_to_all_time_s(
        nbytes, tcp, top_k=top_k, dispatcher="deepep"
    ) == expert_all_to_all_time_s(nbytes, tcp, top_k=top_k, dispatcher="alltoall")
    for fabric in ("infiniband", "roce"):
        d = _ep_domain(fabric)
        assert d.rdma
        assert expert_all_to_all_time_s(
            nbytes, d, top_k=top_k, dispatcher="deepep"
        ) < expert_all_to_all_time_s(nbytes, d, top_k=top_k, dispatcher="alltoall")


def test_the_answer_lists_the_moe_stack_it_assumed() -> None:
    from advisor.engine import evaluate

    def rows(**parallelism: Any) -> dict[str, str]:
        raw: dict[str, Any] = {
            "workload": "training",
            "model": "mixtral-8x7b",
            "gpu": "h100-sxm",
            "gpus": 256,
            "precision": "fp8",
        }
        if parallelism:
            raw["parallelism"] = parallelism
        result = evaluate(raw)
        return {a["name"]: a["value"] for a in result["assumptions"] if "expert" in a["name"]}

    planned = rows()
    assert planned["expert dispatch"].startswith("DeepEP")
    assert "1F1B" in planned["expert all-to-all overlap"]
    plain = rows(moe_dispatcher="alltoall", ep_overlap="none")
    assert plain == {
        "expert dispatch": "NCCL all-to-all of every token copy",
        "expert all-to-all overlap": "not overlapped",
    }


def test_the_audit_property_holds_on_an_answer_and_catches_a_plan_megatron_refuses() -> None:
    from dataclasses import replace

    from advisor.engine import evaluate_typed
    from advisor.engine.tools.audit import moe_stack_violations

    result = evaluate_typed(
        {
            "workload": "training",
            "model": "deepseek-v3",
            "gpu": "h100-sxm",
            "gpus": 1024,
            "precision": "fp8",
        }
    )
    assert result.workload.plan.ep > 1
    assert moe_stack_violations("case", result) == []
    plan = replace(result.workload.plan, pp=8, virtual_stages=1, ep_overlap="a2a_1f1b")
    bad = replace(result, workload=replace(result.workload, plan=plan))
    assert [v.prop for v in moe_stack_violations("case", bad)] == ["moe-stack"]
    unoverlapped = replace(result.workload.plan, pp=1, virtual_stages=1, ep_overlap="none")
    silent = replace(result, workload=replace(result.workload, plan=unoverlapped))
    assert [v.prop for v in moe_stack_violations("case", silent)] == ["moe-stack"]
    amd = replace(result, scenario=replace(result.scenario, gpu="mi300x"))
    assert "deepep on the AMD" in moe_stack_violations("case", amd)[0].detail


def test_the_audit_property_leaves_a_dispatcher_the_user_named() -> None:
    from dataclasses import replace

    from advisor.engine import evaluate_typed
    from advisor.engine.tools.audit import moe_stack_violations

    named = evaluate_typed(
        {
            "workload": "training",
            "model": "deepseek-v3",
            "gpu": "mi300x",
            "gpus": 1048,
            "precision": "fp8",
            "parallelism": {"moe_dispatcher": "deepep"},
        }
    )
    assert named.workload.plan.moe_dispatcher == "deepep"
    assert moe_stack_violations("case", named) == []
    left_open = replace(named, scenario=replace(named.scenario, parallelism={}))
    assert [v.prop for v in moe_stack_violations("case", left_open)] == ["moe-stack"]
