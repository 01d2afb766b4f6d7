"""A served checkpoint's weights (docs/MODEL.md 15.1, "The 16-bit embedding and output head"):
a quantized checkpoint keeps its embedding table and output head at 16 bits (Model Optimizer
disables ``*lm_head*``; no embedding module is quantized), and one fit rule, the capacity as
the runtime reads it, holds for training and serving."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HEAD_PRECISION, MEMORY_USABLE_FRACTION
from advisor.engine.facts.weights import served_weight_bytes
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.efficiency import gemm_time_s
from advisor.engine.model.memory import inference_memory
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving import compute

CAT = default_catalog()


def _serving(model: str, gpu: str, precision: str, tp: int) -> Scenario:
    raw: dict[str, Any] = {
        "workload": "inference",
        "model": model,
        "gpu": gpu,
        "gpus": 8,
        "precision": precision,
        "parallelism": {"tp": tp},
        "inference": {
            "deployment": "replicas",
            "requests_per_s": 1.0,
            "prompt_tokens": 128,
            "output_tokens": 4096,
        },
    }
    return parse_scenario(raw, CAT)


def test_the_head_and_embedding_stay_16_bit_under_fp8_only() -> None:
    assert HEAD_PRECISION["fp8"] == "bf16"
    assert HEAD_PRECISION["bf16"] == "bf16"
    assert HEAD_PRECISION["fp16"] == "fp16"


def test_llama3_70b_fp8_weights_count_the_embedding_and_head_at_two_bytes() -> None:
    model = CAT.model("llama3-70b")
    assert model is not None and not model.tied_embeddings
    table = float(model.vocab * model.hidden)  # 128,256 x 8,192: 1.05 B parameters each
    fp8 = served_weight_bytes(model, "fp8")
    assert fp8 == pytest.approx((model.params - 2 * table) * 1.0 + 2 * table * 2.0)
    assert fp8 - model.params == pytest.approx(2 * table)  # 2.1 GB more than 1 byte each
    assert served_weight_bytes(model, "bf16") == pytest.approx(2.0 * model.params)


def test_an_expert_parallel_instance_counts_them_in_its_dense_part() -> None:
    model = CAT.model("deepseek-v3")
    assert model is not None
    dense = served_weight_bytes(model, "fp8", model.dense_params)
    assert dense == pytest.approx(model.dense_params + model.embedding_params)


def test_the_fp8_output_head_runs_as_a_16_bit_gemm(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decode step of an FP8 checkpoint prices its output head as the 16-bit GEMM it is: the
    step less the same step with an 8-bit head is the two heads' difference."""
    scenario = _serving("llama3-8b", "h100-sxm", "fp8", 1)
    model = scenario.model
    rows = 256.0
    head_bf16 = gemm_time_s(scenario.gpu, "bf16", rows, model.vocab, model.hidden, inference=True)
    head_fp8 = gemm_time_s(scenario.gpu, "fp8", rows, model.vocab, model.hidden, inference=True)
    assert head_bf16 > head_fp8
    step = compute._dense_decode_s(scenario, rows, 1, 2048.0, 1, 1, False)
    monkeypatch.setitem(compute.HEAD_PRECISION, "fp8", "fp8")
    step_8bit_head = compute._dense_decode_s(scenario, rows, 1, 2048.0, 1, 1, False)
    assert step - step_8bit_head == pytest.approx(head_bf16 - head_fp8, rel=1e-6)


def test_70b_fp8_on_one_h100_is_answered_with_its_real_weights() -> None:
    """TensorRT-LLM's v0.17 page runs Llama 3.1 70B FP8 as TP1 on an 80 GB H100: 72.7 GB of
    weights (the checkpoint's size), past 0.9 x 80 x 10^9 = 72 GB but inside the fit rule on
    the capacity the runtime reads (0.9 x 80 GiB = 77.3 GB)."""
    scenario = _serving("llama3-70b", "h100-sxm", "fp8", 1)
    workload = plan_workload(scenario)
    pool = workload.inference.serving.decode  # type: ignore[union-attr]
    assert 72.0 < pool.weights_gb_per_gpu < 73.5
    assert pool.max_batch_per_instance >= 1


def test_training_and_serving_share_one_fit_rule() -> None:
    scenario = _serving("llama3-70b", "h100-sxm", "bf16", 4)
    gpu = scenario.gpu
    assert gpu.usable_bytes == pytest.approx(MEMORY_USABLE_FRACTION * 80 * 2**30)
    mem = inference_memory(scenario, 4, 1, 4)
    assert mem.usable_gb == pytest.approx(gpu.usable_bytes / 1e9)
    assert mem.usable_gb == pytest.approx(0.9 * mem.capacity_gb)


def test_fp8_training_runs_its_output_head_in_bf16() -> None:
    """Megatron-Core's output layer is ``tensor_parallel.ColumnParallelLinear``, outside
    Transformer Engine's ``fp8_autocast``: an FP8 job's head (forward and two backward GEMMs)
    is priced at the BF16 rate, the same as the BF16 job's."""
    from advisor.engine.model import stage_time

    def head_s(precision: str) -> float:
        raw = {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "h100-sxm",
            "gpus": 8,
            "precision": precision,
            "sequence_length": 8192,
            "training": {"global_batch_sequences": 64},
        }
        scenario = parse_scenario(raw, CAT)
        return stage_time._layer_time(scenario, 1, 1, 1, 1, "none")[1]

    scenario = parse_scenario(
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8}, CAT
    )
    model = scenario.model
    tokens = 8192.0
    bf16 = 3.0 * gemm_time_s(scenario.gpu, "bf16", tokens, model.vocab, model.hidden)
    fp8 = 3.0 * gemm_time_s(scenario.gpu, "fp8", tokens, model.vocab, model.hidden)
    assert fp8 < bf16
    assert head_s("fp8") == pytest.approx(bf16, rel=1e-12)
    assert head_s("bf16") == pytest.approx(bf16, rel=1e-12)
