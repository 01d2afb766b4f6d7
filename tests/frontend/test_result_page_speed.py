"""A finished run's page is rendered from its cached parts: figures, tables and details are
built once per run, so later visits do none of that work (issue 13: < 300 ms p95 under load)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


def test_a_second_visit_builds_no_figure_and_no_table(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from advisor.reports import charts, presenters

    cache.clear()
    scenario = make_scenario()
    first = client.get(f"/s/{scenario.pk}/").content.decode()
    assert '<script id="fig-chart-cost" type="application/json">' in first

    def boom(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("rebuilt on a cached visit")

    for module, name in (
        (charts, "all_figures"),
        (presenters, "options_rows"),
        (presenters, "bom_groups"),
        (presenters, "assumption_rows"),
    ):
        monkeypatch.setattr(module, name, boom)
    second = client.get(f"/s/{scenario.pk}/").content.decode()

    def details(html: str) -> str:
        return html[html.index('<script id="fig-chart-') : html.index('id="history"')]

    assert details(second) == details(first)
    assert 'id="bom"' in details(second) and 'id="assumptions"' in details(second)
