"""Properties of the recommendation over many scenarios (hypothesis)."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.engine import ScenarioError, evaluate
from advisor.engine.facts.catalog import Catalog, default_catalog

scenarios = st.fixed_dictionaries(
    {
        "workload": st.sampled_from(["training", "fine_tuning", "inference"]),
        "model": st.sampled_from(["llama3-8b", "llama3-70b", "mixtral-8x7b"]),
        "gpu": st.sampled_from(["h100-sxm", "a100-80gb-sxm", "mi300x", "b200"]),
        "gpus": st.sampled_from([8, 16, 32, 64, 256]),
        "constraints": st.fixed_dictionaries(
            {
                "gpu_pricing": st.sampled_from(["owned", "cloud"]),
                "team_skills": st.sampled_from(["ethernet", "infiniband", "both", "none"]),
                "prefer": st.sampled_from(["cost", "balanced", "performance"]),
            }
        ),
    }
)


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=scenarios)
def test_costs_are_never_negative_and_nothing_is_nan(raw: dict[str, Any]) -> None:
    try:
        r = evaluate(raw)
    except ScenarioError:
        return
    json.dumps(r, allow_nan=False)
    for key in ("cost", "bom", "options", "uncertainty", "break_even", "scaling"):
        for x in _numbers(r[key]):
            assert math.isfinite(x)
    for x in _numbers(r["cost"]):
        assert x >= 0
    for option in r["options"]:
        for x in _numbers(option["cost"]):
            assert x >= 0
    rec = r["recommendation"]
    assert rec["needs_compute_fabric"] == r["workload"]["needs_compute_fabric"]
    if not rec["needs_compute_fabric"]:
        assert rec["fabric"] == "ethernet"
    # a recommended design never misses a hard constraint another design meets
    if any(o["feasible"] for o in r["options"]):
        assert r["options"][0]["recommended"] and r["options"][0]["feasible"]


def test_an_edited_catalog_price_flows_into_the_bom() -> None:
    raw = default_catalog().to_dict()
    for switch in raw["switches"]:
        if switch["sku"] == "quantum2-qm9700":
            switch["unit_price_usd"] = 12_345.0
    catalog = Catalog.from_dict(raw)
    r = evaluate(
        {
            "workload": "training",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 256,
            "constraints": {"prefer": "performance"},
        },
        catalog=catalog,
    )
    prices = {
        item.sku: item.unit_price_usd
        for item in (*catalog.nics, *catalog.switches, *catalog.transceivers, *catalog.cables)
    }
    for line in r["bom"]:
        assert line["unit_price_usd"] == prices[line["sku"]]
    qm9700 = [o for o in r["options"] if o["switch_model"] == "quantum2-qm9700"]
    assert qm9700
