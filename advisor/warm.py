"""How a web process runs its warm-up steps before it forks (advisor/wsgi.py): the API's
(api.warm) and the pages' (frontend.warm) alike."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from advisor.db_pool import close_pools


def run_steps(
    steps: Mapping[str, Callable[[], None]], what: str, logger: logging.Logger
) -> dict[str, float]:
    """Run every step; returns each step's seconds. A failed step is logged ("<what> warm-up
    step '<name>' failed") and skipped: a warm-up never stops a server from starting. The
    database connections are closed after: no connection (nor connection pool,
    advisor.db_pool) is shared by processes forked later."""
    took: dict[str, float] = {}
    for name, step in steps.items():
        started = time.perf_counter()
        try:
            step()
        except Exception:  # a warm-up never stops a server from starting
            logger.exception("%s warm-up step %r failed", what, name)
        took[name] = time.perf_counter() - started
    close_pools()
    return took
