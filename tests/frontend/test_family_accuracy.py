"""An answer says how its family of predictions reads against published measurements it was never
fitted to (training; serving of dense models; serving of MoE models apart), on the result page and
in the PDF alike, with the numbers the accuracy page gives."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.engine.result.records import EngineResult
from advisor.engine.tools.validation import held_out_pools, validation_report
from advisor.reports.presenters import capacity_caution, family_accuracy, pool_label
from tests.frontend.conftest import make_scenario
from tests.frontend.pdfread import pdf_text
from tests.support.scenarios import GPT_OSS_20B_AT_CAPACITY

pytestmark = pytest.mark.django_db

MOE_SERVING: dict[str, Any] = {
    "workload": "inference",
    "model": "gpt-oss-120b",
    "gpu": "h100-sxm",
    "gpus": 8,
    "precision": "mxfp4",
    "inference": {"prompt_tokens": 1000, "output_tokens": 1000, "requests_per_s": 5},
}
DENSE_TRAINING: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 64,
}


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Any]]:
    from advisor.engine import evaluate

    return {"moe": evaluate(MOE_SERVING), "training": evaluate(DENSE_TRAINING)}


def _expected(pool: str) -> dict[str, Any]:
    entry = validation_report()["summary"]["held_out_mae_by_pool"][pool]
    assert held_out_pools()[pool] == entry  # the answer and the accuracy page read one figure
    return entry


@pytest.mark.parametrize(("key", "pool"), [("moe", "serving-moe"), ("training", "training")])
def test_the_sentence_names_the_answers_family_and_its_held_out_error(
    results: dict[str, dict[str, Any]], key: str, pool: str
) -> None:
    entry = _expected(pool)
    sentence = family_accuracy(EngineResult.from_dict(results[key]))
    assert f"Against {entry['lines']} published measurements" in sentence
    assert pool_label(pool).split(",")[0].lower() in sentence.lower()
    assert f"{entry['within_tolerance']} of them fall within tolerance" in sentence
    mae = float(entry["mae_pct"])
    stated = float(sentence.split("off by ")[1].split(" %")[0])
    assert abs(stated - mae) <= max(0.05 * mae, 0.5)
    if pool == "serving-moe":
        assert "mixture-of-experts models" in sentence and "dense" not in sentence


def test_result_page_and_pdf_carry_the_same_sentence(
    client: Client, results: dict[str, dict[str, Any]]
) -> None:
    sentence = family_accuracy(EngineResult.from_dict(results["moe"]))
    scenario = make_scenario(name="gpt-oss serving", result=results["moe"])
    scenario.inputs = MOE_SERVING
    scenario.save()
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    start = html.index('id="family-accuracy"')
    assert sentence.split(" (")[0] in html[start : start + 400]
    pdf = client.get(f"/s/{scenario.pk}/report.pdf")
    assert pdf.status_code == 200
    text = pdf_text(pdf.content)
    assert " ".join(sentence.split()) in text


def test_a_small_active_moe_fleet_at_capacity_is_cautioned_on_the_page_and_in_the_pdf(
    client: Client, results: dict[str, dict[str, Any]]
) -> None:
    """gpt-oss-20b on 8 H100 decodes about 650 sequences a GPU at its capacity within the
    targets, where the published runs served well below the model: the warnings say so, with
    the figures, on the first screen and in the PDF; a training answer carries no caution."""
    from advisor.engine import evaluate

    result = evaluate(GPT_OSS_20B_AT_CAPACITY)
    caution = capacity_caution(EngineResult.from_dict(result))
    assert caution is not None and caution.startswith("Caution: gpt-oss-20b")
    assert capacity_caution(EngineResult.from_dict(results["training"])) is None
    scenario = make_scenario(name="gpt-oss at capacity", result=result)
    scenario.inputs = GPT_OSS_20B_AT_CAPACITY
    scenario.save()
    html = client.get(f"/s/{scenario.pk}/").content.decode()
    warnings = html[html.index('id="warnings"') : html.index('id="headline"')]
    assert "warning-capacity" in warnings
    assert "size the fleet with that margin" in warnings
    pdf = client.get(f"/s/{scenario.pk}/report.pdf")
    assert pdf.status_code == 200
    assert " ".join(caution.split()) in pdf_text(pdf.content)
