"""Fewer than eight GPUs of a server (docs/MODEL.md 3, "Fewer than eight GPUs of a server"):
an all-reduce among 2 or 4 GPUs of an NVSwitch domain reaches less bus bandwidth than 8 do,
and the engine's scale-up bandwidth, set on 8-GPU servers, is scaled for it."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import (
    NVLINK_FEW_GPU_BUS_SHARE,
    NVLINK_OP_BUS_SHARE,
    nvlink_few_gpu_share,
    nvlink_op_share,
)
from advisor.engine.model.collectives import CommDomain, collective_time_s, make_domain
from advisor.engine.model.nccl_versions import parse_version
from advisor.engine.model.scaleup import ScaleUp

CATALOG = default_catalog()
HALF_GB = 536_870_912

# NCCL all-reduce of 512 MB (half-precision buffers) on 2, 4 and 8 GPUs of one server,
# microseconds, as AIConfigurator 0.12.0's collector measured it
# (aiconfigurator_core/systems/data/<gpu>/comm/nccl/<version>/nccl_perf.parquet).
MEASURED_512MB_US: dict[tuple[str, str, int], float] = {
    ("b200", "2.29.2", 2): 1005.3,
    ("b200", "2.29.2", 4): 1270.8,
    ("b200", "2.29.2", 8): 1334.6,
    ("h100-sxm", "2.27.3", 2): 1676.6,
    ("h100-sxm", "2.27.3", 4): 2305.0,
    ("h200-sxm", "2.29.2", 4): 2311.2,
    ("a100-80gb-sxm", "2.27.3", 2): 2781.1,
    ("a100-80gb-sxm", "2.27.3", 4): 3716.3,
    ("a100-80gb-sxm", "2.27.3", 8): 4225.9,
}


def _domain(
    gpu_id: str, gpus: int, *, nodes: int = 1, version: str | None = None, nic_gbps: float = 400.0
) -> CommDomain:
    """``nodes`` domains of ``gpus`` GPUs each (8 x ``nic_gbps`` InfiniBand between them)."""
    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    return make_domain(
        nodes=nodes,
        ranks_per_node=gpus,
        scaleup=ScaleUp.of(gpu),
        fabric_id="infiniband" if nodes > 1 else None,
        nic_gbps=nic_gbps,
        nics_per_node=8,
        **({"nccl_version": parse_version(version)} if version else {}),
    )


def _server(gpu_id: str, version: str, gpus: int) -> CommDomain:
    return _domain(gpu_id, gpus, version=version)


@pytest.mark.parametrize(("gpu_id", "version", "gpus"), sorted(MEASURED_512MB_US))
def test_large_all_reduces_on_part_of_a_server_read_the_measured_time(
    gpu_id: str, version: str, gpus: int
) -> None:
    """Within 4 %; at the 8-GPU bandwidth 2 B200 read 26 % fast, 2 H100 and 2 A100 12-14 %."""
    t = collective_time_s("all_reduce", float(HALF_GB), _server(gpu_id, version, gpus))[0]
    assert t * 1e6 / MEASURED_512MB_US[(gpu_id, version, gpus)] == pytest.approx(1.0, abs=0.04)


# The same tables' all-gather, reduce-scatter and all-to-all of 512 MB, microseconds.
MEASURED_OPS_512MB_US: dict[tuple[str, str, str, int], float] = {
    ("all_gather", "h100-sxm", "2.29.2", 8): 1401.5,
    ("reduce_scatter", "h100-sxm", "2.29.2", 8): 1399.4,
    ("all_to_all", "h100-sxm", "2.29.2", 8): 1490.4,
    ("all_gather", "h100-sxm", "2.29.2", 2): 1038.6,
    ("all_gather", "b200", "2.29.2", 8): 761.4,
    ("reduce_scatter", "b200", "2.29.2", 8): 766.5,
    ("all_to_all", "b200", "2.29.2", 8): 834.2,
    ("all_to_all", "b200", "2.29.2", 2): 810.0,
    ("all_to_all", "a100-80gb-sxm", "2.27.3", 8): 2313.5,
    ("reduce_scatter", "a100-80gb-sxm", "2.27.3", 2): 1611.8,
}


@pytest.mark.parametrize(("op", "gpu_id", "version", "gpus"), sorted(MEASURED_OPS_512MB_US))
def test_other_collectives_on_a_server_read_the_measured_time(
    op: str, gpu_id: str, version: str, gpus: int
) -> None:
    """Within 4 %; at the all-reduce's bandwidth 8 B200 exchanged 22 % fast, 8 H100 14 %, and
    2 H100 gathered 19 % fast."""
    t = collective_time_s(op, float(HALF_GB), _server(gpu_id, version, gpus))[0]
    assert t * 1e6 / MEASURED_OPS_512MB_US[(op, gpu_id, version, gpus)] == pytest.approx(
        1.0, abs=0.04
    )


def test_the_op_share_reads_its_table_between_2_and_8_gpus() -> None:
    for op, by_generation in NVLINK_OP_BUS_SHARE.items():
        for generation, row in by_generation.items():
            assert nvlink_op_share(op, "nvlink", generation, 2) == row[2]
            assert nvlink_op_share(op, "nvlink", generation, 4) == row[4]
            assert nvlink_op_share(op, "nvlink", generation, 72) == row[8]
            low, high = sorted((row[4], row[8]))
            assert low <= nvlink_op_share(op, "nvlink", generation, 6) <= high
    assert nvlink_op_share("all_reduce", "nvlink", "hopper", 8) == 1.0
    assert nvlink_op_share("all_gather", "xgmi", "cdna3", 8) == 1.0


def test_the_share_is_the_table_at_2_and_4_gpus_and_whole_from_8() -> None:
    for generation, row in NVLINK_FEW_GPU_BUS_SHARE.items():
        assert nvlink_few_gpu_share("nvlink", generation, 2) == row[2]
        assert nvlink_few_gpu_share("nvlink", generation, 4) == row[4]
        assert row[2] < nvlink_few_gpu_share("nvlink", generation, 3) < row[4]
        assert row[4] < nvlink_few_gpu_share("nvlink", generation, 6) < 1.0
        assert nvlink_few_gpu_share("nvlink", generation, 8) == 1.0
        assert nvlink_few_gpu_share("nvlink", generation, 72) == 1.0


def test_other_scale_up_kinds_and_generations_keep_their_bandwidth() -> None:
    assert nvlink_few_gpu_share("pcie", "hopper", 2) == 1.0
    assert nvlink_few_gpu_share("xgmi", "cdna3", 2) == 1.0
    assert nvlink_few_gpu_share("nvlink-mesh", "volta", 2) == 1.0
    assert _domain("mi300x", 2).scaleup_bytes_per_s == _domain("mi300x", 8).scaleup_bytes_per_s


def test_an_nvswitch_answer_lists_the_measured_shares_among_its_assumptions() -> None:
    from advisor.engine import evaluate

    def listed(gpu: str, name: str) -> list[object]:
        raw = {"workload": "inference", "model": "llama3-70b", "gpu": gpu, "gpus": 8}
        return [a["value"] for a in evaluate(raw)["assumptions"] if a["name"] == name]

    few = "NVLink bandwidth among 2 / 4 GPUs of a server"
    assert listed("h100-sxm", few) == ["0.856 / 0.953"]
    assert listed("b200", few) == ["0.736 / 0.879"]
    assert listed("mi300x", few) == []
    ops = "NVLink all-gather / reduce-scatter / all-to-all among 8 GPUs"
    assert listed("h100-sxm", ops) == ["0.922 / 0.931 / 0.865"]
    assert listed("b200", ops) == ["0.89 / 0.887 / 0.767"]
    assert listed("mi300x", ops) == []


def test_nvls_runs_on_more_than_two_gpus_and_in_one_server_from_eight() -> None:
    """NCCL leaves NVLS off on two GPUs (ncclNvlsInit: gpuCount <= 2); in one server the tables
    read 4 Hopper GPUs at the ring's bandwidth, so NVLS is priced from 8 there; across servers
    NVLS-tree from 3 GPUs a server."""
    assert not _domain("h100-sxm", 2).nvls
    assert not _domain("h100-sxm", 4).nvls
    assert _domain("h100-sxm", 8).nvls
    assert _domain("gb200-nvl72", 72).nvls
    assert not _domain("h100-sxm", 2, nodes=2).nvls
    assert _domain("h100-sxm", 4, nodes=2).nvls
    assert not _domain("a100-80gb-sxm", 8).nvls


def test_the_all_to_all_share_is_nccls_and_not_deepeps_forwarding() -> None:
    """NCCL's all-to-all runs at the measured share of the scale-up bandwidth; DeepEP's
    forwarding of the copies that arrive from other servers (its own NVLink kernels) does not."""
    from dataclasses import replace

    from advisor.engine.model.collectives import _all_to_all_time

    d = _domain("b200", 8, nodes=2, nic_gbps=100_000.0)  # the scale-up side is the bound
    whole = replace(d, op_bus_share=(1.0, 1.0, 1.0))
    nbytes = float(HALF_GB)
    assert _all_to_all_time(nbytes, d) > _all_to_all_time(nbytes, whole) * 1.2
    forwarded = _all_to_all_time(nbytes, d, net_share=0.5, forward=True)
    assert forwarded == _all_to_all_time(nbytes, whole, net_share=0.5, forward=True)
