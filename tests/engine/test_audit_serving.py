"""The audit's serving properties (advisor/engine/tools/audit.py): capacity stated, no fabric
for a job inside one scale-up domain, never worse with more servers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from advisor.engine import evaluate_typed
from advisor.engine.result.echo import InferenceInput, ScenarioEcho, WorkloadInfo
from advisor.engine.result.records import EngineResult, Metrics, Option, Recommendation
from advisor.engine.tools.audit import Outcome, series_violations, serving_violations
from advisor.engine.tools.audit_grid import AuditCase


def _result(**metrics: Any) -> EngineResult:
    base: dict[str, Any] = {
        "requests_per_s": 5.0,
        "max_requests_per_s_at_target": 4.0,
        "tokens_per_s_per_gpu_at_target": 250.0,
        "load_saturated": False,
        "meets_latency_targets": True,
    }
    return EngineResult(
        scenario=ScenarioEcho(gpus=16),
        workload=WorkloadInfo(scaleup_domain_gpus=8),
        metrics=Metrics(**(base | metrics)),
        recommendation=Recommendation(
            headline="No GPU compute fabric needed.", needs_compute_fabric=False
        ),
    )


def _props(result: EngineResult) -> set[str]:
    return {v.prop for v in serving_violations("case", result)}


def test_a_silent_shortfall_and_missing_metrics_are_violations() -> None:
    assert _props(_result()) == set()
    assert _props(_result(load_saturated=True)) == {"serving-silent"}
    said = _result(meets_latency_targets=False)
    head = said.recommendation.headline + " Serving falls short: 2 x TP4 replicas ..."
    said = replace(said, recommendation=replace(said.recommendation, headline=head))
    assert _props(said) == set()
    missing = _result(tokens_per_s_per_gpu_at_target=None)
    assert _props(missing) == {"serving-metrics-missing"}


def test_serving_past_capacity_or_an_unsaid_unbounded_queue_is_a_violation() -> None:
    said = " Serving falls short with 1 x TP8 replica on 2 servers: ..."

    def saturated(**metrics: Any) -> EngineResult:
        r = _result(load_saturated=True, **metrics)
        head = r.recommendation.headline + said
        return replace(r, recommendation=replace(r.recommendation, headline=head))

    assert _props(saturated(capacity_requests_per_s=5.0)) == set()
    assert _props(saturated(capacity_requests_per_s=4.5)) == {"serving-over-capacity"}
    # the Mixtral answer before the capacity was the rate every queue sustains (MODEL.md 15.2)
    unsaid = _result(capacity_requests_per_s=65.0, ttft_ms_p95=3_600_000.0)
    rate = InferenceInput(requests_per_s=60.0)
    assert _props(replace(unsaid, scenario=replace(unsaid.scenario, inference=rate))) == {
        "serving-over-capacity"
    }
    # a closed loop's users reach the stand-in below saturation: their cycle passes the hour
    users = InferenceInput(concurrent_requests=300_000)
    assert _props(replace(unsaid, scenario=replace(unsaid.scenario, inference=users))) == set()
    assert _props(saturated(capacity_requests_per_s=5.0, ttft_ms_p95=3_600_000.0)) == set()


def test_tokens_per_second_other_than_the_served_requests_emit_is_a_violation() -> None:
    """405B as TP8 x PP2 on 32 H100 at 20 requests/s served 6.6 requests/s of 512 output
    tokens (3,379 tokens/s) and read 1,262 tokens/s, the planner's batch without load."""

    def serving(requests_per_s: float, tokens_per_s: float) -> EngineResult:
        r = _result(requests_per_s=requests_per_s, tokens_per_s=tokens_per_s)
        asked = InferenceInput(output_tokens=512, requests_per_s=20.0)
        return replace(r, scenario=replace(r.scenario, inference=asked))

    assert _props(serving(6.6, 6.6 * 512)) == set()
    assert _props(serving(6.6, 6.6 * 512 * 0.995)) == set()
    assert _props(serving(6.6, 1262.0)) == {"serving-tokens-served"}
    assert _props(serving(5.0, 5.0 * 512 * 1.5)) == {"serving-tokens-served"}


def test_a_breakdown_longer_than_the_time_it_explains_is_a_violation() -> None:
    """Llama 3.1 405B TP8 on two GB300 racks at 64 users stacked 19.6 ms of compute and 6.8 ms
    of all-reduce (the planner's batch) on its bar beside a p95 of 21.5 ms per token."""

    def broken_down(compute: float, comm: float, network: float = 0.0) -> EngineResult:
        return _result(
            ms_per_token=21.5,
            compute_ms_per_token=compute,
            comm_ms_per_token=comm,
            network_ms_per_token=network,
        )

    assert _props(broken_down(19.6, 1.5)) == set()
    assert _props(broken_down(19.6, 6.8)) == {"serving-breakdown"}
    assert _props(broken_down(15.0, 1.5, network=2.0)) == {"serving-breakdown"}
    option = Option(rank=2, metrics=broken_down(19.6, 6.8).metrics)
    assert _props(replace(broken_down(19.6, 1.5), options=[option])) == {"serving-breakdown"}


def test_a_fabric_for_a_job_inside_one_domain_is_a_violation() -> None:
    inside = _result()
    inside = replace(
        inside,
        scenario=replace(inside.scenario, gpus=8),
        recommendation=replace(inside.recommendation, needs_compute_fabric=True),
    )
    assert _props(inside) == {"serving-fabric-inside-domain"}


def test_fewer_requests_within_targets_on_more_servers_is_a_violation() -> None:
    outcomes = [
        Outcome(
            AuditCase("m", "g", "inference-split", "default", n),
            _result(max_requests_per_s_at_target=r),
        )
        for n, r in ((2, 4.0), (4, 8.0), (8, 7.0))
    ]
    found = [v for v in series_violations(outcomes) if v.prop == "serving-worse-with-more-servers"]
    assert len(found) == 1 and "8srv" in found[0].case


def test_a_headroom_sentence_whose_fleet_misses_the_load_is_a_violation() -> None:
    """ "About 2 servers would carry the load" on 8 servers is held to the engine's own answer
    on the series' first size of at least 2 servers."""

    def answer(servers: int, carries: bool, named: int | None = None) -> Outcome:
        result = _result(meets_latency_targets=carries)
        if named is not None:
            said = (
                "Headroom: within both p95 targets these 8 servers serve up to 40 requests/s, "
                f"8.0 x the 5 asked; about {named} servers of the same deployment would carry "
                "5 requests/s within them."
            )
            result = replace(
                result, recommendation=replace(result.recommendation, rationale=(said,))
            )
        return Outcome(AuditCase("m", "g", "inference-rate", "default", servers), result)

    def found(outcomes: list[Outcome]) -> list[str]:
        return [v.case for v in series_violations(outcomes) if v.prop == "headroom"]

    assert found([answer(1, False), answer(2, True), answer(8, True, named=2)]) == []
    missed = found([answer(1, True), answer(2, False), answer(8, True, named=2)])
    assert len(missed) == 1 and "8srv" in missed[0]
    # a size between the named one and the answer's stands for it: 4 servers miss
    assert found([answer(4, False), answer(8, True, named=3)]) != []
    assert found([answer(8, True, named=8)]) != []


def test_an_engine_answer_that_misses_its_target_passes_the_audit_by_saying_so() -> None:
    result = evaluate_typed(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h200-sxm",
            "gpus": 8,
            "precision": "bf16",
            "inference": {"requests_per_s": 50.0, "target_ms_per_token": 50},
        }
    )
    assert result.metrics.load_saturated is True
    assert serving_violations("llama", result) == []


def test_a_closed_loop_at_the_stand_in_cycles_past_the_hour() -> None:
    """A closed loop's first token at the over-capacity stand-in is a violation unless its
    users, at the rate the design serves, cycle past the stand-in's hour: on the answer and on
    every design it weighed."""
    from advisor.engine.result.records import Option

    def closed(users: int, served: float) -> EngineResult:
        r = _result(ttft_ms_p95=3_600_000.0, requests_per_s=served, capacity_requests_per_s=served)
        loop = InferenceInput(concurrent_requests=users)
        return replace(r, scenario=replace(r.scenario, inference=loop))

    assert "serving-closed-loop-unbounded" not in _props(closed(300_000, 34.0))  # 2.5 h
    assert "serving-closed-loop-unbounded" in _props(closed(64, 0.5))  # 128 s
    fine = closed(64, 5.0)
    fine = replace(fine, metrics=replace(fine.metrics, ttft_ms_p95=900.0))
    weighed = Option(rank=2, metrics=Metrics(ttft_ms_p95=3_600_000.0, requests_per_s=0.5))
    found = serving_violations("case", replace(fine, options=[weighed]))
    assert [(v.prop, v.detail.split(":")[0]) for v in found] == [
        ("serving-closed-loop-unbounded", "option 2")
    ]
