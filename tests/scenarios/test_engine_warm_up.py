"""A fresh web or worker process pays the engine's process constants at start, not in a
request (advisor.scenarios.engine_calls.warm_up)."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from advisor.scenarios import engine_calls

FRESH_PROCESS_WARM_UP = """
from advisor.engine.tools.validation import residual_table
from advisor.scenarios import engine_calls
assert residual_table.cache_info().currsize == 0
engine_calls.warm_up()
print(residual_table.cache_info().currsize, len(residual_table()))
"""


def test_warm_up_builds_the_model_error_residuals() -> None:
    # In a fresh process, as a web or worker process starts: in this test process other tests
    # have filled the engine's per-scenario caches, so the warm-up's answer may not need them.
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS_WARM_UP],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    built, rows = (int(word) for word in done.stdout.split())
    assert built == 1
    assert rows > 0  # the bands of every answer come from it


def test_a_failed_warm_up_is_logged_and_never_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("catalog unreadable")

    monkeypatch.setattr(engine_calls.engine, "evaluate", broken)
    with caplog.at_level(logging.ERROR, logger="advisor.scenarios.engine_calls"):
        engine_calls.warm_up()
    assert "engine warm-up failed" in caplog.text


def test_each_celery_worker_process_warms_up() -> None:
    from celery.signals import worker_process_init

    import advisor.celery

    receivers = [r() if callable(r) else r for _, r in worker_process_init.receivers]
    assert advisor.celery._warm_up_engine in receivers


def test_each_celery_worker_process_warms_up_the_figures_it_draws_ahead(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker draws the figures of the pages' runs as it finishes them
    (advisor.scenarios.figures): Plotly's validators are built at its start, not in its
    first run; a failure is logged and the worker still starts, its heap frozen after."""
    import advisor.celery
    import advisor.heap
    from advisor.scenarios import figures

    done: list[str] = []
    monkeypatch.setattr(advisor.heap, "freeze_heap", lambda: done.append("freeze"))
    monkeypatch.setattr(engine_calls, "warm_up", lambda: done.append("engine"))
    monkeypatch.setattr(figures, "warm_up", lambda: done.append("figures"))
    advisor.celery._warm_up_engine()
    assert done == ["engine", "figures", "freeze"]

    def broken() -> None:
        raise RuntimeError("plotly missing")

    done.clear()
    monkeypatch.setattr(figures, "warm_up", broken)
    with caplog.at_level(logging.ERROR, logger="advisor.celery"):
        advisor.celery._warm_up_engine()
    assert done == ["engine", "freeze"]
    assert "figures warm-up failed" in caplog.text
