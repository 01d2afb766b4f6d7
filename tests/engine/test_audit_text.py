"""The audit's ``e-notation`` property: no figure in customer text reads "1.19e+04"."""

from __future__ import annotations

import dataclasses

from advisor.engine import evaluate_typed
from advisor.engine.tools.audit import text_violations

# 64 H100 servers of Llama 3 8B replicas asked for 50,000 requests/s: saturated, so the
# headline states the served and asked rates, both above 1,000 (".3g" wrote them 4.01e+03
# and 5e+04).
OVERLOADED = {
    "workload": "inference",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 512,
    "inference": {"requests_per_s": 50000},
}


def test_an_overloaded_fleet_states_its_rates_in_plain_decimals() -> None:
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    head = result.recommendation.headline
    assert "Serving falls short" in head
    assert "of the 50,000 asked" in head
    assert text_violations("overloaded", result) == []


def test_the_property_finds_e_notation_anywhere_in_the_prose() -> None:
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    rec = dataclasses.replace(result.recommendation, headline="serves 4.01e+03 requests/s")
    found = text_violations("overloaded", dataclasses.replace(result, recommendation=rec))
    assert [v.prop for v in found] == ["e-notation"]
    assert "4.01e+03" in found[0].detail
    warned = dataclasses.replace(result, warnings=("a step of 1.2e-05 s",))
    found = text_violations("w", warned)
    assert [v.prop for v in found] == ["e-notation"]
    assert "a step of 1.2e-05 s" in found[0].detail
    # a word with "e-" in it is not a number
    plain = dataclasses.replace(result, warnings=("time-to-first token, one-NIC-per-GPU",))
    assert text_violations("w", plain) == []
