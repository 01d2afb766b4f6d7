"""A retrieval pipeline (RAG) through the web: asked in the questionnaire, answered as one on
the results page and in the PDF, with the same figures the API serves."""

from __future__ import annotations

import html
from typing import Any

import pytest
from django.test import Client

from advisor.engine.result.records import EngineResult
from advisor.reports.rag import rag_section
from advisor.scenarios.models import RunStatus, Scenario
from tests.frontend.pdfread import pdf_text

pytestmark = pytest.mark.django_db(transaction=True)


def _start(client: Client) -> str:
    response = client.post("/start/")
    assert response.status_code == 302
    return response["Location"].rsplit("/", 2)[0]


def _post(client: Client, base: str, step: str, **data: Any) -> Any:
    return client.post(f"{base}/{step}/", {"nav": "next", **data})


def _walk(client: Client, **work: str) -> Any:
    base = _start(client)
    assert _post(client, base, "job", workload="rag", scale="many").status_code == 302
    _post(client, base, "model", model_choice="llama3-70b")
    _post(client, base, "hardware", gpu="h100-sxm", gpus="16")
    response = _post(client, base, "work", requests_per_s="5", **work)
    if response.status_code != 302:
        return response
    _post(client, base, "priorities")
    return client.post(f"{base}/review/", {"nav": "submit", "name": "Docs assistant"})


def test_a_rag_pipeline_asked_in_the_wizard_is_answered_as_one_on_page_pdf_and_api() -> None:
    client = Client()
    response = _walk(client, rag_top_k="4", rag_chunk_tokens="256")
    assert response.status_code == 302
    scenario = Scenario.objects.get()
    assert scenario.inputs["workload"] == "inference"
    assert scenario.inputs["rag"]["top_k"] == 4
    run = scenario.runs.get()
    assert run.status == RunStatus.SUCCEEDED
    result = EngineResult.from_dict(run.result)
    assert result.rag is not None
    section = rag_section(result)
    assert section is not None

    page = html.unescape(client.get(response["Location"]).content.decode())
    assert 'id="rag"' in page and "Retrieval pipeline (RAG)" in page
    assert "RAG pipeline" in page.split('id="headline"')[1].split("</section>")[0]
    pdf = pdf_text(client.get(f"/s/{scenario.pk}/report.pdf").content)
    assert "Retrieval pipeline (RAG)" in pdf
    # the same figures on the page and in the report: every cell of the RAG tables
    for table in section.tables:
        for row in table[1:]:
            for cell in row:
                assert cell in page, cell
    for cell in ("MCX631102AN-ADAT", "MSN2700-CS2F", section.network[-1][1]):
        assert cell in pdf, cell
    assert section.timing[1][1] in pdf  # retrieval time

    # the API serves the same record the page and the report were drawn from
    from rest_framework.test import APIClient

    from api.services import api_client_create

    owner = api_client_create(name="quotes-rag")
    scenario.owner = owner.client.user
    scenario.save()
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {owner.key}")
    served = http.get(f"/api/v1/scenarios/{scenario.pk}/").json()["result"]
    assert served["rag"] == run.result["rag"]
    assert served["rag"]["network"]["capex_usd"] == pytest.approx(result.rag.network.capex_usd)


def test_too_many_retrieved_tokens_are_named_at_the_chunk_question_never_a_500() -> None:
    client = Client()
    response = _walk(client, rag_top_k="9", rag_chunk_tokens="512")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="err-rag_top_k"' in html
    assert "retrieved tokens must leave room" in html
    assert Scenario.objects.count() == 0


def test_a_nonsense_chunk_count_is_refused_at_its_question() -> None:
    client = Client()
    response = _walk(client, rag_top_k="lots")
    assert response.status_code == 200
    assert 'id="err-rag_top_k"' in response.content.decode()
    assert Scenario.objects.count() == 0


def test_the_headline_facts_name_the_retrieval_tiers_and_the_first_token_with_retrieval() -> None:
    from advisor.engine import evaluate_typed
    from advisor.reports.presenters import headline

    result = evaluate_typed(
        {
            "workload": "inference",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "inference": {"requests_per_s": 5},
            "rag": {},
        }
    )
    head = headline(result)
    assert head["title"].startswith("RAG pipeline · ")
    facts = {f.key: f for f in head["facts"]}
    assert facts["Retrieval tiers (RAG)"].value == "2 + 2 servers · 2 × 25G"
    assert "MCX631102AN-ADAT" in facts["Retrieval tiers (RAG)"].sub
    assert "with retrieval" in facts["Per token"].sub
