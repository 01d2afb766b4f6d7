"""NVFP4 serving on Blackwell (docs/MODEL.md 15.1, "NVFP4 serving"): the precision is accepted
for serving on GPUs with FP4 tensor cores and refused, naming ``precision``, elsewhere; its
weights, KV cache and GEMMs are priced as NVIDIA's FP4 checkpoints run."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import evaluate
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import KV_ELEMENT_BYTES, WEIGHT_BYTES
from advisor.engine.facts.weights import served_weight_bytes
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.efficiency import gemm_time_s
from advisor.engine.model.serving.compute import kv_bytes_per_token

CAT = default_catalog()
BLACKWELL_FP4 = {"b200": 9000.0, "gb200-nvl72": 10000.0, "b300": 13500.0, "gb300-nvl72": 15000.0}


def _raw(gpu: str, precision: str, workload: str = "inference") -> dict[str, Any]:
    raw: dict[str, Any] = {
        "workload": workload,
        "model": "llama3-70b",
        "gpu": gpu,
        "gpus": 8,
        "precision": precision,
    }
    if workload == "inference":
        raw["inference"] = {"requests_per_s": 10}
    return raw


@pytest.mark.parametrize(("gpu", "tflops"), sorted(BLACKWELL_FP4.items()))
def test_blackwell_gpus_carry_a_sourced_dense_fp4_peak(gpu: str, tflops: float) -> None:
    spec = CAT.gpu(gpu)
    assert spec is not None
    assert spec.peak_tflops("fp4") == tflops
    assert "FP4" in dict(spec.sources)["fp4_dense_tflops"]
    assert parse_scenario(_raw(gpu, "fp4"), CAT).precision == "fp4"


@pytest.mark.parametrize("gpu", ["h100-sxm", "h200-sxm", "a100-80gb-sxm", "mi355x", "l40s"])
def test_fp4_on_a_gpu_without_fp4_tensor_cores_is_refused_naming_precision(gpu: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_raw(gpu, "fp4"), CAT)
    assert "precision" in err.value.field_errors
    said = " ".join(err.value.field_errors["precision"])
    # fp4 is NVFP4: the MI355X's own 4-bit format is MXFP4, so it is not "no fp4 tensor cores"
    assert "runs no NVFP4 (fp4 here: NVIDIA Blackwell's 4-bit format)" in said
    assert "tensor cores" not in said


@pytest.mark.parametrize("workload", ["training", "fine_tuning"])
def test_fp4_training_is_refused_naming_precision(workload: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(_raw("b200", "fp4", workload), CAT)
    assert "serving precision" in " ".join(err.value.field_errors["precision"])


def test_fp4_weights_take_4_5_bits_with_a_16_bit_embedding_and_head() -> None:
    model = CAT.model("llama3-70b")
    assert model is not None
    assert WEIGHT_BYTES["fp4"] == 0.5625  # 4 bits + one FP8 scale per 16 elements
    expected = (model.params - model.embedding_params) * 0.5625 + model.embedding_params * 2.0
    assert served_weight_bytes(model, "fp4") == pytest.approx(expected)
    assert 42e9 < served_weight_bytes(model, "fp4") < 43.5e9


def test_fp4_keeps_an_fp8_kv_cache() -> None:
    model = CAT.model("llama3-70b")
    assert model is not None
    assert KV_ELEMENT_BYTES["fp4"] == 1.0
    assert kv_bytes_per_token(model, "fp4") == kv_bytes_per_token(model, "fp8")


def test_an_fp4_gemm_is_faster_than_fp8_where_compute_bound_and_reads_fewer_bytes() -> None:
    b200 = CAT.gpu("b200")
    assert b200 is not None
    big = (4096.0, 8192.0, 8192.0)
    assert gemm_time_s(b200, "fp4", *big, inference=True) < gemm_time_s(
        b200, "fp8", *big, inference=True
    )
    decode = (1.0, 8192.0, 8192.0)  # one row: the weight read
    assert gemm_time_s(b200, "fp4", *decode, inference=True) < gemm_time_s(
        b200, "fp8", *decode, inference=True
    )


def test_70b_fp4_on_b200_serves_more_than_fp8_and_fits_one_gpu() -> None:
    fp8 = evaluate(_raw("b200", "fp8"))
    fp4 = evaluate(_raw("b200", "fp4"))
    assert fp4["workload"]["memory"]["weights_gb"] < fp8["workload"]["memory"]["weights_gb"]
    rate = "max_requests_per_s_at_target"
    assert fp4["metrics"][rate] > fp8["metrics"][rate]
