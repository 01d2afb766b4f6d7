"""A published ``trtllm-bench throughput`` row is predicted over the benchmark's own run:
``num_requests`` identical requests queued at once, served in waves of the instance's
KV-memory batch (``results.benchmark_output_rate``, docs/MODEL.md 15.1)."""

from __future__ import annotations

import copy
import math

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.load import ServingModel, serving_model
from advisor.engine.model.serving.results import (
    benchmark_output_rate,
    predict_published,
    published_scenario,
)
from advisor.engine.tools.validation import serving_capacity_rows

IB = Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8)


def _row(row_id: str) -> dict:
    return next(r for r in serving_capacity_rows() if r["id"] == row_id)


def _model(row: dict) -> ServingModel:
    scenario = parse_scenario(published_scenario(row), default_catalog())
    serving_plan = plan_workload(scenario).inference.serving
    return serving_model(scenario, serving_plan, IB, "point")


def _steady(model: ServingModel) -> float:
    plan = model.serving_plan
    return model.capacity_rps() * plan.output_tokens / plan.decode.instances


ROW = "trtllm017-llama3-70b-h200-sxm-tp8-128-4096"


def test_every_capacity_row_gives_the_request_count_of_its_source() -> None:
    """Every row but those whose page lists no count for their lengths: the developer guide's
    table has none for 1000/1000 (its MoE rows there are predicted at the steady capacity):
    12 of the 2026-12-05 MoE tables, 8 of the GPT-OSS ones; the v0.20 page's has none for
    1024/2048 (20 of its rows, 2026-12-06)."""
    rows = [r for r in serving_capacity_rows() if r["config"]["phase"] == "capacity"]
    assert rows
    uncounted = []
    for row in rows:
        assert "num_requests" in row["note"]
        if "num_requests" not in row["config"]:
            uncounted.append(row)
            continue
        assert row["config"]["num_requests"] in (1000, 1500, 3000, 30000), row["id"]
    assert len(uncounted) == 40
    for row in uncounted:
        config = row["config"]
        lengths = (config["prompt_tokens"], config["output_tokens"])
        if row["id"].startswith("trtllm020-"):
            assert lengths == (1024, 2048), row["id"]
            assert "does not list 1024/2048" in row["note"]
            continue
        assert lengths == (1000, 1000), row["id"]
        assert row["id"].startswith("trtllm-devguide-")
        assert "none for 1000/1000" in row["note"]


def test_whole_waves_read_the_steady_capacity() -> None:
    model = _model(_row(ROW))
    batch = int(model.serving_plan.decode.max_batch_per_instance)
    for waves in (1, 3):
        assert benchmark_output_rate(model, waves * batch) == pytest.approx(_steady(model), 1e-9)


def test_a_last_wave_part_full_reads_below_the_steady_capacity_by_its_own_steps() -> None:
    model = _model(_row(ROW))
    plan = model.serving_plan
    batch = int(plan.decode.max_batch_per_instance)
    rest = batch // 10
    steps = plan.output_tokens / plan.tokens_per_step
    n = batch + rest
    by_hand = (
        n
        * plan.output_tokens
        / (n * model.prefill_s + steps * (model.step(float(batch)) + model.step(float(rest))))
    )
    rate = benchmark_output_rate(model, n)
    assert rate == pytest.approx(by_hand, 1e-12)
    # the small last wave costs a whole wave of steps, at a cheaper batch: below the steady
    # figure, above two waves priced at the full batch's step
    steady = _steady(model)
    assert n / (2 * batch) * steady < rate < 0.95 * steady
    # and many waves tend to the steady figure
    assert benchmark_output_rate(model, 1000 * batch + rest) == pytest.approx(_steady(model), 2e-3)


def test_the_published_prediction_uses_the_run_when_the_row_gives_it() -> None:
    row = _row(ROW)
    model = _model(row)
    with_run = predict_published(row)["output_tokens_per_s_per_instance"]
    assert with_run == pytest.approx(
        benchmark_output_rate(model, int(row["config"]["num_requests"])), 1e-12
    )
    steady = copy.deepcopy(row)
    del steady["config"]["num_requests"]
    without = predict_published(steady)["output_tokens_per_s_per_instance"]
    assert without == pytest.approx(_steady(model), 1e-12)
    assert with_run < without and math.isfinite(with_run)
