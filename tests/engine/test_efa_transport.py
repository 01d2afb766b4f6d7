"""AWS EFA as its own transport in the collective model (docs/MODEL.md 3, "Transports"): NCCL
reaches EFA through the aws-ofi-nccl plugin, whose step latency replaces NCCL's InfiniBand
network latency and whose protocols are the plugin's; a rented AWS instance's fabric is
evaluated with the same transport."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import ScenarioError, evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.catalog.cloud import CLOUD_FABRICS
from advisor.engine.facts.constants import NCCL_BASE_LATENCY_S, NCCL_HW_LATENCY_S
from advisor.engine.facts.transports import TRANSPORTS, net_transport
from advisor.engine.model.collectives import CommDomain, collective, collective_time_s, make_domain
from advisor.engine.model.scaleup import ScaleUp


def _two_servers(gpu_id: str, nics: int, transport: str | None) -> CommDomain:
    gpu = default_catalog().gpu(gpu_id)
    assert gpu is not None
    return make_domain(
        nodes=2,
        ranks_per_node=8,
        scaleup=ScaleUp.of(gpu),
        fabric_id="roce",
        nic_gbps=100.0,
        nics_per_node=nics,
        transport=transport,
    )


def test_an_efa_small_all_reduce_over_two_servers_is_not_priced_like_infiniband() -> None:
    efa = _two_servers("h100-sxm", 32, "efa-p5")
    roce = _two_servers("h100-sxm", 32, None)
    t_efa, algo, proto = collective_time_s("all_reduce", 8.0, efa, "tree")
    t_roce = collective_time_s("all_reduce", 8.0, roce, "tree")[0]
    assert (algo, proto) == ("tree", "LL")
    # NCCL's tree latency with EFA's step (the plugin's tuner model) in place of NCCL's
    # network latency and RoCE's extra: base + 2 ((g-1) NVLink + log2(2) network steps)
    nvlink = NCCL_HW_LATENCY_S["nvlink"]["tree"]["LL"]
    step = TRANSPORTS["efa-p5"].step_s("LL")
    # (8 bytes add a few nanoseconds of transfer)
    latency = NCCL_BASE_LATENCY_S["tree"]["LL"] + 2 * (7 * nvlink + step)
    assert latency < t_efa < latency + 1e-8
    assert t_efa - t_roce == pytest.approx(
        2 * (step - NCCL_HW_LATENCY_S["net"]["tree"]["LL"] - roce.net_extra_latency_s)
    )
    # the bandwidth of a large message is the NICs', as on any RDMA fabric
    big = 16 * 2**30
    assert collective("all_reduce", big, efa).busbw_bytes_per_s == pytest.approx(
        collective("all_reduce", big, roce).busbw_bytes_per_s, rel=0.02
    )


def test_p4d_runs_only_simple_across_servers_and_nothing_changes_inside_one() -> None:
    p4d = _two_servers("a100-80gb-sxm", 4, "efa-p4d")
    for nbytes in (8.0, 65536.0, 2**20, 2**24):
        assert collective("all_reduce", nbytes, p4d).protocol == "Simple"
    gpu = default_catalog().gpu("a100-80gb-sxm")
    assert gpu is not None
    one = {
        t: make_domain(
            nodes=1,
            ranks_per_node=8,
            scaleup=ScaleUp.of(gpu),
            fabric_id="roce",
            nic_gbps=100.0,
            nics_per_node=4,
            transport=t,
        )
        for t in (None, "efa-p4d")
    }
    assert one[None] == one["efa-p4d"]
    assert collective("all_reduce", 8.0, one["efa-p4d"]).protocol == "LL"


def test_an_unknown_transport_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown transport 'efa-x'"):
        net_transport("efa-x")
    assert net_transport(None) is None and net_transport("") is None


def test_every_aws_instance_names_a_known_efa_transport_and_no_other_does() -> None:
    for cloud in CLOUD_FABRICS:
        if cloud.provider == "AWS":
            plugin = net_transport(cloud.net_transport)
            assert plugin is not None and plugin.id.startswith("efa-") and plugin.source
        else:
            assert cloud.net_transport is None


def _train(**extra: Any) -> dict[str, Any]:
    return {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "training": {"total_tokens": 1e12},
        "constraints": {"cloud": "aws-p5"},
        **extra,
    }


def test_a_rented_p5_is_evaluated_on_efa_not_on_roce_of_the_same_shape() -> None:
    rented = evaluate(_train())
    design = rented["design_evaluation"]["design"]
    assert design["transport"] == "efa-p5"
    same_shape = evaluate(_train(design={"fabric": "roce", "nic_gbps": 100, "nics_per_node": 32}))
    assert "transport" not in same_shape["design_evaluation"]["design"]
    assert (
        rented["design_evaluation"]["metrics"]["step_time_s"]
        > same_shape["design_evaluation"]["metrics"]["step_time_s"]
    )
    assert "EFA v2 (SRD, RDMA write) via aws-ofi-nccl" in rented["cloud_fabric"]["statement"]
    assert "efa-p5" not in rented["cloud_fabric"]["statement"]


def test_srd_spraying_leaves_no_ecmp_collisions_across_leaves() -> None:
    gpu = default_catalog().gpu("h100-sxm")
    assert gpu is not None

    def domain(transport: str | None, adaptive: bool | None) -> CommDomain:
        return make_domain(
            nodes=128,  # four 32-server rail groups: most ring bytes leave the leaf
            ranks_per_node=8,
            scaleup=ScaleUp.of(gpu),
            fabric_id="roce",
            nic_gbps=100.0,
            nics_per_node=32,
            adaptive_routing=adaptive,
            transport=transport,
        )

    efa = domain("efa-p5", None).net_bytes_per_s
    assert efa == domain("efa-p5", True).net_bytes_per_s
    assert efa > domain("efa-p5", False).net_bytes_per_s
    assert efa > domain(None, None).net_bytes_per_s  # RoCE's default: ECMP hashing


def test_a_design_given_on_efa_is_the_rented_instance_the_same_rule() -> None:
    given = evaluate(
        _train(
            design={"fabric": "roce", "nic_gbps": 100, "nics_per_node": 32, "transport": "efa-p5"}
        )
    )
    rented = evaluate(_train())
    assert given["design_evaluation"]["design"]["transport"] == "efa-p5"
    assert (
        given["design_evaluation"]["metrics"]["step_time_s"]
        == rented["design_evaluation"]["metrics"]["step_time_s"]
    )


@pytest.mark.parametrize(
    ("design", "message"),
    [
        ({"fabric": "infiniband", "transport": "efa-p5"}, "design.transport: AWS EFA is evaluated"),
        ({"fabric": "roce", "transport": "efa-x"}, "design.transport: must be one of efa-p4d"),
    ],
)
def test_a_wrong_design_transport_is_refused_naming_the_field(
    design: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScenarioError, match=message):
        evaluate(_train(design=design))


def test_the_answer_states_the_efa_figures_it_used_by_display_name() -> None:
    rented = {a["name"]: a for a in evaluate(_train())["assumptions"]}
    p5 = TRANSPORTS["efa-p5"]
    step = rented[f"{p5.label}: latency per inter-server step"]
    assert step["value"] == pytest.approx(p5.step_latency_s * 1e6)
    assert "aws-ofi-nccl" in step["source"]
    assert rented[f"{p5.label}: protocols across servers"]["value"] == "LL, LL128, Simple"
    assert not any("efa-" in a["name"] or "efa-" in str(a["value"]) for a in rented.values())
    owned = evaluate({k: v for k, v in _train().items() if k != "constraints"})["assumptions"]
    assert not any("EFA" in a["name"] for a in owned)


def test_a_rented_p4de_runs_efa_v1_simple_only() -> None:
    scenario = {
        **_train(),
        "gpu": "a100-80gb-sxm",
        "constraints": {"cloud": "aws-p4de"},
    }
    result = evaluate(scenario)
    assert result["design_evaluation"]["design"]["transport"] == "efa-p4d"
    p4d = TRANSPORTS["efa-p4d"]
    stated = {a["name"]: a["value"] for a in result["assumptions"]}
    assert stated[f"{p4d.label}: protocols across servers"] == "Simple"
    assert "4 x 100G EFA (SRD)" in result["cloud_fabric"]["statement"]
