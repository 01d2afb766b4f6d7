"""Extension points: other apps react to a run's end without scenarios knowing them."""

from __future__ import annotations

from django.dispatch import Signal

# Sent once, after the transaction that finished a run commits. Kwargs: run_id (UUID).
run_finished = Signal()
