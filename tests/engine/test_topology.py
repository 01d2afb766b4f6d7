from __future__ import annotations

import pytest

from advisor.engine.model.topology import (
    TopologyError,
    leaf_ports,
    max_endpoints,
    plan_cabling,
    size_topology,
    size_tor_fabric,
)


@pytest.mark.parametrize(
    ("endpoints", "leaves", "spines"),
    [(512, 16, 8), (2048, 64, 32)],
)
def test_superpod_scalable_units_match_the_reference_architecture(
    endpoints: int, leaves: int, spines: int
) -> None:
    topo = size_topology(endpoints, 64)
    assert topo.tiers == 2
    assert topo.leaf_switches == leaves
    assert topo.spine_switches == spines
    assert topo.core_switches == 0
    assert topo.endpoint_leaf_links == endpoints
    assert topo.leaf_spine_links == endpoints


def test_rail_optimized_superpod_keeps_the_same_counts() -> None:
    topo = size_topology(2048, 64, rails=8)
    assert (topo.leaf_switches, topo.spine_switches) == (64, 32)
    assert topo.rail_optimized


def test_rails_smaller_than_half_a_leaf_share_leaves() -> None:
    """16 servers x 8 rails on 128-port leaves (64 down at 1:1): four rails of 16 servers per
    leaf, so 2 leaves instead of 8 one-eighth-full ones; a rail still lands on one leaf."""
    topo = size_topology(128, 128, rails=8, leaf_spine=True)
    assert topo.leaf_switches == 2
    assert topo.leaf_spine_links == 128
    assert topo.placement_blocks() == (64,)
    full = size_topology(64 * 8, 64, rails=8)  # 64 servers: a rail fills two whole leaves
    assert full.leaf_switches == 16


def test_small_cluster_fits_one_switch() -> None:
    topo = size_topology(40, 64)
    assert topo.tiers == 1
    assert topo.total_switches == 1
    assert topo.leaf_spine_links == 0


def test_two_tier_limit_is_k_squared_over_two() -> None:
    assert max_endpoints(64, 2) == 2048
    assert size_topology(2048, 64).tiers == 2
    assert size_topology(2049, 64).tiers == 3


def test_three_tier_fat_tree_at_full_size() -> None:
    k = 16
    topo = size_topology(k**3 // 4, k)
    assert topo.tiers == 3
    assert topo.leaf_switches == k * k // 2
    assert topo.spine_switches == k * k // 2
    assert topo.core_switches == k * k // 4


def test_beyond_three_tiers_adds_a_super_spine_tier() -> None:
    k = 16
    topo = size_topology(k**3 // 4 + 1, k)
    assert topo.tiers == 4
    assert topo.kind == "super-spine"
    assert topo.superspine_switches >= 1
    assert topo.core_superspine_links == topo.leaf_spine_links
    assert topo.hops_worst_case == 7
    full = size_topology(k**4 // 8, k)
    assert full.tiers == 4
    assert (full.leaf_switches, full.spine_switches) == (k**3 // 4, k**3 // 4)
    assert (full.core_switches, full.superspine_switches) == (k**3 // 4, k**3 // 8)
    tiers = [t.tier for t in plan_cabling(full, servers=k**4 // 8)]
    assert tiers[-1] == "core-superspine"


def test_beyond_four_tiers_is_refused_with_a_consistent_message() -> None:
    k = 16
    with pytest.raises(TopologyError) as err:
        size_topology(k**4 // 8 + 1, k)
    msg = str(err.value)
    assert f"{k**4 // 8 + 1:,} endpoints need {k**3 // 4 + 1:,} leaf switches" in msg
    assert f"at most {k**3 // 4:,} leaves" in msg


def test_partly_filled_rack_leaves_get_a_fourth_tier_instead_of_a_crash() -> None:
    # 2,049 storage servers x 2 ports on radix-32 ToR leaves at 2:1: 513 partly filled rack
    # leaves exceed the 512 leaves of three tiers (the old self-contradicting error).
    topo = size_tor_fabric(2049, 2, 32, 2.0)
    assert topo.tiers == 4
    assert topo.leaf_switches == 513


@pytest.mark.parametrize("gpus", [32_768, 65_536, 131_072])
@pytest.mark.parametrize("radix", [64, 128])
def test_frontier_sizes_get_a_compute_fabric(gpus: int, radix: int) -> None:
    topo = size_topology(gpus, radix, rails=8)
    assert topo.endpoint_leaf_links == gpus
    assert topo.tiers <= 4
    assert topo.max_endpoints >= gpus


def test_oversubscription_moves_ports_down() -> None:
    assert leaf_ports(64, 1.0) == (32, 32)
    assert leaf_ports(64, 3.0) == (48, 16)
    down, up = leaf_ports(64, 2.0)
    assert down / up <= 2.0
    assert down == 42


def test_three_to_one_needs_fewer_switches() -> None:
    full = size_topology(2048, 64)
    over = size_topology(2048, 64, 3.0)
    assert over.leaf_switches == 43
    assert over.leaf_spine_links < full.leaf_spine_links
    assert over.total_switches < full.total_switches


def test_to_dict_has_the_cli_keys() -> None:
    d = size_topology(512, 64).to_dict()
    for key in (
        "tiers",
        "leaf_switches",
        "spine_switches",
        "core_switches",
        "endpoint_leaf_links",
        "leaf_spine_links",
        "spine_core_links",
    ):
        assert key in d


def test_cabling_uses_copper_inside_a_rack_and_optics_beyond() -> None:
    small = size_topology(4, 32)
    assert [t.medium for t in plan_cabling(small, servers=4)] == ["dac"]
    pod = size_topology(512, 64, rails=8)
    tiers = plan_cabling(pod, servers=64)
    assert [t.medium for t in tiers] == ["optical", "optical"]
    assert tiers[0].transceivers == 2 * 512


@pytest.mark.parametrize("bad", [0, -1])
def test_bad_endpoints_are_refused(bad: int) -> None:
    with pytest.raises(ValueError):
        size_topology(bad, 64)


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(
    endpoints=st.integers(min_value=1, max_value=20000),
    radix=st.sampled_from([32, 40, 64, 128, 144]),
    over=st.sampled_from([1.0, 2.0, 3.0]),
    rails=st.sampled_from([1, 2, 4, 8]),
)
def test_more_endpoints_never_need_fewer_switches(
    endpoints: int, radix: int, over: float, rails: int
) -> None:
    try:
        a = size_topology(endpoints, radix, over, rails=rails)
        b = size_topology(endpoints + rails, radix, over, rails=rails)
    except TopologyError:
        return
    assert b.total_switches >= a.total_switches
    assert b.leaf_switches >= a.leaf_switches
    assert a.leaf_down_ports * a.leaf_switches >= endpoints or a.tiers == 1


def test_top_of_rack_fabric_puts_a_leaf_in_every_rack() -> None:
    from advisor.engine.model.topology import size_tor_fabric

    one = size_tor_fabric(1, 2, 32, 2.0)
    assert (one.tiers, one.total_switches) == (1, 1)
    many = size_tor_fabric(64, 2, 32, 2.0, servers_per_rack=4)
    assert many.leaf_switches == 16
    assert many.tiers == 2
    tiers = plan_cabling(many, servers=64, top_of_rack=True)
    assert tiers[0].medium == "dac"
    assert tiers[1].medium == "optical"


def _even_spines_by_walk(
    counts: tuple[tuple[int, int], ...], up_ports: int, radix: int, min_spines: int
) -> int | None:
    """The definition of topology._even_spines walked from ``min_spines`` up (its walk before
    it started at the spine count the leaves' uplinks need)."""
    for spines in range(max(1, min_spines), up_ports + 1):
        if all(-(-u // spines) * spines <= up_ports for u, _ in counts) and (
            sum(n * -(-u // spines) for u, n in counts) <= radix
        ):
            return spines
    return None


def test_even_spines_starts_where_the_uplinks_fit_and_finds_the_same_spines() -> None:
    import random

    from advisor.engine.model.topology import _even_spines

    rnd = random.Random(24)
    for radix in (8, 32, 36, 48, 64, 128, 144, 512):
        for up in range(1, radix + 1, max(1, radix // 16)):
            for _ in range(40):
                counts = tuple(
                    (rnd.randint(0, up), rnd.randint(1, 2 * radix))
                    for _ in range(rnd.randint(1, 3))
                )
                min_spines = rnd.choice((1, 2, 4, 8))
                assert _even_spines(counts, up, radix, min_spines) == _even_spines_by_walk(
                    counts, up, radix, min_spines
                ), (counts, up, radix, min_spines)
