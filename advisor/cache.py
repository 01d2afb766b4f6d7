"""The shared counters (rate limits) are a side service: what to do when they are unreachable.

Rate-limit counters live in Redis in services mode (settings.API_THROTTLE_CACHE). An outage of
Redis must not take the site down with it: reads never need Redis, and a submission made
during the outage is stored and left to the reconciler. So a counter that cannot be read lets
the request through (fails open) and says so in the log, at most once per LOG_EVERY_S per
process so an outage does not flood the log.
"""

from __future__ import annotations

import logging
import threading
import time

from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What the cache raises when Redis is down or does not answer within its socket timeouts.
COUNTER_ERRORS: tuple[type[Exception], ...] = (RedisError, ConnectionError, TimeoutError)

LOG_EVERY_S = 30.0
_last_logged = 0.0
_lock = threading.Lock()


def counter_unavailable(what: str, exc: Exception) -> None:
    """Record that `what` let a request through because its counter could not be reached."""
    global _last_logged
    now = time.monotonic()
    with _lock:
        if now - _last_logged < LOG_EVERY_S:
            return
        _last_logged = now
    logger.warning(
        "%s not counted: rate-limit store unreachable (%s); letting requests through",
        what,
        type(exc).__name__,
    )
