"""Reactions to other apps' extension points."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

from api.services import webhook_delivery_create

logger = logging.getLogger(__name__)


def on_run_finished(sender: Any, run_id: Any, **kwargs: Any) -> None:
    """advisor.scenarios.signals.run_finished: post the outcome to the callback_url, if any."""
    try:
        # A savepoint: this runs inside the transaction that finishes the run, which a
        # failure here must not abort.
        with transaction.atomic():
            webhook_delivery_create(run_id=run_id)
    except Exception:  # a webhook problem must never break the end of a run
        logger.exception("could not enqueue the webhook of run %s", run_id)
