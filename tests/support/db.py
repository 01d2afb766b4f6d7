"""What a test sees of the database connection its code is asked to give back."""

from __future__ import annotations


class ConnectionCloses:
    """Every close() asked of this thread's default database connection during a test.

    Django never drops SQLite's in-memory test database's connection (the database would vanish
    with it: ``DatabaseWrapper.close`` skips it), so "the connection is gone" can be seen on
    PostgreSQL only; that close() was asked for is seen on both."""

    def __init__(self) -> None:
        self.calls = 0

    def released(self) -> bool:
        """close() was asked for and, on a backend that honours it, the connection is gone."""
        from django.db import connections

        wrapper = connections["default"]
        kept_by_django = wrapper.vendor == "sqlite" and wrapper.is_in_memory_db()
        return self.calls > 0 and (wrapper.connection is None or kept_by_django)
