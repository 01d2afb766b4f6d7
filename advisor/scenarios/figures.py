"""A succeeded run's Plotly figures, drawn once and stored with the run (:class:`RunFigures`).

Drawing a result page's figures costs ~100-250 ms of CPU (Plotly's validation, and the
serving chart's load curves from the engine). Each web process used to draw them for itself
on the first view of each run; then the first process to show a run drew and stored them, and
every process after it read them (one query, ~1 ms to parse). Now a run asked for from the
pages (the questionnaire, a re-run, a what-if, a measurement's calibrated run:
``ScenarioRun.draw_figures``) has them drawn by the worker that computes it, before it
finishes the run, and stored in the same transaction that finishes it (:func:`draw_ahead`,
:func:`store_finished`): its person is waiting on the progress page to see them, and no web
process pays for them. Under `make load` the first view of the load test's new run drew them
in one gunicorn worker (140-200 ms) while the others waited for it, in the 50 users' first
second. The API's runs are not drawn ahead: most are never shown as a page, and the worker's
time is what a submission waits for; a page showing one (and a run finished before the
worker drew figures) draws them on its first view and stores them (:func:`run_figures`).

The worker draws from what a page reads, not from the result it holds: the result's JSON read
back as the database returns the stored column (:func:`advisor.scenarios.results.as_read_back`:
PostgreSQL's jsonb orders an object's keys its own way), parsed by the same reader, drawn by
the same :func:`draw`. Its figures are the figures a page would draw, character for character.

The figures depend only on the stored result and on the code that reads and draws it, so
they are kept under :func:`figures_key`: the run, its finish time (a run recomputed in place
finishes again), the engine and catalog versions it was computed with, this engine's version
and a digest of the engine's and the reports' source. Figures stored under another key (a
deploy changed the code, a run was recomputed) are never served: they are drawn again and
replace the old ones.

Processes that show a run nobody has shown yet at the same moment (a link sent to a team)
draw it once: the drawing process holds a PostgreSQL advisory lock on the run while it draws
and stores, and the others wait for it and read what it stored (:func:`_one_drawer`; within a
process, threads already wait for each other: frontend.results).
https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connection, transaction

import advisor.reports
from advisor.engine import ENGINE_VERSION
from advisor.engine.build_id import content_digest
from advisor.engine.result.records import EngineResult
from advisor.reports import charts
from advisor.scenarios.engine_calls import WARM_UP_SCENARIO, evaluate_inputs
from advisor.scenarios.models import RunFigures, RunStatus, ScenarioRun
from advisor.scenarios.results import as_read_back, result_from_json

logger = logging.getLogger(__name__)

Figures = dict[str, Any]


@functools.cache
def code_digest() -> str:
    """A digest of the source the figures are drawn with: the engine (the result's reading,
    the serving chart's curves: its version digests its source and data) and the reports (the
    charts). Read once per process."""
    root = Path(advisor.reports.__file__ or "").parent
    return f"{ENGINE_VERSION}/{content_digest(sorted(root.rglob('*.py')), root)}"


def figures_key(run: ScenarioRun) -> str:
    """What a run's figures are drawn from, as 64 hex digits (see the module's docstring)."""
    parts = [
        str(run.pk),
        run.finished_at.isoformat() if run.finished_at else "",
        run.engine_version,
        run.catalog_version,
        ENGINE_VERSION,
        code_digest(),
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def draw(result: EngineResult) -> Figures:
    """A result's figures (:func:`advisor.reports.charts.all_figures`), as JSON-ready data."""
    return charts.all_figures(result)


def draw_ahead(data: dict[str, Any]) -> Figures | None:
    """The figures of a result the worker is about to store (``data``: its JSON, as the run
    will store it), drawn from what a page will read (see the module's docstring). None when
    they cannot be drawn (logged): the run still finishes, and its page draws them."""
    try:
        return draw(result_from_json(as_read_back(data)))
    except Exception:  # figures are never worth failing a computed run for
        logger.exception("figures not drawn ahead; the run's page draws them")
        return None


def store_finished(
    run_id: uuid.UUID,
    *,
    finished_at: datetime,
    engine_version: str,
    catalog_version: str,
    figures: Figures,
) -> None:
    """Store figures drawn ahead for a run being finished (call inside the transaction that
    finishes it) under the key its pages look for: that of the run as it is once finished."""
    run = ScenarioRun(
        pk=run_id,
        status=RunStatus.SUCCEEDED,
        finished_at=finished_at,
        engine_version=engine_version,
        catalog_version=catalog_version,
    )
    store_figures(run, figures_key(run), figures)


def warm_up() -> None:
    """Plotly builds a validator per property on its first use in a process (~0.3 s for a
    result page's figures): draw one small result's figures. The web (frontend.warm) and each
    worker process (advisor/celery.py) call it before their first page or run."""
    draw(evaluate_inputs(dict(WARM_UP_SCENARIO)))


def stored_figures(run: ScenarioRun, key: str) -> Figures | None:
    """The run's stored figures drawn under ``key``; None when there are none (or others)."""
    text = (
        RunFigures.objects.filter(run_id=run.pk, key=key).values_list("figures", flat=True).first()
    )
    if not text:
        return None
    try:
        figures = json.loads(text)
    except ValueError:
        logger.warning("run %s: stored figures unreadable; drawing them again", run.pk)
        return None
    return figures if isinstance(figures, dict) else None


def store_figures(run: ScenarioRun, key: str, figures: Figures) -> None:
    """Store a run's figures under ``key``, replacing any it had (one upsert). A database
    that refuses (the run deleted meanwhile, a connection lost) is logged: the figures were
    drawn and are shown; the next process draws them again."""
    row = RunFigures(run_id=run.pk, key=key, figures=json.dumps(figures, cls=DjangoJSONEncoder))
    try:
        with transaction.atomic():  # a refusal leaves the request's own transaction usable
            RunFigures.objects.bulk_create(
                [row],
                update_conflicts=True,
                unique_fields=["run"],
                update_fields=["key", "figures", "drawn_at"],
            )
    except DatabaseError:
        logger.warning("run %s: figures not stored", run.pk, exc_info=True)


def run_figures(run: ScenarioRun | None, result: EngineResult) -> Figures:
    """The figures of a run's result: its stored ones, or drawn now and stored for every
    process after this one. A run that has not succeeded (or no run) is drawn, not stored."""
    if run is None or run.pk is None or run.status != RunStatus.SUCCEEDED:
        return draw(result)
    key = figures_key(run)
    figures = stored_figures(run, key)
    if figures is None:
        with _one_drawer(run):
            figures = stored_figures(run, key)  # drawn by another process while we waited?
            if figures is None:
                figures = draw(result)
                store_figures(run, key, figures)
    return figures


# The first key of the two-key advisory lock: this module's locks, one per run (second key).
_LOCK_SPACE = 0x46494753  # "FIGS"


@contextmanager
def _one_drawer(run: ScenarioRun) -> Iterator[None]:
    """Hold the run's drawing lock across processes (PostgreSQL; a session lock, released as
    soon as the figures are stored and committed). Without PostgreSQL, inside a transaction
    (the stored figures would not be seen before it commits) or when the lock cannot be
    taken, processes draw for themselves as before."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    args: list[int | str] = [_LOCK_SPACE, str(run.pk)]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", args)
    except DatabaseError:
        logger.warning("run %s: figures drawn without the lock", run.pk, exc_info=True)
        yield
        return
    try:
        yield
    finally:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", args)
        except DatabaseError:  # the connection is gone, and its locks with it
            logger.warning("run %s: figures lock not released", run.pk, exc_info=True)
