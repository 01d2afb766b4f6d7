"""Honest ranges: bands carry the model's own error from the calibration residuals."""

from __future__ import annotations

import math

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model.efficiency import gemm_time_s, training_efficiency
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.tools import validation
from advisor.engine.tools.validation import (
    band_coverage,
    loo_bands,
    model_error_band,
    residual_table,
    validation_baseline,
)

IB = Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8)


def test_a_rows_leave_one_out_band_ignores_its_own_measurement(monkeypatch) -> None:
    """The band a row is checked against is built from the other rows only: moving the row's
    own measurement far away moves nothing in its band (the old check passed by construction
    because every band held its own row's residual)."""
    rows = list(validation.calibration_rows())
    index = next(i for i, row in enumerate(rows) if row["use"] == "held_out")
    target = rows[index]
    metric = next(iter(target["measured"]))
    before = _loo_of(target["id"])
    moved = {**target, "measured": {metric: float(target["measured"][metric]) * 10.0}}
    monkeypatch.setattr(
        validation, "calibration_rows", lambda: (*rows[:index], moved, *rows[index + 1 :])
    )
    for cached in (validation._all_lines, validation.loo_bands):
        cached.cache_clear()
    try:
        after = _loo_of(target["id"])
    finally:
        monkeypatch.undo()
        for cached in (validation._all_lines, validation.loo_bands):
            cached.cache_clear()
    assert after[0] == before[0] and after[1] == before[1]
    assert after[2] is False  # ten times the measurement lies outside


def _loo_of(row_id: str) -> tuple[float | None, float | None, bool | None]:
    pairs = zip(validation._all_lines(), loo_bands(), strict=True)
    return next(band for (_, line), band in pairs if line["id"] == row_id)


def test_held_out_coverage_of_the_leave_one_out_bands_does_not_fall() -> None:
    coverage = band_coverage("held_out")
    assert coverage["total"] >= 30
    floor = validation_baseline()["held_out_loo_inside"]
    assert coverage["inside"] >= floor, [
        (line["id"], line["metric"]) for line in coverage["lines"] if not line["inside"]
    ]


def test_training_band_holds_the_generation_residuals_but_the_conformal_tails() -> None:
    """Each training band is the split-conformal bound of its sample (MODEL.md 9.1): at most
    n - k of the n residuals lie beyond either end, k = ceil((n + 1)(1 + BAND_COVERAGE) / 2);
    with 38 rows or fewer that is none (the band reaches the extremes), from 39 to 58 one."""

    table = residual_table()
    for (kind, gen), values in table.items():
        if kind != "training" or gen == "*":
            continue
        low, high = model_error_band(kind, gen)
        sample = values if len(values) >= validation.MIN_GENERATION_ROWS else table[(kind, "*")]
        n = len(sample)
        allowed = n - math.ceil((n + 1) * (1.0 + validation.BAND_COVERAGE) / 2.0)
        below = sum(1 for r in sample if math.exp(r) < low - 1e-12)
        above = sum(1 for r in sample if math.exp(r) > high + 1e-12)
        assert below <= max(0, allowed), (gen, n, below)
        assert above <= max(0, allowed), (gen, n, above)
        assert low <= 1.0 <= high


def test_training_band_is_wider_than_jitter_alone() -> None:
    s = parse_scenario(
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256},
        default_catalog(),
    )
    m = evaluate_design(s, plan_workload(s), IB).to_dict()
    assert m["step_time_s_high"] / m["step_time_s"] > 1.05
    assert m["step_time_s_low"] / m["step_time_s"] < 0.97


def test_inference_without_a_fabric_has_a_band() -> None:
    s = parse_scenario(
        {"workload": "inference", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8},
        default_catalog(),
    )
    m = evaluate_design(s, plan_workload(s), IB).to_dict()
    assert m["ms_per_token_high"] > m["ms_per_token"] * 1.01
    assert m["ms_per_token_low"] < m["ms_per_token"] * 0.99


def test_gemm_size_curve_follows_the_published_sweeps() -> None:
    cat = default_catalog()
    for gpu_id, small, large in (("h100-sxm", 676.6, 797.5), ("b200", 1006.0, 1610.0)):
        gpu = cat.gpu(gpu_id)
        assert gpu is not None
        t_small = gemm_time_s(gpu, "bf16", 2048, 2048, 2048)
        t_large = gemm_time_s(gpu, "bf16", 8192, 8192, 8192)
        predicted_ratio = (2 * 2048**3 / t_small) / (2 * 8192**3 / t_large)
        assert abs(predicted_ratio / (small / large) - 1) < 0.1


def test_small_models_reach_a_lower_share_of_peak_than_large_ones() -> None:
    cat = default_catalog()
    gpu = cat.gpu("h100-sxm")
    small, large = cat.model("llama3-8b"), cat.model("llama3.1-405b")
    assert gpu is not None and small is not None and large is not None
    assert training_efficiency(gpu, "bf16", small, 4096, 4096, 8) < training_efficiency(
        gpu, "bf16", large, 4096, 4096, 8
    )


def test_disaggregated_serving_has_the_model_s_own_band() -> None:
    """Disaggregated pools took their per-token range from the low and high worlds alone,
    which differ only in the network: prefill and decode pools inside each server (the cache
    over NVLink) read "between 29.0 ms and 29.0 ms" on the page and in the PDF. Every serving
    deployment now widens the worlds by the model's own error on its family's serving rows."""
    from advisor.engine.model.performance import _model_error
    from advisor.engine.model.serving.load import serving_model

    s = parse_scenario(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "mi355x",
            "gpus": 64,
            "inference": {"requests_per_s": 60, "deployment": "disaggregated"},
        },
        default_catalog(),
    )
    w = plan_workload(s)
    serving = w.inference.serving
    assert serving is not None and not serving.colocated
    m = evaluate_design(s, w, IB).to_dict()
    err_low, err_high = _model_error(s, "serving")
    assert err_low < 1 < err_high
    low = serving_model(s, serving, IB, "low").operating_point().tpot_p95_s * 1e3
    high = serving_model(s, serving, IB, "high").operating_point().tpot_p95_s * 1e3
    assert math.isclose(m["ms_per_token_low"], min(m["ms_per_token"], low * err_low))
    assert math.isclose(m["ms_per_token_high"], max(m["ms_per_token"], high * err_high))
    assert m["ms_per_token_high"] > m["ms_per_token"] * 1.01
    assert m["ms_per_token_low"] < m["ms_per_token"] * 0.99
