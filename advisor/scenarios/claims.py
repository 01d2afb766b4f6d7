"""Claiming work (a run, a sweep chunk) so that exactly one worker finishes it.

Both kinds of work carry the same columns: status, claim_token, started_at, heartbeat_at,
attempts. A claim is one conditional UPDATE: no check-then-act race between workers.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import F, Model, Q
from django.utils import timezone

from advisor.scenarios.models import RunStatus


def stale_after() -> timedelta:
    """A RUNNING claim whose heartbeat is older than this is presumed orphaned."""
    return timedelta(seconds=settings.RUN_STALE_AFTER_S)


def work_claim(
    model: type[Model], *, pk: uuid.UUID, resume_token: uuid.UUID | None = None, **reset: Any
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
