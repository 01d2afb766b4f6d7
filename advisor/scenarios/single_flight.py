"""One computation per key at a time in a process: the threads that ask for the same thing
while it is being made wait for it instead of making it again.

A gunicorn worker serves four requests at once (gunicorn.conf.py). When a finished run's page
is opened by several people at once in a process that has not shown it yet (a link sent to a
team, every worker just started), each thread missed the per-process caches and parsed the
result and drew its figures itself (~0.25 s of CPU each), four times over under one GIL, so
all four answered after ~1 s instead of one after 0.25 s and three right after it.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """A lock per key, made on first use and dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Hashable, tuple[threading.Lock, list[int]]] = {}

    @contextmanager
    def hold(self, key: Hashable) -> Iterator[None]:
        """Hold `key`'s lock in this block; check the cache again once inside it."""
        with self._guard:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._guard:
                users[0] -= 1
                if users[0] == 0:
                    del self._locks[key]

    def __len__(self) -> int:
        with self._guard:
            return len(self._locks)
