"""A succeeded run's Plotly figures, drawn once and stored with the run (:class:`RunFigures`).

Drawing a result page's figures costs ~100-250 ms of CPU (Plotly's validation, and the
serving chart's load curves from the engine). Each web process used to draw them for itself
on the first view of each run; now the first process to show a run (runs stored before this
table existed included) draws and stores them, and every process after it reads them (one
query, ~1 ms to parse). They are drawn on first view, not by the worker that finishes the run:
most runs (the API's) are never shown as a page, and the worker's time is what a submitted
run waits for.

The figures depend only on the stored result and on the code that reads and draws it, so
they are kept under :func:`figures_key`: the run, its finish time (a run recomputed in place
finishes again), the engine and catalog versions it was computed with, this engine's version
and a digest of the engine's and the reports' source. Figures stored under another key (a
deploy changed the code, a run was recomputed) are never served: they are drawn again and
replace the old ones.

Processes that show a run nobody has shown yet at the same moment (a link sent to a team, or
`make load`'s 50 users opening the same new run in all three gunicorn workers at once) draw it
once: the drawing process holds a PostgreSQL advisory lock on the run while it draws and
stores, and the others wait for it and read what it stored (:func:`_one_drawer`; within a
process, threads already wait for each other: frontend.results). Under `make load` each of
the three workers drew the run's figures at once (130-146 ms of CPU each, on a 2-core machine
also serving the users' first requests).
https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connection, transaction

import advisor.engine
import advisor.reports
from advisor.engine import ENGINE_VERSION
from advisor.engine.result.records import EngineResult
from advisor.reports import charts
from advisor.scenarios.models import RunFigures, RunStatus, ScenarioRun

logger = logging.getLogger(__name__)

Figures = dict[str, Any]


@functools.cache
def code_digest() -> str:
    """A digest of the source the figures are drawn with: the engine (the result's reading,
    the serving chart's curves) and the reports (the charts). Read once per process (~12 ms)."""
    digest = hashlib.sha256()
    for package in (advisor.engine, advisor.reports):
        root = Path(package.__file__ or "").parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


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
