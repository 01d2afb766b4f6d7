"""The accuracy page leads with the held-out figures, then shows the residuals and the ranges
they set."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_accuracy_page_lists_residuals_by_kind_and_generation(client: Client) -> None:
    from advisor.engine.tools.validation import band_coverage, residual_table

    html = client.get("/accuracy/").content.decode()
    assert 'id="residual-table"' in html
    generations = {gen for (kind, gen) in residual_table() if kind == "training" and gen != "*"}
    assert generations and all(f"<td>{gen}</td>" in html for gen in generations)
    cov = band_coverage("held_out")
    assert f"{cov['inside']} of {cov['total']} held-out values" in html


def test_accuracy_page_leads_with_the_held_out_error(client: Client) -> None:
    from advisor.engine.tools.validation import validation_report

    summary = validation_report()["summary"]
    html = client.get("/accuracy/").content.decode()
    held = html.index('id="held-out-mae"')
    assert held < html.index('id="passed-count"') < html.index('id="validation-table"')
    assert f"{summary['held_out_mae_pct']:.1f} %" in html[held : held + 200]
    assert f"{summary['held_out_loo_inside']} / {summary['held_out_lines']}" in html
    assert "Held out: never used to set or choose anything" in html
