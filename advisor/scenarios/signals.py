"""Extension points: other apps react to a run's end without scenarios knowing them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once, inside the transaction that finishes a run, so what receivers record commits
# with the run's end or not at all (a worker dying between the two cannot lose it).
# Receivers record in that transaction and enqueue work with on_commit. Kwargs: run_id (UUID).
run_finished = Signal()
