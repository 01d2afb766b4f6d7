"""Tensor-parallel all-reduce between PCIe-only GPUs (L40S, H100 PCIe), as NCCL rates it.

NCCL rates a PCIe link at ``width x speed / 80`` GB/s (src/graph/topo.cc: 24 GB/s for Gen4 x16,
48 for Gen5) and its ring search runs a channel at the largest entry of its intra-node speed
array not above that (src/graph/search.cc); a ring over both sockets of a two-socket host runs
at most at NCCL's rating of the CPU-to-CPU link (AMD 16 GB/s, the array's 15).  The expected
figures below are derived here from those NCCL tables, not read from the engine.
"""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import GpuSpec, default_catalog
from advisor.engine.facts.constants import nvlink_few_gpu_share
from advisor.engine.model.collectives import make_domain
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.model.serving.intra import intra_time_s

# NCCL 2.23.4 src/graph/search.cc
SPEED_ARRAY_INTRA = (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0)
SM90_SPEED_ARRAY_INTRA = (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0)
AMD_BW = 16.0  # NCCL src/graph/topo.h, GB/s


def _ring_speed(link_gbytes: float, sm90: bool) -> float:
    speeds = SM90_SPEED_ARRAY_INTRA if sm90 else SPEED_ARRAY_INTRA
    return next(s for s in speeds if s <= link_gbytes)


def _nccl_link_gbytes(pcie_gen: int, width: int = 16) -> float:
    per_lane_100mbps = {4: 120, 5: 240}[pcie_gen]  # kvDictPciGen, "16.0 GT/s PCIe" -> 120
    return width * per_lane_100mbps / 80.0


def _gpu(gpu_id: str) -> GpuSpec:
    gpu = default_catalog().gpu(gpu_id)
    assert gpu is not None
    return gpu


def _domain_bw(gpu_id: str, ranks: int) -> float:
    gpu = _gpu(gpu_id)
    d = make_domain(
        nodes=1,
        ranks_per_node=ranks,
        scaleup=ScaleUp.of(gpu),
        fabric_id=None,
        nic_gbps=0.0,
        nics_per_node=0,
    )
    return d.scaleup_bytes_per_s / 1e9


@pytest.mark.parametrize(("gpu_id", "gen", "sm90"), [("l40s", 4, False), ("h100-pcie", 5, True)])
def test_pcie_ring_runs_at_nccls_ring_search_speed(gpu_id: str, gen: int, sm90: bool) -> None:
    expected = _ring_speed(_nccl_link_gbytes(gen), sm90)
    assert _domain_bw(gpu_id, 2) == pytest.approx(expected, rel=1e-9)
    assert _domain_bw(gpu_id, 4) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("gpu_id", "sm90"), [("l40s", False), ("h100-pcie", True)])
def test_pcie_ring_over_both_sockets_runs_at_the_inter_socket_link(gpu_id: str, sm90: bool) -> None:
    cross = _ring_speed(AMD_BW, sm90)
    assert _domain_bw(gpu_id, 8) == pytest.approx(cross, rel=1e-9)
    assert _domain_bw(gpu_id, 8) < _domain_bw(gpu_id, 4)


def test_l40s_tp8_all_reduce_costs_more_per_gpu_than_tp4() -> None:
    """A ring all-reduce moves 2(n-1)/n of the message per GPU: 1.75 at 8 ranks against 1.5
    at 4, so on one shared bus bandwidth TP8 would cost 7/6 of TP4; over the slower
    inter-socket link it costs more than that."""
    gpu = _gpu("l40s")
    nbytes = 64e6
    t4 = intra_time_s(gpu, "all_reduce", nbytes, 4)
    t8 = intra_time_s(gpu, "all_reduce", nbytes, 8)
    assert t8 > t4 * (1.75 / 1.5) * 1.2


def test_nvlink_gpus_are_not_held_to_the_inter_socket_link() -> None:
    """Eight NVLink GPUs keep their scale-up bandwidth; four get the measured few-GPU share of
    it (test_nvlink_few_gpus.py), not the PCIe host's inter-socket cap."""
    for gpu_id in ("h100-sxm", "a100-80gb-sxm"):
        share = nvlink_few_gpu_share("nvlink", _gpu(gpu_id).generation, 4)
        assert _domain_bw(gpu_id, 4) == pytest.approx(_domain_bw(gpu_id, 8) * share, rel=1e-12)
        assert _domain_bw(gpu_id, 8) > 2 * _ring_speed(AMD_BW, True)
