"""DeepEP normal (internode) kernels: node-limited routing, the benchmark's own RDMA count and
the kernels' NVLink forwarding limit (docs/MODEL.md section 8)."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import (
    DEEPEP_NORMAL_FORWARD_BYTES_PER_S,
    MOE_NORMAL_FIXED_OVERHEAD_S,
    NCCL_HW_LATENCY_S,
)
from advisor.engine.model.collectives import CommDomain, make_domain
from advisor.engine.model.moe_dispatch import MoeDispatchResult, moe_dispatch, moe_token_bytes
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.tools.validation import _domain_for, calibration_rows, predict_all_to_all

TOKENS, HIDDEN, TOP_K = 4096, 7168, 8


def h800_servers(nodes: int, *, hopper: bool = True) -> CommDomain:
    return make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=200, hopper=hopper),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=8,
    )


def normal(d: CommDomain, node_limit: int | None = None, element: float = 1.0) -> MoeDispatchResult:
    return moe_dispatch(
        tokens_per_rank=TOKENS,
        hidden=HIDDEN,
        top_k=TOP_K,
        bytes_per_element=element,
        d=d,
        mode="normal",
        node_limit=node_limit,
    )


def test_a_token_crosses_the_nic_once_per_remote_server_holding_one_of_its_experts() -> None:
    r = normal(h800_servers(4))
    hit = 1 - (1 - 1 / 4) ** TOP_K
    per_copy = moe_token_bytes(HIDDEN, 1)
    assert r.rdma_bytes == pytest.approx(TOKENS * per_copy * hit * 3)
    # the benchmark also counts the sender's own server
    assert r.reported_rdma_bytes == pytest.approx(TOKENS * per_copy * hit * 4)


def test_node_limited_routing_reaches_at_most_the_limit_of_servers() -> None:
    per_copy = moe_token_bytes(HIDDEN, 1)
    limited = normal(h800_servers(8), node_limit=4)
    free = normal(h800_servers(8))
    sent = 4 * (1 - (1 - 1 / 4) ** TOP_K)
    assert limited.reported_rdma_bytes == pytest.approx(TOKENS * per_copy * sent)
    assert limited.rdma_bytes == pytest.approx(TOKENS * per_copy * sent * 7 / 8)
    assert limited.rdma_bytes < free.rdma_bytes
    # a limit at or above the servers changes nothing
    assert normal(h800_servers(4), node_limit=4) == normal(h800_servers(4))


def test_on_two_hopper_servers_the_kernels_forwarding_limit_binds() -> None:
    d = h800_servers(2)
    r = normal(d)
    per_copy = moe_token_bytes(HIDDEN, 1)
    targets = 1 - (1 - 1 / 16) ** TOP_K
    counted = TOKENS * per_copy * 16 * targets
    latency = NCCL_HW_LATENCY_S["net"]["ring"]["LL"] + d.net_extra_latency_s
    assert r.nvlink_bytes == pytest.approx(TOKENS * per_copy * 2 * 7 * targets)
    assert r.time_s == pytest.approx(
        MOE_NORMAL_FIXED_OVERHEAD_S + latency + counted / DEEPEP_NORMAL_FORWARD_BYTES_PER_S
    )
    # the NIC alone would be faster
    assert r.rdma_bytes / (d.net_bytes_per_s / 8) < counted / DEEPEP_NORMAL_FORWARD_BYTES_PER_S


def test_the_forwarding_limit_is_hoppers_only_and_not_inside_one_server() -> None:
    assert h800_servers(2, hopper=False).deepep_forward_bytes_per_s == 0.0
    assert h800_servers(2).deepep_forward_bytes_per_s == DEEPEP_NORMAL_FORWARD_BYTES_PER_S
    other = normal(h800_servers(2, hopper=False))
    assert other.time_s < normal(h800_servers(2)).time_s
    catalog = default_catalog()
    generations = {}
    for gpu_id in ("h800-sxm", "h100-sxm", "b200", "gb300-nvl72", "mi300x", "a100-80gb-sxm"):
        gpu = catalog.gpu(gpu_id)
        assert gpu is not None
        generations[gpu_id] = ScaleUp.of(gpu).hopper
    assert generations == {
        "h800-sxm": True,
        "h100-sxm": True,
        "b200": False,
        "gb300-nvl72": False,
        "mi300x": False,
        "a100-80gb-sxm": False,
    }
    one = normal(h800_servers(1))
    assert one.rdma_bytes == 0.0 and one.reported_rdma_bytes == 0.0
    assert one.nvlink_bytes == pytest.approx(TOKENS * TOP_K * moe_token_bytes(HIDDEN, 1) * 7 / 8)


def test_more_servers_never_send_fewer_bytes_over_the_nic_per_token() -> None:
    sends = [normal(h800_servers(n)).rdma_bytes for n in (2, 4, 8, 16)]
    assert sends == sorted(sends)


def test_the_normal_kernel_rows_are_read_with_the_benchmarks_own_count() -> None:
    rows = {row["id"]: row for row in calibration_rows()}
    row = rows["deepep-normal-dispatch-ep64"]
    assert row["config"]["topk_groups"] == 4  # the table's "top-4 groups"
    predicted = predict_all_to_all(row)
    _, d = _domain_for(row["config"])
    r = moe_dispatch(
        tokens_per_rank=TOKENS,
        hidden=HIDDEN,
        top_k=TOP_K,
        bytes_per_element=1,
        d=d,
        mode="normal",
        node_limit=4,
    )
    # the benchmark divides its count (own server included) by the time, not the NIC's bytes
    assert predicted["rdma_GBps_per_gpu"] == pytest.approx(r.reported_rdma_bytes / r.time_s / 1e9)
    assert predicted["rdma_GBps_per_gpu"] == pytest.approx(
        r.rdma_bytes_per_s / 1e9 * 8 / 7  # one of the 8 servers is the sender's own
    )


def _boundary_bytes(fabric: str, dispatcher: str) -> float:
    from advisor.engine import evaluate

    result = evaluate(
        {
            "workload": "training",
            "model": "deepseek-v3",
            "gpu": "h100-sxm",
            "gpus": 256,
            "parallelism": {
                "tp": 1,
                "pp": 8,
                "cp": 1,
                "dp": 32,
                "ep": 32,
                "micro_batch": 1,
                # pinned: the planner may interleave deeper for the all-to-all dispatcher's
                # longer layers (its host round trip), which sends more pipeline bytes
                "virtual_stages": 2,
                "moe_dispatcher": dispatcher,
            },
            "training": {"global_batch_sequences": 4096, "total_tokens": 1e12},
            "design": {"fabric": fabric, "nic_gbps": 400, "nics_per_node": 8},
        }
    )
    metrics = result["design_evaluation"]["metrics"]
    value = metrics["inter_server_bytes_per_gpu"]
    assert isinstance(value, float) and value > 0
    return value


def test_a_design_without_rdma_reports_the_all_to_all_bytes_it_is_priced_on() -> None:
    """DeepEP needs RDMA: on TCP Ethernet the dispatch is NCCL's all-to-all of every copy, and
    the design's inter-server bytes say so (they read DeepEP's share before, 2.2x fewer)."""
    roce = _boundary_bytes("roce", "deepep")
    assert _boundary_bytes("infiniband", "deepep") == pytest.approx(roce)
    tcp = _boundary_bytes("ethernet", "deepep")
    assert tcp > 1.5 * roce
    # NCCL's all-to-all is what TCP carries whatever the plan's dispatcher
    assert tcp == pytest.approx(_boundary_bytes("ethernet", "alltoall"))
    assert _boundary_bytes("roce", "alltoall") == pytest.approx(tcp)
