"""Medium-size collectives: NCCL's own tree correction and the ring's plateau latency."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.facts.constants import (
    NCCL_BASE_LATENCY_S,
    NCCL_HW_LATENCY_S,
    NCCL_NET_OVERHEAD_S,
    NCCL_TREE_BW_FACTOR,
)
from advisor.engine.model.collectives import (
    NVLS_CHANNELS_HOPPER,
    NVLS_PIPELINE_STAGES,
    RING_PLATEAU_LATENCY_FACTOR,
    CommDomain,
    collective,
    collective_time_s,
    make_domain,
    nvls_chunk_bytes,
    nvls_pipeline_factor,
    per_channel_cap,
    ring_tree_channels,
    search_channels,
    tree_chunk_bytes,
    tree_correction,
    tree_pipeline_factor,
)
from advisor.engine.model.scaleup import ScaleUp


def _h100(nodes: int) -> CommDomain:
    return make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp(
            kind="nvlink",
            gbytes_per_s=450,
            efficiency=0.82,
            nvls=False,
            hopper=True,
            generation="hopper",
        ),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=8,
    )


def test_tree_correction_is_nccls_table_by_log2_of_64_byte_units() -> None:
    # tuning.cc treeCorrectionFactor, index floor(log2(bytes >> 6))
    assert tree_correction("Simple", 16 * 2**20) == 0.7  # 2^24 B -> index 18
    assert tree_correction("LL128", 2**20) == 0.6  # index 14
    assert tree_correction("LL", 2**17) == 0.5  # index 11
    assert tree_correction("Simple", 2**13) == 0.8  # index 7
    assert tree_correction("Simple", 64) == 0.9  # index 0
    # below 64 B and from 512 MB (index 23) on: no correction, as ncclTopoGetAlgoTime
    assert tree_correction("Simple", 63) == 1.0
    assert tree_correction("Simple", 2**29) == 1.0
    assert tree_correction("LL128", 2**34) == 1.0
    # between powers of two: linear in log2(size), 0.6 -> 0.8 from 2 MB to 4 MB for LL128
    assert tree_correction("LL128", 64 * 2**15.5) == pytest.approx(0.7)
    # from 256 MB (index 22) to 512 MB the factor rises to 1
    assert tree_correction("Simple", 64 * 2**22.5) == pytest.approx(0.95)


def test_tree_time_is_latency_plus_bytes_over_corrected_half_bus_bandwidth() -> None:
    d = _h100(4)
    nbytes = 4 * 2**20  # 4 MB: index 16
    t, algo, proto = collective_time_s("all_reduce", nbytes, d, "tree")
    assert algo == "tree"
    # NCCL's per-channel caps on 4 nodes, 8 search channels: tree 36, LL128 tree 29 GB/s each
    bus = min(min(d.scaleup_bytes_per_s, d.net_bytes_per_s) * NCCL_TREE_BW_FACTOR, 8 * 36e9)
    bus128 = min(bus * 120 / 128, 8 * 29e9)
    hw_intra = NCCL_HW_LATENCY_S["nvlink"]["tree"]
    hw_net = NCCL_HW_LATENCY_S["net"]["tree"]
    # the chunk pipeline: 16 channels; LL128 chunks of 18,000 B (576,000 halved while a
    # channel gets fewer than 30.4, then 7.6 of them), 4 network stages up and down; Simple
    # one partial 512 KB chunk per channel through 4 network and 14 NVLink stages
    k128 = nbytes / (16 * 18000)
    expected = {
        "LL128": NCCL_BASE_LATENCY_S["tree"]["LL128"]
        + 2 * (7 * hw_intra["LL128"] + 2 * (hw_net["LL128"] + d.net_extra_latency_s))
        + nbytes / (0.5 * bus128 * 0.8) * (k128 + 4 - 1) / k128,
        "Simple": NCCL_BASE_LATENCY_S["tree"]["Simple"]
        + 2 * (7 * hw_intra["Simple"] + 2 * (hw_net["Simple"] + d.net_extra_latency_s))
        + nbytes / (0.5 * bus * 0.7) * 18,
    }
    assert proto in expected
    assert t == pytest.approx(expected[proto])
    assert t <= min(expected.values()) * (1 + 1e-9)


def test_inter_node_ring_all_reduce_on_simple_pays_the_plateau_latency() -> None:
    d = _h100(2)
    n, nodes = 16, 2
    nbytes = 2.0**33  # large: Simple is the fastest protocol
    t, algo, proto = collective_time_s("all_reduce", nbytes, d, "ring")
    assert (algo, proto) == ("ring", "Simple")
    intra = max(NCCL_HW_LATENCY_S["nvlink"]["ring"]["Simple"], 3 * NCCL_NET_OVERHEAD_S)
    lat = (
        NCCL_BASE_LATENCY_S["ring"]["Simple"]
        + (2 * (n - 1) - 2 * (nodes - 1)) * intra
        + 2 * (nodes - 1) * (NCCL_HW_LATENCY_S["net"]["ring"]["Simple"] + d.net_extra_latency_s)
    )
    bus = min(d.scaleup_bytes_per_s, d.net_bytes_per_s)
    assert t == pytest.approx(RING_PLATEAU_LATENCY_FACTOR * lat + nbytes * 2 * (n - 1) / n / bus)
    # inside one server there is no plateau term
    one = _h100(1)
    t1, _, p1 = collective_time_s("all_reduce", nbytes, one, "ring")
    lat1 = NCCL_BASE_LATENCY_S["ring"]["Simple"] + 2 * 7 * NCCL_HW_LATENCY_S["nvlink"]["ring"][p1]
    assert p1 == "Simple"
    assert t1 == pytest.approx(lat1 + nbytes * 2 * 7 / 8 / one.scaleup_bytes_per_s)


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.integers(1, 16),
    log_bytes=st.floats(3.0, 34.0),
    algorithm=st.sampled_from(["auto", "ring", "tree"]),
)
def test_a_larger_all_reduce_never_takes_less_time(
    nodes: int, log_bytes: float, algorithm: str
) -> None:
    """The correction changes by at most 0.9/0.7 between doubling sizes, so time stays monotone."""
    d = _h100(nodes)
    small = 2.0**log_bytes
    for larger in (small * 1.3, small * 2.0):
        assert collective_time_s("all_reduce", larger, d, algorithm)[0] >= collective_time_s(
            "all_reduce", small, d, algorithm
        )[0] * (1 - 1e-12)
    assert collective("all_reduce", small, d, algorithm).busbw_bytes_per_s > 0


def _h100_nvls(nodes: int) -> CommDomain:
    return make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82, nvls=True),
        fabric_id="infiniband" if nodes > 1 else None,
        nic_gbps=400 if nodes > 1 else 0,
        nics_per_node=8 if nodes > 1 else 0,
    )


def test_nvls_chunks_follow_nccls_calc_coll_chunking() -> None:
    one, two, four = _h100_nvls(1), _h100_nvls(2), _h100_nvls(4)
    # 16 channels x 8 heads = 128 concurrent (channel, head) pairs on Hopper
    assert one.nvls_channels == two.nvls_channels == NVLS_CHANNELS_HOPPER == 16
    assert nvls_chunk_bytes(2.0**30, one) == 128 * 1024  # 1 GiB is not below 64 x 128 x 128 KB
    assert nvls_chunk_bytes(2.0**27, one) == 64 * 1024
    assert nvls_chunk_bytes(2.0**25, one) == 32 * 1024  # below 8 x 128 x 64 KB
    assert nvls_chunk_bytes(2.0**22, one) == 16 * 1024
    assert nvls_chunk_bytes(2.0**34, two) == 128 * 1024
    assert nvls_chunk_bytes(2.0**24, two) == 64 * 1024  # 16 MB: below 4 x 128 x 128 KB
    assert nvls_chunk_bytes(2.0**20, two) == 32 * 1024
    assert nvls_chunk_bytes(2.0**34, four) == 64 * 1024  # NVLS-tree cap from 4 domains


def test_nvls_pipeline_fill_is_chunks_plus_two_stages_over_chunks() -> None:
    two = _h100_nvls(2)
    # 16 MB over 128 pairs of 64 KB chunks: 2 chunks each, (2 + 3 - 1) / 2
    assert nvls_pipeline_factor(2.0**24, two) == pytest.approx((2 + NVLS_PIPELINE_STAGES - 1) / 2)
    # one partial chunk still crosses every stage
    assert nvls_pipeline_factor(2.0**10, two) == NVLS_PIPELINE_STAGES
    assert nvls_pipeline_factor(2.0**34, two) < 1.003


@given(st.floats(min_value=2.0**10, max_value=2.0**36))
@settings(max_examples=60, deadline=None)
def test_nvls_time_never_decreases_with_size(nbytes: float) -> None:
    d = _h100_nvls(2)
    t1 = collective_time_s("all_reduce", nbytes, d, "nvls")[0]
    t2 = collective_time_s("all_reduce", nbytes * 1.07, d, "nvls")[0]
    assert t2 >= t1 * (1 - 1e-9)


def test_auto_takes_the_fastest_algorithm_with_the_nvls_fill_priced() -> None:
    d = _h100_nvls(2)
    nbytes = 2.0**24
    t_nvls = collective_time_s("all_reduce", nbytes, d, "nvls")[0]
    t_tree = collective_time_s("all_reduce", nbytes, d, "tree")[0]
    t_ring = collective_time_s("all_reduce", nbytes, d, "ring")[0]
    assert t_tree < t_nvls  # with its pipeline fill NVLS-tree is slower at 16 MB ...
    t, algo, _ = collective_time_s("all_reduce", nbytes, d)
    # (the tree's own chunk pipeline leaves the ring a little faster still)
    assert (algo, t) == ("ring", pytest.approx(t_ring))
    assert t_ring < t_tree
    # ... and faster again once the pipeline is deep (no step in time where the choice flips)
    big = 2.0**33
    assert collective_time_s("all_reduce", big, d)[1] == "nvls_tree"


def test_blackwell_nvls_reaches_nccls_lower_share_of_its_links() -> None:
    """NCCL's Blackwell NVLS efficiency over Hopper's, times what NCCL's measured one-server
    all-reduce reaches of it (constants.NVLS_BLACKWELL_MEASURED)."""
    from advisor.engine.facts.constants import NVLS_BLACKWELL_MEASURED
    from advisor.engine.model.collectives import NVLS_EFFICIENCY_BLACKWELL, NVLS_EFFICIENCY_HOPPER

    def one(blackwell: bool) -> CommDomain:
        return make_domain(
            nodes=1,
            ranks_per_node=8,
            scaleup=ScaleUp(
                kind="nvlink", gbytes_per_s=900, efficiency=0.82, nvls=True, blackwell=blackwell
            ),
            fabric_id=None,
            nic_gbps=0,
            nics_per_node=0,
        )

    hopper_like, blackwell = one(False), one(True)
    assert blackwell.nvls_channels == 24 and hopper_like.nvls_channels == 16
    nbytes = 2.0**36  # the chunk pipeline's fill is negligible
    t_h = collective_time_s("all_reduce", nbytes, hopper_like, "nvls")[0]
    t_b = collective_time_s("all_reduce", nbytes, blackwell, "nvls")[0]
    assert t_h / t_b == pytest.approx(
        NVLS_EFFICIENCY_BLACKWELL / NVLS_EFFICIENCY_HOPPER * NVLS_BLACKWELL_MEASURED, rel=2e-3
    )


def test_tree_channels_chunks_and_pipeline_follow_nccl_defaults() -> None:
    h100 = _h100(4)
    # 8 search channels (one per 400G NIC), doubled for execution (NCCL logs: 16 coll channels)
    assert search_channels(h100) == 8
    assert ring_tree_channels(h100) == 16
    # before Hopper ncclTopoDupChannels doubles the search's channels (an A100 server's 8: 16)
    a100 = make_domain(
        nodes=2,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=300, efficiency=0.8, generation="ampere"),
        fabric_id="infiniband",
        nic_gbps=200,
        nics_per_node=8,
    )
    assert search_channels(a100) == 16 and ring_tree_channels(a100) == 32
    # a rack with a NIC per GPU: 32 search channels (MAXCHANNELS / 2), 64 run
    nvl72 = make_domain(
        nodes=20,
        ranks_per_node=72,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=900, efficiency=0.82, generation="blackwell"),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=72,
    )
    assert search_channels(nvl72) == 32 and ring_tree_channels(nvl72) == 64
    # NICs that add no bandwidth (a per-server TCP cap) add no channel to fill
    tcp = [
        make_domain(
            nodes=4,
            ranks_per_node=8,
            scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82, generation="hopper"),
            fabric_id="ethernet",
            nic_gbps=400,
            nics_per_node=n,
        )
        for n in (1, 2, 8)
    ]
    assert len({ring_tree_channels(d) for d in tcp}) == 1
    assert tree_chunk_bytes("Simple", 2**30, h100) == 512 * 1024
    assert tree_chunk_bytes("LL", 2**20, h100) == 32 * 1024
    assert tree_chunk_bytes("LL128", 2**34, h100) == 576000
    assert tree_chunk_bytes("LL128", 4 * 2**20, h100) == 18000
    # one domain: no network stage, no fill
    assert tree_pipeline_factor("Simple", 2**20, _h100(1)) == 1.0
    # large messages: the fill vanishes; Simple also fills along the NVLink chain
    assert tree_pipeline_factor("LL128", 2**34, h100) == pytest.approx(1.0, abs=2e-3)
    assert tree_pipeline_factor("Simple", 2**34, h100) > tree_pipeline_factor("LL128", 2**34, h100)
    # a message smaller than one chunk per channel crosses every stage whole: 4 network stages
    assert tree_pipeline_factor("LL128", 2**12, h100) == pytest.approx(4.0)
    assert tree_pipeline_factor("Simple", 2**12, h100) == pytest.approx(4.0 + 14.0)


def test_ring_and_tree_keep_nccls_per_channel_caps_across_domains() -> None:
    """tuning.cc 2.30.7: a ring's LL128 and a tree's bus bandwidth are capped at the search's
    channels x a per-channel figure by compute capability and node count."""
    four = _h100(4)
    assert per_channel_cap("tree", four) == pytest.approx(8 * 36e9)
    assert per_channel_cap("tree_ll128", four) == pytest.approx(8 * 29e9)
    assert per_channel_cap("ring_ll128", four) == pytest.approx(8 * 36.7e9)
    # on four H100 servers the tree's cap binds: a large tree all-reduce runs at 8 x 36 GB/s
    assert (
        per_channel_cap("tree", four) < min(four.scaleup_bytes_per_s, four.net_bytes_per_s) * 0.92
    )
    big = collective("all_reduce", 2.0**36, four, "tree")
    assert big.busbw_bytes_per_s == pytest.approx(8 * 36e9 * 31 / 32, rel=5e-3)
    # on two servers the tree cap (41.4 per channel) sits 2.5 % under NVLink x 0.92
    two = _h100(2)
    assert per_channel_cap("tree", two) == pytest.approx(8 * 41.4e9)
    uncapped = min(two.scaleup_bytes_per_s, two.net_bytes_per_s) * 0.92
    assert per_channel_cap("tree", two) / uncapped == pytest.approx(0.975, abs=0.01)
    # no cap inside one domain, nor for a GPU NCCL has no row for
    assert per_channel_cap("tree", _h100(1)) == float("inf")
    other = make_domain(
        nodes=4,
        ranks_per_node=8,
        scaleup=ScaleUp(kind="xgmi", gbytes_per_s=448, generation="cdna3"),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=8,
    )
    assert per_channel_cap("ring_ll128", other) == float("inf")


@pytest.mark.parametrize("generation", ["hopper", "blackwell"])
def test_the_per_channel_cap_never_falls_with_more_or_faster_nics(generation: str) -> None:
    """NCCL's search would make fewer, faster channels for faster NICs, and stop doubling them
    from 5 NICs on, so its capped figure can fall as NICs are added; the engine counts the most
    channels any subset of the NICs at any lower speed gets."""

    def cap(nics: int, gbps: float) -> float:
        d = make_domain(
            nodes=4,
            ranks_per_node=72 if generation == "blackwell" else 8,
            scaleup=ScaleUp(
                kind="nvlink", gbytes_per_s=900, efficiency=0.82, generation=generation
            ),
            fabric_id="infiniband",
            nic_gbps=gbps,
            nics_per_node=nics,
        )
        return per_channel_cap("tree", d)

    for gbps in (200.0, 400.0, 800.0):
        caps = [cap(n, gbps) for n in range(1, 73 if generation == "blackwell" else 9)]
        assert all(b >= a for a, b in itertools.pairwise(caps))
    assert cap(8, 800.0) == cap(8, 400.0) == cap(8, 200.0)
