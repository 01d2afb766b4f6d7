"""The dense serving step on its roofline (docs/MODEL.md 15.1): the regimes a decode step
passes through as its batch grows, and how far the published dense rows can be read at all
(NVIDIA's two performance-overview pages measure the same cases differently)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY, WEIGHT_BYTES
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.serving.compute import dense_decode_s
from advisor.engine.tools.validation import serving_capacity_rows, validate_row

# the dense rows (the MoE rows of the developer guide: test_serving_moe_rows)
ROWS = tuple(
    row
    for row in serving_capacity_rows()
    if not default_catalog().model(row["config"]["model"]).is_moe
)
LINES = {row["id"]: validate_row(row)[0] for row in ROWS}


def _scenario(model: str, gpu: str, tp: int) -> Scenario:
    raw: dict[str, Any] = {
        "workload": "inference",
        "model": model,
        "gpu": gpu,
        "gpus": 8,
        "precision": "fp8",
        "parallelism": {"tp": tp},
        "inference": {"deployment": "replicas", "requests_per_s": 1.0},
    }
    return parse_scenario(raw, default_catalog())


CASES = [("llama3-8b", "h100-sxm", 1), ("llama3-70b", "h200-sxm", 1), ("llama3-70b", "h100-sxm", 4)]
BATCHES = [2**k for k in range(13)]  # 1 .. 4096 sequences


@pytest.mark.parametrize(("model", "gpu", "tp"), CASES)
def test_a_decode_step_moves_from_the_weight_read_to_the_flops(
    model: str, gpu: str, tp: int
) -> None:
    """Small batches are bound by reading the weights once (doubling the batch barely moves
    the step), large ones by the GEMMs' FLOPs and the KV read (doubling it nearly doubles the
    step); in between the step passes the ridge.  Context 128 keeps the KV read small, so the
    regimes are the GEMMs'."""
    s = _scenario(model, gpu, tp)
    step = {b: dense_decode_s(s, b, 1, 128.0, tp, 1, tp_comm=False) for b in BATCHES}
    growth = {b: step[2 * b] / step[b] for b in BATCHES[:-1]}
    assert growth[1] < 1.1 and growth[2] < 1.1  # memory-bound: the weights, once per step
    assert growth[2048] > 1.6  # compute-bound
    # the growth rises through the ridge (wave quantisation wiggles it by a few %)
    assert max(growth[b] for b in (1, 2, 4)) < min(growth[b] for b in (1024, 2048))


KERNEL_TABLE_BATCH_1_S = {
    ("llama3-8b", "h100-sxm", 1): 5.126e-3,
    ("llama3-70b", "h200-sxm", 1): 23.098e-3,
    ("llama3-70b", "h100-sxm", 4): 12.176e-3,
}
"""One decode step of one sequence at 128 tokens of context as the sum of TensorRT-LLM 1.3.0rc20's
measured kernels (NVIDIA AIConfigurator 0.12.0, ``cli estimate --estimate-mode static_gen
--batch-size 1 --isl 128 --gemm-quant-mode fp8 --kvcache-quant-mode fp8``, TPOT; the TP4 step
with its all-reduces), recorded from a run of the peer, which is never a dependency."""


@pytest.mark.parametrize(("model", "gpu", "tp"), CASES)
def test_a_decode_step_sits_on_or_above_both_roofs(model: str, gpu: str, tp: int) -> None:
    """No step beats the weight read at the catalog's HBM bandwidth x HBM_EFFICIENCY, nor the
    matmul FLOPs at the GPU's dense FP8 peak.  At batch 1 the step is the weight read plus the
    kernels' fixed parts, most of them the FP8 GEMMs' (13.1 us each on Hopper with the
    activation's cast: efficiency.QUANTIZED_INFERENCE_GEMM; 70B TP4 on H100, 80 layers, reads
    1.85 x its weights; docs/MODEL.md 15.1), and within 10 % of the measured kernels' sum."""
    s = _scenario(model, gpu, tp)
    m, gpu_spec = s.model, s.gpu
    weights = m.params * WEIGHT_BYTES["fp8"] / tp
    read_s = weights / (gpu_spec.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY)
    for b in BATCHES:
        step = dense_decode_s(s, b, 1, 128.0, tp, 1, tp_comm=False)
        flops_s = 2.0 * m.active_params * b / tp / (gpu_spec.peak_tflops("fp8") * 1e12)
        assert step >= 0.95 * read_s
        assert step >= flops_s
    assert dense_decode_s(s, 1, 1, 128.0, tp, 1, tp_comm=False) < 2.0 * read_s
    one = dense_decode_s(s, 1, 1, 128.0, tp, 1)
    assert one == pytest.approx(KERNEL_TABLE_BATCH_1_S[(model, gpu, tp)], rel=0.10)


def _case(row: dict[str, Any]) -> tuple[Any, ...]:
    c = row["config"]
    return (c["model"], c["gpu"], c["precision"], c["tp"], c["prompt_tokens"], c["output_tokens"])


def _page_pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    # the 72 v0.17 rows read after the model was frozen (``trtllm017-``); the page's rows added
    # later (``trtllm017b-``, docs/VALIDATION_SOURCES.md) are not the cases these tests describe
    v10 = {_case(r): r for r in ROWS if not r["id"].startswith("trtllm017")}
    v017 = {_case(r): r for r in ROWS if r["id"].startswith("trtllm017-")}
    return [(v10[k], v017[k]) for k in sorted(set(v10) & set(v017))]


def _page_gap(pair: tuple[dict[str, Any], dict[str, Any]]) -> float:
    metric = "output_tokens_per_s_per_instance"
    return abs(pair[0]["measured"][metric] / pair[1]["measured"][metric] - 1.0)


def test_the_two_nvidia_pages_disagree_by_5_percent_on_the_same_cases() -> None:
    """27 cases (Llama 3.3 70B TP1 H200 and TP2 H100, 405B TP8 H200, nine ISL/OSL pairs)
    appear on both pages (v1.0 PyTorch backend, v0.17 TensorRT engines): their throughputs
    differ by 5.0 % on average and up to 21.5 %, the floor under any one model of both."""
    pairs = _page_pairs()
    assert len(pairs) == 27
    gaps = [_page_gap(p) for p in pairs]
    assert 0.04 < sum(gaps) / len(gaps) < 0.06
    assert max(gaps) < 0.22


def _floor(pair: tuple[dict[str, Any], dict[str, Any]]) -> float:
    """The least error one prediction can have on the worse of two measurements a, b of one
    case: p = 2ab / (a + b) misses both by |a - b| / (a + b)."""
    metric = "output_tokens_per_s_per_instance"
    a, b = float(pair[0]["measured"][metric]), float(pair[1]["measured"][metric])
    return abs(a - b) / (a + b)


def test_one_figure_could_read_both_pages_of_every_shared_case_within_10_percent() -> None:
    """The pages' largest disagreement (21.5 %, 70B TP1 H200 500/2000) costs one prediction
    at least 9.7 % on one page, the others at most 5.2 %, 2.4 % on average: no shared case
    stops a model from reading both pages within 15 %."""
    floors = [_floor(p) for p in _page_pairs()]
    assert 0.09 < max(floors) < 0.10
    assert sorted(floors)[-2] < 0.06
    assert 0.02 < sum(floors) / len(floors) < 0.03


KNOWN_HELD_OUT_MISSES: set[str] = {
    # batch B of the v0.17 page (L40S FP8, A100 FP16; docs/VALIDATION_SOURCES.md), read once when
    # landed: 17 of the 33 Llama 3.1 70B TP4 / TP8 cells on L40S and A100 read 25-46 % fast; the
    # ten L40S ones came inside 25 % with NCCL's PCIe ring rating, and six of the seven A100
    # ones with Ampere's half-overlapped 16-bit GEMMs (2026-12-02, MODEL.md 15.1)
    "trtllm017b-llama3-70b-a100-80gb-sxm-tp8-128-4096",
    # the v0.20 page (docs/VALIDATION_SOURCES.md, "Fresh rows from sources not used so far",
    # 2026-12-06), read once when added, not acted on: 18 of its 42 B200 FP4 cells, all at
    # TP2-TP8, read 25-53 % fast, 17 of them with 1,000 output tokens or more; after the decode
    # step's per-op refit (2026-12-06, session "ops", MODEL.md 15.1) 14 of them, five TP4 / TP8
    # cells inside 25 % and the TP2 128 / 2,048 one past it (+23.4 -> +27.8 %)
    "trtllm020-llama3-70b-b200-fp4-tp2-1000-2000",
    "trtllm020-llama3-70b-b200-fp4-tp2-128-2048",
    "trtllm020-llama3-70b-b200-fp4-tp2-1024-2048",
    "trtllm020-llama3-70b-b200-fp4-tp2-128-4096",
    "trtllm020-llama3-70b-b200-fp4-tp2-500-2000",
    "trtllm020-llama3-70b-b200-fp4-tp4-1024-2048",
    "trtllm020-llama3-70b-b200-fp4-tp4-128-2048",
    "trtllm020-llama3-70b-b200-fp4-tp8-1000-1000",
    "trtllm020-llama3-70b-b200-fp4-tp8-1000-2000",
    "trtllm020-llama3-70b-b200-fp4-tp8-1024-2048",
    "trtllm020-llama3-70b-b200-fp4-tp8-128-128",
    "trtllm020-llama3-70b-b200-fp4-tp8-128-2048",
    "trtllm020-llama3-70b-b200-fp4-tp8-128-4096",
    "trtllm020-llama3-70b-b200-fp4-tp8-500-2000",
    # the v0.14 page (docs/VALIDATION_SOURCES.md, "TensorRT-LLM v0.14 rows", 2026-12-07), read
    # once when added, not acted on: 13 of its 36 cells read 26-192 % fast, 12 of them Llama 3.1
    # 70B FP16 on H100 with 1,000 output tokens or more (on the 156 configurations both pages
    # print the v0.14 page measures 0.48-1.07 x the v0.17 page's figure, median 0.91)
    "trtllm014-llama3-70b-h100-sxm-fp16-tp2-128-4096",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp2-2048-2048",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp4-128-2048",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp4-128-4096",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp4-20000-2000",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp4-2048-2048",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp4-500-2000",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp8-1000-1000",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp8-128-2048",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp8-128-4096",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp8-2048-2048",
    "trtllm014-llama3-70b-h100-sxm-fp16-tp8-500-2000",
    "trtllm014-llama3-70b-h100-sxm-fp8-tp1-2048-2048",
}
"""Held-out rows the model misses by more than their tolerance (a held-out miss does not fail
``validate``; docs/MODEL.md 15.1 and 9.2): the batch-B rows above; the seven Blackwell FP4 rows
of the v1.0 page that read 25-33 % fast when landed (2026-12-04, NVFP4 priced with the FP8
GEMMs' fraction of peak) are inside 25 % since the NVFP4 GEMMs run at TensorRT-LLM's measured
rate over FP8's (largest +18.4 %; docs/MODEL.md 15.1, "NVFP4 GEMMs, read against TensorRT-LLM's
kernels"); among the Hopper rows none
since 2026-12-02, when the decode attention was
priced by TensorRT-LLM's measured kernels and the KV cache sized in binary gigabytes: Llama 3.1
70B TP1 H200 500/2000 on the v0.17 page read +32 % before (+15.0 % since), 70B TP1 on H100
128/128 (v0.17) -70 % (-7.5 % since: 70 GB of FP8 weights had left almost no KV cache in the
72 GB the engine took as usable, 12 GB in the binary gigabytes less 2 GB)."""


def test_every_dense_row_reads_within_its_tolerance_but_the_known_misses() -> None:
    """Every development row within 18 % (largest 17.3 % with the measured decode attention,
    19.3 % before it, docs/MODEL.md 15.1), every held-out row
    within its 25 % tolerance except the misses listed above, and each listed miss is one
    (so the list cannot outlive the miss)."""
    for row in ROWS:
        error = abs(LINES[row["id"]]["error_pct"])
        if row["use"] == "development":
            assert error < 18.0, row["id"]
        elif row["id"] in KNOWN_HELD_OUT_MISSES:
            assert error > row["tolerance_pct"], row["id"]
        else:
            assert error <= row["tolerance_pct"], row["id"]
