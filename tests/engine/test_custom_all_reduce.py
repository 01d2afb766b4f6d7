"""A serving all-reduce inside an NVLink domain on Hopper and Blackwell runs on the serving
engine's own one-shot kernel where that beats NCCL (serving/intra.py, docs/MODEL.md 15.2): read
against latencies TensorRT-LLM 1.3.0rc20 measured for its custom all-reduce (AIConfigurator 0.12.0,
``systems/data/<gpu>/comm/trtllm/1.3.0rc20/custom_allreduce_perf.parquet``, BF16; the table's
``message_size`` counts elements, so bytes = 2 x message_size)."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.collectives import scaleup_time_s
from advisor.engine.model.serving.intra import intra_time_s

CATALOG = default_catalog()

# (GPU, ranks, bytes, measured seconds)
MEASURED: list[tuple[str, int, float, float]] = [
    ("h100-sxm", 2, 65536.0, 3.06e-6),
    ("h100-sxm", 2, 524288.0, 4.52e-6),
    ("h100-sxm", 4, 131072.0, 4.26e-6),
    ("h100-sxm", 4, 524288.0, 7.92e-6),
    ("h100-sxm", 8, 65536.0, 4.59e-6),
    ("h100-sxm", 8, 131072.0, 6.20e-6),
    ("h100-sxm", 8, 262144.0, 10.17e-6),
    ("h100-sxm", 8, 524288.0, 17.60e-6),
    ("h200-sxm", 4, 524288.0, 7.73e-6),
    ("h200-sxm", 8, 262144.0, 10.11e-6),
    ("h200-sxm", 8, 524288.0, 17.78e-6),
    ("b200", 2, 131072.0, 5.0e-6),
    ("b200", 4, 262144.0, 5.8e-6),
    ("b200", 4, 524288.0, 7.2e-6),
    ("b200", 8, 131072.0, 6.3e-6),
    ("b200", 8, 262144.0, 7.9e-6),
    ("b200", 8, 524288.0, 10.9e-6),
    ("gb200-nvl72", 2, 262144.0, 4.6e-6),
    ("gb200-nvl72", 4, 262144.0, 5.7e-6),
    ("gb200-nvl72", 4, 524288.0, 7.0e-6),
]


@pytest.mark.parametrize(("gpu_id", "ranks", "nbytes", "measured"), MEASURED)
def test_a_serving_all_reduce_reads_tensorrt_llms_measured_kernel(
    gpu_id: str, ranks: int, nbytes: float, measured: float
) -> None:
    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    assert intra_time_s(gpu, "all_reduce", nbytes, ranks) == pytest.approx(measured, rel=0.15)


def test_the_tp8_decode_all_reduce_of_25_rows_of_llama_70b_is_the_measured_one() -> None:
    """25 rows x 8,192 x 2 bytes = 400 KB on 8 H100: TensorRT-LLM's kernel 14.35 us
    (interpolated between 10.17 and 17.60 us), NCCL about 20 us (the engine's NCCL model and
    AIConfigurator's NCCL 2.27 / 2.29 tables alike)."""
    gpu = CATALOG.gpu("h100-sxm")
    assert gpu is not None
    nbytes = 25 * 8192 * 2.0
    t = intra_time_s(gpu, "all_reduce", nbytes, 8)
    assert t == pytest.approx(14.35e-6, rel=0.10)
    assert scaleup_time_s(gpu, "all_reduce", nbytes, 8) > 18e-6


def test_large_all_reduces_and_other_generations_keep_nccl() -> None:
    h100 = CATALOG.gpu("h100-sxm")
    a100 = CATALOG.gpu("a100-80gb-sxm")
    pcie = CATALOG.gpu("h100-pcie")
    assert h100 is not None and a100 is not None and pcie is not None
    prefill = 8192 * 8192 * 2.0
    assert intra_time_s(h100, "all_reduce", prefill, 8) == scaleup_time_s(
        h100, "all_reduce", prefill, 8
    )
    for gpu in (a100, pcie):
        for nbytes in (65536.0, 409600.0):
            assert intra_time_s(gpu, "all_reduce", nbytes, 8) == scaleup_time_s(
                gpu, "all_reduce", nbytes, 8
            )


def test_blackwell_decode_all_reduces_are_the_serving_kernels_not_nccls() -> None:
    """On 8 B200 NCCL's small all-reduce measures 25-28 us (AIConfigurator 0.12.0's NCCL 2.27-2.29
    tables, and the engine's NCCL model reads 25.5 us), TensorRT-LLM's own kernel 5.9-7.9 us up
    to 256 KB: a decode step's all-reduce is the serving kernel's (serving/intra.py,
    CUSTOM_ALL_REDUCE["blackwell"])."""
    gpu = CATALOG.gpu("b200")
    assert gpu is not None
    nbytes = 16 * 8192 * 2.0
    assert scaleup_time_s(gpu, "all_reduce", nbytes, 8) > 20e-6
    assert intra_time_s(gpu, "all_reduce", nbytes, 8) < 8e-6
