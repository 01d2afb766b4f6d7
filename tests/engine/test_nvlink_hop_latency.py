"""NVLink steps by generation (docs/MODEL.md 3, "NVLink steps by generation"): NCCL's hwLat
reads Hopper's one-server small-message all-reduce within 1 us, but B200 and A100 take longer
per ring step; the engine adds the measured extra per step of their latency class."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import NCCL_HW_LATENCY_S, NVLINK_HOP_EXTRA_S
from advisor.engine.model.collectives import CommDomain, collective_time_s, make_domain
from advisor.engine.model.scaleup import ScaleUp

CATALOG = default_catalog()

# NCCL all-reduce of half-precision buffers on one server of 8 GPUs, microseconds, as
# AIConfigurator 0.12.0's collector measured it (aiconfigurator_core/systems/data/<gpu>/comm/
# nccl/<version>/nccl_perf.parquet, message_size in elements): bytes -> latency.
MEASURED_8_GPU_US: dict[tuple[str, str], dict[int, float]] = {
    ("b200", "2.29.2"): {512: 25.1, 2048: 25.6, 8192: 26.0, 16384: 26.6},
    ("a100-80gb-sxm", "2.27.3"): {512: 22.6, 2048: 21.5, 8192: 21.3, 16384: 22.6},
    ("h100-sxm", "2.27.3"): {512: 15.5, 2048: 15.8, 8192: 16.4},
}


def _server(gpu_id: str, version: str) -> CommDomain:
    from advisor.engine.model.nccl_versions import parse_version

    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    return make_domain(
        nodes=1,
        ranks_per_node=8,
        scaleup=ScaleUp.of(gpu),
        fabric_id=None,
        nic_gbps=0.0,
        nics_per_node=0,
        nccl_version=parse_version(version),
    )


@pytest.mark.parametrize(("gpu_id", "version"), sorted(MEASURED_8_GPU_US))
def test_small_all_reduces_on_one_server_read_the_measured_floor(gpu_id: str, version: str) -> None:
    """Within 11 % at each size, 8 % on average; with NCCL's hwLat alone B200 read 40-44 %
    fast and A100 30-34 % (Hopper, the control, 3-8 %)."""
    d = _server(gpu_id, version)
    errors = [
        collective_time_s("all_reduce", float(nbytes), d)[0] * 1e6 / us - 1.0
        for nbytes, us in MEASURED_8_GPU_US[(gpu_id, version)].items()
    ]
    assert max(abs(e) for e in errors) <= 0.11
    assert sum(abs(e) for e in errors) / len(errors) <= 0.08


def test_the_latency_classes_add_the_measured_extra_to_every_ring_and_tree_step() -> None:
    hopper = NCCL_HW_LATENCY_S["nvlink"]
    for generation, extra in NVLINK_HOP_EXTRA_S.items():
        row = NCCL_HW_LATENCY_S[f"nvlink-{generation}"]
        for algo in ("ring", "tree"):
            for proto, seconds in hopper[algo].items():
                assert row[algo][proto] == pytest.approx(seconds + extra)
        assert row["nvls"] == hopper["nvls"]
    assert _server("h100-sxm", "2.27.3").scaleup_latency_class == "nvlink"
    assert _server("b200", "2.29.2").scaleup_latency_class == "nvlink-blackwell"
    assert _server("a100-80gb-sxm", "2.27.3").scaleup_latency_class == "nvlink-ampere"


# NCCL all-reduce of half-precision buffers on one server of 8 GPUs at 256 MB and more,
# microseconds, the same tables: bytes -> latency.
MEASURED_8_GPU_LARGE_US: dict[tuple[str, str], dict[int, float]] = {
    ("b200", "2.29.2"): {268435456: 715.4, 536870912: 1334.6},
    ("h100-sxm", "2.27.3"): {268435456: 1087.6},
}


@pytest.mark.parametrize(("gpu_id", "version"), sorted(MEASURED_8_GPU_LARGE_US))
def test_large_all_reduces_on_one_server_read_the_measured_bandwidth(
    gpu_id: str, version: str
) -> None:
    """Within 4 %: B200's NVLS at NCCL's Blackwell efficiency alone read 10-13 % fast
    (constants.NVLS_BLACKWELL_MEASURED); H100 is the control."""
    d = _server(gpu_id, version)
    for nbytes, us in MEASURED_8_GPU_LARGE_US[(gpu_id, version)].items():
        t = collective_time_s("all_reduce", float(nbytes), d)[0] * 1e6
        assert t / us == pytest.approx(1.0, abs=0.04), nbytes


def test_the_answer_names_the_measured_kernel_figures_it_used() -> None:
    """An NVFP4 B200 answer lists its NVLink step, its NVLS share and its NVFP4 rate among its
    assumptions; an A100 answer its NVLink step only; a Hopper answer none of them (NCCL's
    figures hold there)."""
    from advisor.engine import evaluate

    names = ("NVLink step latency", "NVLS bandwidth on Blackwell", "NVFP4 GEMM rate")

    def listed(raw: dict[str, object]) -> dict[str, object]:
        return {a["name"]: a["value"] for a in evaluate(raw)["assumptions"] if a["name"] in names}

    b200 = listed(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "b200",
            "gpus": 8,
            "precision": "fp4",
        }
    )
    assert b200 == {
        "NVLink step latency": pytest.approx(1.4),
        "NVLS bandwidth on Blackwell": 0.89,
        "NVFP4 GEMM rate": 1.485,
    }
    a100 = listed(
        {"workload": "training", "model": "llama3-8b", "gpu": "a100-80gb-sxm", "gpus": 16}
    )
    assert a100 == {"NVLink step latency": pytest.approx(1.2)}
    assert (
        listed({"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}) == {}
    )


def test_a_serving_answer_names_the_measured_decode_kernels_it_used() -> None:
    """A serving answer lists its quantized GEMMs' fixed part and overlap and the serving
    all-reduce of its generation (docs/MODEL.md 15.1); training answers and GPUs without such
    tables list neither."""
    from advisor.engine import evaluate

    names = ("FP4 GEMM fixed part and overlap", "FP8 GEMM fixed part and overlap")

    def listed(raw: dict[str, object]) -> dict[str, object]:
        return {
            a["name"]: a["value"]
            for a in evaluate(raw)["assumptions"]
            if a["name"] in names or a["name"] == "serving all-reduce inside a server"
        }

    serve = {"workload": "inference", "model": "llama3-70b", "gpus": 8}
    assert listed({**serve, "gpu": "b200", "precision": "fp4"}) == {
        "FP4 GEMM fixed part and overlap": "6.1 / 0.5",
        "serving all-reduce inside a server": "4.82 µs + 0.735 of NVLink",
    }
    assert listed({**serve, "gpu": "h100-sxm", "precision": "fp8"}) == {
        "FP8 GEMM fixed part and overlap": "10.1 / 0.267",
        "serving all-reduce inside a server": "2.80 µs + 0.58 of NVLink",
    }
    assert listed({**serve, "gpu": "mi300x", "precision": "fp8"}) == {}
    assert listed({"workload": "training", "model": "llama3-8b", "gpu": "b200", "gpus": 16}) == {}
