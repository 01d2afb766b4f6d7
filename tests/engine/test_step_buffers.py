"""Per-step passes over the weight and gradient buffers: paid once per step by every GPU over
all its local parameters, whatever the batch and however the optimizer state is sharded
(docs/MODEL.md 5.1, "Optimizer step and the per-step buffer passes")."""

from __future__ import annotations

import math
from typing import Any

import pytest

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import (
    FP8_WEIGHT_CAST_BYTES_PER_PARAM,
    HBM_EFFICIENCY,
    STEP_GRAD_BUFFER_BYTES_PER_PARAM,
)
from advisor.engine.input.scenario import Scenario, parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import TrainingPlan


def _planned(precision: str, gpus: int, **parallelism: Any) -> tuple[Scenario, TrainingPlan]:
    raw = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "b200",
        "gpus": gpus,
        "gpus_per_node": 8,
        "precision": precision,
        "sequence_length": 8192,
        "training": {"global_batch_sequences": gpus // 2},
        "parallelism": {"tp": 1, "pp": 1, "cp": 2, "dp": gpus // 2, "micro_batch": 1} | parallelism,
    }
    s = parse_scenario(raw, default_catalog())
    t = plan_workload(s).training
    assert t is not None
    return s, t


def _hbm_bytes_per_s(s: Scenario) -> float:
    return s.gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY


@pytest.mark.parametrize("gpus", [64, 256])
def test_the_gradient_buffer_pass_is_not_sharded_away(gpus: int) -> None:
    # one sequence per two GPUs, the optimizer state sharded over dp x cp: Adam's share
    # shrinks with the job, the zeroing and NaN check of the whole fp32 gradient buffer not
    s, t = _planned("bf16", gpus)
    buffer_s = s.model.dense_params * STEP_GRAD_BUFFER_BYTES_PER_PARAM / _hbm_bytes_per_s(s)
    assert t.optimizer_s >= buffer_s
    assert t.optimizer_s < 1.2 * buffer_s


def test_fp8_casts_every_local_weight_once_per_step() -> None:
    s8, fp8 = _planned("fp8", 64)
    _, bf16 = _planned("bf16", 64)
    cast_s = s8.model.dense_params * FP8_WEIGHT_CAST_BYTES_PER_PARAM / _hbm_bytes_per_s(s8)
    assert fp8.optimizer_s - bf16.optimizer_s == pytest.approx(cast_s, rel=1e-9)


def test_tensor_parallelism_splits_the_pass_with_the_weights() -> None:
    _, tp1 = _planned("fp8", 64)
    _, tp2 = _planned("fp8", 64, tp=2, dp=16)
    assert tp2.optimizer_s == pytest.approx(tp1.optimizer_s / 2, rel=0.05)


@pytest.mark.parametrize(("gpus", "ranks"), [(64, 64), (512, 512)])
def test_the_gradients_move_in_megatron_buckets(gpus: int, ranks: int) -> None:
    # Megatron-Core's bucket: max(40 M, 1 M x dp size) parameters, one reduce-scatter and one
    # all-gather per bucket; dp x cp = ranks here
    s, t = _planned("bf16", gpus)
    (rs, rs_bytes, rs_count), (ag, ag_bytes, ag_count) = t.dp_op_bytes
    assert (rs, ag) == ("reduce_scatter", "all_gather")
    expected = math.ceil(s.model.dense_params / max(40e6, 1e6 * ranks))
    assert rs_count == ag_count == expected
    assert rs_bytes * rs_count == pytest.approx(t.dp_bytes)
    assert ag_bytes == rs_bytes


def test_a_job_states_its_own_bucket_size() -> None:
    # parallelism.dp_bucket_params: Megatron-Core's bucket_size as the job sets it (NVIDIA's
    # MLPerf 8B recipe: 768,000,000 parameters), instead of max(40 M, 1 M x dp x cp)
    s, t = _planned("fp8", 64, dp_bucket_params=768_000_000)
    (_, rs_bytes, rs_count), (_, _, ag_count) = t.dp_op_bytes
    assert rs_count == ag_count == math.ceil(s.model.dense_params / 768e6)
    assert rs_bytes * rs_count == pytest.approx(t.dp_bytes)


def test_a_bucket_below_a_weight_tensor_is_refused_naming_the_field() -> None:
    with pytest.raises(ScenarioError, match=r"parallelism\.dp_bucket_params.*1,000,000"):
        _planned("fp8", 64, dp_bucket_params=64)
