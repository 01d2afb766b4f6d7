"""The collective model follows NCCL's own tuner (src/graph/tuning.cc, 2.26-2.30) where it
prices the same thing: protocol bandwidth caps, hop counts and latency tables, each checked
against the formula of ``ncclTopoTuneModel`` / ``ncclTopoGetAlgoTime`` worked by hand."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import (
    FABRICS,
    NCCL_BASE_LATENCY_S,
    NCCL_HW_LATENCY_S,
    NCCL_NET_OVERHEAD_S,
    NCCL_NVLS_BW_FACTOR,
    NCCL_TREE_BW_FACTOR,
)
from advisor.engine.model import collectives as c
from advisor.engine.model.collectives import (
    LL_MAX_BUSBW_ONE_NODE,
    CommDomain,
    collective,
    make_domain,
    tree_correction,
)
from advisor.engine.model.scaleup import ScaleUp
from tests.support.engine_build import ran_on_source


def _one_server(gpu_id: str) -> CommDomain:
    gpu = default_catalog().gpu(gpu_id)
    assert gpu is not None
    return make_domain(
        nodes=1,
        ranks_per_node=8,
        scaleup=ScaleUp.of(gpu, nvls=False),
        fabric_id=None,
        nic_gbps=0.0,
        nics_per_node=0,
    )


def test_one_server_ll_cap_follows_the_gpus_compute_capability(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # LL alone by replacing collectives._protocols, which compiled collectives calls directly:
    # on the compiled build the test runs again on the source
    if ran_on_source(request):
        return
    # llMaxBws[compCapIndex][0]: the cap is the GPU generation's, not read off the NVLink speed
    # (an H800's 200 GB/s NVLink is still Hopper: 141 GB/s, which its 0.5 x bus does not reach;
    # a B200 is Blackwell: 282 GB/s, twice Hopper's)
    h800 = _one_server("h800-sxm")
    b200 = _one_server("b200")
    assert h800.ll_cap_one_node == LL_MAX_BUSBW_ONE_NODE["hopper"] == 141e9
    assert b200.ll_cap_one_node == LL_MAX_BUSBW_ONE_NODE["blackwell"] == 282e9
    nbytes = 1 << 30
    monkeypatch.setattr(c, "_protocols", lambda _d: ("LL",))
    for d, bw in ((h800, 0.5 * h800.scaleup_bytes_per_s), (b200, 282e9)):
        # the ring's LL bus bandwidth: min(0.5 x bus, cap); H800 below its cap, B200 at it
        assert bw == min(0.5 * d.scaleup_bytes_per_s, d.ll_cap_one_node)
        # the latency of 14 NVLink steps, each the generation's (Blackwell's measured extra)
        hop = NCCL_HW_LATENCY_S[d.scaleup_latency_class]["ring"]["LL"]
        lat = NCCL_BASE_LATENCY_S["ring"]["LL"] + 14 * hop
        t_ll, p = c._ring_time("all_reduce", nbytes, d)
        assert p == "LL"
        assert t_ll == pytest.approx(lat + nbytes * 2 * 7 / 8 / bw, rel=1e-12)


def test_a_gpu_without_a_compute_capability_row_keeps_the_bandwidth_fallback() -> None:
    d = make_domain(
        nodes=1,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82),
        fabric_id=None,
        nic_gbps=0.0,
        nics_per_node=0,
    )
    assert d.ll_cap_one_node == 0.0


def test_tree_ll_bandwidth_is_the_bus_bandwidth_over_3_8(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # LL alone by replacing collectives._protocols (compiled: runs again on the source)
    if ran_on_source(request):
        return
    # tuning.cc: tree busBw = 0.92 x bus; LL: min(busBw / 3.8, llMaxBw); algbw = 0.5 x busBw.
    # In one Hopper server the cap (141 GB/s) does not bind: 0.92 x 369 / 3.8 = 89 GB/s.
    d = _one_server("h100-sxm")
    nbytes = 64 * 2**20
    monkeypatch.setattr(c, "_protocols", lambda _d: ("LL",))
    t, p = c._tree_time(nbytes, d)
    assert p == "LL"
    bus = d.scaleup_bytes_per_s * NCCL_TREE_BW_FACTOR
    lat = NCCL_BASE_LATENCY_S["tree"]["LL"] + 2 * 7 * NCCL_HW_LATENCY_S["nvlink"]["tree"]["LL"]
    algbw = 0.5 * min(bus / 3.8, d.ll_cap_one_node) * tree_correction("LL", nbytes)
    assert t == pytest.approx(lat + nbytes / algbw, rel=1e-12)


def _ib(nodes: int, ranks_per_node: int) -> CommDomain:
    return make_domain(
        nodes=nodes,
        ranks_per_node=ranks_per_node,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=8,
    )


def test_tree_counts_floor_log2_network_hops() -> None:
    # 2 x (log2i(6) = 2) network hops each way on 6 servers, as on 4 (not log2(6) = 2.58)
    six, four = _ib(6, 8), _ib(4, 8)
    t6 = collective("all_reduce", 8, six, "tree")
    t4 = collective("all_reduce", 8, four, "tree")
    assert t6.protocol == t4.protocol == "LL"
    assert t6.time_s == pytest.approx(t4.time_s, rel=1e-12)
    extra = FABRICS["infiniband"].extra_step_latency_s
    lat = NCCL_BASE_LATENCY_S["tree"]["LL"] + 2 * (
        7 * NCCL_HW_LATENCY_S["nvlink"]["tree"]["LL"]
        + 2 * (NCCL_HW_LATENCY_S["net"]["tree"]["LL"] + extra)
    )
    # LL beyond two servers: min(0.92 x bus / 3.8, 20.4 GB/s) = 20.4, algbw half of it; the
    # 8 B cross the tree's 2 x 2 network stages whole (tree_pipeline_factor)
    assert t6.time_s == pytest.approx(lat + 4 * 8 / (0.5 * 20.4e9), rel=1e-12)


def test_one_rank_per_server_ring_pays_the_trees_network_latency() -> None:
    # tuning.cc: "With ppn=1 latencies are fully exposed, use the Tree network latency"
    d = _ib(4, 1)
    r = collective("all_reduce", 8, d, "ring")
    assert r.protocol == "LL"
    extra = FABRICS["infiniband"].extra_step_latency_s
    lat = NCCL_BASE_LATENCY_S["ring"]["LL"] + 2 * 3 * (
        NCCL_HW_LATENCY_S["net"]["tree"]["LL"] + extra
    )
    assert r.time_s == pytest.approx(lat + 8 * 2 * 3 / 4 / 20.4e9, rel=1e-9)
    # with 8 ranks per server the inter-server steps keep the ring's own network latency
    d8 = _ib(4, 8)
    r8 = collective("all_reduce", 8, d8, "ring")
    intra = max(NCCL_HW_LATENCY_S["nvlink"]["ring"]["LL"], NCCL_NET_OVERHEAD_S)
    lat8 = (
        NCCL_BASE_LATENCY_S["ring"]["LL"]
        + (62 - 6) * intra
        + 6 * (NCCL_HW_LATENCY_S["net"]["ring"]["LL"] + extra)
    )
    assert r8.time_s == pytest.approx(lat8 + 8 * 2 * 31 / 32 / 20.4e9, rel=1e-9)


def test_nvls_tree_runs_its_network_tree_on_at_most_32_heads() -> None:
    # Two NVL72 racks of 72 GPUs with a 100G NIC per GPU: NCCL's NVLS heads are one GPU per
    # NIC, at most 32 (NCCL_MAX_NVLS_ARITY), so the tree between racks uses 32 of 72 NICs.
    gpu = default_catalog().gpu("gb200-nvl72")
    assert gpu is not None
    racks = make_domain(
        nodes=2,
        ranks_per_node=72,
        scaleup=ScaleUp.of(gpu),
        fabric_id="infiniband",
        nic_gbps=100,
        nics_per_node=72,
    )
    assert c.nvls_tree_nic_share(racks) == pytest.approx(32 / 72)
    nbytes = 16 * 2**30
    t = c._hierarchical_time(nbytes, racks, nvls=True, sharp=False)
    intra = nbytes / (racks.scaleup_bytes_per_s * NCCL_NVLS_BW_FACTOR * racks.nvls_generation)
    ranks = racks.ranks
    inter = 2 * (ranks - 1) / ranks * nbytes / (racks.net_bytes_per_s * 2 * 32 / 72)
    assert inter > intra  # the 32 heads' NICs bind
    fill = c.nvls_pipeline_factor(nbytes, racks)
    lat = NCCL_HW_LATENCY_S["nvlink"]["nvls"]["Simple"] + 2 * (
        NCCL_HW_LATENCY_S["net"]["nvls_tree"]["Simple"] + racks.net_extra_latency_s
    )
    assert t == pytest.approx(lat + inter * fill, rel=1e-12)
    # eight-GPU servers with a NIC each keep every NIC (8 heads)
    assert c.nvls_tree_nic_share(_ib(4, 8)) == 1.0


def test_ring_and_tree_send_over_at_most_32_nics_of_a_domain() -> None:
    # NCCL's search finds at most 32 ring channels per node (init.cc: ringGraph->maxChannels =
    # MAXCHANNELS/2; the tree at most the ring's), each through one NIC: two NVL72 racks with
    # a 100G NIC per GPU send a ring or tree over 32 of their 72 NICs.
    gpu = default_catalog().gpu("gb200-nvl72")
    assert gpu is not None
    racks = make_domain(
        nodes=2,
        ranks_per_node=72,
        scaleup=ScaleUp.of(gpu, nvls=False),
        fabric_id="infiniband",
        nic_gbps=100,
        nics_per_node=72,
    )
    assert c.ring_tree_nic_share(racks) == pytest.approx(32 / 72)
    wire = racks.net_bytes_per_s * 32 / 72
    assert wire < racks.scaleup_bytes_per_s  # the 32 NICs bind, not NVLink
    nbytes = 16 * 2**30
    ring = collective("all_reduce", nbytes, racks, "ring")
    assert ring.protocol == "Simple"
    moved = nbytes * 2 * (racks.ranks - 1) / racks.ranks
    assert ring.time_s > moved / wire
    assert ring.busbw_bytes_per_s <= wire
    tree = collective("all_reduce", nbytes, racks, "tree")
    # on two domains the double binary tree sends S per domain where the ring sends 2 S
    # (trees.cc; nccl_tree): twice the wire's bus bandwidth, still within the 32 NICs
    assert tree.busbw_bytes_per_s <= 2 * wire * NCCL_TREE_BW_FACTOR
    assert tree.busbw_bytes_per_s > wire
    # a communicator of one GPU per rack, or eight-GPU servers, keeps every NIC it has
    one = make_domain(
        nodes=2,
        ranks_per_node=1,
        scaleup=ScaleUp.of(gpu, nvls=False),
        fabric_id="infiniband",
        nic_gbps=100,
        nics_per_node=72,
        net_share=1 / 72,
    )
    assert c.ring_tree_nic_share(one) == 1.0
    assert c.ring_tree_nic_share(_ib(4, 8)) == 1.0
