"""The scenario page in its three states, and who may open it (and its exports)."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.result.records import EngineResult
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from tests.frontend.conftest import make_scenario
from tests.frontend.pdfread import pdf_image_count, pdf_text
from tests.frontend.sample_result import single_server_result, training_result

pytestmark = pytest.mark.django_db

PAGES = ("", "progress", "report.pdf", "bom.csv", "result.json")


def test_results_answer_first_then_explain_then_detail(client: Client) -> None:
    result = training_result()
    result["break_even"].append(
        {"statement": "RoCE becomes cheaper above 3 years.", "parameter": "years", "value": 3}
    )
    scenario = make_scenario(result=result)
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    headline = html.index('id="headline"')
    assert headline < html.index('id="rationale"') < html.index('id="bom"')
    assert "RoCE v2 · 8 × 400 Gb/s NICs per server · 2-tier leaf-spine" in html
    assert "network $2.80M" in html
    assert "Ethernet (TCP) would leave GPUs idle 41 %" in html  # rationale with numbers
    assert "InfiniBand becomes cheaper overall above 2,048 GPUs." in html  # break-even
    assert "RoCE becomes cheaper above 3 years." in html  # every break-even, one list
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted(i for i in set(ids) if ids.count(i) > 1)
    assert "PFC pause frames and ECN marks per port" in html  # monitoring
    assert "MCX75310AAS-NEAT" in html and "$1,228,800" in html  # BOM line, by part number
    assert "cx7-400g" not in html
    assert 'href="/accuracy/"' in html
    for chart in ("chart-topology", "chart-cost", "chart-breakdown", "chart-scaling"):
        assert f'id="{chart}"' in html
        assert f'<script id="fig-{chart}" type="application/json">' in html
    assert "/static/vendor/plotly/plotly.min.js" in html
    assert "https://" not in re.sub(r'href="https?://[^"]*"', "", html.split("<body")[0])


def test_single_server_says_no_compute_fabric_is_needed(client: Client) -> None:
    scenario = make_scenario(result=single_server_result())
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    assert "No compute fabric needed" in html


def test_progress_is_polled_until_the_run_finishes(client: Client) -> None:
    scenario = make_scenario(status=RunStatus.RUNNING, progress=40)
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    assert 'hx-trigger="every 250ms"' in html  # a young run: most finish within a second
    assert 'aria-valuenow="40"' in html and "width: 40%" in html
    partial = client.get(f"/s/{scenario.pk}/progress")
    assert b'aria-valuenow="40"' in partial.content and "HX-Refresh" not in partial
    # a run still going after 5 s is a long one: polled every 0.5 s, after 30 s every second
    for age_s, trigger in ((10, b"every 500ms"), (45, b"every 1000ms")):
        ScenarioRun.objects.filter(scenario=scenario).update(
            created_at=timezone.now() - timedelta(seconds=age_s)
        )
        assert trigger in client.get(f"/s/{scenario.pk}/progress").content
    ScenarioRun.objects.filter(scenario=scenario).update(status=RunStatus.SUCCEEDED, progress=100)
    done = client.get(f"/s/{scenario.pk}/progress")
    assert done["HX-Refresh"] == "true"


def test_a_failed_run_explains_itself_in_words(client: Client) -> None:
    scenario = make_scenario(status=RunStatus.FAILED)
    ScenarioRun.objects.filter(scenario=scenario).update(
        error="gpus: does not fit", error_fields={"gpus": ["Llama does not fit on 1 GPU"]}
    )
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    assert "How many GPUs in total?:</strong> Llama does not fit on 1 GPU" in html
    assert "Fix my answers" in html


def test_an_anonymous_scenario_opens_by_its_link_alone(client: Client) -> None:
    scenario = make_scenario(owner=None)
    for page in PAGES:
        assert Client().get(f"/s/{scenario.pk}/{page}").status_code == 200, page


def test_a_stranger_gets_404_everywhere_on_someone_elses_scenario(
    customer_user: User, customer_client: Client, stranger_client: Client, sales_client: Client
) -> None:
    scenario = make_scenario(owner=customer_user)
    for page in PAGES:
        assert customer_client.get(f"/s/{scenario.pk}/{page}").status_code == 200, page
        assert sales_client.get(f"/s/{scenario.pk}/{page}").status_code == 200, page
        assert stranger_client.get(f"/s/{scenario.pk}/{page}").status_code == 404, page
        assert Client().get(f"/s/{scenario.pk}/{page}").status_code == 404, page
    for action in ("rerun", "edit", "clone", "notes"):
        assert stranger_client.post(f"/s/{scenario.pk}/{action}").status_code == 404, action
    assert scenario.runs.count() == 1  # the refused re-run changed nothing
    assert Scenario.objects.count() == 1  # and the refused clone too


def made_in_this_browser(client: Client, scenario: Scenario) -> None:
    """As the questionnaire does when this browser submits it anonymously."""
    from frontend.access import SESSION_CREATED_SCENARIOS

    session = client.session
    session[SESSION_CREATED_SCENARIOS] = [str(scenario.pk)]
    session.save()


def test_signing_up_claims_the_browsers_scenarios(client: Client) -> None:
    mine = make_scenario(name="mine")
    someone_elses = make_scenario(name="not mine")
    made_in_this_browser(client, mine)
    client.get(f"/s/{someone_elses.pk}/")  # only opened: never claimed (issue 12)
    response = client.post(
        "/accounts/signup/",
        {
            "username": "newbie",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    assert response.status_code == 302
    mine.refresh_from_db()
    someone_elses.refresh_from_db()
    assert mine.owner is not None and mine.owner.username == "newbie"
    assert someone_elses.owner is None
    assert b"mine" in client.get("/scenarios/").content
    # Now private: the bare link no longer opens it for others.
    assert Client().get(f"/s/{mine.pk}/").status_code == 404


def test_logging_in_also_claims_the_browsers_scenarios(customer_user: User) -> None:
    client = Client()
    scenario = make_scenario()
    made_in_this_browser(client, scenario)
    client.post(
        "/accounts/login/",
        {"username": "cora.customer", "password": "correct-horse-battery"},
    )
    scenario.refresh_from_db()
    assert scenario.owner == customer_user


def test_bom_csv_has_every_line(client: Client) -> None:
    scenario = make_scenario()
    response = client.get(f"/s/{scenario.pk}/bom.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    lines = [r for r in rows if r["Category"] not in ("", "Cost", "Network model")]
    expected = training_result()["bom"]
    assert [r["Description"] for r in lines] == [line["description"] for line in expected]
    assert rows[0]["Quantity"] == "512" and rows[0]["Extended price (USD)"] == "1228800.0"
    assert rows[0]["Network"] == "GPU compute fabric" and rows[0]["Category"] == "Network adapter"
    assert all(r["Part number"] != line["sku"] for r, line in zip(lines, expected, strict=True))


def test_json_export_is_the_full_result(client: Client) -> None:
    scenario = make_scenario()
    payload = json.loads(client.get(f"/s/{scenario.pk}/result.json").content)
    # the stored result read through its types (advisor.scenarios.results.served_result):
    # every stored key, and the keys this sample predates with their defaults
    stored = training_result()
    assert payload["result"] == EngineResult.from_dict(stored).to_dict()
    assert payload["result"]["bom"][0].items() >= stored["bom"][0].items()
    assert payload["run"]["catalog_version"] == default_catalog().version


def test_pdf_report_holds_headline_bom_skus_and_charts(client: Client) -> None:
    scenario = make_scenario(customer="Acme AI")
    response = client.get(f"/s/{scenario.pk}/report.pdf")
    assert response["Content-Type"] == "application/pdf"
    pdf = response.content
    assert pdf.startswith(b"%PDF")
    assert len(pdf) > 20_000
    text = " ".join(pdf_text(pdf).split())
    for line in training_result()["bom"]:
        assert line["sku"] not in text, line["sku"]
        assert line["description"][:30] in text, line["description"]
    assert "RoCE v2 · 8 × 400 Gb/s NICs per server" in text and "ACME AI" in text
    assert "Ethernet (TCP) would leave GPUs idle 41 %" in text  # the rationale
    assert "Why this design" in text and "Assumptions" in text
    assert pdf_image_count(pdf) >= 4  # topology, breakdown, cost vs speed, scaling


def test_exports_need_a_result(client: Client) -> None:
    scenario = make_scenario(status=RunStatus.QUEUED, progress=0)
    assert client.get(f"/s/{scenario.pk}/report.pdf").status_code == 404


@pytest.mark.parametrize(
    "scenario",
    [
        {"workload": "training", "model": "deepseek-v3", "gpu": "h800-sxm", "gpus": 2048},
        {"workload": "fine_tuning", "model": "llama3-8b", "gpu": "a100-80gb-sxm", "gpus": 8},
        {
            "workload": "inference",
            "model": "llama3.1-405b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "precision": "bf16",  # split over both servers (FP8 fits one)
            "inference": {"independent_replicas": False, "target_ms_per_token": 40},
        },
        {"workload": "inference", "model": "llama3-8b", "gpu": "l40s", "gpus": 32},
    ],
)
def test_real_engine_results_render_everywhere(client: Client, scenario: dict) -> None:
    from advisor.engine import evaluate

    result = evaluate(scenario)
    row = make_scenario(result=result)
    html = client.get(f"/s/{row.pk}/").content.decode()
    assert 'id="headline-title"' in html
    if scenario["workload"] == "inference":
        assert "Per token" in html
    text = " ".join(pdf_text(client.get(f"/s/{row.pk}/report.pdf").content).split())
    first = result["bom"][0]
    assert first["sku"] not in text
    assert (first["part_number"] or first["description"][:30]) in text
    other = make_scenario(result=result, name="twin")
    assert client.get("/compare/", {"s": [row.pk, other.pk]}).status_code == 200


def test_a_missed_latency_target_is_said_in_the_headline(client: Client) -> None:
    result = training_result()
    result["scenario"] = {"workload": "inference", "inference": {"target_ms_per_token": 40}}
    result["metrics"] = {
        "ms_per_token": 52.5,
        "ttft_ms": 540.0,
        "meets_target": 0.0,
        "compute_ms_per_token": 43.8,
        "comm_ms_per_token": 8.7,
    }
    html = client.get(f"/s/{make_scenario(result=result).pk}/").content.decode()
    warning = (
        "No design meets your target of 40 ms per token: this one generates a token every 52.5 ms."
    )
    assert warning in html


def test_bom_groups_add_up_the_lines_power_and_price() -> None:
    from advisor.engine import evaluate_typed
    from advisor.reports.presenters import bom_groups

    result = evaluate_typed(
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 64}
    )
    groups = bom_groups(result)
    assert sum(g["power_w"] for g in groups) == pytest.approx(
        sum(line.power_w for line in result.bom)
    )
    assert sum(g["subtotal"] for g in groups) == pytest.approx(result.cost.network_capex_usd)


def test_bom_rows_show_the_parts_description_number_and_role_apart() -> None:
    import dataclasses

    from advisor.engine import evaluate_typed
    from advisor.reports.presenters import bom_groups

    result = evaluate_typed(
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 64}
    )
    rows = [row for g in bom_groups(result) for row in g["lines"]]
    assert {"Leaf switch", "Server link", "Out-of-band management switch"} <= {
        row.role for row in rows
    }
    leaf = next(line for line in result.bom if line.role == "leaf")
    catalog = default_catalog()
    switch = next(s for s in catalog.switches if s.sku == leaf.sku)
    shown = next(row for row in rows if row.role == "Leaf switch")
    assert (shown.description, shown.part_number) == (switch.description, switch.part_number)
    # a result stored when the role was written into the text reads the catalog's text
    legacy = dataclasses.replace(
        result,
        bom=tuple(
            dataclasses.replace(line, description=f"{line.description} (leaf)")
            if line.role == "leaf"
            else line
            for line in result.bom
        ),
    )
    old = next(row for g in bom_groups(legacy) for row in g["lines"] if row.role == "Leaf switch")
    assert old.description == switch.description
