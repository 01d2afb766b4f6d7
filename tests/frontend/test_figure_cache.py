"""A finished run's charts are built once, then served from the cache."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from advisor.reports import charts
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


def test_the_results_page_builds_a_runs_figures_once(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.clear()
    built: list[int] = []
    real = charts.all_figures

    def counting(result: dict[str, Any]) -> dict[str, Any]:
        built.append(1)
        return real(result)

    monkeypatch.setattr(charts, "all_figures", counting)
    scenario = make_scenario()

    first = client.get(f"/s/{scenario.pk}/")
    second = client.get(f"/s/{scenario.pk}/")

    assert first.status_code == second.status_code == 200
    assert len(built) == 1
    for response in (first, second):
        assert b'id="fig-chart-cost"' in response.content


def test_a_new_run_gets_its_own_figures(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.clear()
    built: list[int] = []
    real = charts.all_figures
    monkeypatch.setattr(charts, "all_figures", lambda r: built.append(1) or real(r))

    client.get(f"/s/{make_scenario(name='A').pk}/")
    client.get(f"/s/{make_scenario(name='B').pk}/")

    assert len(built) == 2
