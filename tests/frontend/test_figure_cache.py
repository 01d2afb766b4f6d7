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
            answers.append(pages.run_figures(typed, run))
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


def _counting_draws(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    drawn: list[int] = []
    real = charts.all_figures

    def counting(result: Any) -> dict[str, Any]:
        drawn.append(1)
        return real(result)

    monkeypatch.setattr(charts, "all_figures", counting)
    return drawn


def _new_process() -> None:
    """What another web process (or this one after a restart) starts with: nothing kept."""
    from advisor.scenarios import results

    cache.clear()
    results.memo_clear()


def _figure_scripts(html: bytes) -> dict[str, str]:
    import re

    found = re.findall(
        rb'<script id="(fig-chart-[a-z]+)" type="application/json">(.*?)</script>', html
    )
    return {name.decode(): body.decode() for name, body in found}


def test_another_process_serves_a_finished_runs_figures_without_drawing_them(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first view of a run (stored before figures were, so it has none) draws and stores
    them; a second web process showing the run reads them (each process drew them before),
    and serves the same characters as the page that drew them."""
    _new_process()
    drawn = _counting_draws(monkeypatch)
    scenario = make_scenario()

    first = client.get(f"/s/{scenario.pk}/")
    _new_process()
    second = client.get(f"/s/{scenario.pk}/")

    assert first.status_code == second.status_code == 200
    assert len(drawn) == 1
    assert _figure_scripts(second.content) == _figure_scripts(first.content)
    assert set(_figure_scripts(second.content)) >= {"fig-chart-cost", "fig-chart-topology"}


def test_figures_drawn_from_something_else_are_drawn_again(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored figures are served only for what they were drawn from: the run recomputed in
    place (a new finish), other engine or catalog versions, or another code's figures are
    drawn again and replace them."""
    from datetime import timedelta

    from advisor.scenarios import figures
    from advisor.scenarios.models import RunFigures

    _new_process()
    scenario = make_scenario()
    run = scenario.runs.get()
    key = figures.figures_key(run)
    for change in ({"engine_version": "0.9"}, {"catalog_version": "other"}):
        other = type(run).objects.get(pk=run.pk)
        for field, value in change.items():
            setattr(other, field, value)
        assert figures.figures_key(other) != key
    other = type(run).objects.get(pk=run.pk)
    other.finished_at = (other.finished_at or other.created_at) + timedelta(seconds=1)
    assert figures.figures_key(other) != key
    monkeypatch.setattr(figures, "code_digest", lambda: "another deploy")
    assert figures.figures_key(run) != key
    monkeypatch.undo()

    drawn = _counting_draws(monkeypatch)
    client.get(f"/s/{scenario.pk}/")
    RunFigures.objects.filter(run=run).update(key="0" * 64, figures='{"cost": {}}')
    _new_process()
    page = client.get(f"/s/{scenario.pk}/")

    assert page.status_code == 200 and len(drawn) == 2
    assert RunFigures.objects.get(run=run).key == key
    assert '"cost": {}' not in RunFigures.objects.get(run=run).figures


def test_figures_of_a_run_deleted_meanwhile_are_not_stored_and_do_not_fail() -> None:
    import uuid

    from advisor.scenarios import figures
    from advisor.scenarios.models import RunFigures, ScenarioRun

    gone = ScenarioRun(pk=uuid.uuid4(), status="succeeded")
    figures.store_figures(gone, figures.figures_key(gone), {"cost": {}})

    assert not RunFigures.objects.exists()
    assert ScenarioRun.objects.count() == 0  # the database still answers


@pytest.mark.services  # PostgreSQL's advisory locks
def test_processes_showing_a_new_run_at_once_draw_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Three web processes opening a run nobody has shown yet, at the same moment: one draws
    and stores its figures, the others wait on the run's PostgreSQL advisory lock and read
    them (each process drew them for itself before). Threads with their own connections stand
    for the processes: the per-process caches (frontend.results) are not used here."""
    import threading
    import time

    from django.db import connection

    from advisor.scenarios import figures, results
    from advisor.scenarios.models import ScenarioRun

    _new_process()
    run_id = make_scenario().runs.get().pk
    drawn: list[int] = []
    real_draw = figures.draw

    def slow_draw(result: Any) -> dict[str, Any]:
        drawn.append(1)
        time.sleep(0.2)  # the others arrive while it is being drawn
        return real_draw(result)

    monkeypatch.setattr(figures, "draw", slow_draw)
    answers: list[dict[str, Any]] = []
    failures: list[BaseException] = []
    start = threading.Barrier(3)

    def process() -> None:
        try:
            run = ScenarioRun.objects.get(pk=run_id)
            typed = results.stored_result(run)
            assert typed is not None
            start.wait()
            answers.append(figures.run_figures(run, typed))
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=process) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not failures, failures
    assert len(answers) == 3 and all(a == answers[0] for a in answers)
    assert len(drawn) == 1
    with connection.cursor() as cursor:  # no lock left behind
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert cursor.fetchone() == (0,)


def test_threads_showing_a_run_at_once_render_its_details_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four requests of one gunicorn worker opening a run whose details it has not rendered
    yet: one renders them (results.html's cached block), the others wait and serve the same
    page around the cached block (each rendered it before, 34-77 ms of CPU each)."""
    import threading
    import time

    from django.core.cache.utils import make_template_fragment_key
    from django.db import connection

    from advisor.reports import presenters
    from frontend import results as pages

    _new_process()
    scenario = make_scenario()
    built: list[int] = []
    real = presenters.bom_groups

    def slow_bom(result: Any) -> Any:
        built.append(1)
        time.sleep(0.2)  # the others arrive while the details are being rendered
        return real(result)

    monkeypatch.setattr(presenters, "bom_groups", slow_bom)
    pages_seen: list[bytes] = []
    failures: list[BaseException] = []
    start = threading.Barrier(4)

    def request() -> None:
        try:
            client = Client()
            start.wait()
            response = client.get(f"/s/{scenario.pk}/")
            assert response.status_code == 200
            pages_seen.append(response.content)
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not failures, failures
    assert len(built) == 1
    assert len(pages_seen) == 4
    details = {_figure_scripts(page).get("fig-chart-cost") for page in pages_seen}
    assert len(details) == 1 and None not in details
    run_pk = scenario.runs.get().pk
    assert cache.has_key(make_template_fragment_key(pages.RESULT_DETAILS_FRAGMENT, [run_pk]))
    assert len(pages._rendering) == 0  # no lock left behind


def test_the_details_block_and_its_key_name_the_same_version() -> None:
    """results.html's {% cache %} tag takes its fragment name as a literal: a new version there
    that frontend.results.RESULT_DETAILS_FRAGMENT did not follow leaves the warm-up and the
    concurrency guard keying a fragment no page writes."""
    import re
    from pathlib import Path

    from frontend import results as pages

    template = (Path(__file__).parents[2] / "templates/frontend/results.html").read_text()
    (name,) = re.findall(r"{% cache \d+ (\S+) run\.pk %}", template)
    assert name == pages.RESULT_DETAILS_FRAGMENT
