"""Acceptance test plans for recommended designs, and grading real measurements against them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.calibration.acceptance import (
    ACCEPTANCE_OPS,
    ACCEPTANCE_SIZES,
    acceptance_plan,
    grade,
    plan_markdown,
)
from advisor.engine.calibration.nccl_tests import parse_text
from advisor.engine.facts.formatting import significant

DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"
SINGLE_GB300_TRAY = {"workload": "inference", "model": "llama3-8b", "gpu": "gb300-nvl72"}


@pytest.fixture(scope="module")
def h100_roce_64():
    return evaluate_typed(
        {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "h100-sxm",
            "gpus": 128,
            "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
        }
    )


def test_sizes_run_from_8_bytes_to_8_gib():
    assert ACCEPTANCE_SIZES[0] == 8
    assert ACCEPTANCE_SIZES[-1] == 8 << 30


def test_plan_covers_two_servers_and_the_whole_job_for_every_op_and_size(h100_roce_64):
    plan = acceptance_plan(h100_roce_64)
    assert plan.title.endswith(", InfiniBand 8 x 400G per server")  # a name, not an id
    scopes = [s for s, _n in plan.scopes]
    assert scopes[0] == "2 servers"
    assert plan.scopes[-1][1] == 16
    for scope, nodes in plan.scopes:
        for op in ACCEPTANCE_OPS:
            sizes = [c.nbytes for c in plan.checks if c.scope == scope and c.op == op]
            assert sizes == list(ACCEPTANCE_SIZES), (scope, op)
            assert all(c.nodes == nodes for c in plan.checks if c.scope == scope)
    for c in plan.checks:
        assert 0 < c.threshold_busbw_gbytes_per_s <= c.expected_low_gbytes_per_s
        assert c.expected_low_gbytes_per_s <= c.expected_high_gbytes_per_s
        assert f"./build/{c.op}_perf -b 8 -e 8G" in c.command
        assert f"-np {c.gpus} -N 8" in c.command


def test_large_all_reduce_on_two_servers_expects_roughly_the_nic_bandwidth(h100_roce_64):
    plan = acceptance_plan(h100_roce_64)
    big = next(
        c
        for c in plan.checks
        if c.scope == "2 servers" and c.op == "all_reduce" and c.nbytes == 8 << 30
    )
    # 8 x 400G = 400 GB/s per server; NVLS-tree all-reduce busbw on 2 servers exceeds it
    assert 250 < big.expected_low_gbytes_per_s <= big.expected_high_gbytes_per_s < 700


def test_roce_plan_sets_the_roce_environment(h100_roce_64):
    plan = acceptance_plan(h100_roce_64, given_design=True)
    env = {k: v for k, v, _w in plan.env}
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert "NCCL_IB_HCA" in env
    assert "-x NCCL_IB_GID_INDEX=3" in plan.commands[0][1]
    assert "srun --nodes=2 --ntasks-per-node=8" in plan.commands[0][2]


def test_amd_plans_use_rccl_tests():
    result = evaluate_typed(
        {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "mi300x",
            "gpus": 16,
            "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
        }
    )
    assert acceptance_plan(result).tool == "rccl-tests"


def test_grading_a_real_two_server_log_matches_rows_and_explains_failures():
    result = evaluate_typed(
        {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "mi300x",
            "gpus": 16,
            "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
        }
    )
    plan = acceptance_plan(result, given_design=True)
    assert plan.fabric == "roce"
    parsed = parse_text((DATA / "amd_mi300x_2x8_all_reduce_roce.txt").read_text())
    grading = grade(plan, parsed)
    measured = [g for g in grading.checks if g.passed is not None]
    assert {(g.check.op, g.check.nodes) for g in measured} == {("all_reduce", 2)}
    assert len(measured) == len(ACCEPTANCE_SIZES)
    big = next(g for g in measured if g.check.nbytes == 8 << 30)
    # the log: 45224 us for 8 GiB on 16 ranks -> busbw 356.1 GB/s
    assert big.measured_time_us == 45224.0
    assert big.measured_busbw_gbytes_per_s == pytest.approx(356.14, rel=2e-3)
    assert not grading.complete
    small = next(g for g in measured if g.check.nbytes == 8)
    # 256.5 us for 8 B is far above any RDMA fabric's latency: it must fail, with hints
    assert small.passed is False
    assert any("latency" in h for h in small.look_at)
    assert any("PFC" in h or "pause" in h for h in small.look_at)
    assert grading.passed is False


def test_a_measurement_of_another_shape_grades_nothing(h100_roce_64):
    plan = acceptance_plan(h100_roce_64)
    parsed = parse_text((DATA / "amd_mi300x_1x8_all_reduce.txt").read_text())
    grading = grade(plan, parsed)
    assert grading.passed is False
    assert all(g.passed is None for g in grading.checks)
    assert "nothing graded" in grading.summary


def test_markdown_has_commands_thresholds_and_results(h100_roce_64):
    # the RoCE design the scenario gives (the recommendation itself is InfiniBand)
    plan = acceptance_plan(h100_roce_64, given_design=True)
    md = plan_markdown(plan)
    assert md.startswith("# Acceptance test plan: 128 x NVIDIA H100")
    assert "`NCCL_IB_GID_INDEX`" in md
    assert "### 2 servers: all-reduce" in md
    assert "| 8 GiB |" in md
    parsed = parse_text((DATA / "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt").read_text())
    graded_md = plan_markdown(plan, grade(plan, parsed))
    assert "**Result:" in graded_md
    assert "## What to look at" in graded_md


def test_single_server_job_plans_the_scale_up_only():
    result = evaluate_typed(
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8}
    )
    plan = acceptance_plan(result)
    assert plan.fabric is None
    assert plan.scopes == (("1 server", 1),)
    assert plan.env == ()


def test_rows_with_impossible_times_are_not_graded(h100_roce_64):
    plan = acceptance_plan(h100_roce_64)
    check = plan.checks[0]
    text = "\n".join(
        [
            "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20",
            "# Using devices",
            *[
                f"#  Rank {r:2d} Group  0 Pid 1 on node{r // 8} device {r % 8} [0x00] H100"
                for r in range(check.gpus)
            ],
            f"  {check.nbytes}  2  float  sum  -1  1e-320  0.00  0.00  0  1e-320  0.00  0.00  0",
        ]
    )
    parsed = parse_text(text)
    assert parsed.runs[0].nodes == check.nodes
    grading = grade(plan, parsed)
    assert all(g.passed is None for g in grading.checks)


def test_a_serving_answer_without_a_compute_fabric_plans_each_scale_up_domain():
    """Replicas on eight B300 servers buy no compute fabric: their storage / in-band Ethernet
    carries no NCCL traffic, so the plan tests each server's NVLink (it had planned all-reduce
    over TCP sockets across the servers' storage ports); on GB300 NVL72 racks each rack's
    NVLink domain of 18 trays is the scope."""
    servers = evaluate_typed(
        {"workload": "inference", "model": "qwen3-235b-a22b", "gpu": "b300", "gpus": 64}
    )
    assert servers.recommendation.needs_compute_fabric is False
    plan = acceptance_plan(servers)
    assert (plan.fabric, plan.env, plan.scopes) == (None, (), (("1 server", 1),))
    assert "no compute fabric (scale-up only)" in plan.title
    assert "run on every one of the 8 servers" in plan.notes[-1]
    assert all(c.gpus == 8 and "NCCL_IB_DISABLE" not in c.command for c in plan.checks)
    racks = evaluate_typed(
        {"workload": "inference", "model": "llama3.1-405b", "gpu": "gb300-nvl72", "gpus": 144}
    )
    plan = acceptance_plan(racks)
    assert plan.scopes == (("one NVLink domain (18 servers)", 18),)
    assert all(c.gpus == 72 and "-np 72 -N 4" in c.command for c in plan.checks)
    assert "every one of the 2 NVLink domains" in plan.notes[-1]
    big = next(c for c in plan.checks if c.op == "all_reduce" and c.nbytes == 8 << 30)
    single = acceptance_plan(evaluate_typed({**SINGLE_GB300_TRAY, "gpus": 4}))
    tray = next(c for c in single.checks if c.op == "all_reduce" and c.nbytes == 8 << 30)
    # the rack's 72 GPUs reduce over NVLink like one tray's 4, never at a network's rate
    assert big.expected_low_gbytes_per_s > 0.5 * tray.expected_low_gbytes_per_s


def test_an_expected_range_whose_worlds_agree_reads_as_one_figure(h100_roce_64):
    plan = acceptance_plan(h100_roce_64)
    (two,) = [
        c
        for c in plan.checks
        if c.scope == "2 servers" and c.op == "all_reduce" and c.nbytes == 8 << 30
    ]
    same = dataclasses.replace(two, expected_high_gbytes_per_s=two.expected_low_gbytes_per_s)
    assert same.expected_range() == significant(two.expected_low_gbytes_per_s, 3)
    apart = dataclasses.replace(same, expected_high_gbytes_per_s=2 * two.expected_low_gbytes_per_s)
    low, high = apart.expected_range().split(" - ")
    assert float(high.replace(",", "")) > float(low.replace(",", ""))
    assert apart.expected_range(" – ").count(" – ") == 1
    md = plan_markdown(dataclasses.replace(plan, checks=(same,)))
    assert f"| 8 GiB | {same.expected_range()} |" in md
