"""A heartbeat that keeps a claim alive while the engine computes.

The engine's progress callback is not guaranteed to fire often (a large scenario can spend
many seconds between two calls), so a daemon thread touches the row every
RUN_HEARTBEAT_EVERY_S seconds. The reconciler treats a claim whose heartbeat is older than
RUN_STALE_AFTER_S as orphaned; this thread is what keeps a live worker from being mistaken
for a dead one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import TracebackType

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


class Heartbeat:
    """Call `beat()` every `every_s` seconds in a thread until the block ends.

    `beat()` returns False when the claim was lost (another worker took the row over);
    `lost` then becomes True and the beating stops. A database error is logged and the
    thread's connection closed so the next beat reconnects (PostgreSQL may be restarting).
    """

    def __init__(self, beat: Callable[[], bool], *, every_s: float) -> None:
        self._beat = beat
        self._every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self.lost = False

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._every_s):
                try:
                    alive = self._beat()
                except DatabaseError:
                    logger.warning("heartbeat failed; retrying at the next beat", exc_info=True)
                    connection.close()
                    continue
                if not alive:
                    self.lost = True
                    return
        finally:
            # Django connections are per thread: close this thread's own.
            connection.close()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=max(5.0, self._every_s))
