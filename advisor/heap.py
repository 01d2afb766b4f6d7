"""Keep the garbage collector off what a warm process holds for its whole life.

A warm web process holds ~200,000-280,000 long-lived objects (modules, the catalog, the
engine's and the pages' caches); a Celery worker process ~150,000. Python's full (generation
2) collection walks every one of them: ~120 ms of CPU on this machine for a web process, with
the GIL held, so every thread of that process stands still meanwhile. One `make load` run
logged 20 such collections across its three web workers (start-up included), 0.3-1.8 s of
wall time each on the loaded 2-core machine; with the heap frozen they walk ~30,000 objects.
Frozen objects are never walked (nor collected: they live as long as the process anyway),
and processes forked after the freeze do not write to their pages, so more memory stays
shared. https://docs.python.org/3/library/gc.html#gc.freeze
"""

from __future__ import annotations

import gc


def freeze_heap() -> int:
    """Collect what is garbage now, then freeze everything still alive; returns how many
    objects are frozen. Called once a process is warm (advisor/wsgi.py, advisor/celery.py)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
