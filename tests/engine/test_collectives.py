"""Collective model: hand-computed cases, nccl-tests definitions and physical properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.facts.constants import FABRICS, NCCL_BASE_LATENCY_S, busbw_factor
from advisor.engine.model.collectives import (
    OPS,
    CommDomain,
    collective,
    make_domain,
    physical_busbw_bound_bytes_per_s,
)
from advisor.engine.model.moe_dispatch import moe_dispatch, moe_token_bytes
from advisor.engine.model.nccl_tree import tree_network_scale
from advisor.engine.model.network_rate import cross_leaf_fraction
from advisor.engine.model.scaleup import ScaleUp

GB = 1e9


def h100_domain(
    nodes: int = 2,
    *,
    fabric: str = "infiniband",
    nic_gbps: float = 400,
    nics: int = 8,
    nvls: bool = False,
    oversubscription: float = 1.0,
    sharp: bool = False,
    adaptive: bool | None = None,
) -> CommDomain:
    return make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82, nvls=nvls),
        fabric_id=fabric,
        nic_gbps=nic_gbps,
        nics_per_node=nics,
        oversubscription=oversubscription,
        adaptive_routing=adaptive,
        in_network_reduction=sharp,
    )


def test_busbw_factors_are_the_nccl_tests_ones() -> None:
    assert busbw_factor("all_reduce", 16) == pytest.approx(2 * 15 / 16)
    assert busbw_factor("all_gather", 8) == pytest.approx(7 / 8)
    assert busbw_factor("reduce_scatter", 8) == pytest.approx(7 / 8)
    assert busbw_factor("all_to_all", 4) == pytest.approx(3 / 4)
    assert busbw_factor("broadcast", 8) == 1.0


def test_large_ring_all_reduce_reaches_min_of_nvlink_and_node_nics() -> None:
    # 4 HDR NICs x 25 GB/s x 0.94 = 94 GB/s node bandwidth, far below NVLink: the NICs bind.
    d = make_domain(
        nodes=2,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=300, efficiency=0.75, nvls=False),
        fabric_id="infiniband",
        nic_gbps=200,
        nics_per_node=4,
    )
    r = collective("all_reduce", 16 * 2**30, d, "ring")
    expected = 4 * 25 * FABRICS["infiniband"].wire_efficiency
    assert r.busbw_bytes_per_s / GB == pytest.approx(expected, rel=0.02)
    assert r.busbw_bytes_per_s / GB < expected


def test_ring_time_is_latency_plus_bytes_over_bandwidth() -> None:
    d = make_domain(
        nodes=1,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82, nvls=False),
        fabric_id=None,
        nic_gbps=0,
        nics_per_node=0,
    )
    nbytes = 2**30
    r = collective("all_reduce", nbytes, d, "ring")
    bw = 450e9 * 0.82
    latency = NCCL_BASE_LATENCY_S["ring"]["Simple"] + 14 * 3.4e-6
    assert r.time_s == pytest.approx(latency + nbytes * 2 * 7 / 8 / bw, rel=1e-9)
    assert r.protocol == "Simple"


def test_small_messages_are_latency_bound_and_pick_a_low_latency_protocol() -> None:
    d = h100_domain()
    small = collective("all_reduce", 8 * 1024, d)
    large = collective("all_reduce", 8 * 2**30, d)
    assert small.protocol in ("LL", "LL128")
    assert small.busbw_bytes_per_s < 0.05 * large.busbw_bytes_per_s
    assert 5e-6 < small.time_s < 200e-6


def test_tree_beats_ring_for_small_messages_at_scale() -> None:
    d = h100_domain(nodes=128)
    ring = collective("all_reduce", 64 * 1024, d, "ring")
    tree = collective("all_reduce", 64 * 1024, d, "tree")
    assert tree.time_s < ring.time_s
    assert collective("all_reduce", 64 * 1024, d).algorithm == "tree"


def _tcp_domain(nic_gbps: float, nics: int, bound: str = "point") -> CommDomain:
    return make_domain(
        nodes=4,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=150, nvls=False),
        fabric_id="ethernet",
        nic_gbps=nic_gbps,
        nics_per_node=nics,
        bound=bound,
    )


def test_tcp_sockets_reach_4_to_6_gbytes_per_s_on_a_100g_nic() -> None:
    # NVIDIA/nccl #450: 4-6 GB/s all-reduce busbw over a 100G socket transport
    r = collective("all_reduce", 2**30, _tcp_domain(100, 1), "ring")
    assert 4e9 <= r.busbw_bytes_per_s <= 6e9


def test_tcp_is_capped_per_server_whatever_its_nics() -> None:
    # 8 x 400G over TCP still moves ~10 GB/s per server (InfiniBand 26-57x faster on Azure H100)
    tcp = collective("all_reduce", 2**30, _tcp_domain(400, 8), "ring")
    assert 6e9 <= tcp.busbw_bytes_per_s <= 14e9
    ib = collective("all_reduce", 2**30, h100_domain(nodes=4), "ring")
    assert 26 <= ib.busbw_bytes_per_s / tcp.busbw_bytes_per_s <= 57
    slow = collective("all_reduce", 2**30, _tcp_domain(400, 8, "high"), "ring")
    fast = collective("all_reduce", 2**30, _tcp_domain(400, 8, "low"), "ring")
    assert slow.time_s > tcp.time_s > fast.time_s


def test_in_network_reduction_raises_busbw_above_the_ring_limit() -> None:
    plain = collective("all_reduce", 8 * 2**30, h100_domain(nodes=16, nvls=True), "ring")
    sharp = collective("all_reduce", 8 * 2**30, h100_domain(nodes=16, nvls=True, sharp=True))
    assert sharp.algorithm in ("sharp", "nvls_sharp")
    assert sharp.busbw_bytes_per_s > plain.busbw_bytes_per_s


def test_ecmp_collisions_cost_bandwidth_only_without_adaptive_routing_beyond_one_leaf() -> None:
    assert cross_leaf_fraction(32) == 0.0
    big = 8 * 2**30
    roce = collective("all_reduce", big, h100_domain(nodes=128, fabric="roce"), "ring")
    roce_ar = collective(
        "all_reduce", big, h100_domain(nodes=128, fabric="roce", adaptive=True), "ring"
    )
    assert roce.busbw_bytes_per_s < roce_ar.busbw_bytes_per_s
    small = collective("all_reduce", big, h100_domain(nodes=16, fabric="roce"), "ring")
    small_ar = collective(
        "all_reduce", big, h100_domain(nodes=16, fabric="roce", adaptive=True), "ring"
    )
    assert small.busbw_bytes_per_s == pytest.approx(small_ar.busbw_bytes_per_s)


def test_oversubscription_slows_cross_leaf_collectives() -> None:
    big = 8 * 2**30
    one = collective("all_reduce", big, h100_domain(nodes=256, nics=1), "ring")
    three = collective(
        "all_reduce", big, h100_domain(nodes=256, nics=1, oversubscription=3), "ring"
    )
    assert three.time_s > 1.5 * one.time_s


def test_all_to_all_inter_node_share_is_bound_by_node_nics() -> None:
    d = h100_domain(nodes=4)
    nbytes = 2**30
    r = collective("all_to_all", nbytes, d)
    node_bw = 8 * 50e9 * FABRICS["infiniband"].wire_efficiency
    inter_bytes = 8 * nbytes * (32 - 8) / 32
    assert r.time_s == pytest.approx(inter_bytes / node_bw, rel=0.01)


def test_deepep_low_latency_dispatch_bytes_follow_tokens_hidden_topk() -> None:
    d = make_domain(
        nodes=2,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=200, nvls=True),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=8,
    )
    r = moe_dispatch(tokens_per_rank=128, hidden=7168, top_k=8, bytes_per_element=1, d=d)
    assert moe_token_bytes(7168, 1) == 7168 + 7168 / 128 * 4
    assert r.total_bytes == pytest.approx(128 * 8 * moe_token_bytes(7168, 1))
    assert r.rdma_bytes == pytest.approx(r.total_bytes / 2)  # half the experts are remote
    assert 80e-6 < r.time_s < 160e-6


def test_a_single_rank_costs_nothing() -> None:
    d = make_domain(
        nodes=1,
        ranks_per_node=1,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, nvls=False),
        fabric_id=None,
        nic_gbps=0,
        nics_per_node=0,
    )
    assert collective("all_reduce", 1e9, d).time_s == 0.0


# ----------------------------------------------------------------------------- properties

fabrics = st.sampled_from(("ethernet", "roce", "infiniband"))
ops = st.sampled_from(OPS)
sizes = st.floats(min_value=1.0, max_value=2.0**34)
node_counts = st.integers(min_value=1, max_value=2048)
nic_speeds = st.sampled_from((25.0, 100.0, 200.0, 400.0, 800.0))


@pytest.mark.parametrize("generation", ["", "cdna3", "gaudi3", "hopper", "blackwell"])
@pytest.mark.parametrize("nics", [4, 5, 7])
def test_an_added_nic_that_adds_tree_channels_and_no_bandwidth_is_not_slower(
    generation: str, nics: int
) -> None:
    """Without NCCL's per-channel caps the scale-up side bounds a two-server tree; a further
    NIC then adds channels to fill and no bandwidth (a 5th NIC read 0.4-3.5 % slower on a
    300-700 KB all-reduce); the tree is priced on the best NIC subset (MODEL.md 3)."""

    def domain(count: int) -> CommDomain:
        return make_domain(
            nodes=2,
            ranks_per_node=8,
            scaleup=ScaleUp(
                kind="nvlink", gbytes_per_s=450, efficiency=0.82, generation=generation
            ),
            fabric_id="roce",
            nic_gbps=400,
            nics_per_node=count,
        )

    for nbytes in (320_870.0, 382_189.0, 517_092.0, 542_222.0):
        fewer = collective("all_reduce", nbytes, domain(nics))
        more = collective("all_reduce", nbytes, domain(nics + 1))
        assert more.time_s <= fewer.time_s * (1 + 1e-12), (nbytes, fewer, more)


@settings(max_examples=300, deadline=None)
@given(
    op=ops,
    nbytes=sizes,
    nodes=node_counts,
    fabric=fabrics,
    nic=nic_speeds,
    nics=st.integers(1, 8),
    over=st.floats(1.0, 8.0),
)
def test_more_nic_bandwidth_is_never_slower(
    op: str, nbytes: float, nodes: int, fabric: str, nic: float, nics: int, over: float
) -> None:
    slow = collective(
        op,
        nbytes,
        h100_domain(nodes, fabric=fabric, nic_gbps=nic, nics=nics, oversubscription=over),
    )
    fast = collective(
        op,
        nbytes,
        h100_domain(nodes, fabric=fabric, nic_gbps=nic * 2, nics=nics, oversubscription=over),
    )
    more = collective(
        op,
        nbytes,
        h100_domain(
            nodes, fabric=fabric, nic_gbps=nic, nics=min(8, nics + 1), oversubscription=over
        ),
    )
    assert fast.time_s <= slow.time_s * (1 + 1e-9)
    assert more.time_s <= slow.time_s * (1 + 1e-9)


@settings(max_examples=300, deadline=None)
@given(
    op=ops,
    nbytes=sizes,
    nodes=node_counts,
    fabric=fabrics,
    nic=nic_speeds,
    nics=st.integers(1, 8),
    algorithm=st.sampled_from(("auto", "ring", "tree")),
)
def test_busbw_never_exceeds_the_physical_bottleneck_without_in_network_reduction(
    op: str, nbytes: float, nodes: int, fabric: str, nic: float, nics: int, algorithm: str
) -> None:
    d = h100_domain(nodes, fabric=fabric, nic_gbps=nic, nics=nics, nvls=False)
    algo = algorithm if op == "all_reduce" else "auto"
    r = collective(op, nbytes, d, algo)
    bound = physical_busbw_bound_bytes_per_s(op, d)
    assert r.busbw_bytes_per_s <= bound * (1 + 1e-9)
    if op in ("all_reduce", "all_gather", "reduce_scatter", "broadcast") and algo != "auto":
        # the double binary tree sends f(N) S per domain where the ring sends 2 S (trees.cc):
        # on two and three domains its network bound is the NICs' x 2 / f(N)
        net = d.net_bytes_per_s * (tree_network_scale(nodes) if algo == "tree" else 1.0)
        ring_limit = min(d.scaleup_bytes_per_s, net if nodes > 1 else math.inf)
        assert r.busbw_bytes_per_s <= ring_limit * (1 + 1e-9)


@settings(max_examples=300, deadline=None)
@given(
    op=ops,
    nbytes=sizes,
    nodes=node_counts,
    fabric=fabrics,
    nic=nic_speeds,
    nvls=st.booleans(),
    sharp=st.booleans(),
    over=st.floats(1.0, 16.0),
)
def test_collectives_never_return_nan_or_infinity(
    op: str,
    nbytes: float,
    nodes: int,
    fabric: str,
    nic: float,
    nvls: bool,
    sharp: bool,
    over: float,
) -> None:
    d = h100_domain(
        nodes, fabric=fabric, nic_gbps=nic, nvls=nvls, sharp=sharp, oversubscription=over
    )
    r = collective(op, nbytes, d)
    for value in (r.time_s, r.algbw_bytes_per_s, r.busbw_bytes_per_s):
        assert math.isfinite(value) and value >= 0
    assert r.time_s > 0


def test_one_point_to_point_stream_uses_one_nic() -> None:
    d = h100_domain(nodes=2, fabric="infiniband", nic_gbps=400, nics=8)
    r = collective("p2p", 2**30, d)
    one_nic = 50e9 * FABRICS["infiniband"].wire_efficiency
    assert r.busbw_bytes_per_s == pytest.approx(one_nic, rel=0.01)
    assert r.busbw_bytes_per_s < one_nic
