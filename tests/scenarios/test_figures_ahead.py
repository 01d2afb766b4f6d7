"""A run asked for from the pages has its figures drawn by the worker as it finishes, so no
page view pays for them; they are exactly the figures a page draws; an API run's are not
drawn ahead (its page, if any, draws them on first view)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from advisor.reports import charts
from advisor.scenarios import figures
from advisor.scenarios.models import RunFigures, RunStatus, ScenarioRun
from advisor.scenarios.results import memo_clear
from advisor.scenarios.services import scenario_submit
from api.services import api_client_create

# Tasks run eagerly (tests/conftest.py) once the submission commits.
pytestmark = pytest.mark.django_db(transaction=True)

TRAINING = {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 16}
SERVING = {
    "workload": "inference",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "gpus_per_node": 8,
}


def _new_process() -> None:
    """What another web process starts with: nothing kept."""
    cache.clear()
    memo_clear()


def _counting_draws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    drawn: list[int] = []
    real = charts.all_figures

    def counting(result: Any) -> dict[str, Any]:
        drawn.append(1)
        return real(result)

    monkeypatch.setattr(charts, "all_figures", counting)
    return drawn


def _figure_scripts(html: bytes) -> dict[str, str]:
    found = re.findall(
        rb'<script id="(fig-chart-[a-z]+)" type="application/json">(.*?)</script>', html
    )
    return {name.decode(): body.decode() for name, body in found}


def _finished(run: ScenarioRun) -> ScenarioRun:
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    return run


def test_a_pages_run_finishes_with_its_figures_and_its_page_draws_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _new_process()
    drawn = _counting_draws(monkeypatch)
    run = _finished(scenario_submit(name="From the questionnaire", inputs=dict(TRAINING)))
    assert len(drawn) == 1  # by the worker, as it finished the run
    stored = RunFigures.objects.get(run=run)
    assert stored.key == figures.figures_key(run)  # the key its pages look for

    _new_process()
    page = Client().get(f"/s/{run.scenario_id}/")

    assert page.status_code == 200
    assert len(drawn) == 1  # the page drew nothing
    assert set(_figure_scripts(page.content)) >= {"fig-chart-cost", "fig-chart-topology"}


def test_an_api_run_is_not_drawn_ahead_and_its_first_page_draws_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _new_process()
    drawn = _counting_draws(monkeypatch)
    issued = api_client_create(name="quoting-system")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {issued.key}")
    response = api.post(
        "/api/v1/scenarios/", {"name": "From the API", "inputs": TRAINING}, format="json"
    )
    assert response.status_code == 202, response.content
    api_run = _finished(ScenarioRun.objects.get(pk=response.json()["run"]["id"]))
    web_run = _finished(scenario_submit(name="From the questionnaire", inputs=dict(TRAINING)))

    assert not RunFigures.objects.filter(run=api_run).exists()
    assert RunFigures.objects.filter(run=web_run).exists()
    assert len(drawn) == 1  # the web run's, by the worker
    _new_process()
    api_run.scenario.owner = None  # its page, opened by its link
    api_run.scenario.save(update_fields=["owner"])
    assert Client().get(f"/s/{api_run.scenario_id}/").status_code == 200
    assert len(drawn) == 2
    assert RunFigures.objects.get(run=api_run).key == figures.figures_key(api_run)


@pytest.mark.parametrize("inputs", [TRAINING, SERVING], ids=["training", "serving"])
def test_the_figures_drawn_ahead_are_the_figures_a_page_draws(inputs: dict[str, Any]) -> None:
    """Character for character: the worker draws from the result as a page reads it back
    from the database (jsonb's key order), with the same drawing function."""
    run = _finished(scenario_submit(name="Ahead", inputs=dict(inputs)))
    ahead = RunFigures.objects.get(run=run)
    _new_process()
    served_ahead = _figure_scripts(Client().get(f"/s/{run.scenario_id}/").content)

    RunFigures.objects.filter(run=run).delete()  # as for a run finished before this change
    _new_process()
    drawn_by_page = Client().get(f"/s/{run.scenario_id}/").content
    on_view = RunFigures.objects.get(run=run)

    assert on_view.key == ahead.key
    assert json.loads(on_view.figures) == json.loads(ahead.figures)
    assert on_view.figures == ahead.figures
    assert _figure_scripts(drawn_by_page) == served_ahead
    assert len(served_ahead) >= 2


def test_a_run_whose_figures_cannot_be_drawn_still_succeeds_and_its_page_draws_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _new_process()
    tried: list[int] = []
    real = figures.draw

    def broken(result: Any) -> dict[str, Any]:
        tried.append(1)
        raise RuntimeError("a chart bug")

    monkeypatch.setattr(figures, "draw", broken)
    run = _finished(scenario_submit(name="Chart bug", inputs=dict(TRAINING)))
    assert tried == [1]
    assert run.result and not RunFigures.objects.filter(run=run).exists()

    monkeypatch.setattr(figures, "draw", real)
    page = Client().get(f"/s/{run.scenario_id}/")
    assert page.status_code == 200
    assert "fig-chart-cost" in _figure_scripts(page.content)
    assert RunFigures.objects.get(run=run).key == figures.figures_key(run)
