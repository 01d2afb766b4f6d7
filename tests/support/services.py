"""Stop and start the throwaway PostgreSQL and redis-server of scripts/with_services.sh.

The fault tests use these to take the database or the broker away under running workers,
exactly as an outage or a restart would; with_services.sh exports where they live.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run the tests inside scripts/with_services.sh")
    return value


def _as_postgres(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root; with_services.sh started it as the postgres user.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _pg_ctl() -> str:
    return str(Path(_env("PG_BIN")) / "pg_ctl")


def postgres_stop() -> None:
    """Stop PostgreSQL now (fast: open sessions are cut, as in a crash of the server)."""
    subprocess.run(
        _as_postgres([_pg_ctl(), "-D", _env("PGDATA"), "-m", "fast", "-w", "stop"]),
        check=True,
        capture_output=True,
    )


def postgres_start() -> None:
    services = _env("SERVICES_DIR")
    options = (
        f"-p {_env('PG_PORT')} -k {services} -c listen_addresses=127.0.0.1 "
        "-c fsync=off -c max_connections=200"
    )
    subprocess.run(
        _as_postgres(
            [
                _pg_ctl(),
                "-D",
                _env("PGDATA"),
                "-l",
                f"{services}/postgres.log",
                "-w",
                "-o",
                options,
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )


def _redis_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["redis-cli", "-p", _env("REDIS_PORT"), *args], capture_output=True, text=True
    )


def redis_up() -> bool:
    return _redis_cli("ping").stdout.strip() == "PONG"


def redis_stop() -> None:
    """Shut redis-server down; its append-only file keeps what was queued (as in production)."""
    _redis_cli("shutdown")
    deadline = time.monotonic() + 30
    while redis_up():
        if time.monotonic() > deadline:
            raise RuntimeError("redis-server did not stop")
        time.sleep(0.1)


def redis_start() -> None:
    subprocess.run(["redis-server", _env("REDIS_CONF")], check=True, capture_output=True)
    deadline = time.monotonic() + 30
    while not redis_up():
        if time.monotonic() > deadline:
            raise RuntimeError("redis-server did not start")
        time.sleep(0.1)


def redis_flush() -> None:
    """Empty the broker's database: queues, unacknowledged messages, counters."""
    _redis_cli("flushdb")
