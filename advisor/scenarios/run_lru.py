"""A bounded, thread-safe LRU whose keys start with a run's id, so that everything kept for
one run can be dropped when the run changes: the results' memo (:mod:`advisor.scenarios.results`)
and the priced what-ifs (:mod:`advisor.scenarios.whatif`) are both one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Generic, TypeVar

__all__ = ["RunLRU"]

V = TypeVar("V")


class RunLRU(Generic[V]):
    """At most ``size`` items by key (``key[0]`` is the run's id), least recently used
    dropped first."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: tuple[Any, ...], item: V) -> None:
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def drop_run(self, run_id: Any) -> None:
        """Forget every item kept for the run ``run_id``."""
        with self._lock:
            for key in [k for k in self._items if k[0] == run_id]:
                del self._items[key]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
