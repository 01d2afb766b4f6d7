"""The PDF report as the start of a quote: its cover, the input summary in plain words, the
answer, the BOM by network, alternatives with their NIC and switch, plain assumptions; read with
pypdf."""

from __future__ import annotations

import csv
import datetime
import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.reports.presenters import part_label
from advisor.scenarios.models import Scenario
from tests.frontend.conftest import make_scenario
from tests.frontend.pdfread import pdf_image_count, pdf_pages, pdf_text

OUT = Path(__file__).resolve().parents[2] / "test-output"

# What must never reach a customer: engine keys, field paths, file names, settings syntax.
INTERNAL = re.compile(
    # Our own notes and code by file name; another project's cited path
    # ("stas00/ml-engineering compute/accelerator/README.md") stays as its source writes it.
    r"gpu_hour_cost|constraints\.|training\.|inference\.|(?<!/)\b\w+\.py\b|"
    r"\b(?:MODEL|ENGINE_API|ARCHITECTURE)\.md\b|DOMAIN|prefer=|"
    r"amortization_years|server_price_factor|network_cost_allocation|advisor/"
)
INDICATIVE = "Prices are indicative"

pytestmark = pytest.mark.django_db


@pytest.fixture
def engine_result() -> dict[str, Any]:
    from advisor.engine import evaluate

    return evaluate(
        {
            "workload": "training",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 512,
            "constraints": {"team_skills": "ethernet"},
        }
    )


def _report(client: Client, scenario: Scenario, name: str) -> tuple[bytes, list[str]]:
    response = client.get(f"/s/{scenario.pk}/report.pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    OUT.mkdir(exist_ok=True)
    (OUT / name).write_bytes(response.content)
    return response.content, pdf_pages(response.content)


def test_cover_names_customer_scenario_quote_preparer_date_and_validity(
    sales_client: Client, sales_user: User, engine_result: dict[str, Any]
) -> None:
    sales_user.first_name, sales_user.last_name = "Sam", "Sales"
    sales_user.email = "sam@example.com"
    sales_user.save()
    scenario = make_scenario(
        name="Acme 512 H100 training", customer="Acme AI", result=engine_result
    )
    scenario.quote_reference = "Q-2026-0042"
    scenario.save()
    _pdf, pages = _report(sales_client, scenario, "report-sales.pdf")
    cover = pages[0]
    today = datetime.date.today()
    for expected in (
        "Acme AI",
        "Acme 512 H100 training",
        "Quote reference Q-2026-0042",
        "Prepared by Sam Sales",
        "sam@example.com",
        f"Date {today.strftime('%d %B %Y')}",
        f"Valid until {(today + datetime.timedelta(days=30)).strftime('%d %B %Y')}",
    ):
        assert expected in cover, expected
    # The reference stays on every page's footer, the price statement appears once.
    assert all("Q-2026-0042" in page for page in pages)


def test_input_summary_answer_bom_alternatives_and_assumptions_in_plain_words(
    client: Client, engine_result: dict[str, Any]
) -> None:
    scenario = make_scenario(name="Plain words", result=engine_result)
    pdf, pages = _report(client, scenario, "report-anonymous.pdf")
    text = " ".join(pages)
    # The input summary: workload, model, GPUs and servers, precision, sequence, batch,
    # tokens, pricing.
    for expected in (
        "What you asked",
        "Pre-training a model",
        "Llama 3 70B",
        "512 × NVIDIA H100",
        "in 64 servers of 8",
        "bf16",
        "4,096 tokens",
        "1,024 sequences per step",
        "1 trillion tokens",
        "rented GPUs at $2.50 per GPU-hour",
        "knows Ethernet",
    ):
        assert expected in text, expected
    assert "Prepared by Fabric Advisor (self-service)" in pages[0]
    # The answer and its reasons; the three costs, each labelled.
    assert "Our answer" in text and "Why this design" in text
    assert "Network capex" in text and "Share charged to this job" in text
    # BOM grouped by network with subtotals, the price statement once where the prices are.
    assert "Subtotal, GPU compute fabric" in text and "Subtotal, storage network" in text
    assert "Storage network" in text and "Management network" in text
    assert text.count(INDICATIVE) == 1
    bom_page = next(p for p in pages if "Bill of materials" in p)
    assert INDICATIVE in bom_page
    # Alternatives show their NIC and switch by name (never a catalog id): rows do not look
    # alike (two "RoCE v2 8x400G" rows on one switch differed only in their NIC, unnamed).
    shown = engine_result["options"][:12]
    switches = {o["switch_model"] for o in shown}
    nics = {o["nic_sku"] for o in shown}
    assert len(nics) > 1
    assert all(part_label(s).split(" (")[0][:30] in text for s in switches | nics)
    leaked = [
        (s, text[max(0, text.find(s) - 80) : text.find(s) + 40])
        for s in switches | nics
        if s in text
    ]
    assert not leaked, leaked
    # Assumptions without internal keys, field paths or file names.
    assert "GPU price per hour" in text and "your answer" in text
    assert not INTERNAL.search(text), INTERNAL.search(text)
    assert pdf_image_count(pdf) >= 4


def test_warnings_print_on_the_first_page(client: Client) -> None:
    from advisor.engine import evaluate

    result = evaluate(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "inference": {"independent_replicas": False, "target_ms_per_token": 5},
        }
    )
    _pdf, pages = _report(client, make_scenario(result=result), "report-inference.pdf")
    assert "No design meets your target of 5 ms per token" in pages[0]
    assert "Serving a model" in " ".join(pages) and "64 requests at once" in " ".join(pages)


def test_the_input_summary_states_the_serving_load_and_deployment_as_asked() -> None:
    """A serving scenario given an arrival rate and disaggregated serving printed "64 requests
    at once" (the default closed loop it did not use) and "one copy of the model split across
    servers"; one left to the advisor read "split" too, and the time-to-first-token target was
    missing.  The summary now says what the customer gave."""
    from advisor.engine import evaluate_typed
    from advisor.reports.presenters import input_summary

    base = {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 16}
    asked = {"requests_per_s": 10, "target_ttft_ms": 1500, "deployment": "disaggregated"}
    rows = dict(input_summary(evaluate_typed({**base, "inference": asked})))
    assert rows["Serving"] == "prompts (prefill) and answers (decode) on separate GPUs"
    assert rows["Serving load"].startswith("10 new requests per second")
    assert "requests at once" not in rows["Serving load"]
    assert "1,500 ms to the first token" in rows["Latency targets"]
    assert "Sequence length" not in rows
    chosen = dict(input_summary(evaluate_typed({**base, "inference": {}})))
    assert chosen["Serving"] == "left to the advisor, chosen for the load"
    assert chosen["Serving load"].startswith("64 requests at once")


def test_the_input_summary_names_a_gpu_the_site_catalog_does_not_by_its_display_name() -> None:
    """Without the site catalog's names (a GPU the stored catalog lacks) the summary printed
    the engine's id: "144 x gb300-nvl72 in 36 servers of 4"."""
    from advisor.engine import evaluate_typed
    from advisor.reports.presenters import input_summary

    result = evaluate_typed(
        {"workload": "inference", "model": "llama3-70b", "gpu": "gb300-nvl72", "gpus": 144}
    )
    assert dict(input_summary(result))["GPUs and servers"] == (
        "144 × NVIDIA GB300 NVL72 (per Blackwell Ultra GPU) in 36 servers of 4"
    )
    named = dict(input_summary(result, {"gb300-nvl72": "GB300 (site name)"}))
    assert named["GPUs and servers"].startswith("144 × GB300 (site name) in")


def test_bom_csv_labels_each_cost(client: Client, engine_result: dict[str, Any]) -> None:
    scenario = make_scenario(result=engine_result)
    body = client.get(f"/s/{scenario.pk}/bom.csv").content.decode()
    rows = list(csv.reader(io.StringIO(body)))
    costs = {r[3]: float(r[6]) for r in rows if len(r) > 6 and r[1] == "Cost"}
    assert costs["Network capex"] == pytest.approx(engine_result["cost"]["network_capex_usd"])
    assert "Share charged to this job" in costs


def test_pdf_text_has_no_internal_keys_for_every_workload(client: Client) -> None:
    from advisor.engine import evaluate

    for scenario in (
        {"workload": "fine_tuning", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8},
        {"workload": "inference", "model": "llama3-8b", "gpu": "l40s", "gpus": 32},
        {"workload": "training", "model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": 256},
        {"workload": "inference", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16, "rag": {}},
    ):
        result = evaluate(scenario)
        text = pdf_text(client.get(f"/s/{make_scenario(result=result).pk}/report.pdf").content)
        assert not INTERNAL.search(text), (scenario["workload"], INTERNAL.search(text))
        assert text.count(INDICATIVE) == 1


def test_part_numbers_are_never_split_across_lines_of_a_table(client: Client) -> None:
    """A quote's part number is copied into an order: "MCX75310AAS-NEAT" printed as
    "MCX75310AAS-NEA" over "T" (the BOM's part-number column was narrower than the word) or a
    switch's "DCS-7060X6-64PE-F" split in the alternatives is a wrong part."""
    from advisor.engine import evaluate
    from advisor.engine.facts.catalog import default_catalog

    result = evaluate(
        {
            "workload": "inference",
            "model": "qwen3-235b-a22b",
            "gpu": "h200-sxm",
            "gpus": 16,
            "precision": "fp8",
            "inference": {"requests_per_s": 20, "prompt_tokens": 8192, "output_tokens": 1024},
        }
    )
    text = pdf_text(client.get(f"/s/{make_scenario(result=result).pk}/report.pdf").content)
    parts = {line["part_number"] for line in result["bom"] if line.get("part_number")}
    switches = {switch.sku: switch.part_number for switch in default_catalog().switches}
    parts |= {switches[option["switch_model"]] for option in result["options"][:12]}
    assert "MCX75310AAS-NEAT" in parts and "DCS-7060X6-64PE-F" in parts
    assert [part for part in sorted(parts) if part not in text] == []


def test_the_api_client_that_owns_a_scenario_gets_the_same_pdf(
    engine_result: dict[str, Any],
) -> None:
    from rest_framework.test import APIClient

    from api.services import api_client_create

    owner = api_client_create(name="quotes-owner")
    other = api_client_create(name="quotes-other")
    scenario = make_scenario(name="API quote", customer="Acme AI", result=engine_result)
    scenario.owner = owner.client.user
    scenario.quote_reference = "Q-API-7"
    scenario.save()
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {owner.key}")
    response = http.get(f"/api/v1/scenarios/{scenario.pk}/report.pdf")
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/pdf"
    pages = pdf_pages(response.content)
    assert "Quote reference Q-API-7" in pages[0] and "Prepared by quotes-owner" in pages[0]
    assert "What you asked" in " ".join(pages)
    # Also when the client asks for PDF explicitly; another client sees a 404 in JSON.
    assert (
        http.get(
            f"/api/v1/scenarios/{scenario.pk}/report.pdf", HTTP_ACCEPT="application/pdf"
        ).status_code
        == 200
    )
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {other.key}")
    refused = stranger.get(f"/api/v1/scenarios/{scenario.pk}/report.pdf")
    assert refused.status_code == 404
    assert refused["Content-Type"].startswith("application/json")
    assert refused.json()["error"]["code"] == "not_found"
    # In the OpenAPI schema.
    schema = http.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    op = schema["paths"]["/api/v1/scenarios/{scenario_id}/report.pdf"]["get"]
    assert "application/pdf" in op["responses"]["200"]["content"]


def test_results_page_warns_at_the_top_and_labels_each_cost(client: Client) -> None:
    from tests.frontend.sample_result import training_result

    result = training_result()
    result["metrics"]["gpu_idle_fraction"] = 0.55
    result["scenario"] = {
        **(result.get("scenario") or {}),
        "constraints": {"network_budget_usd": 1000.0},
    }
    html = client.get(f"/s/{make_scenario(result=result).pk}/").content.decode()
    warnings_at = html.index('id="warnings"')
    assert warnings_at < html.index('id="headline"')
    assert "GPUs wait on the network 55 % of the time" in html
    assert "Over your network budget" in html
    for label in ("Network capex", "Share charged to this job"):
        assert label in html


def test_sales_engineer_sets_the_quote_reference_beside_the_notes(
    sales_client: Client,
) -> None:
    scenario = make_scenario(customer="Acme AI")
    html = sales_client.get(f"/s/{scenario.pk}/").content.decode()
    assert 'name="quote_reference"' in html and "neither the notes nor the quote reference" in html
    sales_client.post(
        f"/s/{scenario.pk}/notes",
        {"notes": "Sent", "customer": "Acme AI", "quote_reference": " Q-77 "},
    )
    scenario.refresh_from_db()
    assert scenario.quote_reference == "Q-77"
    assert (
        "Quote reference Q-77"
        in pdf_pages(sales_client.get(f"/s/{scenario.pk}/report.pdf").content)[0]
    )


def test_engine_budget_and_reference_design_verdicts_become_warnings(client: Client) -> None:
    from advisor.engine import evaluate

    result = evaluate(
        {
            "workload": "training",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 512,
            "constraints": {"network_budget_usd": 1_000_000},
        }
    )
    html = client.get(f"/s/{make_scenario(result=result).pk}/").content.decode()
    top = html[html.index('id="warnings"') : html.index('id="headline"')]
    budget = result["recommendation"].get("budget") or {}
    if budget.get("within_budget") is False:
        assert "Over your network budget" in top and "$1.00M" in top
    reference = result["recommendation"].get("reference_design") or {}
    if reference.get("matches") is False:
        assert "Departs from the reference design" in top
    assert "Over your network budget" in top or "reference design" in top


def test_a_serving_fabric_sized_by_its_traffic_is_no_reference_warning() -> None:
    """405B as TP8 x PP2 on two H100 servers buys fewer NICs than the training reference, on
    purpose (docs/MODEL.md 15.2): the rationale says so; the warnings above the headline do
    not flag it as a departure."""
    from advisor.engine import evaluate
    from advisor.engine.result.records import EngineResult
    from advisor.reports.presenters import warnings

    raw = {
        "workload": "inference",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 16,
        "parallelism": {"tp": 8, "pp": 2},
        "inference": {"independent_replicas": False},
    }
    result = EngineResult.from_dict(evaluate(raw))
    ref = result.recommendation.reference_design
    assert ref is not None and ref.sized_for_serving and not ref.matches
    assert "reference" not in {w["kind"] for w in warnings(result)}
    assert any("sized for its traffic" in line for line in result.recommendation.rationale)


def test_idle_gpus_from_a_small_batch_are_blamed_on_the_batch_not_the_network() -> None:
    from advisor.engine import evaluate
    from advisor.engine.facts.numbers import finite
    from advisor.engine.result.records import EngineResult
    from advisor.reports.presenters import warnings

    base = {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 16_384}
    small = EngineResult.from_dict(evaluate({**base, "training": {"global_batch_sequences": 512}}))
    usual = EngineResult.from_dict(evaluate(base))

    kinds = {w["kind"]: w["text"] for w in warnings(small)}
    assert "128 per GPU" in kinds["batch"] and "16.8M tokens per step" in kinds["batch"]
    assert "batch" not in {w["kind"] for w in warnings(usual)}
    assert usual.scenario.training is not None
    assert usual.scenario.training.global_batch_tokens == 16_777_216
    assert finite(usual.metrics.gpu_idle_fraction) < finite(small.metrics.gpu_idle_fraction)


def test_a_moe_pretraining_on_a_dense_sized_batch_is_told_the_moe_practice() -> None:
    from advisor.engine import evaluate
    from advisor.engine.facts.numbers import finite
    from advisor.engine.result.records import EngineResult
    from advisor.reports.presenters import warnings

    base = {"workload": "training", "model": "deepseek-v3", "gpu": "h100-sxm", "gpus": 2_048}
    dense_sized = EngineResult.from_dict(
        evaluate({**base, "training": {"global_batch_tokens": 4_194_304}})
    )
    usual = EngineResult.from_dict(evaluate(base))

    note = {w["kind"]: w["text"] for w in warnings(dense_sized)}["batch"]
    assert "67.1M tokens per step" in note and "DeepSeek-V3: 63M on 2,048 GPUs" in note
    assert "expert all-to-all" in note
    assert "batch" not in {w["kind"] for w in warnings(usual)}
    assert usual.scenario.training is not None
    assert usual.scenario.training.global_batch_tokens == 67_108_864
    assert finite(usual.metrics.gpu_idle_fraction) < finite(dense_sized.metrics.gpu_idle_fraction)


def test_a_serving_report_carries_the_latency_chart_the_page_shows(client: Client) -> None:
    """The page drew latency against load per candidate network; the quote a sales engineer
    sends did not. A training report has no such chart."""
    from advisor.engine import evaluate
    from advisor.reports.pdf import SERVING_CHART_TITLE

    charts_of: dict[str, tuple[int, str]] = {}
    for workload, scenario in (
        (
            "inference",
            {
                "workload": "inference",
                "model": "llama3-70b",
                "gpu": "h100-sxm",
                "gpus": 64,
                "inference": {"requests_per_s": 20},
            },
        ),
        ("training", {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}),
    ):
        content = client.get(f"/s/{make_scenario(result=evaluate(scenario)).pk}/report.pdf").content
        charts_of[workload] = (pdf_image_count(content), " ".join(pdf_text(content).split()))
    serving_images, serving_text = charts_of["inference"]
    training_images, training_text = charts_of["training"]
    assert " ".join(SERVING_CHART_TITLE.split()[:6]) in serving_text
    assert " ".join(SERVING_CHART_TITLE.split()[:6]) not in training_text
    assert serving_images == training_images + 1


def test_the_answer_says_its_number_format_above_the_headline(client: Client) -> None:
    """A served DeepSeek-R1 runs FP8 as it ships unless the scenario names a format, and the
    format decides the deployment and the fabric: the line above the answer says it."""
    from advisor.engine import evaluate

    base = {"workload": "inference", "model": "deepseek-r1", "gpu": "h200-sxm", "gpus": 16}
    # Maverick's BF16 weights overfill one H100 server: Meta's FP8 release (escaped apostrophe)
    maverick = "fp8 (the publisher&#x27;s fp8 release)"
    for scenario, said in (
        (base, "fp8 (as the model ships)"),
        ({**base, "precision": "bf16"}, "bf16"),
        ({**base, "model": "llama4-maverick", "gpu": "h100-sxm", "gpus": 8}, maverick),
        ({"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}, "bf16"),
    ):
        page = client.get(f"/s/{make_scenario(result=evaluate(scenario)).pk}/").content.decode()
        assert f'<span id="number-format">{said}</span>' in page, said


def test_the_details_count_in_words_that_agree_with_one(client: Client) -> None:
    """A serving answer without a compute fabric weighs one design: its details read
    "1 designs costed" (and a one-line bill of materials "1 lines")."""
    from tests.frontend.sample_result import training_result

    result = training_result()
    result["options"] = result["options"][:1]
    result["bom"] = result["bom"][:1]
    html = client.get(f"/s/{make_scenario(result=result).pk}/").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert "1 design costed" in text and "1 designs" not in text
    assert "1 line ·" in text and "1 lines" not in text


def test_the_serving_chart_states_the_rate_within_the_targets_as_the_first_screen(
    client: Client,
) -> None:
    """The sentence under the latency chart read "targets met up to 35.98 requests per second"
    beside the first screen's "36 requests/s": one rule for the figure (three significant
    digits), and the tokens per GPU grouped ("4,117", not "4117")."""
    from advisor.engine import evaluate
    from advisor.engine.facts.formatting import significant

    result = evaluate(
        {
            "workload": "inference",
            "model": "llama3-8b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "inference": {"requests_per_s": 50},
        }
    )
    metrics = result["metrics"]
    rate = significant(metrics["max_requests_per_s_at_target"])
    tokens = f"{metrics['tokens_per_s_per_gpu_at_target']:,.0f}"
    html = client.get(f"/s/{make_scenario(result=result).pk}/").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    assert f"targets met up to {rate} requests per second ({tokens} tokens/s per GPU)" in text
    assert f"{rate} requests/s" in text


def test_the_planners_notes_are_on_the_page_and_in_the_pdf(client: Client) -> None:
    """The planner's notes (the deployment chosen over the others it weighed, with their rates;
    servers left idle) were in the API's result only: neither the page nor the PDF showed them."""
    from advisor.engine import evaluate
    from tests.support.scenarios import LLAMA_405B_TWO_GB300_RACKS

    result = evaluate(LLAMA_405B_TWO_GB300_RACKS)
    notes = result["workload"]["notes"]
    assert "4 of the 36 servers stay idle" in notes
    scenario = make_scenario(result=result)
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    assert 'id="plan-notes"' in html and "4 of the 36 servers stay idle" in html
    assert "Deployment chosen by the load: TP16 replicas" in html
    text = " ".join(pdf_pages(client.get(f"/s/{scenario.pk}/report.pdf").content))
    assert "How the engine planned it" in text and "4 of the 36 servers stay idle" in text
