from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.engine.decision.cost import (
    HOURS_PER_YEAR,
    SERVER_POWER_FACTOR,
    SERVER_PRICE_FACTOR,
    CostInputs,
    gpu_hour_cost_usd,
    training_work,
    work_cost,
)


def test_cloud_gpu_hour_is_the_quoted_rate() -> None:
    assert gpu_hour_cost_usd(CostInputs(gpu_pricing="cloud", gpu_hour_usd=2.5)) == 2.5


def test_owned_gpu_hour_is_amortized_price_plus_power_at_pue() -> None:
    c = CostInputs(
        gpu_pricing="owned",
        gpu_price_usd=30000,
        amortization_years=4,
        gpu_power_w=700,
        pue=1.3,
        electricity_usd_per_kwh=0.1,
    )
    expected = 30000 * SERVER_PRICE_FACTOR / (4 * HOURS_PER_YEAR) + 0.7 * SERVER_POWER_FACTOR * 0.13
    assert gpu_hour_cost_usd(c) == pytest.approx(expected)


def test_work_cost_charges_the_time_share_of_the_network() -> None:
    c = CostInputs(gpu_pricing="cloud", gpu_hour_usd=2.0, amortization_years=4, pue=1.0)
    cost = work_cost(
        c,
        gpus=1024,
        work_hours=HOURS_PER_YEAR,  # one of four years
        idle_fraction=0.1,
        network_capex_usd=4_000_000,
        network_power_w=100_000,
        work="x",
    )
    assert cost.network_capex_share_usd == pytest.approx(1_000_000)
    assert cost.gpu_cost_usd == pytest.approx(1024 * HOURS_PER_YEAR * 2.0)
    assert cost.idle_cost_usd == pytest.approx(cost.gpu_cost_usd * 0.1)
    assert cost.network_power_cost_usd == pytest.approx(100 * 0.1 * HOURS_PER_YEAR)
    assert cost.total_usd == pytest.approx(
        cost.network_capex_share_usd + cost.network_power_cost_usd + cost.gpu_cost_usd
    )


def test_training_work_names_the_tokens() -> None:
    assert training_work(1e12) == "training run of 1T tokens"


@given(
    hours=st.floats(min_value=0, max_value=1e7) | st.just(math.nan),
    idle=st.floats(allow_nan=True, allow_infinity=True),
    capex=st.floats(min_value=0, max_value=1e9),
    power=st.floats(min_value=0, max_value=1e7),
    pricing=st.sampled_from(["owned", "cloud"]),
)
def test_cost_is_never_negative_nor_nan(
    hours: float, idle: float, capex: float, power: float, pricing: str
) -> None:
    cost = work_cost(
        CostInputs(gpu_pricing=pricing),
        gpus=8,
        work_hours=hours,
        idle_fraction=idle,
        network_capex_usd=capex,
        network_power_w=power,
        work="x",
    )
    figures = (
        "network_capex_usd", "network_capex_share_usd", "network_power_w",
        "network_power_cost_usd", "gpu_cost_usd", "idle_cost_usd", "operations_cost_usd",
        "gpu_hours", "work_hours", "total_usd",
    )  # fmt: skip
    for value in (getattr(cost, name) for name in figures):
        if isinstance(value, float):
            assert math.isfinite(value)
            assert value >= 0


def test_the_job_share_note_says_why_the_share_and_the_price_differ() -> None:
    """A month of serving DeepSeek-V3 on 72 GB300 costs $368k against a $245k network: the note
    said its total "can be smaller than the network's price" beside a total above it."""
    from advisor.engine import evaluate_typed

    serving = evaluate_typed(
        {
            "workload": "inference",
            "model": "deepseek-v3",
            "gpu": "gb300-nvl72",
            "gpus": 72,
            "inference": {"requests_per_s": 30},
        }
    ).cost
    assert serving.job_share.total_usd > serving.network_capex_usd
    assert serving.job_share.note.endswith("% of its total.")
    assert "GPU time is 9" in serving.job_share.note
    short = evaluate_typed(
        {"workload": "fine_tuning", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8}
    ).cost
    assert short.job_share.total_usd < short.network_capex_usd
    assert short.job_share.note.endswith("so its total is smaller than the network's price.")
