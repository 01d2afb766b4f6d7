"""Writes of sweeps: create one and fan it out, evaluate a chunk, reconcile lost chunks.

Shape of the work:
- `sweep_create` validates the axes (axes.normalise_axes), stores a Sweep and its SweepChunk
  rows (design points [start, stop) each) and, once the transaction commits, sends the chunks
  as one Celery `group` on the "sweeps" queue. Every worker process takes chunks, so
  throughput grows with the number of processes.
- A chunk is ClaimedWork, claimed, heartbeated and executed like a run
  (advisor.scenarios.claims). Its finishing transaction stores its result rows and adds its
  counts to the sweep with F() increments; the chunk that brings `done_chunks` to
  `total_chunks` ends the sweep. That is the chord's join, kept in PostgreSQL instead of a
  Celery chord: a chord needs a result backend (we keep none) and its counter cannot tell a
  redelivered chunk from a new one, while the claim can.
- The reconciler (`sweeps_reconcile`, run by beat with the runs') resends chunks whose message
  was lost and requeues chunks whose worker died.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

from celery import current_app, group
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from advisor.engine import ENGINE_VERSION
from advisor.engine.errors import ScenarioError
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.tools.sweep import SweepPoint, evaluate_points, point_count
from advisor.scenarios.catalog_store import catalog_current, catalog_recorded
from advisor.scenarios.claims import (
    BROKER_ERRORS,
    NOT_ENGINE_ERRORS,
    SWEEP_CHUNK_TASK,
    UNFINISHED,
    ClaimLost,
    heartbeating,
    mark_unsent,
    tasks_run_in_process,
    work_claim,
    work_execute,
    work_heartbeat,
    work_reconcile,
)
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import RunStatus, Scenario, Sweep, SweepChunk, SweepStatus
from advisor.scenarios.services import owner_or_none
from advisor.scenarios.sweeps.axes import normalise_axes
from advisor.scenarios.timelimit import EvaluationTimeout, current_deadline, request_deadline

logger = logging.getLogger(__name__)


class TooManySweeps(Exception):
    """The owner already has SWEEP_MAX_ACTIVE_PER_USER sweeps queued or running."""


@transaction.atomic
def sweep_create(
    *,
    scenario: Scenario,
    axes: Any,
    owner: AbstractBaseUser | AnonymousUser | None = None,
) -> Sweep:
    """Store a sweep of `scenario` over `axes` and send its chunks once this commits.

    Bad axes raise InvalidSweep; a scenario the engine refuses raises InvalidScenario; an
    owner with SWEEP_MAX_ACTIVE_PER_USER unfinished sweeps gets TooManySweeps (their row is
    locked while counting, so two concurrent requests cannot both slip under the limit).
    """
    owner_user: Any = owner_or_none(owner)
    if owner_user is not None:
        get_user_model().objects.select_for_update().filter(pk=owner_user.pk).first()
        active = Sweep.objects.filter(owner=owner_user, status__in=UNFINISHED).count()
        limit = settings.SWEEP_MAX_ACTIVE_PER_USER
        if active >= limit:
            raise TooManySweeps(
                f"{active} of your sweeps are still running; at most {limit} at a time. "
                "Wait for one to finish."
            )
    catalog = catalog_current()
    try:
        base = parse_scenario(scenario.inputs, catalog)
    except ScenarioError as exc:
        raise InvalidScenario(exc.field_errors) from exc
    normalised = normalise_axes(axes, base=base)
    total = point_count(normalised)
    size = settings.SWEEP_CHUNK_POINTS
    starts = range(0, total, size)
    sweep = Sweep.objects.create(
        scenario=scenario,
        owner=owner_user,
        axes=normalised,
        catalog_version=catalog.version,
        engine_version=ENGINE_VERSION,
        total_points=total,
        total_chunks=len(starts),
    )
    now = timezone.now()
    chunks = SweepChunk.objects.bulk_create(
        SweepChunk(
            sweep=sweep, index=index, start=start, stop=min(start + size, total), enqueued_at=now
        )
        for index, start in enumerate(starts)
    )
    transaction.on_commit(partial(_chunks_publish, [chunk.pk for chunk in chunks]))
    return sweep


def _chunks_publish(chunk_ids: Sequence[uuid.UUID]) -> bool:
    """Send chunks as one Celery group; a broker outage is left to the reconciler."""
    task = current_app.tasks[SWEEP_CHUNK_TASK]
    chunks = group(task.si(str(chunk_id)) for chunk_id in chunk_ids)
    try:
        if tasks_run_in_process():
            # Embedded mode evaluates every chunk inside this request: one wall-time limit for
            # all of them, as for a run (the chunks left when it expires fail with the reason).
            with request_deadline(settings.ENGINE_IN_REQUEST_TIME_LIMIT_S):
                chunks.apply_async()
        else:
            chunks.apply_async()
    except BROKER_ERRORS:
        logger.warning(
            "%d sweep chunks not sent (broker unreachable); the reconciler will resend them",
            len(chunk_ids),
        )
        mark_unsent(SweepChunk, chunk_ids)
        return False
    return True


# --- One chunk ---------------------------------------------------------------------------------


def chunk_claim(*, chunk_id: uuid.UUID, resume_token: uuid.UUID | None = None) -> uuid.UUID | None:
    """Atomically take a chunk (as run_claim takes a run); None when it is not claimable."""
    return work_claim(SweepChunk, pk=chunk_id, resume_token=resume_token)


def chunk_heartbeat(*, chunk_id: uuid.UUID, token: uuid.UUID) -> bool:
    return work_heartbeat(SweepChunk, pk=chunk_id, token=token)


def pack_rows(points: list[SweepPoint]) -> dict[str, Any]:
    """A chunk's points as {"columns": [...], "rows": [[...], ...]}: the keys once, not per row
    (a 10,000-point sweep stores ~1.5 MB instead of ~3.7 MB, which PostgreSQL parses faster).
    A chunk's points share their columns: one scenario, one workload kind."""
    rows = [point.to_dict() for point in points]
    columns: list[str] = list(rows[0]) if rows else []
    return {"columns": columns, "rows": [[row[column] for column in columns] for row in rows]}


def _chunk_finish(
    chunks: QuerySet[SweepChunk],
    *,
    chunk_id: uuid.UUID,
    status: RunStatus,
    results: dict[str, Any] | None,
    error: str = "",
    infeasible: int = 0,
) -> bool:
    """Finish one chunk (if `chunks` still selects it) and count it into its sweep, atomically.

    The chunk's counts are added with F() in the same transaction as its own update, so they
    are counted exactly once; the chunk that completes the set ends the sweep.
    """
    now = timezone.now()
    with transaction.atomic():
        updated = chunks.filter(pk=chunk_id).update(
            status=status, results=results, error=error, finished_at=now
        )
        if not updated:
            return False
        chunk = SweepChunk.objects.values("sweep_id", "start", "stop").get(pk=chunk_id)
        failed = status == RunStatus.FAILED
        Sweep.objects.filter(pk=chunk["sweep_id"]).update(
            done_points=F("done_points") + (chunk["stop"] - chunk["start"]),
            infeasible_points=F("infeasible_points") + infeasible,
            done_chunks=F("done_chunks") + 1,
            failed_chunks=F("failed_chunks") + (1 if failed else 0),
        )
        _sweep_end_if_done(chunk["sweep_id"], now=now)
    return True


def _chunk_give_up(chunks: QuerySet[Any], chunk_id: uuid.UUID, reason: str) -> bool:
    return _chunk_finish(
        chunks, chunk_id=chunk_id, status=RunStatus.FAILED, results=None, error=reason
    )


def _sweep_end_if_done(sweep_id: uuid.UUID, *, now: datetime) -> None:
    complete = Sweep.objects.filter(
        pk=sweep_id, done_chunks=F("total_chunks"), status__in=UNFINISHED
    )
    if complete.filter(failed_chunks=0).update(status=SweepStatus.SUCCEEDED, finished_at=now):
        logger.info("sweep %s succeeded", sweep_id)
        return
    first_error = (
        SweepChunk.objects.filter(sweep_id=sweep_id, status=RunStatus.FAILED)
        .order_by("index")
        .values_list("error", flat=True)
        .first()
    )
    failed = complete.update(
        status=SweepStatus.FAILED,
        finished_at=now,
        error=(
            "Some design points could not be evaluated "
            f"(the results of the others are kept). First error: {first_error}"
        ),
    )
    if failed:
        logger.warning("sweep %s failed: %s", sweep_id, first_error)


def _chunk_evaluate(chunk_id: uuid.UUID, token: uuid.UUID) -> str | None:
    """Evaluate a claimed chunk and finish it; its status, or None when the claim was lost."""
    chunk = SweepChunk.objects.select_related("sweep__scenario").get(pk=chunk_id)
    Sweep.objects.filter(pk=chunk.sweep_id, status=SweepStatus.QUEUED).update(
        status=SweepStatus.RUNNING, started_at=timezone.now()
    )
    mine = SweepChunk.objects.filter(claim_token=token, status=RunStatus.RUNNING)
    with heartbeating(SweepChunk, pk=chunk_id, token=token) as heartbeat:
        deadline = current_deadline()

        def tick() -> None:
            if heartbeat.lost:
                raise ClaimLost
            if deadline is not None:
                deadline.check()

        try:
            rows, infeasible = evaluate_points(
                chunk.sweep.scenario.inputs,
                chunk.sweep.axes,
                chunk.start,
                chunk.stop,
                catalog=catalog_recorded(chunk.sweep.catalog_version),
                tick=tick,
            )
        except NOT_ENGINE_ERRORS:
            raise
        except Exception as exc:  # an engine bug (or the time limit) fails this chunk
            if isinstance(exc, SoftTimeLimitExceeded):
                reason = (
                    f"These design points took longer than the "
                    f"{settings.CELERY_TASK_SOFT_TIME_LIMIT} s allowed."
                )
            elif isinstance(exc, EvaluationTimeout):
                reason = (
                    f"The sweep took longer than the {exc.limit_s:g} s a web process allows "
                    "(embedded mode computes inside the request); run a worker (services "
                    "mode) for sweeps this large."
                )
            else:
                logger.exception("sweep chunk %s failed in the engine", chunk_id)
                reason = f"Engine error: {type(exc).__name__}: {exc}"
            failed = _chunk_give_up(mine, chunk_id, reason)
            return "failed" if failed else None
    finished = _chunk_finish(
        mine,
        chunk_id=chunk_id,
        status=RunStatus.SUCCEEDED,
        results=pack_rows(rows),
        infeasible=infeasible,
    )
    return "succeeded" if finished else None


def sweep_chunk_execute(
    *, chunk_id: uuid.UUID, resume_token: uuid.UUID | None = None
) -> str | None:
    """Claim a chunk, evaluate its design points and finish it; None when not claimed.

    Safe to deliver twice (the claim lets one delivery in). A database error after the
    claim raises WorkInterrupted carrying the token so the retry resumes this claim.
    """
    return work_execute(
        SweepChunk,
        pk=chunk_id,
        resume_token=resume_token,
        perform=partial(_chunk_evaluate, chunk_id),
    )


def sweeps_reconcile(
    *, now: datetime | None = None, limit: int = 500, broker_lost: bool = False
) -> dict[str, int]:
    """The runs' reconciler, for sweep chunks: resend lost ones, requeue orphaned ones."""
    return work_reconcile(
        SweepChunk,
        kind="sweep chunks",
        give_up=_chunk_give_up,
        gave_up_reason=(
            f"Gave up after {settings.RUN_MAX_ATTEMPTS} attempts: the worker evaluating "
            "these design points stopped responding each time."
        ),
        publish=_chunks_publish,
        broker_lost=broker_lost,
        now=now,
        limit=limit,
    )
