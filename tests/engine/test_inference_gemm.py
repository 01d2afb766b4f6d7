"""Inference GEMMs against measured GEMM latencies (docs/MODEL.md 15.1, "16-bit inference
GEMMs" and "Decode attention in closed form"): a BF16 GEMM on cuBLAS pays no wave-quantisation
loss; an FP8 one on Hopper or Blackwell neither, its compute and memory phases half overlapped."""

from __future__ import annotations

import itertools
import math

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.efficiency import gemm_time_s, profile
from advisor.engine.model.serving.compute import dense_decode_s

CATALOG = default_catalog()

# BF16 GEMM latencies TensorRT-LLM 1.3.0rc20's PyTorch flow measured on one H100 SXM (cuBLAS),
# microseconds: NVIDIA AIConfigurator 0.12.0's SILICON database,
# aiconfigurator_core/systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet
# (gemm_dtype bfloat16); (M, N, K) -> latency.  Shapes of 40 us or more, so the fixed cost
# of a launch is a small part.
H100_BF16_MEASURED_US: dict[tuple[int, int, int], float] = {
    (512, 4096, 16384): 94.6,
    (1024, 2048, 8192): 45.8,
    (1024, 6144, 4096): 68.7,
    (1024, 8192, 8192): 190.7,
    (1024, 4096, 16384): 171.7,
    (2048, 1024, 8192): 45.8,
    (2048, 2048, 8192): 86.5,
    (2048, 8192, 8192): 346.3,
}


def test_bf16_inference_gemms_read_the_measured_latencies_within_12_percent() -> None:
    """The training wave rule (tiles of 128 x 256 over 132 SMs), which inference used from two
    tiles of rows, read these 5-122 % slow (mean 57 %; 2048 x 1024 x 8192: 101.6 us against
    45.8 measured); without it the mean |error| is 9.4 %, the largest +14.0 %."""
    gpu = CATALOG.gpu("h100-sxm")
    errors = []
    for (m, n, k), measured_us in H100_BF16_MEASURED_US.items():
        predicted_us = gemm_time_s(gpu, "bf16", m, n, k, inference=True) * 1e6
        errors.append(predicted_us / measured_us - 1.0)
    assert max(abs(e) for e in errors) < 0.20, errors
    assert sum(abs(e) for e in errors) / len(errors) < 0.12, errors


@pytest.mark.parametrize("gpu_id", ["a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200"])
def test_a_bf16_inference_gemm_is_its_roofline_without_wave_loss(gpu_id: str) -> None:
    """2 M N K / (MAMF x sustained x peak) against the operand bytes at 0.8 of HBM, plus t0, at
    any M; a training GEMM of the same shape (64 tiles of 128 x 128 on A100's 108 SMs, 32 of
    128 x 256 on 132-148 SMs: one partly filled wave) still pays the wave loss."""
    gpu = CATALOG.gpu(gpu_id)
    p = profile(gpu)
    m, n, k = 1024.0, 1024.0, 8192.0
    rate = p.mamf_bf16 * p.sustained_ratio * gpu.peak_tflops("bf16") * 1e12
    memory = (m * k + k * n + m * n) * 2.0 / (gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY)
    compute = 2.0 * m * n * k / rate
    # Ampere overlaps the two only half (HALF_OVERLAP_16BIT_INFERENCE_GENERATIONS)
    half = 0.5 if gpu.generation == "ampere" else 0.0
    expected = max(compute, memory) + half * min(compute, memory) + p.gemm_latency_s
    assert gemm_time_s(gpu, "bf16", m, n, k, inference=True) == pytest.approx(expected)
    # the training GEMM's wave loss, against the same roofline without it
    full = max(compute, memory) + p.gemm_latency_s
    assert gemm_time_s(gpu, "bf16", m, n, k, inference=False) > 1.5 * full


# BF16 GEMM latencies TensorRT-LLM 1.0.0 measured on A100 SXM (AIConfigurator 0.12.0,
# a100_sxm/gemm/trtllm/1.0.0/gemm_perf.parquet, gemm_dtype bfloat16), us, at decode-sized M
# around A100's ridge (~150 rows in BF16): (M, N, K) -> latency.
A100_BF16_MEASURED_US: dict[tuple[int, int, int], float] = {
    (64, 2048, 8192): 30.0,
    (128, 2048, 8192): 37.0,
    (192, 2048, 8192): 51.5,
    (256, 2048, 8192): 52.9,
    (384, 2048, 8192): 75.8,
    (64, 8192, 4096): 45.9,
    (128, 8192, 4096): 63.9,
    (192, 8192, 4096): 64.2,
    (256, 8192, 4096): 91.7,
    (384, 8192, 4096): 109.3,
    (64, 16384, 8192): 181.0,
    (128, 16384, 8192): 202.6,
    (192, 16384, 8192): 320.5,
    (256, 16384, 8192): 401.3,
    (384, 16384, 8192): 403.3,
    (64, 8192, 8192): 91.7,
    (128, 8192, 8192): 113.6,
    (192, 8192, 8192): 154.8,
    (256, 8192, 8192): 158.1,
    (384, 8192, 8192): 202.0,
}


def test_a100_bf16_inference_gemms_overlap_memory_and_compute_only_half() -> None:
    """Near A100's ridge a 16-bit GEMM takes longer than the longer of its weight read and its
    math: the full-overlap roofline read these 20 calls 17.8 % fast on average (largest -43 %);
    with half the shorter phase added, within 30 % each and 10 % on average, signed."""
    gpu = CATALOG.gpu("a100-80gb-sxm")
    errors = [
        gemm_time_s(gpu, "bf16", m, n, k, inference=True) * 1e6 / measured_us - 1.0
        for (m, n, k), measured_us in A100_BF16_MEASURED_US.items()
    ]
    assert max(abs(e) for e in errors) < 0.30, errors
    assert sum(abs(e) for e in errors) / len(errors) < 0.15, errors
    assert abs(sum(errors) / len(errors)) < 0.10, errors


# FP8 GEMM latencies TensorRT-LLM 1.3.0rc20's PyTorch flow measured (AIConfigurator 0.12.0,
# .../gemm/trtllm/1.3.0rc20/gemm_perf.parquet, gemm_dtype fp8), us, at decode-sized M: four
# shapes like an 8B layer's GEMMs and four like a 405B TP8 layer's, (M, N, K) -> latency.
FP8_LAYERS_MEASURED_US: dict[str, tuple[dict[tuple[int, int, int], float], ...]] = {
    "h100-sxm": (
        {
            (256, 6144, 4096): 25.3,
            (256, 4096, 4096): 21.8,
            (256, 16384, 4096): 46.3,
            (256, 4096, 16384): 53.0,
        },
        {
            (256, 2048, 16384): 41.2,
            (256, 16384, 2048): 29.5,
            (256, 12288, 16384): 104.7,
            (256, 16384, 6144): 60.5,
        },
        {
            (512, 6144, 4096): 35.0,
            (512, 4096, 4096): 27.1,
            (512, 16384, 4096): 66.5,
            (512, 4096, 16384): 75.3,
        },
        {
            (512, 2048, 16384): 56.6,
            (512, 16384, 2048): 40.9,
            (512, 12288, 16384): 202.0,
            (512, 16384, 6144): 87.6,
        },
    ),
    "h200-sxm": (
        {
            (256, 6144, 4096): 23.2,
            (256, 4096, 4096): 20.6,
            (256, 16384, 4096): 39.7,
            (256, 4096, 16384): 51.3,
        },
        {
            (256, 2048, 16384): 39.3,
            (256, 16384, 2048): 26.5,
            (256, 12288, 16384): 91.5,
            (256, 16384, 6144): 51.7,
        },
        {
            (512, 6144, 4096): 34.0,
            (512, 4096, 4096): 26.5,
            (512, 16384, 4096): 64.4,
            (512, 4096, 16384): 75.3,
        },
        {
            (512, 2048, 16384): 58.7,
            (512, 16384, 2048): 40.0,
            (512, 12288, 16384): 165.6,
            (512, 16384, 6144): 87.4,
        },
    ),
}


@pytest.mark.parametrize("gpu_id", sorted(FP8_LAYERS_MEASURED_US))
def test_fp8_inference_gemms_read_the_measured_layers(gpu_id: str) -> None:
    """Each layer's four FP8 GEMMs summed: within 25 % of the measured sum and 10 % on average
    (the split-K rule with the training wave loss from two tiles of rows, which inference FP8
    used before, read them +14 to +49 %, 27 % on average)."""
    gpu = CATALOG.gpu(gpu_id)
    errors = []
    for layer in FP8_LAYERS_MEASURED_US[gpu_id]:
        predicted = sum(gemm_time_s(gpu, "fp8", m, n, k, inference=True) for m, n, k in layer)
        errors.append(predicted * 1e6 / sum(layer.values()) - 1.0)
    assert max(abs(e) for e in errors) < 0.25, errors
    assert sum(abs(e) for e in errors) / len(errors) < 0.10, errors


QUANTIZED_DECODE_MEASURED_US: dict[tuple[str, str], dict[tuple[int, int, int], float]] = {
    ("h100-sxm", "fp8"): {
        (1, 8192, 8192): 37.4,
        (1, 4096, 16384): 38.2,
        (1, 16384, 4096): 36.9,
        (64, 8192, 8192): 39.4,
        (64, 4096, 16384): 44.2,
        (64, 16384, 4096): 40.5,
        (256, 8192, 8192): 46.9,
        (256, 4096, 16384): 53.0,
        (256, 16384, 4096): 46.3,
        (512, 8192, 8192): 67.5,
        (512, 4096, 16384): 75.3,
        (512, 16384, 4096): 66.5,
    },
    ("b200", "fp8"): {
        (1, 8192, 8192): 26.3,
        (1, 4096, 16384): 28.4,
        (1, 16384, 4096): 25.6,
        (64, 8192, 8192): 27.8,
        (64, 4096, 16384): 30.5,
        (64, 16384, 4096): 27.2,
        (256, 8192, 8192): 34.4,
        (256, 4096, 16384): 39.5,
        (256, 16384, 4096): 31.9,
        (512, 8192, 8192): 43.1,
        (512, 4096, 16384): 52.0,
        (512, 16384, 4096): 43.5,
    },
}
"""Whole latencies (us) of FP8 inference GEMMs at decode rows, measured by TensorRT-LLM 1.3.0rc20
(AIConfigurator 0.12.0, ``<gpu>/gemm/trtllm/1.3.0rc20/gemm_perf.parquet``, ``Linear.forward``
under CUDA graphs, the activation's cast included): what efficiency.QUANTIZED_INFERENCE_GEMM's
fixed parts and overlaps were fitted on (``bench/aic_quantized_gemm_fit.py``)."""


@pytest.mark.parametrize(("gpu_id", "precision"), sorted(QUANTIZED_DECODE_MEASURED_US))
def test_a_quantized_decode_gemm_reads_the_measured_kernel_whole(
    gpu_id: str, precision: str
) -> None:
    """An FP8 inference GEMM at decode rows pays its kernel's fixed part and the activation's
    cast (10 us beyond the 16-bit kernel's on Hopper and Blackwell), no wave loss, and its
    generation's overlap: within 15 % of every measured latency, 8 % on average.  Without the
    fixed part (the rule before) it read them 21-50 % fast at M <= 1,024."""
    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    errors = [
        gemm_time_s(gpu, precision, m, n, k, inference=True) * 1e6 / measured - 1.0
        for (m, n, k), measured in QUANTIZED_DECODE_MEASURED_US[(gpu_id, precision)].items()
    ]
    assert max(abs(e) for e in errors) < 0.15, errors
    assert sum(abs(e) for e in errors) / len(errors) < 0.08, errors


def test_quantized_inference_gemms_keep_no_wave_loss() -> None:
    """Hopper and Blackwell: one more tile of rows adds its FLOPs, no wave of idle SMs (the
    tables read no step at a wave boundary)."""
    gpu = CATALOG.gpu("h100-sxm")
    assert gpu is not None
    p = profile(gpu)
    n, k = 8192.0, 8192.0
    before = gemm_time_s(gpu, "fp8", p.tile_m * p.sms / 64, n, k, inference=True)
    after = gemm_time_s(gpu, "fp8", p.tile_m * p.sms / 64 + 1, n, k, inference=True)
    assert after - before < 0.01 * before


def test_ada_fp8_inference_gemms_keep_the_split_k_rule() -> None:
    """L40S (no FP8 GEMM table read): below one tile of rows no wave loss, from two tiles the
    training wave loss."""
    gpu = CATALOG.gpu("l40s")
    p = profile(gpu)
    rate = p.mamf_fp8 * p.sustained_ratio * gpu.peak_tflops("fp8") * 1e12
    m, n, k = 1024.0, 1024.0, 8192.0
    tiles = math.ceil(m / p.tile_m) * math.ceil(n / p.tile_n)
    wave = math.ceil(tiles / p.sms) * p.sms / tiles
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    expected = max(2.0 * m * n * k / rate * wave, (m * k + k * n + m * n) / hbm)
    assert gemm_time_s(gpu, "fp8", m, n, k, inference=True) == pytest.approx(
        expected + p.gemm_latency_s
    )


def _scenario(model: str, gpu: str, tp: int) -> Scenario:
    return parse_scenario(
        {
            "workload": "inference",
            "model": model,
            "gpu": gpu,
            "gpus": 8,
            "gpus_per_node": 8,
            "precision": "bf16",
            "inference": {
                "deployment": "replicas",
                "prompt_tokens": 2048,
                "output_tokens": 512,
                "requests_per_s": 1.0,
            },
            "parallelism": {"tp": tp},
        },
        CATALOG,
    )


@pytest.mark.parametrize(
    ("model", "gpu", "tp"),
    [
        ("llama3-8b", "h100-sxm", 1),
        ("llama3-70b", "h200-sxm", 1),
        ("llama3-70b", "h100-sxm", 4),
        ("llama3.1-405b", "h100-sxm", 8),
    ],
)
def test_a_bf16_decode_step_never_costs_more_per_sequence_at_a_larger_batch(
    model: str, gpu: str, tp: int
) -> None:
    """The defect of docs/MODEL.md 15.1 (a step of 256 sequences dearer per sequence than one of
    128) is gone for BF16: e.g. Llama 3 8B TP1 H100, context 1,024: 103.7 -> 79.3 us per
    sequence at 128 -> 256 (the wave loss made it rise between one and two tiles of rows).
    FP8 still has it."""
    s = _scenario(model, gpu, tp)
    per_sequence = [
        dense_decode_s(s, float(b), 1, 1024.0, tp, 1) / b for b in (64, 128, 192, 256, 384, 1024)
    ]
    for smaller, larger in itertools.pairwise(per_sequence):
        assert larger <= smaller * (1.0 + 1e-12)


# NVFP4 GEMM latencies TensorRT-LLM 1.3.0rc20's PyTorch flow measured on one B200 SXM,
# microseconds: AIConfigurator 0.12.0's SILICON database,
# aiconfigurator_core/systems/data/b200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet (gemm_dtype
# nvfp4); (M, N, K) -> latency, the compute-bound rows (M >= 2,048) whose rate the profile
# reads (ComputeProfile.fp4_over_fp8).
B200_NVFP4_MEASURED_US: dict[tuple[int, int, int], float] = {
    (2048, 8192, 8192): 82.8,
    (2048, 16384, 8192): 140.8,
    (2048, 8192, 16384): 154.4,
    (2048, 16384, 16384): 261.4,
    (4096, 8192, 8192): 146.3,
    (4096, 16384, 8192): 272.0,
    (4096, 8192, 16384): 311.2,
    (4096, 16384, 16384): 530.5,
    (8192, 8192, 8192): 284.6,
    (8192, 16384, 8192): 618.8,
    (8192, 8192, 16384): 620.6,
}


def test_compute_bound_nvfp4_gemms_read_the_measured_rate() -> None:
    """NVFP4 GEMMs at the FP8 rate times TensorRT-LLM's measured NVFP4 / FP8 rate (1.485 on
    B200, not the peaks' 2x; docs/MODEL.md 15.1, "NVFP4 GEMMs, read against TensorRT-LLM's
    kernels"): mean signed error -3.4 %, mean |error| 6.5 %, none beyond 12 %.  At the FP4
    peak with FP8's fraction they read 28 % fast on average."""
    gpu = CATALOG.gpu("b200")
    assert gpu is not None
    errors = [
        gemm_time_s(gpu, "fp4", m, n, k, inference=True) * 1e6 / measured_us - 1.0
        for (m, n, k), measured_us in B200_NVFP4_MEASURED_US.items()
    ]
    assert abs(sum(errors) / len(errors)) <= 0.06
    assert sum(abs(e) for e in errors) / len(errors) <= 0.08
    assert max(abs(e) for e in errors) <= 0.13


@pytest.mark.parametrize("gpu_id", ["b200", "gb200-nvl72", "b300", "gb300-nvl72"])
def test_an_nvfp4_gemm_runs_at_the_measured_rate_over_fp8(gpu_id: str) -> None:
    """A compute-bound NVFP4 GEMM takes the FP8 one's time over the profile's measured rate
    (1.49-1.71, not the FP4 / FP8 peak ratio of 2 on B200 / GB200 and 3 on B300 / GB300), and
    InferenceGemm gives the same bits; one row (the weight read) stays cheaper than FP8's."""
    from advisor.engine.model.serving.gemm import inference_gemm

    gpu = CATALOG.gpu(gpu_id)
    assert gpu is not None
    p = profile(gpu)
    assert 1.4 <= p.fp4_over_fp8 <= 1.8 < gpu.peak_tflops("fp4") / gpu.peak_tflops("fp8")
    m, n, k = 8192.0, 16384.0, 16384.0
    t0 = p.gemm_latency_s
    fp4 = gemm_time_s(gpu, "fp4", m, n, k, inference=True)
    fp8 = gemm_time_s(gpu, "fp8", m, n, k, inference=True)
    assert (fp8 - t0) / (fp4 - t0) == pytest.approx(p.fp4_over_fp8, rel=0.02)
    assert inference_gemm(gpu, "fp4", n, k).time_s(m) == fp4
    assert gemm_time_s(gpu, "fp4", 1.0, n, k, inference=True) < gemm_time_s(
        gpu, "fp8", 1.0, n, k, inference=True
    )
