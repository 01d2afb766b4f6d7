"""A finished run's charts are built once, then served from the cache."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from advisor.reports import charts
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_threads_showing_a_new_run_at_once_parse_and_draw_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four requests of one gunicorn worker opening the same run it has not shown yet: one
    parses the result and draws the figures, the others wait for them (they did it four
    times over under one GIL, ~1 s for all four)."""
    import threading
    import time

    from advisor.scenarios import results
    from advisor.scenarios.models import ScenarioRun
    from frontend import results as pages

    cache.clear()
    results.memo_clear()
    run_id = make_scenario().runs.get().pk
    parsed: list[int] = []
    drawn: list[int] = []
    real_parse, real_draw = results.result_from_json, charts.all_figures

    def slow_parse(data: dict[str, Any]) -> Any:
        parsed.append(1)
        time.sleep(0.1)  # the others arrive while it is being made
        return real_parse(data)

    def slow_draw(result: Any) -> dict[str, Any]:
        drawn.append(1)
        time.sleep(0.1)
        return real_draw(result)

    monkeypatch.setattr(results, "result_from_json", slow_parse)
    monkeypatch.setattr(charts, "all_figures", slow_draw)
    answers: list[dict[str, Any]] = []
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def request() -> None:
        try:
            start.wait()
            run = ScenarioRun.objects.get(pk=run_id)  # each request reads its own row
            typed = results.stored_result(run)
            assert typed is not None
            answers.append(pages.run_figures(typed, run.pk))
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)
        finally:
            from django.db import connection

            connection.close()

    threads = [threading.Thread(target=request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not failures, failures
    assert len(answers) == 4 and all(a == answers[0] for a in answers)
    assert (len(parsed), len(drawn)) == (1, 1)
    assert len(results._parsing) == 0 and len(pages._drawing) == 0  # no lock left behind
