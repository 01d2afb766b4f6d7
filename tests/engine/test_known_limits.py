"""The caution a serving answer carries where the published runs of its regime measure well
below the model (``advisor.engine.model.serving.known_limits``): its readings are recomputed
from the validation report, so they cannot go stale when the model changes."""

from __future__ import annotations

import statistics
from functools import lru_cache

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.known_limits import (
    LARGE_BATCH_READING,
    LARGE_DECODE_BATCH_PER_GPU,
    SMALL_BATCH_READING,
    MeasuredRatio,
    large_batch_caution,
    small_active_moe,
)
from advisor.engine.model.serving.results import published_scenario
from advisor.engine.tools.validation import row_use, serving_capacity_rows, validation_report
from tests.support.scenarios import GPT_OSS_20B_AT_CAPACITY


def _reading(ratios: list[float]) -> MeasuredRatio:
    return MeasuredRatio(
        measurements=len(ratios),
        low=round(min(ratios), 2),
        median=round(statistics.median(ratios), 2),
        high=round(max(ratios), 2),
    )


@lru_cache(maxsize=1)
def _readings() -> tuple[MeasuredRatio, MeasuredRatio]:
    """(at or above the batch threshold, below it) over the held-out capacity rows of
    small-active MoE models: the engine's output rate over the measured one, each row at the
    batch its decode GPU holds (the KV memory's, as the benchmark replay runs it)."""
    lines = {
        line["id"]: line
        for line in validation_report()["rows"]
        if line["metric"] == "output_tokens_per_s_per_instance"
    }
    large: list[float] = []
    small: list[float] = []
    for row in serving_capacity_rows():
        line = lines.get(row["id"])
        if line is None or row_use(row) != "held_out":
            continue
        scenario = parse_scenario(published_scenario(row), default_catalog())
        if not small_active_moe(scenario.model.is_moe, scenario.model.active_params):
            continue
        inference = plan_workload(scenario).inference
        assert inference is not None and inference.serving is not None
        decode = inference.serving.decode
        per_gpu = int(decode.max_batch_per_instance) / max(1, decode.gpus_per_instance)
        ratio = float(line["predicted"]) / float(line["measured"])
        (large if per_gpu >= LARGE_DECODE_BATCH_PER_GPU else small).append(ratio)
    return _reading(large), _reading(small)


def test_the_readings_are_the_validation_reports() -> None:
    large, small = _readings()
    assert large == LARGE_BATCH_READING
    assert small == SMALL_BATCH_READING


def test_the_regime_the_caution_names_reads_further_off_than_below_it() -> None:
    large, small = _readings()
    assert large.median > small.median + 0.3
    assert large.measurements >= 20 and small.measurements >= 20


def test_only_small_active_moe_models_at_large_batches_are_cautioned() -> None:
    catalog = default_catalog()

    def caution(model_id: str, batch: float | None) -> str | None:
        model = catalog.model(model_id)
        assert model is not None
        return large_batch_caution(model.name, model.is_moe, model.active_params, batch)

    text = caution("gpt-oss-20b", 649.0)
    assert text is not None
    assert "gpt-oss-20b" in text and "3.6 B" in text and "about 649 sequences" in text
    assert f"{LARGE_BATCH_READING.median:.1f} times" in text
    assert f"median of {LARGE_BATCH_READING.measurements} held-out measurements" in text
    assert caution("gpt-oss-20b", LARGE_DECODE_BATCH_PER_GPU - 1) is None
    assert caution("gpt-oss-20b", None) is None
    assert caution("qwen3-30b-a3b", 1600.0) is not None
    for larger in ("qwen3-235b-a22b", "deepseek-v3", "llama4-maverick", "llama3-8b"):
        assert caution(larger, 1600.0) is None, larger


@pytest.mark.parametrize("rate", [40.0, 400.0])
def test_the_capacity_batch_is_littles_law_at_the_rate_within_the_targets(rate: float) -> None:
    """The metric is the decode GPUs' batch at the highest rate within the targets: more than
    at a lower asked rate, and never more than the KV memory holds."""
    scenario = GPT_OSS_20B_AT_CAPACITY | {
        "inference": GPT_OSS_20B_AT_CAPACITY["inference"] | {"requests_per_s": rate}
    }
    result = evaluate_typed(scenario)
    metrics = result.metrics
    batch = metrics.decode_batch_per_gpu_at_target
    assert batch is not None and batch > 0
    plan = plan_workload(parse_scenario(scenario, default_catalog())).inference
    assert plan is not None and plan.serving is not None
    decode = plan.serving.decode
    gpus = max(1, decode.gpus_per_instance)
    assert batch <= decode.max_batch_per_instance / gpus + 1e-6
    asked = metrics.decode_batch_per_instance
    assert asked is not None
    if not metrics.load_saturated:
        assert batch >= asked / gpus - 1e-6


def test_a_gpt_oss_fleet_at_capacity_carries_the_caution() -> None:
    result = evaluate_typed(GPT_OSS_20B_AT_CAPACITY)
    batch = result.metrics.decode_batch_per_gpu_at_target
    assert batch is not None and batch >= LARGE_DECODE_BATCH_PER_GPU
