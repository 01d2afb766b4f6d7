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
    of which KV transfer ... (0 %)"; both now say it in words."""
    from django.template.loader import render_to_string

    from advisor.engine.facts.formatting import OVER_CAPACITY
    from advisor.reports.presenters import headline

    load = {**DISAGGREGATED["inference"], "requests_per_s": 50}
    over = evaluate_typed({**DISAGGREGATED, "inference": load})
    assert over.metrics.load_saturated
    html = render_to_string("frontend/_serving_chart.html", {"result": over})
    assert f"the first token (p95) waits {OVER_CAPACITY}," in html
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


def test_the_load_asked_is_drawn_and_a_fleet_over_capacity_stops_short_of_it() -> None:
    """The chart drew the curves up to what the servers take and the targets, but not the load
    asked, so an overloaded fleet's picture looked like any other. The ask is an upright line,
    labelled, on the page and in the PDF, and the curves of a fleet over capacity end before
    it; a closed loop (requests in flight, no rate) has none."""
    over = {**DISAGGREGATED, "inference": {**DISAGGREGATED["inference"], "requests_per_s": 50}}
    result = evaluate_typed(over)
    assert result.metrics.load_saturated
    figure = charts.serving_figure(result)
    asked = [s for s in figure["layout"]["shapes"] if s["xref"] == "x"]
    assert [(s["x0"], s["x1"], s["label"]["text"]) for s in asked] == [
        (50, 50, "asked 50 requests/s")
    ]
    ttft = [t for t in figure["data"] if t.get("yaxis") != "y2"]
    assert ttft and all(max(t["x"]) < 50 for t in ttft)

    closed = {**DISAGGREGATED["inference"], "concurrent_requests": 64}
    closed.pop("requests_per_s")
    loop = evaluate_typed({**DISAGGREGATED, "inference": closed})
    assert charts.serving_asked_rate(loop) == 0
    shapes = charts.serving_figure(loop)["layout"]["shapes"]
    assert shapes and not [s for s in shapes if s["xref"] == "x"]


def test_the_first_token_axis_labels_plain_milliseconds_at_1_2_and_5(
    serving_result: EngineResult,
) -> None:
    """Plotly's log axis printed its minor gridlines as bare digits ("8 7 6 5 4 3 2 1000 9 8");
    the page now labels 1, 2 and 5 of each decade in plain figures, as the PDF does, over the
    curves and the target."""
    axis = charts.serving_figure(serving_result)["layout"]["yaxis"]
    values, texts = axis["tickvals"], axis["ticktext"]
    assert texts == [charts.log_tick_text(v) for v in values]
    assert "2,000" in texts  # the target
    assert all(re.fullmatch(r"[125]0*", t.replace(",", "")) for t in texts), texts
    ttft = [
        y
        for t in charts.serving_figure(serving_result)["data"]
        if t.get("yaxis") != "y2"
        for y in t["y"]
    ]
    assert min(values) <= min(ttft) and max(values) >= max(max(ttft), 2000)


@pytest.mark.parametrize(
    ("value", "text"),
    [(1000, "1,000"), (2000, "2,000"), (500, "500"), (3000, ""), (0.5, "0.5"), (0, ""), (20, "20")],
)
def test_log_tick_text(value: float, text: str) -> None:
    assert charts.log_tick_text(value) == text


def test_log_tick_values_cover_the_span_with_a_tick_either_side() -> None:
    assert charts.log_tick_values(300, 4200) == [200, 500, 1000, 2000, 5000]
    assert charts.log_tick_values(1000, 1000) == [1000]
    assert charts.log_tick_values(0, 10) == []


def test_the_pdf_chart_labels_both_targets_and_the_ask_with_room_above_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The report's latency chart drew its targets unlabelled, a per-token target at the axis'
    top sat on the frame with the curve clipped above it, and the ask was not drawn."""
    import io

    from advisor.reports import pdf

    drawn: list = []
    monkeypatch.setattr(pdf, "_png", lambda fig: drawn.append(fig) or io.BytesIO())
    over = {**DISAGGREGATED, "inference": {**DISAGGREGATED["inference"], "requests_per_s": 50}}
    result = evaluate_typed(over)
    assert pdf.serving_png(result) is not None
    (figure,) = drawn
    ttft_axis, token_axis = figure.axes
    words = [t.get_text().strip() for ax in figure.axes for t in ax.texts]
    token_target = result.scenario.inference.target_ms_per_token
    assert "first token target 2,000 ms" in words
    assert charts.target_words("per token", token_target) in words
    assert "asked 50 requests/s" in words
    assert ttft_axis.get_xlim()[1] > 50  # the ask is inside the plot
    curves = charts.serving_series(result)
    assert token_axis.get_ylim()[1] > max(token_target, *(max(c.ms_per_token_p95) for c in curves))
    assert ttft_axis.get_ylim()[1] > max(2000, *(max(c.ttft_ms_p95) for c in curves))


def test_the_page_leaves_room_above_the_highest_curve_or_target(
    serving_result: EngineResult,
) -> None:
    """The per-token target at its axis' top was drawn on the plot's frame; both axes now
    reach above their highest curve or target (charts.serving_axis_tops, the PDF's rule)."""
    import math

    layout = charts.serving_figure(serving_result)["layout"]
    curves = charts.serving_series(serving_result)
    ttft_target, token_target = charts.serving_targets(serving_result)
    token_high = max(token_target, *(max(c.ms_per_token_p95) for c in curves))
    ttft_high = max(ttft_target, *(max(c.ttft_ms_p95) for c in curves))
    low, high = layout["yaxis2"]["range"]
    assert low == 0 and high > token_high
    low, high = layout["yaxis"]["range"]  # log10 units on a log axis
    assert 10**high > ttft_high
    assert 10**low < min(min(c.ttft_ms_p95) for c in curves)
    assert math.isclose(10**high, charts.serving_axis_tops(curves, ttft_target, token_target)[0])


def test_the_pdf_cost_chart_keeps_its_shape_beside_a_long_part_name() -> None:
    """The cost-vs-speed chart labelled the recommended point with its switch and NIC names
    ("RoCE v2 2×400G · NVIDIA Spectrum-4 SN5600 51.2T Ethernet · NVIDIA ConnectX-8 SuperNIC
    C8180 in Ethernet mode: ..."): the figure grew to fit the words and the plot, scaled to
    the page's width, shrank to a strip. The label is the network shape alone."""
    from PIL import Image

    from advisor.reports import pdf

    result = evaluate_typed(
        {
            "workload": "inference",
            "model": "llama3.1-405b",
            "gpu": "b300",
            "gpus": 32,
            "inference": {"requests_per_s": 25},
        }
    )
    recommended = [p for p in charts.cost_speed_points(result)[0] if p.recommended]
    assert len(recommended) == 1 and " · " in recommended[0].label  # a long label to resist
    png = pdf.cost_speed_png(result)
    assert png is not None
    with Image.open(png) as image:
        width, height = image.size
    assert width / height < 7.5 / 3.4 * 1.25, (width, height)


def test_a_closed_loop_s_first_token_reads_in_the_unit_the_first_screen_uses() -> None:
    """Users of a closed loop over capacity wait to be admitted: 2,000 users of Llama 3 70B on
    the same four servers wait about a minute, which the caption printed as "59836 ms to first
    token" beside the first screen's "59.8 s"; 300,000 users wait past the load model's
    one-hour stand-in, which the caption printed as "3600000 ms" and the legend gave a "0.0 %"
    share of."""
    from django.template.loader import render_to_string

    from advisor.engine.facts.formatting import OVER_CAPACITY, first_token

    def closed(users: int) -> EngineResult:
        load = {**DISAGGREGATED["inference"], "concurrent_requests": users}
        del load["requests_per_s"]
        return evaluate_typed({**DISAGGREGATED, "inference": load})

    minute = closed(2_000)
    ttft = minute.metrics.ttft_ms_p95
    assert ttft is not None and 10_000 < ttft < 3_600_000
    html = render_to_string("frontend/_serving_chart.html", {"result": minute})
    assert f"{first_token(ttft)} to first token (p95)" in html
    assert f"{ttft:.0f} ms" not in html

    hours = closed(300_000)
    assert not hours.metrics.load_saturated
    html = render_to_string("frontend/_serving_chart.html", {"result": hours})
    assert f"the first token (p95) waits {OVER_CAPACITY}," in html
    assert "3600000" not in html and "3,600,000" not in html
    names = [t["name"] for t in charts.serving_figure(hours)["data"] if t.get("yaxis") != "y2"]
    assert names and all(re.search(r"\(KV transfer [\d.,]+ ms\)$", n) for n in names), names
