"""Compare: the inputs that differ at the top, aligned charts, export as CSV and PDF."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.frontend.conftest import make_scenario
from tests.frontend.pdfread import pdf_text

pytestmark = pytest.mark.django_db


def _pair() -> tuple[Any, Any]:
    from advisor.engine import evaluate

    base = {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256}
    a = evaluate({**base, "constraints": {"team_skills": "ethernet", "prefer": "cost"}})
    b = evaluate({**base, "constraints": {"team_skills": "infiniband", "prefer": "performance"}})
    return (
        make_scenario(name="Ethernet team", customer="Acme AI", result=a),
        make_scenario(name="InfiniBand team", customer="Acme AI", result=b),
    )


def _figure(html: str, script_id: str) -> dict[str, Any]:
    match = re.search(rf'<script id="{script_id}" type="application/json">(.*?)</script>', html)
    assert match, script_id
    return json.loads(match.group(1))


def test_the_inputs_that_differ_come_first(sales_client: Client) -> None:
    a, b = _pair()
    html = sales_client.get("/compare/", {"s": [a.pk, b.pk]}).content.decode()
    diff = html[
        html.index('id="differences-table"') : html.index(
            "</table>", html.index('id="differences-table"')
        )
    ]
    assert "Team" in diff and "knows Ethernet" in diff and "knows InfiniBand" in diff
    assert "Priority" in diff and "lowest cost" in diff and "fastest" in diff
    assert "Model" not in diff  # the same in both: not a difference
    assert html.index('id="differences"') < html.index('id="compare-table"')


def test_charts_share_axes_that_start_at_zero_with_whole_labels(sales_client: Client) -> None:
    a, b = _pair()
    html = sales_client.get("/compare/", {"s": [a.pk, b.pk]}).content.decode()
    cost = _figure(html, "fig-compare-cost")
    assert cost["layout"]["xaxis"]["rangemode"] == "tozero"
    assert cost["layout"]["yaxis"]["rangemode"] == "tozero"
    assert cost["layout"]["yaxis"]["automargin"] is True
    assert {t["name"] for t in cost["data"] if t.get("showlegend", True)} == {
        "Ethernet team",
        "InfiniBand team",
    }
    breakdown = _figure(html, "fig-compare-breakdown")
    assert breakdown["data"][0]["y"] == ["Ethernet team", "InfiniBand team"]
    assert breakdown["layout"]["yaxis"]["automargin"] is True
    assert all(min(t["x"]) >= 0 for t in breakdown["data"])


def test_the_comparison_exports_as_csv_and_pdf(sales_client: Client) -> None:
    a, b = _pair()
    response = sales_client.get("/compare/comparison.csv", {"s": [a.pk, b.pk]})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["section", "item", "Ethernet team", "InfiniBand team", "differs"]
    team = next(r for r in rows if r[:2] == ["input", "Team"])
    assert team[2:] == ["knows Ethernet", "knows InfiniBand", "yes"]
    assert any(r[:2] == ["Cost (USD)", "Network capex"] for r in rows)
    response = sales_client.get("/compare/comparison.pdf", {"s": [a.pk, b.pk]})
    assert response["Content-Type"] == "application/pdf"
    out = Path(__file__).resolve().parents[2] / "test-output"
    out.mkdir(exist_ok=True)
    (out / "comparison.pdf").write_bytes(response.content)
    text = pdf_text(response.content)
    for expected in ("What differs in the inputs", "knows InfiniBand", "Network capex"):
        assert expected in text
    assert text.count("Prices are indicative") == 1


def test_exports_refuse_what_the_person_may_not_open(
    stranger_client: Client, customer_user: Any
) -> None:
    a = make_scenario(name="A", owner=customer_user)
    b = make_scenario(name="B", owner=customer_user)
    for url in ("/compare/comparison.csv", "/compare/comparison.pdf"):
        assert stranger_client.get(url, {"s": [a.pk, b.pk]}).status_code == 302
