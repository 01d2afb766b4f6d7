"""Cloud fabrics as named references (docs/MODEL.md 20.8): a scenario on rented GPUs names
its instance type and is answered with that provider's fabric shape beside the owned
recommendation.  Figures are the providers' published per-instance networks."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import ScenarioError, evaluate, evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.catalog.cloud import CLOUD_FABRICS, cloud_fabric


def train(gpu: str, gpus: int, **constraints: Any) -> dict[str, Any]:
    return {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": gpu,
        "gpus": gpus,
        "training": {"total_tokens": 1e12},
        "constraints": constraints,
    }


@pytest.mark.parametrize(
    ("cloud_id", "links", "gbps", "instance_gbps", "rdma"),
    [
        ("aws-p4de", 4, 100, 400, True),
        ("aws-p5", 32, 100, 3200, True),
        ("aws-p5en", 16, 200, 3200, True),
        ("aws-p6-b200", 8, 400, 3200, True),
        ("azure-nd-h100-v5", 8, 400, 3200, True),
        ("gcp-a3-mega", 8, 200, 1600, False),
        ("azure-nd-h200-v5", 8, 400, 3200, True),
        ("azure-nd-gb200-v6", 4, 400, 1600, True),
        ("gcp-a3-ultra", 8, 400, 3200, True),
        ("gcp-a4", 8, 400, 3200, True),
        ("gcp-a4x", 4, 400, 1600, True),
    ],
)
def test_published_instance_fabrics(
    cloud_id: str, links: int, gbps: int, instance_gbps: int, rdma: bool
) -> None:
    cloud = cloud_fabric(cloud_id)
    assert cloud is not None
    assert (cloud.links, cloud.link_gbps, cloud.instance_gbps, cloud.rdma) == (
        links,
        gbps,
        instance_gbps,
        rdma,
    )
    assert cloud.source


def test_every_cloud_gpu_is_in_the_catalog() -> None:
    ids = {g.id for g in default_catalog().gpus}
    assert {c.gpu_id for c in CLOUD_FABRICS} <= ids


def test_a_named_cloud_is_evaluated_as_its_fabric_shape() -> None:
    result = evaluate(train("h100-sxm", 64, cloud="aws-p5"))
    assert result["design_evaluation"]["design"]["fabric"] == "roce"
    assert result["design_evaluation"]["design"]["nic_gbps"] == 100
    assert result["design_evaluation"]["design"]["nics_per_node"] == 32
    ref = result["cloud_fabric"]
    assert ref["id"] == "aws-p5" and ref["transport"] == "EFA (SRD)"
    assert ref["cloud_step_time_s"] == result["design_evaluation"]["metrics"]["step_time_s"]
    assert result["recommendation"]["rationale"][0] == ref["statement"]
    assert "32 x 100G EFA (SRD)" in ref["statement"]
    assert result["scenario"]["constraints"]["cloud"] == "aws-p5"
    typed = evaluate_typed(train("h100-sxm", 64, cloud="aws-p5"))
    assert typed.to_dict() == result
    assert typed.cloud_fabric is not None and typed.cloud_fabric.instance_gbps == 3200
    assert typed.cloud_fabric.cloud_step_time_s == ref["cloud_step_time_s"]
    assert typed.cloud_fabric.cloud_ms_per_token is None and not typed.cloud_fabric.extra


def test_tcpxo_is_evaluated_as_tcp_ethernet_and_is_slower_than_rdma() -> None:
    tcp = evaluate(train("h100-sxm", 64, cloud="gcp-a3-mega"))
    ib = evaluate(train("h100-sxm", 64, cloud="azure-nd-h100-v5"))
    assert tcp["design_evaluation"]["design"]["fabric"] == "ethernet"
    assert "not RDMA" in tcp["cloud_fabric"]["statement"]
    assert tcp["cloud_fabric"]["cloud_step_time_s"] > ib["cloud_fabric"]["cloud_step_time_s"]


def test_a_given_design_wins_over_the_cloud_shape() -> None:
    scenario = train("h100-sxm", 64, cloud="aws-p5")
    scenario["design"] = {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8}
    result = evaluate(scenario)
    assert result["design_evaluation"]["design"]["fabric"] == "infiniband"
    assert result["cloud_fabric"]["id"] == "aws-p5"


def test_no_cloud_no_reference() -> None:
    result = evaluate(train("h100-sxm", 64))
    assert "cloud_fabric" not in result and "design_evaluation" not in result
    assert "cloud" not in result["scenario"]["constraints"]


def test_unknown_cloud_is_refused_naming_the_field() -> None:
    with pytest.raises(ScenarioError) as err:
        evaluate(train("h100-sxm", 64, cloud="aws-p9"))
    assert "constraints.cloud" in str(err.value) and "aws-p5" in str(err.value)


def test_a_cloud_of_another_gpu_is_refused_naming_the_field() -> None:
    with pytest.raises(ScenarioError) as err:
        evaluate(train("h100-sxm", 64, cloud="aws-p6-b200"))
    assert "constraints.cloud" in str(err.value) and "b200" in str(err.value)


@pytest.mark.parametrize(
    ("cloud_id", "gpu", "gpus", "fabric"),
    [
        ("azure-nd-h200-v5", "h200-sxm", 64, "infiniband"),
        ("azure-nd-gb200-v6", "gb200-nvl72", 144, "infiniband"),
        ("gcp-a3-ultra", "h200-sxm", 64, "roce"),
        ("gcp-a4", "b200", 64, "roce"),
        ("gcp-a4x", "gb200-nvl72", 144, "roce"),
    ],
)
def test_newer_instances_are_evaluated_on_their_published_shape(
    cloud_id: str, gpu: str, gpus: int, fabric: str
) -> None:
    """Azure ND H200 v5 / ND GB200 v6 (Microsoft Learn) and Google A3 Ultra / A4 / A4X
    ("Networking and GPU machines"): one 400G RDMA link per GPU."""
    result = evaluate(train(gpu, gpus, cloud=cloud_id))
    ref = result["cloud_fabric"]
    assert ref["id"] == cloud_id and ref["evaluated_as"] == fabric
    assert ref["gbps_per_gpu"] == 400
    assert ref["cloud_step_time_s"] > 0
