"""The all-to-all token dispatcher's host round trip (docs/MODEL.md 8, "The all-to-all
dispatcher's host round trip"): every MoE layer's forward of a plan on Megatron-Core's
``alltoall`` dispatcher pays ``MOE_ALLTOALL_HOST_SYNC_S`` beyond its kernels, twice with full
recomputation; the flex (DeepEP) dispatcher and dense models pay nothing."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model import stage_time
from advisor.engine.model.efficiency import MOE_ALLTOALL_HOST_SYNC_S
from advisor.engine.tools.validation import calibration_rows, predict_training
from tests.support.engine_build import ran_on_source


def _raw(model: str, dispatcher: str | None, **parallelism: Any) -> dict[str, Any]:
    """8 B200 of one server, 4,096-token sequences, the given plan (tp 1, pp 1, dp 8)."""
    given: dict[str, Any] = {"tp": 1, "pp": 1, "cp": 1, "dp": 8, "micro_batch": 1}
    given.update(parallelism)
    if dispatcher is not None:
        given["moe_dispatcher"] = dispatcher
    return {
        "workload": "training",
        "model": model,
        "gpu": "b200",
        "gpus": 8,
        "sequence_length": 4096,
        "training": {"global_batch_sequences": 64},
        "parallelism": given,
    }


def _scenario(model: str, dispatcher: str | None, **parallelism: Any) -> Any:
    return parse_scenario(_raw(model, dispatcher, **parallelism), default_catalog())


def _layer(scenario: Any, ep: int, recompute: str, sync_s: float) -> float:
    original = stage_time.MOE_ALLTOALL_HOST_SYNC_S
    stage_time.MOE_ALLTOALL_HOST_SYNC_S = sync_s
    try:
        return stage_time._layer_time(scenario, 1, 1, ep, 1, recompute)[0]
    finally:
        stage_time.MOE_ALLTOALL_HOST_SYNC_S = original


FITTED_ROWS = (
    "nemo2511-qwen3-235b-a22b-256-h100-fp8",
    "nemo2602-gpt-oss-120b-64-b200-bf16-ep64",
    "nemo2602-qwen3-30b-a3b-8-b200-mxfp8-mbs1",
)


# Each fitted row's error on the constant as fitted (docs/MODEL.md 8: refitted 4.1 -> 5.0 ms on
# 2026-12-05 when Qwen3 and gpt-oss took their published head width; before, both ran through
# the multi-head latent attention path; refitted by the same rule on 2026-12-06 when gpt-oss
# took its sliding windows: 5.01 ms, kept as 5.0).  gpt-oss reads +17.7 %: the least squared
# log error over the three leaves it there, and what else makes its training slower than the
# model says is not known (docs/MODEL.md 9.2).
FITTED_ERRORS = {
    "nemo2511-qwen3-235b-a22b-256-h100-fp8": -0.002,
    "nemo2602-gpt-oss-120b-64-b200-bf16-ep64": 0.177,
    "nemo2602-qwen3-30b-a3b-8-b200-mxfp8-mbs1": -0.028,
}


def test_the_rows_it_was_fitted_on_name_it_and_read_as_fitted() -> None:
    rows = {row["id"]: row for row in calibration_rows()}
    assert set(FITTED_ERRORS) == set(FITTED_ROWS)
    for row_id, error in FITTED_ERRORS.items():
        row = rows[row_id]
        assert row["use"] == "fitted"
        assert row["fitted"] == ["MOE_ALLTOALL_HOST_SYNC_S"]
        assert row["config"]["parallelism"]["moe_dispatcher"] == "alltoall"
        predicted = predict_training(row)["tokens_per_s_per_gpu"]
        measured = row["measured"]["tokens_per_s_per_gpu"]
        assert predicted / measured - 1.0 == pytest.approx(error, abs=0.01), row_id
    assert pytest.approx(5.0e-3) == MOE_ALLTOALL_HOST_SYNC_S


@pytest.mark.parametrize("recompute, syncs", [("none", 1.0), ("selective", 1.0), ("full", 2.0)])
def test_each_moe_layer_forward_pays_one_round_trip(
    request: pytest.FixtureRequest, recompute: str, syncs: float
) -> None:
    if ran_on_source(request):
        return  # the round trip is a Final constant: the compiled build reads it inlined
    scenario = _scenario("qwen3-30b-a3b", "alltoall", ep=8)
    model = scenario.model
    with_sync = _layer(scenario, 8, recompute, 4.1e-3)
    without = _layer(scenario, 8, recompute, 0.0)
    share = model.moe_layers / model.layers
    assert with_sync - without == pytest.approx(syncs * 4.1e-3 * share, rel=1e-9)


def test_a_model_with_dense_layers_pays_for_its_moe_layers_only(
    request: pytest.FixtureRequest,
) -> None:
    if ran_on_source(request):
        return  # the round trip is a Final constant: the compiled build reads it inlined
    scenario = _scenario("deepseek-v3", "alltoall", ep=8)
    model = scenario.model
    assert model.moe_layers < model.layers  # DeepSeek-V3's first layers are dense
    added = _layer(scenario, 8, "none", 1e-3) - _layer(scenario, 8, "none", 0.0)
    assert added == pytest.approx(1e-3 * model.moe_layers / model.layers, rel=1e-9)


def test_the_flex_dispatcher_and_dense_models_pay_nothing() -> None:
    deepep = _scenario("qwen3-30b-a3b", "deepep", ep=8)
    assert _layer(deepep, 8, "none", 1.0) == _layer(deepep, 8, "none", 0.0)
    dense = _scenario("llama3-8b", None)
    assert _layer(dense, 1, "none", 1.0) == _layer(dense, 1, "none", 0.0)


def _step_s(dispatcher: str, micro_batch: int) -> float:
    raw = _raw("qwen3-30b-a3b", dispatcher, ep=8, micro_batch=micro_batch)
    raw["training"] = {"global_batch_sequences": 512}
    raw["design"] = {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8}
    step: float = evaluate(raw)["design_evaluation"]["metrics"]["step_time_s"]
    return step


def test_the_round_trip_is_paid_per_micro_batch() -> None:
    """512 sequences on 8 GPUs: 64 micro-batches of 1 against 16 of 4.  The all-to-all
    dispatcher's gap to DeepEP's shrinks with fewer, larger micro-batches, by about the round
    trips saved (48 MoE layers x 48 fewer micro-batches x 5.0 ms = 11.5 s), the rest of the
    gap (the dispatcher's sort passes and kernels) growing with the tokens, not the count."""
    gap_mbs1 = _step_s("alltoall", 1) - _step_s("deepep", 1)
    gap_mbs4 = _step_s("alltoall", 4) - _step_s("deepep", 4)
    assert gap_mbs1 > gap_mbs4 > 0.0
    assert gap_mbs1 - gap_mbs4 == pytest.approx(48 * 48 * MOE_ALLTOALL_HOST_SYNC_S, rel=0.1)


def _assumption_names(gpu: str) -> dict[str, Any]:
    result = evaluate({"workload": "training", "model": "qwen3-30b-a3b", "gpu": gpu, "gpus": 16})
    return {row["name"]: row for row in result["assumptions"]}


def test_the_answer_states_the_round_trip_where_its_plan_pays_it() -> None:
    # AMD GPUs run NCCL's all-to-all (no DeepEP): the answer says what each layer pays
    amd = _assumption_names("mi300x")
    row = amd["all-to-all dispatcher host round trip"]
    assert row["value"] == pytest.approx(MOE_ALLTOALL_HOST_SYNC_S * 1e3)
    assert "MODEL.md 8" in row["source"]
    # the product's own MoE plan on Hopper runs DeepEP: no round trip, no row
    assert "all-to-all dispatcher host round trip" not in _assumption_names("h100-sxm")
