"""Claimed work (a run, a sweep chunk): one claim, heartbeat, execute and reconcile path.

Both kinds of work are ClaimedWork rows (advisor.scenarios.models): status, claim_token,
attempts, enqueued_at, started_at, heartbeat_at, finished_at, error.
- A claim is one conditional UPDATE: no check-then-act race between workers.
- Only the holder of the current claim_token finishes a row, so however often its message is
  delivered (redelivery after a crash, a retry, the reconciler resending it), the work
  completes at most once.
- The reconciler resends QUEUED rows whose message was lost, takes RUNNING rows whose
  heartbeat stopped back to QUEUED, and gives up on rows that lost RUN_MAX_ATTEMPTS workers.
  A message that could not be sent (broker down at commit) is marked unsent (enqueued_at
  NULL) and goes out on the next tick; a broker that lost its data (restart without its
  append-only file, a flush) is noticed by a sentinel key and every QUEUED row is resent.

Messages are sent by task name (`send_task_by_name`), so this module and the services never
import the Celery tasks module that calls them.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from celery import current_app
from django.conf import settings
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from advisor.scenarios.heartbeat import Heartbeat
from advisor.scenarios.models import ClaimedWork, RunStatus

logger = logging.getLogger(__name__)

Outcome = TypeVar("Outcome")

# The database going away is worth a retry; bad input and engine bugs never are.
TRANSIENT_DB_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError)
# What publishing raises when Redis is unreachable (after kombu's own publish retries).
BROKER_ERRORS: tuple[type[Exception], ...] = (
    KombuOperationalError,
    RedisConnectionError,
    ConnectionError,
)

# Celery task names (advisor.scenarios.tasks), sent by name.
RUN_TASK = "advisor.scenarios.tasks.run_scenario"
SWEEP_CHUNK_TASK = "advisor.scenarios.tasks.sweep_chunk"
UNFINISHED = (RunStatus.QUEUED, RunStatus.RUNNING)


class ClaimLost(Exception):
    """Another worker took the work over (this one was presumed dead): stop, finish nothing."""


class WorkInterrupted(Exception):
    """The database went away after this worker claimed the work: retry, holding `token`."""

    def __init__(self, *, pk: uuid.UUID, token: uuid.UUID) -> None:
        self.pk = pk
        self.token = token
        super().__init__(f"{pk} interrupted by a database error; retry with its claim")


# Raised inside an evaluation but not the engine's fault: never turned into FAILED work.
NOT_ENGINE_ERRORS: tuple[type[Exception], ...] = (ClaimLost, *TRANSIENT_DB_ERRORS)


def stale_after() -> timedelta:
    """A RUNNING claim whose heartbeat is older than this is presumed orphaned."""
    return timedelta(seconds=settings.RUN_STALE_AFTER_S)


def tasks_run_in_process() -> bool:
    """Whether Celery tasks run eagerly, in the calling process (embedded mode)."""
    return bool(current_app.conf.task_always_eager)


def send_task_by_name(name: str, *args: Any) -> None:
    """Send a registered task by name (eagerly in embedded mode, as `.delay` would)."""
    current_app.tasks[name].delay(*args)


def mark_unsent(model: type[ClaimedWork], pks: Sequence[uuid.UUID]) -> None:
    """The messages of these QUEUED rows never left (broker unreachable): the reconciler's
    next tick sends them, instead of waiting RUN_QUEUED_LOST_AFTER_S for them to look lost."""
    try:
        model._default_manager.filter(pk__in=list(pks), status=RunStatus.QUEUED).update(
            enqueued_at=None
        )
    except TRANSIENT_DB_ERRORS:
        # Both services down: the rows keep their enqueued_at and are resent once it expires.
        logger.warning("could not mark %d unsent rows; they are resent when overdue", len(pks))


# A key the reconciler keeps in the broker's Redis database. Its absence means the database
# was emptied since the last tick (Redis restarted without persistence, or flushed): every
# queued message went with it. The first tick after a deploy also finds it absent, which only
# resends what is queued (harmless: the claim lets one delivery in).
BROKER_SENTINEL_KEY = "fabric:broker-sentinel"


def broker_lost_its_queue() -> bool:
    """Whether the broker's queues were lost since the reconciler last looked.

    False in embedded mode (no broker). Raises the broker's connection errors when Redis is
    unreachable (the reconciler then skips this tick's resend of everything)."""
    if tasks_run_in_process() or not settings.REDIS_URL:
        return False
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        return bool(client.set(BROKER_SENTINEL_KEY, "1", nx=True))
    finally:
        client.close()


def work_claim(
    model: type[ClaimedWork], *, pk: uuid.UUID, resume_token: uuid.UUID | None = None, **reset: Any
) -> uuid.UUID | None:
    """Atomically take a row of `model`: QUEUED, or RUNNING with an expired heartbeat.

    `resume_token` lets a retry after a database blip continue its own claim (nobody else has
    taken it meanwhile). `reset` holds extra columns to set on a fresh claim. Returns the
    claim token, or None when another worker holds it or it has finished.
    """
    now = timezone.now()
    rows = model._default_manager.filter(pk=pk)
    resumable = rows.filter(status=RunStatus.RUNNING, claim_token=resume_token)
    if resume_token is not None and resumable.update(heartbeat_at=now):
        return resume_token
    token = uuid.uuid4()
    claimable = Q(status=RunStatus.QUEUED) | Q(
        status=RunStatus.RUNNING,
        heartbeat_at__lt=now - stale_after(),
        attempts__lt=settings.RUN_MAX_ATTEMPTS,
    )
    claimed = rows.filter(claimable).update(
        status=RunStatus.RUNNING,
        claim_token=token,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        **reset,
    )
    return token if claimed else None


def work_heartbeat(
    model: type[ClaimedWork], *, pk: uuid.UUID, token: uuid.UUID, **fields: Any
) -> bool:
    """Record liveness (and `fields`); False when the claim was lost to another worker."""
    return bool(
        model._default_manager.filter(pk=pk, claim_token=token, status=RunStatus.RUNNING).update(
            heartbeat_at=timezone.now(), **fields
        )
    )


def hold_for_fault_tests(heartbeat: Heartbeat) -> None:
    """Test hook FABRIC_TEST_EVAL_DELAY_S (refused in production, see settings): hold a run
    or sweep chunk in flight, heartbeating, so a fault test can kill its worker or stop the
    database while it certainly runs. Does nothing when the setting is 0 (always in production)."""
    deadline = time.monotonic() + settings.FABRIC_TEST_EVAL_DELAY_S
    while (left := deadline - time.monotonic()) > 0:
        if heartbeat.lost:
            raise ClaimLost
        time.sleep(min(0.25, left))


@contextmanager
def heartbeating(
    model: type[ClaimedWork], *, pk: uuid.UUID, token: uuid.UUID
) -> Iterator[Heartbeat]:
    """Keep a claim alive in a thread while the block computes (and hold it for fault tests)."""
    with Heartbeat(
        partial(work_heartbeat, model, pk=pk, token=token),
        every_s=settings.RUN_HEARTBEAT_EVERY_S,
    ) as heartbeat:
        if settings.FABRIC_TEST_EVAL_DELAY_S:
            hold_for_fault_tests(heartbeat)
        yield heartbeat


def work_execute(
    model: type[ClaimedWork],
    *,
    pk: uuid.UUID,
    resume_token: uuid.UUID | None,
    perform: Callable[[uuid.UUID], Outcome | None],
    **claim_reset: Any,
) -> Outcome | None:
    """Claim a row, `perform(token)` its work (which finishes it) and say how it ended.

    None when the row was not claimable (claimed or finished: a redelivered message does
    nothing) or when the claim was lost before finishing (`perform` returns None or raises
    ClaimLost). A database error after the claim raises WorkInterrupted carrying the token so
    the task's retry resumes this claim instead of waiting for it to go stale.
    """
    name = model._meta.verbose_name
    token = work_claim(model, pk=pk, resume_token=resume_token, **claim_reset)
    if token is None:
        status = model._default_manager.filter(pk=pk).values_list("status", flat=True).first()
        logger.info("%s %s not claimed: it is %s", name, pk, status or "gone")
        return None
    try:
        outcome = perform(token)
    except TRANSIENT_DB_ERRORS as exc:
        raise WorkInterrupted(pk=pk, token=token) from exc
    except ClaimLost:
        outcome = None
    if outcome is None:
        logger.warning("%s %s: claim lost to another worker; result discarded", name, pk)
    return outcome


def work_reconcile(
    model: type[ClaimedWork],
    *,
    kind: str,
    give_up: Callable[[QuerySet[Any], uuid.UUID, str], bool],
    gave_up_reason: str,
    publish: Callable[[Sequence[uuid.UUID]], object],
    never_sent: Q | None = None,
    broker_lost: bool = False,
    now: datetime | None = None,
    limit: int = 500,
    **requeue: Any,
) -> dict[str, int]:
    """The backstop behind the broker: nothing of `model` stays QUEUED or RUNNING forever.

    `kind` names the rows in the log ("runs", "sweep chunks").
    - RUNNING rows whose heartbeat expired (their worker died) go back to QUEUED with their
      claim revoked (a worker that was only slow can no longer finish) and are sent again,
      with the `requeue` columns reset; after RUN_MAX_ATTEMPTS such losses `give_up(rows,
      pk, reason)` fails the row instead.
    - QUEUED rows sent longer than RUN_QUEUED_LOST_AFTER_S ago, marked unsent (enqueued_at
      NULL: the broker was down when they were sent) or matching `never_sent` are sent
      again; with `broker_lost` (the broker's queues are gone) every QUEUED row is.
    Every change is a conditional UPDATE, so two reconcilers running at once are harmless,
    and a duplicate message is harmless because the claim lets one delivery in.
    """
    now = now or timezone.now()
    lost_cutoff = now - timedelta(seconds=settings.RUN_QUEUED_LOST_AFTER_S)
    rows = model._default_manager.all()
    orphaned = rows.filter(status=RunStatus.RUNNING, heartbeat_at__lt=now - stale_after())

    exhausted = orphaned.filter(attempts__gte=settings.RUN_MAX_ATTEMPTS)
    given_up = sum(
        give_up(exhausted, pk, gave_up_reason)
        for pk in list(exhausted.values_list("pk", flat=True)[:limit])
    )

    to_send: list[uuid.UUID] = []
    retryable = orphaned.filter(attempts__lt=settings.RUN_MAX_ATTEMPTS)
    for pk in list(retryable.values_list("pk", flat=True)[:limit]):
        if retryable.filter(pk=pk).update(
            status=RunStatus.QUEUED, claim_token=None, enqueued_at=now, **requeue
        ):
            to_send.append(pk)
    requeued = len(to_send)

    lost_when = Q(enqueued_at__lt=lost_cutoff) | Q(enqueued_at__isnull=True)
    if never_sent is not None:
        lost_when |= never_sent
    if broker_lost:
        lost_when = Q()
    lost = rows.filter(lost_when, status=RunStatus.QUEUED)
    for pk in list(lost.values_list("pk", flat=True)[:limit]):
        if lost.filter(pk=pk).update(enqueued_at=now):
            to_send.append(pk)
    resent = len(to_send) - requeued

    if to_send:
        transaction.on_commit(partial(publish, to_send))
    if given_up or to_send:
        logger.warning(
            "reconciler: %d orphaned %s requeued, %d lost messages resent, %d %s given up",
            requeued,
            kind,
            resent,
            given_up,
            kind,
        )
    return {"requeued": requeued, "resent": resent, "given_up": given_up}
