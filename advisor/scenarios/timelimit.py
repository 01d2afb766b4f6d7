"""A wall-time limit for engine calls made inside a web request.

Workers have Celery's time limits; a web process has none, so one slow evaluation would hold
a gunicorn worker until gunicorn kills it (and every worker, with a few such requests). Every
engine call made while a request is being answered (POST /api/v1/evaluate/, and runs in
embedded mode, where tasks run in the web process) goes through :func:`wall_time_limit`.

Two mechanisms, because an engine call is pure Python:
- in the main thread (gunicorn's sync workers, the test client) a POSIX interval timer
  (SIGALRM) interrupts any Python code, planning included;
- in other threads (Django's threaded development server) the limit is checked at each
  progress report of the engine, which reports once per candidate design.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import FrameType


class EvaluationTimeout(Exception):
    """The engine call took longer than the wall time allowed in a web process."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        super().__init__(f"the evaluation took longer than the {limit_s:g} s allowed")


class Deadline:
    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.ends_at = time.monotonic() + limit_s

    def check(self) -> None:
        if time.monotonic() >= self.ends_at:
            raise EvaluationTimeout(self.limit_s)

    def progress(self, inner: Callable[[int], None] | None) -> Callable[[int], None]:
        """A progress callback that enforces the deadline, then calls `inner`."""

        def report(pct: int) -> None:
            self.check()
            if inner is not None:
                inner(pct)

        return report


def _can_use_alarm() -> bool:
    return (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # nobody else's timer
    )


@contextmanager
def wall_time_limit(limit_s: float) -> Iterator[Deadline]:
    """Raise EvaluationTimeout in this block once `limit_s` seconds have passed."""
    deadline = Deadline(limit_s)
    if not _can_use_alarm():
        yield deadline
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise EvaluationTimeout(limit_s)

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        yield deadline
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# A deadline shared by every piece of work done for one request (embedded mode runs all of a
# sweep's chunks in the request that created it): checked by the work itself, between points.
_request_deadline: ContextVar[Deadline | None] = ContextVar("request_deadline", default=None)


@contextmanager
def request_deadline(limit_s: float) -> Iterator[Deadline]:
    """Give the work done in this block one deadline, `limit_s` from now (current_deadline)."""
    deadline = Deadline(limit_s)
    reset = _request_deadline.set(deadline)
    try:
        yield deadline
    finally:
        _request_deadline.reset(reset)


def current_deadline() -> Deadline | None:
    """The deadline of the request this work is done for, if it is done inside one."""
    return _request_deadline.get()
