"""The first screen of a serving answer says its load (an open loop's asked rate, a closed
loop's users) against what the fleet serves within the targets (the headline's shortfall and
the rationale's headroom in one figure); an answer without a compute fabric no longer spends a
fact on "GPUs idle on the network: 0.0 %", which it can never be."""

from __future__ import annotations

from typing import Any

from advisor.engine import evaluate_typed
from advisor.engine.facts.formatting import significant
from advisor.engine.result.records import EngineResult
from advisor.reports.presenters import headline


def _facts_of(result: EngineResult) -> dict[str, tuple[str, str]]:
    return {f.key: (f.value, f.sub) for f in headline(result)["facts"]}


def _facts(scenario: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return _facts_of(evaluate_typed(scenario, scaling_chart=False))


GPT_OSS_16_B200 = {
    "workload": "inference",
    "model": "gpt-oss-120b",
    "gpu": "b200",
    "gpus": 16,
    "precision": "mxfp4",
    "inference": {
        "prompt_tokens": 2000,
        "output_tokens": 500,
        "requests_per_s": 40,
        "target_ms_per_token": 30,
        "target_ttft_ms": 1000,
    },
}


def test_a_fleet_with_headroom_shows_its_share_of_what_it_serves() -> None:
    result = evaluate_typed(GPT_OSS_16_B200, scaling_chart=False)
    facts = _facts_of(result)
    at_target = result.metrics.max_requests_per_s_at_target
    value, sub = facts["Asked load"]
    assert value == "40 requests/s"
    assert sub == f"{round(100 * 40 / at_target):.0f} % of what it serves within the targets"
    assert "GPUs idle on the network" not in facts


def test_a_fleet_over_capacity_says_so_and_what_it_serves() -> None:
    load = {**GPT_OSS_16_B200["inference"], "requests_per_s": 5000}
    result = evaluate_typed({**GPT_OSS_16_B200, "inference": load}, scaling_chart=False)
    assert result.metrics.load_saturated
    facts = _facts_of(result)
    value, sub = facts["Asked load"]
    assert value == "over capacity"
    assert sub.startswith("serves ") and sub.endswith(" of the 5,000 requests/s asked")


def test_a_closed_loop_shows_its_users_against_what_the_fleet_serves() -> None:
    """The questionnaire's default load, 64 users at once, had no load fact on the first
    screen (only an open loop's asked rate had one) and kept "GPUs idle on the network: 0.0 %"
    of an answer without a compute fabric in its place (2026-12-07)."""
    closed = {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 16}
    result = evaluate_typed(closed, scaling_chart=False)
    assert not result.recommendation.needs_compute_fabric
    facts = _facts_of(result)
    assert "Asked load" not in facts and "GPUs idle on the network" not in facts
    metrics = result.metrics
    assert metrics.requests_per_s is not None and metrics.max_requests_per_s_at_target
    share = metrics.requests_per_s / metrics.max_requests_per_s_at_target
    assert share <= 1
    value, sub = facts["Users at once"]
    assert value == "64"
    assert sub == (
        f"{significant(metrics.requests_per_s)} requests/s, {round(100 * share):.0f} % of what "
        "it serves within the targets"
    )
    # past what a server carries within the targets the same fact says so
    many = {**closed, "gpus": 8, "inference": {"concurrent_requests": 2_000}}
    over = evaluate_typed(many, scaling_chart=False)
    value, sub = _facts_of(over)["Users at once"]
    assert value == "2,000"
    at_target = significant(over.metrics.max_requests_per_s_at_target)
    assert sub.endswith(f", {at_target} within the targets: over them")


def test_an_answer_on_a_compute_fabric_keeps_both() -> None:
    facts = _facts(
        {
            "workload": "inference",
            "model": "llama3.1-405b",
            "gpu": "h100-sxm",
            "gpus": 32,
            "precision": "bf16",  # unnamed, Meta's FP8 release fits one server
            "inference": {"independent_replicas": False, "requests_per_s": 2},
        }
    )
    assert "Asked load" in facts and "GPUs idle on the network" in facts


def test_the_comparison_carries_the_asked_load_too() -> None:
    from advisor.reports.presenters import key_metrics

    result = evaluate_typed(GPT_OSS_16_B200, scaling_chart=False)
    rows = dict(key_metrics(result))
    facts = _facts_of(result)
    value, sub = facts["Asked load"]
    assert rows["Asked load"] == f"{value}: {sub}"


def test_the_word_above_the_headline_never_calls_a_short_fleet_good_news() -> None:
    """gpt-oss-120b on two B200 servers needs no compute fabric: within its ask that is "Good
    news"; at 5,000 requests/s it serves a fraction of the ask, and the same word read as a
    clean bill of health."""
    from advisor.reports.presenters import eyebrow

    within = evaluate_typed(GPT_OSS_16_B200, scaling_chart=False)
    assert not within.recommendation.needs_compute_fabric
    assert eyebrow(within) == "Good news"
    load = {**GPT_OSS_16_B200["inference"], "requests_per_s": 5000}
    short = evaluate_typed({**GPT_OSS_16_B200, "inference": load}, scaling_chart=False)
    assert not short.recommendation.needs_compute_fabric
    assert eyebrow(short) == headline(short)["eyebrow"] == "Short of the asked load"
    training = evaluate_typed(
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64},
        scaling_chart=False,
    )
    assert eyebrow(training) == "Our recommendation"


def test_a_missed_latency_target_is_said_above_the_headline_as_in_it() -> None:
    """A closed loop of users with a 5 ms per-token target on Llama 3 70B: no rate was asked,
    but the headline says the serving falls short; so does the word above it."""
    from advisor.reports.presenters import eyebrow

    result = evaluate_typed(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "inference": {"target_ms_per_token": 5},
        },
        scaling_chart=False,
    )
    assert result.metrics.meets_latency_targets is False
    assert "falls short" in result.recommendation.headline
    assert eyebrow(result) == "Misses a latency target"


def test_the_facts_sit_in_balanced_rows_the_stylesheet_knows() -> None:
    """Eight facts filled a row of seven and left one card alone under it (a closed loop's
    answer without a compute fabric); up to six sit in one row, more in two balanced ones,
    and the stylesheet has a rule for every count the first screen asks for."""
    from pathlib import Path

    from advisor.reports.presenters import fact_columns

    assert [fact_columns(n) for n in (5, 6, 7, 8, 9, 10)] == [5, 6, 4, 4, 5, 5]
    css = (Path(__file__).parents[2] / "frontend/static/frontend/app.css").read_text()
    for count in range(1, 13):
        columns = fact_columns(count)
        assert f".facts-cols-{columns} {{ --fact-columns: {columns}; }}" in css
    closed = {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 16}
    head = headline(evaluate_typed(closed, scaling_chart=False))
    assert len(head["facts"]) == 8 and head["fact_columns"] == 4
