"""Personas for the measurement tests (the API's, reused)."""

from __future__ import annotations

from tests.api.conftest import (  # noqa: F401  (pytest fixtures)
    anonymous,
    client_a,
    client_b,
    customer_user,
    run_tasks,
    staff,
    submitted,
)
