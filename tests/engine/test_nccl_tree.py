"""The bytes NCCL's double binary tree sends per domain, and how ``auto`` and a forced tree
price them (docs/MODEL.md section 3, "The tree's network bytes")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.collectives import CommDomain, collective, make_domain
from advisor.engine.model.nccl_tree import (
    tree_network_bytes_factor,
    tree_network_scale,
    tuner_tree_network_bytes_factor,
)
from advisor.engine.model.scaleup import ScaleUp


def _btree(n: int, rank: int) -> tuple[int, int, int]:
    """NVIDIA/nccl ``src/graph/trees.cc`` ``ncclGetBtree`` (v2.30.7-1): (parent, child0, child1)."""
    bit = 1
    while bit < n:
        if bit & rank:
            break
        bit <<= 1
    if rank == 0:
        return -1, -1, (bit >> 1 if n > 1 else -1)
    up = (rank ^ bit) | (bit << 1)
    if up >= n:
        up = rank ^ bit
    low = bit >> 1
    down0 = -1 if low == 0 else rank - low
    down1 = -1 if low == 0 else rank + low
    while down1 >= n:
        down1 = -1 if low == 0 else rank + low
        low >>= 1
    return up, down0, down1


def _dtree(n: int, rank: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """``ncclGetDtree``: the second tree shifts the first by one (odd n) or mirrors it (even n)."""
    first = _btree(n, rank)
    if n % 2 == 1:
        links = _btree(n, (rank - 1 + n) % n)
        second = tuple(-1 if x == -1 else (x + 1) % n for x in links)
    else:
        links = _btree(n, n - 1 - rank)
        second = tuple(-1 if x == -1 else n - 1 - x for x in links)
    return first, (second[0], second[1], second[2])


@pytest.mark.parametrize("nodes", range(2, 41))
def test_tree_bytes_follow_nccls_double_binary_tree(nodes: int) -> None:
    # each tree carries half the message; a node sends its half to its parent (reduce) and to
    # each child (broadcast): the busiest node's bytes per direction, in units of S
    busiest = max(
        sum(0.5 * sum(1 for peer in tree if peer != -1) for tree in _dtree(nodes, rank))
        for rank in range(nodes)
    )
    assert tree_network_bytes_factor(nodes) == busiest


def test_the_tuner_prices_two_nodes_at_bw_intra_and_more_at_bw_inter() -> None:
    assert tree_network_bytes_factor(1) == tuner_tree_network_bytes_factor(1) == 0.0
    assert tuner_tree_network_bytes_factor(2) == tree_network_bytes_factor(2) == 1.0
    assert tuner_tree_network_bytes_factor(3) == 2.0
    assert tree_network_bytes_factor(3) == 1.5
    assert tree_network_scale(3) == pytest.approx(4.0 / 3.0)
    assert tree_network_scale(3, tuner=True) == 1.0
    assert all(
        tree_network_scale(n) == tree_network_scale(n, tuner=True) == 1.0 for n in range(4, 64)
    )


def _gb200_partitions(nodes: int = 3, nic_gbps: float = 400.0) -> CommDomain:
    """NVIDIA/nccl #1801's setup: NVLink partitions of 8 GB200, a 400G NIC per GPU, NCCL 2.27.3,
    NVLS off."""
    gpu = default_catalog().gpu("gb200-nvl72")
    assert gpu is not None
    return make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp.of(gpu, nvls=False),
        fabric_id="infiniband",
        nic_gbps=nic_gbps,
        nics_per_node=8,
        nccl_version=(2, 27, 3),
    )


def test_three_domains_auto_takes_the_ring_a_forced_tree_is_faster() -> None:
    # NCCL's tuner rates the three-node tree at bwInter (2 S per node): it takes the ring, whose
    # bytes bind at the NICs, while the tree sends 1.5 S per node
    d = _gb200_partitions()
    size = float(16 << 30)
    auto = collective("all_reduce", size, d)
    ring = collective("all_reduce", size, d, "ring")
    tree = collective("all_reduce", size, d, "tree")
    assert auto.algorithm == "ring"
    assert auto.time_s == ring.time_s
    assert tree.time_s < auto.time_s
    # bound by the NICs at 2 / 1.5 of the ring's bus bandwidth, less NCCL's tree factor
    assert ring.busbw_bytes_per_s < tree.busbw_bytes_per_s
    assert tree.busbw_bytes_per_s <= d.net_bytes_per_s * 4.0 / 3.0


def test_two_domains_tree_reaches_twice_the_network_bus_bandwidth() -> None:
    # on two nodes each sends S, not 2 S: the tree goes beyond the NICs' bus bandwidth (NCCL's
    # tuner and search price this too: bwIntra up to 2 x bwInter), NVLink still bounds it
    slow = _gb200_partitions(nodes=2, nic_gbps=100.0)
    size = float(16 << 30)
    tree = collective("all_reduce", size, slow, "tree")
    ring = collective("all_reduce", size, slow, "ring")
    assert ring.busbw_bytes_per_s <= slow.net_bytes_per_s
    assert slow.net_bytes_per_s < tree.busbw_bytes_per_s <= 2 * slow.net_bytes_per_s
    assert collective("all_reduce", size, slow).algorithm == "tree"


@settings(max_examples=120, deadline=None)
@given(
    log_bytes=st.floats(3.0, 34.0),
    nic=st.sampled_from((100.0, 200.0, 400.0, 800.0)),
    nics=st.sampled_from((1, 2, 4, 8)),
    algorithm=st.sampled_from(("auto", "tree")),
)
def test_on_three_domains_a_larger_all_reduce_never_takes_less_time(
    log_bytes: float, nic: float, nics: int, algorithm: str
) -> None:
    gpu = default_catalog().gpu("h100-sxm")
    assert gpu is not None
    d = make_domain(
        nodes=3,
        ranks_per_node=4,
        scaleup=ScaleUp.of(gpu, nvls=False),
        fabric_id="infiniband",
        nic_gbps=nic,
        nics_per_node=nics,
    )
    small = 2.0**log_bytes
    t_small = collective("all_reduce", small, d, algorithm).time_s
    for larger in (small * 1.1, small * 1.5, small * 3.0):
        assert collective("all_reduce", larger, d, algorithm).time_s >= t_small * (1 - 1e-12)
