"""A sales engineer on a call changes the design and the load on the result page and sees the
step time, idle GPUs and costs follow without a page load, then saves the chosen point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advisor.scenarios.models import Scenario
from advisor.scenarios.services import scenario_submit
from tests.support.scenarios import SERVING_70B_5_RPS

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TRAINING = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 128,
    "training": {"global_batch_sequences": 512, "total_tokens": 1e11},
}
LATENCIES = Path(__file__).resolve().parents[2] / "test-output" / "whatif_latency_ms.json"


def _priced(page: Any, after: int) -> int:
    """Wait until the card shows an answer newer than `after`; its sequence number."""
    page.wait_for_function(
        f"() => Number(document.getElementById('whatif').dataset.priced || 0) > {after}"
    )
    return int(page.evaluate("Number(document.getElementById('whatif').dataset.priced)"))


def _choose(page: Any, name: str, value: str, after: int) -> int:
    """Pick ``value`` in the what-if's ``name`` list and wait for its price; the new sequence
    number."""
    page.select_option(f"select[name={name}]", value)
    return _priced(page, after)


def test_a_what_if_updates_beside_the_recommendation_and_saves(
    new_page: Any, live_server: Any
) -> None:
    run = scenario_submit(name="Llama 3 70B on 16 servers", inputs=TRAINING)
    scenario = run.scenario
    customer = new_page()
    page = customer.page
    page.goto(f"{live_server.url}/s/{scenario.pk}/")
    page.wait_for_selector("#whatif")
    seen = _priced(page, 0)
    step = page.locator("[data-whatif=step_time_s]")
    base_step = page.inner_text("[data-base=step_time_s]")
    assert base_step.endswith(" s") and step.inner_text() == base_step
    capex_before = page.inner_text("[data-whatif=network_capex_usd]")
    latencies = []

    # fewer, slower NICs: slower and cheaper, priced without leaving the page
    url_before = page.url
    # a choice from a list is priced at once, no debounce
    seen = _choose(page, "fabric", "roce", seen)
    seen = _choose(page, "nics_per_node", "2", seen)
    latencies.append(float(page.get_attribute("#whatif", "data-elapsed-ms") or "nan"))
    slow_step = step.inner_text()
    assert page.url == url_before
    assert float(slow_step.split()[0].replace(",", "")) > float(
        base_step.split()[0].replace(",", "")
    )
    assert page.inner_text("[data-whatif=network_capex_usd]") != capex_before
    assert "Priced in" in page.inner_text("#whatif-status")

    # more servers, same batch: GPUs idle, the figures follow
    page.fill("input[name=servers]", "24")
    seen = _priced(page, seen)
    latencies.append(float(page.get_attribute("#whatif", "data-elapsed-ms") or "nan"))
    assert page.inner_text("[data-whatif=gpu_idle_fraction]").endswith("%")
    customer.check("40-results-whatif")

    # a value outside the limits is named next to its control (the browser logs the 400),
    # and cannot be saved
    page.fill("input[name=servers]", "0")
    seen = _priced(page, seen)
    assert "must be a whole number" in page.inner_text("[data-error-for=servers]")
    assert page.is_disabled("#whatif-save")
    page.fill("input[name=servers]", "24")
    seen = _priced(page, seen)
    assert page.inner_text("[data-error-for=servers]") == ""

    LATENCIES.parent.mkdir(parents=True, exist_ok=True)
    LATENCIES.write_text(json.dumps({"browser_ms": latencies}) + "\n")

    with page.expect_navigation():
        page.click("#whatif-save")
    page.wait_for_selector("#headline")
    saved = Scenario.objects.exclude(pk=scenario.pk).get()
    assert saved.cloned_from_id == scenario.pk
    assert saved.inputs["gpus"] == 24 * 8
    assert saved.inputs["design"] == {
        "fabric": "roce",
        "nic_gbps": 400,
        "nics_per_node": 2,
        "oversubscription": 1,
    }
    assert str(saved.pk) in page.url


def test_an_answer_without_a_compute_fabric_keeps_its_own_figures_in_the_what_if(
    new_page: Any, live_server: Any
) -> None:
    """The what-if's two columns show the answer's network (adapters and cables for the
    existing network), not an Ethernet compute fabric; a fixed fabric says it is the user's."""
    run = scenario_submit(name="Llama 3 70B serving, 5 requests/s", inputs=SERVING_70B_5_RPS)
    run.refresh_from_db()
    capex = run.result["cost"]["network_capex_usd"]
    assert run.result["recommendation"]["needs_compute_fabric"] is False
    page = new_page().page
    page.goto(f"{live_server.url}/s/{run.scenario.pk}/")
    page.wait_for_selector("#whatif")
    seen = _priced(page, 0)
    shown = f"${capex / 1e3:.0f}k"
    assert page.inner_text("[data-base=network_capex_usd]") == shown
    assert page.inner_text("[data-whatif=network_capex_usd]") == shown
    assert page.inner_text("[data-base=fabric_label]") == "No compute fabric"
    assert "engine's own answer" in page.inner_text("#whatif-basis")

    # the number format: fp8 halves the weights each token reads; the answer follows
    assert page.input_value("select[name=precision]") == "bf16"
    seen = _choose(page, "precision", "fp8", seen)
    fp8_ms = float(page.inner_text("[data-whatif=ms_per_token]").split()[0])
    assert fp8_ms < float(page.inner_text("[data-base=ms_per_token]").split()[0])
    assert "engine's own answer" in page.inner_text("#whatif-basis")
    seen = _choose(page, "precision", "bf16", seen)

    # the deployment: independent replicas instead of the engine's prompt and answer GPUs
    assert page.inner_text("[data-base=deployment_label]").startswith("disaggregated ")
    seen = _choose(page, "deployment", "replicas", seen)
    assert page.inner_text("[data-whatif=deployment_label]") == "4 x TP4 replicas"
    seen = _choose(page, "deployment", "auto", seen)
    assert page.inner_text("[data-whatif=deployment_label]").startswith("disaggregated ")

    seen = _choose(page, "fabric", "ethernet", seen)
    assert page.inner_text("[data-whatif=fabric_label]") == "Ethernet (TCP)"
    assert page.inner_text("[data-base=network_capex_usd]") == shown
    assert "your design" in page.inner_text("#whatif-basis")

    # far over capacity: the first token is said in words, not as the model's 3,600 s stand-in
    page.fill("input[name=requests_per_s]", "5000")
    _priced(page, seen)
    assert page.inner_text("[data-whatif=ttft_label]") == "over an hour (over capacity)"
    assert page.inner_text("[data-base=ttft_label]").endswith(" ms")


def test_a_closed_loop_what_if_changes_its_users(new_page: Any, live_server: Any) -> None:
    """The questionnaire's default serving load, 64 users at once and no rate: the what-if
    offers the users, and 2,000 of them (more than the servers' KV memory holds) are priced
    as queueing, the first token later, without a page load."""
    closed = {**SERVING_70B_5_RPS, "inference": {}}
    run = scenario_submit(name="Llama 3 70B serving, 64 users", inputs=closed)
    page = new_page().page
    page.goto(f"{live_server.url}/s/{run.scenario.pk}/")
    page.wait_for_selector("#whatif")
    seen = _priced(page, 0)
    assert page.input_value("input[name=concurrent_requests]") == "64"
    page.fill("input[name=concurrent_requests]", "2000")
    _priced(page, seen)

    # the answer's first token in ms; 2,000 users' in the unit a person would use
    assert page.inner_text("[data-base=ttft_label]").endswith(" ms")
    assert page.inner_text("[data-whatif=ttft_label]").endswith((" s", " min"))
