"""The accuracy page shows the calibration residuals and the ranges they set."""

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
    cov = band_coverage()
    assert f"{cov['inside']} of {cov['total']} published values" in html
