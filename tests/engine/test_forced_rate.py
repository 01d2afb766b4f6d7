"""Departures the constraints force on a serving fleet are held to the rate within the targets
(docs/MODEL.md 14.5, "Forced departures on a serving fleet"; ``policy.rate_capped``).

DeepSeek-V3 split over 16,384 A100 servers: 131,072 HDR ports do not fit a non-blocking
three-tier fabric of 40-port QM8700 switches, even in 8 planes (16,000 ports a plane), so
every design departs from field practice.  The 2:1 oversubscribed three-tier fabric met the
2 s p95 TTFT target at the offered load (1,997 ms) and won on life cost, but served 11,908
requests/s within the targets against 21,676 on 8,192 servers: the audit's
serving-worse-with-more-servers.  The non-blocking four-tier fabric serves 43,351.
"""

from __future__ import annotations

from functools import cache

from advisor.engine.result.records import EngineResult
from advisor.engine.tools.audit import AuditCase, Outcome, run_case, series_violations

SERIES = ("deepseek-v3", "a100-80gb-sxm", "inference-split", "default")


@cache
def _outcome(servers: int) -> Outcome:
    return run_case(AuditCase(*SERIES, servers))


def _result(servers: int) -> EngineResult:
    result = _outcome(servers).result
    assert result is not None, _outcome(servers)
    return result


def test_twice_the_servers_serve_at_least_as_much_within_the_targets() -> None:
    assert series_violations([_outcome(8192), _outcome(16384)]) == []
    small = _result(8192).metrics.max_requests_per_s_at_target
    large = _result(16384).metrics.max_requests_per_s_at_target
    assert small is not None and large is not None
    assert large >= 1.9 * small


def test_the_oversubscribed_departure_is_ruled_out_with_its_figures() -> None:
    result = _result(16384)
    assert result.recommendation.decision is not None
    assert result.recommendation.decision.mode == "constraints_forced"
    picked = next(o for o in result.options if o.recommended)
    assert picked.oversubscription == 1.0
    capped = [
        o
        for o in result.options
        if o.fabric == picked.fabric
        and o.oversubscription > 1.0
        and o.nics_per_node == picked.nics_per_node
        and "requests/s within the targets" in (o.why_not or "")
    ]
    assert capped, [(o.oversubscription, o.tiers, o.why_not) for o in result.options[:6]]
    for o in capped:
        assert o.feasible is False
        why = o.why_not or ""
        assert f"{o.oversubscription:g}:1 oversubscribed leaves" in why
        assert "caps the fleet's rate" in why
        # customer text: display names, never the catalog's ids
        assert "quantum-qm8700" not in why and "cx6-hdr-200g" not in why
    # the rule compares designs of one fabric class: the other class's non-blocking design
    # (a few percent apart in calibration) is not ruled out by it
    other = [o for o in result.options if o.fabric == "roce" and o.oversubscription == 1.0]
    assert other and all("within the targets" not in (o.why_not or "") for o in other)
