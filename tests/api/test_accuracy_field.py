"""The scenario API states how the answer's family of predictions reads on held-out published
measurements: the figures and the sentence the result page and the PDF print (one answer)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.result.records import EngineResult
from advisor.engine.tools.validation import held_out_pools
from advisor.reports.presenters import capacity_caution, family_accuracy
from tests.api.conftest import Caller
from tests.support.scenarios import GPT_OSS_20B_AT_CAPACITY

pytestmark = pytest.mark.django_db

MOE_SERVING: dict[str, Any] = {
    "workload": "inference",
    "model": "qwen3-30b-a3b",
    "gpu": "h200-sxm",
    "gpus": 8,
    "inference": {"prompt_tokens": 2000, "output_tokens": 500, "requests_per_s": 4},
}


@pytest.mark.parametrize(("inputs", "family"), [(None, "training"), (MOE_SERVING, "serving-moe")])
def test_a_succeeded_scenario_states_its_familys_held_out_error(
    client_a: Caller, submitted: Any, inputs: dict[str, Any] | None, family: str
) -> None:
    created = submitted(**({"inputs": inputs} if inputs else {}))
    body = client_a.http.get(created["url"]).json()
    assert body["status"] == "succeeded"
    accuracy = body["accuracy"]
    pool = held_out_pools()[family]
    assert accuracy["family"] == family
    assert accuracy["held_out_measurements"] == pool["lines"] > 0
    assert accuracy["within_tolerance"] == pool["within_tolerance"]
    assert accuracy["held_out_mae_pct"] == pytest.approx(pool["mae_pct"], abs=0.01)
    assert accuracy["family_label"] in accuracy["statement"] or (
        accuracy["family_label"].lower() in accuracy["statement"].lower()
    )
    # the words the page and the PDF print, from the same result
    assert accuracy["statement"] == family_accuracy(EngineResult.from_dict(body["result"]))


def test_no_statement_before_the_run_succeeded(client_a: Caller, submitted: Any) -> None:
    created = submitted(finish=False)
    body = client_a.http.get(created["url"]).json()
    assert body["status"] != "succeeded"
    assert body["accuracy"] is None


def test_evaluate_in_the_request_states_the_same_accuracy_as_a_saved_scenario(
    client_a: Caller, submitted: Any
) -> None:
    """POST /evaluate/ answers with the same `accuracy` as the scenario the quoting system saves
    (one answer through either door)."""
    evaluated = client_a.http.post("/api/v1/evaluate/", {"inputs": MOE_SERVING}, format="json")
    assert evaluated.status_code == 200, evaluated.json()
    created = submitted(inputs=MOE_SERVING)
    saved = client_a.http.get(created["url"]).json()
    assert evaluated.json()["accuracy"] == saved["accuracy"]
    assert evaluated.json()["accuracy"]["family"] == "serving-moe"


@pytest.mark.parametrize(("inputs", "cautioned"), [(None, False), (GPT_OSS_20B_AT_CAPACITY, True)])
def test_the_capacity_caution_is_the_pages(
    client_a: Caller, submitted: Any, inputs: dict[str, Any] | None, cautioned: bool
) -> None:
    """A small-active MoE fleet whose capacity decodes hundreds of sequences a GPU carries the
    caution the result page shows with its warnings; a training answer carries null."""
    created = submitted(**({"inputs": inputs} if inputs else {}))
    body = client_a.http.get(created["url"]).json()
    assert body["status"] == "succeeded"
    caution = body["accuracy"]["caution"]
    assert caution == capacity_caution(EngineResult.from_dict(body["result"]))
    assert (caution is not None) == cautioned
    if cautioned:
        assert "times the tokens per second" in caution
