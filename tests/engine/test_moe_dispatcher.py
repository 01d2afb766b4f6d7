"""Training's expert dispatch: all-to-all of every copy versus DeepEP's once-per-server send."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import (
    FABRICS,
    NCCL_BASE_LATENCY_S,
    NCCL_HW_LATENCY_S,
    NCCL_P2P_PER_PEER_OVERHEAD_S,
)
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.collectives import (
    CommDomain,
    collective_time_s,
    deepep_network_share,
    expert_all_to_all_time_s,
    make_domain,
)
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.scaleup import ScaleUp


def _domain(nodes: int, ranks_per_node: int = 8) -> CommDomain:
    return make_domain(
        nodes=nodes,
        ranks_per_node=ranks_per_node,
        scaleup=ScaleUp(kind="nvlink", gbytes_per_s=450, efficiency=0.82, nvls=False),
        fabric_id="infiniband",
        nic_gbps=400,
        nics_per_node=8,
    )


def test_share_is_the_expected_number_of_servers_a_token_reaches_over_its_copies() -> None:
    # 4 servers, top-8: (1 - 0.75^8) x 4 / 8; 2 servers: (1 - 0.5^8) x 2 / 8
    assert deepep_network_share(4, 8) == pytest.approx(4 * (1 - 0.75**8) / 8)
    assert deepep_network_share(4, 8) == pytest.approx(0.44994354248046875)
    assert deepep_network_share(2, 8) == pytest.approx(0.2490234375)
    # one server, or top-1 routing: nothing to save
    assert deepep_network_share(1, 8) == 1.0
    assert deepep_network_share(16, 1) == 1.0


@settings(max_examples=60, deadline=None)
@given(nodes=st.integers(2, 512), top_k=st.integers(1, 16))
def test_share_is_at_most_one_falls_with_top_k_and_rises_with_servers(
    nodes: int, top_k: int
) -> None:
    """From two servers on (one server sends nothing over the network)."""
    s = deepep_network_share(nodes, top_k)
    assert 0.0 < s <= 1.0
    assert deepep_network_share(nodes, top_k + 1) <= s + 1e-12
    assert deepep_network_share(nodes + 1, top_k) >= s - 1e-12


def test_deepep_network_time_is_the_all_to_all_one_times_the_share() -> None:
    d = _domain(4)
    nbytes = 2**30  # large: the network term dominates latency and the NVLink forward
    n, g = 32, 8
    node_bw = d.net_bytes_per_s
    lat = (
        NCCL_BASE_LATENCY_S["ring"]["Simple"]
        + (n - 1) * NCCL_P2P_PER_PEER_OVERHEAD_S
        + NCCL_HW_LATENCY_S["net"]["ring"]["Simple"]
        + d.net_extra_latency_s
    )
    inter = g * nbytes * (n - g) / n
    a2a = expert_all_to_all_time_s(nbytes, d, top_k=8, dispatcher="alltoall")
    deepep = expert_all_to_all_time_s(nbytes, d, top_k=8, dispatcher="deepep")
    assert a2a == pytest.approx(collective_time_s("all_to_all", nbytes, d)[0])
    assert a2a == pytest.approx(lat + inter / node_bw)
    assert deepep == pytest.approx(lat + inter * deepep_network_share(4, 8) / node_bw)
    assert FABRICS["infiniband"].wire_efficiency > 0


def test_inside_one_server_both_dispatchers_are_the_nvlink_all_to_all() -> None:
    d = _domain(1)
    a = expert_all_to_all_time_s(2**26, d, top_k=8, dispatcher="alltoall")
    b = expert_all_to_all_time_s(2**26, d, top_k=8, dispatcher="deepep")
    assert a == b == collective_time_s("all_to_all", 2**26, d)[0]


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(2, 64),
    top_k=st.integers(1, 8),
    nbytes=st.floats(1e3, 4e9),
)
def test_deepep_is_never_slower_than_the_all_to_all(nodes: int, top_k: int, nbytes: float) -> None:
    d = _domain(nodes)
    a = expert_all_to_all_time_s(nbytes, d, top_k=top_k, dispatcher="alltoall")
    b = expert_all_to_all_time_s(nbytes, d, top_k=top_k, dispatcher="deepep")
    assert b <= a * (1 + 1e-12)


def test_unknown_dispatcher_is_refused() -> None:
    with pytest.raises(ValueError, match="dispatcher"):
        expert_all_to_all_time_s(1e6, _domain(2), top_k=8, dispatcher="allgather")


def _deepseek(dispatcher: str | None, overlap: str | None = None) -> dict[str, object]:
    parallelism: dict[str, object] = {
        "tp": 1, "pp": 8, "dp": 32, "ep": 32, "virtual_stages": 2, "micro_batch": 1,
    }  # fmt: skip
    if dispatcher is not None:
        parallelism["moe_dispatcher"] = dispatcher
    if overlap is not None:
        parallelism["ep_overlap"] = overlap
    return {
        "workload": "training",
        "model": "deepseek-v3",
        "gpu": "b200",
        "gpus": 256,
        "precision": "fp8",
        "sequence_length": 4096,
        "training": {"global_batch_sequences": 4096},
        "parallelism": parallelism,
        "design": {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8},
    }


def _step(raw: dict[str, object]) -> tuple[float, str]:
    s = parse_scenario(raw, default_catalog())
    w = plan_workload(s)
    assert s.design is not None
    return float(evaluate_design(s, w, s.design).to_dict()["step_time_s"]), w.plan.moe_dispatcher


def test_the_plan_says_which_dispatcher_it_assumes_and_deepep_is_faster_across_servers() -> None:
    default_s, default_d = _step(_deepseek(None))
    a2a_s, a2a_d = _step(_deepseek("alltoall"))
    deepep_s, deepep_d = _step(_deepseek("deepep"))
    overlap_s, _ = _step(_deepseek("deepep", "a2a_1f1b"))
    assert (default_d, a2a_d, deepep_d) == ("alltoall", "alltoall", "deepep")
    assert default_s == a2a_s
    assert deepep_s < a2a_s
    assert overlap_s <= deepep_s


def test_a_bad_dispatcher_names_the_field() -> None:
    with pytest.raises(ScenarioError, match=r"parallelism\.moe_dispatcher"):
        parse_scenario(_deepseek("flex"), default_catalog())


def test_overlapped_all_to_all_costs_the_compute_its_sms() -> None:
    # step = max(all-to-all, compute + share x all-to-all): with the overlap the step is
    # shorter than paying both, never shorter than either alone
    from advisor.engine.facts.constants import EP_COMM_SMS
    from advisor.engine.model.efficiency import profile
    from advisor.engine.model.training_step import _training_times

    s = parse_scenario(_deepseek("deepep", "a2a_1f1b"), default_catalog())
    w = plan_workload(s)
    assert s.design is not None and w.training is not None
    times = _training_times(s, w, w.training, s.design, "point")
    share = EP_COMM_SMS / profile(s.gpu).sms
    assert 0.1 < share < 0.2  # 20 of B200's 148 SMs
    assert times.exposed_comm_s > 0.0
    plain_s, _ = _step(_deepseek("deepep"))
    overlap_s, _ = _step(_deepseek("deepep", "a2a_1f1b"))
    assert overlap_s < plain_s
