"""The latency-vs-load chart of a serving result (advisor.reports.charts.serving_figure)."""

from __future__ import annotations

import re

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.result.records import EngineResult
from advisor.reports import charts

DISAGGREGATED = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 32,
    "inference": {
        "deployment": "disaggregated",
        "prompt_tokens": 16000,
        "output_tokens": 500,
        "requests_per_s": 0.5,
        "target_ttft_ms": 2000,
        # Whole-server pools: the KV cache crosses the fabric, so the network choice shows
        # in TTFT (in-server pools keep it on NVLink and leave one curve).
        "pools": {"prefill": {"servers": 2}, "decode": {"servers": 2}},
    },
}


@pytest.fixture(scope="module")
def serving_result() -> EngineResult:
    return evaluate_typed(DISAGGREGATED)


def test_a_serving_result_gets_a_latency_vs_load_chart_per_network(
    serving_result: EngineResult,
) -> None:
    figures = charts.all_figures(serving_result)
    figure = figures["serving"]
    ttft = [t for t in figure["data"] if t.get("yaxis") != "y2"]
    tpot = [t for t in figure["data"] if t.get("yaxis") == "y2"]
    assert 2 <= len(ttft) <= charts.MAX_SERVING_CURVES
    assert len(ttft) == len(tpot)
    assert ttft[0]["name"].startswith("★")  # the recommended network first
    for trace in ttft:
        assert "KV transfer" in trace["name"]
        assert list(trace["x"]) == sorted(trace["x"])
        assert all(y > 0 for y in trace["y"])
    # both targets are drawn on their own axes, at the target itself: plotly.js places shapes
    # by data value on a log axis too (log10(2000) drew the TTFT target at 3.3 ms)
    assert figure["layout"]["yaxis"]["type"] == "log"
    lines = {shape["yref"]: shape for shape in figure["layout"]["shapes"]}
    assert lines["y"]["y0"] == lines["y"]["y1"] == 2000
    assert lines["y"]["label"]["text"] == "first token target 2,000 ms"
    per_token = serving_result.scenario.inference.target_ms_per_token
    assert lines["y2"]["y0"] == per_token
    assert lines["y2"]["label"]["text"].startswith("per token target ")
    # the per-token axis keeps its own round ticks, not one at each of the log axis' gridlines
    assert figure["layout"]["yaxis2"]["tickmode"] == "auto"


def test_training_results_have_no_serving_chart() -> None:
    result = evaluate_typed(
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}
    )
    assert "serving" not in charts.all_figures(result)
    bare = EngineResult.from_dict({"scenario": {"workload": "inference"}})
    assert charts.serving_figure(bare) is None


def test_the_chart_caption_gives_the_kv_cache_in_the_rationale_s_unit(
    serving_result: EngineResult,
) -> None:
    """The caption printed the KV cache with Django's filesizeformat, binary MiB labelled MB
    (137.2 MB beside the rationale's 144 MB for one cache); both now read decimal MB."""
    from django.template.loader import render_to_string

    html = render_to_string("frontend/_serving_chart.html", {"result": serving_result})
    size = serving_result.workload.serving.kv_bytes_per_request
    said = f"{size / 1e6:,.0f} MB"
    assert f"KV cache ({said})" in html
    assert any(f"KV cache ({said})" in line for line in serving_result.recommendation.rationale)


def test_the_caption_of_pools_inside_a_server_keeps_the_kv_cache_on_nvlink() -> None:
    """Prefill and decode pools inside each server (the engine's choice for Llama 3 70B on 8
    H100 servers at 20 requests/s) move the KV cache over NVLink; the caption said it
    "crosses the network before its first token" for every disaggregated deployment."""
    from django.template.loader import render_to_string

    load = {"requests_per_s": 20, "prompt_tokens": 2048, "output_tokens": 512}
    inside = evaluate_typed({**DISAGGREGATED, "gpus": 64, "inference": load})
    assert inside.workload.serving.deployment == "disaggregated"
    assert inside.workload.serving.kv_inside_domain is True
    html = render_to_string("frontend/_serving_chart.html", {"result": inside})
    assert "moves over NVLink before its first token, never over the network" in html
    assert "crosses the network" not in html


def test_a_fleet_over_capacity_is_said_in_words_on_the_first_screen_and_the_caption() -> None:
    """Llama 3 70B disaggregated at 50 requests/s on the same 4 servers: over capacity, the
    load model's time to first token is its stand-in (3,600 s), which the headline's facts
    printed as "first token 3,600,000 ms" and the caption as "3600000 ms to first token (p95),
    of which KV transfer ... (0 %)"; both now say the queue has no bound."""
    from django.template.loader import render_to_string

    from advisor.engine.facts.formatting import OVER_CAPACITY
    from advisor.reports.presenters import headline

    load = {**DISAGGREGATED["inference"], "requests_per_s": 50}
    over = evaluate_typed({**DISAGGREGATED, "inference": load})
    assert over.metrics.load_saturated
    html = render_to_string("frontend/_serving_chart.html", {"result": over})
    assert "has no bound (over capacity)" in html
    assert "3600000" not in html and "3,600,000" not in html
    facts = {fact.key: fact for fact in headline(over)["facts"]}
    assert facts["Per token"].sub == f"first token {OVER_CAPACITY}"


def test_the_legend_says_the_kv_transfer_in_milliseconds_when_the_ask_is_over_capacity() -> None:
    """At a load over capacity the time to first token has no bound, so the transfer's share of
    it read "0 %" on every curve of a disaggregated answer whose caches take 100 ms and more."""
    over = {**DISAGGREGATED, "inference": {**DISAGGREGATED["inference"], "requests_per_s": 50}}
    result = evaluate_typed(over)
    assert result.metrics.load_saturated
    names = [t["name"] for t in charts.serving_figure(result)["data"] if t.get("yaxis") != "y2"]
    assert names and all(re.search(r"\(KV transfer [\d.,]+ ms\)$", n) for n in names), names


def test_colocated_replicas_have_no_kv_transfer_in_the_legend() -> None:
    result = evaluate_typed(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 32,
            "inference": {"independent_replicas": True},
        }
    )
    assert result.workload.serving.deployment == "replicas"
    names = [t["name"] for t in charts.serving_figure(result)["data"]]
    assert names and not [n for n in names if "KV transfer" in n]
