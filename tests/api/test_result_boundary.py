"""The boundary between stored JSON and the typed engine result (advisor/scenarios/results.py):
a fresh run's result is served exactly as the engine wrote it; a result stored by an older
engine (without keys added since) still renders on the page, in the PDF, the CSV and the API."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from django.test import Client

from advisor.engine import evaluate
from advisor.engine.result.records import EngineResult
from tests.api.conftest import Caller, latest_run
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


def test_a_fresh_run_is_stored_and_served_as_the_engine_wrote_it(
    client_a: Caller, submitted: Any
) -> None:
    created = submitted()
    run = latest_run(created["id"])
    assert run.result is not None
    expected = evaluate(run.scenario.inputs)
    assert json.dumps(run.result, sort_keys=True) == json.dumps(expected, sort_keys=True)
    body = client_a.http.get(f"/api/v1/runs/{run.pk}/").json()
    assert json.dumps(body["result"], sort_keys=True) == json.dumps(expected, sort_keys=True)


def _older(result: dict[str, Any]) -> dict[str, Any]:
    """The result as an engine before the life cost, job share, reference design, decision,
    storage, budget and bounds would have stored it."""
    old = copy.deepcopy(result)
    for key in ("constants_version", "uncertainty", "scaling", "break_even", "pruned"):
        old.pop(key, None)
    for cost in [old["cost"]] + [o["cost"] for o in old["options"]]:
        for key in ("life", "job_share", "decision_cost_usd", "decision_basis"):
            cost.pop(key, None)
    for key in ("reference_design", "decision", "storage", "budget", "within_budget"):
        old["recommendation"].pop(key, None)
    for line in old["bom"]:
        line.pop("role", None)
    return old


def test_an_older_stored_result_still_renders_everywhere(client: Client) -> None:
    raw = evaluate({"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 64})
    old = _older(raw)
    scenario = make_scenario(result=old)
    page = client.get(f"/s/{scenario.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="headline-title"' in html
    assert "Share charged to this job" in html  # total_cost_usd stands in for job_share
    pdf = client.get(f"/s/{scenario.pk}/report.pdf")
    assert pdf.status_code == 200 and pdf.content[:4] == b"%PDF"
    csv_text = client.get(f"/s/{scenario.pk}/bom.csv").content.decode()
    assert old["bom"][0]["description"] in csv_text
    exported = json.loads(client.get(f"/s/{scenario.pk}/result.json").content)["result"]
    assert exported == EngineResult.from_dict(old).to_dict()
    assert "life" not in exported["cost"]  # keys the engine omits stay omitted
    assert exported["bom"][0]["role"] == ""  # a defaulted key appears with its default
